//! Argument parsing and dispatch.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::{compress, count, dump, llm_check, prompt, proxy, replay, serve, stats, store, team};
use context_workbench::Config;
use context_workbench::proxy::args::config_from_file;
use context_workbench::tokens::Encoding;

#[derive(Parser)]
#[command(name = "workbench", version, about = "Context Workbench: a context engine for coding agents")]
struct Cli {
    /// Configuration file (TOML, or JSON when it ends in .json); unknown keys are errors.
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    /// OpenAI-compatible endpoint for summaries (or WORKBENCH_LLM_URL); the key is read from
    /// WORKBENCH_LLM_API_KEY only.
    #[arg(long, global = true, value_name = "URL")]
    llm_url: Option<String>,
    /// Model name sent to the endpoint (or WORKBENCH_LLM_MODEL).
    #[arg(long, global = true, value_name = "NAME")]
    llm_model: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Count the tokens of files: one `<tokens>\t<path>` line each, then `<total>\ttotal`.
    Count {
        /// Files or directories (walked in sorted order); `-` reads standard input.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// o200k_base (default) or cl100k_base; overrides the config file.
        #[arg(long, value_parser = Encoding::parse)]
        encoding: Option<Encoding>,
    },
    /// Print the history form of one tool output read from standard input, or with `--stats`
    /// the per-family savings over every tool output of the trajectories under a directory.
    Compress {
        /// The tool that produced the output (`Bash`, `read_text_file`, `grep_search` …).
        #[arg(long, required_unless_present = "stats")]
        tool: Option<String>,
        /// The call's arguments as JSON (`{"command": "pytest -q"}`).
        #[arg(long, default_value = "{}")]
        args: String,
        /// The command's exit code, when it had one.
        #[arg(long)]
        exit_code: Option<i32>,
        /// Print the structured result (family, text, token counts, notes) as JSON.
        #[arg(long)]
        json: bool,
        /// Statistics over every trajectory under this directory instead.
        #[arg(long, value_name = "DIR", conflicts_with_all = ["tool", "json", "exit_code"])]
        stats: Option<PathBuf>,
    },
    /// Replay recorded trajectories through the context strategies and print what each would
    /// have cost: tokens, cache, cost, peak, rewrites, edit recall.
    Replay {
        /// Trajectory files or directories (walked in sorted order); other files are skipped
        /// with a note.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// `all`, or a comma-separated list of: raw, mask, opencode, codex, workbench.
        #[arg(long, default_value = "all", value_name = "all|NAME,...")]
        strategy: String,
        /// The model's context window in tokens (default: the config file's `window`, 200000).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        window: Option<u32>,
        /// Write the workbench strategy's prompt of every call as JSON lines (one trajectory only).
        #[arg(long, value_name = "FILE.jsonl")]
        emit_prompts: Option<PathBuf>,
        /// Write a self-contained HTML report to DIR/index.html.
        #[arg(long, value_name = "DIR")]
        report: Option<PathBuf>,
        /// Save the workbench strategy's session of each trajectory as ROOT/<trace id>/ (a trace
        /// root that `workbench serve` and `workbench dump` read and an engine resumes).
        #[arg(long, value_name = "ROOT")]
        store: Option<PathBuf>,
        /// Also print one row per trajectory per strategy, with the strategies' notes.
        #[arg(long)]
        verbose: bool,
        /// Also replay the workbench with its block, anchor and index budgets scaled by 0, 0.25,
        /// 0.5, 1, 1.5, 2, 3 and 4: a table, and a cost-versus-recall chart in the report.
        #[arg(long)]
        sweep: bool,
        /// Cross-validate the budgets over K folds of the trajectories (the sweep included): per
        /// fold, the scale the default's rule picks on the other folds and what it gives on this one.
        #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(2..))]
        folds: Option<u32>,
    },
    /// Send one short prompt to the configured LLM and print its reply and usage.
    LlmCheck {
        #[arg(default_value = "Reply with the single word: ready")]
        prompt: String,
    },
    /// Serve the dashboard and the traces under a trace root over HTTP (the query API) and
    /// WebSocket (live goal events) on 127.0.0.1; prints `http://127.0.0.1:PORT` once
    /// listening (the dashboard is at that address). Read-only.
    Serve {
        /// The trace root: a directory holding `{trace_id}/meta.json`, … (`.trace/` by default
        /// in a workspace), or a PostgreSQL store (`postgres://…`).
        #[arg(required_unless_present = "store")]
        root: Option<String>,
        /// The trace root, as `workbench proxy --store` names it: a folder or `postgres://…`.
        #[arg(long, value_name = "DIR|URL", conflicts_with = "root")]
        store: Option<String>,
        /// The port to listen on; 0 picks a free one.
        #[arg(long, default_value_t = 8000)]
        port: u16,
    },
    /// Put the engine in front of an agent: a proxy on 127.0.0.1 that speaks Anthropic Messages,
    /// OpenAI Chat Completions, OpenAI Responses and Gemini, sends the engine's prompt upstream
    /// and saves every conversation in the trace store. Prints its address and the lines to
    /// paste (`ANTHROPIC_BASE_URL=…`, `OPENAI_BASE_URL=…`); Ctrl-C saves and stops.
    #[command(disable_help_flag = true)]
    Proxy {
        /// `--port N`, `--upstream URL` (or `NAME=URL` for anthropic, openai or gemini, repeatable), `--store
        /// DIR`, `--window N`, `--config FILE`; `workbench proxy --help` says more.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "FLAGS")]
        args: Vec<String>,
    },
    /// What the proxy's sessions cost and saved: a row per session (agent, title, calls, the
    /// tokens the agent sent vs what went upstream, the cached share the provider reported, the
    /// cost at the configured prices and the saving), then per day and agent, then in all.
    Stats {
        /// The trace root (`.trace` in the current directory by default), or a PostgreSQL store
        /// (`postgres://…`).
        root: Option<String>,
        /// The trace root, as `workbench proxy --store` names it: a folder or `postgres://…`.
        #[arg(long, value_name = "DIR|URL", conflicts_with = "root")]
        store: Option<String>,
        /// Only sessions last active on this UTC day (YYYY-MM-DD) or later.
        #[arg(long, value_name = "DAY")]
        since: Option<String>,
        /// Print JSON (`{"sessions", "days", "total"}`) instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Team mode's members (#49), kept in the store's `team.json`: with a member, the proxy and
    /// the dashboard ask every request for a member's token, and each session names its person.
    Team {
        #[command(subcommand)]
        action: TeamCommand,
    },
    /// Print one call's prompt as the model received it (the newest call's by default): its
    /// tokens, cached share and rewrites, then each message with its role, layer and original.
    Prompt {
        /// The trace root holding the trace (a folder or `postgres://…`).
        #[arg(default_value = ".trace")]
        root: String,
        /// The trace; needed when the root holds several.
        #[arg(long, value_name = "ID")]
        trace: Option<String>,
        /// The call, numbered as in the trace's `calls.jsonl` (the proxy's numbering).
        #[arg(long, value_name = "N")]
        call: Option<u64>,
        /// Print JSON (`{"trace_id", "prompt", "notes"?}`, as `GET /api/traces/{id}/prompt`).
        #[arg(long)]
        json: bool,
    },
    /// Print the step tree of a persisted trace in the debug format (seed 004), or as JSON.
    Dump {
        /// The trace root holding the trace (a folder or `postgres://…`).
        root: String,
        /// The trace to dump; needed when the root holds several.
        #[arg(long, value_name = "ID")]
        trace: Option<String>,
        /// Print JSON (`{"trace": {…}, "steps": [{…, "children": […]}]}`) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The trace store's own commands.
    Store {
        #[command(subcommand)]
        command: StoreCommand,
    },
}

#[derive(Subcommand)]
enum StoreCommand {
    /// Copy a folder store into a PostgreSQL store, every session with every file. A session
    /// already in the database is left as it is, so running it again copies only what is
    /// missing.
    Import {
        /// The folder store (`.trace`).
        folder: PathBuf,
        /// The PostgreSQL store, `postgres://USER@HOST/DB` (the password from PGPASSWORD).
        url: String,
    },
    /// Copy a PostgreSQL store into a folder store (made when missing), every session with
    /// every file: a backup anyone can read, or a way back to one proxy. A session already in the
    /// folder is left as it is.
    Export {
        /// The PostgreSQL store, `postgres://USER@HOST/DB`.
        url: String,
        /// The folder store.
        folder: PathBuf,
    },
}

#[derive(Subcommand)]
enum TeamCommand {
    /// Add a member and print their token, once (only its SHA-256 is kept).
    Add {
        /// 1 to 32 lowercase letters, digits, `-` or `_`.
        name: String,
        /// An admin's token shows every member's sessions on the dashboard.
        #[arg(long)]
        admin: bool,
        /// The trace store whose team it is (the proxy's `--store`).
        #[arg(long, default_value = ".trace", value_name = "DIR")]
        store: PathBuf,
    },
    /// Revoke a member's token; their row and their sessions stay.
    Revoke {
        name: String,
        #[arg(long, default_value = ".trace", value_name = "DIR")]
        store: PathBuf,
    },
    /// The members: name, admin, when added and revoked (never a token or its hash).
    List {
        #[arg(long, default_value = ".trace", value_name = "DIR")]
        store: PathBuf,
    },
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let config = match load_config(cli.config.as_deref()) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("workbench: {message}");
            return ExitCode::from(2);
        }
    };
    match cli.command {
        Command::Count { paths, encoding } => count::run(&paths, encoding.unwrap_or(config.encoding)),
        Command::Compress { stats: Some(dir), .. } => compress::stats(&config, &dir),
        Command::Compress { tool, args, exit_code, json, stats: None } => {
            compress::one(&config, compress::One { tool: tool.unwrap_or_default(), args, exit_code, json })
        }
        Command::Replay { paths, strategy, window, emit_prompts, report, store, verbose, sweep, folds } => {
            let folds = folds.map(|k| k as usize);
            let args = replay::Args { paths, strategy, window, emit_prompts, report, store, verbose, sweep, folds };
            replay::run(&config, args)
        }
        Command::LlmCheck { prompt } => llm_check::run(config, cli.llm_url, cli.llm_model, prompt),
        Command::Serve { root, store, port } => {
            let header_timeout = std::time::Duration::from_millis(config.proxy.header_timeout_ms);
            serve::run(&store.or(root).unwrap_or_default(), port, header_timeout)
        }
        Command::Proxy { args } => {
            proxy::run(config, proxy::GlobalLlm { url: cli.llm_url, model: cli.llm_model }, args)
        }
        Command::Dump { root, trace, json } => dump::run(&config, &root, trace.as_deref(), json),
        Command::Prompt { root, trace, call, json } => prompt::run(&root, trace.as_deref(), call, json),
        Command::Stats { root, store, since, json } => {
            stats::run(&store.or(root).unwrap_or_else(|| ".trace".into()), since.as_deref(), json)
        }
        Command::Store { command: StoreCommand::Import { folder, url } } => {
            store::copy(store::Copy::Import, &folder.to_string_lossy(), &url)
        }
        Command::Store { command: StoreCommand::Export { url, folder } } => {
            store::copy(store::Copy::Export, &url, &folder.to_string_lossy())
        }
        Command::Team { action } => match action {
            TeamCommand::Add { name, admin, store } => team::run(&store, team::Action::Add { name, admin }),
            TeamCommand::Revoke { name, store } => team::run(&store, team::Action::Revoke { name }),
            TeamCommand::List { store } => team::run(&store, team::Action::List),
        },
    }
}

/// The config file, or the defaults; errors name the file and the offending key.
fn load_config(path: Option<&Path>) -> Result<Config, String> {
    let Some(path) = path else { return Ok(Config::default()) };
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    config_from_file(&path.display().to_string(), &text)
}
