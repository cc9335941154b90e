//! The real-agent matrix: coding agents' CLIs, installed pinned from their registries
//! (`tests/clients`, by `.ci/setup`), each fix a typo in a scratch git workspace through the
//! proxy, against the scripted model of `proxy_support::coder` speaking the agent's own API, at a
//! window small enough that the engine compacts. For each: the fix landed, the session is one
//! trace with every model call managed, the upstream received fewer tokens than the agent sent,
//! calls and results pair in every upstream body, and the agent's plan is in the store where it
//! made one. Each run leaves its row for the README's table under `target/agent-matrix/`
//! (`node scripts/agent-table.mjs` writes the table from them).
#![cfg(not(target_arch = "wasm32"))]

#[macro_use]
mod proxy_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use proxy_support::coder::{self, Api, DONE, Loop, PLAN, TASK};
use proxy_support::gateway::Gateway;
use proxy_support::postgres::Postgres;
use proxy_support::{Build, PATIENCE, Proxy, Received, files_under, main_calls};
use serde_json::{Value, json};

const KEY: &str = "sk-proj-e2eagentkey0123456789abcdefghijklmnopqrstuvwxyz0123456";

/// The window the proxy runs at: small enough that the log the agents read is compacted.
const WINDOW: u32 = 20_000;

/// One agent of the matrix.
struct Agent {
    /// Its name as the proxy gives it (`Codex 0.169.0` starts with `Codex`).
    name: &'static str,
    api: Api,
    /// Whether its plan tool is in the requests, so the plan step writes a plan.
    plans: bool,
    /// It acts through text (an action or edit block in its reply), not through tools.
    text: bool,
    /// The model calls of its main loop the fix takes at least.
    calls: usize,
    /// The command that runs it on the task, with its configuration written under `home`.
    launch: fn(&Path, &Path, &str) -> Command,
}

/// An agent's launcher in `tests/clients/node_modules`.
fn client(path: &str) -> PathBuf {
    let bin = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/clients/node_modules").join(path);
    assert!(bin.exists(), "the test clients are not installed: run `bash .ci/setup` (or `npm ci` in tests/clients)");
    bin
}

/// `program` in the workspace `work`, with `home` as its home and none of the caller's keys.
fn agent(program: impl AsRef<std::ffi::OsStr>, work: &Path, home: &Path) -> Command {
    let mut command = Command::new(program);
    // `PWD` too: some agents (OpenCode) take it for their directory.
    command.current_dir(work).env("PWD", work).env("HOME", home);
    for (name, dir) in [("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share"), ("XDG_CACHE_HOME", ".cache")]
    {
        command.env(name, home.join(dir));
    }
    for name in ["OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "GEMINI_API_KEY"] {
        command.env_remove(name);
    }
    command
}

fn node(path: &str, work: &Path, home: &Path) -> Command {
    let mut command = agent("node", work, home);
    command.arg(client(path));
    command
}

