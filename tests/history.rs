//! Prompt assembly and history compaction against the in-memory host (R2.1, R2.4, R3.1, R4).
#![cfg(not(target_arch = "wasm32"))]

use context_workbench::history::compaction::TIMEOUT_NOTICE;
use context_workbench::host::{Host, HostErrorKind};
use context_workbench::model::{ContentPart, Role, ToolCall, ToolResult, ToolStatus};
use context_workbench::prompt::assemble::canonical_units;
use context_workbench::prompt::{CallInput, Layer, PromptView, ToolSpec};
use context_workbench::{Config, Engine, MessageDraft};
use context_workbench_testing::{TestHost, block_on};

/// A small window, and tool outputs kept whole when rounds settle, so sizes are easy to reason on.
/// Tail compaction is off: these tests are about R4's path (the workbench has its own tests).
fn config(window: u32, rounds: u32) -> Config {
    let keep_outputs =
        r#""compress": {"budget_share": 1.0, "summary_tokens": 100000, "read_share": 1.0, "max_tokens": 100000}"#;
    let no_tail = r#""workbench": {"tail_compaction": false}"#;
    Config::from_json(&format!(r#"{{"window": {window}, "min_rounds_kept": {rounds}, {keep_outputs}, {no_tail}}}"#))
        .unwrap()
}

fn input() -> CallInput {
    CallInput {
        system_prompt: "You are a careful coding agent.".into(),
        tail: vec!["Plan: [→] 1. fix the bug".into()],
        ..Default::default()
    }
}

/// One round: the user asks, the assistant calls a tool, the tool answers, the assistant ends.
fn round(engine: &Engine<TestHost>, n: usize, output: &str) {
    round_with(engine, n, "Bash", output);
}

fn round_with(engine: &Engine<TestHost>, n: usize, tool: &str, output: &str) {
    engine.record(MessageDraft::text(Role::User, format!("request {n}"))).unwrap();
    let call =
        ToolCall { id: format!("c{n}").into(), name: tool.into(), arguments: r#"{"command":"make test"}"#.into() };
    engine.record(MessageDraft::new(Role::Assistant, vec![ContentPart::ToolCall(call)])).unwrap();
    let result = ToolResult {
        call_id: format!("c{n}").into(),
        name: tool.into(),
        status: ToolStatus::Ok,
        output: output.into(),
        stderr: None,
        exit_code: Some(0),
    };
    engine.record(MessageDraft::new(Role::Tool, vec![ContentPart::ToolResult(result)])).unwrap();
    engine.record(MessageDraft::text(Role::Assistant, format!("done {n}"))).unwrap();
}

fn texts(view: &PromptView) -> Vec<String> {
    view.messages
        .iter()
        .map(|m| {
            m.content
                .iter()
                .map(|p| match p {
                    ContentPart::Text { text } => text.clone(),
                    ContentPart::ToolCall(c) => format!("call {}", c.id),
                    ContentPart::ToolResult(r) => format!("result {}", r.call_id),
                    ContentPart::Reasoning { text, .. } => text.clone(),
                    ContentPart::Opaque(o) => o.placeholder(),
                })
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

/// No orphan tool call or result anywhere in the view.
fn assert_paired(view: &PromptView) {
    if let Err(e) = context_workbench::prompt::serialize::check_pairing(view) {
        panic!("{e}: {:?}", texts(view));
    }
}

#[test]
fn layers_come_in_order_and_the_tail_is_last() {
    let host = TestHost::default().with_file("CODE_law.MD", "Never edit generated files.");
    let engine = Engine::new(host, Config::default());
    round(&engine, 1, "ok");
    engine.record(MessageDraft::text(Role::User, "request 2")).unwrap();
    let a = block_on(engine.prepare_call(&input())).unwrap();
    let layers: Vec<Layer> = a.view.messages.iter().map(|m| m.layer).collect();
    use Layer::*;
    assert_eq!(layers, [System, Rules, History, History, History, History, Input, Tail]);
    let t = texts(&a.view);
    assert!(t[1].contains("CODE_law.MD") && t[1].contains("Never edit generated files."), "{}", t[1]);
    assert_eq!(t[7], "Plan: [→] 1. fix the bug");
    assert!(
        engine.trace().messages.iter().all(|m| !format!("{:?}", m.content).contains("Never edit")),
        "rules never enter history"
    );
    assert_eq!(a.tokens, context_workbench::prompt::assemble::count_view(&a.view, &engine.counter()));
}

#[test]
fn project_rules_are_read_on_every_build() {
    let engine = Engine::new(TestHost::default().with_file("code_law.md", "rule one"), Config::default());
    round(&engine, 1, "ok");
    let first = block_on(engine.prepare_call(&input())).unwrap();
    block_on(engine.host().write_file("code_law.md", "rule two")).unwrap();
    let second = block_on(engine.prepare_call(&input())).unwrap();
    assert!(texts(&first.view)[1].contains("rule one"));
    assert!(texts(&second.view)[1].contains("rule two"));
}

#[test]
fn appending_a_round_keeps_the_previous_prompt_as_a_byte_identical_prefix() {
    let engine = Engine::new(TestHost::default(), Config::default());
    round(&engine, 1, "ok");
    let first = block_on(engine.prepare_call(&input())).unwrap();
    round(&engine, 2, "ok again");
    let second = block_on(engine.prepare_call(&input())).unwrap();
    use context_workbench::prompt::assemble::canonical;
    let before = canonical(&first.view);
    let after = canonical(&second.view);
    // Everything up to the tail of the first prompt is unchanged; the first change is there.
    let mut without_tail = first.view.clone();
    without_tail.messages.pop();
    let tail_at = before.bytes().zip(canonical(&without_tail).bytes()).take_while(|(a, b)| a == b).count();
    assert_eq!(&before[..tail_at], &after[..tail_at]);
    let changed = second.first_changed_byte.unwrap();
    assert!(
        (tail_at..before.len()).contains(&changed),
        "the first change, {changed}, is in the old tail ({tail_at}..)"
    );
}

/// R3.1 with R5.10: the end of a round makes its tool outputs eligible; the replacement is a
/// tail compaction the cost model approves, and the block points at the raw output.
#[test]
fn a_finished_round_is_compacted_at_the_tail_when_it_pays() {
    // Batching allows a rewrite from the second call on (the default waits 25 calls), and runs
    // of this family are long: the ledger lets a rewrite that pays be made at once.
    let config = Config::from_json(
        r#"{"workbench": {"min_calls_between_rewrites": 1, "family_runs": [1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000]}}"#,
    )
    .unwrap();
    let engine = Engine::new(TestHost::default(), config);
    let log: String = (0..400).map(|i| format!("step {i}: compiled module_{i}.rs in 12ms\n")).collect();
    round(&engine, 1, &log);
    let during = block_on(engine.prepare_call(&input())).unwrap();
    assert!(texts(&during.view).iter().any(|t| t == "result c1"), "the open round sees full outputs");
    assert!(during.rewrites.is_empty());
    engine.record(MessageDraft::text(Role::User, "request 2")).unwrap();
    let after = block_on(engine.prepare_call(&input())).unwrap();
    let t = texts(&after.view);
    let block = t.iter().find(|t| t.starts_with("<compressed_turns v1")).expect("a block");
    assert!(
        block.contains("$ make test → 400 lines, last: step 399: compiled module_399.rs in 12ms [cmd#2 exit=0]"),
        "{block}"
    );
    assert!(!t.iter().any(|t| t == "result c1"), "the call and its result left together: {t:?}");
    assert_paired(&after.view);
    assert!(after.tokens * 3 < during.tokens);
    let rewrite = &after.rewrites[0];
    assert_eq!((rewrite.mechanism.as_str(), rewrite.start, rewrite.end), ("tail_compaction", 1, 3));
    assert!(rewrite.reasons.iter().any(|r| r == "a round ended"), "{:?}", rewrite.reasons);
    assert!(rewrite.cost.pays());
    assert!(after.first_changed_byte.is_some(), "the rewrite of the finished round is reported");
    let raw = engine.trace();
    assert_eq!(raw.messages[2].tool_results().next().unwrap().output, log, "the raw trace keeps the original");
}

#[test]
fn compaction_keeps_the_first_request_and_the_newest_rounds_with_the_summary_where_the_cut_was() {
    let host = TestHost::default().with_reply("## 📌 Archived Session Summary\nrounds 1-3 done");
    // Five rounds, keep two: the first request and the two newest rounds survive.
    let engine = Engine::new(host, config(600, 2));
    for n in 1..=5 {
        round(&engine, n, &"x ".repeat(100));
    }
    let a = block_on(engine.prepare_call(&input())).unwrap();
    let t = texts(&a.view);
    assert_eq!(t[0], "You are a careful coding agent.");
    assert_eq!(t[1], "request 1", "the original request is pinned");
    assert!(t[2].starts_with("## 📌 Archived Session Summary"), "{t:?}");
    assert_eq!(
        &t[3..],
        [
            "request 4",
            "call c4",
            "result c4",
            "done 4",
            "request 5",
            "call c5",
            "result c5",
            "done 5",
            "Plan: [→] 1. fix the bug"
        ]
    );
    assert_paired(&a.view);
    let request = &engine.host().requests()[0];
    assert_eq!(request.purpose, "summary");
    assert!(request.messages[0].content.contains("request 3") && !request.messages[0].content.contains("request 4"));
    assert!(engine.host().progress_updates().last().unwrap().done);
    assert_eq!(engine.trace().messages.len(), 20, "the raw trace keeps everything");
}

#[test]
fn a_timeout_falls_back_to_the_recent_rounds_with_the_exact_message() {
    let host = TestHost::default().with_error(HostErrorKind::Timeout, "no answer in 120 s");
    let engine = Engine::new(host, config(600, 2));
    for n in 1..=5 {
        round(&engine, n, &"x ".repeat(100));
    }
    let a = block_on(engine.prepare_call(&input())).unwrap();
    assert!(a.notes.iter().any(|n| n == TIMEOUT_NOTICE), "{:?}", a.notes);
    assert_eq!(TIMEOUT_NOTICE, "Summary generation timed out, keeping recent history only.");
    let t = texts(&a.view);
    assert!(t[2].contains(TIMEOUT_NOTICE) && t[2].contains("raw#m000001"), "{}", t[2]);
    assert!(engine.host().progress_updates().iter().any(|p| p.message == TIMEOUT_NOTICE));
    assert_eq!(engine.host().requests()[0].timeout_ms, Some(120_000));
}

#[test]
fn three_failed_compactions_stop_automatic_compaction() {
    let host = TestHost::default()
        .with_error(HostErrorKind::Llm, "overloaded")
        .with_error(HostErrorKind::Llm, "overloaded")
        .with_error(HostErrorKind::Llm, "overloaded");
    let engine = Engine::new(host, config(800, 1));
    let mut notes = Vec::new();
    for n in 1..=18 {
        round(&engine, n, &"y ".repeat(100));
        notes.extend(block_on(engine.prepare_call(&input())).map(|a| a.notes).unwrap_or_else(|e| vec![e.to_string()]));
    }
    assert_eq!(engine.history_view().failed_compactions, 3);
    assert_eq!(engine.host().requests().len(), 3, "no fourth attempt");
    assert!(notes.iter().any(|n| n.contains("automatic compaction stopped")), "{notes:?}");
}

/// Twenty reads in one round against a 500-token window, with tail compaction switched off.
fn one_long_round(engine: &Engine<TestHost>) {
    engine.record(MessageDraft::text(Role::User, "one long autonomous run")).unwrap();
    for n in 0..20 {
        let call = ToolCall { id: format!("c{n}").into(), name: "Read".into(), arguments: "{}".into() };
        engine.record(MessageDraft::new(Role::Assistant, vec![ContentPart::ToolCall(call)])).unwrap();
        let result = ToolResult {
            call_id: format!("c{n}").into(),
            name: "Read".into(),
            status: ToolStatus::Ok,
            output: "line\n".repeat(20),
            stderr: None,
            exit_code: None,
        };
        engine.record(MessageDraft::new(Role::Tool, vec![ContentPart::ToolResult(result)])).unwrap();
    }
}

#[test]
fn a_single_round_over_the_window_is_compacted_as_a_last_resort() {
    let engine = Engine::new(TestHost::default().with_reply("unused"), config(500, 10));
    one_long_round(&engine);
    let assembly = block_on(engine.prepare_call(&input())).unwrap();
    assert!(assembly.tokens <= 500, "{} tokens", assembly.tokens);
    assert!(assembly.notes.iter().any(|n| n.contains("last resort")), "{:?}", assembly.notes);
    assert!(!assembly.rewrites.is_empty(), "the rewrite is reported with its cost");
    assert_eq!(engine.trace().messages.len(), 41, "the raw trace keeps everything");
}

#[test]
fn only_fixed_layers_that_do_not_fit_are_a_context_overflow() {
    let engine = Engine::new(TestHost::default().with_reply("unused"), config(500, 10));
    one_long_round(&engine);
    let huge = CallInput { system_prompt: "You are careful. ".repeat(200), ..input() };
    let err = block_on(engine.prepare_call(&huge)).unwrap_err();
    assert_eq!(err.code(), "context_overflow");
    let text = err.to_string();
    assert!(
        text.contains("the system prompt and tools need") && text.contains("more than the window of 500"),
        "{text}"
    );
}

#[test]
fn prune_replaces_old_outputs_and_spares_the_last_two_turns_and_protected_tools() {
    let mut config = config(1_500, 10);
    config.prune.minimum = 100;
    config.prune.protect = 300;
    config.prune.protected_tools = vec!["skill".into()];
    let engine = Engine::new(TestHost::default().with_reply("unused"), config);
    // Round 1's tool is protected.
    round_with(&engine, 1, "skill", &"1 ".repeat(100));
    for n in 2..=8 {
        round(&engine, n, &format!("{n} ").repeat(100));
    }
    let a = block_on(engine.prepare_call(&input())).unwrap();
    assert!(a.notes.iter().any(|n| n.contains("pruned")), "{:?}", a.notes);
    let view = engine.history_view();
    assert!(!view.pruned.is_empty());
    assert!(view.pruned.iter().all(|&i| i < 24), "the last two turns are untouched: {:?}", view.pruned);
    assert!(!view.pruned.contains(&2), "a protected tool's output is never pruned");
    assert!(view.pruned.contains(&6));
    let shown = texts(&a.view).join("\n");
    assert!(
        a.view.messages.iter().flat_map(|m| &m.content).any(
            |p| matches!(p, ContentPart::ToolResult(r) if r.output.starts_with("[output pruned; full output: raw#m"))
        ),
        "{shown}"
    );
}

#[test]
fn compaction_rehydrates_recently_touched_files() {
    let host = TestHost::default().with_file("src/parser.rs", "fn parse() {}").with_reply("summary text");
    let engine = Engine::new(host, config(800, 1));
    for n in 1..=4 {
        engine.record(MessageDraft::text(Role::User, format!("request {n}"))).unwrap();
        let call = ToolCall {
            id: format!("c{n}").into(),
            name: "Read".into(),
            arguments: r#"{"file_path":"src/parser.rs"}"#.into(),
        };
        engine.record(MessageDraft::new(Role::Assistant, vec![ContentPart::ToolCall(call)])).unwrap();
        let output = "z ".repeat(150);
        let result = ToolResult {
            call_id: format!("c{n}").into(),
            name: "Read".into(),
            status: ToolStatus::Ok,
            output,
            stderr: None,
            exit_code: None,
        };
        engine.record(MessageDraft::new(Role::Tool, vec![ContentPart::ToolResult(result)])).unwrap();
    }
    let a = block_on(engine.prepare_call(&input())).unwrap();
    let summary = &texts(&a.view)[2];
    assert!(
        summary.starts_with("summary text") && summary.contains("`src/parser.rs`:\n```\nfn parse() {}\n```"),
        "{summary}"
    );
}

/// A small deterministic generator (no dependency needed for this).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

#[test]
fn random_histories_stay_paired_keep_their_rounds_and_fit_the_window() {
    let mut rng = Lcg(7);
    for case in 0..60 {
        let rounds_kept = 1 + rng.next(3) as u32;
        let host = (0..20).fold(TestHost::default(), |h, i| h.with_reply(format!("summary {i}")));
        let engine = Engine::new(host, config(6_000, rounds_kept));
        let rounds = 1 + rng.next(12) as usize;
        let mut call = 0;
        for r in 0..rounds {
            engine.record(MessageDraft::text(Role::User, format!("case {case} round {r}"))).unwrap();
            for _ in 0..rng.next(4) {
                let parallel = 1 + rng.next(3);
                let calls: Vec<ContentPart> = (0..parallel)
                    .map(|k| {
                        ContentPart::ToolCall(ToolCall {
                            id: format!("c{}", call + k).into(),
                            name: "Bash".into(),
                            arguments: "{}".into(),
                        })
                    })
                    .collect();
                engine.record(MessageDraft::new(Role::Assistant, calls)).unwrap();
                for k in 0..parallel {
                    let output = "w ".repeat(rng.next(300) as usize);
                    let result = ToolResult {
                        call_id: format!("c{}", call + k).into(),
                        name: "Bash".into(),
                        status: ToolStatus::Ok,
                        output,
                        stderr: None,
                        exit_code: Some(0),
                    };
                    engine.record(MessageDraft::new(Role::Tool, vec![ContentPart::ToolResult(result)])).unwrap();
                }
                call += parallel;
            }
            engine.record(MessageDraft::text(Role::Assistant, "round done")).unwrap();
            match block_on(engine.prepare_call(&input())) {
                Ok(a) => {
                    assert_paired(&a.view);
                    assert!(a.tokens <= 6_000);
                    let users =
                        a.view.messages.iter().filter(|m| m.role == Role::User && m.layer != Layer::Tail).count();
                    assert!(users >= (r + 1).min(rounds_kept as usize), "case {case}: {users} rounds kept");
                }
                Err(e) => assert_eq!(e.code(), "context_overflow", "case {case}: {e}"),
            }
        }
    }
}

#[test]
fn provider_usage_drives_the_trigger_when_reported() {
    let engine = Engine::new(TestHost::default().with_reply("summary"), config(10_000, 1));
    for n in 1..=3 {
        round(&engine, n, "ok");
    }
    let a = block_on(engine.prepare_call(&input())).unwrap();
    assert!(engine.host().requests().is_empty(), "{} tokens by our count is far below the trigger", a.tokens);
    // The provider counted far more (another tokenizer, images …): its figure wins.
    engine.report_usage(context_workbench::host::Usage {
        prompt_tokens: 7_990,
        completion_tokens: 5,
        cached_tokens: 0,
    });
    round(&engine, 4, "ok");
    block_on(engine.prepare_call(&input())).unwrap();
    assert_eq!(engine.host().requests().len(), 1, "compaction ran on the provider's count");
}

#[test]
fn user_input_gets_a_reminder_for_files_the_host_has_and_reads_report_freshness() {
    let host = TestHost::default().with_file("src/auth.rs", "SECRET CONTENT");
    let engine = Engine::new(host, Config::default());
    block_on(engine.record_user_input("fix @src/auth.rs, not @property or @../../etc/passwd")).unwrap();
    let text = match &engine.trace().messages[0].content[0] {
        ContentPart::Text { text } => text.clone(),
        other => panic!("{other:?}"),
    };
    assert!(text.starts_with("fix @src/auth.rs, not @property or @../../etc/passwd\n\n<system-reminder>\nThe user mentioned @src/auth.rs.\n"), "{text}");
    assert!(!text.contains("SECRET CONTENT") && !text.contains("@property."));
    assert_eq!(engine.observe_read("src/auth.rs", 1), None);
    assert_eq!(engine.observe_read("src/auth.rs", 2).as_deref(), Some("Note: src/auth.rs was modified externally."));
}

/// The reminder names the host's read tool: configured, else the read tool the last call offered,
/// and no tool at all before the engine knows one (#19.3: it named `Read` whatever the host had).
#[test]
fn a_mention_reminder_names_the_hosts_read_tool() {
    let reminder = |engine: &Engine<TestHost>| {
        block_on(engine.record_user_input("look at @src/auth.rs")).unwrap();
        let text = match &engine.trace().messages.last().unwrap().content[0] {
            ContentPart::Text { text } => text.clone(),
            other => panic!("{other:?}"),
        };
        text.lines().rev().nth(1).unwrap().to_owned()
    };
    let host = || TestHost::default().with_file("src/auth.rs", "x");
    let configured = Engine::new(host(), Config::from_json(r#"{"read_tool": "view_file"}"#).unwrap());
    assert_eq!(reminder(&configured), "You MUST read this file with the view_file tool before answering.");

    let offered = Engine::new(host(), Config::default());
    assert_eq!(reminder(&offered), "You MUST read this file before answering.", "no tool known yet");
    let tool =
        |name: &str| ToolSpec { name: name.into(), description: String::new(), parameters: serde_json::json!({}) };
    let tools = vec![tool("run_command"), tool("read_file"), tool("grep")];
    block_on(offered.prepare_call(&CallInput { tools, ..input() })).unwrap();
    assert_eq!(reminder(&offered), "You MUST read this file with the read_file tool before answering.");
}

fn tool(name: &str, size: usize) -> ToolSpec {
    let words: Vec<String> = (0..size).map(|k| format!("word{k}")).collect();
    ToolSpec { name: name.into(), description: words.join(" "), parameters: serde_json::json!({"type": "object"}) }
}

/// What a provider's prefix cache would reuse (#19.1): the serialized request's common prefix,
/// tools included. A new user input turns the previous one from `input` into `history`, a label
/// that is never sent: everything the first call sent is still the second call's prefix.
#[test]
fn a_new_user_input_leaves_the_previous_prompt_and_the_tools_cached() {
    let engine = Engine::new(TestHost::default(), Config::default());
    let input = CallInput {
        system_prompt: "You are a careful coding agent.".into(),
        tools: vec![tool("read_file", 400), tool("run_command", 400)],
        ..Default::default()
    };
    engine.record(MessageDraft::text(Role::User, "Explain the parser. ".repeat(200))).unwrap();
    engine.record(MessageDraft::text(Role::Assistant, "It splits on whitespace.")).unwrap();
    let first = block_on(engine.prepare_call(&input)).unwrap();
    engine.record(MessageDraft::text(Role::User, "Now make it keep tabs.")).unwrap();
    let second = block_on(engine.prepare_call(&input)).unwrap();
    assert!(second.first_changed_byte.unwrap() >= canonical_units(&first.view).text.len() - 2, "only appended");
    assert_eq!(second.expected_cached_tokens, first.tokens, "the whole first prompt, tools included");
}

/// On random histories (rounds of random sizes, new inputs, a tool added now and then, small
/// windows that make the engine compact), the expected cached tokens are exactly the tokens of
/// the tools and messages that lie wholly before the first changed byte of the canonical request.
#[test]
fn expected_cached_tokens_agree_with_the_first_changed_byte_on_random_histories() {
    for seed in 1..=12u64 {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let window = [6_000, 12_000, 200_000][seed as usize % 3];
        let engine =
            Engine::new(TestHost::default(), Config::from_json(&format!(r#"{{"window": {window}}}"#)).unwrap());
        let counter = engine.counter();
        let mut input = CallInput {
            system_prompt: "You are a coding agent.".into(),
            tools: vec![tool("read_file", 50)],
            ..Default::default()
        };
        engine.record(MessageDraft::text(Role::User, "start")).unwrap();
        let mut previous: Option<context_workbench::prompt::Assembly> = None;
        let (mut extensions, mut changes) = (0, 0);
        for step in 0..40 {
            match next(6) {
                0 => engine.record(MessageDraft::text(Role::User, format!("next request {step}"))).map(drop).unwrap(),
                1 => input.tools.push(tool(&format!("tool_{step}"), 20)),
                _ => round_with(&engine, step, "Bash", &"output line\n".repeat(1 + next(400) as usize)),
            }
            let now = block_on(engine.prepare_call(&input)).unwrap_or_else(|e| panic!("seed {seed} step {step}: {e}"));
            if let Some(before) = previous.replace(now.clone()) {
                let (old, new) = (canonical_units(&before.view), canonical_units(&now.view));
                let common = old.text.bytes().zip(new.text.bytes()).take_while(|(a, b)| a == b).count();
                assert_eq!(
                    now.first_changed_byte,
                    (common < old.text.len()).then_some(common),
                    "seed {seed} step {step}"
                );
                let units = new.ends.iter().take_while(|&&end| end <= common).count();
                let expected = match units {
                    0 => 0,
                    n => {
                        let tools: usize =
                            now.view.tools.iter().map(|t| counter.count(&serde_json::to_string(t).unwrap())).sum();
                        let messages: usize =
                            now.view.messages[..n - 1].iter().map(|m| counter.count_message_content(&m.content)).sum();
                        tools + messages
                    }
                };
                assert_eq!(now.expected_cached_tokens, expected, "seed {seed} step {step}");
                if new.text.starts_with(&old.text[..old.text.len() - 2]) {
                    extensions += 1;
                    assert_eq!(now.expected_cached_tokens, before.tokens, "seed {seed} step {step}: only appended");
                } else {
                    changes += 1;
                    assert!(now.expected_cached_tokens < before.tokens, "seed {seed} step {step}");
                }
            }
        }
        assert!(extensions > 0 && changes > 0, "seed {seed}: {extensions} appends, {changes} rewrites or new tools");
    }
}

#[test]
fn a_malformed_history_is_repaired_on_load_and_nothing_is_dropped() {
    let source = Engine::new(TestHost::default(), Config::default());
    round(&source, 1, "first output");
    round(&source, 2, "second output");
    let mut messages = source.trace().messages;
    // Lose round 2's result and move round 1's result to the very end.
    let late = messages.remove(2);
    messages.retain(|m| !m.tool_results().any(|r| r.call_id.as_str() == "c2"));
    messages.push(late);
    let engine = Engine::new(TestHost::default(), Config::default());
    let notes = engine.load_history(messages).unwrap();
    assert!(notes.len() >= 2, "{notes:?}");
    let a = block_on(engine.prepare_call(&input())).unwrap();
    assert_paired(&a.view);
    let all = texts(&a.view).join("\n");
    assert!(all.contains("result c1") && all.contains("result c2"), "{all}");
    assert!(engine.trace().messages.iter().any(|m| m.tool_results().any(|r| r.output == "first output")));
}

#[test]
fn the_cost_of_each_tail_placement_is_reported() {
    let engine = Engine::new(TestHost::default(), Config::default());
    round(&engine, 1, "ok");
    let at_tail = block_on(engine.prepare_call(&input())).unwrap();
    let in_system = block_on(engine.prepare_call(&CallInput { tail_in_system: true, ..input() })).unwrap();
    assert!(at_tail.tail_rewrite_tokens > 0 && at_tail.tail_rewrite_tokens < 20, "{}", at_tail.tail_rewrite_tokens);
    assert_eq!(in_system.tail_rewrite_tokens, in_system.tokens);
    assert!(texts(&in_system.view)[0].ends_with("Plan: [→] 1. fix the bug"));
    assert_eq!(
        in_system.first_changed_byte.map(|b| b < 100),
        Some(true),
        "moving the plan into the system prompt rewrites from the top"
    );
}

#[test]
fn a_second_compaction_updates_the_previous_summary_instead_of_summarising_it() {
    let host = TestHost::default().with_reply("FIRST SUMMARY: rounds 1-3").with_reply("SECOND SUMMARY: rounds 1-6");
    let engine = Engine::new(host, config(600, 2));
    for n in 1..=5 {
        round(&engine, n, &"x ".repeat(100));
    }
    block_on(engine.prepare_call(&input())).unwrap();
    for n in 6..=8 {
        round(&engine, n, &"x ".repeat(100));
    }
    let a = block_on(engine.prepare_call(&input())).unwrap();
    let requests = engine.host().requests();
    assert_eq!(requests.len(), 2);
    let second = &requests[1].messages[0].content;
    assert!(second.contains("<previous_summary>\nFIRST SUMMARY: rounds 1-3\n</previous_summary>"), "{second}");
    assert!(!second.contains("request 2") && second.contains("request 4") && !second.contains("request 7"), "{second}");
    let t = texts(&a.view);
    assert_eq!(t[1], "request 1");
    assert_eq!(t[2], "SECOND SUMMARY: rounds 1-6");
    assert_eq!(t.iter().filter(|x| x.contains("SUMMARY")).count(), 1, "one summary, updated");
    assert_eq!(t[3], "request 7");
}

/// An agent that acts through text (mini-swe-agent's text mode) puts each command in a fenced
/// block of its reply and gets the output back as a user message: those are its observations,
/// kept in the command's turn and compacted with it, never held as the user's words.
#[test]
fn a_text_agents_command_outputs_are_observations_compacted_with_their_turns() {
    let engine =
        Engine::new(TestHost::default().with_reply("unused"), Config::from_json(r#"{"window": 3000}"#).unwrap());
    engine.record(MessageDraft::text(Role::User, "Fix the typo in notes.txt.")).unwrap();
    for n in 0..30 {
        let reply = format!("Step {n}.\n\n```mswea_bash_command\nsed -n '{n},+40p' logs/build.log\n```");
        engine.record(MessageDraft::text(Role::Assistant, reply)).unwrap();
        let lines: String = (0..18).map(|i| format!("[{n}{i:03}] INFO sync: reconciled sku-{i}\n")).collect();
        let output = format!("<returncode>0</returncode>\n<output>\n{lines}</output>");
        engine.record(MessageDraft::text(Role::User, output)).unwrap();
        if n == 0 {
            let first = block_on(engine.prepare_call(&input())).unwrap();
            let sent = context_workbench::prompt::serialize::to_openai_chat(&first.view);
            let output = &sent["messages"][3];
            assert_eq!(output["role"], "user", "sent as the user's turn: {sent}");
            assert!(
                output["content"].as_str().unwrap().starts_with("<returncode>0</returncode>"),
                "unlabelled: {sent}"
            );
        }
    }
    // A reply that runs nothing, and one with two blocks (a format error): what follows is the user's.
    engine.record(MessageDraft::text(Role::Assistant, "Which file do you mean?")).unwrap();
    engine.record(MessageDraft::text(Role::User, "notes.txt")).unwrap();
    engine.record(MessageDraft::text(Role::Assistant, "```bash\nls\n```\n```bash\npwd\n```")).unwrap();
    engine.record(MessageDraft::text(Role::User, "One command per reply, please.")).unwrap();

    let roles: Vec<Role> = engine.trace().messages.iter().map(|m| m.role).collect();
    assert_eq!(roles[2], Role::Observation);
    assert_eq!(roles.iter().filter(|r| **r == Role::Observation).count(), 30);
    assert_eq!(&roles[roles.len() - 3..], [Role::User, Role::Assistant, Role::User]);
    assert_eq!(engine.trace().rounds().len(), 3, "observations open no round");

    // 30 outputs of ~250 tokens each (under first sight's bound) in a 3,000-token window:
    // compacted, not a context overflow.
    let assembly = block_on(engine.prepare_call(&input())).unwrap();
    assert!(assembly.tokens <= 3000, "{} tokens", assembly.tokens);
    assert!(!assembly.rewrites.is_empty(), "the old turns were compacted: {:?}", assembly.notes);
    let users = assembly.view.messages.iter().filter(|m| m.role == Role::User && m.layer != Layer::Tail).count();
    assert_eq!(users, 3, "the user's own words are all kept");
}

/// Issue 45, first sight judged at the call: a large output (over a tenth of the window) is
/// shown whole while the prompt holding it whole stays under the compaction threshold (what the
/// agent's own prompt keeps); two large outputs recorded between calls are judged together, and
/// bounded when together they would pass it.
#[test]
fn a_large_output_is_shown_whole_while_the_prompt_holding_it_fits() {
    let engine = Engine::new(TestHost::default(), Config::from_json(r#"{"window": 20000}"#).unwrap());
    let output = |n: usize, lines: usize| -> String {
        (0..lines).map(|i| format!("check {n}.{i}: sku-{i} reconciled after {} ms\n", i * 37 % 900)).collect()
    };
    let step = |n: usize, text: &str| {
        let call =
            ToolCall { id: format!("c{n}").into(), name: "Bash".into(), arguments: r#"{"command":"./check"}"#.into() };
        engine.record(MessageDraft::new(Role::Assistant, vec![ContentPart::ToolCall(call)])).unwrap();
        let result = ToolResult {
            call_id: format!("c{n}").into(),
            name: "Bash".into(),
            status: ToolStatus::Ok,
            output: text.into(),
            stderr: None,
            exit_code: Some(0),
        };
        engine.record(MessageDraft::new(Role::Tool, vec![ContentPart::ToolResult(result)])).unwrap();
    };
    let shown = |a: &context_workbench::prompt::assemble::Assembly| serde_json::to_string(&a.view.messages).unwrap();
    engine.record(MessageDraft::text(Role::User, "Reconcile the stock.")).unwrap();
    let first = output(1, 300);
    step(1, &first);
    let tokens = engine.trace().messages[2].tokens.unwrap();
    assert!(tokens > 2_000 && tokens < 8_000, "{tokens}: over first sight's bound, far under the threshold");
    let a = block_on(engine.prepare_call(&input())).unwrap();
    assert!(shown(&a).contains("check 1.299: sku-299"), "shown whole: {} tokens", a.tokens);
    assert!(!shown(&a).contains("raw#m000002"));

    // Two more, 7,000+ tokens each: together over the threshold of 16,000.
    let (second, third) = (output(2, 450), output(3, 450));
    step(2, &second);
    step(3, &third);
    let b = block_on(engine.prepare_call(&input())).unwrap();
    assert!(shown(&b).contains("raw#m000004") && shown(&b).contains("raw#m000006"), "both bounded");
    assert!(shown(&b).contains("check 1.299: sku-299"), "the first stays whole: its prefix is kept");
    assert!(b.tokens < 16_000, "{} tokens", b.tokens);
}

/// A text agent's large output is compressed on sight as a tool output is, when the prompt
/// holding it whole would pass the compaction threshold: the prompt shows its history form,
/// which names the original, and the raw trace keeps every line.
#[test]
fn a_text_agents_large_output_is_compressed_on_sight() {
    let engine =
        Engine::new(TestHost::default().with_reply("unused"), Config::from_json(r#"{"window": 20000}"#).unwrap());
    engine.record(MessageDraft::text(Role::User, "Why does the build fail?")).unwrap();
    engine.record(MessageDraft::text(Role::Assistant, "Reading the log.\n\n```bash\ncat logs/build.log\n```")).unwrap();
    let log: String =
        (0..1200).map(|i| format!("[{i:05}] INFO sync: reconciled sku-{i} after {} ms\n", i * 37 % 900)).collect();
    let output =
        format!("<returncode>0</returncode>\n<output>\n{log}ERROR linker: undefined symbol sku_total\n</output>");
    engine.record(MessageDraft::text(Role::User, output.clone())).unwrap();

    let assembly = block_on(engine.prepare_call(&input())).unwrap();
    let shown =
        assembly.view.messages.iter().find(|m| m.source.as_ref().is_some_and(|s| s.as_str() == "m000002")).unwrap();
    let text: String = shown
        .content
        .iter()
        .filter_map(|p| if let ContentPart::Text { text } = p { Some(text.as_str()) } else { None })
        .collect();
    assert_eq!(shown.role, Role::Observation);
    assert!(text.contains("raw#m000002"), "the form names its original: {text}");
    assert!(text.contains("undefined symbol sku_total"), "the error stays in view: {text}");
    assert!(text.len() * 4 < output.len(), "{} of {} bytes", text.len(), output.len());
    assert_eq!(
        engine.trace().messages[2].content,
        vec![ContentPart::Text { text: output }],
        "the raw trace keeps it whole"
    );
}

/// An agent that sends its history again changed (aider renders the files it shows anew at each
/// call): the messages from the first changed one on are withdrawn and its new version recorded.
/// The prompt shows the new version only, on the unchanged messages before it; what the view made
/// of the withdrawn messages (blocks) is gone; the raw trace keeps both versions.
#[test]
fn a_history_sent_again_changed_shows_only_its_new_version() {
    let engine =
        Engine::new(TestHost::default().with_reply("unused"), Config::from_json(r#"{"window": 3000}"#).unwrap());
    let text_round = |n: usize, version: &str| {
        let reply = format!("Step {n}.\n\n```bash\nsed -n '{n},+40p' logs/build.log\n```");
        engine.record(MessageDraft::text(Role::Assistant, reply)).unwrap();
        let lines: String = (0..18).map(|i| format!("[{n}{i:03}] INFO {version} sync: reconciled sku-{i}\n")).collect();
        engine.record(MessageDraft::text(Role::User, lines)).unwrap();
    };
    engine.record(MessageDraft::text(Role::User, "Fix the typo in notes.txt.")).unwrap();
    (0..30).for_each(|n| text_round(n, "first-version"));
    let before = block_on(engine.prepare_call(&input())).unwrap();
    assert!(!engine.history_view().blocks.is_empty(), "the old turns were compacted: {:?}", before.notes);

    // Sent again from its 8th round on (message 15), changed.
    let from = engine.trace().messages[15].id.clone();
    assert_eq!(engine.withdraw_from(&from).unwrap(), 46);
    (7..30).for_each(|n| text_round(n, "second-version"));
    let after = block_on(engine.prepare_call(&input())).unwrap();

    let sources: Vec<usize> =
        after.view.messages.iter().filter_map(|m| m.source.as_ref()?.as_str()[1..].parse().ok()).collect();
    assert!(sources.iter().all(|i| !(15..61).contains(i)), "nothing withdrawn is shown: {sources:?}");
    assert!(sources.contains(&106) && texts(&after.view).join("\n").contains("second-version"));
    let trace = engine.trace();
    assert_eq!(trace.messages.len(), 1 + 60 + 46, "the raw trace keeps both versions");
    assert_eq!(trace.messages[62].role, Role::Observation, "the new version's outputs are observations");
    let view = engine.history_view();
    assert!(view.blocks.iter().all(|b| b.end <= 15 || b.start >= 61), "blocks of withdrawn messages dropped");
    assert_eq!(view.withdrawn.len(), 1);
    assert!(after.tokens <= 3000, "{} tokens", after.tokens);
    assert_paired(&after.view);
    assert!(engine.withdraw_from(&from).is_err(), "a withdrawn message is not in the history shown");
}
