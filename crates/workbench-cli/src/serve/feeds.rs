//! One poller per watched trace, shared by all of its watchers: every [`POLL`] it reads what
//! was appended to the trace's `events.jsonl` (a `stat` when nothing was) and broadcasts the
//! new frames as one batch. The poller starts with the first watcher and stops at the first
//! tick without one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use context_workbench::store::layout::{self, TraceDir};
use tokio::sync::broadcast;
use workbench_cli::native::StoreFs;

use super::blocking;
use super::errors::ApiError;
use super::tail::{EventLog, Frame, Tail};

/// How often a watched log is checked for new lines.
pub const POLL: Duration = Duration::from_millis(50);
/// Batches (polls that found something) a watcher may fall behind before it catches up from
/// the file instead.
const CAPACITY: usize = 256;

/// The frames one poll found, shared by every watcher.
pub type Batch = Arc<[Frame]>;

/// The pollers of the traces being watched.
pub struct Feeds {
    fs: StoreFs,
    channels: Mutex<HashMap<String, broadcast::Sender<Batch>>>,
}

impl Feeds {
    pub fn new(fs: StoreFs) -> Arc<Feeds> {
        Arc::new(Feeds { fs, channels: Mutex::default() })
    }

    /// A trace's event log: on disk, its absolute path checked to stay inside the root.
    pub fn events_path(fs: &StoreFs, trace_id: &str) -> Result<EventLog, ApiError> {
        let dir = TraceDir::new(".", trace_id).map_err(ApiError::input)?;
        match fs {
            StoreFs::Folder(disk) => {
                disk.resolve(&dir.file(layout::EVENTS)).map(EventLog::File).map_err(|e| ApiError::store(e.into()))
            }
            StoreFs::Database { .. } => Ok(EventLog::Store(fs.clone(), dir.file(layout::EVENTS))),
        }
    }

    /// Receive every frame appended to the trace's log from now on. Whatever was on disk before
    /// this returns is for the caller to read itself (after subscribing, so nothing falls
    /// between the two).
    pub async fn subscribe(self: &Arc<Self>, trace_id: &str) -> Result<broadcast::Receiver<Batch>, ApiError> {
        if let Some(sender) = self.lock().get(trace_id) {
            return Ok(sender.subscribe());
        }
        let fs = self.fs.clone();
        let id = trace_id.to_owned();
        // A new poller starts where the log ends now: what is there already is the caller's.
        let tail = blocking(move || {
            let mut tail = Tail::new(Feeds::events_path(&fs, &id)?);
            tail.read_new().map_err(|e| ApiError::internal(format!("{id}/events.jsonl: {e}")))?;
            Ok::<_, ApiError>(tail)
        })
        .await??;
        let mut channels = self.lock();
        if let Some(sender) = channels.get(trace_id) {
            return Ok(sender.subscribe());
        }
        let (sender, receiver) = broadcast::channel(CAPACITY);
        channels.insert(trace_id.to_owned(), sender.clone());
        tokio::spawn(poll(Arc::clone(self), trace_id.to_owned(), sender, tail));
        Ok(receiver)
    }

    /// Forget the trace's poller when nobody watches it; under the lock, so a watcher that
    /// subscribes at the same time either gets this channel before or a new one after.
    fn retire_if_unwatched(&self, trace_id: &str, sender: &broadcast::Sender<Batch>) -> bool {
        let mut channels = self.lock();
        if sender.receiver_count() > 0 {
            return false;
        }
        if channels.get(trace_id).is_some_and(|s| s.same_channel(sender)) {
            channels.remove(trace_id);
        }
        true
    }

    /// Drop a poller that cannot go on; its watchers see the channel close.
    fn forget(&self, trace_id: &str, sender: &broadcast::Sender<Batch>) {
        let mut channels = self.lock();
        if channels.get(trace_id).is_some_and(|s| s.same_channel(sender)) {
            channels.remove(trace_id);
        }
    }

    /// Pollers running now.
    #[cfg(test)]
    fn active(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, broadcast::Sender<Batch>>> {
        self.channels.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The poller of one trace: read, broadcast, sleep, until nobody listens.
async fn poll(feeds: Arc<Feeds>, trace_id: String, sender: broadcast::Sender<Batch>, mut tail: Tail) {
    let mut tick = tokio::time::interval(POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last_error = String::new();
    loop {
        tick.tick().await;
        if feeds.retire_if_unwatched(&trace_id, &sender) {
            return;
        }
        let read = blocking(move || {
            let frames = tail.read_new();
            (tail, frames)
        })
        .await;
        let frames = match read {
            Ok((back, frames)) => {
                tail = back;
                frames
            }
            Err(e) => {
                // The reading thread panicked and took the reader with it: say so, then stop.
                let note = Frame::note(&format!("{trace_id}: the event log reader failed: {}", e.message));
                let _ = sender.send(Arc::new([note]));
                feeds.forget(&trace_id, &sender);
                return;
            }
        };
        match frames {
            Ok(frames) => {
                last_error.clear();
                if !frames.is_empty() {
                    // No receiver left is not an error: the next tick retires the poller.
                    let _ = sender.send(frames.into());
                }
            }
            Err(e) if e.to_string() != last_error => {
                last_error = e.to_string();
                let note = Frame::note(&format!("{trace_id}/events.jsonl cannot be read: {e}"));
                let _ = sender.send(Arc::new([note]));
            }
            Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::time::Instant;

    #[test]
    fn watchers_share_one_poller_that_stops_when_the_last_one_leaves() {
        let dir = std::env::temp_dir().join(format!("cw-feeds-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("t")).unwrap();
        std::fs::write(dir.join("t/events.jsonl"), "{\"id\":1,\"type\":\"goal_added\"}\n").unwrap();
        let feeds = Feeds::new(workbench_cli::native::WorkspaceFs::new(&dir).unwrap().into());
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let mut first = feeds.subscribe("t").await.unwrap();
            let mut second = feeds.subscribe("t").await.unwrap();
            assert_eq!(feeds.active(), 1);
            let mut log = std::fs::OpenOptions::new().append(true).open(dir.join("t/events.jsonl")).unwrap();
            log.write_all(b"{\"id\":2,\"type\":\"goal_added\"}\n").unwrap();
            for receiver in [&mut first, &mut second] {
                let batch = receiver.recv().await.unwrap();
                let ids: Vec<_> = batch.iter().map(Frame::event_id).collect();
                assert_eq!(ids, [Some(2)], "only what was appended after subscribing");
            }
            drop((first, second));
            let deadline = Instant::now() + Duration::from_secs(30);
            while feeds.active() > 0 && Instant::now() < deadline {
                tokio::time::sleep(POLL).await;
            }
            assert_eq!(feeds.active(), 0, "the poller retired");
            assert!(feeds.subscribe("../t").await.is_err());
        });
        std::fs::remove_dir_all(dir).unwrap();
    }
}
