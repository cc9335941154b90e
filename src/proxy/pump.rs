//! A managed call's reply on its way to the agent, as a state machine fed by bytes: every piece
//! goes to the agent unchanged while the reply is read; the reply goes to its session once it is
//! whole, or at its end with why it did not complete; a stream the upstream broke off ends with
//! an error event in the provider's shape. The shells only move the bytes and keep the timer.

use serde::{Deserialize, Serialize};

use super::providers::api;
use super::reply::{ReplyOutcome, ReplyReader};
use super::route::Format;
use super::upstreams::origin;
use crate::tokens::TokenCounter;

/// Why the upstream gave no reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Failure {
    /// It could not be reached.
    Unreachable(Cause),
    /// It sent no headers within `proxy.upstream_timeout_ms`.
    Timeout,
    /// The proxy stopped before it answered.
    Stopped,
    /// The agent closed its connection before the reply came (the upstream's call is dropped).
    AgentGone,
}

/// Why a connection to the upstream failed, as far as a shell's HTTP client tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    CannotConnect,
    TimedOut,
    Other,
}

impl Failure {
    pub fn status(&self) -> u16 {
        match self {
            Failure::Unreachable(_) => 502,
            Failure::Timeout => 504,
            Failure::Stopped => 503,
            // As servers log a request whose client left first (nginx's "client closed request").
            Failure::AgentGone => 499,
        }
    }

    /// Why, for a request that went to `url` (a message names its origin only).
    pub fn message(&self, url: &str) -> String {
        match self {
            Failure::Unreachable(cause) => {
                let why = match cause {
                    Cause::CannotConnect => "cannot connect",
                    Cause::TimedOut => "timed out",
                    Cause::Other => "the request failed",
                };
                format!("upstream {}: {why}", origin(url))
            }
            Failure::Timeout => "the upstream did not answer in time".into(),
            Failure::Stopped => "the proxy stopped before the upstream answered".into(),
            Failure::AgentGone => "the agent closed its connection before the upstream answered".into(),
        }
    }
}

/// How a reply's body ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum End {
    /// The upstream's body ended.
    Done,
    /// The agent closed its connection.
    AgentGone,
    /// The upstream's body broke off.
    BrokeOff,
    /// The upstream sent nothing for the timeout, in milliseconds.
    Silent(u64),
    /// The proxy stopped before the reply ended.
    Stopped,
}

impl End {
    /// The failure a reply that ended so before it came whole amounts to.
    pub fn failure(&self) -> Failure {
        match self {
            End::Silent(_) => Failure::Timeout,
            End::Stopped => Failure::Stopped,
            End::AgentGone => Failure::AgentGone,
            End::Done | End::BrokeOff => Failure::Unreachable(Cause::Other),
        }
    }

    /// Why the reply did not complete, as its call's note says.
    fn note(&self) -> Option<String> {
        match self {
            End::Done => None,
            End::AgentGone => Some("the agent closed the connection before the reply ended".into()),
            End::BrokeOff => Some("the upstream's reply broke off".into()),
            End::Silent(ms) => Some(format!("the upstream sent nothing for {} s", ms / 1000)),
            End::Stopped => Some("the proxy stopped before the reply ended".into()),
        }
    }
}

/// What the end of a reply asks of the shell.
#[derive(Debug, Default)]
pub struct Ending {
    /// Bytes to send the agent last (an error event closing a stream cut short).
    pub trailer: Option<String>,
    /// The reply for its session, unless it already went with [`ReplyPump::feed`].
    pub outcome: Option<ReplyOutcome>,
}

/// One reply being pumped.
#[derive(Debug)]
pub struct ReplyPump {
    /// What an error event it adds starts with (`workbench proxy`).
    who: &'static str,
    format: Format,
    status: u16,
    reader: Option<ReplyReader>,
    /// The bytes still to come of a body of declared length (not a stream): at none it is whole,
    /// without waiting for the upstream's end to be read.
    to_come: Option<u64>,
}

