//! A fuzz harness over what reads untrusted bytes: the proxy's request readers (both formats,
//! through the gateway), its reply pump (an event stream in any pieces, ending any way at any
//! byte), a request's `Host` and `Origin`, the session ids agents send, and the trajectory
//! importers. Property tests (proptest) mutate a corpus seeded from the real recorded sessions of
//! `data/traces`: bytes flipped, inserted or cut, values swapped for odd ones, deep nesting.
//! Each input must give an answer in the caller's terms (a decision, an error), never a panic, and
//! every log line stays one line. Bounded: `FUZZ_CASES` cases per property (default 200), a fixed
//! seed, so a run is reproducible (`PROPTEST_RNG_SEED` picks another).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::sync::OnceLock;

use context_workbench::Config;
use context_workbench::import::import;
use context_workbench::proxy::args::Shell;
use context_workbench::proxy::{
    Decision, Effect, End, Exchange, Format, Gateway, RequestHead, Route, SessionKey, Upstreams,
};
use context_workbench::tokens::{Encoding, TokenCounter};
use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, FileFailurePersistence, RngSeed};
use serde_json::{Value, json};

fn runner() -> RunnerConfig {
    let cases = std::env::var("FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let seed = std::env::var("PROPTEST_RNG_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed);
    RunnerConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        rng_seed: RngSeed::Fixed(seed),
        ..RunnerConfig::default()
    }
}

/// Request bodies of real sessions: each Claude Code log's messages as Claude Code sent them
/// (Anthropic Messages), and the same conversations in OpenAI Chat Completions form.
fn corpus() -> &'static [(Format, Vec<u8>)] {
    static CORPUS: OnceLock<Vec<(Format, Vec<u8>)>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let mut bodies = Vec::new();
        for file in common::traces::files_under(std::path::Path::new("data/traces/claude-code")) {
            let Ok(text) = std::fs::read_to_string(&file) else { continue };
            let messages: Vec<Value> = text
                .lines()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .filter_map(|line| line.get("message").cloned())
                .filter(|m| matches!(m["role"].as_str(), Some("user" | "assistant")))
                .take(40)
                .collect();
            if messages.is_empty() {
                continue;
            }
            let tools = json!([{"name": "Bash", "description": "Run a command", "input_schema": {"type": "object"}}]);
            let anthropic = json!({"model": "m", "max_tokens": 100, "stream": true, "tools": tools, "messages": messages});
            bodies.push((Format::Anthropic, anthropic.to_string().into_bytes()));
            let chat: Vec<Value> = messages
                .iter()
                .map(|m| json!({"role": m["role"], "content": flatten_text(&m["content"])}))
                .collect();
            let openai = json!({"model": "m", "stream": true, "tools": [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}], "messages": chat});
            bodies.push((Format::OpenAi, openai.to_string().into_bytes()));
        }
        assert!(bodies.len() >= 8, "the shared Claude Code sessions seed the corpus");
        bodies
    })
}

fn flatten_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// One change to a seed.
#[derive(Debug, Clone)]
enum Mutation {
    Flip {
        at: usize,
        byte: u8,
    },
    Insert {
        at: usize,
        bytes: Vec<u8>,
    },
    Cut {
        at: usize,
        len: usize,
    },
    Truncate {
        at: usize,
    },
    /// A value (the first one after a position) replaced by something odd.
    Value {
        at: usize,
        with: usize,
    },
}

const ODD_VALUES: [&str; 9] = [
    "null",
    "-1e308",
    "\"\\u0000\\ud800\"",
    "[]",
    "{}",
    "\"role\\nworkbench proxy: forged\"",
    "18446744073709551616",
    "true",
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Flip { at, byte }),
        (any::<usize>(), proptest::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
        (any::<usize>(), 1..64usize).prop_map(|(at, len)| Mutation::Cut { at, len }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        (any::<usize>(), any::<usize>()).prop_map(|(at, with)| Mutation::Value { at, with }),
    ]
}

fn apply(seed: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for mutation in mutations {
        let len = bytes.len().max(1);
        match mutation {
            Mutation::Flip { at, byte } => {
                let at = at % len;
                if at < bytes.len() {
                    bytes[at] = *byte;
                }
            }
            Mutation::Insert { at, bytes: more } => {
                let at = at % (bytes.len() + 1);
                bytes.splice(at..at, more.iter().copied());
            }
            Mutation::Cut { at, len: n } => {
                let at = at % len;
                let end = (at + n).min(bytes.len());
                if at < end {
                    bytes.drain(at..end);
                }
            }
            Mutation::Truncate { at } => bytes.truncate(at % len),
            Mutation::Value { at, with } => {
                let at = at % len;
                if let Some(colon) = bytes[at.min(bytes.len())..].iter().position(|&b| b == b':') {
                    let start = at + colon + 1;
                    let end =
                        bytes[start..].iter().position(|&b| b == b',' || b == b'}').map_or(bytes.len(), |e| start + e);
                    bytes.splice(start..end, ODD_VALUES[with % ODD_VALUES.len()].bytes());
                }
            }
        }
    }
    bytes
}

