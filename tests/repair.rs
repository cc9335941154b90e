//! Repair of malformed histories (issue 4, "Bad input"): each malformed case repaired as
//! documented in `history::repair`, well-formed histories untouched, rejections naming the
//! message, and 1,000 randomly damaged histories that always come back paired, whole and the same.

use std::collections::BTreeSet;

use context_workbench::Error;
use context_workbench::history::repair::{Repaired, check_pairing, repair_history};
use context_workbench::import::MISSING_RESULT;
use context_workbench::model::{ContentPart, Message, MessageId, Role, ToolCall, ToolResult, ToolStatus};

// ---------------------------------------------------------------------------------------------
// Histories as data.

fn message(role: Role, content: Vec<ContentPart>) -> Message {
    Message { id: MessageId(String::new()), ..Message::new("t".into(), 0, role, content) }
}

fn text(text: &str) -> ContentPart {
    ContentPart::Text { text: text.into() }
}

fn call(id: &str) -> ContentPart {
    ContentPart::ToolCall(ToolCall {
        id: id.into(),
        name: "bash".into(),
        arguments: format!("{{\"cmd\":\"run {id}\"}}"),
    })
}

fn result(id: &str, output: &str) -> ContentPart {
    ContentPart::ToolResult(ToolResult {
        call_id: id.into(),
        name: "bash".into(),
        status: ToolStatus::Ok,
        output: output.into(),
        stderr: None,
        exit_code: Some(0),
    })
}

fn sys(s: &str) -> Message {
    message(Role::System, vec![text(s)])
}

fn u(s: &str) -> Message {
    message(Role::User, vec![text(s)])
}

fn a(s: &str) -> Message {
    message(Role::Assistant, vec![text(s)])
}

fn a_calls(ids: &[&str]) -> Message {
    message(Role::Assistant, ids.iter().map(|id| call(id)).collect())
}

/// A tool message answering `id`, with `tool_call_id` set as the importers set it.
fn t(id: &str, output: &str) -> Message {
    let mut m = message(Role::Tool, vec![result(id, output)]);
    m.tool_call_id = Some(id.into());
    m
}

/// A tool message carrying several results.
fn t_many(results: &[(&str, &str)]) -> Message {
    message(Role::Tool, results.iter().map(|(id, out)| result(id, out)).collect())
}

/// Numbers `messages`: ids `m000000…`, sequences 0…
fn h(messages: Vec<Message>) -> Vec<Message> {
    messages
        .into_iter()
        .enumerate()
        .map(|(i, mut m)| {
            m.id = MessageId::for_sequence(i as u64);
            m.sequence = i as u64;
            m
        })
        .collect()
}

fn id(i: u64) -> String {
    MessageId::for_sequence(i).0
}

// ---------------------------------------------------------------------------------------------
// Checks shared by every case.

/// Every string the input carries: texts, reasoning, call arguments, outputs and stderr.
fn strings(messages: &[Message]) -> Vec<String> {
    let mut out = Vec::new();
    for m in messages {
        for part in &m.content {
            match part {
                ContentPart::Text { text } | ContentPart::Reasoning { text, .. } => out.push(text.clone()),
                ContentPart::ToolCall(c) => out.push(c.arguments.clone()),
                ContentPart::ToolResult(r) => {
                    out.push(r.output.clone());
                    out.extend(r.stderr.clone());
                }
                ContentPart::Opaque(o) => out.push(o.json.clone()),
            }
        }
    }
    out
}

/// Repairs `input` and checks the invariants: paired, numbered, unique ids, nothing dropped,
/// deterministic.
fn repaired(input: &[Message]) -> Repaired {
    let out = repair_history(input.to_vec()).unwrap_or_else(|e| panic!("repair failed: {e}"));
    assert_invariants(input, &out);
    assert_eq!(repair_history(input.to_vec()).unwrap(), out, "not deterministic");
    out
}

fn assert_invariants(input: &[Message], out: &Repaired) {
    let dump = || serde_json::to_string_pretty(&out.messages).unwrap();
    if let Err(e) = check_pairing(&out.messages) {
        panic!("{e}\n{}", dump());
    }
    for (i, m) in out.messages.iter().enumerate() {
        assert_eq!(m.sequence, i as u64, "sequence of {}", m.id);
    }
    let mut ids: Vec<&str> = out.messages.iter().map(|m| m.id.as_str()).collect();
    ids.sort_unstable();
    let before = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), before, "repeated message ids\n{}", dump());
    for m in input {
        if !m.id.0.is_empty() {
            assert!(ids.binary_search(&m.id.as_str()).is_ok(), "message {} lost\n{}", m.id, dump());
        }
    }
    let kept: BTreeSet<String> = strings(&out.messages).into_iter().collect();
    let haystack = strings(&out.messages).join("\u{0}");
    for s in strings(input) {
        assert!(kept.contains(&s) || haystack.contains(&s), "{s:?} dropped\n{}", dump());
    }
}

