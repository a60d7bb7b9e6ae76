//! The engine behind the UI protocol (`skald_api::protocol`): every command a UI sends is
//! answered here, so `skald serve` and the desktop shell only carry messages — neither has
//! logic of its own. A carrier makes one [`Service`] per process and one [`Connection`]
//! per UI; a connection's file subscriptions end with it.

mod best_of;
mod chats;
mod convert;
pub mod files;
mod images;
mod inbox;
mod models;
pub mod records;
mod settings;
mod viewer;
mod worktrees;

use files::{FilePolicy, Watches};
use skald_api::protocol::{Command, Reply, Request, ServerMessage};
use skald_core::engine::TurnSettings;
use skald_core::session::manager::SessionManager;
use skald_core::turn::ApprovalMode;
use skald_core::{Config, DataDir};
use skald_llm::ModelChoice;
use skald_store::Store;
use skald_viewer::{FileRoute, LatexEngine};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::broadcast;

pub use skald_tools::RestartSignal;

/// Where the UI fetches files from `skald serve` (the desktop shell has a URI scheme).
pub const FILE_ROUTE: &str = "/api/file?path=";

/// How long "test connection" waits for the model's first word.
const TEST_MODEL_TIMEOUT: Duration = Duration::from_secs(30);

/// Messages in one `history` reply when the UI does not say (each assistant message is
/// rendered to HTML, so a page stays small; older ones come with `before`).
const HISTORY_PAGE: usize = 500;

