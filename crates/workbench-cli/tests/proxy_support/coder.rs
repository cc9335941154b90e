//! The scripted model the real agents run against: one upstream speaking Anthropic Messages,
//! OpenAI Chat Completions and Responses, and the Gemini API, streamed and not. Whatever the
//! agent, it plays one small fix: read a large log in pieces with the agent's shell tool, write a plan
//! with the agent's plan tool (when it offers one), fix the typo in `notes.txt` with `sed`,
//! check it, answer. It picks the tools by name from the request and fills their arguments from
//! their schemas; the agent runs them for real. Which step comes next is read from the request:
//! every step leaves the marker `wbstep-N` in its text, its call's id and its command. An agent
//! that acts through text (mini-swe-agent's text mode) gets the same steps as command blocks; one
//! that edits through text (aider) gets edit blocks of `notes.txt`, which its test command checks.

use std::path::Path;
use std::process::Command;

use serde_json::{Map, Value, json};

use super::{Received, Reply, Upstream, anthropic_events, scratch};

/// What the agents are asked to do.
pub const TASK: &str = "Fix the typo in notes.txt.";

/// The scripted model's last answer.
pub const DONE: &str = "Fixed: notes.txt now says Hello world.";

/// The plan the plan step writes: (item, status).
pub const PLAN: [(&str, &str); 2] = [("Find the typo", "completed"), ("Fix notes.txt", "in_progress")];

/// The shell tools of the agents, by name.
const SHELL: [&str; 9] = [
    "Bash",
    "bash",
    "exec_command",
    "run_shell_command",
    "shell",
    "run_commands",
    "execute_command",
    "developer__shell",
    "Shell",
];

/// In what the model sends back sealed (a Responses reasoning item's encrypted content, a Gemini
/// call's `thoughtSignature`): the agent must return it as it came.
pub const SEALED: &str = "-sealed-";

/// The API of a request, by its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Messages,
    Chat,
    Responses,
    Gemini,
}

impl Api {
    pub fn of(path: &str) -> Option<Api> {
        let bare = path.split('?').next().unwrap_or("");
        if bare.ends_with("/messages") {
            Some(Api::Messages)
        } else if bare.ends_with("/chat/completions") {
            Some(Api::Chat)
        } else if bare.ends_with("/responses") {
            Some(Api::Responses)
        } else if bare.ends_with("enerateContent") {
            Some(Api::Gemini)
        } else {
            None
        }
    }
}

/// A scratch git workspace with the typo in `notes.txt` and a 3,000-line log; returns
/// (workspace, home).
pub fn workspace(name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let root = scratch(name);
    let (work, home) = (root.join("work"), root.join("home"));
    std::fs::create_dir_all(work.join("logs")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(work.join("notes.txt"), "Helo world\n").unwrap();
    let log: String =
        (0..3000).map(|i| format!("[{i:05}] INFO sync: reconciled sku-{i} after {} ms\n", i * 37 % 900)).collect();
    std::fs::write(work.join("logs/build.log"), log).unwrap();
    for args in [&["init", "-q", "."][..], &["add", "."], &["commit", "-qm", "start"]] {
        git(&work, args);
    }
    (work, home)
}

fn git(dir: &Path, args: &[&str]) {
    let mut command = Command::new("git");
    command.args(["-c", "user.email=t@e.st", "-c", "user.name=t"]).args(args).current_dir(dir);
    assert!(command.status().unwrap().success(), "git {args:?}");
}

/// The upstream that plays the fix for any agent.
pub fn upstream() -> Upstream {
    Upstream::start(|request: &Received| {
        let Some(api) = Api::of(&request.path).filter(|_| request.method == "POST") else {
            // goose lists the models first; anything else is not scripted.
            let models = json!({"object": "list", "data": [{"id": "m", "object": "model", "created": 1, "owned_by": "scripted"}]});
            return Reply::Json { status: 200, body: models.to_string() };
        };
        let body = request.json();
        let stream = body["stream"].as_bool().unwrap_or(false) || request.path.contains("streamGenerateContent");
        let turn = match main_loop(api, &body) {
            Some(Loop::Tools) => next_turn(&body, &tools(api, &body)),
            Some(Loop::Commands) => next_text_turn(&body),
            Some(Loop::Edits) => next_edit_turn(&body),
            None => Turn::Answer("Fix the typo in notes".into()),
        };
        reply(api, stream, &turn)
    })
}

/// How an agent's main loop acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loop {
    Tools,
    /// A command block per reply (mini-swe-agent's text mode).
    Commands,
    /// Edit blocks (aider).
    Edits,
}

