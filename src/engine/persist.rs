//! The engine on the trace store (R8): [`Engine::open`] starts or resumes a trace under the
//! configured root, [`Engine::persist`] writes what changed since the last save. Resuming
//! restores the raw trace, the goal tree and its events, the branches, the prompt view and the
//! board exactly, so the next prompt is byte-identical to the one the previous process would
//! have sent. Secrets are redacted in what is written (only there); a resumed prompt shows the
//! marker where a secret was.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use super::Engine;
use super::branches::BranchContext;
use super::snapshot::{EngineSnapshot, NewPart, Parts, SavedParts};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::goals::{Branch, EventLog, GoalStats, GoalTree};
use crate::host::Host;
use crate::model::{GoalId, Message, TraceId, tool_calls_by_id};
use crate::store::jsonl::{self, TORN_END};
use crate::store::layout::{self, TraceDir};
use crate::store::load::{
    parse_json, read_events, read_goal_tree, read_lines, read_messages, read_meta, read_optional,
};
use crate::store::query::GoalTreeView;
use crate::store::records::{
    AgentSnapshot, BRANCH_OF_KEY, BranchMeta, CONTINUES_KEY, CallPrompt, FALLBACKS_KEY, LogEntry, PERSON_KEY, Part,
    STORE_FORMAT_VERSION, TraceMeta,
};
use crate::store::{Redactor, SessionEnd, check_id};
use crate::workbench::recall::original;

/// What `persist` wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct PersistReport {
    pub files_written: usize,
    pub bytes_written: usize,
    /// Secrets replaced in what was written.
    pub redactions: usize,
}

/// The engine's link to its trace directory, and how far the state has been saved.
pub(super) struct Store {
    dir: TraceDir,
    redactor: Redactor,
    created_at: u64,
    saved: Saved,
    /// The trace root's `.gitignore`, until the first save has made sure it is there.
    ignore_file: Option<String>,
}

#[derive(Debug, Default)]
struct Saved {
    messages: usize,
    /// Main-line messages whose tool results are in `log.jsonl`.
    logged: usize,
    branch_messages: BTreeMap<String, usize>,
    events: u64,
    rewrites: usize,
    /// The number of the newest call whose prompt is in `prompts.jsonl`.
    prompt_call: u64,
    /// The hash of the plan that call saw ([`plan_at_call`]).
    prompt_plan: Option<u64>,
    /// Hash of the text last written to each replaced file.
    replaced: BTreeMap<String, u64>,
    /// The current goal of the newest snapshot; `None` before the first.
    current_goal: Option<Option<GoalId>>,
    /// Appended files whose last line is torn: the next append starts a new line.
    torn: BTreeSet<String>,
    parts: SavedParts,
}

/// One write of a save, and what it marks as saved once done.
struct Write {
    path: String,
    text: String,
    redactions: usize,
    append: bool,
    mark: Mark,
}

enum Mark {
    /// Nothing to remember (a file written again on the next save if that one is cut short).
    Nothing,
    Message,
    BranchMessage(String),
    /// The main line's messages logged so far.
    Logged(usize),
    /// A branch message's log entries: its message mark, written next, covers them.
    BranchLogged,
    Events(u64),
    Rewrites(usize),
    /// A call's prompt, and the hash of the plan it saw.
    PromptCall(u64, Option<u64>),
    Replaced(u64),
    Snapshot(Option<GoalId>),
    Parts(Vec<NewPart>),
}