fn roles(out: &Repaired) -> Vec<Role> {
    out.messages.iter().map(|m| m.role).collect()
}

/// Asserts a note on message `id` whose text contains `what`.
fn assert_note(out: &Repaired, id: &str, what: &str) {
    assert!(
        out.notes.iter().any(|n| n.message.as_str() == id && n.what.contains(what)),
        "no note on {id} with {what:?}: {:#?}",
        out.notes
    );
}

fn output_of(m: &Message) -> Vec<(&str, &str)> {
    m.tool_results().map(|r| (r.call_id.as_str(), r.output.as_str())).collect()
}

use Role::{Assistant, System, Tool, User};

// ---------------------------------------------------------------------------------------------
// Well-formed histories.

#[test]
fn well_formed_histories_come_back_unchanged() {
    let mut reasoning = message(
        Role::Assistant,
        vec![
            ContentPart::Reasoning { text: "think".into(), signature: Some("sig==".into()) },
            text("Looking."),
            call("c1"),
            call("c2"),
        ],
    );
    reasoning.tokens = Some(42);
    reasoning.cost = Some(0.5);
    reasoning.branch_id = Some("b1".into());
    let mut multi = t_many(&[("c2", "two"), ("c1", "one")]);
    multi.content.push(text("a note next to the results"));
    let histories = vec![
        h(vec![]),
        h(vec![u("hi")]),
        h(vec![sys("system"), u("hi"), a("hello")]),
        h(vec![sys("s"), u("fix"), a_calls(&["c1"]), t("c1", "out"), a("done"), u("thanks"), a("ok")]),
        h(vec![u("go"), reasoning, multi, a_calls(&["c3", "c4"]), t("c4", "four"), t("c3", "three"), a("end")]),
        h(vec![sys("s"), u("a"), sys("late system, kept"), a("b"), message(Role::Summary, vec![text("summary")])]),
        h(vec![u("go"), a_calls(&["c1"]), t("c1", "x"), a_calls(&["c2"]), t("c2", "y")]),
    ];
    for input in histories {
        let out = repaired(&input);
        assert!(out.notes.is_empty(), "{:#?}", out.notes);
        assert_eq!(serde_json::to_string(&out.messages).unwrap(), serde_json::to_string(&input).unwrap());
    }
}

#[test]
fn tool_messages_without_tool_call_id_are_left_alone() {
    let input = h(vec![u("go"), a_calls(&["c1"]), t_many(&[("c1", "out")])]);
    let out = repaired(&input);
    assert!(out.notes.is_empty());
    assert_eq!(out.messages, input);
}

// ---------------------------------------------------------------------------------------------
// Pairing.

#[test]
fn a_late_result_moves_right_after_the_results_of_its_call() {
    let input = h(vec![u("go"), a_calls(&["c1", "c2"]), t("c1", "one"), u("next"), t("c2", "two"), a("end")]);
    let out = repaired(&input);
    assert_eq!(roles(&out), [User, Assistant, Tool, Tool, User, Assistant]);
    assert_eq!(out.messages[3].id.as_str(), id(4));
    assert_eq!(output_of(&out.messages[3]), [("c2", "two")]);
    assert_note(&out, &id(4), "moved right after the results of its call in assistant message m000001");
    assert_eq!(out.notes.len(), 1);
}

#[test]
fn a_late_result_goes_to_the_nearest_waiting_call_and_after_its_block() {
    let input = h(vec![
        u("go"),
        a_calls(&["c1", "c2"]),
        t("c2", "two"),
        u("more"),
        a_calls(&["c3"]),
        t("c3", "three"),
        u("again"),
        t("c1", "one"),
    ]);
    let out = repaired(&input);
    let order: Vec<&str> = out.messages.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(order, [&id(0), &id(1), &id(2), &id(7), &id(3), &id(4), &id(5), &id(6)]);
    assert_note(&out, &id(7), "moved");
}

#[test]
fn a_result_before_its_call_moves_after_the_call() {
    let input = h(vec![u("go"), t("c1", "early"), a_calls(&["c1"]), a("end")]);
    let out = repaired(&input);
    assert_eq!(roles(&out), [User, Assistant, Tool, Assistant]);
    assert_eq!(out.messages[2].id.as_str(), id(1));
    assert_note(&out, &id(1), "came before its call; moved right after assistant message m000002");
}

