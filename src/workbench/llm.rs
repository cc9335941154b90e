//! The LLM compactor of R5.8: the STATE_UPDATE and TAIL_COMPACTION requests, the parse of their
//! JSON replies (lenient where models vary, strict on wrong types, errors naming the JSON path),
//! and the sanitising that makes a reply safe to put into the prompt: neutralised, its evidence
//! checked by code (R5.6), fitted to its budget.

use std::ops::Range;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::block::{CompressedTurns, Learned, Replaces, fit_delta, neutralise_all};
use super::board::{Anchor, StateBoard, StateDelta};
use super::evidence::{Observations, Rejection};
use crate::compress::{CompressConfig, ToolOutput, compress_tool_output};
use crate::config::{Config, WorkbenchConfig};
use crate::host::{ChatMessage, CompletionRequest};
use crate::model::{ContentPart, Message, ToolStatus, tool_calls_by_id};
use crate::prompt::template::{body, render};
use crate::tokens::TokenCounter;

const STATE_UPDATE: &str = include_str!("../../prompts/state_update.md");
const TAIL_COMPACTION: &str = include_str!("../../prompts/tail_compaction.md");
const JSON_RETRY: &str = include_str!("../../prompts/json_retry.md");

/// Room for the JSON's own syntax on top of the budgets asked for: a reply may use the
/// delta's budget plus this (400 tokens by default), and a tail compaction the block's budget
/// too (1,200 by default).
const REPLY_OVERHEAD: u32 = 150;
/// Message text and call arguments longer than this are cut in a transcript.
const TEXT_CHARS: usize = 8_000;
const ARGUMENT_CHARS: usize = 4_000;
/// `{` positions tried when looking for the JSON object in a reply.
const MAX_ATTEMPTS: usize = 64;

/// `messages[range]` as the compactor reads them: each message labelled `#N [role]` (N its
/// absolute index, the N of evidence pointers), tool calls as `name(arguments)`, tool outputs
/// in their compressed history form, reasoning left out.
pub fn transcript(
    messages: &[Message],
    range: Range<usize>,
    config: &CompressConfig,
    counter: &TokenCounter,
) -> String {
    let end = range.end.min(messages.len());
    let start = range.start.min(end);
    let calls = tool_calls_by_id(messages);
    let mut out = String::new();
    for (n, message) in messages.iter().enumerate().take(end).skip(start) {
        out.push_str(&format!("#{n} [{}]\n", message.role.as_str()));
        for part in &message.content {
            match part {
                ContentPart::Text { text } if !text.trim().is_empty() => out.push_str(&cut(text.trim(), TEXT_CHARS)),
                ContentPart::Text { .. } | ContentPart::Reasoning { .. } | ContentPart::Opaque(_) => continue,
                ContentPart::ToolCall(call) => {
                    out.push_str(&format!("{}({})", call.name, cut(&call.arguments, ARGUMENT_CHARS)));
                }
                ContentPart::ToolResult(result) => {
                    let call = calls.get(result.call_id.as_str()).copied();
                    let input = ToolOutput::of(result, call, message.id.as_str());
                    let outcome = match (result.exit_code, result.status) {
                        (Some(code), _) => format!("exit={code}"),
                        (None, ToolStatus::Ok) => "ok".to_owned(),
                        (None, ToolStatus::Error) => "error".to_owned(),
                    };
                    let text = compress_tool_output(&input, config, counter).text;
                    out.push_str(&format!("result of {} ({outcome}):\n{}", result.name, text.trim_end()));
                }
            }
            out.push('\n');
        }
        out.push('\n');
    }
    out.truncate(out.trim_end().len());
    out
}

