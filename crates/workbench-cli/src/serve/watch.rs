//! `GET /api/traces/{id}/watch?since_event_id=N`: a WebSocket that sends
//!
//! 1. `{"event": "connected", "trace_id", "current_event_id", "goal_tree", "branches", "trace", "notes"}`,
//!    the goal tree as `GET /api/traces/{id}` returns it; it is read before the event log, and the
//!    engine appends events before it replaces `goal.json`, so the tree holds no event newer
//!    than `current_event_id`;
//! 2. every event with `since_event_id` < id <= `current_event_id`, in id order;
//! 3. every event appended after that, as another process writes it, in id order, no gaps.
//!
//! Each event frame is the stored line with `"event": type` in front
//! (`{"event":"goal_added","id":7,"type":"goal_added","goal":{…}}`). A skipped line of the log
//! is `{"event": "note", "message"}`. An unknown trace (404), a bad id or a `since_event_id`
//! beyond the newest event (400) refuse the upgrade with the usual JSON error. Messages from
//! the client are ignored; a close or a broken connection ends its session and nothing else.
//! When the server stops, every watcher gets a Close frame with code 1001 (going away).

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade, close_code};
use axum::extract::{Extension, Path, Query, State};
use axum::response::Response;
use futures_util::SinkExt;
use serde_json::json;
use tokio::sync::broadcast::{Receiver, error::RecvError};

use super::errors::ApiError;
use super::feeds::{Batch, Feeds};
use super::routes::{SinceQuery, query_of, trace_id};
use super::signin::Viewer;
use super::tail::{Frame, Position, Tail};
use super::{AppState, blocking, read_store};
use context_workbench::store::api::check_since;

pub async fn upgrade(
    State(state): State<AppState>,
    Extension(viewer): Extension<Viewer>,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<SinceQuery>, QueryRejection>,
    upgrade: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let trace_id = trace_id(path)?;
    let since = query_of(query)?.since_event_id.unwrap_or(0);
    let upgrade = upgrade.map_err(|e| ApiError::new(e.status(), "invalid_input", e.body_text()))?;
    let id = trace_id.clone();
    let detail = read_store(&state.fs, viewer, move |store| {
        pollster::block_on(async {
            store.check_visible(&id).await?;
            store.trace(&id).await
        })
    })
    .await?;
    // Subscribe before reading the log: an event appended in between is both read and
    // received, and sent once.
    let live = state.feeds.subscribe(&trace_id).await?;
    let (fs, id) = (state.fs.clone(), trace_id.clone());
    let (backlog, position) = blocking(move || {
        let mut tail = Tail::new(Feeds::events_path(&fs, &id)?);
        let frames = tail.read_new().map_err(|e| ApiError::internal(format!("{id}/events.jsonl: {e}")))?;
        Ok::<_, ApiError>((frames, tail.position()))
    })
    .await??;
    let current_event_id = position.last_id;
    check_since(since, current_event_id, &trace_id).map_err(ApiError::input)?;
    let mut notes = detail.notes;
    let mut replay = Vec::new();
    for frame in backlog {
        match frame {
            Frame::Note(message) => notes.push(message),
            Frame::Event { id, text, .. } if id > since => replay.push(text),
            Frame::Event { .. } => {}
        }
    }
    let connected = json!({
        "event": "connected",
        "trace_id": trace_id,
        "current_event_id": current_event_id,
        "goal_tree": detail.goal_tree,
        "branches": detail.branches,
        "trace": detail.trace,
        "notes": notes,
    });
    let session = Session { state, trace_id, cursor: Cursor(position) };
    Ok(upgrade.on_upgrade(move |socket| session.run(socket, connected.to_string().into(), replay, live)))
}

/// One watcher's connection.
struct Session {
    state: AppState,
    trace_id: String,
    cursor: Cursor,
}

impl Session {
    async fn run(
        mut self,
        mut socket: WebSocket,
        connected: Utf8Bytes,
        replay: Vec<Utf8Bytes>,
        mut live: Receiver<Batch>,
    ) {
        let mut stopping = self.state.stopping.subscribe();
        let stopped = async move {
            let _ = stopping.wait_for(|stop| *stop).await;
        };
        tokio::pin!(stopped);
        if send_all(&mut socket, std::iter::once(connected).chain(replay)).await.is_err() {
            return;
        }
        loop {
            tokio::select! {
                () = &mut stopped => break,
                received = live.recv() => {
                    let sent = match received {
                        Ok(batch) => {
                            let texts: Vec<Utf8Bytes> = batch.iter().filter_map(|f| self.cursor.admit(f)).collect();
                            send_all(&mut socket, texts).await
                        }
                        Err(RecvError::Lagged(_)) => self.catch_up(&mut socket).await,
                        Err(RecvError::Closed) => break,
                    };
                    if sent.is_err() {
                        return;
                    }
                }
                incoming = socket.recv() => match incoming {
                    None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
                    // Pings are answered by the WebSocket layer; anything else is ignored.
                    Some(Ok(_)) => {}
                },
            }
        }
        let going_away = CloseFrame { code: close_code::AWAY, reason: "the server is stopping".into() };
        let _ = socket.send(Message::Close(Some(going_away))).await;
    }

