//! Traces (R1.1), rounds derived from user messages (R1.3) and spans (R5.7).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Message, MessageId, Role, SpanId, TraceId};
use crate::error::{Error, Result};

/// The version of the persisted trace format this build writes and the newest it reads.
pub const TRACE_FORMAT_VERSION: u32 = 1;

/// One agent session: its messages in sequence order and the spans marked over them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Trace {
    /// Format version of the serialized trace (see [`TRACE_FORMAT_VERSION`]).
    pub version: u32,
    pub id: TraceId,
    pub mission: String,
    #[serde(default)]
    #[cfg_attr(test, ts(type = "Record<string, unknown>"))]
    pub metadata: BTreeMap<String, serde_json::Value>,
    pub messages: Vec<Message>,
    #[serde(default)]
    pub spans: Vec<Span>,
}

impl Trace {
    pub fn new(id: TraceId, mission: impl Into<String>) -> Self {
        Trace {
            version: TRACE_FORMAT_VERSION,
            id,
            mission: mission.into(),
            metadata: BTreeMap::new(),
            messages: Vec::new(),
            spans: Vec::new(),
        }
    }

    /// Parse the persisted JSON form, refusing versions newer than this build understands.
    pub fn from_json(text: &str) -> Result<Self> {
        #[derive(Deserialize)]
        struct VersionOnly {
            version: u32,
        }
        let head: VersionOnly = serde_json::from_str(text)
            .map_err(|e| Error::InvalidInput(format!("trace is not a versioned JSON object: {e}")))?;
        if head.version > TRACE_FORMAT_VERSION {
            return Err(Error::UnsupportedVersion { found: head.version, supported: TRACE_FORMAT_VERSION });
        }
        let mut de = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(&mut de)
            .map_err(|e| Error::InvalidInput(format!("trace at `{}`: {}", e.path(), e.inner())))
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a trace always serializes")
    }

    /// The rounds of the main line, in order.
    pub fn rounds(&self) -> Vec<Round> {
        rounds(&self.messages)
    }
}

/// A round (R1.3): from a user message up to (not including) the next one.
///
/// Messages before the first user message (the system prompt) belong to no round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Round {
    /// Index of the opening user message.
    pub start: usize,
    /// One past the index of the round's last message.
    pub end: usize,
}

/// Rounds over `messages`, derived from user messages.
pub fn rounds(messages: &[Message]) -> Vec<Round> {
    let starts: Vec<usize> =
        messages.iter().enumerate().filter(|(_, m)| m.role == Role::User).map(|(i, _)| i).collect();
    starts
        .iter()
        .enumerate()
        .map(|(k, &start)| Round { start, end: starts.get(k + 1).copied().unwrap_or(messages.len()) })
        .collect()
}

/// A span marked by the orchestrator with `SPAN_START(id, goal)` / `SPAN_END(id, outcome)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct Span {
    pub id: SpanId,
    pub goal: String,
    pub start: MessageId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<MessageId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ContentPart;

    fn message(sequence: u64, role: Role) -> Message {
        let content = vec![ContentPart::Text { text: format!("{} {sequence}", role.as_str()) }];
        Message::new("t".into(), sequence, role, content)
    }

    #[test]
    fn rounds_open_at_user_messages() {
        use Role::*;
        let roles = [System, User, Assistant, Tool, Assistant, User, Assistant];
        let messages: Vec<Message> = roles.iter().enumerate().map(|(i, &r)| message(i as u64, r)).collect();
        assert_eq!(rounds(&messages), vec![Round { start: 1, end: 5 }, Round { start: 5, end: 7 }]);
        assert!(rounds(&messages[..1]).is_empty());
    }

    #[test]
    fn persisted_form_round_trips_and_refuses_newer_versions() {
        let mut trace = Trace::new("t1".into(), "fix the parser");
        trace.messages.push(message(0, Role::User));
        let json = trace.to_json();
        assert_eq!(Trace::from_json(&json).unwrap(), trace);

        let newer = json.replacen("\"version\":1", "\"version\":99", 1);
        assert_eq!(Trace::from_json(&newer).unwrap_err().code(), "unsupported_version");

        let broken = json.replacen("\"role\":\"user\"", "\"role\":\"robot\"", 1);
        let err = Trace::from_json(&broken).unwrap_err().to_string();
        assert!(err.contains("messages[0].role"), "{err}");
    }
}
