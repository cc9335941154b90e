//! What the proxy records of one call, a line of a trace's `calls.jsonl`: what was sent, what
//! the provider reported, and the call in dollars beside the agent's own request. The types
//! alone: the session fills a record ([`super::session`]), the dollars price it
//! (`dollars.rs`), the report, the stats and the spans read it.

use serde::{Deserialize, Serialize};

use super::reply::ProviderUsage;
use crate::workbench::cost::CallCost;

/// The file of a trace directory where the proxy appends one line per call: what was sent and
/// what the provider reported (its cache reads and writes next to the engine's expectation).
pub const CALLS_FILE: &str = crate::store::layout::CALLS;

/// What one call did, as the log line and `calls.jsonl` report it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CallRecord {
    /// The session's trace (not saved: `calls.jsonl` is in the trace's directory; read when a
    /// JS shell hands a record back).
    #[serde(skip_serializing)]
    pub trace_id: String,
    /// The call's number in its session, from 1.
    pub call: u64,
    pub at_ms: u64,
    pub model: String,
    /// The agent that sent it ([`super::agent_name`]: `Claude Code 2.1.328`), or empty.
    pub agent: String,
    pub stream: bool,
    /// The engine's prompt went upstream (false: the agent's own request went through, and
    /// `notes` says why).
    pub managed: bool,
    /// Messages in the agent's request, and how many of them were new.
    pub messages: usize,
    pub new_messages: usize,
    /// Prompt tokens the agent sent and the engine sent, both counted by the engine.
    pub client_tokens: usize,
    pub prompt_tokens: usize,
    /// What the engine expects the provider to read from its cache (its leading messages
    /// unchanged since the previous call).
    pub expected_cached_tokens: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_changed_byte: Option<usize>,
    /// Rewrites of earlier prompt made for this call: `mechanism start..end`.
    pub rewrites: Vec<String>,
    /// The engine's price of this call beside the agent's own request's, as the provider's
    /// prefix cache would serve each, and the session's running totals (managed calls only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<CallCost>,
    /// The call in dollars beside the agent's own request (`dollars.rs`); absent for a
    /// model without a price (a note says so) and in records written before dollars were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dollars: Option<CallDollars>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    pub completed: bool,
    /// The provider's usage of the reply, when it reported one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<ProviderUsage>,
    pub notes: Vec<String>,
    /// A side call of the session's agent (a title, a classifier's check): it went upstream as
    /// the agent sent it and is counted here, never part of the session's prompt. Its `call`
    /// is the number of the session's call it came after; its reply passes unread (no `usage`,
    /// `completed` false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub side_call: bool,
    /// When the reply came back whole and ended the agent's turn (it calls no tool), by the host
    /// clock: the session shows as `finished` once no call follows for a while
    /// ([`crate::store::shown_status`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_ended_at: Option<u64>,
}

impl CallRecord {
    /// A model answered the call (a success status): only then did it cost, and count, anything.
    pub fn answered(&self) -> bool {
        self.status.is_some_and(|status| (200..300).contains(&status))
    }
}

/// How a call's dollars were found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum CostBasis {
    /// From the usage the upstream reported.
    #[default]
    Reported,
    /// From the engine's counts: the upstream reported no usable usage (`note` says why).
    Estimated,
    /// No model answered (the upstream was unreachable or refused): nothing was spent.
    NoModel,
}

/// One call in dollars: the agent's own request and what was sent (the same request for a call
/// the engine did not manage), and the prices used.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct CallDollars {
    pub agent: f64,
    pub sent: f64,
    pub basis: CostBasis,
    /// The price row (a model name) and the day its prices were read.
    pub priced_as: String,
    pub prices_read_on: String,
    /// What the cache lifetime the engine chose saved against 5-minute breakpoints only
    /// ([`CallCost::ttl_saving`] at this model's input price; negative: it cost more).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ttl_saving: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

fn is_zero(value: &f64) -> bool {
    *value == 0.0
}