    /// Fell further behind than the channel holds: send the missed events from the file.
    async fn catch_up(&mut self, socket: &mut WebSocket) -> Result<(), axum::Error> {
        let texts = self.missed().await;
        send_all(socket, texts).await
    }

    /// The events after the last one sent, read from the file on from where it ended (notes
    /// of skipped lines are not repeated); a note when the file cannot be read.
    async fn missed(&mut self) -> Vec<Utf8Bytes> {
        let (fs, id, position) = (self.state.fs.clone(), self.trace_id.clone(), self.cursor.0);
        let read = blocking(move || {
            let mut tail = Tail::resume(Feeds::events_path(&fs, &id)?, position);
            tail.read_new().map_err(|e| ApiError::internal(format!("{id}/events.jsonl: {e}")))
        })
        .await;
        match read {
            Ok(Ok(frames)) => {
                let events = frames.iter().filter(|f| matches!(f, Frame::Event { .. }));
                events.filter_map(|f| self.cursor.admit(f)).collect()
            }
            Ok(Err(e)) | Err(e) => {
                vec![Frame::note(&format!("catching up from events.jsonl failed: {}", e.message)).text()]
            }
        }
    }
}

/// Queue every text, then flush once: one write for a whole batch.
async fn send_all(socket: &mut WebSocket, texts: impl IntoIterator<Item = Utf8Bytes>) -> Result<(), axum::Error> {
    let mut queued = false;
    for text in texts {
        socket.feed(Message::Text(text)).await?;
        queued = true;
    }
    if queued { socket.flush().await } else { Ok(()) }
}

/// Where the log goes on after the newest event sent to a watcher (or covered by
/// `connected`). An event arrives twice when it was appended while the watcher connected (read
/// with the backlog and broadcast), or when catching up overlaps the channel: sent once.
struct Cursor(Position);

impl Cursor {
    /// The text to send for `frame`, or `None` for an event already sent.
    fn admit(&mut self, frame: &Frame) -> Option<Utf8Bytes> {
        match frame {
            Frame::Event { id, text, after } if *id > self.0.last_id => {
                self.0 = *after;
                Some(text.clone())
            }
            Frame::Event { .. } => None,
            note @ Frame::Note(_) => Some(note.text()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use workbench_cli::native::WorkspaceFs;

    #[test]
    fn an_event_is_sent_once_and_only_after_the_last_one_sent() {
        let frames = |texts: &[&str]| -> Vec<Frame> {
            let dir = std::env::temp_dir().join(format!("cw-cursor-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join("events.jsonl");
            std::fs::write(&path, texts.concat()).unwrap();
            let frames = Tail::new(path).read_new().unwrap();
            std::fs::remove_dir_all(dir).unwrap();
            frames
        };
        let all = frames(&["{\"id\":1,\"type\":\"a\"}\n", "{\"id\":2,\"type\":\"b\"}\n"]);
        let Frame::Event { after: after_first, .. } = all[0] else { panic!("an event") };
        let mut cursor = Cursor(after_first);
        assert!(cursor.admit(&all[0]).is_none(), "event 1 was covered already");
        assert_eq!(cursor.admit(&all[1]).as_deref(), Some("{\"event\":\"b\",\"id\":2,\"type\":\"b\"}"));
        assert!(cursor.admit(&all[1]).is_none(), "event 2 is not sent twice");
        assert!(cursor.admit(&Frame::note("line 9 skipped")).unwrap().contains("line 9 skipped"));
        assert_eq!(cursor.0.last_id, 2);
    }

    #[test]
    fn a_watcher_that_fell_behind_reads_the_missed_events_from_where_it_was() {
        let dir = std::env::temp_dir().join(format!("cw-missed-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("t")).unwrap();
        let line = |id: u64| format!("{{\"id\":{id},\"type\":\"goal_added\"}}\n");
        std::fs::write(dir.join("t/events.jsonl"), (1..=5).map(line).collect::<String>() + "not json\n").unwrap();
        let fs = WorkspaceFs::new(&dir).unwrap();
        let frames = Tail::new(dir.join("t/events.jsonl")).read_new().unwrap();
        let Frame::Event { after: after_second, .. } = frames[1] else { panic!("an event") };
        let state = AppState::new(fs.into(), false);
        let mut session = Session { state, trace_id: "t".into(), cursor: Cursor(after_second) };
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let ids = |texts: Vec<Utf8Bytes>| -> Vec<u64> {
            texts
                .iter()
                .map(|t| serde_json::from_str::<serde_json::Value>(t).unwrap()["id"].as_u64().unwrap())
                .collect()
        };
        assert_eq!(ids(runtime.block_on(session.missed())), [3, 4, 5], "the events after the second, no note");
        assert!(runtime.block_on(session.missed()).is_empty());
        let mut log = std::fs::OpenOptions::new().append(true).open(dir.join("t/events.jsonl")).unwrap();
        std::io::Write::write_all(&mut log, line(6).as_bytes()).unwrap();
        assert_eq!(ids(runtime.block_on(session.missed())), [6]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