impl<H: Host> Engine<H> {
    /// Start or resume a trace under the config's `store.root`. With an id whose directory
    /// exists, everything is restored from it; otherwise a new trace is started (with that id,
    /// or `trace-<now>`). The notes say what was degraded on resume. The first save puts a
    /// `.gitignore` in the trace root, so traces stay out of commits and agents' searches. A trace that cannot be resumed without losing what it holds
    /// (a message file that is not JSON, a damaged `goal.json`, a newer format, message files
    /// removed, a directory without `meta.json`) is an error naming the file; nothing on disk is
    /// changed by opening.
    pub async fn open(host: H, config: Config, trace_id: Option<&str>) -> Result<(Self, Vec<String>)> {
        let root = config.store.root.clone();
        let redactor = Redactor::new(config.store.redact, &config.store.redact_patterns)?;
        let mut notes = Vec::new();
        let engine = Engine::new(host, config);
        let id = match trace_id {
            Some(id) => id.to_owned(),
            None => engine.trace_id().0,
        };
        check_id("trace id", &id)?;
        let dir = TraceDir::new(&root, &id)?;
        let exists = engine.host.stat(&dir.file(layout::META)).await?.is_some();
        if !exists && engine.host.stat(dir.dir()).await?.is_some() {
            // `meta.json` comes late in a save: without it the first save was cut short, and a
            // new trace here would number its events and messages over the old ones.
            return Err(Error::InvalidInput(format!(
                "{} exists but has no {}: its first save was interrupted; move the directory aside to start again",
                dir.dir(),
                layout::META
            )));
        }
        let created_at = engine.host.now_ms();
        let ignore_file = Some(layout::ignore_file(&root));
        let mut store = Store { dir, redactor, created_at, saved: Saved::default(), ignore_file };
        if exists {
            notes.extend(engine.restore(&mut store, &id).await?);
        } else {
            engine.state.borrow_mut().trace.id = TraceId(id);
        }
        *engine.store.borrow_mut() = Some(store);
        Ok((engine, notes))
    }

    /// Save to `root/<trace id>/` from now on (a trace recorded in memory first, a replay);
    /// `root` is workspace-relative like the config's `store.root`. Nothing is written until
    /// [`Engine::persist`].
    pub fn attach_store(&self, root: &str) -> Result<()> {
        crate::store::layout::check_root(root)?;
        let redactor = Redactor::new(self.config.store.redact, &self.config.store.redact_patterns)?;
        let dir = TraceDir::new(root, self.trace_id().as_str())?;
        let created_at = self.state.borrow().trace.messages.first().map_or(self.host.now_ms(), |m| m.created_at_ms);
        let ignore_file = Some(layout::ignore_file(root));
        *self.store.borrow_mut() = Some(Store { dir, redactor, created_at, saved: Saved::default(), ignore_file });
        Ok(())
    }

    /// The host back, the engine gone (what it saved stays where the host keeps it).
    pub fn into_host(self) -> H {
        self.host
    }

    /// The same engine over another host (the state, the config and the store move over).
    pub fn rehost<H2: Host>(self, host: H2) -> Engine<H2> {
        Engine { host, config: self.config, counter: self.counter, state: self.state, store: self.store }
    }

    /// Name the trace (before it is saved): a plain name, see [`check_id`].
    pub fn set_trace_id(&self, id: &str) -> Result<()> {
        check_id("trace id", id)?;
        if self.store.borrow().is_some() {
            return Err(Error::InvalidInput("the trace id cannot change once the trace has a store".into()));
        }
        self.state.borrow_mut().trace.id = TraceId(id.to_owned());
        Ok(())
    }

    /// The trace directory, when the engine has a store.
    pub fn trace_dir(&self) -> Option<String> {
        self.store.borrow().as_ref().map(|s| s.dir.dir().to_owned())
    }

    /// The workspace-relative plain-text file of message `id`'s original, when the engine has a
    /// store (which writes it with the message) and `store.name_originals` is on.
    /// `store.originals_base`, when set, is put before it.
    pub fn raw_file(&self, id: &str) -> Option<String> {
        let store = &self.config.store;
        let file = self.store.borrow().as_ref().filter(|_| store.name_originals).map(|s| s.dir.raw(id))?;
        match store.originals_base.trim_end_matches('/') {
            "" => Some(file),
            base => Some(format!("{base}/{file}")),
        }
    }

