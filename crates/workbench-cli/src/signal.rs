//! The signals the servers (`serve`, `proxy`) stop on: Ctrl-C, and where there are Unix signals
//! SIGTERM and SIGHUP (the terminal closed, an SSH session dropped; unless it was ignored when
//! the process started, as `nohup` does). Only Ctrl-C and SIGTERM cut short what a first stop
//! let finish: a closing terminal may send its hangup more than once.

/// The stop signals, taken over from the moment it is made: a server makes it before it
/// announces its address, so a signal that arrives at once stops it cleanly instead of ending
/// the process unsaved (the default action). Make it inside the runtime.
pub struct StopSignal {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
    #[cfg(unix)]
    hangup: Option<tokio::signal::unix::Signal>,
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
                hangup: if hangup_ignored() { None } else { Some(take(SignalKind::hangup())?) },
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
            _ = crate::connections::or_never(self.hangup.as_mut().map(|hangup| hangup.recv())) => {}
        }
        #[cfg(not(unix))]
        self.recv_cut().await;
    }

    /// The next Ctrl-C or SIGTERM: what cuts short a stop under way.
    pub async fn recv_cut(&mut self) {
        #[cfg(unix)]
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Whether SIGHUP was ignored when the process started (`nohup`): it stays ignored.
#[cfg(unix)]
fn hangup_ignored() -> bool {
    // SAFETY: reads the current action into a zeroed struct; changes nothing.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGHUP, std::ptr::null(), &mut action) == 0 && action.sa_sigaction == libc::SIG_IGN
    }
}
