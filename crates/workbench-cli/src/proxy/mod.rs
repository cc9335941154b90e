//! `workbench proxy`: the engine in front of the agents people already use. Every decision is the
//! library's (`context_workbench::proxy`: the flags, the gateway, each request's exchange, the
//! session table, the log lines); this is the native I/O around them: the server carrying out
//! each exchange's effects (`handler.rs`), its connections (`crate::connections`), the upstream client
//! (`upstream.rs`), the sessions' threads (`sessions.rs`), the log (`log.rs`), the spans of
//! `--otlp` (`telemetry.rs`) and the shutdown:
//! the first Ctrl-C, SIGTERM or SIGHUP stops new requests and gives those in flight
//! `proxy.shutdown_grace_ms`, then cuts them short; a second signal cuts at once; every session
//! is saved, exit 0.

mod handler;
mod log;
mod sessions;
mod telemetry;
mod upstream;

use std::io::{ErrorKind, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use context_workbench::Config;
use context_workbench::proxy::args::{
    ProxyArgs, Shell, StoreLocation, cannot_listen, config_from_file, is_database_store, usage,
};
use context_workbench::proxy::{DASHBOARD_PATH, Gateway, Upstreams};
use workbench_cli::native::{LlmEndpoint, OpenAiCompatibleClient, PgStore, StoreFs, WorkspaceFs};

use crate::signal::StopSignal;
use crate::team_file::TeamFile;
use handler::App;
use log::Log;
use sessions::{Registry, WorkerSetup};
use upstream::Upstream;

/// The LLM flags given before `proxy` (`workbench --llm-url … proxy`).
pub struct GlobalLlm {
    pub url: Option<String>,
    pub model: Option<String>,
}

/// Run the proxy with the flags after `proxy`; `config` is the global `--config`'s.
pub fn run(config: Config, llm: GlobalLlm, args: Vec<String>) -> ExitCode {
    let args = match ProxyArgs::parse_for(Shell::Native, args) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("workbench: proxy: {message}");
            return ExitCode::from(2);
        }
    };
    if args.help {
        println!("{}", usage(Shell::Native));
        return ExitCode::SUCCESS;
    }
    match serve(config, llm, args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("workbench: proxy: {message}");
            ExitCode::from(2)
        }
    }
}

fn serve(config: Config, llm: GlobalLlm, args: ProxyArgs) -> Result<(), String> {
    let config = match &args.config {
        Some(file) => {
            let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
            config_from_file(file, &text)?
        }
        None => config,
    };
    let otlp = context_workbench::proxy::telemetry::traces_url(args.otlp.as_deref().unwrap_or(&config.proxy.otlp))?;
    // Before the runtime: the exporter's blocking client must not live on it.
    let telemetry = otlp.as_deref().map(telemetry::Telemetry::start).transpose()?;
    let upstreams = Upstreams::from_flags(&args.upstream)?;
    let database = is_database_store(&args.store).then(|| PgStore::connect(&args.store)).transpose()?;
    let location = match database {
        Some(_) => database_location(&config)?,
        None => store_location(Path::new(&args.store))?,
    };
    let mut config = location.session_config(config, args.window).map_err(|e| e.to_string())?;
    // The originals' plain-text copies are rows, which no agent's file tool reads: not named.
    config.store.name_originals &= database.is_none();
    let disk = WorkspaceFs::new(&location.workspace).map_err(|e| format!("workspace {}: {e}", location.workspace))?;
    // The sessions' files (the trace root's) and the dashboard's (the trace root at `.`).
    let (fs, dashboard_fs) = match database {
        Some(db) => {
            let root = config.store.root.clone();
            let dashboard = StoreFs::Database { db: db.clone(), root: ".".into(), disk: None };
            (StoreFs::Database { db, root, disk: Some(disk) }, dashboard)
        }
        None => {
            let store_dir = disk.root().join(&config.store.root);
            let dashboard =
                WorkspaceFs::new(&store_dir).map_err(|e| format!("trace root {}: {e}", store_dir.display()))?;
            (StoreFs::Folder(disk), StoreFs::Folder(dashboard))
        }
    };
    let shown_store = dashboard_fs.shown();
    let listen = match &args.listen {
        Some(address) => address.parse::<SocketAddr>().map_err(|e| format!("--listen `{address}`: {e} (ADDR:PORT)"))?,
        None => SocketAddr::from((Ipv4Addr::LOCALHOST, args.port)),
    };
    let beyond_loopback = !listen.ip().is_loopback();
    let team = TeamFile::new(fs.clone(), &config.store.root, beyond_loopback);
    if beyond_loopback && !team.is_on() {
        return Err(format!(
            "--listen {listen}: beyond loopback the proxy needs team mode, and {shown_store} has no member: \
             `workbench team add NAME --admin --store {}` adds one",
            args.store
        ));
    }
    let (url, model) = (args.llm_url.or(llm.url), args.llm_model.or(llm.model));
    let endpoint = LlmEndpoint::from_flags_and_env(url, model, |k| std::env::var(k).ok()).map_err(|e| e.message)?;
    let gateway = Gateway::new(&config, upstreams, Shell::Native);
    let gateway = Arc::new(if beyond_loopback { gateway.answering_any_host() } else { gateway });
    let log = Arc::new(Log::new(Arc::clone(&gateway)));
    let setup = WorkerSetup::new(fs, endpoint.map(OpenAiCompatibleClient::new), config.clone(), Arc::clone(&log));
    let recovered = setup.recover()?;
    let timeout = Duration::from_millis(config.proxy.upstream_timeout_ms);
    let grace = Duration::from_millis(config.proxy.shutdown_grace_ms);
    // One thread for the proxy's I/O: its own work per request is small (the engine runs on the
    // session threads, the decisions and the dashboard's reads on the blocking pool), and handing
    // a reply between a session thread and one runtime thread wakes fewer threads than between
    // several (docs/performance.md: 0.1-0.3 ms less per request).
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|e| cannot_listen(&listen.to_string(), e.kind() == ErrorKind::AddrInUse, &e.to_string()))?;
        let address = format!("http://{}", listener.local_addr().map_err(|e| e.to_string())?);
        let app = Arc::new(App::new(
            Arc::clone(&gateway),
            Upstream::new(timeout)?,
            Registry::new(setup, config.proxy.max_sessions as usize),
            log,
            telemetry,
            team,
        ));
        let signal = StopSignal::listen()?;
        // The address first: on a terminal the log's progress line would end where it is printed.
        // A stdout closed early (`| head -1`) does not stop the proxy.
        let _ = writeln!(std::io::stdout(), "{}", gateway.banner(&address));
        app.log.line(&gateway.start_line(&address, &shown_store));
        if let Some(line) = recovered {
            app.log.line(&line);
        }
        if let Some(url) = &otlp {
            app.log.line(&context_workbench::proxy::telemetry::start_line(Shell::Native, url));
        }
        // The dashboard under a path no provider's API uses; everything else is the agents'.
        let (dashboard, dashboard_stopping) = crate::serve::dashboard(dashboard_fs, beyond_loopback);
        let router = axum::Router::new()
            .nest_service(DASHBOARD_PATH, dashboard)
            .fallback(handler::handle)
            .with_state(Arc::clone(&app));
        let header_timeout = Duration::from_millis(config.proxy.header_timeout_ms);
        let stopped = stop(Arc::clone(&app), grace, signal, dashboard_stopping);
        crate::connections::serve(listener, router, header_timeout, stopped, Some(app.cut_signal())).await;
        app.settled().await;
        app.log.finish();
        app.log.line(&app.gateway.stopping_line());
        app.log.unsaved(&app.registry.close_all().await);
        let exporting = Arc::clone(&app);
        let stopped = tokio::task::spawn_blocking(move || exporting.telemetry.as_ref().map(|t| t.stop())).await;
        if let Ok(Some(line)) = stopped {
            app.log.line(&line);
        }
        Ok(())
    })
}