#[test]
fn a_result_without_call_gets_one_in_the_assistant_message_it_follows() {
    let input = h(vec![u("go"), a_calls(&["c1"]), t("c1", "one"), t("c9", "stray")]);
    let out = repaired(&input);
    assert_eq!(roles(&out), [User, Assistant, Tool, Tool]);
    let calls: Vec<&str> = out.messages[1].tool_calls().map(|c| c.id.as_str()).collect();
    assert_eq!(calls, ["c1", "c9"]);
    let synthesised = out.messages[1].tool_calls().nth(1).unwrap();
    assert_eq!((synthesised.name.as_str(), synthesised.arguments.as_str()), ("bash", "{}"));
    assert_eq!(out.messages[1].description, "tool call: bash, bash");
    assert_note(&out, &id(3), "a call was synthesised in assistant message m000001");
}

#[test]
fn a_result_without_call_and_without_assistant_gets_a_new_assistant_message() {
    let input = h(vec![u("go"), t("c9", "stray"), u("next")]);
    let out = repaired(&input);
    assert_eq!(roles(&out), [User, Assistant, Tool, User]);
    let new = &out.messages[1];
    assert_eq!(new.id.as_str(), "m000001-1");
    assert_eq!(new.tool_calls().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["c9"]);
    assert_eq!(new.description, "tool call: bash");
    assert_note(&out, &id(1), "a call was synthesised in a new assistant message m000001-1 inserted before it");

    // At the very start, too.
    let out = repaired(&h(vec![t("c9", "stray"), u("go")]));
    assert_eq!(roles(&out), [Assistant, Tool, User]);
}

#[test]
fn a_result_without_call_after_other_messages_keeps_its_place() {
    let input = h(vec![u("go"), a_calls(&["c1"]), t("c1", "one"), u("next"), t("c9", "stray"), a("end")]);
    let out = repaired(&input);
    assert_eq!(roles(&out), [User, Assistant, Tool, User, Assistant, Tool, Assistant]);
    assert_eq!(out.messages[1].tool_calls().count(), 1);
    assert_note(&out, &id(4), "new assistant message m000004-1");
}

#[test]
fn a_call_without_result_gets_a_placeholder() {
    let input = h(vec![u("go"), a_calls(&["c1", "c2"]), t("c1", "one"), u("next"), a_calls(&["c3"])]);
    let out = repaired(&input);
    assert_eq!(roles(&out), [User, Assistant, Tool, Tool, User, Assistant, Tool]);
    for (index, call) in [(3, "c2"), (6, "c3")] {
        let placeholder = &out.messages[index];
        let r = placeholder.tool_results().next().unwrap();
        assert_eq!((r.call_id.as_str(), r.output.as_str(), r.status), (call, MISSING_RESULT, ToolStatus::Error));
        assert_eq!(r.name, "bash");
        assert_eq!(placeholder.tool_call_id.as_ref().map(|c| c.as_str()), Some(call));
        assert_eq!(placeholder.description, "bash");
    }
    assert_eq!(out.messages[3].id.as_str(), "m000001-1");
    assert_note(
        &out,
        &id(1),
        "tool call `c2` (bash) has no result; a placeholder result was inserted as message m000001-1",
    );
    assert_note(&out, &id(4), "tool call `c3`");
    assert_eq!(out.notes.len(), 2);
}

#[test]
fn a_reused_call_id_is_renamed_and_its_results_follow() {
    let input = h(vec![u("go"), a_calls(&["c1"]), t("c1", "first"), u("again"), a_calls(&["c1"]), t("c1", "second")]);
    let out = repaired(&input);
    assert_eq!(roles(&out), [User, Assistant, Tool, User, Assistant, Tool]);
    assert_eq!(out.messages[4].tool_calls().next().unwrap().id.as_str(), "c1_r1");
    assert_eq!(output_of(&out.messages[5]), [("c1_r1", "second")]);
    assert_eq!(out.messages[5].tool_call_id.as_ref().unwrap().as_str(), "c1_r1");
    assert_eq!(output_of(&out.messages[2]), [("c1", "first")]);
    assert_note(&out, &id(4), "tool call id `c1` is already used by an earlier call; renamed to `c1_r1`");
    assert_note(&out, &id(5), "follows its call, renamed to `c1_r1`");
}

#[test]
fn a_call_id_repeated_in_one_message_is_renamed_and_results_pair_in_order() {
    let input = h(vec![u("go"), a_calls(&["c1", "c1"]), t("c1", "one"), t("c1", "two")]);
    let out = repaired(&input);
    assert_eq!(output_of(&out.messages[2]), [("c1", "one")]);
    assert_eq!(output_of(&out.messages[3]), [("c1_r1", "two")]);
}

