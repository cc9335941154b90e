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

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::ws::{Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, Query, State};
use axum::response::Response;
use serde_json::json;
use tokio::sync::broadcast::{Receiver, error::RecvError};

use super::errors::ApiError;
use super::feeds::Feeds;
use super::routes::{SinceQuery, check_since, query_of, trace_id};
use super::tail::{Frame, Tail};
use super::{AppState, blocking, read_store};

pub async fn upgrade(
    State(state): State<AppState>,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<SinceQuery>, QueryRejection>,
    upgrade: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let trace_id = trace_id(path)?;
    let since = query_of(query)?.since_event_id.unwrap_or(0);
    let upgrade = upgrade.map_err(|e| ApiError::new(e.status(), "invalid_input", e.body_text()))?;
    let id = trace_id.clone();
    let detail = read_store(&state.fs, move |store| pollster::block_on(store.trace(&id))).await?;
    // Subscribe before reading the log: an event appended in between is both read and
    // received, and sent once.
    let live = state.feeds.subscribe(&trace_id).await?;
    let (fs, id) = (state.fs.clone(), trace_id.clone());
    let (backlog, current_event_id) = blocking(move || {
        let mut tail = Tail::new(Feeds::events_path(&fs, &id)?);
        let frames = tail.read_new().map_err(|e| ApiError::internal(format!("{id}/events.jsonl: {e}")))?;
        Ok::<_, ApiError>((frames, tail.last_id()))
    })
    .await??;
    check_since(since, current_event_id, &trace_id)?;
    let mut notes = detail.notes;
    let mut replay = Vec::new();
    for frame in backlog {
        match frame {
            Frame::Note(message) => notes.push(message),
            Frame::Event { id, text } if id > since => replay.push(text),
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
    let session = Session { state, trace_id, last_sent: current_event_id };
    Ok(upgrade.on_upgrade(move |socket| session.run(socket, connected.to_string().into(), replay, live)))
}

/// One watcher's connection.
struct Session {
    state: AppState,
    trace_id: String,
    /// The newest event id sent (or covered by `connected`).
    last_sent: u64,
}

impl Session {
    async fn run(
        mut self,
        mut socket: WebSocket,
        connected: Utf8Bytes,
        replay: Vec<Utf8Bytes>,
        mut live: Receiver<Frame>,
    ) {
        for text in std::iter::once(connected).chain(replay) {
            if socket.send(Message::Text(text)).await.is_err() {
                return;
            }
        }
        loop {
            tokio::select! {
                received = live.recv() => {
                    let sent = match received {
                        Ok(Frame::Event { id, text }) if id > self.last_sent => {
                            self.last_sent = id;
                            socket.send(Message::Text(text)).await
                        }
                        Ok(Frame::Event { .. }) => Ok(()),
                        Ok(note @ Frame::Note(_)) => socket.send(Message::Text(note.text())).await,
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
        let _ = socket.send(Message::Close(None)).await;
    }

    /// Fell further behind than the channel holds: send what was missed from the file.
    async fn catch_up(&mut self, socket: &mut WebSocket) -> Result<(), axum::Error> {
        let (fs, id) = (self.state.fs.clone(), self.trace_id.clone());
        let read = blocking(move || {
            let mut tail = Tail::new(Feeds::events_path(&fs, &id)?);
            tail.read_new().map_err(|e| ApiError::internal(format!("{id}/events.jsonl: {e}")))
        })
        .await;
        let frames = match read {
            Ok(Ok(frames)) => frames,
            Ok(Err(e)) | Err(e) => {
                let note = Frame::note(&format!("catching up from events.jsonl failed: {}", e.message));
                return socket.send(Message::Text(note.text())).await;
            }
        };
        // Only the missed events: the file's skipped lines were noted when first read.
        for frame in frames {
            if let Frame::Event { id, text } = frame
                && id > self.last_sent
            {
                self.last_sent = id;
                socket.send(Message::Text(text)).await?;
            }
        }
        Ok(())
    }
}
