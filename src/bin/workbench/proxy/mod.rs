//! `workbench proxy`: the engine in front of the agents people already use. A server on
//! 127.0.0.1 speaks the providers' APIs (Anthropic Messages, OpenAI Chat Completions); each
//! conversation an agent holds is an engine session saved in the trace store, whose prompt
//! goes upstream in place of the agent's. The translation is the library's `proxy` module;
//! this is its I/O: the server (`handler.rs`), the upstream client (`upstream.rs`), the
//! sessions' threads (`sessions.rs`) and the log (`log.rs`). Ctrl-C or SIGTERM: no new
//! requests, the ones in flight finish, every session is saved, exit 0.

mod handler;
mod log;
mod sessions;
mod upstream;

use std::io::Write;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use context_workbench::Config;
use context_workbench::native::{LlmEndpoint, OpenAiCompatibleClient, WorkspaceFs};
use context_workbench::proxy::Format;
use context_workbench::tokens::TokenCounter;

use handler::App;
use sessions::{Opener, Registry};
use upstream::Upstream;

/// The command line of `workbench proxy`.
pub struct Args {
    pub port: u16,
    /// `URL` (every route) or `anthropic=URL` / `openai=URL`, in order.
    pub upstream: Vec<String>,
    pub store: PathBuf,
    pub window: Option<u32>,
    pub llm_url: Option<String>,
    pub llm_model: Option<String>,
}

pub fn run(config: Config, args: Args) -> ExitCode {
    match serve(config, args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("workbench: proxy: {message}");
            ExitCode::from(2)
        }
    }
}

fn serve(mut config: Config, args: Args) -> Result<(), String> {
    if let Some(window) = args.window {
        config.window = window;
        config = config.validate().map_err(|e| e.to_string())?;
    }
    let (anthropic, openai) = upstreams(&args.upstream)?;
    let (workspace, root) = store_location(&args.store)?;
    config.store.root = root;
    let fs = WorkspaceFs::new(&workspace).map_err(|e| format!("workspace {}: {e}", workspace.display()))?;
    let store_dir = fs.root().join(&config.store.root);
    // Agents' file tools (Claude Code's Read) want absolute paths: forms name their originals so.
    if config.store.originals_base.is_empty() {
        config.store.originals_base = fs.root().to_string_lossy().into_owned();
    }
    let endpoint = LlmEndpoint::from_flags_and_env(args.llm_url, args.llm_model, |k| std::env::var(k).ok())
        .map_err(|e| e.message)?;
    let limits = config.proxy.clone();
    let timeout = Duration::from_millis(limits.upstream_timeout_ms);
    let opener = Opener {
        fs,
        llm: endpoint.map(OpenAiCompatibleClient::new),
        config: config.clone(),
        used_ids: Mutex::new(Default::default()),
    };
    let app = Arc::new(App {
        upstream: Upstream::new(anthropic, openai, timeout)?,
        registry: Registry::new(opener, limits.max_sessions as usize),
        log: log::Log::new(),
        counter: TokenCounter::new(config.encoding),
        limits,
    });
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, args.port))
            .await
            .map_err(|e| format!("cannot listen on 127.0.0.1:{}: {e} (--port 0 picks a free port)", args.port))?;
        let address = listener.local_addr().map_err(|e| e.to_string())?;
        let mut stdout = std::io::stdout();
        writeln!(stdout, "http://{address}\nANTHROPIC_BASE_URL=http://{address}\nOPENAI_BASE_URL=http://{address}/v1")
            .and_then(|()| stdout.flush())
            .map_err(|e| e.to_string())?;
        eprintln!(
            "workbench proxy: listening on http://{address}; upstreams {} (Anthropic Messages) and {} (OpenAI Chat Completions); sessions saved under {}",
            app.upstream.base(Format::Anthropic),
            app.upstream.base(Format::OpenAi),
            store_dir.display()
        );
        let router = axum::Router::new().fallback(handler::handle).with_state(Arc::clone(&app));
        let served = axum::serve(listener, router).with_graceful_shutdown(crate::signal::stop_signal()).await;
        app.log.finish();
        eprintln!("workbench proxy: stopping: saving every session");
        app.registry.close_all().await;
        served.map_err(|e| e.to_string())
    })
}

/// The upstream of each format: the providers' own unless `--upstream` names another.
fn upstreams(flags: &[String]) -> Result<(String, String), String> {
    let mut anthropic = Format::Anthropic.default_upstream().to_owned();
    let mut openai = Format::OpenAi.default_upstream().to_owned();
    for flag in flags {
        let (target, url) = match flag.split_once('=') {
            Some(("anthropic", url)) => (Some(Format::Anthropic), url),
            Some(("openai", url)) => (Some(Format::OpenAi), url),
            _ => (None, flag.as_str()),
        };
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!("--upstream `{flag}`: expected URL, anthropic=URL or openai=URL with http(s)://"));
        }
        let url = url.trim_end_matches('/').to_owned();
        match target {
            Some(Format::Anthropic) => anthropic = url,
            Some(Format::OpenAi) => openai = url,
            None => (anthropic, openai) = (url.clone(), url),
        }
    }
    Ok((anthropic, openai))
}

/// The engine's workspace and the trace root within it: the directory the proxy runs in and
/// the store's path in it; a store elsewhere has its parent as the workspace.
fn store_location(store: &Path) -> Result<(PathBuf, String), String> {
    let cwd = std::env::current_dir().map_err(|e| format!("the current directory: {e}"))?;
    let absolute = if store.is_absolute() { store.to_path_buf() } else { cwd.join(store) };
    std::fs::create_dir_all(&absolute).map_err(|e| format!("--store {}: {e}", store.display()))?;
    let absolute = absolute.canonicalize().map_err(|e| format!("--store {}: {e}", store.display()))?;
    let cwd = cwd.canonicalize().map_err(|e| format!("the current directory: {e}"))?;
    let (workspace, relative) = match absolute.strip_prefix(&cwd) {
        Ok(relative) if !relative.as_os_str().is_empty() => (cwd.clone(), relative.to_path_buf()),
        _ => {
            let parent = absolute.parent().ok_or("--store must not be the file system's root")?.to_path_buf();
            let name = absolute.file_name().map(PathBuf::from).ok_or("--store needs a directory name")?;
            (parent, name)
        }
    };
    let root = relative.to_str().ok_or("--store must be a UTF-8 path")?.replace('\\', "/");
    Ok((workspace, root))
}