/// After an approved `restart`, how long running turns may take to end before they are
/// stopped (and recorded, so the next start shows where they were).
const RESTART_GRACE: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("{0}")]
    Store(#[from] skald_store::StoreError),
    #[error("{0}")]
    Session(#[from] skald_core::session::manager::SessionError),
    #[error("{0}")]
    Engine(#[from] skald_core::engine::EngineError),
    #[error("{0}")]
    Invalid(String),
}

fn invalid(msg: impl Into<String>) -> ServiceError {
    ServiceError::Invalid(msg.into())
}

use skald_base::lock;

/// What a carrier decides when it starts the service.
pub struct ServiceConfig {
    pub data_dir: DataDir,
    /// The folder new chats work in, and the viewer's first allowed folder.
    pub root: PathBuf,
    /// config.toml as loaded.
    pub config: Config,
    /// The model asked for on the command line (`--model`), if any.
    pub model: Option<String>,
    /// A TeX bundle (zip) named by the carrier (`SKALD_TEX_BUNDLE`); otherwise the data
    /// directory's offline bundle if built, else tectonic's default online bundle.
    pub tex_bundle: Option<PathBuf>,
    /// How the carrier's file route is written, up to the percent-encoded path
    /// ([`FILE_ROUTE`] for `skald serve`).
    pub file_route: String,
    /// Given by a carrier that can start itself again: the `restart` tool is offered and
    /// [`Service::restart_requested`] resolves when an approved call asks for it.
    pub restart: Option<RestartSignal>,
    /// Variables of this process that nothing it starts may inherit (a restarted
    /// server's handed-over token), besides the provider keys every engine withholds.
    pub hidden_env: Vec<String>,
}

pub struct Service {
    sessions: Arc<SessionManager>,
    store: Arc<Store>,
    data_dir: DataDir,
    config: Mutex<Config>,
    /// Why no model can be used, when none can.
    model_error: Mutex<Option<String>>,
    policy: FilePolicy,
    watches: Watches,
    latex: Arc<LatexEngine>,
    route: FileRoute,
    events: broadcast::Sender<ServerMessage>,
    restart: Option<RestartSignal>,
    /// Local models being downloaded.
    pulling: Mutex<std::collections::HashSet<String>>,
    /// An offline TeX bundle is being built.
    building_tex: std::sync::atomic::AtomicBool,
    /// Stops the background preparation of the default model (`prepare_default`).
    preparing: Mutex<Option<skald_api::CancellationToken>>,
}

impl Service {
    /// Opens the store, loads agents, starts secrets, plugins, MCP servers, the delivery
    /// loop and the resumption of unfinished sessions. Call inside a tokio runtime.
    pub fn start(config: ServiceConfig) -> Result<Arc<Service>, String> {
        let data_dir = config.data_dir;
        let store = Arc::new(Store::open(data_dir.db_path()).map_err(|e| e.to_string())?);
        let mut registry = skald_core::builtin_registry().map_err(|e| e.to_string())?;
        if let Some(signal) = &config.restart {
            registry
                .register(skald_tools::Restart::new(signal.clone()))
                .map_err(|e| e.to_string())?;
        }
        let registry = Arc::new(registry);
        let library = Arc::new(
            skald_core::agents::Library::load(data_dir.root()).map_err(|e| e.to_string())?,
        );
        // A person answers in the chat or the Inbox.
        let settings = TurnSettings::from_config(&config.config, &data_dir, ApprovalMode::Inbox);
        // The models come once the secrets are open: a key set in the UI is one.
        let sessions = SessionManager::new(store.clone(), registry, Vec::new(), library, settings);
        let engine = sessions.engine().clone();
        // Before anything starts a process: MCP servers come up below.
        engine.withheld.hide_env(config.hidden_env);
        if let Err(e) = engine.open_secrets(data_dir.root()) {
            tracing::warn!("secrets are not available: {e}");
        }
        let model_error = match choose_models(
            &engine,
            &config.config,
            config.model.as_deref(),
            &data_dir.models_dir(),
        ) {
            Ok(models) => {
                engine.set_models(models);
                None
            }
            // With no usable model the UI still opens and says what to configure.
            Err(e) => Some(e),
        };
        engine.start_plugins();
        if let Err(e) = engine.start_mcp(Some(data_dir.logs_dir())) {
            tracing::warn!("cannot start the MCP servers: {e}");
        }
        let (events, _) = broadcast::channel(4096);
        let file_events = events.clone();
        let watches = Watches::new(move |event| {
            let _ = file_events.send(ServerMessage::Event {
                session_id: None,
                event,
            });
        })?;
        let latex_cache = data_dir.root().join("cache").join("latex");
        let bundle = match config.tex_bundle {
            Some(zip) => skald_viewer::BundleChoice::Zip(zip),
            None => skald_viewer::BundleChoice::Default,
        };
        let service = Arc::new(Service {
            policy: FilePolicy::new(
                store.clone(),
                config.root,
                latex_cache.clone(),
                data_dir.root(),
            ),
            // Builds never read what the file tools guard: credential folders and
            // Skald's own secrets (and `secrets/` folders, which the engine refuses).
            latex: Arc::new(
                LatexEngine::new(
                    latex_cache,
                    bundle,
                    skald_core::approval::guarded_paths(&engine.withheld.folders()),
                )
                .with_offline(data_dir.tex_bundle_path()),
            ),
            sessions: sessions.clone(),
            store,
            data_dir,
            config: Mutex::new(config.config),
            model_error: Mutex::new(model_error),
            watches,
            route: FileRoute::new(config.file_route),
            events,
            restart: config.restart,
            pulling: Mutex::new(std::collections::HashSet::new()),
            building_tex: std::sync::atomic::AtomicBool::new(false),
            preparing: Mutex::new(None),
        });
        // A chat's own model is resolved as the configured one is, with the settings and
        // keys of now (docs/models.md, "A model per chat").
        let weak = Arc::downgrade(&service);
        engine.set_model_resolver(Arc::new(move |spec: &str| {
            let service = weak
                .upgrade()
                .ok_or_else(|| "Skald is shutting down".to_string())?;
            let config = lock(&service.config).clone();
            choose_models(
                service.sessions.engine(),
                &config,
                Some(spec),
                &service.data_dir.models_dir(),
            )
        }));
        // Engine events go to every UI, tagged with their session.
        let mut rx = sessions.subscribe();
        let out = service.events.clone();
        tokio::spawn(async move {
            loop {
                match rx.recv().await {
                    Ok(e) => {
                        let _ = out.send(ServerMessage::Event {
                            session_id: Some(e.session_id),
                            event: e.event,
                        });
                    }
                    Err(broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!("UI events lagged; {n} dropped (the store has them)");
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        });
        let cancel = skald_api::CancellationToken::new();
        tokio::spawn(sessions.clone().deliver(cancel));
        if let Err(e) = sessions.resume_all() {
            tracing::error!("cannot resume sessions: {e}");
        }
        service.prepare_default();
        Ok(service)
    }

    pub fn data_dir(&self) -> &DataDir {
        &self.data_dir
    }

    pub fn policy(&self) -> &FilePolicy {
        &self.policy
    }

    /// An editor drives `session_id` (`skald acp`): its calls use the editor's file
    /// system and terminals as far as it offers them (docs/acp.md).
    pub fn attach_editor(&self, session_id: i64, editor: Arc<dyn skald_api::editor::Editor>) {
        self.sessions.engine().attach_editor(session_id, editor);
    }

    /// The editor of `session_id` is gone.
    pub fn detach_editor(&self, session_id: i64) {
        self.sessions.engine().detach_editor(session_id);
    }

    /// Events for every connected UI.
    pub fn subscribe(&self) -> broadcast::Receiver<ServerMessage> {
        self.events.subscribe()
    }

    /// A new UI connection.
    pub fn connect(self: &Arc<Self>) -> Connection {
        Connection {
            service: self.clone(),
            followed: Mutex::new(HashMap::new()),
        }
    }

    /// The file the route `path` names, if the UI may read it (the policy's check; it
    /// reads the store and the disk, so call it off the async workers).
    pub fn file_for_route(&self, raw: &str) -> Result<PathBuf, String> {
        self.policy.check(raw, self.policy.root())
    }

    /// Stops every turn and background task, and the MCP servers' processes.
    pub async fn shutdown(&self) {
        // LaTeX workers are killed, not left running after the app.
        self.latex.stop_all();
        if let Some(preparing) = lock(&self.preparing).take() {
            preparing.cancel();
        }
        let engine = self.sessions.engine();
        for s in self.store.list_sessions().unwrap_or_default() {
            self.sessions.stop(s.id);
        }
        engine.shutdown();
        engine.wait_tasks(Duration::from_secs(5)).await;
        engine.processes.stop_all().await;
        engine.mcp.manager.stop_all();
        skald_lsp::pool().stop_all().await;
        // A local model still generating would crash the process as it exits.
        let _ = tokio::task::spawn_blocking(|| {
            skald_llm::local::shutdown(Duration::from_secs(5));
        })
        .await;
    }

    /// Resolves once an approved `restart` asked for one and the running turns have ended
    /// (or [`RESTART_GRACE`] has passed), with the engine shut down as for a quit. The
    /// carrier then starts its binary again. Never resolves for a carrier that gave no
    /// [`RestartSignal`].
    pub async fn restart_requested(&self) {
        let Some(signal) = &self.restart else {
            return std::future::pending().await;
        };
        signal.requested().await;
        tracing::info!("restart approved; waiting for running turns to end");
        let deadline = Instant::now() + RESTART_GRACE;
        while Instant::now() < deadline && self.any_turn_running() {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        self.shutdown().await;
        tracing::info!("restarting");
    }

    fn any_turn_running(&self) -> bool {
        self.store
            .list_sessions()
            .unwrap_or_default()
            .iter()
            .any(|s| self.sessions.is_running(s.id))
    }

    fn session_base(&self, session_id: Option<i64>) -> PathBuf {
        session_id
            .and_then(|id| self.store.find_session(id).ok().flatten())
            .and_then(|s| s.working_dir)
            .map(PathBuf::from)
            .unwrap_or_else(|| self.policy.root().to_path_buf())
    }

    /// What the data folder keeps, read and changed as every carrier does.
    fn records(&self) -> records::Records<'_> {
        records::Records::new(&self.store)
    }

    fn session_info(&self, s: skald_store::Session) -> skald_api::protocol::SessionInfo {
        let running = self.sessions.is_running(s.id);
        let queued = running
            && matches!(
                self.store.turn_state(s.id),
                Ok(Some(skald_store::TurnState::Queued))
            );
        convert::session(s, running, queued)
    }

    async fn handle(&self, conn: &Connection, command: Command) -> Result<Reply, ServiceError> {
        // One line per command; what each does is in the file of its domain (chats.rs,
        // inbox.rs, settings.rs, viewer.rs, models).
        match command {
            Command::ListSessions => self.list_sessions(),
            Command::CreateSession {
                title,
                working_dir,
                agent_id,
                worktree,
            } => {
                self.create_session(title, working_dir, agent_id, worktree)
                    .await
            }
            Command::ListWorktrees => self.list_worktrees().await,
            Command::BestOf {
                text,
                models,
                working_dir,
                title,
            } => self.best_of(text, models, working_dir, title).await,
            Command::Board { limit } => self.board(limit).await,
            Command::WorktreeDiff { name } => self.worktree_diff(&name).await,
            Command::ApplyWorktree {
                name,
                files,
                snapshot,
            } => self.apply_worktree(&name, files, snapshot).await,
            Command::CommitWorktree {
                name,
                message,
                snapshot,
            } => self.commit_worktree(&name, message, snapshot).await,
            Command::MergeWorktree { name } => self.merge_worktree(&name).await,
            Command::DiscardWorktree { name } => self.discard_worktree(&name),
            Command::ChatChanges { session_id } => self.chat_changes(session_id).await,
            Command::RevertChanges {
                session_id,
                files,
                snapshot,
            } => self.revert_changes(session_id, files, snapshot).await,
            Command::RenameSession { session_id, title } => self.rename_session(session_id, &title),
            Command::DeleteSession { session_id } => self.delete_session(session_id).await,
            Command::History {
                session_id,
                before,
                limit,
            } => self.history(session_id, before, limit),
            Command::Usage { session_id } => self.usage(session_id),
            Command::Sandbox { session_id } => self
                .sandbox(session_id)
                .map(|sandbox| Reply::Sandbox { sandbox }),
            Command::SetSandbox {
                session_id,
                mode,
                network,
            } => self
                .set_sandbox(session_id, mode, network)
                .map(|sandbox| Reply::SetSandbox { sandbox }),
            Command::SessionContext { session_id } => self.session_context(session_id),
            Command::ListModels => self.list_models(),
            Command::ContextUsage { session_id } => self.context_usage(session_id),
            Command::CompactNow { session_id } => self.compact_now(session_id).await,
            Command::UndoCompaction { session_id } => self.undo_compaction(session_id),
            Command::SetSessionMode { session_id, mode } => {
                self.store.set_session_mode(session_id, mode)?;
                let session = self.store.get_session(session_id)?;
                Ok(Reply::SetSessionMode {
                    session: self.session_info(session),
                })
            }
            Command::ForkSession {
                session_id,
                message_id,
            } => self.fork_from(session_id, message_id),
            Command::EditMessage {
                session_id,
                message_id,
                text,
                images,
            } => self.edit_message(session_id, message_id, text, images),
            Command::SetSessionModel {
                session_id,
                model,
                effort,
            } => self.set_session_model(session_id, model, effort),
            Command::ApproveHooks { session_id, sha256 } => self.approve_hooks(session_id, &sha256),
            Command::Checkpoints { session_id } => self.checkpoints(session_id).await,
            Command::CheckpointDiff { id, path } => self.checkpoint_diff(id, path).await,
            Command::RestoreCheckpoint { id, rewind } => {
                self.restore_checkpoint(id, rewind.unwrap_or(false)).await
            }
            Command::SendMessage {
                session_id,
                text,
                images,
            } => self.send_message(session_id, text, images),
            Command::AttachImage {
                data,
                name,
                session_id,
            } => self.attach_image(data, name, session_id).await,
            Command::GetImage { sha256 } => self.get_image(&sha256),
            Command::Stop { session_id } => Ok(Reply::Stop {
                stopped: self.sessions.stop(session_id),
            }),
            Command::ListProcesses { session_id } => self.list_processes(session_id),
            Command::ProcessOutput {
                session_id,
                process_id,
            } => self.process_output(session_id, process_id),
            Command::StopProcess {
                session_id,
                process_id,
            } => self.stop_process(session_id, process_id).await,
            Command::RenderMarkdown { text, session_id } => Ok(Reply::RenderMarkdown {
                html: skald_viewer::render_markdown(
                    &text,
                    &self.session_base(session_id),
                    &self.route,
                ),
            }),
            Command::Inbox => self.inbox(),
            Command::Answer { inbox_id, answer } => self.answer(inbox_id, answer),
            Command::ProposeRule { inbox_id } => self.propose_rule(inbox_id),
            Command::ListRules => Ok(Reply::ListRules {
                rules: self.records().rules()?,
            }),
            Command::RemoveRule { id } => {
                self.records().remove_rule(id)?;
                Ok(Reply::RemoveRule)
            }
            Command::ListAgents => Ok(self.list_agents()),
            Command::ListTasks => Ok(Reply::ListTasks {
                tasks: self.records().tasks(None)?,
            }),
            Command::ListCron => Ok(Reply::ListCron {
                jobs: self.records().jobs()?,
            }),
            Command::SetCronEnabled { id, enabled } => {
                self.records().set_job_enabled(id, enabled)?;
                Ok(Reply::SetCronEnabled)
            }
            Command::RemoveCron { id } => {
                self.records().remove_job(id)?;
                Ok(Reply::RemoveCron)
            }
            Command::UpdateCron {
                id,
                name,
                prompt,
                cron,
                timezone,
            } => Ok(Reply::UpdateCron {
                job: self
                    .records()
                    .update_job(id, &name, &prompt, &cron, &timezone)?,
            }),
            Command::ListMcp => Ok(Reply::ListMcp {
                servers: self.mcp_servers()?,
            }),
            Command::SetMcpEnabled { name, enabled } => {
                let mcp = &self.sessions.engine().mcp;
                mcp.set_enabled(&self.store, &name, enabled)?;
                Ok(Reply::SetMcpEnabled)
            }
            Command::McpLogin { name } => {
                let mcp = &self.sessions.engine().mcp;
                let done = mcp
                    .login(&self.store, &name)
                    .await
                    .map_err(ServiceError::Invalid)?;
                Ok(Reply::McpLogin {
                    scopes: done.scopes,
                })
            }
            Command::ListMcpPrompts => Ok(Reply::ListMcpPrompts {
                prompts: self.sessions.engine().mcp.prompt_infos(&self.store),
            }),
            Command::ListMcpResources => Ok(Reply::ListMcpResources {
                resources: self.sessions.engine().mcp.resource_infos(&self.store),
            }),
            Command::McpLogout { name } => {
                let mcp = &self.sessions.engine().mcp;
                mcp.logout(&self.store, &name)
                    .await
                    .map_err(ServiceError::Invalid)?;
                Ok(Reply::McpLogout)
            }
            Command::ListSecrets => self.list_secrets().await,
            Command::SetSecret { name, value } => self.set_secret(name, value).await,
            Command::RemoveSecret { name } => self.remove_secret(name).await,
            Command::ListPlugins => Ok(Reply::ListPlugins {
                plugins: self.records().plugins(&self.sessions.engine().plugins),
            }),
            Command::ConfigurePlugin {
                id,
                enabled,
                config,
            } => Ok(Reply::ConfigurePlugin {
                message: self.records().configure_plugin(
                    &self.sessions.engine().plugins,
                    &id,
                    config.as_ref(),
                    enabled,
                )?,
            }),
            Command::Settings => self.settings().await,
            Command::SetWeb {
                search,
                search_url,
                provider_search,
                timeout_secs,
            } => {
                self.set_web(search, search_url, provider_search, timeout_secs)
                    .await
            }
            Command::SetCompactAt { percent } => self.set_compact_at(percent),
            Command::SetDailyBudget { usd } => self.set_daily_budget(usd),
            Command::SetAtOnce { count } => self.set_at_once(count),
            Command::TestModel => Ok(self.test_model().await),
            Command::LocalModels => Ok(self.local_models()),
            Command::PullModel { name } => self.pull_model(&name).await,
            Command::BuildTexBundle => self.build_tex_bundle().await,
            Command::ConfigureModel {
                kind,
                model,
                base_url,
                api_key,
            } => {
                let reply = self.configure_model(&kind, &model, base_url, api_key).await;
                if reply.is_ok() {
                    conn.service.prepare_default();
                }
                reply
            }
            Command::View { path, session_id } => self.view(&path, session_id).await,
            Command::ReadPage { path, offset } => self.read_page(&path, offset).await,
            Command::LatexBuild { path } => self.latex_build(&path).await,
            Command::LatexStop { path } => self.latex_stop(&path),
            Command::Subscribe { path } => self.subscribe_file(conn, &path),
            Command::Unsubscribe { path } => Ok(self.unsubscribe_file(conn, &path)),
        }
    }
}

/// The models for `flag` (or the configured default), their keys read from the
/// environment or, failing that, from the secrets of the same name.
fn choose_models(
    engine: &skald_core::engine::Engine,
    config: &Config,
    flag: Option<&str>,
    models_dir: &Path,
) -> Result<Vec<ModelChoice>, String> {
    // Whichever model is chosen, the keys of every declared provider stay out of
    // commands and MCP servers.
    engine
        .withheld
        .hide_env(skald_core::models::key_envs(config));
    let secrets = engine.secrets();
    let lookup = |k: &str| {
        std::env::var(k)
            .ok()
            .or_else(|| secrets.as_ref().and_then(|s| s.get(k).ok().flatten()))
    };
    skald_core::models::choose_models(config, flag, models_dir, lookup).map_err(|e| e.to_string())
}

/// Runs `f` on a blocking thread; its error becomes the reply's.
async fn blocking<T: Send + 'static, E: std::fmt::Display + Send + 'static>(
    f: impl FnOnce() -> Result<T, E> + Send + 'static,
) -> Result<T, ServiceError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| invalid(e.to_string()))?
        .map_err(|e| invalid(e.to_string()))
}

/// The last `n` lines of a log file, read from its end only.
fn log_tail(path: &Path, n: usize) -> Vec<String> {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let from = len.saturating_sub(16 * 1024);
    if f.seek(SeekFrom::Start(from)).is_err() {
        return Vec::new();
    }
    let mut buf = Vec::new();
    if f.read_to_end(&mut buf).is_err() {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(&buf);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| l.to_string())
        .collect()
}

/// One UI's side of the service: its requests, and the files it follows (released when
/// it goes).
pub struct Connection {
    service: Arc<Service>,
    followed: Mutex<HashMap<PathBuf, usize>>,
}

impl Connection {
    /// Answers one request.
    pub async fn handle(&self, request: Request) -> ServerMessage {
        let id = request.id;
        match self.service.handle(self, request.command).await {
            Ok(reply) => ServerMessage::Reply { id, reply },
            Err(e) => ServerMessage::Failure {
                id,
                error: e.to_string(),
            },
        }
    }

    /// Answers a request given as JSON text; a malformed one gets a failure naming what
    /// was wrong (with id 0 when not even the id could be read).
    pub async fn handle_text(&self, text: &str) -> ServerMessage {
        match serde_json::from_str::<Request>(text) {
            Ok(r) => self.handle(r).await,
            Err(e) => {
                let id = serde_json::from_str::<serde_json::Value>(text)
                    .ok()
                    .and_then(|v| v["id"].as_u64())
                    .unwrap_or(0);
                ServerMessage::Failure {
                    id,
                    error: format!("not a Skald request: {e}"),
                }
            }
        }
    }

    fn follow(&self, doc: &Path) -> Result<(), String> {
        self.service.watches.follow(doc)?;
        *lock(&self.followed).entry(doc.to_path_buf()).or_insert(0) += 1;
        Ok(())
    }

    fn unfollow(&self, doc: &Path) {
        let mut followed = lock(&self.followed);
        let Some(n) = followed.get_mut(doc) else {
            return;
        };
        *n -= 1;
        if *n == 0 {
            followed.remove(doc);
        }
        self.service.watches.unfollow(doc);
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        for (doc, n) in lock(&self.followed).drain() {
            for _ in 0..n {
                self.service.watches.unfollow(&doc);
            }
        }
    }
}