fn gateway() -> &'static Gateway {
    static GATEWAY: OnceLock<Gateway> = OnceLock::new();
    GATEWAY.get_or_init(|| Gateway::new(&Config::default(), Upstreams::default(), Shell::Native))
}

proptest! {
    #![proptest_config(runner())]

    /// A mutated request is managed, forwarded or answered in the provider's shape; never a panic.
    #[test]
    fn the_request_readers_answer_any_body(seed in any::<prop::sample::Index>(), mutations in proptest::collection::vec(mutation(), 1..6)) {
        let (format, body) = seed.get(corpus());
        let body = apply(body, &mutations);
        let head = RequestHead { method: "POST".into(), target: "/v1/messages?beta=true".into(), headers: Vec::new() };
        match gateway().read(&head, Route::Managed(*format), &body) {
            Decision::Manage { request, .. } => prop_assert_eq!(request.format, *format),
            Decision::Forward { why, .. } => prop_assert!(!why.contains('\n')),
            Decision::Answer(answer) => {
                prop_assert!((400..500).contains(&answer.status), "{}", answer.status);
                prop_assert!(serde_json::from_str::<Value>(&answer.body).is_ok(), "{}", answer.body);
                prop_assert!(!answer.line.contains('\n') && answer.line.chars().count() <= 2_001, "{}", answer.line);
            }
        }
    }

    /// An event stream cut into any pieces, mutated or not, ends with an outcome; a whole one
    /// read in any pieces is the same reply.
    #[test]
    fn the_reply_pump_reads_any_stream_in_any_pieces(cuts in proptest::collection::vec(1..400usize, 1..40), mutations in proptest::collection::vec(mutation(), 0..4)) {
        let counter = TokenCounter::new(Encoding::O200kBase);
        let stream = reply_stream();
        let mutated = apply(stream.as_bytes(), &mutations);
        let mut pump = gateway().reply_pump(Format::Anthropic, 200, Some("text/event-stream"), None);
        let mut whole = None;
        let mut rest = &mutated[..];
        for cut in cuts.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (piece, after) = rest.split_at((*cut).min(rest.len()));
            if let Some(outcome) = pump.feed(piece, &counter) {
                whole = Some(outcome);
            }
            rest = after;
        }
        let ending = pump.end(End::Done, &counter);
        let outcome = whole.or(ending.outcome).expect("an outcome");
        if mutations.is_empty() {
            prop_assert!(outcome.completed, "{:?}", outcome.error);
            prop_assert_eq!(outcome.parts.len(), 2);
        }
    }

    /// A stream ended any way after any byte: the agent gets an error event exactly when the
    /// stream was cut before its end, and a reply is whole only when every byte came.
    #[test]
    fn a_stream_ending_any_way_at_any_byte_ends_as_the_agent_must_see_it(at in proptest::option::of(any::<prop::sample::Index>()), end in prop_oneof![Just(End::Done), Just(End::AgentGone), Just(End::BrokeOff), Just(End::Silent(1000)), Just(End::Stopped)]) {
        let counter = TokenCounter::new(Encoding::O200kBase);
        let stream = reply_stream();
        // `None`: every byte came.
        let cut = at.map_or(stream.len(), |at| at.index(stream.len()));
        let mut pump = gateway().reply_pump(Format::Anthropic, 200, Some("text/event-stream"), None);
        let whole = pump.feed(&stream.as_bytes()[..cut], &counter);
        let ending = pump.end(end.clone(), &counter);
        let outcome = whole.or(ending.outcome).expect("an outcome");
        let complete = cut == stream.len();
        prop_assert_eq!(outcome.completed, complete, "cut at {} of {}", cut, stream.len());
        let told = end != End::AgentGone && !complete;
        prop_assert_eq!(ending.trailer.is_some(), told, "{:?} at {}: {:?}", end, cut, ending.trailer);
        if let Some(trailer) = ending.trailer {
            prop_assert!(trailer.starts_with("event: error\ndata: {"), "{}", trailer);
        }
    }

    /// Whatever `Host` and `Origin` a request carries, it is read only when both name this
    /// machine (and always then), and refused otherwise in the provider's shape, on one line.
    #[test]
    fn only_a_request_for_this_machine_is_read((host, local) in host(), origin in proptest::option::of(host())) {
        let mut headers = vec![("host".to_owned(), host.clone())];
        if let Some((origin, _)) = &origin {
            headers.push(("origin".to_owned(), format!("http://{origin}")));
        }
        let head = RequestHead { method: "POST".into(), target: "/v1/messages".into(), headers };
        let (_, effects) = Exchange::begin(gateway(), head, false);
        let mine = local && origin.as_ref().is_none_or(|(o, _)| o.eq_ignore_ascii_case(&host));
        match &effects[..] {
            [Effect::ReadBody { .. }] => prop_assert!(mine, "read for host {:?} origin {:?}", host, origin),
            [Effect::Log { line }, Effect::Answer { status: 403, body, close: true, .. }, Effect::Done] => {
                prop_assert!(!mine, "refused host {:?} origin {:?}", host, origin);
                prop_assert!(!line.contains('\n'), "{}", line);
                let error: Value = serde_json::from_str(body).expect("JSON");
                prop_assert_eq!(&error["error"]["type"], "permission_error");
            }
            other => prop_assert!(false, "{:?}", other),
        }
    }

    /// Any session id an agent sends names its trace safely: a plain name in the store's
    /// directory, never a key's text.
    #[test]
    fn any_session_id_names_a_plain_trace((session, secret) in session_id()) {
        let key = SessionKey { agent_session: Some(session), conversation: 7, person: None };
        let base = key.trace_base();
        prop_assert!(!base.is_empty() && base != "." && base != "..", "{:?}", base);
        prop_assert!(base.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')), "{:?}", base);
        prop_assert!(!secret || base == "proxy-0000000000000007", "a key became the name {:?}", base);
    }

    /// A mutated trajectory file imports or fails with an error naming the file; never a panic.
    #[test]
    fn the_importers_take_any_file(seed in any::<prop::sample::Index>(), mutations in proptest::collection::vec(mutation(), 1..4)) {
        let (name, text) = seed.get(trajectories());
        let bytes = apply(text.as_bytes(), &mutations);
        let text = String::from_utf8_lossy(&bytes);
        if let Err(e) = import(name, &text) {
            prop_assert!(e.to_string().contains(name.rsplit('/').next().unwrap()), "{e}");
        }
    }
}

