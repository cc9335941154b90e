//! The signals the servers (`serve`, `proxy`) stop on: Ctrl-C, and where there are Unix signals
//! SIGTERM and SIGHUP (the terminal closed, an SSH session dropped).

/// The stop signals, taken over from the moment it is made: a server makes it before it
/// announces its address, so a signal that arrives at once stops it cleanly instead of ending
/// the process unsaved (the default action). Make it inside the runtime.
pub struct StopSignal {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
    #[cfg(unix)]
    hangup: tokio::signal::unix::Signal,
}

impl StopSignal {
    pub fn listen() -> Result<StopSignal, String> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let take = |kind| signal(kind).map_err(|e| format!("cannot take over the stop signals: {e}"));
            Ok(StopSignal {
                interrupt: take(SignalKind::interrupt())?,
                terminate: take(SignalKind::terminate())?,
                hangup: take(SignalKind::hangup())?,
            })
        }
        #[cfg(not(unix))]
        Ok(StopSignal {})
    }

    /// The next stop signal.
    pub async fn recv(&mut self) {
        #[cfg(unix)]
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
            _ = self.hangup.recv() => {}
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
    }
}
