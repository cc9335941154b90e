//! The trajectory importers on the real traces of `data/traces`, read in place: call counts
//! checked against counts taken independently from the raw JSON, tool call/result pairing,
//! every file importing, and non-trajectories or truncated files failing at the right line.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use context_workbench::Error;
use context_workbench::import::{Format, MISSING_RESULT, Trajectory, import};
use context_workbench::model::{Role, ToolStatus};
use serde_json::Value;

const TRACES: &str = "data/traces";

fn path(relative: &str) -> String {
    format!("{TRACES}/{relative}")
}

fn read(relative: &str) -> String {
    std::fs::read_to_string(path(relative)).unwrap()
}

fn raw(relative: &str) -> Value {
    serde_json::from_str(&read(relative)).unwrap()
}

fn import_file(relative: &str) -> Vec<Trajectory> {
    import(&path(relative), &read(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

fn only(relative: &str) -> Trajectory {
    let mut all = import_file(relative);
    assert_eq!(all.len(), 1, "{relative}");
    all.remove(0)
}

/// The invariants of every imported trajectory: numbering, call boundaries, and pairing (each
/// call answered by exactly one tool message among those right after it, each result
/// answering exactly one call).
fn check(t: &Trajectory) {
    let mut calls: HashMap<&str, usize> = HashMap::new();
    let mut answered: HashSet<&str> = HashSet::new();
    for (i, m) in t.messages.iter().enumerate() {
        assert_eq!(m.sequence, i as u64, "{}", t.name);
        assert_eq!(m.id.as_str(), format!("m{i:06}"));
        assert_eq!(m.trace_id.as_str(), t.name);
        for call in m.tool_calls() {
            assert_eq!(m.role, Role::Assistant, "{}: a call outside an assistant message", t.name);
            assert!(calls.insert(call.id.as_str(), i).is_none(), "{}: call id {} repeated", t.name, call.id);
        }
        let results: Vec<_> = m.tool_results().collect();
        if m.role == Role::Tool {
            assert_eq!(results.len(), 1, "{}: one result per tool message", t.name);
            let result = results[0];
            assert_eq!(m.tool_call_id.as_ref(), Some(&result.call_id));
            let call_at = calls.get(result.call_id.as_str()).copied();
            assert!(call_at.is_some_and(|c| c < i), "{}: result {} before or without its call", t.name, result.call_id);
            let between = &t.messages[call_at.unwrap() + 1..i];
            assert!(
                between.iter().all(|m| m.role == Role::Tool),
                "{}: result {} not next to its call",
                t.name,
                result.call_id
            );
            assert!(answered.insert(result.call_id.as_str()), "{}: call {} answered twice", t.name, result.call_id);
        } else {
            assert!(results.is_empty(), "{}: a result outside a tool message", t.name);
        }
    }
    assert_eq!(answered.len(), calls.len(), "{}: every call has a result", t.name);
    assert!(t.calls.windows(2).all(|w| w[0] <= w[1]), "{}: calls non-decreasing", t.name);
    assert!(t.calls.iter().all(|&c| c <= t.messages.len()), "{}: calls within the messages", t.name);
    for &c in &t.calls {
        if let Some(output) = t.messages.get(c) {
            assert_eq!(output.role, Role::Assistant, "{}: a call's output is an assistant message", t.name);
        }
    }
}

fn tool_names(t: &Trajectory) -> Vec<&str> {
    t.messages.iter().flat_map(|m| m.tool_calls()).map(|c| c.name.as_str()).collect()
}

fn recorded_results(t: &Trajectory) -> usize {
    t.messages.iter().flat_map(|m| m.tool_results()).filter(|r| r.output != MISSING_RESULT).count()
}

fn count_entries(doc: &Value, kind: &str) -> usize {
    doc["trajectory"].as_array().unwrap().iter().filter(|e| e["type"] == kind).count()
}

// ---- vorflux ----

/// The vorflux files whose `llm_call`s never request a tool call.
fn vorflux_without_requests() -> Vec<String> {
    vorflux_files()
        .into_iter()
        .filter(|f| {
            let doc = raw(f);
            doc["trajectory"]
                .as_array()
                .unwrap()
                .iter()
                .all(|e| e["type"] != "llm_call" || e["output"]["tool_calls"].as_array().is_none_or(|c| c.is_empty()))
        })
        .collect()
}

fn vorflux_files() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(path("vorflux"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json"))
        .map(|n| format!("vorflux/{n}"))
        .collect();
    files.sort();
    files
}

#[test]
fn vorflux_small_file_with_requests() {
    let file = "vorflux/psf__requests-2317.json";
    let doc = raw(file);
    let t = only(file);
    check(&t);
    assert_eq!(t.format, Format::Vorflux);
    assert_eq!(t.name, "psf__requests-2317");
    assert_eq!(t.calls.len(), count_entries(&doc, "llm_call"));
    assert_eq!(recorded_results(&t), count_entries(&doc, "tool_call"), "one tool message per tool_call entry");
    assert_eq!(t.messages[0].role, Role::User, "the task prompt leads");
    assert_eq!(t.calls[0], 1);
    let first: Vec<&str> = doc["trajectory"][0]["output"]["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    let made: Vec<&str> = t.messages[1].tool_calls().map(|c| c.id.as_str()).collect();
    assert_eq!(made, first, "requested calls keep their ids");
    assert!(t.messages[1].created_at_ms > 1_700_000_000_000);
    let failed = t.messages.iter().flat_map(|m| m.tool_results()).find(|r| r.exit_code == Some(1));
    assert_eq!(failed.map(|r| r.status), Some(ToolStatus::Error));
}

#[test]
fn vorflux_interleaved_sub_agents_keep_every_request_and_result() {
    let file = "vorflux/pylint-dev__pylint-6386.json";
    let doc = raw(file);
    let t = only(file);
    check(&t);
    assert_eq!(t.calls.len(), count_entries(&doc, "llm_call"));
    assert_eq!(recorded_results(&t), count_entries(&doc, "tool_call"));
    let made: HashSet<&str> = t.messages.iter().flat_map(|m| m.tool_calls()).map(|c| c.id.as_str()).collect();
    let entries = doc["trajectory"].as_array().unwrap();
    let requested: Vec<&str> = entries
        .iter()
        .flat_map(|e| e["output"]["tool_calls"].as_array().into_iter().flatten())
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert!(requested.iter().all(|id| made.contains(id)), "every requested call is kept with its id");
    let names: HashSet<&str> = tool_names(&t).into_iter().collect();
    assert!(names.contains("read") && names.contains("bash_execute"), "{names:?}");
    let read = t.messages.iter().flat_map(|m| m.tool_results()).find(|r| r.name == "read_text_file").unwrap();
    let call = t.messages.iter().flat_map(|m| m.tool_calls()).find(|c| c.id == read.call_id).unwrap();
    assert_eq!(call.name, "read", "the model's name on the call, the executor's on the result");
    assert!(t.notes.iter().any(|n| n.starts_with("results recorded after a later llm_call")), "{:?}", t.notes);
}

#[test]
fn vorflux_files_without_requests_rebuild_their_calls() {
    let files = vorflux_without_requests();
    assert_eq!(files.len(), 10);
    assert!(files.contains(&"vorflux/django__django-14373.json".to_owned()));
    for file in ["vorflux/django__django-14373.json", "vorflux/pallets__flask-5014.json"] {
        let doc = raw(file);
        let t = only(file);
        check(&t);
        assert_eq!(t.calls.len(), count_entries(&doc, "llm_call"), "{file}");
        let entries: Vec<&Value> =
            doc["trajectory"].as_array().unwrap().iter().filter(|e| e["type"] == "tool_call").collect();
        let names = tool_names(&t);
        assert_eq!(names.len(), entries.len(), "{file}: one rebuilt call per tool_call entry");
        assert_eq!(recorded_results(&t), entries.len());
        assert!(names.iter().zip(&entries).all(|(n, e)| *n == e["tool"]), "{file}: names as recorded");
        let first = t.messages.iter().flat_map(|m| m.tool_calls()).next().unwrap();
        assert_eq!(first.arguments, serde_json::to_string(&entries[0]["arguments"]).unwrap());
        assert!(t.notes.iter().any(|n| n.contains("rebuilt")), "{file}: {:?}", t.notes);
    }
}

#[test]
fn vorflux_counts_4010_calls_over_its_30_files() {
    let (mut calls, mut independent, mut messages) = (0, 0, 0);
    let files = vorflux_files();
    assert_eq!(files.len(), 30);
    for file in &files {
        let t = only(file);
        check(&t);
        calls += t.calls.len();
        messages += t.messages.len();
        independent += count_entries(&raw(file), "llm_call");
    }
    assert_eq!(independent, 4010);
    assert_eq!(calls, 4010);
    println!("vorflux: {} files, {calls} calls, {messages} messages", files.len());
}

// ---- Claude Code ----

/// Distinct `message.id`s of assistant lines, per sidechain flag.
fn claude_ids(relative: &str) -> (HashSet<String>, HashSet<String>) {
    let (mut main, mut side) = (HashSet::new(), HashSet::new());
    for line in read(relative).lines().filter(|l| !l.trim().is_empty()) {
        let record: Value = serde_json::from_str(line).unwrap();
        if record["type"] != "assistant" {
            continue;
        }
        let Some(id) = record["message"]["id"].as_str() else { continue };
        if record["isSidechain"] == true {
            side.insert(id.to_owned())
        } else {
            main.insert(id.to_owned())
        };
    }
    (main, side)
}

#[test]
fn claude_code_representative_messages() {
    let file = "claude-code/claude-code-log_representative_messages.jsonl";
    let t = only(file);
    check(&t);
    assert_eq!(t.format, Format::ClaudeCode);
    assert_eq!(t.calls.len(), claude_ids(file).0.len());
    assert_eq!(tool_names(&t), ["Edit", "Bash"]);
    assert_eq!(recorded_results(&t), 2);
    assert!(t.notes.iter().any(|n| n.starts_with("summary lines skipped")), "{:?}", t.notes);
    assert!(t.messages.iter().all(|m| m.created_at_ms > 0));
}

#[test]
fn claude_code_merges_lines_and_splits_sidechains() {
    let file = "claude-code/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl";
    let (main_ids, side_ids) = claude_ids(file);
    let all = import_file(file);
    let roots = read(file)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["isSidechain"] == true && r["parentUuid"].is_null())
        .count();
    assert_eq!(all.len(), 1 + roots);
    assert_eq!(all[0].name, "5c0375b4-57a5-4f26-b12d-d022ee4e51b7");
    assert_eq!(all[1].name, "5c0375b4-57a5-4f26-b12d-d022ee4e51b7#sidechain-1");
    assert_eq!(all[0].calls.len(), main_ids.len());
    assert_eq!(all[1..].iter().map(|t| t.calls.len()).sum::<usize>(), side_ids.len());
    for t in &all {
        check(t);
        assert_eq!(t.messages.iter().flat_map(|m| m.tool_results()).filter(|r| r.output == MISSING_RESULT).count(), 0);
    }
    let main = &all[0];
    let tool_uses = read(file).matches("\"type\":\"tool_use\"").count();
    assert_eq!(all.iter().map(|t| tool_names(t).len()).sum::<usize>(), tool_uses);
    let parallel = main.messages.iter().find(|m| m.tool_calls().count() == 3).expect("three lines, one message");
    assert_eq!(parallel.role, Role::Assistant);
    assert!(tool_names(main).contains(&"Task"), "{:?}", tool_names(main));
}

// ---- SWE-agent and mini-swe-agent ----

#[test]
fn swe_agent_function_calling_traj() {
    let file = "swe-agent/tests__test_data__trajectories__gpt4__swe-agent-test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1__6e44b9__sweagenttestrepo-1c2844.traj";
    let doc = raw(file);
    let t = only(file);
    check(&t);
    assert_eq!(t.format, Format::SweAgent);
    let steps = doc["trajectory"].as_array().unwrap();
    assert_eq!(t.calls.len(), steps.len());
    assert_eq!((t.messages[0].role, t.messages[1].role), (Role::System, Role::User));
    assert_eq!(t.calls[0], 2, "the system and instance prompts lead");
    assert_eq!(tool_names(&t), ["find_file", "open", "edit", "bash", "submit"]);
    let outputs: Vec<&str> = t.messages.iter().flat_map(|m| m.tool_results()).map(|r| r.output.as_str()).collect();
    let observations: Vec<&str> = steps.iter().map(|s| s["observation"].as_str().unwrap()).collect();
    assert_eq!(outputs, observations, "observations come from trajectory[]");
    let first = t.messages[2].tool_calls().next().unwrap();
    assert_eq!(first.id.as_str(), doc["history"][2]["tool_calls"][0]["id"].as_str().unwrap());
}

#[test]
fn swe_agent_command_traj() {
    let file = "swe-agent/tests__test_data__trajectories__gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1__pydicom__pydicom-1458.traj";
    let doc = raw(file);
    let t = only(file);
    check(&t);
    let steps = doc["trajectory"].as_array().unwrap();
    assert_eq!(t.calls.len(), steps.len());
    assert_eq!(recorded_results(&t), steps.len());
    for (name, step) in tool_names(&t).iter().zip(steps) {
        let word = step["action"].as_str().unwrap().split_whitespace().next().unwrap();
        assert!(*name == word || *name == "bash", "{name} for {word}");
    }
    assert!(tool_names(&t).contains(&"open"), "{:?}", tool_names(&t));
}

#[test]
fn mini_swe_agent_traj_json() {
    for file in ["swe-agent/github_issue.traj.json", "swe-agent/local.traj.json"] {
        let doc = raw(file);
        let t = only(file);
        check(&t);
        assert_eq!(t.format, Format::MiniSweAgent);
        let assistants = doc.as_array().unwrap().iter().filter(|m| m["role"] == "assistant").count();
        assert_eq!(t.calls.len(), assistants, "{file}");
        assert!(tool_names(&t).iter().all(|n| *n == "bash"));
        assert_eq!(tool_names(&t).len(), assistants);
        assert_eq!(recorded_results(&t), assistants);
    }
    let t = only("swe-agent/github_issue.traj.json");
    let first = t.messages.iter().flat_map(|m| m.tool_results()).next().unwrap();
    assert_eq!((first.exit_code, first.status), (Some(1), ToolStatus::Error));
    assert!(first.output.starts_with("cat: ") && !first.output.contains("<output>"));
}

// ---- OpenHands and OpenAI chat ----

fn agent_actions(events: &[Value]) -> usize {
    events.iter().filter(|e| e["source"] == "agent" && e["action"].is_string() && e["action"] != "system").count()
}

#[test]
fn openhands_runtime_trajs() {
    for file in ["openhands/runtime_trajs/basic_gui_mode.json", "openhands/runtime_trajs/wrong_initial_state.json"] {
        let doc = raw(file);
        let t = only(file);
        check(&t);
        assert_eq!(t.format, Format::OpenHands);
        assert_eq!(t.calls.len(), agent_actions(doc.as_array().unwrap()), "{file}");
    }
    let t = only("openhands/runtime_trajs/basic_gui_mode.json");
    assert_eq!(tool_names(&t), ["execute_bash", "str_replace_editor", "str_replace_editor", "execute_bash"]);
    assert_eq!(recorded_results(&t), 4);
}

#[test]
fn openhands_output_jsonl_runs() {
    let file = "openhands/multi_swe_bench_examples_output.jsonl";
    let text = read(file);
    let first_line = text.lines().next().unwrap();
    let run: Value = serde_json::from_str(first_line).unwrap();
    let one = import(&path(file), first_line).unwrap();
    assert_eq!(one.len(), 1);
    let t = &one[0];
    check(t);
    assert_eq!(t.name, format!("multi_swe_bench_examples_output#{}", run["instance_id"].as_str().unwrap()));
    let history = run["history"].as_array().unwrap();
    assert_eq!(t.calls.len(), agent_actions(history));
    let observed = history.iter().filter(|e| e["cause"].is_number() && e["tool_call_metadata"].is_object()).count();
    assert_eq!(recorded_results(t), observed);
    assert_eq!(t.messages[0].role, Role::System);
    assert!(tool_names(t).contains(&"execute_bash") && tool_names(t).contains(&"str_replace_editor"));
    let all = import_file(file);
    assert_eq!(all.len(), text.lines().count());
    all.iter().for_each(check);
    assert_eq!(all[0], *t, "a run imports the same alone or with the others");
}

#[test]
fn openai_chat_llm_logs() {
    for file in [
        "openhands/sdk-llm-logs/llm-logs/litellm_proxy__anthropic__claude-sonnet-4-20250514-1757015040.416.json",
        "openhands/sdk-llm-logs/nonfncall-llm-logs/litellm_proxy__deepseek__deepseek-chat-1757015062.589.json",
    ] {
        let doc = raw(file);
        let t = only(file);
        check(&t);
        assert_eq!(t.format, Format::OpenAiChat);
        let recorded = doc["messages"].as_array().unwrap().len();
        assert_eq!(t.calls, [recorded], "{file}: one call over every recorded message");
        let response = &t.messages[recorded];
        assert_eq!(response.role, Role::Assistant);
        let expected = doc["response"]["choices"][0]["message"]["tool_calls"][0]["function"]["name"].as_str().unwrap();
        assert_eq!(response.tool_calls().next().map(|c| c.name.as_str()), Some(expected));
    }
    let t = only("openhands/sdk-llm-logs/fncall-llm-message.json");
    check(&t);
    assert_eq!(t.format, Format::OpenAiChat);
    assert_eq!(
        tool_names(&t),
        ["str_replace_editor", "terminal", "str_replace_editor", "str_replace_editor", "terminal", "finish"]
    );
    assert_eq!(recorded_results(&t), 6);
}

// ---- every file, and the files that are not trajectories ----

#[test]
fn every_trace_file_imports() {
    let files = common::traces::files_under(Path::new(TRACES));
    let mut per_format: BTreeMap<String, (usize, usize, usize, usize)> = BTreeMap::new();
    let mut imported = 0;
    for file in &files {
        let relative = file.strip_prefix(TRACES).unwrap().to_string_lossy().into_owned();
        let base = file.file_name().unwrap().to_string_lossy().into_owned();
        if relative.starts_with("aider") || ["LICENSE", "README.md", "manifest.json"].contains(&base.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        let all = import(&relative, &text).unwrap_or_else(|e| panic!("{relative}: {e}"));
        assert!(!all.is_empty(), "{relative}");
        assert_eq!(import(&relative, &text).unwrap(), all, "{relative}: deterministic");
        for t in &all {
            check(t);
            let entry = per_format.entry(format!("{:?}", t.format)).or_default();
            entry.1 += 1;
            entry.2 += t.calls.len();
            entry.3 += t.messages.len();
        }
        per_format.entry(format!("{:?}", all[0].format)).or_default().0 += 1;
        imported += 1;
    }
    for (format, (files, trajectories, calls, messages)) in &per_format {
        println!("{format}: {files} files, {trajectories} trajectories, {calls} calls, {messages} messages");
    }
    // vorflux, Claude Code, SWE-agent (two of them mini-swe-agent files), OpenHands, mini-swe-agent.
    assert_eq!(imported, 30 + 11 + 24 + 19 + 24);
    assert_eq!(per_format.len(), 6, "every format seen");
}

fn trajectory_error(file: &str, text: &str) -> (String, usize) {
    match import(file, text) {
        Err(Error::Trajectory { file, line, .. }) => (file, line),
        other => panic!("{file}: expected a trajectory error, got {other:?}"),
    }
}

#[test]
fn non_trajectories_fail_at_line_one() {
    for file in ["vorflux/LICENSE", "README.md"] {
        let text = read(file);
        assert_eq!(trajectory_error(&path(file), &text), (path(file), 1));
    }
    assert_eq!(trajectory_error("manifest.json", &read("manifest.json")), ("manifest.json".to_owned(), 1));
    assert_eq!(trajectory_error("empty.json", "{}"), ("empty.json".to_owned(), 1));
}

#[test]
fn truncated_files_fail_at_the_torn_line_unless_it_is_the_last() {
    // A JSON-lines file whose last line is cut in the middle (a log still being written): the
    // rest imports, and a note names the line left out.
    let text = read("claude-code/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl");
    let lines: Vec<&str> = text.lines().collect();
    let last = lines.len();
    let torn = format!("{}\n{}", lines[..last - 1].join("\n"), &lines[last - 1][..lines[last - 1].len() / 2]);
    let whole = import("session.jsonl", &lines[..last - 1].join("\n")).unwrap();
    let imported = import("session.jsonl", &torn).unwrap();
    assert_eq!(
        imported.iter().map(|t| t.messages.len()).collect::<Vec<_>>(),
        whole.iter().map(|t| t.messages.len()).collect::<Vec<_>>()
    );
    let note = format!("line {last}, the last, is not whole (a log still being written, or cut): it is left out");
    assert!(imported.iter().all(|t| t.notes.contains(&note)), "{:?}", imported[0].notes);
    // A line torn in the middle of the file.
    let middle = format!("{}\n{}\n{}", lines[..4].join("\n"), &lines[4][..20], lines[5..].join("\n"));
    assert_eq!(trajectory_error("session.jsonl", &middle).1, 5);
    // A JSON document cut in the middle: serde_json's line, that of the end of the text.
    let text = read("vorflux/django__django-14373.json");
    let cut = &text[..text.len() / 2];
    assert_eq!(trajectory_error("v.json", cut), ("v.json".to_owned(), cut.split('\n').count()));
    let text = read("openhands/runtime_trajs/basic.json");
    let cut = &text[..text.len() / 3];
    assert_eq!(trajectory_error("basic.json", cut).1, cut.split('\n').count());
}

#[test]
fn prefixes_of_real_files_never_panic() {
    for file in [
        "vorflux/django__django-14373.json",
        "claude-code/claude-code-log_edge_cases.jsonl",
        "swe-agent/local.traj.json",
        "openhands/runtime_trajs/basic_interactions.json",
        "openhands/sdk-llm-logs/goal_events.jsonl",
        "openhands/resolver_mock_output.jsonl",
    ] {
        let text = read(file);
        let mut cut = 0;
        while cut < text.len() {
            if let Some(prefix) = text.get(..cut)
                && let Ok(all) = import(file, prefix)
            {
                all.iter().for_each(check);
            }
            cut += 1 + text.len() / 97;
        }
    }
}