/// How the request's agent acts, when it is a call of its main loop (not a title, a summary).
pub fn main_loop(api: Api, body: &Value) -> Option<Loop> {
    let text = body.to_string();
    if !tools(api, body).is_empty() {
        Some(Loop::Tools)
    } else if text.contains(TEXT_ACTION) {
        Some(Loop::Commands)
    } else if text.contains(EDIT_BLOCK) && text.contains(r#""role":"assistant""#) {
        // aider's main loop opens with its examples' turns; its summaries of the chat are one-shots.
        Some(Loop::Edits)
    } else {
        None
    }
}

/// The model's next turn.
#[derive(Debug, Clone)]
pub enum Turn {
    /// Step `n` calls `name` with `args`.
    Call {
        n: usize,
        name: String,
        args: Value,
    },
    Answer(String),
}

/// The request's tools: (name, parameters schema).
fn tools(api: Api, body: &Value) -> Vec<(String, Value)> {
    let list = body["tools"].as_array().cloned().unwrap_or_default();
    let declared = |tool: &Value| -> Vec<(String, Value)> {
        match api {
            Api::Messages => vec![(tool["name"].as_str().unwrap_or("").to_owned(), tool["input_schema"].clone())],
            Api::Chat => {
                let f = tool.get("function").unwrap_or(tool);
                vec![(f["name"].as_str().unwrap_or("").to_owned(), f["parameters"].clone())]
            }
            Api::Responses => vec![(tool["name"].as_str().unwrap_or("").to_owned(), tool["parameters"].clone())],
            Api::Gemini => tool["functionDeclarations"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|d| {
                    let schema = d.get("parametersJsonSchema").or(d.get("parameters")).cloned().unwrap_or_default();
                    (d["name"].as_str().unwrap_or("").to_owned(), schema)
                })
                .collect(),
        }
    };
    list.iter().flat_map(declared).filter(|(name, _)| !name.is_empty()).collect()
}