/// `Host` values, and whether they name this machine: its names with or without a port, other
/// names, near misses and odd text.
fn host() -> impl Strategy<Value = (String, bool)> {
    let names = prop_oneof![Just("127.0.0.1"), Just("localhost"), Just("LocalHost"), Just("[::1]")];
    prop_oneof![
        (names, proptest::option::of(0..70000u32))
            .prop_map(|(name, port)| (port.map_or(name.to_owned(), |p| format!("{name}:{p}")), true)),
        "[a-z]{1,12}\\.(com|test|localhost)(:[0-9]{1,5})?".prop_map(|h| (h, false)),
        "127\\.0\\.0\\.1[.a-z]{1,4}(:[0-9]{1,3})?".prop_map(|h| (h, false)),
        "[ -~]{0,30}".prop_map(|h| (h, false)),
    ]
}

/// Session ids, and whether they are a key: uuids, keys of several providers in their real
/// shapes, paths, and any text.
fn session_id() -> impl Strategy<Value = (String, bool)> {
    prop_oneof![
        "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}".prop_map(|s| (s, false)),
        prop_oneof![
            "sk-ant-api03-[A-Za-z0-9_-]{93}AA",
            "sk-proj-[A-Za-z0-9_-]{40,60}",
            "gsk_[A-Za-z0-9]{52}",
            "xai-[A-Za-z0-9]{80}",
        ]
        .prop_map(|s| (s, true)),
        "[./\\\\]{1,8}[a-z]{0,5}".prop_map(|s| (s, false)),
        any::<String>().prop_map(|s| (s, false)),
    ]
}

/// A Claude Code-shaped streamed reply: text and a tool call, usage at both ends.
fn reply_stream() -> String {
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Reading the parser. "}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"file_path\": \"src/pa"}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "rse.rs\"}"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 20}}),
        json!({"type": "message_stop"}),
    ];
    events.iter().map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap())).collect()
}

/// The small shared trajectory files of every format (the importers' seeds).
fn trajectories() -> &'static [(String, String)] {
    static FILES: OnceLock<Vec<(String, String)>> = OnceLock::new();
    FILES.get_or_init(|| {
        common::traces::files_under(std::path::Path::new("data/traces"))
            .into_iter()
            .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() < 200_000))
            .filter(|p| p.extension().is_some_and(|e| e == "json" || e == "jsonl"))
            .filter_map(|p| Some((p.display().to_string(), std::fs::read_to_string(&p).ok()?)))
            .collect()
    })
}