impl ReplyPump {
    /// The pump of a reply with HTTP `status`, `content_type` and `content_length` (as declared),
    /// of which at most `limit` bytes are read (the rest still passes); an error event it adds
    /// starts with `who` (`workbench proxy: …`).
    pub fn new(
        who: &'static str,
        format: Format,
        status: u16,
        content_type: Option<&str>,
        content_length: Option<u64>,
        limit: usize,
    ) -> ReplyPump {
        let stream = content_type.is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("text/event-stream"));
        let reader = Some(ReplyReader::new((api(format).reply)(), stream, status, limit));
        ReplyPump { who, format, status, reader, to_come: content_length.filter(|_| !stream) }
    }

    pub fn status(&self) -> u16 {
        self.status
    }

    /// Read the next piece (which the shell then gives the agent as it is). The reply, once
    /// this piece made it whole: the shell hands it to the session at once and ends the reply
    /// only once it is recorded, so the next request of the conversation finds it there.
    pub fn feed(&mut self, bytes: &[u8], counter: &TokenCounter) -> Option<ReplyOutcome> {
        let reader = self.reader.as_mut()?;
        reader.push(bytes);
        if let Some(to_come) = &mut self.to_come {
            *to_come = to_come.saturating_sub(bytes.len() as u64);
        }
        if !reader.is_complete() && self.to_come != Some(0) {
            return None;
        }
        self.reader.take().map(|reader| reader.finish(counter))
    }

    /// The reply's body ended as `end` says. A stream that broke off, went silent or was cut
    /// short, or that the upstream closed before its end (a close-delimited stream ending
    /// mid-message), ends for the agent with an error event, so it never takes a partial reply
    /// for a whole one.
    pub fn end(mut self, end: End, counter: &TokenCounter) -> Ending {
        let note = end.note();
        // A reply that went whole with `feed` was cut short of nothing.
        let cut = matches!(end, End::BrokeOff | End::Silent(_) | End::Stopped) && self.reader.is_some();
        let early = self.reader.as_ref().is_some_and(|r| r.ended_early() && (200..300).contains(&self.status));
        let outcome = self.reader.take().map(|reader| {
            let mut outcome = reader.finish(counter);
            if let Some(note) = &note {
                outcome.completed = false;
                outcome.parts.clear();
                outcome.error = Some(note.clone());
            }
            outcome
        });
        // A stream whose bytes the agent got whole (its end read, or past the limit, unread)
        // gets nothing more, whatever kept it from being recorded.
        let unfinished = match (&end, &outcome) {
            (End::Done, Some(outcome)) if early => outcome.error.clone(),
            _ => None,
        };
        let why = if cut { note } else { unfinished };
        let trailer = why.map(|why| (api(self.format).stream_error)(&format!("{}: {why}", self.who)));
        Ending { trailer, outcome }
    }
}