#[test]
fn fresh_call_ids_avoid_every_id_of_the_input() {
    let input = h(vec![u("go"), a_calls(&["c1"]), t("c1", "a"), a_calls(&["c1"]), t("c1", "b"), a_calls(&["c1_r1"])]);
    let out = repaired(&input);
    assert_eq!(out.messages[3].tool_calls().next().unwrap().id.as_str(), "c1_r2");
    assert_eq!(out.messages[5].tool_calls().next().unwrap().id.as_str(), "c1_r1");
}

#[test]
fn empty_call_ids_are_given_one() {
    let input = h(vec![u("go"), a_calls(&[""]), t("", "out")]);
    let out = repaired(&input);
    assert_eq!(out.messages[1].tool_calls().next().unwrap().id.as_str(), "call_r1");
    assert_eq!(output_of(&out.messages[2]), [("call_r1", "out")]);
    assert_note(&out, &id(1), "empty id");
}

#[test]
fn a_second_result_for_a_call_becomes_user_text_after_the_block() {
    let input = h(vec![u("go"), a_calls(&["c1", "c2"]), t("c1", "one"), t("c1", "one again"), t("c2", "two")]);
    let out = repaired(&input);
    assert_eq!(roles(&out), [User, Assistant, Tool, Tool, User]);
    let dup = &out.messages[4];
    assert_eq!(dup.id.as_str(), id(3));
    assert_eq!(dup.content, [text("[duplicate tool result for c1]\none again")]);
    assert_eq!(dup.tool_call_id, None);
    assert_eq!(dup.description, "[duplicate tool result for c1]…");
    assert_note(&out, &id(3), "second tool result for call `c1`, which already has one");
}

#[test]
fn a_duplicate_result_keeps_its_stderr() {
    let mut again = t("c1", "again");
    if let Some(ContentPart::ToolResult(r)) = again.content.first_mut() {
        r.stderr = Some("warning: x".into());
    }
    let out = repaired(&h(vec![u("go"), a_calls(&["c1"]), t("c1", "one"), u("next"), again]));
    assert_eq!(roles(&out), [User, Assistant, Tool, User, User]);
    assert_eq!(out.messages[3].content, [text("[duplicate tool result for c1]\nagain\n[stderr]\nwarning: x")]);
}

#[test]
fn a_tool_message_whose_results_go_to_different_places_is_split() {
    let input = h(vec![
        u("go"),
        a_calls(&["c1"]),
        u("interrupt"),
        a_calls(&["c2"]),
        t_many(&[("c2", "two"), ("c1", "one"), ("c2", "two again")]),
    ]);
    let out = repaired(&input);
    assert_eq!(roles(&out), [User, Assistant, Tool, User, Assistant, Tool, User]);
    assert_eq!(output_of(&out.messages[2]), [("c1", "one")]);
    assert_eq!(out.messages[2].id.as_str(), "m000004-1");
    assert_eq!(output_of(&out.messages[5]), [("c2", "two")]);
    assert_eq!(out.messages[5].id.as_str(), id(4));
    assert_eq!(out.messages[6].id.as_str(), "m000004-2");
    assert_note(&out, &id(4), "tool message split into m000004, m000004-1, m000004-2");
}

#[test]
fn call_ids_reused_every_turn_pair_with_the_nearest_call() {
    // Some agent frameworks number calls per turn: `call_0` in every assistant message.
    let mut messages = vec![u("go")];
    for turn in 0..5000 {
        messages.push(a_calls(&["call_0"]));
        messages.push(t("call_0", &format!("out {turn}")));
    }
    let input = h(messages);
    let out = repaired(&input);
    assert_eq!(out.messages.len(), input.len());
    assert_eq!(output_of(&out.messages[4]), [("call_0_r1", "out 1")]);
    assert_eq!(output_of(&out.messages[10000]), [("call_0_r4999", "out 4999")]);
    assert_eq!(out.notes.len(), 2 * 4999);
}

// ---------------------------------------------------------------------------------------------
// Ids and numbering.

#[test]
fn a_repeated_message_id_is_renamed() {
    let mut input = h(vec![u("go"), a("one"), a("two")]);
    input[2].id = input[1].id.clone();
    let out = repaired(&input);
    assert_eq!(out.messages[2].id.as_str(), "m000001-1");
    assert_eq!(out.messages[2].content, [text("two")]);
    assert_note(&out, "m000001-1", "message id `m000001` is already used by an earlier message; renamed");
}

