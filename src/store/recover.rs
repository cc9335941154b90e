//! What a killed host left in the store, found when a host starts again: a trace whose
//! `meta.json` still says `running` and whose owner lock ([`layout::OWNER`]) no live process
//! holds was open when its host died, and is marked `interrupted` (the views then stop showing
//! it as live; a resume reads it as before). A directory whose first save was cut before its
//! `meta.json` is adopted: it gets one, `interrupted`, from the messages that reached the disk,
//! so the views list it and nothing in it is lost. A trace another live process holds is left
//! as it is: a second host on the same store does not touch the first one's sessions.

use super::layout::{self, TraceDir};
use super::load::{read_messages, read_optional};
use super::records::{INTERRUPTED, STORE_FORMAT_VERSION, TraceMeta};
use crate::error::Result;
use crate::host::{Host, HostErrorKind};
use crate::model::Role;

/// Mark every `running` trace under `root` `interrupted`, and adopt every trace directory
/// without `meta.json` as `interrupted`, of those whose owner lock this process can take (their
/// owner is gone; hosts without locks take every one); returns their ids. Call it before the
/// host opens any trace.
pub async fn mark_interrupted<H: Host>(host: &H, root: &str) -> Result<Vec<String>> {
    let entries = match host.list_dir(root).await {
        Ok(entries) => entries,
        Err(e) if e.kind == HostErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let mut marked = Vec::new();
    for entry in entries.iter().filter(|e| e.is_dir && layout::check_id("trace id", &e.name).is_ok()) {
        let dir = TraceDir::new(root, &entry.name)?;
        let path = dir.file(layout::META);
        let mut meta = match read_optional(host, &path).await? {
            Some(text) => match serde_json::from_str::<TraceMeta>(&text) {
                Ok(meta) if meta.status == "running" => meta,
                _ => continue,
            },
            None => adopted(host, &dir, &entry.name).await?,
        };
        let owner = dir.file(layout::OWNER);
        if !host.try_lock(&owner).await? {
            continue;
        }
        meta.status = INTERRUPTED.to_owned();
        let temporary = format!("{path}.tmp");
        let written = host.write_file(&temporary, &serde_json::to_string_pretty(&meta).unwrap_or_default()).await;
        let renamed = match written {
            Ok(()) => host.rename(&temporary, &path).await,
            Err(e) => Err(e),
        };
        host.unlock(&owner).await?;
        renamed?;
        marked.push(entry.name.clone());
    }
    Ok(marked)
}

/// The metadata of a trace whose first save never reached `meta.json`, from its messages.
async fn adopted<H: Host>(host: &H, dir: &TraceDir, id: &str) -> Result<TraceMeta> {
    let (messages, _notes) = read_messages(host, dir).await?;
    let at = |m: Option<&crate::model::Message>| m.map_or(host.now_ms(), |m| m.created_at_ms);
    Ok(TraceMeta {
        version: STORE_FORMAT_VERSION,
        trace_id: id.to_owned(),
        mission: messages.iter().find(|m| m.role == Role::User).map(|m| m.description.clone()).unwrap_or_default(),
        created_at: at(messages.first()),
        updated_at: at(messages.last()),
        message_count: messages.len() as u64,
        status: INTERRUPTED.to_owned(),
        branch_count: 0,
        event_count: 0,
        calls: 0,
        continues: None,
        branch_of: None,
        fallbacks: Vec::new(),
        person: None,
    })
}