    /// Write everything recorded since the last save: new messages (each once), the execution
    /// log, new events, new rewrites, the goal trees, a snapshot when the step changed, then the
    /// metadata and `state.json`, last, which is what a resume starts from. A failed write
    /// stops the save with the host's error; what was written stays saved and the next call
    /// goes on from there. Nothing is saved from an estimate: while the encoding's ranks are not
    /// loaded this refuses (`ranks_not_loaded`), and once they are, the messages recorded
    /// before them (left uncounted) are counted exactly first.
    pub async fn persist(&self) -> Result<PersistReport> {
        self.counter.require_exact()?;
        self.count_uncounted();
        self.attribute_pending();
        self.ignore_store_root().await?;
        let writes = {
            let store = self.store.borrow();
            let store = store.as_ref().ok_or_else(|| {
                Error::InvalidInput("this engine has no trace store: open it with Engine::open".into())
            })?;
            self.plan_writes(store)
        };
        let mut report = PersistReport::default();
        for write in writes {
            let Write { path, text, redactions, append, mark } = write;
            let torn = self.store.borrow().as_ref().is_some_and(|s| s.saved.torn.contains(&path));
            if append {
                let text = if torn { format!("{TORN_END}{text}") } else { text };
                if let Err(e) = self.host.append_file(&path, &text).await {
                    // Part of it may be on disk: the next append closes that line first.
                    if let Some(store) = self.store.borrow_mut().as_mut() {
                        store.saved.torn.insert(path);
                    }
                    return Err(e.into());
                }
                report.bytes_written += text.len();
            } else if self.host.writes_whole() {
                self.host.write_file(&path, &text).await?;
                report.bytes_written += text.len();
            } else {
                let temporary = format!("{path}.tmp");
                self.host.write_file(&temporary, &text).await?;
                self.host.rename(&temporary, &path).await?;
                report.bytes_written += text.len();
            }
            report.files_written += 1;
            report.redactions += redactions;
            if let Some(store) = self.store.borrow_mut().as_mut() {
                store.saved.torn.remove(&path);
                store.saved.mark(path, mark);
            }
        }
        Ok(report)
    }
}

impl<H: Host> Engine<H> {
    /// Count the messages recorded while counts were estimates (their count left unset).
    fn count_uncounted(&self) {
        let mut state = self.state.borrow_mut();
        let state = &mut *state;
        let branches = state.branches.values_mut().flat_map(|b| b.messages.iter_mut());
        for message in state.trace.messages.iter_mut().chain(branches) {
            self.counter.cache_message_tokens(message);
        }
    }

