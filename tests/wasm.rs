//! The same token vectors and the JS host plumbing, as wasm: run under Node by default and in
//! headless Chromium with `WASM_BINDGEN_USE_BROWSER=1`.
#![cfg(target_arch = "wasm32")]

mod common;

use context_workbench::ContextEngine;
use context_workbench::tokens::{Encoding, TokenCounter};
use context_workbench::wasm::ReplaySession;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn reproduces_every_cl100k_and_o200k_vector() {
    let mut checked = 0;
    for v in common::vectors() {
        let Some(encoding) = Encoding::from_name(&v.encoding) else { continue };
        assert_eq!(TokenCounter::new(encoding).encode(&v.sample), v.tokens, "{} {:?}", v.encoding, v.sample);
        checked += 1;
    }
    assert_eq!(checked, 64 + 57);
}

#[wasm_bindgen_test]
fn long_space_runs_do_not_trap() {
    let counter = TokenCounter::new(Encoding::O200kBase);
    assert_eq!(counter.count(&" ".repeat(800_000)), 6_250);
    assert!(counter.count(&" ".repeat(2_000_000)) >= 15_625);
}

/// A plain JS host object, built by JS source so it is exactly what an embedder would write.
fn js_host(complete_body: &str) -> JsValue {
    let source = format!(
        "return {{
            complete: async (req) => {{ {complete_body} }},
            readFile: async (p) => ({{ text: 'x', mtimeMs: 1 }}),
            stat: async () => null, writeFile: async () => {{}}, appendFile: async () => {{}},
            rename: async () => {{}}, remove: async () => {{}}, listDir: async () => [],
            nowMs: () => 1767225600000,
        }};"
    );
    js_sys::Function::new_no_args(&source).call0(&JsValue::NULL).unwrap()
}

fn request() -> JsValue {
    js_sys::JSON::parse(r#"{"messages":[{"role":"user","content":"hi"}],"purpose":"test"}"#).unwrap()
}

fn get(value: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(value, &key.into()).unwrap()
}

#[wasm_bindgen_test]
async fn completion_resolves_through_a_js_host() {
    let host =
        js_host("return { text: 'echo:' + req.messages[0].content, usage: { promptTokens: 3, completionTokens: 2 } };");
    let engine = ContextEngine::new(host, JsValue::UNDEFINED).unwrap();
    let pending = engine.complete(request());
    // The engine stays usable while the host call is pending (no borrow across the await).
    assert_eq!(engine.count_tokens("hello world"), 2);
    let completion = JsFuture::from(pending).await.unwrap();
    assert_eq!(get(&completion, "text").as_string().unwrap(), "echo:hi");
    assert_eq!(get(&engine.last_usage(), "promptTokens").as_f64(), Some(3.0));
    assert_eq!(engine.trace_id(), "trace-1767225600000");
}

#[wasm_bindgen_test]
async fn a_rejecting_host_surfaces_as_an_error_with_a_code() {
    let engine = ContextEngine::new(js_host("throw new Error('model overloaded');"), JsValue::UNDEFINED).unwrap();
    let err = JsFuture::from(engine.complete(request())).await.unwrap_err();
    let err: js_sys::Error = err.dyn_into().unwrap();
    assert_eq!(String::from(err.message()), "host.complete failed: model overloaded");
    assert_eq!(get(&err, "code").as_string().unwrap(), "host_failed");
    assert_eq!(String::from(err.name()), "ContextWorkbenchError");

    let classified = js_host("const e = new Error('slow'); e.code = 'timeout'; throw e;");
    let engine = ContextEngine::new(classified, JsValue::UNDEFINED).unwrap();
    let err = JsFuture::from(engine.complete(request())).await.unwrap_err();
    assert_eq!(get(&err, "code").as_string().unwrap(), "host_timeout");
}

#[wasm_bindgen_test]
fn bad_hosts_and_configs_are_refused() {
    let err = ContextEngine::new(JsValue::from(3), JsValue::UNDEFINED).err().unwrap();
    assert_eq!(get(&err, "code").as_string().unwrap(), "host_failed");
    let config = js_sys::JSON::parse(r#"{"windw": 5}"#).unwrap();
    let err = ContextEngine::new(js_host("return {text: ''};"), config).err().unwrap();
    assert_eq!(get(&err, "code").as_string().unwrap(), "invalid_config");
    assert!(get(&err, "message").as_string().unwrap().contains("windw"));
}

/// A small real Claude Code log with TodoWrite calls, the same bytes natively and in wasm.
const TODO_LOG: &str = include_str!("../data/traces/claude-code/claude-code-log_todowrite_examples.jsonl");

#[wasm_bindgen_test]
fn a_replay_session_runs_in_wasm_and_its_todos_become_goals() {
    let mut session = ReplaySession::new("todos.jsonl", TODO_LOG, None).unwrap();
    let calls = session.calls();
    assert!(calls > 0);
    let mut steps = 0;
    while !session.step().unwrap().is_undefined() {
        steps += 1;
    }
    assert_eq!(steps, calls);
    let tree = session.goal_tree().unwrap();
    let goals = js_sys::Array::from(&get(&tree, "goals"));
    assert!(goals.length() >= 3, "the todo items are goals");
    let err = ReplaySession::new("notes.md", "# not a trajectory", None).err().unwrap();
    assert_eq!(get(&err, "code").as_string().unwrap(), "invalid_trajectory");
}

#[wasm_bindgen_test]
fn inputs_with_unknown_fields_are_refused_by_path() {
    let engine = ContextEngine::new(js_host("return {text: ''};"), JsValue::UNDEFINED).unwrap();
    let typo = js_sys::JSON::parse(r#"{"role": "user", "content": "hi", "goal": "1"}"#).unwrap();
    let err = engine.record(typo).err().unwrap();
    assert_eq!(get(&err, "code").as_string().unwrap(), "invalid_input");
    assert!(get(&err, "message").as_string().unwrap().contains("unknown field `goal`"));
    let ok = js_sys::JSON::parse(r#"{"role": "user", "content": "hi"}"#).unwrap();
    assert_eq!(engine.record(ok).unwrap(), "m000000");
}
