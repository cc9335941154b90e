//! Reading `events.jsonl` as another process appends to it: each call returns the complete
//! lines written since the previous one, as WebSocket frames. A torn last line (no newline yet)
//! is left where it is until its writer completes it; a complete line that is not an event is
//! skipped with a note. The file is only ever opened for reading.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::PathBuf;

use axum::extract::ws::Utf8Bytes;
use serde_json::{Value, json};
use workbench_cli::native::StoreFs;

/// Where an event log is: a file on disk, or a path of a database store.
#[derive(Debug)]
pub enum EventLog {
    File(PathBuf),
    Store(StoreFs, String),
}

impl From<PathBuf> for EventLog {
    fn from(path: PathBuf) -> Self {
        EventLog::File(path)
    }
}

impl EventLog {
    /// The log's size and its bytes from `offset` on (none when it got shorter); `None` while
    /// it does not exist.
    fn read_from(&self, offset: u64) -> io::Result<Option<(u64, Vec<u8>)>> {
        let path = match self {
            EventLog::Store(fs, path) => return fs.read_from(path, offset).map_err(io::Error::other),
            EventLog::File(path) => path,
        };
        // The path was checked when the watch began; a link made there since is not followed.
        let size = match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(io::Error::other("it is now a symbolic link, which the server does not follow"));
            }
            Ok(meta) => meta.len(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        if size <= offset {
            return Ok(Some((size, Vec::new())));
        }
        let mut file = File::open(path)?;
        file.seek(SeekFrom::Start(offset))?;
        let mut bytes = Vec::new();
        file.take(size - offset).read_to_end(&mut bytes)?;
        Ok(Some((size, bytes)))
    }
}

/// One message for watchers.
#[derive(Debug, Clone)]
pub enum Frame {
    /// An event as stored, with `"event": type` in front for seed 002's clients; `after` is
    /// where the log goes on after its line (a watcher that fell behind resumes there).
    Event { id: u64, text: Utf8Bytes, after: Position },
    /// Why a line of the log was skipped; sent as `{"event": "note", "message": …}`.
    Note(String),
}

impl Frame {
    pub fn note(message: &str) -> Frame {
        Frame::Note(message.to_owned())
    }

    /// The text sent to a watcher.
    pub fn text(&self) -> Utf8Bytes {
        match self {
            Frame::Event { text, .. } => text.clone(),
            Frame::Note(message) => json!({"event": "note", "message": message}).to_string().into(),
        }
    }

    #[cfg(test)]
    pub fn event_id(&self) -> Option<u64> {
        match self {
            Frame::Event { id, .. } => Some(*id),
            Frame::Note(_) => None,
        }
    }
}

/// How far a reader has read an event log.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Position {
    /// Bytes consumed: the end of the last complete line.
    offset: u64,
    /// Complete lines consumed, for notes.
    lines: u64,
    /// The newest event id read; an event that does not come after it is skipped.
    pub last_id: u64,
}

/// A reader of one event log.
#[derive(Debug)]
pub struct Tail {
    log: EventLog,
    at: Position,
}

impl Tail {
    /// A reader at the start of the log (a path already checked to be inside the trace root).
    pub fn new(log: impl Into<EventLog>) -> Tail {
        Tail::resume(log, Position::default())
    }

    /// A reader that goes on from `at`.
    pub fn resume(log: impl Into<EventLog>, at: Position) -> Tail {
        Tail { log: log.into(), at }
    }

    pub fn position(&self) -> Position {
        self.at
    }

    /// The events and notes of the complete lines appended since the last call. A log that
    /// does not exist yet has none; a log shorter than what was read was replaced, and is read
    /// again from its start (events already seen are not repeated).
    pub fn read_new(&mut self) -> io::Result<Vec<Frame>> {
        let mut frames = Vec::new();
        let Some((size, mut bytes)) = self.log.read_from(self.at.offset)? else { return Ok(frames) };
        if size < self.at.offset {
            frames.push(Frame::note("events.jsonl became shorter (replaced); reading it again from the start"));
            self.at = Position { last_id: self.at.last_id, ..Position::default() };
            bytes = self.log.read_from(0)?.map(|(_, bytes)| bytes).unwrap_or_default();
        }
        if bytes.is_empty() {
            return Ok(frames);
        }
        let Some(end) = bytes.iter().rposition(|&b| b == b'\n') else { return Ok(frames) };
        for raw in bytes[..end].split(|&b| b == b'\n') {
            self.at.lines += 1;
            self.at.offset += raw.len() as u64 + 1;
            if raw.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match event_frame(raw) {
                Ok((id, text)) if id > self.at.last_id => {
                    self.at.last_id = id;
                    frames.push(Frame::Event { id, text, after: self.at });
                }
                Ok(_) => {}
                Err(why) => frames.push(Frame::note(&format!("events.jsonl: line {} skipped: {why}", self.at.lines))),
            }
        }
        Ok(frames)
    }
}