/// The newest step the request shows (its marker), if any.
fn last_step(body: &Value) -> Option<usize> {
    let text = body.to_string();
    text.match_indices("wbstep-")
        .filter_map(|(at, _)| {
            let digits: String = text[at + 7..].chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .max()
}

/// The command output that ends a mini-swe-agent run.
const SUBMIT: &str = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT";

/// How many pieces of the log the agent reads before it plans.
const READS: usize = 4;

/// What a step of the fix does.
enum Step {
    Shell(String),
    Plan,
    Answer,
}

/// Step `n`: read the log in [`READS`] pieces, plan, fix, check, then the answer.
fn step(n: usize, body: &Value) -> Step {
    match n {
        // The pause after the read: Qwen Code's shell (without node-pty) takes a command's output
        // when the command exits, and loses what it had not read yet from one that exits at once.
        n if n < READS => Step::Shell(format!("sed -n '{},{}p' logs/build.log; sleep 0.2", n * 750 + 1, (n + 1) * 750)),
        n if n == READS => Step::Plan,
        n if n == READS + 1 => Step::Shell("sed -i 's/Helo/Hello/' notes.txt".into()),
        n if n == READS + 2 => Step::Shell("cat notes.txt".into()),
        // mini-swe-agent ends its run on a command's output, not on an answer.
        _ if body.to_string().contains(SUBMIT) => Step::Shell(format!("echo {SUBMIT}")),
        _ => Step::Answer,
    }
}

/// The next step after the newest the request shows, past the plan step when there is no plan
/// tool to write it with.
fn next_step(body: &Value, plans: bool) -> (usize, Step) {
    let n = last_step(body).map_or(0, |n| n + 1);
    let n = if n == READS && !plans { n + 1 } else { n };
    (n, step(n, body))
}

/// The turn of an agent that acts through tools: the step with its shell or plan tool.
fn next_turn(body: &Value, tools: &[(String, Value)]) -> Turn {
    let shell = tools.iter().find(|(name, _)| SHELL.contains(&name.as_str()));
    let plan = tools.iter().find_map(|(name, _)| plan_args(name).map(|args| (name.clone(), args)));
    match next_step(body, plan.is_some()) {
        (n, Step::Shell(command)) => {
            let (name, schema) = shell.expect("the agent offers a shell tool");
            Turn::Call { n, name: name.clone(), args: fill(schema, &format!("{command} # wbstep-{n}")) }
        }
        (n, Step::Plan) => {
            let (name, args) = plan.expect("planned only with a plan tool");
            Turn::Call { n, name, args }
        }
        (_, Step::Answer) => Turn::Answer(DONE.into()),
    }
}

/// What marks the main loop of an agent that acts through text (mini-swe-agent's text mode):
/// the action block its prompt asks for, one per reply.
const TEXT_ACTION: &str = "mswea_bash_command";

/// The turn of an agent that acts through text: the step's command in its action block.
fn next_text_turn(body: &Value) -> Turn {
    match next_step(body, false) {
        (n, Step::Shell(command)) => {
            Turn::Answer(format!("{}\n\n```{TEXT_ACTION}\n{command} # wbstep-{n}\n```", step_text(n)))
        }
        _ => Turn::Answer(DONE.into()),
    }
}

/// What marks the main loop of an agent that edits through text (aider): its edit format's blocks.
const EDIT_BLOCK: &str = "<<<<<<< SEARCH";

/// The command aider tests each edit with: it prints a large piece of the log, and fails until
/// the typo is fixed.
pub const EDIT_TEST: &str = "sed -n '1,750p' logs/build.log; grep -q 'Hello world' notes.txt";

/// The turn of an agent that edits through text: an edit block of `notes.txt`. The first three
/// edits miss (the test's output comes back each time), the fourth fixes the typo.
fn next_edit_turn(body: &Value) -> Turn {
    let n = last_step(body).map_or(0, |n| n + 1);
    let (from, to) = match n {
        0 => ("Helo world", "Helo world!"),
        1 => ("Helo world!", "Helo world!!"),
        2 => ("Helo world!!", "Helo world"),
        _ => ("Helo world", "Hello world"),
    };
    let edit = format!("notes.txt\n```\n{EDIT_BLOCK}\n{from}\n=======\n{to}\n>>>>>>> REPLACE\n```");
    Turn::Answer(format!("{}\n\n{edit}", step_text(n)))
}

/// The plan step's arguments for a plan tool the engine reads.
fn plan_args(name: &str) -> Option<Value> {
    let items = |f: &dyn Fn(usize, &str, &str) -> Value| -> Value {
        PLAN.iter().enumerate().map(|(i, (text, status))| f(i, text, status)).collect()
    };
    Some(match name {
        "TodoWrite" => json!({"todos": items(&|_, t, s| json!({"content": t, "status": s, "activeForm": t}))}),
        "todowrite" => {
            json!({"todos": items(&|i, t, s| json!({"content": t, "status": s, "priority": "high", "id": (i + 1).to_string()}))})
        }
        "write_todos" => json!({"todos": items(&|_, t, s| json!({"description": t, "status": s}))}),
        "todo_write" => {
            json!({"todos": items(&|i, t, s| json!({"id": (i + 1).to_string(), "content": t, "status": s}))})
        }
        "update_plan" => json!({"plan": items(&|_, t, s| json!({"step": t, "status": s}))}),
        _ => return None,
    })
}

/// Arguments for a shell tool: `command` (or `cmd`, or a list of commands) and the other
/// required properties filled plainly.
fn fill(schema: &Value, command: &str) -> Value {
    let properties = schema["properties"].as_object().cloned().unwrap_or_default();
    let required: Vec<String> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(|k| k.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    let mut args = Map::new();
    let key = ["command", "cmd", "commands"].into_iter().find(|k| properties.contains_key(*k)).unwrap_or("command");
    for name in required.iter().map(String::as_str).chain([key]) {
        let kind = properties.get(name).and_then(|p| p["type"].as_str()).unwrap_or("string");
        let value = match (name == key, kind) {
            (true, "array") => json!([command]),
            (true, _) => json!(command),
            (false, "boolean") => json!(false),
            (false, "integer" | "number") => json!(if name.contains("timeout") { 60_000 } else { 1 }),
            (false, "array") => json!([]),
            (false, "object") => json!({}),
            (false, _) => json!("Run the next step of the fix"),
        };
        args.insert(name.to_owned(), value);
    }
    Value::Object(args)
}

fn step_text(n: usize) -> String {
    format!("Step {n} (wbstep-{n}).")
}

/// The turn as `api` sends it.
fn reply(api: Api, stream: bool, turn: &Turn) -> Reply {
    let (text, call) = match turn {
        Turn::Call { n, name, args } => (step_text(*n), Some((format!("call_wbstep-{n}"), name.clone(), args.clone()))),
        Turn::Answer(text) => (text.clone(), None),
    };
    let json = |status, body: Value| Reply::Json { status, body: body.to_string() };
    let events = |events| Reply::Events { events, cut_after: None };
    match api {
        Api::Messages => {
            let mut blocks = vec![json!({"type": "text", "text": text})];
            if let Some((id, name, args)) = &call {
                blocks.push(json!({"type": "tool_use", "id": id, "name": name, "input": args}));
            }
            let usage = json!({"input_tokens": 9000, "output_tokens": 30});
            if stream {
                return events(anthropic_events(&format!("msg_{}", unique()), &blocks, usage));
            }
            let stop = if call.is_some() { "tool_use" } else { "end_turn" };
            json(
                200,
                json!({"id": format!("msg_{}", unique()), "type": "message", "role": "assistant", "model": "m", "content": blocks, "stop_reason": stop, "stop_sequence": null, "usage": usage}),
            )
        }
        Api::Chat => {
            let calls: Vec<Value> = call
                .iter()
                .map(|(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}))
                .collect();
            let finish = if calls.is_empty() { "stop" } else { "tool_calls" };
            let usage = json!({"prompt_tokens": 9000, "completion_tokens": 30, "total_tokens": 9030});
            let id = format!("chatcmpl-{}", unique());
            if !stream {
                let mut message = json!({"role": "assistant", "content": text});
                if !calls.is_empty() {
                    message["tool_calls"] = json!(calls);
                }
                return json(
                    200,
                    json!({"id": id, "object": "chat.completion", "created": 1, "model": "m", "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}),
                );
            }
            let chunk = |delta: Value, finish: Value| {
                (
                    String::new(),
                    json!({"id": id, "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
                )
            };
            let mut chunks = vec![chunk(json!({"role": "assistant", "content": text}), Value::Null)];
            for (index, c) in calls.iter().enumerate() {
                let mut c = c.clone();
                c["index"] = json!(index);
                chunks.push(chunk(json!({"tool_calls": [c]}), Value::Null));
            }
            chunks.push(chunk(json!({}), json!(finish)));
            chunks.push((String::new(), json!({"id": id, "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [], "usage": usage})));
            chunks.push((String::new(), json!("[DONE]")));
            events(chunks)
        }
        Api::Responses => {
            let mut output = vec![
                json!({"type": "reasoning", "id": format!("rs_{}", unique()), "summary": [], "encrypted_content": format!("gAAAA{SEALED}{}", unique())}),
                json!({"type": "message", "id": format!("msg_{}", unique()), "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": text, "annotations": []}]}),
            ];
            if let Some((id, name, args)) = &call {
                output.push(json!({"type": "function_call", "id": format!("fc_{}", unique()), "status": "completed", "call_id": id, "name": name, "arguments": args.to_string()}));
            }
            let usage = json!({"input_tokens": 9000, "input_tokens_details": {"cached_tokens": 6000}, "output_tokens": 30, "total_tokens": 9030});
            let id = format!("resp_{}", unique());
            let done = json!({"id": id, "object": "response", "status": "completed", "model": "m", "output": output, "usage": usage});
            if !stream {
                return json(200, done);
            }
            let mut list = vec![(
                "response.created".to_owned(),
                json!({"type": "response.created", "response": {"id": id, "object": "response", "status": "in_progress", "output": []}}),
            )];
            for (i, item) in output.iter().enumerate() {
                list.push((
                    "response.output_item.added".into(),
                    json!({"type": "response.output_item.added", "output_index": i, "item": item}),
                ));
                list.push((
                    "response.output_item.done".into(),
                    json!({"type": "response.output_item.done", "output_index": i, "item": item}),
                ));
            }
            list.push(("response.completed".into(), json!({"type": "response.completed", "response": done})));
            events(list)
        }
        Api::Gemini => {
            let mut parts = vec![json!({"text": text})];
            if let Some((_, name, args)) = &call {
                parts.push(json!({"functionCall": {"name": name, "args": args}, "thoughtSignature": format!("c2ln{SEALED}{}", unique())}));
            }
            let chunk = json!({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}], "usageMetadata": {"promptTokenCount": 9000, "cachedContentTokenCount": 6000, "candidatesTokenCount": 30, "totalTokenCount": 9030}, "modelVersion": "m"});
            if stream { events(vec![(String::new(), chunk)]) } else { json(200, chunk) }
        }
    }
}

/// Whether a call record of an agent (`text`: one acting through text) was managed: every call
/// is, but a text agent's opening one-shot.
pub fn managed(record: &Value, text: bool) -> bool {
    record["managed"] == json!(true) || text && opening(record)
}

/// Whether a call record is the opening one-shot of an agent that acts through text: passed
/// through as it came (nothing to manage yet), counted once its conversation went on.
pub fn opening(record: &Value) -> bool {
    record["call"] == json!(1)
        && record["notes"][0].as_str().is_some_and(|n| n.starts_with("the conversation's first call"))
}

/// Leave an agent's row for the README's table (`node scripts/agent-table.mjs`) in
/// `target/agent-matrix/`: its name as the proxy gave it, its API, whether it acts through text,
/// the shell, its calls, the plan items read (`None`: it offers no plan tool) and the tokens it
/// sent and the engine sent.
pub fn matrix_row(build: super::Build, api: &str, text: bool, window: u32, plan: Option<usize>, records: &[Value]) {
    let sum = |key: &str| -> u64 { records.iter().map(|c| c[key].as_u64().unwrap_or(0)).sum() };
    let agent = records.first().and_then(|c| c["agent"].as_str()).unwrap_or("unknown").to_owned();
    let row = json!({
        "agent": agent,
        "api": api,
        "text": text,
        "build": format!("{build:?}"),
        "calls": records.len(),
        "managed": records.iter().all(|c| managed(c, text)),
        "plan": plan,
        "window": window,
        "client_tokens": sum("client_tokens"),
        "prompt_tokens": sum("prompt_tokens"),
    });
    eprintln!("{row}");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/agent-matrix");
    std::fs::create_dir_all(&dir).unwrap();
    let mut name: String =
        agent.split(' ').take_while(|w| !w.starts_with(char::is_numeric)).collect::<Vec<_>>().join("-");
    if text {
        name.push_str("-text");
    }
    std::fs::write(dir.join(format!("{name}-{build:?}.json")), format!("{row}\n")).unwrap();
}

/// A number no reply used before (message ids must differ).
fn unique() -> usize {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
}

/// What is wrong with the pairing of calls and results in a request body of `api`: each call
/// answered once, after it; each result answering a call before it.
pub fn pairing_errors(api: Api, body: &Value) -> Vec<String> {
    let mut events: Vec<(bool, String)> = Vec::new(); // (is a call, id)
    let list = |v: &Value| v.as_array().cloned().unwrap_or_default();
    match api {
        Api::Messages => {
            for message in list(&body["messages"]) {
                for block in list(&message["content"]) {
                    match block["type"].as_str() {
                        Some("tool_use") => events.push((true, block["id"].as_str().unwrap_or("").to_owned())),
                        Some("tool_result") => {
                            events.push((false, block["tool_use_id"].as_str().unwrap_or("").to_owned()))
                        }
                        _ => {}
                    }
                }
            }
        }
        Api::Chat => {
            for message in list(&body["messages"]) {
                for call in list(&message["tool_calls"]) {
                    events.push((true, call["id"].as_str().unwrap_or("").to_owned()));
                }
                if message["role"] == "tool" {
                    events.push((false, message["tool_call_id"].as_str().unwrap_or("").to_owned()));
                }
            }
        }
        Api::Responses => {
            for item in list(&body["input"]) {
                let kind = item["type"].as_str().unwrap_or("");
                if kind == "function_call" || kind == "custom_tool_call" {
                    events.push((true, item["call_id"].as_str().unwrap_or("").to_owned()));
                } else if kind.ends_with("_output") {
                    events.push((false, item["call_id"].as_str().unwrap_or("").to_owned()));
                }
            }
        }
        Api::Gemini => {
            for content in list(&body["contents"]) {
                for part in list(&content["parts"]) {
                    if let Some(call) = part.get("functionCall") {
                        events.push((true, call["id"].as_str().or(call["name"].as_str()).unwrap_or("").to_owned()));
                    } else if let Some(response) = part.get("functionResponse") {
                        events.push((
                            false,
                            response["id"].as_str().or(response["name"].as_str()).unwrap_or("").to_owned(),
                        ));
                    }
                }
            }
        }
    }
    let mut open: Vec<String> = Vec::new();
    let mut errors = Vec::new();
    for (is_call, id) in events {
        if is_call {
            open.push(id);
        } else if let Some(k) = open.iter().position(|o| *o == id) {
            open.remove(k);
        } else {
            errors.push(format!("a result for `{id}` answers no call before it"));
        }
    }
    errors.extend(open.into_iter().map(|id| format!("the call `{id}` is never answered")));
    errors
}
