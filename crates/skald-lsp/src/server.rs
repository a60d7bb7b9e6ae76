//! One running language server, spoken to over its stdin and stdout with async-lsp's
//! client main loop. What it publishes (diagnostics) is kept per file with a count, so a
//! caller can wait for the first publication after its own change; what it asks of us
//! (configuration, capability registrations, progress tokens) is answered with nothing,
//! which every server takes as "the defaults".

use crate::{LspError, text};
use async_lsp::router::Router;
use async_lsp::{MainLoop, ServerSocket};
use lsp_types::notification::{
    DidChangeTextDocument, DidOpenTextDocument, Exit, Initialized, PublishDiagnostics,
};
use lsp_types::request::{
    GotoDefinition, Initialize, References, Shutdown, WorkspaceConfiguration,
};
use lsp_types::{
    ClientCapabilities, Diagnostic, DidChangeTextDocumentParams, DidOpenTextDocumentParams,
    GotoDefinitionParams, GotoDefinitionResponse, InitializeParams, Location, Position,
    PublishDiagnosticsClientCapabilities, ReferenceContext, ReferenceParams,
    TextDocumentClientCapabilities, TextDocumentContentChangeEvent, TextDocumentIdentifier,
    TextDocumentItem, TextDocumentPositionParams, Url, VersionedTextDocumentIdentifier,
    WorkspaceFolder,
};
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

/// How long a server has to answer `initialize` (a cold TypeScript or Rust project takes
/// seconds).
const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a request (definition, references) may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// After a first publication, how long further ones (a server that sends syntax errors
/// first, then types) are waited for.
const SETTLE: Duration = Duration::from_millis(300);
/// Diagnostics kept per file, and files kept, of what a server publishes: a server
/// flooding them must not grow Skald without end.
const MAX_DIAGNOSTICS_PER_FILE: usize = 1000;
const MAX_FILES_PUBLISHED: usize = 20_000;

/// What the server published for one file.
#[derive(Debug, Clone, Default)]
struct Published {
    /// Publications so far.
    count: u64,
    diagnostics: Vec<Diagnostic>,
}

#[derive(Default)]
struct Shared {
    published: Mutex<HashMap<Url, Published>>,
    changed: tokio::sync::Notify,
    alive: AtomicBool,
    /// Why the main loop ended, once it has.
    ended: Mutex<Option<String>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A language server, started.
pub struct Server {
    pub language: &'static str,
    pub root: PathBuf,
    socket: ServerSocket,
    shared: Arc<Shared>,
    child: Mutex<Option<tokio::process::Child>>,
    /// Versions of the files opened, by URI.
    opened: Mutex<HashMap<Url, i32>>,
    last_used: Mutex<Instant>,
    /// What must live as long as the server (its sandbox's private temporary folder).
    _keep: Box<dyn std::any::Any + Send + Sync>,
}

impl Server {
    /// Starts `argv` in `root` (with `env_removed` taken out of its environment) and
    /// initializes it for that folder.
    pub async fn start(
        language: &'static str,
        argv: &[String],
        root: &Path,
        env_removed: &[String],
        env_set: &[(String, String)],
        watches_parent: bool,
        keep: Box<dyn std::any::Any + Send + Sync>,
    ) -> Result<Server, LspError> {
        let (program, args) = argv.split_first().ok_or_else(|| LspError::Start {
            language,
            program: String::new(),
            reason: "no command".into(),
        })?;
        let start_error = |reason: String| LspError::Start {
            language,
            program: program.clone(),
            reason,
        };
        let mut command = tokio::process::Command::new(program);
        command
            .args(args)
            .current_dir(root)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            // Its own process group, ended whole: a server's workers go with it.
            .process_group(0)
            .kill_on_drop(true);
        for name in env_removed {
            command.env_remove(name);
        }
        for (name, value) in env_set {
            command.env(name, value);
        }
        let mut child = command.spawn().map_err(|e| start_error(e.to_string()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| start_error("no stdout".into()))?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| start_error("no stdin".into()))?;
        let shared = Arc::new(Shared::default());
        shared.alive.store(true, Ordering::SeqCst);
        let (main_loop, socket) = MainLoop::new_client(|_| router(shared.clone()));
        let ended = shared.clone();
        // async-lsp's loop panics once every sender to it is gone while it still reads:
        // it holds one itself, and ends when the server's output does.
        let keep_sending = socket.clone();
        tokio::spawn(async move {
            let _keep_sending = keep_sending;
            let result = main_loop
                .run_buffered(
                    crate::framing::Guarded::new(stdout.compat()),
                    stdin.compat_write(),
                )
                .await;
            *lock(&ended.ended) = Some(match result {
                Ok(()) => "it closed its output".to_string(),
                Err(e) => e.to_string(),
            });
            ended.alive.store(false, Ordering::SeqCst);
            ended.changed.notify_waiters();
        });
        let server = Server {
            language,
            root: root.to_path_buf(),
            socket,
            shared,
            child: Mutex::new(Some(child)),
            opened: Mutex::new(HashMap::new()),
            last_used: Mutex::new(Instant::now()),
            _keep: keep,
        };
        server.initialize(watches_parent).await?;
        Ok(server)
    }