#[test]
fn fresh_message_ids_avoid_ids_used_later() {
    let mut input = h(vec![u("go"), a("one"), a("two"), a("three")]);
    input[2].id = "x".into();
    input[3].id = "x-1".into();
    input[1].id = "x".into();
    let out = repaired(&input);
    let ids: Vec<&str> = out.messages.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, [&id(0), "x", "x-2", "x-1"]);
}

#[test]
fn a_message_without_id_is_given_one() {
    let mut input = h(vec![u("go"), a("one")]);
    input[1].id = "".into();
    let out = repaired(&input);
    assert_eq!(out.messages[1].id.as_str(), "m-1");
    assert_note(&out, "m-1", "no id");
}

#[test]
fn sequences_are_renumbered_with_one_note() {
    let mut input = h(vec![u("go"), a("one"), a("two")]);
    for m in &mut input {
        m.sequence += 10;
    }
    let out = repaired(&input);
    assert_eq!(out.messages.iter().map(|m| m.sequence).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(out.notes.len(), 1);
    assert_note(&out, &id(0), "renumbered");
}

#[test]
fn a_tool_call_id_naming_none_of_the_results_is_fixed() {
    let mut input = h(vec![u("go"), a_calls(&["c1"]), t("c1", "out")]);
    input[2].tool_call_id = Some("other".into());
    let out = repaired(&input);
    assert_eq!(out.messages[2].tool_call_id.as_ref().unwrap().as_str(), "c1");
    assert_note(&out, &id(2), "tool_call_id `other` names none of its results; set to `c1`");
}

// ---------------------------------------------------------------------------------------------
// Roles out of order.

#[test]
fn a_tool_message_without_result_becomes_a_user_message() {
    let mut odd = message(Role::Tool, vec![text("just text")]);
    odd.tool_call_id = Some("c1".into());
    let input = h(vec![u("go"), a_calls(&["c1"]), t("c1", "out"), odd]);
    let out = repaired(&input);
    assert_eq!(roles(&out), [User, Assistant, Tool, User]);
    assert_eq!(out.messages[3].tool_call_id, None);
    assert_note(&out, &id(3), "tool message turned into a user message: it carries no tool result");
}

#[test]
fn a_user_message_of_tool_results_becomes_a_tool_message() {
    // The Anthropic shape: results in a user message.
    let input =
        h(vec![u("go"), a_calls(&["c1", "c2"]), message(Role::User, vec![result("c1", "a"), result("c2", "b")])]);
    let out = repaired(&input);
    assert_eq!(roles(&out), [User, Assistant, Tool]);
    assert_eq!(out.messages[2].tool_call_id.as_ref().unwrap().as_str(), "c1");
    assert_eq!(out.messages[2].description, "bash");
    assert_note(&out, &id(2), "user message turned into a tool message: it carries only tool results");
}

#[test]
fn results_inside_other_messages_are_split_out() {
    let input = h(vec![
        u("go"),
        message(Role::Assistant, vec![text("running"), call("c1"), result("c1", "inline out"), text("and then")]),
        u("next"),
    ]);
    let out = repaired(&input);
    assert_eq!(roles(&out), [User, Assistant, Tool, Assistant, User]);
    assert_eq!(out.messages[1].content, [text("running"), call("c1")]);
    assert_eq!(out.messages[2].id.as_str(), "m000001-1");
    assert_eq!(out.messages[3].content, [text("and then")]);
    assert_note(&out, &id(1), "assistant message split into assistant m000001, tool m000001-1, assistant m000001-2");

    let input = h(vec![
        u("go"),
        a_calls(&["c1"]),
        message(Role::User, vec![text("before"), result("c1", "out"), text("after")]),
    ]);
    let out = repaired(&input);
    assert_eq!(roles(&out), [User, Assistant, Tool, User, User]);
    assert_eq!(output_of(&out.messages[2]), [("c1", "out")]);
    assert_note(&out, "m000002-1", "moved right after the results of its call");
}

#[test]
fn calls_inside_other_messages_are_split_out() {
    let input = h(vec![u("go"), message(Role::User, vec![text("please"), call("c1")]), t("c1", "out")]);
    let out = repaired(&input);
    assert_eq!(roles(&out), [User, User, Assistant, Tool]);
    assert_eq!(out.messages[2].id.as_str(), "m000001-1");
    assert_eq!(output_of(&out.messages[3]), [("c1", "out")]);
    assert_note(&out, &id(1), "user message split into user m000001, assistant m000001-1");
}

#[test]
fn text_cut_off_from_the_results_of_a_tool_message_becomes_user_text() {
    let input =
        h(vec![u("go"), message(Role::Tool, vec![text("preface"), call("c1"), result("c1", "out"), text("tail")])]);
    let out = repaired(&input);
    assert_eq!(roles(&out), [User, User, Assistant, Tool]);
    assert_eq!(out.messages[1].content, [text("preface")]);
    assert_eq!(out.messages[3].content, [result("c1", "out"), text("tail")]);
    assert_note(&out, &id(1), "tool message split into user m000001, assistant m000001-1, tool m000001-2");
}

#[test]
fn a_late_system_message_stays_in_place() {
    let input = h(vec![sys("s"), u("go"), a_calls(&["c1"]), t("c1", "out"), sys("reminder"), a("done")]);
    let out = repaired(&input);
    assert!(out.notes.is_empty());
    assert_eq!(out.messages, input);
}

#[test]
fn a_system_message_inside_a_block_splits_it() {
    let input = h(vec![u("go"), a_calls(&["c1", "c2"]), t("c1", "one"), sys("reminder"), t("c2", "two")]);
    let out = repaired(&input);
    assert_eq!(roles(&out), [User, Assistant, Tool, Tool, System]);
}

#[test]
fn messages_without_content_are_kept() {
    let input = h(vec![u("go"), message(Role::Assistant, vec![]), message(Role::Tool, vec![]), u("end")]);
    let out = repaired(&input);
    assert_eq!(roles(&out), [User, Assistant, User, User]);
    assert!(out.messages[1].content.is_empty() && out.messages[2].content.is_empty());
    assert_note(&out, &id(1), "assistant message without content, kept");
    assert_note(&out, &id(2), "tool message without content, kept");
    assert_note(&out, &id(2), "tool message turned into a user message");
}

#[test]
fn an_empty_history_is_fine() {
    let out = repair_history(Vec::new()).unwrap();
    assert!(out.messages.is_empty() && out.notes.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Rejections.

#[test]
fn a_call_without_tool_name_is_rejected_naming_the_message() {
    let mut input = h(vec![u("go"), a_calls(&["c1"])]);
    if let Some(ContentPart::ToolCall(c)) = input[1].content.first_mut() {
        c.name = " ".into();
    }
    let err = repair_history(input).unwrap_err();
    assert_eq!(err.code(), "invalid_input");
    assert!(matches!(&err, Error::InvalidInput(m) if m.starts_with("message m000001: ")), "{err}");
}

#[test]
fn an_orphan_result_without_tool_name_is_rejected_naming_the_message() {
    let mut input = h(vec![u("go"), t("c9", "stray")]);
    if let Some(ContentPart::ToolResult(r)) = input[1].content.first_mut() {
        r.name = String::new();
    }
    let err = repair_history(input).unwrap_err();
    assert!(matches!(&err, Error::InvalidInput(m) if m.starts_with("message m000001: ")), "{err}");

    // A nameless result that answers a call is fine.
    let mut input = h(vec![u("go"), a_calls(&["c1"]), t("c1", "out")]);
    if let Some(ContentPart::ToolResult(r)) = input[2].content.first_mut() {
        r.name = String::new();
    }
    assert!(repaired(&input).notes.is_empty());
}

// ---------------------------------------------------------------------------------------------
// check_pairing itself.

#[test]
fn check_pairing_names_the_first_offending_message() {
    let cases: Vec<(Vec<Message>, &str)> = vec![
        (h(vec![u("go"), a_calls(&["c1"]), u("next")]), "message m000001: tool call `c1` has no result"),
        (h(vec![u("go"), t("c1", "x")]), "message m000001: tool result `c1` does not directly follow"),
        (h(vec![u("go"), a_calls(&["c1"]), u("x"), t("c1", "x")]), "message m000001: tool call `c1` has no result"),
        (h(vec![u("go"), a_calls(&["c1"]), t("c2", "x")]), "message m000002: tool result `c2` answers no call"),
        (h(vec![u("go"), a_calls(&["c1"]), t("c1", "x"), t("c1", "y")]), "message m000003: tool call `c1` already"),
        (h(vec![a_calls(&["c1"]), t("c1", "x"), a_calls(&["c1"]), t("c1", "y")]), "message m000002: tool call id"),
        (h(vec![u("go"), message(Role::Tool, vec![text("x")])]), "message m000001: a tool message carries no"),
        (h(vec![message(Role::User, vec![result("c1", "x")])]), "message m000000: a user message carries a tool"),
        (h(vec![a_calls(&[""]), t("", "x")]), "message m000000: a tool call has an empty id"),
        (h(vec![a_calls(&["c1"])]), "message m000000: tool call `c1` has no result"),
    ];
    for (messages, expected) in cases {
        let err = check_pairing(&messages).unwrap_err();
        assert!(err.starts_with(expected), "{err:?} does not start with {expected:?}");
    }
    let mut named = h(vec![a_calls(&["c1"]), t("c1", "x")]);
    named[1].tool_call_id = Some("c2".into());
    assert!(check_pairing(&named).unwrap_err().starts_with("message m000001: tool_call_id `c2`"));
}

// ---------------------------------------------------------------------------------------------
// Random damage.

/// Knuth's MMIX linear congruential generator.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// A well-formed history with unique markers in every string.
fn valid_history(rng: &mut Lcg, marker: &mut usize) -> Vec<Message> {
    let mut next = |prefix: &str| {
        *marker += 1;
        format!("<{prefix}{marker}>")
    };
    let mut messages = Vec::new();
    if rng.chance(50) {
        messages.push(sys(&next("system")));
    }
    for _ in 0..1 + rng.below(3) {
        messages.push(u(&next("user")));
        for _ in 0..rng.below(4) {
            let n = rng.below(4);
            let ids: Vec<String> = (0..n).map(|_| next("c")).collect();
            let mut content = Vec::new();
            if rng.chance(40) || n == 0 {
                content.push(text(&next("say")));
            }
            for id in &ids {
                let ContentPart::ToolCall(mut c) = call(id) else { unreachable!() };
                c.arguments = next("args");
                content.push(ContentPart::ToolCall(c));
            }
            messages.push(message(Role::Assistant, content));
            let outputs: Vec<(String, String)> = ids.iter().map(|id| (id.clone(), next("out"))).collect();
            if n > 1 && rng.chance(30) {
                let pairs: Vec<(&str, &str)> = outputs.iter().map(|(i, o)| (i.as_str(), o.as_str())).collect();
                messages.push(t_many(&pairs));
            } else {
                for (id, out) in &outputs {
                    messages.push(t(id, out));
                }
            }
        }
        messages.push(a(&next("answer")));
    }
    h(messages)
}

fn tool_positions(messages: &[Message]) -> Vec<usize> {
    (0..messages.len()).filter(|&i| messages[i].tool_results().next().is_some()).collect()
}

fn call_positions(messages: &[Message]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        for (k, part) in m.content.iter().enumerate() {
            if matches!(part, ContentPart::ToolCall(_)) {
                out.push((i, k));
            }
        }
    }
    out
}

fn pick<T: Copy>(rng: &mut Lcg, items: &[T]) -> Option<T> {
    if items.is_empty() { None } else { items.get(rng.below(items.len())).copied() }
}

/// Applies one random kind of damage.
fn damage(rng: &mut Lcg, messages: &mut Vec<Message>, marker: &mut usize) {
    match rng.below(10) {
        // Drop a result.
        0 => {
            if let Some(i) = pick(rng, &tool_positions(messages)) {
                let parts = &mut messages[i].content;
                let k = rng.below(parts.len());
                parts.remove(k);
                if parts.is_empty() {
                    messages.remove(i);
                }
            }
        }
        // Drop a call.
        1 => {
            if let Some((i, k)) = pick(rng, &call_positions(messages)) {
                messages[i].content.remove(k);
            }
        }
        // Give a call the id of another one, with or without its results.
        2 => {
            let calls = call_positions(messages);
            if let (Some((i, k)), Some((j, l))) = (pick(rng, &calls), pick(rng, &calls)) {
                let ContentPart::ToolCall(source) = &messages[i].content[k] else { return };
                let new = source.id.clone();
                let ContentPart::ToolCall(target) = &mut messages[j].content[l] else { return };
                let old = std::mem::replace(&mut target.id, new.clone());
                if rng.chance(60) {
                    for m in messages.iter_mut() {
                        for part in &mut m.content {
                            if let ContentPart::ToolResult(r) = part
                                && r.call_id == old
                            {
                                r.call_id = new.clone();
                            }
                        }
                    }
                }
            }
        }
        // Move a tool message later.
        3 => {
            if let Some(i) = pick(rng, &tool_positions(messages)) {
                let m = messages.remove(i);
                let to = i + rng.below(messages.len() - i + 1);
                messages.insert(to.min(messages.len()), m);
            }
        }
        // Move a tool message anywhere.
        4 => {
            if let Some(i) = pick(rng, &tool_positions(messages)) {
                let m = messages.remove(i);
                let to = rng.below(messages.len() + 1);
                messages.insert(to, m);
            }
        }
        // Insert a stray result.
        5 => {
            *marker += 1;
            let mut stray = t(&format!("<stray{marker}>"), &format!("<strayout{marker}>"));
            if rng.chance(70) {
                stray.id = format!("stray{marker}").into();
            }
            let to = rng.below(messages.len() + 1);
            messages.insert(to, stray);
        }
        // Duplicate a tool message somewhere after it.
        6 => {
            if let Some(i) = pick(rng, &tool_positions(messages)) {
                let mut copy = messages[i].clone();
                *marker += 1;
                copy.id = format!("dup{marker}").into();
                let to = i + 1 + rng.below(messages.len() - i);
                messages.insert(to.min(messages.len()), copy);
            }
        }
        // Give a message the id of another one.
        7 => {
            if !messages.is_empty() {
                let (i, j) = (rng.below(messages.len()), rng.below(messages.len()));
                messages[j].id = messages[i].id.clone();
            }
        }
        // Send tool results in a user message, or results inside an assistant message.
        8 => {
            if let Some(i) = pick(rng, &tool_positions(messages)) {
                if rng.chance(50) {
                    messages[i].role = Role::User;
                } else if i > 0 && messages[i - 1].role == Role::Assistant {
                    let m = messages.remove(i);
                    messages[i - 1].content.extend(m.content);
                }
            }
        }
        // Break the numbering or empty a message's text.
        _ => {
            if !messages.is_empty() {
                let i = rng.below(messages.len());
                if rng.chance(50) {
                    messages[i].sequence = 1000 + i as u64;
                } else if messages[i].tool_calls().next().is_none() && messages[i].tool_results().next().is_none() {
                    messages[i].content.clear();
                }
            }
        }
    }
}

#[test]
fn randomly_damaged_histories_are_always_repaired() {
    let mut rng = Lcg(0x5eed_0004);
    let mut marker = 0usize;
    let mut repaired_count = 0usize;
    for case in 0..1000 {
        let mut messages = valid_history(&mut rng, &mut marker);
        for _ in 0..1 + rng.below(4) {
            damage(&mut rng, &mut messages, &mut marker);
        }
        let out = match repair_history(messages.clone()) {
            Ok(out) => out,
            Err(e) => panic!("case {case}: {e}\n{}", serde_json::to_string_pretty(&messages).unwrap()),
        };
        assert_invariants(&messages, &out);
        assert_eq!(repair_history(messages.clone()).unwrap(), out, "case {case}: not deterministic");
        // Repairing a repaired history changes nothing.
        let again = repair_history(out.messages.clone()).unwrap();
        let notes: Vec<_> = again.notes.iter().filter(|n| !n.what.contains("without content")).collect();
        assert!(notes.is_empty(), "case {case}: {notes:#?}");
        assert_eq!(again.messages, out.messages, "case {case}");
        if !out.notes.is_empty() {
            repaired_count += 1;
        }
    }
    assert!(repaired_count > 800, "only {repaired_count} damaged histories needed a repair");
}

#[test]
fn random_garbage_is_repaired_too() {
    // Random roles, parts and ids from small pools: far from any real history.
    let mut rng = Lcg(0x6a4b_a6e0);
    let roles = [Role::System, Role::User, Role::Assistant, Role::Tool, Role::Summary];
    let call_ids = ["c1", "c2", "c3", ""];
    let mut marker = 0usize;
    for case in 0..1000 {
        let mut messages = Vec::new();
        for _ in 0..rng.below(12) {
            let mut content = Vec::new();
            for _ in 0..rng.below(4) {
                marker += 1;
                let id = call_ids[rng.below(call_ids.len())];
                content.push(match rng.below(4) {
                    0 => text(&format!("<text{marker}>")),
                    1 => ContentPart::Reasoning { text: format!("<think{marker}>"), signature: None },
                    2 => ContentPart::ToolCall(ToolCall {
                        id: id.into(),
                        name: "bash".into(),
                        arguments: format!("<args{marker}>"),
                    }),
                    _ => result(id, &format!("<out{marker}>")),
                });
            }
            let mut m = message(roles[rng.below(roles.len())], content);
            m.id = format!("m{}", rng.below(6)).into();
            m.sequence = rng.below(5) as u64;
            if rng.chance(30) {
                m.tool_call_id = Some(call_ids[rng.below(call_ids.len())].into());
            }
            messages.push(m);
        }
        let out = match repair_history(messages.clone()) {
            Ok(out) => out,
            Err(e) => panic!("case {case}: {e}\n{}", serde_json::to_string_pretty(&messages).unwrap()),
        };
        assert_invariants(&messages, &out);
        assert_eq!(repair_history(messages).unwrap(), out, "case {case}: not deterministic");
        let again = repair_history(out.messages.clone()).unwrap();
        assert_eq!(again.messages, out.messages, "case {case}");
    }
}