    /// Every write of the next save, in commit order (see [`Engine::persist`]).
    fn plan_writes(&self, store: &Store) -> Vec<Write> {
        let state = self.state.borrow();
        let saved = &store.saved;
        let dir = &store.dir;
        let mut plan = Plan { store, writes: Vec::new() };
        let messages = &state.trace.messages;
        for message in &messages[saved.messages.min(messages.len())..] {
            // The plain-text original first: a message counts as saved once its JSON is written.
            plan.replace_text(dir.raw(message.id.as_str()), &original(message));
            plan.replace(dir.message(message.id.as_str()), message, Mark::Message);
        }
        let calls = tool_calls_by_id(messages);
        let entries: Vec<LogEntry> =
            messages[saved.logged.min(messages.len())..].iter().flat_map(|m| log_entries(m, &calls)).collect();
        if !entries.is_empty() {
            plan.append(dir.file(layout::LOG), &entries, Mark::Logged(messages.len()));
        }
        let tree = state.goals.as_ref();
        for (id, context) in &state.branches {
            let Ok(branch_dir) = dir.branch(id) else { continue };
            let done = saved.branch_messages.get(id).copied().unwrap_or(0);
            let calls = tool_calls_by_id(&context.messages);
            for message in &context.messages[done.min(context.messages.len())..] {
                let entries: Vec<LogEntry> = log_entries(message, &calls);
                if !entries.is_empty() {
                    plan.append(dir.file(layout::LOG), &entries, Mark::BranchLogged);
                }
                plan.replace(branch_dir.message(message.id.as_str()), message, Mark::BranchMessage(id.clone()));
            }
            plan.replace_if_changed(branch_dir.file(layout::GOAL), &context.tree);
        }
        // Every branch the main line knows has its meta.json, messages or not yet.
        for branch in tree.iter().flat_map(|t| t.branches()) {
            let Ok(branch_dir) = dir.branch(branch.id.as_str()) else { continue };
            let meta = branch_meta(branch, state.branches.get(branch.id.as_str()));
            plan.replace_if_changed(branch_dir.file(layout::META), &meta);
        }
        if let Some(tree) = tree {
            let fresh = tree.events().since(saved.events);
            if let Some(last) = fresh.last() {
                plan.append(dir.file(layout::EVENTS), fresh, Mark::Events(last.id));
            }
        }
        let rewrites = &state.view.rewrites;
        if rewrites.len() > saved.rewrites {
            plan.append(dir.file(layout::REWRITES), &rewrites[saved.rewrites..], Mark::Rewrites(rewrites.len()));
        }
        if let Some(tree) = tree {
            plan.replace_if_changed(dir.file(layout::GOAL), tree);
        }
        if let Some(prompt) = &state.last_prompt {
            plan.replace_if_changed(dir.file(layout::PROMPT), prompt);
        }
        let current = tree.and_then(|t| t.current_id().cloned());
        if saved.current_goal.as_ref() != Some(&current) {
            let snapshot = AgentSnapshot {
                // The newest message's time, not the clock: the same session saves the same bytes.
                at: messages.last().map_or(store.created_at, |m| m.created_at_ms),
                messages: messages.len() as u64,
                calls: state.calls as u64,
                step: tree.and_then(|t| t.current()).map(|g| g.description.clone()).unwrap_or_default(),
                current_goal: current.clone(),
                last_event_id: tree.map_or(0, |t| t.events().last_id()),
                board: state.view.board.clone(),
            };
            plan.append(dir.file(layout::SNAPSHOTS), &[snapshot], Mark::Snapshot(current));
        }
        let meta = TraceMeta {
            version: STORE_FORMAT_VERSION,
            trace_id: state.trace.id.to_string(),
            mission: state.trace.mission.clone(),
            created_at: store.created_at,
            updated_at: messages.last().map_or(store.created_at, |m| m.created_at_ms),
            message_count: messages.len() as u64,
            status: match state.ended {
                _ if tree.is_some_and(GoalTree::is_completed) => "completed",
                Some(end) => end.status(),
                None => "running",
            }
            .to_owned(),
            branch_count: tree.map_or(0, |t| t.branches().len() as u64),
            event_count: tree.map_or(0, |t| t.events().last_id()),
            calls: state.calls as u64,
            continues: state.trace.metadata.get(CONTINUES_KEY).and_then(Value::as_str).map(str::to_owned),
            branch_of: state.trace.metadata.get(BRANCH_OF_KEY).and_then(|v| serde_json::from_value(v.clone()).ok()),
            fallbacks: state
                .trace
                .metadata
                .get(FALLBACKS_KEY)
                .and_then(|v| serde_json::from_value(v.clone()).ok())
                .unwrap_or_default(),
            person: state.trace.metadata.get(PERSON_KEY).and_then(Value::as_str).map(str::to_owned),
        };
        plan.replace_if_changed(dir.file(layout::META), &meta);
        let mut parts = Parts::new(&saved.parts, &store.redactor);
        let snapshot = EngineSnapshot::of(&state, &mut parts);
        if !parts.new.is_empty() {
            let text: String = parts.new.iter().map(|p| format!("{}\n", p.line)).collect();
            let (redactions, new) = (parts.redactions, parts.new);
            plan.writes.push(Write {
                path: dir.file(layout::PARTS),
                text,
                redactions,
                append: true,
                mark: Mark::Parts(new),
            });
        }
        plan.replace_if_changed(dir.file(layout::STATE), &snapshot);
        // After the parts it names.
        if let Some(prompt) = state.last_prompt.as_ref().filter(|p| p.call > saved.prompt_call) {
            let (messages, tools) = snapshot.prompt_parts();
            let seen = tree.map(plan_at_call);
            let hash = seen.as_ref().map(|plan| hash_of(&plan.to_string()));
            let line = CallPrompt {
                call: prompt.call,
                tokens: prompt.tokens,
                tail_rewrite_tokens: prompt.tail_rewrite_tokens,
                first_changed_byte: prompt.first_changed_byte,
                expected_cached_tokens: prompt.expected_cached_tokens,
                rewrites: prompt.rewrites.clone(),
                notes: prompt.notes.clone(),
                cost: prompt.cost,
                messages: messages.to_vec(),
                tools: tools.to_owned(),
                plan: seen.filter(|_| hash != saved.prompt_plan),
            };
            plan.append(dir.file(layout::PROMPTS), &[line], Mark::PromptCall(prompt.call, hash));
        }
        plan.writes
    }

