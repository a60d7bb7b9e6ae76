//! The signals that ask Skald to stop: Ctrl-C (SIGINT), and SIGTERM and SIGHUP, which a
//! service manager, `kill` or a closed terminal send. Each is taken like Ctrl-C, so what
//! Skald started — background processes above all — is stopped rather than left running
//! when the process ends by the signal's default action.

/// Listens from its creation on (`tokio::signal::ctrl_c()` installs its handler only
/// when first polled, which may be some time after the work started).
pub struct StopSignal {
    #[cfg(unix)]
    signals: Vec<tokio::signal::unix::Signal>,
}

impl StopSignal {
    pub fn listen() -> std::io::Result<StopSignal> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(StopSignal {
                signals: vec![
                    signal(SignalKind::interrupt())?,
                    signal(SignalKind::terminate())?,
                    signal(SignalKind::hangup())?,
                ],
            })
        }
        #[cfg(not(unix))]
        Ok(StopSignal {})
    }

    /// The next stop signal of any kind.
    pub async fn wait(&mut self) {
        #[cfg(unix)]
        {
            let waits = self.signals.iter_mut().map(|s| Box::pin(s.recv()));
            let _ = futures::future::select_all(waits).await;
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
    }
}
