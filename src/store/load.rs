//! Reading a trace directory back through the host. Readers never write: damage is reported in
//! notes (or as an error when nothing sensible can be returned), and the files stay as they are.

use serde::de::DeserializeOwned;

use super::jsonl::{self, Lines};
use super::layout::{self, TraceDir};
use super::records::{STORE_FORMAT_VERSION, TraceMeta};
use crate::error::{Error, Result};
use crate::goals::{Event, GoalTree};
use crate::host::{Host, HostError, HostErrorKind};
use crate::model::Message;

/// The text of a file, `None` when it does not exist.
pub async fn read_optional<H: Host>(host: &H, path: &str) -> Result<Option<String>> {
    match host.read_file(path).await {
        Ok(content) => Ok(Some(content.text)),
        Err(e) if e.kind == HostErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// `meta.json` of a trace; an unknown trace is `host_not_found`.
pub async fn read_meta<H: Host>(host: &H, dir: &TraceDir, trace_id: &str) -> Result<TraceMeta> {
    let path = dir.file(layout::META);
    let Some(text) = read_optional(host, &path).await? else {
        return Err(HostError::new(HostErrorKind::NotFound, format!("no trace `{trace_id}` (no {path})")).into());
    };
    let meta: TraceMeta = parse_json(&path, &text)?;
    if meta.version > STORE_FORMAT_VERSION {
        return Err(Error::UnsupportedVersion { found: meta.version, supported: STORE_FORMAT_VERSION });
    }
    Ok(meta)
}

/// A trace's `meta.json` with the status to show now ([`super::shown_status`]).
pub async fn read_meta_shown<H: Host>(host: &H, dir: &TraceDir, trace_id: &str) -> Result<TraceMeta> {
    let mut meta = read_meta(host, dir, trace_id).await?;
    if meta.status == "running" {
        let calls = read_optional(host, &dir.file(layout::CALLS)).await?.unwrap_or_default();
        meta.status = super::shown_status(&meta.status, meta.updated_at, &calls, host.now_ms());
    }
    Ok(meta)
}

/// A `goal.json`, `None` when the trace has none yet.
pub async fn read_goal_tree<H: Host>(host: &H, dir: &TraceDir) -> Result<Option<GoalTree>> {
    let path = dir.file(layout::GOAL);
    match read_optional(host, &path).await? {
        None => Ok(None),
        Some(text) => GoalTree::from_json(&text).map(Some).map_err(|e| match e {
            Error::InvalidInput(why) => Error::InvalidInput(format!("{path} is corrupted: {why}")),
            other => other,
        }),
    }
}

/// The messages under `dir/messages/`, in sequence order, and a note per file that could not be
/// read. Temporary files of an interrupted write (`*.tmp`) are ignored.
pub async fn read_messages<H: Host>(host: &H, dir: &TraceDir) -> Result<(Vec<Message>, Vec<String>)> {
    let folder = format!("{}/{}", dir.dir(), layout::MESSAGES);
    let files = match host.read_files(&folder, ".json").await {
        Ok(files) => files,
        Err(e) if e.kind == HostErrorKind::NotFound => return Ok((Vec::new(), Vec::new())),
        Err(e) => return Err(e.into()),
    };
    let mut messages = Vec::new();
    let mut notes = Vec::new();
    for (name, content) in files {
        let path = format!("{folder}/{name}");
        match parse_json::<Message>(&path, &content.text) {
            Ok(message) => messages.push(message),
            Err(e) => notes.push(e.to_string()),
        }
    }
    messages.sort_by_key(|m| m.sequence);
    Ok((messages, notes))
}

/// The message `id` of `dir` (`messages/{id}.json`), `None` when there is no such file; a
/// damaged file is `invalid_input`. Messages are written once.
pub async fn read_message<H: Host>(host: &H, dir: &TraceDir, id: &str) -> Result<Option<Message>> {
    let path = dir.message(id);
    match read_optional(host, &path).await? {
        None => Ok(None),
        Some(text) => parse_json(&path, &text).map(Some),
    }
}

/// The records of a JSON-lines file; a missing file has none.
pub async fn read_lines<H: Host, T: DeserializeOwned>(host: &H, path: &str) -> Result<Lines<T>> {
    let text = read_optional(host, path).await?.unwrap_or_default();
    Ok(jsonl::parse(path, &text))
}

/// The events of an `events.jsonl`, each id once and increasing: an append that timed out in the
/// host but landed later is written again by the next save, so a repeated id is skipped with a
/// note (the first copy is the one that counts; nothing on disk changes).
pub async fn read_events<H: Host>(host: &H, path: &str) -> Result<Lines<Event>> {
    let mut lines = read_lines::<_, Event>(host, path).await?;
    let mut last = 0;
    let mut notes = Vec::new();
    lines.records.retain(|event| {
        let keep = event.id > last;
        if keep {
            last = event.id;
        } else {
            notes.push(format!("{path}: event {} comes again after event {last} (a save retried); skipped", event.id));
        }
        keep
    });
    lines.notes.extend(notes);
    Ok(lines)
}

/// Parse a JSON file, naming it and the failing field.
pub fn parse_json<T: DeserializeOwned>(path: &str, text: &str) -> Result<T> {
    let mut de = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let at = e.path().to_string();
        let at = if at == "." { String::new() } else { format!(" at `{at}`") };
        Error::InvalidInput(format!("{path} is not valid{at}: {}", e.into_inner()))
    })
}
