//! The TypeScript declarations of the engine's data, kept true to the Rust types: generates
//! `src/wasm/types_data.ts` from them with ts-rs (a test fails when the checked-in file is not
//! what they generate now; `UPDATE_TS_TYPES=1 cargo test --lib ts_types` rewrites it), and
//! checks the hand-written declarations of `src/wasm/types.rs` against the Rust side.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use ts_rs::{Config, TS, TypeVisitor};

/// Where the generated declarations are, relative to the crate root.
const GENERATED: &str = "src/wasm/types_data.ts";

/// The hand-written declarations (`src/wasm/types.rs`), as text.
const HAND_WRITTEN: &str = include_str!("wasm/types.rs");

/// The declarations of these types and of every type they refer to, by name, sorted by name.
fn generate() -> String {
    let cfg = Config::new().with_large_int("number");
    let mut out = Declarations { cfg: &cfg, decls: BTreeMap::new() };
    macro_rules! roots { ($($t:ty),* $(,)?) => { $(out.visit::<$t>();)* } }
    use crate::{engine, goals, history, host, prompt, replay, store};
    roots!(
        crate::Config,
        crate::tokens::TokenCount,
        crate::model::Trace,
        history::repair::RepairNote,
        history::view::HistoryView,
        prompt::CallInput,
        crate::workbench::StateDelta,
        prompt::Assembly,
        crate::compress::Compressed,
        engine::StateUpdate,
        engine::PersistReport,
        goals::GoalTree,
        goals::Step,
        goals::Event,
        engine::GoalToolResult,
        engine::RecallResult,
        replay::TrajectoryInfo,
        replay::CallStep,
        replay::ReplaySummary,
        store::TraceList,
        store::TraceDetail,
        store::BranchMeta,
        store::GoalMessages,
        store::BranchDetail,
        store::EventsPage,
        host::CompletionRequest,
        host::Completion,
        host::FileContent,
        host::FileStat,
        host::DirEntry,
        host::Progress,
        crate::js_forms::MessageInput,
        crate::js_forms::ToolOutputInput,
        crate::js_forms::PromptFormat,
        crate::js_forms::GoalPlan,
        crate::proxy::stats::Rated<'static>,
        crate::proxy::record::CallDollars,
        crate::proxy::Event,
        crate::proxy::Effect,
        crate::proxy::telemetry::CallSpan,
    );
    let mut text = String::from(
        "// Generated from the Rust types by src/ts_types.rs (ts-rs): do not edit.\n\
         // Regenerate with `UPDATE_TS_TYPES=1 cargo test --lib ts_types`.\n",
    );
    for decl in out.decls.values() {
        text.push('\n');
        text.push_str(decl);
        text.push('\n');
    }
    text
}

/// Collects the declaration of each type it visits and of every type that one refers to.
struct Declarations<'c> {
    cfg: &'c Config,
    decls: BTreeMap<String, String>,
}

impl TypeVisitor for Declarations<'_> {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        if T::output_path().is_none() {
            return; // a primitive, a collection: written inline
        }
        let name = T::ident(self.cfg);
        if self.decls.contains_key(&name) {
            return;
        }
        // ts-rs writes a declaration on one line but for its members' doc comments. Where it
        // takes more, `{` ends the first line and `}` starts the last, as wasm-bindgen's
        // re-indentation of the `.d.ts` expects, and the members are indented.
        let mut decl = T::decl(self.cfg);
        if decl.contains('\n') {
            decl = decl.replacen("= { ", "= {\n", 1);
            let body = decl.strip_suffix(" };").expect("a multi-line declaration is an object type");
            let lines: Vec<String> = body
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(|l| if l.starts_with('*') { format!(" {l}") } else { l.to_owned() })
                .collect();
            decl = format!("{}\n  {}\n}};", lines[0], lines[1..].join("\n  "));
        }
        let decl = format!("{}export {decl}", T::docs().unwrap_or_default());
        self.decls.insert(name, decl);
        T::visit_dependencies(self);
    }
}

#[test]
fn generated_declarations_are_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(GENERATED);
    let generated = generate();
    if std::env::var_os("UPDATE_TS_TYPES").is_some() {
        std::fs::write(&path, &generated).expect("write the declarations");
        return;
    }
    // wasm-bindgen re-indents the `.d.ts` by lines that end with `{` and lines that start with
    // `}`: every declaration must leave that depth where it found it.
    let mut depth = 0usize;
    for line in generated.lines().map(str::trim).filter(|l| !l.starts_with('*')) {
        depth = depth.saturating_sub(usize::from(line.starts_with('}')));
        assert!(depth == 0 || !line.starts_with("export "), "unbalanced before: {line}");
        depth += usize::from(line.ends_with('{'));
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current != generated {
        let first = current.lines().zip(generated.lines()).position(|(a, b)| a != b);
        let line = first.unwrap_or(current.lines().count().min(generated.lines().count()));
        panic!(
            "{GENERATED} is not what the Rust types generate (first difference at line {}):\n  checked in: {}\n  generated:  {}\n\
             Regenerate it with `UPDATE_TS_TYPES=1 cargo test --lib ts_types` and commit it.",
            line + 1,
            current.lines().nth(line).unwrap_or("(end of file)"),
            generated.lines().nth(line).unwrap_or("(end of file)"),
        );
    }
}

