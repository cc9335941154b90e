//! The status a session is shown with: `meta.json`'s, except that a `running` session whose
//! agent has finished is `finished`. The proxy cannot see an agent exit; what it records is each
//! reply that ended the agent's turn (`calls.jsonl`'s `turn_ended_at`). Once the newest call
//! ended the turn and nothing followed for [`IDLE_MS`], the agent is done (it exited, or waits
//! for its user: a new message makes the session `running` again). Computed where a status is
//! read, from what is recorded and the host clock, so no timer has to run.

use serde::Deserialize;

use super::jsonl;

/// How long a session whose agent ended its turn stays `running` with no call following.
pub const IDLE_MS: u64 = 5 * 60 * 1000;

/// The fields of a `calls.jsonl` line the status needs.
#[derive(Deserialize)]
struct Call {
    #[serde(default)]
    at_ms: u64,
    #[serde(default)]
    side_call: bool,
    #[serde(default)]
    turn_ended_at: Option<u64>,
}

/// The status to show for a session whose `meta.json` says `status` and was last updated (its
/// newest message) at `updated_at`, with `calls` its `calls.jsonl` text, at `now_ms`.
pub fn shown_status(status: &str, updated_at: u64, calls: &str, now_ms: u64) -> String {
    if status != "running" {
        return status.to_owned();
    }
    let calls = jsonl::parse::<Call>("calls.jsonl", calls).records;
    // Side calls (a title, a classifier's check) are not the conversation's turns, but they are
    // the agent's activity.
    let Some(last) = calls.iter().rposition(|c| !c.side_call) else { return status.to_owned() };
    let Some(ended) = calls[last].turn_ended_at else { return status.to_owned() };
    let since = calls[last..].iter().map(|c| c.at_ms).fold(ended, u64::max);
    if updated_at <= ended && now_ms >= since.saturating_add(IDLE_MS) {
        "finished".to_owned()
    } else {
        status.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENDED: &str = "{\"call\":1,\"at_ms\":1000}\n{\"call\":2,\"at_ms\":5000,\"turn_ended_at\":9000}\n";

    #[test]
    fn a_running_session_whose_agent_ended_its_turn_is_finished_after_the_idle_span() {
        assert_eq!(shown_status("running", 4000, ENDED, 9000 + IDLE_MS - 1), "running");
        assert_eq!(shown_status("running", 4000, ENDED, 9000 + IDLE_MS), "finished");
        // A message recorded after the turn ended: the agent went on.
        assert_eq!(shown_status("running", 9500, ENDED, 9000 + IDLE_MS), "running");
        // A side call after it counts as activity; a later call that runs a tool keeps it running.
        let side = format!("{ENDED}{{\"call\":2,\"at_ms\":20000,\"side_call\":true}}\n");
        assert_eq!(shown_status("running", 4000, &side, 9000 + IDLE_MS), "running");
        assert_eq!(shown_status("running", 4000, &side, 20000 + IDLE_MS), "finished");
        let more = format!("{ENDED}{{\"call\":3,\"at_ms\":30000}}\n");
        assert_eq!(shown_status("running", 4000, &more, u64::MAX), "running");
        // Other statuses, and sessions without calls, are as saved.
        assert_eq!(shown_status("stopped", 4000, ENDED, u64::MAX), "stopped");
        assert_eq!(shown_status("running", 4000, "", u64::MAX), "running");
    }
}