    /// Say how the session ended (`meta.json`'s status from the next save on), until it records
    /// a message again.
    pub fn end_session(&self, end: SessionEnd) {
        self.state.borrow_mut().ended = Some(end);
    }

    /// Keep the trace root out of git and of the searches that follow `.gitignore` (ripgrep,
    /// and so agents' own Grep): a `.gitignore` of `*` in it, written once when missing.
    async fn ignore_store_root(&self) -> Result<()> {
        let Some(path) = self.store.borrow().as_ref().and_then(|s| s.ignore_file.clone()) else { return Ok(()) };
        layout::keep_out_of_git(&self.host, &path).await?;
        if let Some(store) = self.store.borrow_mut().as_mut() {
            store.ignore_file = None;
        }
        Ok(())
    }

    /// Restore the state from the trace directory (see [`Engine::open`]).
    async fn restore(&self, store: &mut Store, id: &str) -> Result<Vec<String>> {
        let dir = store.dir.clone();
        let meta = read_meta(&self.host, &dir, id).await?;
        store.created_at = meta.created_at;
        let mut notes = Vec::new();
        let (messages, bad) = read_messages(&self.host, &dir).await?;
        if !bad.is_empty() {
            return Err(Error::InvalidInput(format!("{}; move the file aside to resume without it", bad.join("; "))));
        }
        check_sequence(&messages, dir.dir())?;
        let redacted: Vec<&str> = messages
            .iter()
            .filter(|m| serde_json::to_string(&m.content).is_ok_and(|t| t.contains("[REDACTED:")))
            .map(|m| m.id.as_str())
            .collect();
        if let Some(first) = redacted.first() {
            notes.push(format!(
                "{} saved messages hold redacted secrets (the first: {first}): the resumed prompt shows the markers \
                 in their place, so the provider's cache breaks there once",
                redacted.len()
            ));
        }
        let events = read_events(&self.host, &dir.file(layout::EVENTS)).await?;
        notes.extend(events.notes.iter().cloned());
        let mut tree = read_goal_tree(&self.host, &dir).await?.map(|t| t.with_config(self.config.goals.clone()));
        if let Some(tree) = tree.as_mut() {
            *tree.events_mut() = EventLog::from_jsonl(&jsonl::lines(&events.records))?;
            let missing = tree.reserve_logged_ids();
            if !missing.is_empty() {
                let ids: Vec<&str> = missing.iter().map(GoalId::as_str).collect();
                notes.push(format!(
                    "{} is older than {}: goals {} were added after it and are in the event log only",
                    dir.file(layout::GOAL),
                    dir.file(layout::EVENTS),
                    ids.join(", ")
                ));
            }
        }
        let mut branches = BTreeMap::new();
        for branch in tree.iter().flat_map(|t| t.branches()) {
            let branch_dir = dir.branch(branch.id.as_str())?;
            let Some(branch_tree) = read_goal_tree(&self.host, &branch_dir).await? else { continue };
            let (messages, bad) = read_messages(&self.host, &branch_dir).await?;
            if !bad.is_empty() {
                return Err(Error::InvalidInput(bad.join("; ")));
            }
            store.saved.branch_messages.insert(branch.id.to_string(), messages.len());
            let tree = branch_tree.with_config(self.config.goals.clone());
            branches.insert(branch.id.to_string(), BranchContext { tree, messages });
        }
        let snapshots = read_lines::<_, AgentSnapshot>(&self.host, &dir.file(layout::SNAPSHOTS)).await?;
        let rewrites = read_lines::<_, Value>(&self.host, &dir.file(layout::REWRITES)).await?;
        let log = read_lines::<_, LogEntry>(&self.host, &dir.file(layout::LOG)).await?;
        let parts = read_lines::<_, Part>(&self.host, &dir.file(layout::PARTS)).await?;
        let prompts = read_lines::<_, Value>(&self.host, &dir.file(layout::PROMPTS)).await?;
        for (file, lines_torn, lines_notes) in [
            (layout::SNAPSHOTS, snapshots.torn, &snapshots.notes),
            (layout::REWRITES, rewrites.torn, &rewrites.notes),
            (layout::LOG, log.torn, &log.notes),
            (layout::PARTS, parts.torn, &parts.notes),
            (layout::PROMPTS, prompts.torn, &prompts.notes),
            (layout::EVENTS, events.torn, &events.notes),
        ] {
            if lines_torn {
                store.saved.torn.insert(dir.file(file));
            }
            if file != layout::EVENTS {
                notes.extend(lines_notes.iter().cloned());
            }
        }
        let snapshot = match read_optional(&self.host, &dir.file(layout::STATE)).await? {
            Some(text) => parse_json::<EngineSnapshot>(&dir.file(layout::STATE), &text).map_err(|e| e.to_string()),
            None => Err(format!("{} is missing", dir.file(layout::STATE))),
        };
        let last_logged = log.records.iter().rev().find(|e| e.branch_id.is_none()).map(|e| e.message_id.clone());
        let saved = &mut store.saved;
        saved.messages = messages.len();
        saved.logged = last_logged.and_then(|id| messages.iter().position(|m| m.id == id)).map_or(0, |k| k + 1);
        saved.events = events.records.last().map_or(0, |e| e.id);
        saved.current_goal = snapshots.records.last().map(|s| s.current_goal.clone());
        saved.parts.ids = parts.records.iter().map(|p| p.id.clone()).collect();
        let parts: BTreeMap<String, Value> = parts.records.into_iter().map(|p| (p.id, p.value)).collect();
        let mut state = self.state.borrow_mut();
        state.trace.id = TraceId(meta.trace_id.clone());
        state.trace.mission = meta.mission.clone();
        state.trace.messages = messages;
        state.goals = tree;
        state.branches = branches;
        if let Ok(snapshot) = &snapshot
            && snapshot.version > STORE_FORMAT_VERSION
        {
            return Err(Error::UnsupportedVersion { found: snapshot.version, supported: STORE_FORMAT_VERSION });
        }
        let covered = snapshot.as_ref().map_or(0, |s| s.messages);
        if covered > state.trace.messages.len() {
            return Err(Error::InvalidInput(format!(
                "{} covers {covered} messages but {} holds {}: message files were removed, so resuming would lose them",
                dir.file(layout::STATE),
                dir.file(layout::MESSAGES),
                state.trace.messages.len()
            )));
        }
        match snapshot.and_then(|s| s.restore(&mut state, &parts)) {
            Ok(()) => {
                if covered < state.trace.messages.len() {
                    notes.push(format!(
                        "{} messages were saved after the last complete save; the prompt view does not cover them yet",
                        state.trace.messages.len() - covered
                    ));
                }
            }
            Err(why) => {
                let last = snapshots.records.last();
                if let Some(last) = last {
                    state.view.board = last.board.clone();
                    state.calls = last.calls as usize;
                }
                state.delivered_events = state.goals.as_ref().map_or(0, |t| t.events().last_id());
                notes.push(format!(
                    "{why}: the prompt view restarts from the raw trace{}, so the next prompt differs from the one before",
                    if last.is_some() { " and the latest snapshot's board" } else { "" }
                ));
            }
        }
        // Rewrites the restored view does not hold (made after its state was saved) stay in the
        // file as they were; every rewrite from here on is appended.
        store.saved.rewrites = state.view.rewrites.len();
        Ok(notes)
    }
}