/// The TAIL_COMPACTION request (seed 000 §7.2) for the turns `replaces` names.
pub fn tail_compaction_request(
    board: &StateBoard,
    transcript: &str,
    replaces: &Replaces,
    config: &Config,
) -> CompletionRequest {
    let w = &config.workbench;
    let prompt = render(
        body(TAIL_COMPACTION),
        &[
            ("board", &board_text(board)),
            ("transcript", transcript),
            ("start_turn", &replaces.start_turn.to_string()),
            ("end_turn", &replaces.end_turn.to_string()),
            ("block_tokens", &w.block_tokens.to_string()),
            ("delta_tokens", &w.delta_tokens.to_string()),
        ],
    );
    let output = w.block_tokens.saturating_add(w.delta_tokens).saturating_add(REPLY_OVERHEAD);
    request(prompt, output, "tail_compaction", config)
}

/// The STATE_UPDATE request (seed 000 §7.1).
pub fn state_update_request(board: &StateBoard, transcript: &str, config: &Config) -> CompletionRequest {
    let values = [
        ("board", board_text(board)),
        ("transcript", transcript.to_owned()),
        ("delta_tokens", config.workbench.delta_tokens.to_string()),
    ];
    let values: Vec<(&str, &str)> = values.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let output = config.workbench.delta_tokens.saturating_add(REPLY_OVERHEAD);
    request(render(body(STATE_UPDATE), &values), output, "state_update", config)
}

/// `first` again, followed by its bad `reply` and a request for the JSON only, naming `error`.
pub fn retry_request(first: &CompletionRequest, reply: &str, error: &str) -> CompletionRequest {
    let mut retry = first.clone();
    retry.messages.push(ChatMessage { role: "assistant".into(), content: reply.to_owned() });
    retry.messages.push(ChatMessage { role: "user".into(), content: render(body(JSON_RETRY), &[("error", error)]) });
    retry
}

fn request(prompt: String, max_output_tokens: u32, purpose: &str, config: &Config) -> CompletionRequest {
    CompletionRequest {
        messages: vec![ChatMessage { role: "user".into(), content: prompt }],
        max_output_tokens: Some(max_output_tokens),
        timeout_ms: Some(config.summary_timeout_ms),
        purpose: purpose.into(),
    }
}

/// The board as the compactor reads it: its JSON, or a note that there is none yet.
fn board_text(board: &StateBoard) -> String {
    if *board == StateBoard::default() {
        return "(empty: no state yet)".to_owned();
    }
    serde_json::to_string_pretty(board).unwrap_or_default()
}

/// The block the reply writes, as parsed: every field optional, `replaces` and `version` ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct BlockReply {
    goal: String,
    what_we_learned: Vec<Learned>,
    anchors: Vec<Anchor>,
    exec_assertions: Vec<String>,
    open_questions: Vec<String>,
    next_actions: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TailReply {
    compressed_turns: BlockReply,
    #[serde(default)]
    state_delta: StateDelta,
}

/// Parse a TAIL_COMPACTION reply. The block gets `replaces` (the engine's, not the reply's) and
/// version 0, as does the delta: the engine assigns versions.
pub fn parse_tail_compaction(reply: &str, replaces: Replaces) -> Result<(CompressedTurns, StateDelta), String> {
    let Value::Object(mut top) = find_json(reply)? else { return Err("the reply's JSON is not an object".into()) };
    // A block written without its wrapper.
    if !top.contains_key("compressed_turns") && ["goal", "what_we_learned"].iter().any(|k| top.contains_key(*k)) {
        top = Map::from_iter([("compressed_turns".to_owned(), Value::Object(top))]);
    }
    if let Some(block) = top.get_mut("compressed_turns") {
        normalise_block(block);
    }
    if let Some(Value::Null) = top.get("state_delta") {
        top.remove("state_delta");
    }
    if let Some(delta) = top.get_mut("state_delta") {
        normalise_delta(delta);
    }
    let parsed: TailReply = serde_path_to_error::deserialize(Value::Object(top)).map_err(path_error)?;
    let b = parsed.compressed_turns;
    let block = CompressedTurns {
        version: 0,
        replaces,
        goal: b.goal,
        what_we_learned: b.what_we_learned,
        anchors: b.anchors,
        exec_assertions: b.exec_assertions,
        open_questions: b.open_questions,
        next_actions: b.next_actions,
        files: Vec::new(),
        names: Vec::new(),
        originals: None,
    };
    let mut delta = parsed.state_delta;
    delta.version = 0;
    Ok((block, delta))
}