/// Resolves at the first stop signal, once no new request is taken and the dashboard's watchers
/// are told; then cuts what is still in flight after the grace, or at a second signal.
async fn stop(app: Arc<App>, grace: Duration, mut signal: StopSignal, dashboard: crate::serve::Stopping) {
    signal.recv().await;
    app.begin_stopping();
    app.log.line(&app.gateway.stop_begun_line(app.in_flight(), grace.as_millis() as u64));
    dashboard.stop();
    let began = std::time::Instant::now();
    tokio::spawn(async move {
        let waited = tokio::select! {
            () = tokio::time::sleep(grace) => grace,
            () = signal.recv_cut() => began.elapsed(),
        };
        let in_flight = app.in_flight();
        if in_flight > 0 {
            app.log.line(&app.gateway.cut_line(in_flight, waited.as_millis() as u64));
        }
        app.cut();
    });
}

/// A database store's place: the working directory is the workspace (its files stay on disk),
/// the config's trace root the database's paths.
fn database_location(config: &Config) -> Result<StoreLocation, String> {
    let cwd =
        std::env::current_dir().and_then(|d| d.canonicalize()).map_err(|e| format!("the current directory: {e}"))?;
    let workspace = cwd.to_str().ok_or("the current directory must be a UTF-8 path")?;
    Ok(StoreLocation { workspace: workspace.to_owned(), root: config.store.root.clone() })
}

/// The store's place: created, then resolved with the working directory (links followed).
fn store_location(store: &Path) -> Result<StoreLocation, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("the current directory: {e}"))?;
    let absolute: PathBuf = if store.is_absolute() { store.to_path_buf() } else { cwd.join(store) };
    let unusable = |e: std::io::Error| StoreLocation::cannot_create(&absolute.display().to_string(), &e.to_string());
    std::fs::create_dir_all(&absolute).map_err(unusable)?;
    let real = |path: &Path, what: &str| -> Result<String, String> {
        let path = path.canonicalize().map_err(|e| format!("{what}: {e}"))?;
        path.to_str().map(str::to_owned).ok_or_else(|| format!("{what} must be a UTF-8 path"))
    };
    StoreLocation::new(
        &real(&cwd, "the current directory")?,
        &real(&absolute, &format!("the trace store {}", absolute.display()))?,
    )
}
