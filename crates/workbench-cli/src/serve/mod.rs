//! `workbench serve ROOT`: the query API (R8.4) over HTTP and live goal events over WebSocket,
//! for the traces under one trace root, on 127.0.0.1 only. The server only reads: nothing under
//! ROOT is created, changed or removed. Routes in `routes.rs`, the WebSocket in `watch.rs`.
//! Ctrl-C, SIGTERM or SIGHUP stops it cleanly: no new connections, requests in flight are answered,
//! every watcher gets a Close frame (1001, going away), and the process exits with 0.

mod errors;
mod feeds;
mod page;
mod routes;
mod signin;
mod tail;
mod watch;

use std::io::Write;
use std::net::Ipv4Addr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use context_workbench::store::TraceStore;
use workbench_cli::native::{NativeHost, StoreFs};

use crate::team_file::TeamFile;
use errors::ApiError;
use feeds::Feeds;
use signin::Viewer;

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    fs: StoreFs,
    /// What the dashboard's costs are priced at.
    feeds: Arc<Feeds>,
    /// Turns true when the server is stopping. Only watchers subscribe, so it knows when the
    /// last one has closed.
    stopping: Arc<tokio::sync::watch::Sender<bool>>,
    /// Team mode's members (`team.json` at the root): with one, the API asks for a token.
    team: Arc<TeamFile>,
    /// Requests for any host name are answered (the proxy beyond loopback, in team mode).
    any_host: bool,
}

impl AppState {
    fn new(fs: StoreFs, any_host: bool) -> AppState {
        let stopping = Arc::new(tokio::sync::watch::Sender::new(false));
        let team = Arc::new(TeamFile::new(fs.clone(), ".", any_host));
        AppState { feeds: Feeds::new(fs.clone()), fs, stopping, team, any_host }
    }
}

/// The query API and the dashboard over the traces of `store` (its trace root at `.`), for
/// `workbench proxy` to serve under its own address (`any_host`: beyond loopback, in team mode),
/// and what tells its watchers the server is stopping.
pub fn dashboard(store: StoreFs, any_host: bool) -> (axum::Router, Stopping) {
    let state = AppState::new(store, any_host);
    let stopping = Stopping(Arc::clone(&state.stopping));
    (routes::router(state), stopping)
}

/// Sends every watcher its Close frame (1001, going away).
pub struct Stopping(Arc<tokio::sync::watch::Sender<bool>>);

impl Stopping {
    pub fn stop(&self) {
        self.0.send_replace(true);
    }
}

/// How long watchers get to send their Close frames once the server is stopping.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// Serve the trace root `root`: a folder or a `postgres://` URL. A connection whose request
/// headers take longer than `header_timeout` is closed (the config's `proxy.header_timeout_ms`).
pub fn run(root: &str, port: u16, header_timeout: Duration) -> ExitCode {
    match serve(root, port, header_timeout) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("workbench: serve: {message}");
            ExitCode::from(2)
        }
    }
}

fn serve(root: &str, port: u16, header_timeout: Duration) -> Result<(), String> {
    let fs = StoreFs::open_root(root)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await.map_err(|e| {
            let in_use = e.kind() == std::io::ErrorKind::AddrInUse;
            context_workbench::proxy::args::cannot_listen(&format!("127.0.0.1:{port}"), in_use, &e.to_string())
        })?;
        let address = listener.local_addr().map_err(|e| e.to_string())?;
        let mut signal = crate::signal::StopSignal::listen()?;
        let mut stdout = std::io::stdout();
        writeln!(stdout, "http://{address}").and_then(|()| stdout.flush()).map_err(|e| e.to_string())?;
        let state = AppState::new(fs, false);
        let stop = Arc::clone(&state.stopping);
        let stopped = async move {
            signal.recv().await;
            // Not `eprintln!`: after a hangup the terminal's writes fail.
            let _ = writeln!(std::io::stderr(), "workbench: serve: stopping");
            stop.send_replace(true);
            let _ = tokio::time::timeout(CLOSE_GRACE, stop.closed()).await;
        };
        crate::connections::serve(listener, routes::router(state), header_timeout, stopped, None).await;
        Ok(())
    })
}

/// Run blocking work (file reads) off the async workers.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work).await.map_err(|e| ApiError::internal(format!("a reader failed: {e}")))
}

/// Read the store as `viewer` sees it on a blocking thread, through a native host created there
/// (the `Host` trait is not `Send`; its native futures complete at once, so `block_on` returns
/// at once).
async fn read_store<T: Send + 'static>(
    fs: &StoreFs,
    viewer: Viewer,
    read: impl FnOnce(&TraceStore<'_, NativeHost>) -> context_workbench::Result<T> + Send + 'static,
) -> Result<T, ApiError> {
    let fs = fs.clone();
    blocking(move || {
        let host = NativeHost::new(fs, None);
        let store = TraceStore::new(&host, ".").map_err(ApiError::store)?;
        let store = match viewer {
            Viewer::All => store,
            Viewer::Person(person) => store.only_person(&person),
        };
        read(&store).map_err(ApiError::store)
    })
    .await?
}