/// Parse a STATE_UPDATE reply (also accepted wrapped as `{"state_delta": {…}}`); version 0.
pub fn parse_state_delta(reply: &str) -> Result<StateDelta, String> {
    let mut value = find_json(reply)?;
    if let Value::Object(map) = &mut value
        && map.len() == 1
        && let Some(inner) = map.remove("state_delta")
    {
        value = inner;
    }
    if !value.is_object() {
        return Err("the reply's JSON is not an object".into());
    }
    normalise_delta(&mut value);
    let mut delta: StateDelta = serde_path_to_error::deserialize(value).map_err(path_error)?;
    delta.version = 0;
    Ok(delta)
}

fn path_error(e: serde_path_to_error::Error<serde_json::Error>) -> String {
    let path = e.path().to_string();
    let inner = e.into_inner().to_string();
    if path == "." { inner } else { format!("at {path}: {inner}") }
}

/// The JSON object of a reply: the whole reply, a fenced block, or the outermost `{…}` that
/// parses, prose around it ignored.
fn find_json(reply: &str) -> Result<Value, String> {
    let text = reply.trim();
    if text.is_empty() {
        return Err("the reply is empty".into());
    }
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        return Ok(value);
    }
    let fenced = text.split("```").skip(1).step_by(2).map(|block| {
        let block = block.strip_prefix("json").or_else(|| block.strip_prefix("JSON")).unwrap_or(block);
        serde_json::from_str::<Value>(block.trim())
    });
    if let Some(value) = fenced.filter_map(Result::ok).find(Value::is_object) {
        return Ok(value);
    }
    // Every `{…}` that parses and is not inside another; the longest wins (prose may hold `{}`).
    let (mut best, mut first_error, mut covered_to, mut attempts) = (None::<(usize, Value)>, None, 0, 0);
    for (i, _) in text.match_indices('{') {
        if i < covered_to {
            continue;
        }
        attempts += 1;
        if attempts > MAX_ATTEMPTS {
            break;
        }
        let mut stream = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value)) => {
                let length = stream.byte_offset();
                covered_to = i + length;
                if best.as_ref().is_none_or(|(l, _)| length > *l) {
                    best = Some((length, value));
                }
            }
            Some(Err(e)) if first_error.is_none() => first_error = Some(e.to_string()),
            _ => {}
        }
    }
    match (best, first_error) {
        (Some((_, value)), _) => Ok(value),
        (None, Some(e)) => Err(format!("the reply's JSON object does not parse: {e}")),
        (None, None) => Err("the reply holds no JSON object".into()),
    }
}

/// Model variations of a block made regular: a string for a list, a string or an object per
/// conclusion, evidence as one string, nulls for empty.
fn normalise_block(block: &mut Value) {
    let Value::Object(map) = block else { return };
    map.remove("replaces");
    map.remove("version");
    drop_nulls(map);
    for key in ["exec_assertions", "open_questions", "next_actions"] {
        string_list(map, key);
    }
    if let Some(learned) = map.get_mut("what_we_learned") {
        listify(learned, |v| v.is_string() || v.is_object());
        for item in learned.as_array_mut().into_iter().flatten() {
            if let Value::String(s) = item {
                *item = serde_json::json!({"conclusion": s, "evidence": []});
            }
            evidence_list(item);
        }
    }
    if let Some(anchors) = map.get_mut("anchors") {
        listify(anchors, Value::is_object);
    }
}