/// The members of the object type `literal` (`{ a: T; b?: U }`, methods too): name →
/// (optional, type).
fn members(literal: &str) -> BTreeMap<String, (bool, String)> {
    let body = literal.trim();
    let body = body
        .strip_prefix('{')
        .and_then(|b| b.strip_suffix('}'))
        .unwrap_or_else(|| panic!("not an object type: {body}"));
    let mut out = BTreeMap::new();
    let mut rest = body;
    loop {
        rest = skip_space_and_comments(rest);
        let Some(end) = rest.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$')) else { break };
        if end == 0 {
            break;
        }
        let key = &rest[..end];
        rest = &rest[end..];
        let optional = rest.starts_with('?');
        rest = rest.trim_start_matches('?');
        // A member `key: type` or a method `key(…): type`: the type runs to the `;` (or the
        // end) outside brackets.
        let mut depth = 0i32;
        let mut stop = rest.len();
        for (i, c) in rest.char_indices() {
            match c {
                '{' | '(' | '[' | '<' => depth += 1,
                '}' | ')' | ']' | '>' => depth -= 1,
                ';' | '\n' if depth == 0 => {
                    stop = i;
                    break;
                }
                _ => {}
            }
        }
        let ty = rest[..stop].trim().trim_start_matches(':').trim().to_owned();
        out.insert(key.to_owned(), (optional, ty));
        rest = rest.get(stop + 1..).unwrap_or("");
    }
    out
}

fn skip_space_and_comments(mut text: &str) -> &str {
    loop {
        text = text.trim_start();
        if let Some(after) = text.strip_prefix("/*") {
            text = &after[after.find("*/").expect("a closed comment") + 2..];
        } else if let Some(after) = text.strip_prefix("//") {
            text = after.find('\n').map_or("", |i| &after[i..]);
        } else {
            return text;
        }
    }
}

/// The members of `name` as src/wasm/types.rs declares it (`interface name {…}` or
/// `type name = {…}`).
fn declared(name: &str) -> BTreeMap<String, (bool, String)> {
    let start = [format!("export interface {name} {{"), format!("export type {name} = {{")]
        .iter()
        .find_map(|head| HAND_WRITTEN.find(head.as_str()).map(|i| i + head.len() - 1))
        .unwrap_or_else(|| panic!("no declaration of {name} in src/wasm/types.rs"));
    let mut depth = 0;
    for (i, c) in HAND_WRITTEN[start..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if depth == 0 {
            return members(&HAND_WRITTEN[start..=start + i]);
        }
    }
    panic!("{name}'s declaration is not closed")
}

/// The fields `value` serializes to, each with whether it can be left out.
fn serialized_keys<T: Serialize>(full: &T, bare: &T) -> BTreeMap<String, bool> {
    let keys = |v: &T| match serde_json::to_value(v).expect("serializes") {
        serde_json::Value::Object(map) => map.keys().cloned().collect::<Vec<_>>(),
        other => panic!("not an object: {other}"),
    };
    let present = keys(bare);
    keys(full).into_iter().map(|k| (k.clone(), !present.contains(&k))).collect()
}

fn assert_same_fields(name: &str, declared: &BTreeMap<String, (bool, String)>, rust: &BTreeMap<String, bool>) {
    let declared: BTreeMap<String, bool> = declared.iter().map(|(k, (optional, _))| (k.clone(), *optional)).collect();
    assert_eq!(&declared, rust, "{name} in src/wasm/types.rs (field → optional) differs from its Rust type");
}

#[test]
fn the_proxy_call_record_declaration_matches_its_rust_type() {
    use crate::proxy::record::CallRecord;
    use crate::proxy::reply::ProviderUsage;
    let usage = ProviderUsage {
        input_tokens: 1,
        cache_read_tokens: 2,
        cache_write_tokens: 3,
        cache_write_1h_tokens: 1,
        output_tokens: 4,
    };
    let full = CallRecord {
        first_changed_byte: Some(1),
        cost: Some(crate::workbench::cost::CallCost::default()),
        dollars: Some(crate::proxy::record::CallDollars { note: Some("estimated".into()), ..Default::default() }),
        status: Some(200),
        usage: Some(usage),
        side_call: true,
        ..CallRecord::default()
    };
    let record = declared("ProxyCallRecord");
    assert_same_fields("ProxyCallRecord", &record, &serialized_keys(&full, &CallRecord::default()));
    assert_same_fields(
        "ProxyCallRecord.usage",
        &members(&record["usage"].1),
        &serialized_keys(&usage, &ProviderUsage { cache_write_1h_tokens: 0, ..usage }),
    );
}