    async fn initialize(&self, watches_parent: bool) -> Result<(), LspError> {
        let root = text::uri_of(&self.root)?;
        #[allow(deprecated)] // root_uri: older servers read only it.
        let params = InitializeParams {
            process_id: watches_parent.then(std::process::id),
            root_uri: Some(root.clone()),
            workspace_folders: Some(vec![WorkspaceFolder {
                uri: root,
                name: self
                    .root
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "root".into()),
            }]),
            capabilities: ClientCapabilities {
                text_document: Some(TextDocumentClientCapabilities {
                    publish_diagnostics: Some(PublishDiagnosticsClientCapabilities {
                        version_support: Some(true),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        self.ask::<Initialize>(params, INITIALIZE_TIMEOUT).await?;
        self.socket
            .notify::<Initialized>(lsp_types::InitializedParams {})
            .map_err(|e| self.stopped(e.to_string()))
    }

    /// Sends a request and waits for its answer, the server's death or `timeout`.
    async fn ask<R: lsp_types::request::Request>(
        &self,
        params: R::Params,
        timeout: Duration,
    ) -> Result<R::Result, LspError> {
        self.touch();
        match tokio::time::timeout(timeout, self.socket.request::<R>(params)).await {
            Err(_) => Err(LspError::TimedOut {
                language: self.language,
                secs: timeout.as_secs(),
            }),
            Ok(Ok(result)) => Ok(result),
            Ok(Err(async_lsp::Error::Response(e))) => Err(LspError::Refused {
                language: self.language,
                message: e.message,
            }),
            Ok(Err(e)) => Err(self.stopped(e.to_string())),
        }
    }

    fn stopped(&self, fallback: String) -> LspError {
        LspError::Stopped {
            language: self.language,
            reason: lock(&self.shared.ended).clone().unwrap_or(fallback),
        }
    }

    /// Whether the server still runs.
    pub fn is_alive(&self) -> bool {
        self.shared.alive.load(Ordering::SeqCst)
    }

    pub fn idle_for(&self) -> Duration {
        lock(&self.last_used).elapsed()
    }

    fn touch(&self) {
        *lock(&self.last_used) = Instant::now();
    }

    /// Tells the server `path` now holds `content` (opening it the first time). Returns
    /// how many publications for it came before, for `diagnostics_after`.
    pub fn sync(&self, path: &Path, content: &str) -> Result<u64, LspError> {
        self.touch();
        let uri = text::uri_of(path)?;
        let before = lock(&self.shared.published)
            .get(&uri)
            .map_or(0, |p| p.count);
        let mut opened = lock(&self.opened);
        let sent = match opened.get_mut(&uri) {
            Some(version) => {
                *version += 1;
                self.socket
                    .notify::<DidChangeTextDocument>(DidChangeTextDocumentParams {
                        text_document: VersionedTextDocumentIdentifier {
                            uri,
                            version: *version,
                        },
                        content_changes: vec![TextDocumentContentChangeEvent {
                            range: None,
                            range_length: None,
                            text: content.to_string(),
                        }],
                    })
            }
            None => {
                opened.insert(uri.clone(), 1);
                self.socket
                    .notify::<DidOpenTextDocument>(DidOpenTextDocumentParams {
                        text_document: TextDocumentItem {
                            uri,
                            language_id: crate::languages::language_id(path).to_string(),
                            version: 1,
                            text: content.to_string(),
                        },
                    })
            }
        };
        sent.map_err(|e| self.stopped(e.to_string()))?;
        Ok(before)
    }

    /// The diagnostics of `path` once the server has published them after publication
    /// number `before` (`sync`), within `timeout`; `None` if it published nothing new in
    /// that time.
    pub async fn diagnostics_after(
        &self,
        path: &Path,
        before: u64,
        timeout: Duration,
    ) -> Result<Option<Vec<Diagnostic>>, LspError> {
        let mut all = self
            .diagnostics_after_all(&[(path.to_path_buf(), before)], timeout)
            .await?;
        Ok(all.pop().flatten())
    }

    /// `diagnostics_after` for many files at once: waits until every one has a new
    /// publication (or `timeout`), then `SETTLE` after the last one that came, so a server
    /// checking a hundred files is waited for once, not a hundred times.
    pub async fn diagnostics_after_all(
        &self,
        files: &[(PathBuf, u64)],
        timeout: Duration,
    ) -> Result<Vec<Option<Vec<Diagnostic>>>, LspError> {
        let uris: Vec<(Url, u64)> = files
            .iter()
            .map(|(p, before)| Ok((text::uri_of(p)?, *before)))
            .collect::<Result<_, LspError>>()?;
        let deadline = tokio::time::Instant::now() + timeout;
        let mut settled_at: Option<tokio::time::Instant> = None;
        let mut last_total = 0u64;
        loop {
            // Registered before looking, so a publication in between is not missed.
            let notified = self.shared.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let (total, all_new) = {
                let published = lock(&self.shared.published);
                let mut total = 0u64;
                let mut all_new = true;
                for (uri, before) in &uris {
                    let count = published.get(uri).map_or(0, |p| p.count);
                    total += count;
                    all_new &= count > *before;
                }
                (total, all_new)
            };
            if all_new && total != last_total {
                settled_at = Some((tokio::time::Instant::now() + SETTLE).min(deadline));
            }
            last_total = total;
            if !self.is_alive() {
                return Err(self.stopped("it exited".into()));
            }
            let until = settled_at.unwrap_or(deadline);
            if tokio::time::timeout_at(until, notified).await.is_err() {
                break;
            }
        }
        self.touch();
        let published = lock(&self.shared.published);
        Ok(uris
            .iter()
            .map(|(uri, before)| {
                published
                    .get(uri)
                    .filter(|p| p.count > *before)
                    .map(|p| p.diagnostics.clone())
            })
            .collect())
    }

    /// What the server last published for `path`, if anything.
    pub fn published(&self, path: &Path) -> Option<Vec<Diagnostic>> {
        let uri = text::uri_of(path).ok()?;
        lock(&self.shared.published)
            .get(&uri)
            .map(|p| p.diagnostics.clone())
    }

    /// Where the symbol at `pos` of `path` is defined.
    pub async fn definition(&self, path: &Path, pos: Position) -> Result<Vec<Location>, LspError> {
        let params = GotoDefinitionParams {
            text_document_position_params: TextDocumentPositionParams {
                text_document: TextDocumentIdentifier {
                    uri: text::uri_of(path)?,
                },
                position: pos,
            },
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        };
        Ok(
            match self.ask::<GotoDefinition>(params, REQUEST_TIMEOUT).await? {
                None => Vec::new(),
                Some(GotoDefinitionResponse::Scalar(l)) => vec![l],
                Some(GotoDefinitionResponse::Array(ls)) => ls,
                Some(GotoDefinitionResponse::Link(links)) => links
                    .into_iter()
                    .map(|l| Location {
                        uri: l.target_uri,
                        range: l.target_selection_range,
                    })
                    .collect(),
            },
        )
    }

    /// Where the symbol at `pos` of `path` is used.
    pub async fn references(
        &self,
        path: &Path,
        pos: Position,
        include_declaration: bool,
    ) -> Result<Vec<Location>, LspError> {
        let params = ReferenceParams {
            text_document_position: TextDocumentPositionParams {
                text_document: TextDocumentIdentifier {
                    uri: text::uri_of(path)?,
                },
                position: pos,
            },
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
            context: ReferenceContext {
                include_declaration,
            },
        };
        Ok(self
            .ask::<References>(params, REQUEST_TIMEOUT)
            .await?
            .unwrap_or_default())
    }

    /// Asks the server to shut down and exit, and ends it if it does not within a second.
    pub async fn stop(&self) {
        if self.is_alive() {
            let _ =
                tokio::time::timeout(Duration::from_secs(1), self.socket.request::<Shutdown>(()))
                    .await;
            let _ = self.socket.notify::<Exit>(());
        }
        let child = lock(&self.child).take();
        if let Some(mut child) = child {
            let group = child.id();
            if tokio::time::timeout(Duration::from_secs(1), child.wait())
                .await
                .is_err()
            {
                let _ = child.kill().await;
            }
            // What it started, if anything outlived it.
            if let Some(pid) = group.and_then(|p| i32::try_from(p).ok()) {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
    }

    /// The process id, for tests that end a server the way a crash would.
    pub fn pid(&self) -> Option<u32> {
        lock(&self.child).as_ref().and_then(|c| c.id())
    }
}

/// What the client does with what the server sends: diagnostics kept, requests answered
/// with nothing, everything else ignored (logs, telemetry, progress).
fn router(shared: Arc<Shared>) -> Router<Arc<Shared>> {
    let mut router = Router::new(shared);
    router
        .notification::<PublishDiagnostics>(|shared, params| {
            let mut published = lock(&shared.published);
            if published.len() < MAX_FILES_PUBLISHED || published.contains_key(&params.uri) {
                let entry = published.entry(params.uri).or_default();
                entry.count += 1;
                entry.diagnostics = params.diagnostics;
                entry.diagnostics.truncate(MAX_DIAGNOSTICS_PER_FILE);
            }
            drop(published);
            shared.changed.notify_waiters();
            ControlFlow::Continue(())
        })
        .request::<WorkspaceConfiguration, _>(|_, params| {
            let answer = vec![serde_json::Value::Null; params.items.len()];
            async move { Ok(answer) }
        })
        .unhandled_request(|_, _| async { Ok(serde_json::Value::Null) })
        .unhandled_notification(|_, _| ControlFlow::Continue(()))
        .unhandled_event(|_, _| ControlFlow::Continue(()));
    router
}
