//! The language servers of this process (docs/lsp.md, "Servers"): one per folder,
//! language and sandbox, started on the first question, stopped after `idle` without one,
//! and started again when one has died (a crash, an out-of-memory kill) — at most
//! `MAX_RESTARTS` times in `RESTART_WINDOW`, after which the error is given instead of a
//! server that keeps dying.

use crate::{LspError, Server};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

const MAX_RESTARTS: usize = 3;
const RESTART_WINDOW: Duration = Duration::from_secs(300);

/// How to start a server: its command line (wrapped in the sandbox's helper when it runs
/// sandboxed), what to take out of its environment, and what must live as long as it.
pub struct Launch {
    pub argv: Vec<String>,
    pub env_removed: Vec<String>,
    /// Variables set for it (its private temporary folder in the sandbox).
    pub env_set: Vec<(String, String)>,
    /// Told apart in the pool: the same server under another sandbox is another server.
    pub sandbox_key: String,
    pub keep: Box<dyn std::any::Any + Send + Sync>,
    /// Whether the server may watch Skald's process id and exit when it is gone: not in
    /// the sandbox, whose process namespace has no such id (servers built on
    /// vscode-languageserver would exit within seconds); the helper's `--tied-to` ends
    /// them with Skald there.
    pub watches_parent: bool,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Key {
    root: PathBuf,
    language: &'static str,
    sandbox: String,
}

#[derive(Default)]
struct Slot {
    server: Option<Arc<Server>>,
    /// When it died lately.
    deaths: Vec<Instant>,
}

/// The servers of this process.
pub struct Pool {
    slots: tokio::sync::Mutex<HashMap<Key, Arc<tokio::sync::Mutex<Slot>>>>,
    idle: std::sync::Mutex<Duration>,
}

/// The process's pool; its reaper stops idle servers every half minute.
pub fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        slots: tokio::sync::Mutex::new(HashMap::new()),
        idle: std::sync::Mutex::new(Duration::from_secs(600)),
    })
}

impl Pool {
    /// Sets how long a server may go unasked before it is stopped.
    pub fn set_idle(&self, idle: Duration) {
        *self.idle.lock().unwrap_or_else(|e| e.into_inner()) = idle;
    }

    fn idle(&self) -> Duration {
        *self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The running server for `language` in `root`, started with `launch()` when there is
    /// none or it died. Returns it and whether it was (re)started now.
    pub async fn server(
        &'static self,
        root: &Path,
        language: &'static str,
        sandbox_key: &str,
        launch: impl FnOnce() -> Result<Launch, LspError>,
    ) -> Result<(Arc<Server>, bool), LspError> {
        self.reap_soon();
        let key = Key {
            root: root.to_path_buf(),
            language,
            sandbox: sandbox_key.to_string(),
        };
        let slot = self.slots.lock().await.entry(key).or_default().clone();
        let mut slot = slot.lock().await;
        if let Some(server) = &slot.server {
            if server.is_alive() {
                return Ok((server.clone(), false));
            }
            tracing::warn!(language, root = %root.display(), "a language server died; starting it again");
            slot.deaths.push(Instant::now());
            slot.server = None;
        }
        slot.deaths.retain(|t| t.elapsed() < RESTART_WINDOW);
        if slot.deaths.len() >= MAX_RESTARTS {
            return Err(LspError::Stopped {
                language,
                reason: format!(
                    "it died {} times in the last {} minutes; not started again for now",
                    slot.deaths.len(),
                    RESTART_WINDOW.as_secs() / 60
                ),
            });
        }
        // The same folder's server for this language under another sandbox (the chat's
        // hidden folders changed) is stopped, not left to pile up until it idles out.
        let others: Vec<_> = self
            .slots
            .lock()
            .await
            .iter()
            .filter(|(k, _)| k.root == root && k.language == language && k.sandbox != sandbox_key)
            .map(|(_, v)| v.clone())
            .collect();
        for other in others {
            let taken = other.try_lock().ok().and_then(|mut o| o.server.take());
            if let Some(old) = taken {
                old.stop().await;
            }
        }
        // A start that fails counts as a death too: an edit must not try a broken server
        // again and again.
        let launch = match launch() {
            Ok(l) => l,
            Err(e) => {
                slot.deaths.push(Instant::now());
                return Err(e);
            }
        };
        let started = Server::start(
            language,
            &launch.argv,
            root,
            &launch.env_removed,
            &launch.env_set,
            launch.watches_parent,
            launch.keep,
        )
        .await;
        let server = match started {
            Ok(s) => Arc::new(s),
            Err(e) => {
                slot.deaths.push(Instant::now());
                return Err(e);
            }
        };
        tracing::info!(language, root = %root.display(), "language server started");
        slot.server = Some(server.clone());
        Ok((server, true))
    }

    /// The server running for `language` in `root` under `sandbox_key`, if one is: never
    /// starts one.
    pub async fn running_server(
        &self,
        root: &Path,
        language: &'static str,
        sandbox_key: &str,
    ) -> Option<Arc<Server>> {
        let key = Key {
            root: root.to_path_buf(),
            language,
            sandbox: sandbox_key.to_string(),
        };
        let slot = self.slots.lock().await.get(&key)?.clone();
        let slot = slot.lock().await;
        slot.server.clone().filter(|s| s.is_alive())
    }

    /// The servers running now: language and folder.
    pub async fn running(&self) -> Vec<(&'static str, PathBuf)> {
        let slots: Vec<_> = self
            .slots
            .lock()
            .await
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut out = Vec::new();
        for (key, slot) in slots {
            if slot
                .lock()
                .await
                .server
                .as_ref()
                .is_some_and(|s| s.is_alive())
            {
                out.push((key.language, key.root));
            }
        }
        out
    }

    /// Starts the reaper the first time a server is asked for.
    fn reap_soon(&'static self) {
        static STARTED: OnceLock<()> = OnceLock::new();
        if STARTED.set(()).is_ok() {
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    self.reap().await;
                }
            });
        }
    }

    /// Stops every server: Skald is ending. (A server in the sandbox would end with Skald
    /// anyway, tied to it by the helper; one outside it would not.)
    pub async fn stop_all(&self) {
        let slots: Vec<_> = self.slots.lock().await.values().cloned().collect();
        for slot in slots {
            if let Some(server) = slot.lock().await.server.take() {
                server.stop().await;
            }
        }
    }

    /// Stops the servers idle longer than the pool's idle time.
    pub async fn reap(&self) {
        let idle = self.idle();
        let slots: Vec<_> = self.slots.lock().await.values().cloned().collect();
        for slot in slots {
            let mut slot = slot.lock().await;
            if slot.server.as_ref().is_some_and(|s| s.idle_for() > idle)
                && let Some(server) = slot.server.take()
            {
                tracing::info!(
                    language = server.language,
                    "stopping an idle language server"
                );
                server.stop().await;
            }
        }
    }
}