/// The writes of one save, redacted.
struct Plan<'s> {
    store: &'s Store,
    writes: Vec<Write>,
}

impl Plan<'_> {
    /// A file replaced whole (written under a temporary name, then renamed).
    fn replace(&mut self, path: String, record: &impl Serialize, mark: Mark) {
        let (text, redactions) = self.redacted(record, true);
        self.writes.push(Write { path, text, redactions, append: false, mark });
    }

    /// A plain-text file replaced whole, redacted.
    fn replace_text(&mut self, path: String, text: &str) {
        let (text, redactions) = self.store.redactor.redact_text(text);
        self.writes.push(Write { path, text, redactions, append: false, mark: Mark::Nothing });
    }

    /// Replace only when the text differs from what was last written there.
    fn replace_if_changed(&mut self, path: String, record: &impl Serialize) {
        let (text, redactions) = self.redacted(record, true);
        let hash = hash_of(&text);
        if self.store.saved.replaced.get(&path) != Some(&hash) {
            self.writes.push(Write { path, text, redactions, append: false, mark: Mark::Replaced(hash) });
        }
    }

    /// Records appended as JSON lines.
    fn append<T: Serialize>(&mut self, path: String, records: &[T], mark: Mark) {
        let mut text = String::new();
        let mut redactions = 0;
        for record in records {
            let (line, n) = self.redacted(record, false);
            text.push_str(&line);
            text.push('\n');
            redactions += n;
        }
        self.writes.push(Write { path, text, redactions, append: true, mark });
    }

    fn redacted(&self, record: &impl Serialize, pretty: bool) -> (String, usize) {
        // The records hold strings, numbers and finite floats: they always serialize.
        let mut value = serde_json::to_value(record).unwrap_or(Value::Null);
        let n = self.store.redactor.redact_value(&mut value);
        let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) };
        (text.unwrap_or_default(), n)
    }
}