fn write(path: PathBuf, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn codex(work: &Path, home: &Path, proxy: &str) -> Command {
    let config = format!(
        "model = \"gpt-5.5\"\nmodel_provider = \"proxy\"\napproval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\n\n[model_providers.proxy]\nname = \"proxy\"\nbase_url = \"{proxy}/v1\"\nenv_key = \"CODEX_TEST_KEY\"\nwire_api = \"responses\"\n"
    );
    write(home.join(".codex/config.toml"), &config);
    let mut command = node("@openai/codex/bin/codex.js", work, home);
    command.args(["exec", "--skip-git-repo-check", TASK]).env("CODEX_HOME", home.join(".codex"));
    command.env("CODEX_TEST_KEY", KEY);
    command
}

fn gemini_cli(work: &Path, home: &Path, proxy: &str) -> Command {
    let settings =
        json!({"security": {"auth": {"selectedType": "gemini-api-key"}}, "general": {"disableAutoUpdate": true}});
    write(home.join(".gemini/settings.json"), &settings.to_string());
    let mut command = node("@google/gemini-cli/bundle/gemini.js", work, home);
    command.args(["-m", "gemini-2.5-flash", "--yolo", "-p", TASK]);
    command.env("GEMINI_API_KEY", KEY).env("GOOGLE_GEMINI_BASE_URL", proxy).env("GEMINI_CLI_TRUST_WORKSPACE", "true");
    command.env_remove("GOOGLE_API_KEY").env_remove("GOOGLE_CLOUD_PROJECT");
    command
}

/// OpenCode through its OpenAI-compatible provider (Chat Completions).
fn opencode(work: &Path, home: &Path, proxy: &str) -> Command {
    let config = json!({
        "$schema": "https://opencode.ai/config.json",
        "provider": {"p": {"npm": "@ai-sdk/openai-compatible", "options": {"baseURL": format!("{proxy}/v1"), "apiKey": KEY}, "models": {"m": {"tool_call": true}}}},
        "model": "p/m",
        "permission": {"edit": "allow", "bash": "allow"},
    });
    write(work.join("opencode.json"), &config.to_string());
    let mut command = agent(client("opencode-ai/bin/opencode.exe"), work, home);
    command.args(["run", "-m", "p/m", TASK]);
    command.env("OPENCODE_DISABLE_MODELS_FETCH", "1").env("OPENCODE_DISABLE_AUTOUPDATE", "1");
    command
}

fn qwen_code(work: &Path, home: &Path, proxy: &str) -> Command {
    let mut command = node("@qwen-code/qwen-code/cli-entry.js", work, home);
    command.args(["--auth-type", "openai", "-m", "m", "--yolo", "-p", TASK]);
    command.env("OPENAI_BASE_URL", format!("{proxy}/v1")).env("OPENAI_API_KEY", KEY).env("OPENAI_MODEL", "m");
    command.env("QWEN_CODE_TRUST_WORKSPACE", "true");
    command
}

fn goose(work: &Path, home: &Path, proxy: &str) -> Command {
    let mut command = agent(client("@aaif/goose-binary-linux-x64/bin/goose"), work, home);
    command.args(["run", "--no-profile", "--with-builtin", "developer", "--max-turns", "12", "-t", TASK]);
    command
        .env("GOOSE_PROVIDER", "openai")
        .env("OPENAI_HOST", proxy)
        .env("OPENAI_API_KEY", KEY)
        .env("GOOSE_MODEL", "m");
    command.env("GOOSE_DISABLE_KEYRING", "1").env("GOOSE_MODE", "auto");
    command
}

/// Continue's `cn`, with a config of one OpenAI-compatible model.
fn continue_cn(work: &Path, home: &Path, proxy: &str) -> Command {
    let config = format!(
        "name: matrix\nversion: 0.0.1\nschema: v1\nmodels:\n  - name: m\n    provider: openai\n    model: m\n    apiBase: {proxy}/v1\n    apiKey: {KEY}\n    roles: [chat, edit, apply]\n    capabilities: [tool_use]\n"
    );
    let file = home.join("continue.yaml");
    write(file.clone(), &config);
    let mut command = node("@continuedev/cli/dist/cn.js", work, home);
    command.arg("--config").arg(&file).args(["--auto", "-p", TASK]);
    command
}

/// Cline's CLI through its OpenAI-compatible provider, its own compaction off (the engine's
/// does the work; Cline's rewrites the history it sends).
fn cline(work: &Path, home: &Path, proxy: &str) -> Command {
    let settings = json!({"version": 1, "lastUsedProvider": "openai-compatible", "modes": {}, "providers": {"openai-compatible": {
        "settings": {"provider": "openai-compatible", "apiKey": KEY, "model": "m", "baseUrl": format!("{proxy}/v1")},
        "updatedAt": "2026-01-01T00:00:00.000Z", "tokenSource": "manual"}}});
    write(home.join(".cline/data/settings/providers.json"), &settings.to_string());
    let mut command = agent(client("@cline/cli-linux-x64/bin/cline"), work, home);
    command.args(["--auto-approve", "true", "--compaction", "off", TASK]);
    command
}

/// A Python agent's command in its virtual environment under `tests/clients` (`.ci/setup`).
fn python_agent(venv: &str, program: &str, work: &Path, home: &Path) -> Command {
    let bin = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/clients").join(venv).join("bin").join(program);
    assert!(bin.exists(), "{venv} is not installed: run `bash .ci/setup`");
    agent(bin, work, home)
}

/// mini-swe-agent with its tool-calling config (one `bash` tool, replies not streamed).
fn mini_swe_agent(work: &Path, home: &Path, proxy: &str) -> Command {
    let mut command = python_agent(".venv-mini", "mini", work, home);
    command.args(["-y", "--exit-immediately", "-m", "openai/m", "-c", "mini.yaml", "-t", TASK]);
    command.arg("-c").arg(format!("model.model_kwargs.api_base={proxy}/v1"));
    command.arg("-c").arg(format!("model.model_kwargs.api_key={KEY}"));
    command.env("LITELLM_LOCAL_MODEL_COST_MAP", "True").env("MSWEA_CONFIGURED", "true");
    command.env("MSWEA_COST_TRACKING", "ignore_errors");
    command
}

/// mini-swe-agent in its text mode: no tools, one command block per reply.
fn mini_swe_agent_text(work: &Path, home: &Path, proxy: &str) -> Command {
    let mut command = mini_swe_agent(work, home, proxy);
    command.args(["-c", "mini_textbased.yaml", "--model-class", "litellm_textbased"]);
    command
}

/// aider, editing through text: each edit is tested with [`coder::EDIT_TEST`], whose output aider
/// sends back while it fails.
fn aider(work: &Path, home: &Path, proxy: &str) -> Command {
    let mut command = python_agent(".venv-aider", "aider", work, home);
    command.args(["--model", "openai/m", "--edit-format", "diff", "--yes-always"]);
    command.args(["--no-check-update", "--no-show-model-warnings", "--analytics-disable", "--no-pretty"]);
    command.args(["--no-gitignore", "--auto-test", "--test-cmd", coder::EDIT_TEST, "--message", TASK, "notes.txt"]);
    command.env("OPENAI_API_BASE", format!("{proxy}/v1")).env("OPENAI_API_KEY", KEY);
    command
}

/// What the agent's base URL points at.
#[derive(Debug, Clone, Copy)]
enum Front {
    /// One proxy of the build, on the workspace's folder store.
    One(Build),
    /// A team's gateway (#49): three native proxies on one PostgreSQL store behind HAProxy, round
    /// robin, so the agent's calls land on each in turn. The store is exported to the workspace's
    /// `.trace/` after the run, and read there as a folder store is.
    Team,
}

/// A running [`Front`].
enum Running {
    One(Proxy),
    Team(Postgres, Gateway),
}

impl Running {
    fn start(front: Front, work: &Path, args: &[&str]) -> Running {
        match front {
            Front::One(build) => Running::One(Proxy::start_build(build, work, args)),
            Front::Team => {
                let database = Postgres::start();
                let gateway = Gateway::start(work, &database.url(), 3, args);
                Running::Team(database, gateway)
            }
        }
    }

    fn url(&self) -> &str {
        match self {
            Running::One(proxy) => &proxy.url,
            Running::Team(_, gateway) => &gateway.url,
        }
    }

    /// Stop it (asserting each proxy ended well) and have its store in `work/.trace`; the log.
    fn stop(self, work: &Path) -> String {
        match self {
            Running::One(proxy) => {
                let (status, log) = proxy.stop();
                assert!(status.success(), "{log}");
                log
            }
            Running::Team(database, gateway) => {
                let (statuses, log) = gateway.stop();
                assert!(statuses.iter().all(|s| s.success()), "{log}");
                database.export(&work.join(".trace"));
                log
            }
        }
    }
}

/// Run `agent` through `front` and check what the matrix asserts.
fn run(front: Front, agent: &Agent) {
    let mode = if agent.text { "-text" } else { "" };
    let (work, home) = coder::workspace(&format!("{}{mode}-{front:?}", agent.name.replace(' ', "-")));
    let upstream = coder::upstream();
    let proxy = Running::start(front, &work, &["--upstream", &upstream.url, "--window", &WINDOW.to_string()]);
    // Its output goes to files: a pipe nobody reads while it runs would fill and stop it.
    let (out, err) = (work.with_file_name("agent.out"), work.with_file_name("agent.err"));
    let mut child = (agent.launch)(&work, &home, proxy.url())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("run {}: {e}", agent.name));
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() && started.elapsed() < PATIENCE {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let timed_out = child.try_wait().unwrap().is_none();
    if timed_out {
        let _ = child.kill();
    }
    let exit = child.wait().unwrap();
    stop_left_behind(&home);
    let (stdout, stderr) =
        (std::fs::read_to_string(&out).unwrap_or_default(), std::fs::read_to_string(&err).unwrap_or_default());
    let log = proxy.stop(&work);
    let tail = |text: &str| text.chars().rev().take(4000).collect::<Vec<_>>().into_iter().rev().collect::<String>();
    let said = format!(
        "{} ({exit}, timed out: {timed_out}): {}\n{}\nproxy log:\n{log}",
        agent.name,
        tail(&stdout),
        tail(&stderr)
    );
    assert!(exit.success(), "{said}");
    assert_eq!(std::fs::read_to_string(work.join("notes.txt")).unwrap(), "Hello world\n", "the fix landed: {said}");

    // One session, every model call of it managed and recorded.
    let store = work.join(".trace");
    let dirs = std::fs::read_dir(&store).map(|d| d.flatten().collect::<Vec<_>>()).unwrap_or_default();
    let traces: Vec<String> =
        dirs.iter().filter(|e| e.path().is_dir()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(traces.len(), 1, "one session: {traces:?}\n{said}");
    let trace = store.join(&traces[0]);
    let records = main_calls(&store, &traces[0]);
    let bodies: Vec<Value> = upstream
        .requests()
        .iter()
        .filter(|r| Api::of(&r.path) == Some(agent.api))
        .map(Received::json)
        .filter(|body| coder::main_loop(agent.api, body).is_some_and(|acts| (acts != Loop::Tools) == agent.text))
        .collect();
    assert!(bodies.len() >= agent.calls, "the agent went through the steps: {} calls\n{said}", bodies.len());
    // A text agent's first call, when it is a one-shot, is kept in memory by the proxy that passed
    // it until the next call continues it: through a gateway that call may land on another proxy,
    // which opens the session without it (a limit, docs/team.md).
    let first_elsewhere = matches!(front, Front::Team) && agent.text && records.len() + 1 == bodies.len();
    let counted = if first_elsewhere { records.len() + 1 } else { records.len() };
    assert_eq!(counted, bodies.len(), "every call of its main loop is the session's\n{said}");
    assert!(records.iter().all(|c| coder::managed(c, agent.text) && c["completed"] == json!(true)), "{said}");
    let named = records[0]["agent"].as_str().unwrap_or_default().to_owned();
    assert!(named.starts_with(agent.name), "named {named:?}\n{said}");
    for (k, body) in bodies.iter().enumerate() {
        let errors = coder::pairing_errors(agent.api, body);
        assert!(errors.is_empty(), "call {k}: {errors:?}\n{said}");
        // The previous reply's reasoning or signature went back as it came.
        let sealed = matches!(agent.api, Api::Responses | Api::Gemini);
        assert!(!sealed || k == 0 || body.to_string().contains(coder::SEALED), "call {k}\n{said}");
    }
    let sum = |key: &str| -> u64 { records.iter().map(|c| c[key].as_u64().unwrap()).sum() };
    let (sent, agent_tokens) = (sum("prompt_tokens"), sum("client_tokens"));
    // Never more than the agent sent; no fewer where its prompt fits whole (issue 45: a large
    // output is shown whole while the prompt holding it stays under the threshold).
    assert!(sent <= agent_tokens, "the upstream received no more tokens: {sent} vs {agent_tokens}\n{said}");
    let meta: Value = serde_json::from_str(&std::fs::read_to_string(trace.join("meta.json")).unwrap()).unwrap();
    // Titled by the task's words (mini-swe-agent's template puts "Please solve this issue:" first).
    let mission = meta["mission"].as_str().unwrap_or_default();
    assert!(mission.contains(TASK) && mission.len() < TASK.len() + 40, "titled {mission:?}");
    let plan: Value =
        std::fs::read_to_string(trace.join("goal.json")).map_or(Value::Null, |t| serde_json::from_str(&t).unwrap());
    let goals: Vec<(&str, &str)> = plan["goals"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|g| (g["description"].as_str().unwrap(), g["status"].as_str().unwrap()))
        .collect();
    if agent.plans {
        assert_eq!(goals, PLAN, "its plan tool is the plan\n{said}");
    }
    for (path, text) in files_under(&store) {
        assert!(!text.contains("e2eagentkey"), "the key is in {}", path.display());
    }
    assert!(!log.contains("e2eagentkey"));
    if !stdout.contains(DONE) {
        eprintln!("{}: the answer is not on its standard output", agent.name);
    }

    if let Front::One(build) = front {
        let api = format!("{:?}", agent.api);
        coder::matrix_row(build, &api, agent.text, WINDOW, agent.plans.then_some(goals.len()), &records);
    }
}

/// Stop what the agent left running (Cline's hub daemon): the processes whose `HOME` is the
/// scratch home.
fn stop_left_behind(home: &Path) {
    let marker = format!("HOME={}\0", home.display());
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        if String::from_utf8_lossy(&environ).contains(&marker) {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    }
}

const CODEX: Agent = Agent { name: "Codex", api: Api::Responses, plans: false, text: false, calls: 7, launch: codex };
const GEMINI_CLI: Agent =
    Agent { name: "Gemini CLI", api: Api::Gemini, plans: true, text: false, calls: 7, launch: gemini_cli };

const OPENCODE: Agent =
    Agent { name: "OpenCode", api: Api::Chat, plans: true, text: false, calls: 7, launch: opencode };
const QWEN_CODE: Agent =
    Agent { name: "Qwen Code", api: Api::Chat, plans: false, text: false, calls: 7, launch: qwen_code };
const GOOSE: Agent = Agent { name: "goose", api: Api::Chat, plans: false, text: false, calls: 7, launch: goose };
const CLINE: Agent = Agent { name: "Cline", api: Api::Chat, plans: false, text: false, calls: 7, launch: cline };
const MINI_SWE_AGENT: Agent =
    Agent { name: "mini-swe-agent", api: Api::Chat, plans: false, text: false, calls: 7, launch: mini_swe_agent };
const MINI_SWE_AGENT_TEXT: Agent =
    Agent { name: "mini-swe-agent", api: Api::Chat, plans: false, text: true, calls: 7, launch: mini_swe_agent_text };
const AIDER: Agent = Agent { name: "aider", api: Api::Chat, plans: false, text: true, calls: 4, launch: aider };
const CONTINUE: Agent =
    Agent { name: "Continue", api: Api::Chat, plans: false, text: false, calls: 7, launch: continue_cn };

fn opencode_session(build: Build) {
    run(Front::One(build), &OPENCODE);
}

fn qwen_code_session(build: Build) {
    run(Front::One(build), &QWEN_CODE);
}

fn goose_session(build: Build) {
    run(Front::One(build), &GOOSE);
}

fn continue_session(build: Build) {
    run(Front::One(build), &CONTINUE);
}

fn cline_session(build: Build) {
    run(Front::One(build), &CLINE);
}

fn mini_swe_agent_session(build: Build) {
    run(Front::One(build), &MINI_SWE_AGENT);
}

fn mini_swe_agent_text_session(build: Build) {
    run(Front::One(build), &MINI_SWE_AGENT_TEXT);
}

fn aider_session(build: Build) {
    run(Front::One(build), &AIDER);
}

fn codex_session(build: Build) {
    run(Front::One(build), &CODEX);
}

fn gemini_cli_session(build: Build) {
    run(Front::One(build), &GEMINI_CLI);
}

both_shells!(
    codex_session,
    gemini_cli_session,
    opencode_session,
    qwen_code_session,
    goose_session,
    continue_session,
    mini_swe_agent_session,
    mini_swe_agent_text_session,
    aider_session,
    cline_session
);

/// The matrix through a team's gateway (native proxies only: team mode is the CLI's).
mod team {
    use super::*;

    #[test]
    fn codex() {
        run(Front::Team, &CODEX);
    }

    #[test]
    fn gemini_cli() {
        run(Front::Team, &GEMINI_CLI);
    }

    #[test]
    fn opencode() {
        run(Front::Team, &OPENCODE);
    }

    #[test]
    fn qwen_code() {
        run(Front::Team, &QWEN_CODE);
    }

    #[test]
    fn goose() {
        run(Front::Team, &GOOSE);
    }

    #[test]
    fn continue_cn() {
        run(Front::Team, &CONTINUE);
    }

    #[test]
    fn mini_swe_agent() {
        run(Front::Team, &MINI_SWE_AGENT);
    }

    #[test]
    fn mini_swe_agent_text() {
        run(Front::Team, &MINI_SWE_AGENT_TEXT);
    }

    #[test]
    fn aider() {
        run(Front::Team, &AIDER);
    }

    #[test]
    fn cline() {
        run(Front::Team, &CLINE);
    }
}
