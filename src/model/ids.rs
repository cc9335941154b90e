//! Identifiers as newtypes, so a goal id can never be passed where a message id is wanted.

use std::fmt;

use serde::{Deserialize, Serialize};

macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[cfg_attr(test, derive(ts_rs::TS))]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                $name(s.to_owned())
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                $name(s)
            }
        }
    };
}

string_id!(
    /// One agent session.
    TraceId
);
string_id!(
    /// One message of a trace; `m` + the zero-padded sequence number when the engine assigns it.
    MessageId
);
string_id!(
    /// A goal's internal id: a plain counter (R6.1), not the display number.
    GoalId
);
string_id!(
    /// A span marked by the orchestrator (R5.7).
    SpanId
);
string_id!(
    /// A sub-agent branch (R6.5); `None` on a message means the main line.
    BranchId
);
string_id!(
    /// The id the provider gave a tool call, linking the call to its result.
    ToolCallId
);

impl MessageId {
    /// The id the engine gives the message with this sequence number.
    pub fn for_sequence(sequence: u64) -> Self {
        MessageId(format!("m{sequence:06}"))
    }
}