impl Saved {
    fn mark(&mut self, path: String, mark: Mark) {
        match mark {
            Mark::Nothing => {}
            Mark::Message => self.messages += 1,
            Mark::BranchMessage(id) => *self.branch_messages.entry(id).or_default() += 1,
            Mark::Logged(n) => self.logged = n,
            Mark::BranchLogged => {}
            Mark::Events(id) => self.events = id,
            Mark::Rewrites(n) => self.rewrites = n,
            Mark::PromptCall(call, plan) => (self.prompt_call, self.prompt_plan) = (call, plan),
            Mark::Replaced(hash) => {
                self.replaced.insert(path, hash);
            }
            Mark::Snapshot(current) => self.current_goal = Some(current),
            Mark::Parts(parts) => self.parts.keep(parts),
        }
    }
}

/// The log entries of a message's tool results.
fn log_entries(message: &Message, calls: &BTreeMap<&str, &crate::model::ToolCall>) -> Vec<LogEntry> {
    message
        .tool_results()
        .map(|r| LogEntry {
            message_id: message.id.clone(),
            branch_id: message.branch_id.as_ref().map(ToString::to_string),
            call_id: r.call_id.to_string(),
            tool: r.name.clone(),
            arguments: calls.get(r.call_id.as_str()).map(|c| c.arguments.clone()).unwrap_or_default(),
            status: r.status,
            exit_code: r.exit_code,
            output: r.output.clone(),
            stderr: r.stderr.clone(),
            at: message.created_at_ms,
        })
        .collect()
}

fn branch_meta(branch: &Branch, context: Option<&BranchContext>) -> BranchMeta {
    BranchMeta {
        branch: branch.clone(),
        cumulative_stats: context.map(|c| c.tree.totals()).unwrap_or_default(),
        goal_count: context.map_or(0, |c| c.tree.goals().len() as u64),
        message_count: context.map_or(0, |c| c.messages.len() as u64),
    }
}

/// Messages must be numbered 0, 1, 2, … with no gap: a gap means a file went missing.
fn check_sequence(messages: &[Message], dir: &str) -> Result<()> {
    match messages.iter().enumerate().find(|(k, m)| m.sequence != *k as u64) {
        None => Ok(()),
        Some((k, m)) => Err(Error::InvalidInput(format!(
            "{dir}/messages: message {k} is missing (the next file holds sequence {}); the trace cannot be resumed exactly",
            m.sequence
        ))),
    }
}

/// A note suggesting to ignore the trace root, when `.gitignore` exists and does not.
/// The plan a call saw: the goal tree as the API shows it, its goals' stats left out (they
/// change with every message; the plan does not).
fn plan_at_call(tree: &GoalTree) -> Value {
    let mut view = GoalTreeView::from(tree);
    for goal in &mut view.goals {
        goal.self_stats = GoalStats::default();
        goal.cumulative_stats = GoalStats::default();
    }
    serde_json::to_value(view).unwrap_or_default()
}

fn hash_of(text: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(text.as_bytes())
}
