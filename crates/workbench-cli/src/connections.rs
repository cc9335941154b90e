//! The connections of the CLI's servers (`workbench proxy`, `workbench serve`), as `axum::serve`
//! keeps them plus what it does not expose: a request whose headers do not arrive within
//! `proxy.header_timeout_ms` loses its connection, so half-open connections cannot hold the
//! server's descriptors for good. Replies go out at once
//! (no delayed ACK: ~40 ms per keep-alive request); once `stop` resolves no connection is
//! taken, idle ones close, and the others end with their requests, or half a second after
//! `cut` says so (an agent that stopped reading cannot hold the shutdown).

use std::future::Future;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// Serve `router` on `listener` until `stop` resolves, then until every connection has ended
/// or been cut.
pub async fn serve(
    listener: TcpListener,
    router: axum::Router,
    header_timeout: Duration,
    stop: impl Future<Output = ()>,
    cut: Option<watch::Receiver<bool>>,
) {
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(header_timeout);
    // `closing` tells every connection to close; each holds a receiver of `alive` until it ends.
    let (closing, closing_rx) = watch::channel(false);
    let alive = watch::Sender::new(());
    let mut stop = std::pin::pin!(stop);
    loop {
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                // Out of descriptors, say: wait for some to close, as `axum::serve` does.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let _ = tcp.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let mut connection = builder.serve_connection(TokioIo::new(tcp), service).with_upgrades();
        let (mut closing, still_open, cut) = (closing_rx.clone(), alive.subscribe(), cut.clone());
        tokio::spawn(async move {
            tokio::select! {
                _ = &mut connection => return drop(still_open),
                _ = closing.wait_for(|closing| *closing) => {}
            }
            std::pin::Pin::new(&mut connection).graceful_shutdown();
            tokio::select! {
                _ = connection => {}
                () = cut_short(cut) => {}
            }
            drop(still_open);
        });
    }
    drop(listener);
    closing.send_replace(true);
    alive.closed().await;
}

/// `wait`'s output, or never when there is nothing to wait for (a `select!` arm that may not be).
pub async fn or_never<F: Future>(wait: Option<F>) -> F::Output {
    match wait {
        Some(wait) => wait.await,
        None => std::future::pending().await,
    }
}

/// Resolves half a second after `cut` is set (what is written by then still reaches the agent);
/// never without one.
async fn cut_short(cut: Option<watch::Receiver<bool>>) {
    let set = match cut {
        Some(mut cut) => cut.wait_for(|cut| *cut).await.is_ok(),
        None => false,
    };
    if !set {
        return std::future::pending().await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
}