#[test]
fn the_config_declaration_is_the_generated_one_made_optional() {
    // `Config` is a mapped type over the generated `ResolvedConfig`: nothing to drift but its
    // shape, which must stay "every field, and every section's field, optional".
    let config = HAND_WRITTEN.split("export type Config = ").nth(1).expect("Config is declared");
    let config = &config[..config.find("};").expect("closed") + 2];
    assert!(config.contains("[K in keyof ResolvedConfig]?:"), "{config}");
    assert!(config.contains("Partial<ResolvedConfig[K]>"), "{config}");
    assert!(generate().contains("export type ResolvedConfig = "));
}

#[test]
fn the_host_interface_declares_the_methods_the_rust_side_calls() {
    // `JsHost` (src/wasm/host.rs) checks a host for its required methods by name and looks the
    // optional ones up when it has something to tell.
    let host_rs = include_str!("wasm/host.rs");
    let required = host_rs
        .split("REQUIRED_METHODS")
        .nth(1)
        .and_then(|s| s.split_once('='))
        .and_then(|(_, s)| s.split_once('['))
        .map(|(_, s)| s);
    let required: Vec<&str> = required
        .and_then(|s| s.split(']').next())
        .expect("the required methods")
        .split(',')
        .map(|m| m.trim().trim_matches('"'))
        .collect();
    let optional: Vec<&str> = host_rs
        .split("self.method(\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .filter(|m| !required.contains(m))
        .collect();
    let mut rust: BTreeMap<String, bool> = required.iter().map(|m| (m.to_string(), false)).collect();
    rust.extend(optional.iter().map(|m| (m.to_string(), true)));
    let declared: BTreeMap<String, bool> =
        declared("Host").into_iter().map(|(k, (optional, _))| (k, optional)).collect();
    assert_eq!(
        declared, rust,
        "Host in src/wasm/types.rs (method → optional) differs from what src/wasm/host.rs calls"
    );
}

#[test]
fn the_prepared_call_declaration_has_the_rust_types_fields_in_each_format() {
    use crate::js_forms::{PreparedCall, PromptFormat};
    use crate::model::{ContentPart, Role};
    use crate::prompt::{Layer, PromptMessage, PromptView, ToolSpec};
    let message = |role, layer| PromptMessage {
        role,
        content: vec![ContentPart::Text { text: "x".into() }],
        layer,
        source: None,
        replaces: None,
    };
    let tool =
        ToolSpec { name: "t".into(), description: "d".into(), parameters: serde_json::json!({"type": "object"}) };
    // A system prompt, a message and a tool: every part of a request is there.
    let view = PromptView {
        messages: vec![message(Role::System, Layer::System), message(Role::User, Layer::Input)],
        tools: vec![tool],
    };
    let assembly = crate::prompt::Assembly {
        call: 0,
        view,
        tokens: 0,
        tail_rewrite_tokens: 0,
        first_changed_byte: None,
        expected_cached_tokens: 0,
        rewrites: Vec::new(),
        notes: Vec::new(),
        cost: Default::default(),
    };
    let assembly_keys = serialized_keys(&assembly, &assembly);
    // `PreparedCall = Assembly & (| { format: "openai"; request: OpenAiRequest } | …)`.
    let cases = HAND_WRITTEN.split("export type PreparedCall = Assembly & (").nth(1).expect("PreparedCall is declared");
    let cases = &cases[..cases.find("\n);").expect("closed")];
    let mut formats = Vec::new();
    for case in cases.split('|').map(str::trim).filter(|c| !c.is_empty()) {
        let case = members(case);
        let format = case["format"].1.trim_matches('"').to_owned();
        let parsed: PromptFormat =
            serde_json::from_value(serde_json::json!(format)).expect("a format the engine reads");
        let call = PreparedCall::new(&assembly, parsed);
        let value = serde_json::to_value(&call).expect("serializes");
        let own = serialized_keys(&call, &call).into_iter().filter(|(k, _)| !assembly_keys.contains_key(k)).collect();
        assert_same_fields(&format!("PreparedCall ({format})"), &case, &own);
        assert_eq!(value["format"], format);
        let request = &case["request"].1;
        match &value["request"] {
            serde_json::Value::String(_) => assert_eq!(request, "string", "PreparedCall ({format}).request"),
            serde_json::Value::Object(fields) => {
                let declared = declared(request);
                for key in fields.keys() {
                    assert!(
                        declared.contains_key(key),
                        "{request} does not declare `{key}`, which {format} requests have"
                    );
                }
            }
            other => panic!("a {format} request is {other}"),
        }
        formats.push(format!("\"{format}\""));
    }
    let cfg = Config::new();
    assert_eq!(formats.join(" | "), PromptFormat::inline(&cfg), "PreparedCall has one case per PromptFormat");
}