fn normalise_delta(delta: &mut Value) {
    let Value::Object(map) = delta else { return };
    map.remove("version");
    drop_nulls(map);
    for key in ["unknown", "exec_assertions", "open_questions", "next_actions"] {
        string_list(map, key);
    }
    if let Some(facts) = map.get_mut("confirmed_facts") {
        listify(facts, |v| v.is_string() || v.is_object());
        for item in facts.as_array_mut().into_iter().flatten() {
            if let Value::String(s) = item {
                *item = serde_json::json!({"text": s, "evidence": []});
            }
            evidence_list(item);
        }
    }
    if let Some(anchors) = map.get_mut("anchors") {
        listify(anchors, Value::is_object);
    }
}

/// Missing and null are the same: the field's default.
fn drop_nulls(map: &mut Map<String, Value>) {
    map.retain(|_, v| !v.is_null());
}

/// A single item where a list is expected becomes a one-item list (when `item` says it is one).
fn listify(value: &mut Value, item: impl Fn(&Value) -> bool) {
    if item(value) {
        *value = Value::Array(vec![value.take()]);
    }
}

fn string_list(map: &mut Map<String, Value>, key: &str) {
    if let Some(value) = map.get_mut(key) {
        listify(value, Value::is_string);
        if let Value::Array(items) = value {
            items.retain(|v| v.as_str().is_none_or(|s| !s.trim().is_empty()));
        }
    }
}

fn evidence_list(item: &mut Value) {
    if let Some(map) = item.as_object_mut() {
        drop_nulls(map);
        if let Some(evidence) = map.get_mut("evidence") {
            listify(evidence, Value::is_string);
        }
    }
}

/// Make a parsed reply safe for the prompt and return what was done: every text neutralised,
/// evidence checked (R5.6: failing anchors dropped, facts without evidence marked unknown),
/// the block fitted to `block_tokens + anchor_tokens` and the delta to `delta_tokens`.
pub fn sanitise(
    block: &mut CompressedTurns,
    delta: &mut StateDelta,
    observations: &Observations,
    config: &WorkbenchConfig,
    counter: &TokenCounter,
) -> Vec<String> {
    let mut notes = Vec::new();
    // Evidence first, on the text as written: a snippet must match what was observed.
    let mut rejections = observations.check_block(block);
    rejections.extend(observations.check_delta(delta));
    let defanged = neutralise_all(block, delta);
    if defanged > 0 {
        let fields = if defanged == 1 { "field" } else { "fields" };
        notes.push(format!("reply tried to close the block or pose as the system: neutralised ({defanged} {fields})"));
    }
    for (prefix, what) in [
        ("anchor ", "anchors rejected"),
        ("fact ", "facts marked unknown"),
        ("evidence ", "evidence pointers rejected"),
    ] {
        let matching: Vec<&Rejection> = rejections.iter().filter(|r| r.item.starts_with(prefix)).collect();
        if !matching.is_empty() {
            notes.push(format!("{} {what}: {}", matching.len(), reasons(&matching)));
        }
    }
    let budget = config.block_tokens.saturating_add(config.anchor_tokens) as usize;
    let dropped = block.fit(budget, counter);
    if dropped > 0 {
        notes.push(format!("block over its {budget} tokens: {dropped} items dropped"));
    }
    let dropped = fit_delta(delta, config.delta_tokens as usize, counter);
    if dropped > 0 {
        notes.push(format!("state delta over its {} tokens: {dropped} items dropped", config.delta_tokens));
    }
    notes
}

/// At most 5 `item: reason`s, then how many more.
fn reasons(rejections: &[&Rejection]) -> String {
    let mut shown: Vec<String> = rejections.iter().take(5).map(|r| format!("{}: {}", r.item, r.reason)).collect();
    if rejections.len() > 5 {
        shown.push(format!("(+{} more)", rejections.len() - 5));
    }
    shown.join("; ")
}

/// `text` cut to at most `max` bytes on a char boundary, saying how much was cut.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let end = text.floor_char_boundary(max);
    format!("{}… [{} more characters]", &text[..end], text[end..].chars().count())
}

#[cfg(test)]
mod tests;