/// The outcome of a call that got no reply at all, with why.
pub fn no_reply(why: String) -> ReplyOutcome {
    ReplyOutcome { error: Some(why), ..ReplyOutcome::default() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Encoding;

    #[test]
    fn failures_answer_with_their_status_and_name_only_the_origin() {
        let failure = Failure::Unreachable(Cause::CannotConnect);
        let message = failure.message("https://u:p@api.example/v1/messages?key=k");
        assert_eq!((failure.status(), message.as_str()), (502, "upstream https://api.example: cannot connect"));
        assert_eq!(Failure::Timeout.status(), 504);
        assert_eq!(Failure::Stopped.status(), 503);
    }

    const DONE: &str =
        "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";

    #[test]
    fn a_whole_reply_goes_to_its_session_as_soon_as_it_is_whole() {
        let counter = TokenCounter::new(Encoding::O200kBase);
        let mut pump = ReplyPump::new(
            "workbench proxy",
            Format::OpenAi,
            200,
            Some("text/event-stream; charset=utf-8"),
            None,
            1 << 20,
        );
        let (a, b) = DONE.split_at(20);
        assert!(pump.feed(a.as_bytes(), &counter).is_none());
        let outcome = pump.feed(b.as_bytes(), &counter).expect("whole");
        assert!(outcome.completed);
        assert!(pump.feed(b"more", &counter).is_none());
        let ending = pump.end(End::Done, &counter);
        assert!(ending.trailer.is_none() && ending.outcome.is_none());
    }

    #[test]
    fn a_reply_of_declared_length_is_whole_with_its_last_byte() {
        let counter = TokenCounter::new(Encoding::O200kBase);
        let body = r#"{"choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}"#;
        let mut pump = ReplyPump::new(
            "workbench proxy",
            Format::OpenAi,
            200,
            Some("application/json"),
            Some(body.len() as u64),
            1 << 20,
        );
        let (a, b) = body.split_at(30);
        assert!(pump.feed(a.as_bytes(), &counter).is_none());
        assert!(pump.feed(b.as_bytes(), &counter).expect("whole").completed);
        assert!(pump.end(End::Done, &counter).outcome.is_none());
        // Without a declared length, the upstream's end says it is whole.
        let mut pump = ReplyPump::new("workbench proxy", Format::OpenAi, 200, Some("application/json"), None, 1 << 20);
        assert!(pump.feed(body.as_bytes(), &counter).is_none());
        assert!(pump.end(End::Done, &counter).outcome.expect("whole").completed);
    }

    #[test]
    fn a_stream_cut_short_ends_with_an_error_event_and_is_not_recorded() {
        let counter = TokenCounter::new(Encoding::O200kBase);
        let mut pump =
            ReplyPump::new("workbench proxy", Format::Anthropic, 200, Some("text/event-stream"), None, 1 << 20);
        assert!(pump.feed(b"event: ping\ndata: {\"type\":\"ping\"}\n\n", &counter).is_none());
        let ending = pump.end(End::Silent(600_000), &counter);
        let trailer = ending.trailer.expect("an error event");
        assert!(
            trailer.starts_with("event: error\ndata: {") && trailer.contains("sent nothing for 600 s"),
            "{trailer}"
        );
        let outcome = ending.outcome.expect("the outcome");
        assert!(!outcome.completed);
        assert_eq!(outcome.error.as_deref(), Some("the upstream sent nothing for 600 s"));
    }

    #[test]
    fn a_stream_the_upstream_closes_mid_message_ends_with_an_error_event() {
        let counter = TokenCounter::new(Encoding::O200kBase);
        let mut pump = ReplyPump::new("workbench proxy", Format::OpenAi, 200, Some("text/event-stream"), None, 1 << 20);
        assert!(pump.feed(b"data: {\"choices\":[{\"delta\":{\"content\":\"hal", &counter).is_none());
        let ending = pump.end(End::Done, &counter);
        let trailer = ending.trailer.expect("an error event");
        assert!(trailer.contains("the upstream's stream ended before the reply did"), "{trailer}");
        assert!(!ending.outcome.unwrap().completed);
        // A whole JSON reply (not a stream) that ends is no error of the proxy's to add.
        let pump = ReplyPump::new("workbench proxy", Format::OpenAi, 500, Some("application/json"), None, 1 << 20);
        assert!(pump.end(End::Done, &counter).trailer.is_none());
    }

    #[test]
    fn a_stream_that_reached_its_end_gets_no_error_event_even_when_it_is_not_recorded() {
        let counter = TokenCounter::new(Encoding::O200kBase);
        // A malformed event mid-stream, then the stream's end: not recorded, nothing appended.
        let mut pump = ReplyPump::new("workbench proxy", Format::OpenAi, 200, Some("text/event-stream"), None, 1 << 20);
        assert!(pump.feed(b"data: {not json\n\n", &counter).is_none());
        let _ = pump.feed(DONE.as_bytes(), &counter);
        let ending = pump.end(End::Done, &counter);
        assert!(ending.trailer.is_none(), "{:?}", ending.trailer);
        // A stream over the limit: unread past it, so nothing is known to be missing.
        let mut pump = ReplyPump::new("workbench proxy", Format::OpenAi, 200, Some("text/event-stream"), None, 64);
        for _ in 0..4 {
            let _ = pump.feed(DONE.as_bytes(), &counter);
        }
        let ending = pump.end(End::Done, &counter);
        assert!(ending.trailer.is_none(), "{:?}", ending.trailer);
        assert!(ending.outcome.is_none_or(|o| !o.completed), "not recorded");
    }

    #[test]
    fn an_agent_that_leaves_gets_nothing_more() {
        let counter = TokenCounter::new(Encoding::O200kBase);
        let pump = ReplyPump::new("workbench proxy", Format::OpenAi, 200, None, None, 1 << 20);
        let ending = pump.end(End::AgentGone, &counter);
        assert!(ending.trailer.is_none());
        assert_eq!(
            ending.outcome.unwrap().error.as_deref(),
            Some("the agent closed the connection before the reply ended")
        );
    }
}