/// `{"event": "<type>", <the stored fields>}` for one stored line, and the event's id.
fn event_frame(raw: &[u8]) -> Result<(u64, Utf8Bytes), String> {
    let line = std::str::from_utf8(raw).map_err(|e| format!("not UTF-8 ({e})"))?.trim();
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON ({e})"))?;
    let id = value.get("id").and_then(Value::as_u64).ok_or("no numeric `id`")?;
    let kind = value.get("type").and_then(Value::as_str).ok_or("no `type`")?;
    // An object with `id` and `type` is `{…}` with at least one field: splice the tag in front.
    let rest = line.strip_prefix('{').ok_or("not an object")?;
    let kind = serde_json::to_string(kind).map_err(|e| e.to_string())?;
    Ok((id, format!("{{\"event\":{kind},{rest}").into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[cfg(unix)]
    #[test]
    fn a_log_replaced_by_a_link_is_not_followed() {
        let dir = std::env::temp_dir().join(format!("cw-tail-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("t")).unwrap();
        std::fs::write(dir.join("outside.jsonl"), "{\"id\":1,\"type\":\"goal_added\"}\n").unwrap();
        let mut tail = Tail::new(dir.join("t/events.jsonl"));
        assert!(tail.read_new().unwrap().is_empty(), "no log yet");
        std::os::unix::fs::symlink(dir.join("outside.jsonl"), dir.join("t/events.jsonl")).unwrap();
        let err = tail.read_new().unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn texts(frames: &[Frame]) -> Vec<String> {
        frames.iter().map(|f| f.text().to_string()).collect()
    }

    #[test]
    fn complete_lines_are_read_once_and_a_torn_tail_waits_for_its_newline() {
        let dir = std::env::temp_dir().join(format!("cw-tail-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("events.jsonl");
        let _ = std::fs::remove_file(&path);
        let mut tail = Tail::new(path.clone());
        assert!(tail.read_new().unwrap().is_empty(), "a missing log has no events yet");

        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&path).unwrap();
        file.write_all(b"{\"id\":1,\"type\":\"goal_added\",\"goal\":{\"id\":\"1\"}}\n{\"id\":2,\"ty").unwrap();
        let first = tail.read_new().unwrap();
        assert_eq!(
            texts(&first),
            ["{\"event\":\"goal_added\",\"id\":1,\"type\":\"goal_added\",\"goal\":{\"id\":\"1\"}}"]
        );
        assert!(tail.read_new().unwrap().is_empty(), "the torn line is not read yet");
        file.write_all(b"pe\":\"trace_completed\"}\nnot json\n\n{\"id\":1,\"type\":\"goal_added\"}\n").unwrap();
        let frames = tail.read_new().unwrap();
        let texts = texts(&frames);
        assert_eq!(frames[0].event_id(), Some(2));
        assert_eq!(texts[0], "{\"event\":\"trace_completed\",\"id\":2,\"type\":\"trace_completed\"}");
        assert!(texts[1].contains("line 3 skipped: not JSON"), "{}", texts[1]);
        assert_eq!(frames.len(), 2, "an id that does not come after the last one is skipped");
        assert_eq!(tail.position().last_id, 2);

        // A reader resumed after the first event reads what follows it, and nothing before.
        let Frame::Event { after, .. } = first[0] else { panic!("an event") };
        let mut resumed = Tail::resume(path.clone(), after);
        let again = resumed.read_new().unwrap();
        assert_eq!((again.len(), again[0].event_id()), (2, Some(2)), "the next event and the note");
        assert_eq!(resumed.position(), tail.position());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
