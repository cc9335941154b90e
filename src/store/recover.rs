//! What a killed host left in the store, found when a host starts again: a trace whose
//! `meta.json` still says `running` was open when its host died, and is marked `interrupted`
//! (the views then stop showing it as live). Nothing else changes: a resume reads it as before.

use super::layout::{self, TraceDir};
use super::load::read_optional;
use super::records::{INTERRUPTED, TraceMeta};
use crate::error::Result;
use crate::host::{Host, HostErrorKind};

/// Mark every `running` trace under `root` `interrupted`; returns their ids. Call it before
/// the host opens any trace: one host per store.
pub async fn mark_interrupted<H: Host>(host: &H, root: &str) -> Result<Vec<String>> {
    let entries = match host.list_dir(root).await {
        Ok(entries) => entries,
        Err(e) if e.kind == HostErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let mut marked = Vec::new();
    for entry in entries.iter().filter(|e| e.is_dir && layout::check_id("trace id", &e.name).is_ok()) {
        let path = TraceDir::new(root, &entry.name)?.file(layout::META);
        let Some(text) = read_optional(host, &path).await? else { continue };
        let Ok(mut meta) = serde_json::from_str::<TraceMeta>(&text) else { continue };
        if meta.status != "running" {
            continue;
        }
        meta.status = INTERRUPTED.to_owned();
        let temporary = format!("{path}.tmp");
        host.write_file(&temporary, &serde_json::to_string_pretty(&meta).unwrap_or_default()).await?;
        host.rename(&temporary, &path).await?;
        marked.push(entry.name.clone());
    }
    Ok(marked)
}
