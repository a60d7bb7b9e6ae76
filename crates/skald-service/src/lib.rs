//! The engine behind the UI protocol (`skald_api::protocol`): every command a UI sends is
//! answered here, so `skald serve` and the desktop shell only carry messages — neither has
//! logic of its own. A carrier makes one [`Service`] per process and one [`Connection`]
//! per UI; a connection's file subscriptions end with it.

mod convert;
pub mod files;

use files::{FilePolicy, Watches};
use skald_api::protocol::{
    AgentInfo, Command, LocalModelInfo, McpServerInfo, RecommendedModel, Reply, Request,
    ServerMessage,
};
use skald_core::engine::TurnSettings;
use skald_core::sessions::{Sent, SessionManager};
use skald_core::turn::ApprovalMode;
use skald_core::{Config, DataDir};
use skald_llm::ModelChoice;
use skald_store::{NewSession, SessionKind, Store};
use skald_viewer::{BundleChoice, FileRoute, LatexEngine, LatexError};
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
    Session(#[from] skald_core::sessions::SessionError),
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
    /// A local TeX bundle (zip); tectonic's default bundle otherwise.
    pub tex_bundle: Option<PathBuf>,
    /// How the carrier's file route is written, up to the percent-encoded path
    /// ([`FILE_ROUTE`] for `skald serve`).
    pub file_route: String,
    /// Given by a carrier that can start itself again: the `restart` tool is offered and
    /// [`Service::restart_requested`] resolves when an approved call asks for it.
    pub restart: Option<RestartSignal>,
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
        let settings = TurnSettings {
            max_rounds: config.config.agent.max_rounds.max(1),
            // A person answers in the chat or the Inbox.
            approval: ApprovalMode::Inbox,
            context_window: config.config.models.context_window,
            mcp: config.config.mcp.clone(),
        };
        // The models come once the secrets are open: a key set in the UI is one.
        let sessions = SessionManager::new(store.clone(), registry, Vec::new(), library, settings);
        let engine = sessions.engine().clone();
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
            Some(zip) => BundleChoice::Zip(zip),
            None => BundleChoice::Default,
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
            latex: Arc::new(LatexEngine::new(
                latex_cache,
                bundle,
                skald_core::approval::guarded_paths(),
            )),
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
        });
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
        Ok(service)
    }

    pub fn data_dir(&self) -> &DataDir {
        &self.data_dir
    }

    pub fn policy(&self) -> &FilePolicy {
        &self.policy
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
        let engine = self.sessions.engine();
        for s in self.store.list_sessions().unwrap_or_default() {
            self.sessions.stop(s.id);
        }
        engine.shutdown();
        engine.wait_tasks(Duration::from_secs(5)).await;
        engine.mcp.manager.stop_all();
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

    fn session_info(&self, s: skald_store::Session) -> skald_api::protocol::SessionInfo {
        let running = self.sessions.is_running(s.id);
        convert::session(s, running)
    }

    async fn handle(&self, conn: &Connection, command: Command) -> Result<Reply, ServiceError> {
        Ok(match command {
            Command::ListSessions => {
                let mut sessions: Vec<_> = self
                    .store
                    .list_sessions()?
                    .into_iter()
                    .filter(|s| s.kind == SessionKind::Interactive)
                    .collect();
                sessions.sort_by_key(|s| std::cmp::Reverse(s.updated_at));
                Reply::ListSessions {
                    sessions: sessions.into_iter().map(|s| self.session_info(s)).collect(),
                }
            }
            Command::CreateSession {
                title,
                working_dir,
                agent_id,
            } => {
                let dir = match working_dir {
                    Some(d) => {
                        let p = std::fs::canonicalize(&d)
                            .map_err(|e| invalid(format!("working folder {d}: {e}")))?;
                        if !p.is_dir() {
                            return Err(invalid(format!("{d} is not a folder")));
                        }
                        p
                    }
                    None => self.policy.root().to_path_buf(),
                };
                let agent = agent_id.unwrap_or_else(|| "main".into());
                self.sessions
                    .engine()
                    .library
                    .get(&agent)
                    .map_err(|e| invalid(e.to_string()))?;
                let s = self.store.create_session(&NewSession {
                    title: title.unwrap_or_else(|| "New chat".into()),
                    agent_id: agent,
                    working_dir: Some(dir.display().to_string()),
                    ..NewSession::default()
                })?;
                Reply::CreateSession {
                    session: self.session_info(s),
                }
            }
            Command::RenameSession { session_id, title } => {
                let title = title.trim();
                if title.is_empty() {
                    return Err(invalid("a chat's title cannot be empty"));
                }
                self.store.rename_session(session_id, title)?;
                Reply::RenameSession
            }
            Command::DeleteSession { session_id } => {
                if self.sessions.is_running(session_id) {
                    return Err(invalid(
                        "this chat's turn is running; stop it before deleting the chat",
                    ));
                }
                self.store.delete_session(session_id)?;
                Reply::DeleteSession
            }
            Command::History {
                session_id,
                before,
                limit,
            } => {
                let session = self.store.get_session(session_id)?;
                let base = self.session_base(Some(session_id));
                let all = self.store.list_messages(session_id)?;
                let end = match before {
                    Some(b) => all.partition_point(|m| m.id < b),
                    None => all.len(),
                };
                let limit = limit.map_or(HISTORY_PAGE, |l| l as usize).max(1);
                let start = end.saturating_sub(limit);
                let messages: Vec<_> = all[start..end]
                    .iter()
                    .map(|m| convert::message(m, &base, &self.route))
                    .collect();
                let first = all.get(start).map_or(i64::MAX, |m| m.id);
                let last = if end < all.len() {
                    all[end].id
                } else {
                    i64::MAX
                };
                let registry = &self.sessions.engine().registry;
                let tool_calls = self
                    .store
                    .list_tool_calls(session_id)?
                    .into_iter()
                    .filter(|c| {
                        c.message_id
                            .is_none_or(|id| (start == 0 || id >= first) && id < last)
                    })
                    .map(|c| convert::tool_call(c, registry))
                    .collect();
                Reply::History {
                    session: self.session_info(session),
                    messages,
                    tool_calls,
                    has_more: start > 0,
                }
            }
            Command::Usage { session_id } => {
                let u = self.store.session_usage(session_id)?;
                Reply::Usage {
                    requests: u.requests,
                    input_tokens: u.input_tokens,
                    output_tokens: u.output_tokens,
                }
            }
            Command::SendMessage { session_id, text } => {
                if text.trim().is_empty() {
                    return Err(invalid("the message is empty"));
                }
                if self.sessions.engine().models().is_empty() {
                    return Err(invalid(format!(
                        "no model can be used: {}. Configure a provider in Settings.",
                        lock(&self.model_error)
                            .as_deref()
                            .unwrap_or("none is configured")
                    )));
                }
                let sent = self.sessions.send_message(session_id, text)?;
                Reply::SendMessage {
                    queued: sent == Sent::Queued,
                }
            }
            Command::Stop { session_id } => Reply::Stop {
                stopped: self.sessions.stop(session_id),
            },
            Command::RenderMarkdown { text, session_id } => Reply::RenderMarkdown {
                html: skald_viewer::render_markdown(
                    &text,
                    &self.session_base(session_id),
                    &self.route,
                ),
            },
            Command::Inbox => {
                let titles: HashMap<i64, String> = self
                    .store
                    .list_sessions()?
                    .into_iter()
                    .map(|s| (s.id, s.title))
                    .collect();
                Reply::Inbox {
                    items: self
                        .sessions
                        .inbox()?
                        .into_iter()
                        .map(|i| {
                            let title = titles.get(&i.session_id).cloned().unwrap_or_default();
                            convert::inbox_item(i, title)
                        })
                        .collect(),
                }
            }
            Command::Answer { inbox_id, answer } => {
                let answer = convert::answer(answer).map_err(invalid)?;
                self.sessions.answer(inbox_id, &answer)?;
                Reply::Answer
            }
            Command::ProposeRule { inbox_id } => {
                let (rule, matched) = self.sessions.propose_rule(inbox_id)?;
                Reply::ProposeRule {
                    rule: convert::rule_draft(&rule),
                    matched: u32::try_from(matched.len()).unwrap_or(u32::MAX),
                    reach: skald_core::approval::rule_reach(&rule),
                }
            }
            Command::ListRules => Reply::ListRules {
                rules: to_values(self.store.list_rules()?),
            },
            Command::RemoveRule { id } => {
                self.store.delete_rule(id)?;
                Reply::RemoveRule
            }
            Command::ListAgents => Reply::ListAgents {
                agents: self
                    .sessions
                    .engine()
                    .library
                    .agents()
                    .map(|a| AgentInfo {
                        id: a.id.clone(),
                        name: a.meta.name.clone(),
                        description: a.meta.description.clone(),
                    })
                    .collect(),
            },
            Command::ListTasks => Reply::ListTasks {
                tasks: to_values(self.store.list_tasks(None)?),
            },
            Command::ListCron => Reply::ListCron {
                jobs: to_values(self.store.list_jobs()?),
            },
            Command::SetCronEnabled { id, enabled } => {
                skald_core::cron::set_enabled(&self.store, id, enabled)
                    .map_err(|e| invalid(e.to_string()))?;
                Reply::SetCronEnabled
            }
            Command::RemoveCron { id } => {
                self.store.delete_job(id)?;
                Reply::RemoveCron
            }
            Command::UpdateCron {
                id,
                name,
                prompt,
                cron,
                timezone,
            } => {
                let job =
                    skald_core::cron::update_job(&self.store, id, &name, &prompt, &cron, &timezone)
                        .map_err(|e| invalid(e.to_string()))?;
                Reply::UpdateCron {
                    job: serde_json::to_value(job).unwrap_or_default(),
                }
            }
            Command::ListMcp => Reply::ListMcp {
                servers: self.mcp_servers()?,
            },
            Command::SetMcpEnabled { name, enabled } => {
                self.sessions
                    .engine()
                    .mcp
                    .set_enabled(&self.store, &name, enabled)?;
                Reply::SetMcpEnabled
            }
            // The keyring is D-Bus (or a file) and may wait: off the async workers.
            Command::ListSecrets => {
                let secrets = self.secrets()?;
                let backend = secrets.backend();
                let names = blocking(move || secrets.list(None)).await?;
                Reply::ListSecrets {
                    names,
                    store: match backend {
                        skald_secrets::Backend::Keyring => "the OS keyring".into(),
                        skald_secrets::Backend::File => "Skald's encrypted file".into(),
                    },
                }
            }
            Command::SetSecret { name, value } => {
                let secrets = self.secrets()?;
                blocking(move || secrets.set(&name, &value)).await?;
                self.sessions.engine().refresh_redactor();
                Reply::SetSecret
            }
            Command::RemoveSecret { name } => {
                let secrets = self.secrets()?;
                let n = name.clone();
                let gone = blocking(move || secrets.delete(&n)).await?;
                if !gone {
                    return Err(invalid(format!("no secret named {name}")));
                }
                self.sessions.engine().refresh_redactor();
                Reply::RemoveSecret
            }
            Command::ListPlugins => Reply::ListPlugins {
                plugins: self.sessions.engine().plugins.describe(&self.store),
            },
            Command::ConfigurePlugin {
                id,
                enabled,
                config,
            } => Reply::ConfigurePlugin {
                message: self
                    .sessions
                    .engine()
                    .plugins
                    .configure(&self.store, &id, config.as_ref(), enabled)
                    .map_err(invalid)?,
            },
            Command::Settings => Reply::Settings {
                version: env!("CARGO_PKG_VERSION").to_string(),
                data_dir: self.data_dir.root().display().to_string(),
                models: self
                    .sessions
                    .engine()
                    .models()
                    .iter()
                    .map(ModelChoice::label)
                    .collect(),
                model_error: lock(&self.model_error).clone(),
                config_path: self.data_dir.config_path().display().to_string(),
                approval: "Calls that need approval wait in the chat and the Inbox".into(),
            },
            Command::TestModel => self.test_model().await,
            Command::LocalModels => self.local_models(),
            Command::PullModel { name } => self.pull_model(&name).await?,
            Command::ConfigureModel {
                kind,
                model,
                base_url,
                api_key,
            } => {
                self.configure_model(&kind, &model, base_url, api_key)
                    .await?
            }
            Command::View { path, session_id } => {
                let base = self.session_base(session_id);
                let abs = self.policy.check(&path, &base).map_err(invalid)?;
                let display_path = skald_base::path::relativize_for_display(&abs, &base);
                let route = self.route.clone();
                let p = abs.clone();
                let (kind, view) =
                    tokio::task::spawn_blocking(move || skald_viewer::view(&p, &route))
                        .await
                        .map_err(|e| invalid(e.to_string()))?
                        .map_err(|e| invalid(e.to_string()))?;
                let size = std::fs::metadata(&abs).map(|m| m.len()).unwrap_or(0);
                Reply::View {
                    path: abs.display().to_string(),
                    display_path,
                    size,
                    kind,
                    view,
                }
            }
            Command::ReadPage { path, offset } => {
                let abs = self
                    .policy
                    .check(&path, self.policy.root())
                    .map_err(invalid)?;
                let page = tokio::task::spawn_blocking(move || {
                    skald_viewer::read_page(&abs, offset, skald_viewer::PAGE_BYTES)
                })
                .await
                .map_err(|e| invalid(e.to_string()))?
                .map_err(|e| invalid(e.to_string()))?;
                Reply::ReadPage { page }
            }
            Command::LatexBuild { path } => self.latex_build(&path).await?,
            Command::LatexStop { path } => {
                let tex = self
                    .policy
                    .check(&path, self.policy.root())
                    .map_err(invalid)?;
                Reply::LatexStop {
                    stopped: self.latex.stop(&tex),
                }
            }
            Command::Subscribe { path } => {
                let abs = self
                    .policy
                    .check(&path, self.policy.root())
                    .map_err(invalid)?;
                conn.follow(&abs).map_err(invalid)?;
                Reply::Subscribe
            }
            Command::Unsubscribe { path } => {
                let abs =
                    skald_base::path::canonicalize_for_policy(Path::new(&path), self.policy.root());
                conn.unfollow(&abs);
                Reply::Unsubscribe
            }
        })
    }

    fn secrets(&self) -> Result<Arc<skald_secrets::Secrets>, ServiceError> {
        self.sessions.engine().secrets().ok_or_else(|| {
            invalid("secrets are not available: neither the OS keyring nor Skald's file opened")
        })
    }

    fn mcp_servers(&self) -> Result<Vec<McpServerInfo>, ServiceError> {
        let manager = &self.sessions.engine().mcp.manager;
        let logs = self.data_dir.logs_dir();
        Ok(self
            .store
            .list_mcp_servers()?
            .into_iter()
            .map(|r| {
                let status = match manager.status(&r.name) {
                    Some(s) => serde_json::to_value(s).unwrap_or_default(),
                    None if !r.enabled => serde_json::json!({"state": "disabled"}),
                    None => serde_json::json!({"state": "not_started"}),
                };
                McpServerInfo {
                    log_tail: log_tail(&logs.join("mcp").join(format!("{}.log", r.name)), 20),
                    name: r.name,
                    enabled: r.enabled,
                    transport: r.transport,
                    description: r.description,
                    status,
                }
            })
            .collect())
    }

    /// Writes the provider and model into config.toml (the key into the secrets) and
    /// switches the engine to it.
    async fn configure_model(
        &self,
        kind: &str,
        model: &str,
        base_url: Option<String>,
        api_key: Option<String>,
    ) -> Result<Reply, ServiceError> {
        let model = model.trim();
        if model.is_empty() || model.contains(char::is_whitespace) {
            return Err(invalid("name the model, e.g. gpt-4.1 or claude-sonnet-4-5"));
        }
        // Each kind's usual address and the variable its key is read from when none is
        // typed here.
        if kind == "local" {
            return self.use_local_model(model);
        }
        let (default_url, env_key) = match kind {
            "openai" => ("https://api.openai.com/v1", Some("OPENAI_API_KEY")),
            "anthropic" => ("https://api.anthropic.com", Some("ANTHROPIC_API_KEY")),
            "ollama" => ("http://127.0.0.1:11434", None),
            other => {
                return Err(invalid(format!(
                    "the provider is openai (any OpenAI-compatible server), anthropic, \
                     ollama or local, not `{other}`"
                )));
            }
        };
        let url = base_url
            .map(|u| u.trim().trim_end_matches('/').to_string())
            .filter(|u| !u.is_empty())
            .unwrap_or_else(|| default_url.to_string());
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(invalid(format!(
                "the address must start with http:// or https://, not `{url}`"
            )));
        }
        // A key typed here is kept as a secret of Skald's own name, so a stale variable in
        // the environment (OPENAI_API_KEY, say) cannot shadow it; without one, a key
        // typed earlier stays in use, else the usual variable is read.
        let own_key = env_key.map(|_| format!("SKALD_{}_API_KEY", kind.to_ascii_uppercase()));
        let key_env = match (&own_key, api_key.filter(|k| !k.trim().is_empty())) {
            (Some(own), Some(key)) => {
                let (secrets, own2) = (self.secrets()?, own.clone());
                blocking(move || secrets.set(&own2, key.trim())).await?;
                self.sessions.engine().refresh_redactor();
                Some(own.clone())
            }
            (Some(own), None) => {
                let known = match self.sessions.engine().secrets() {
                    Some(secrets) => {
                        let own2 = own.clone();
                        blocking(move || secrets.get(&own2)).await?.is_some()
                    }
                    None => false,
                };
                if known {
                    Some(own.clone())
                } else {
                    env_key.map(str::to_string)
                }
            }
            (None, _) => None,
        };
        let provider = skald_core::config::ProviderConfig {
            kind: kind.to_string(),
            base_url: url,
            api_key_env: key_env,
        };
        let config = skald_core::config::set_default_model(
            &self.data_dir.config_path(),
            kind,
            Some(&provider),
            model,
        )
        .map_err(|e| invalid(e.to_string()))?;
        let spec = format!("{kind}/{model}");
        let models = choose_models(
            self.sessions.engine(),
            &config,
            Some(&spec),
            &self.data_dir.models_dir(),
        )
        .map_err(invalid)?;
        Ok(self.use_models(config, models))
    }

    fn use_models(&self, config: Config, models: Vec<ModelChoice>) -> Reply {
        let labels = models.iter().map(ModelChoice::label).collect();
        self.sessions.engine().set_models(models);
        *lock(&self.config) = config;
        *lock(&self.model_error) = None;
        Reply::ConfigureModel { models: labels }
    }

    /// Makes a model of the models folder the default.
    fn use_local_model(&self, name: &str) -> Result<Reply, ServiceError> {
        let dir = self.data_dir.models_dir();
        if !skald_core::models::local_models(&dir)
            .iter()
            .any(|m| m == name)
        {
            return Err(invalid(format!(
                "there is no local model `{name}` in {}; pull or add one first",
                dir.display()
            )));
        }
        let config = skald_core::config::set_default_model(
            &self.data_dir.config_path(),
            "local",
            None,
            name,
        )
        .map_err(|e| invalid(e.to_string()))?;
        let models = choose_models(
            self.sessions.engine(),
            &config,
            Some(&format!("local/{name}")),
            &dir,
        )
        .map_err(invalid)?;
        Ok(self.use_models(config, models))
    }

    fn local_models(&self) -> Reply {
        let dir = self.data_dir.models_dir();
        let names = skald_core::models::local_models(&dir);
        let installed = names
            .iter()
            .map(|n| LocalModelInfo {
                name: n.clone(),
                bytes: std::fs::metadata(dir.join(format!("{n}.gguf"))).map_or(0, |m| m.len()),
            })
            .collect();
        let recommended = skald_llm::local::pull::recommended()
            .into_iter()
            .filter(|r| !names.iter().any(|n| n == r.name))
            .map(|r| RecommendedModel {
                name: r.name.to_string(),
                description: r.description.to_string(),
                bytes: r.size,
            })
            .collect();
        Reply::LocalModels {
            available: skald_llm::local::AVAILABLE,
            folder: dir.display().to_string(),
            installed,
            recommended,
        }
    }

    /// Downloads a recommended model, reporting progress to every UI.
    async fn pull_model(&self, name: &str) -> Result<Reply, ServiceError> {
        let model = skald_llm::local::pull::find(name).ok_or_else(|| {
            invalid(format!(
                "`{name}` is not a model Skald knows how to download"
            ))
        })?;
        if !lock(&self.pulling).insert(name.to_string()) {
            return Err(invalid(format!("`{name}` is being downloaded already")));
        }
        // Cleared however this ends, a window closed mid-download included.
        struct Pulling<'a>(&'a Mutex<std::collections::HashSet<String>>, &'a str);
        impl Drop for Pulling<'_> {
            fn drop(&mut self) {
                lock(self.0).remove(self.1);
            }
        }
        let _pulling = Pulling(&self.pulling, name);
        let events = self.events.clone();
        let last = Mutex::new(u64::MAX);
        let progress = |done: u64, total: u64| {
            // One event per percent is plenty for a progress bar.
            let pct = done.saturating_mul(100) / total.max(1);
            let mut last = lock(&last);
            if *last != pct {
                *last = pct;
                let _ = events.send(ServerMessage::Event {
                    session_id: None,
                    event: skald_api::events::Event::ModelPull {
                        name: model.name.to_string(),
                        done,
                        total,
                    },
                });
            }
        };
        skald_llm::local::pull::pull(&model, &self.data_dir.models_dir(), &progress)
            .await
            .map_err(|e| invalid(e.to_string()))?;
        Ok(Reply::PullModel {
            model: format!("local/{}", model.name),
        })
    }

    async fn test_model(&self) -> Reply {
        let Some(model) = self.sessions.engine().models().first().cloned() else {
            return Reply::TestModel {
                ok: false,
                message: lock(&self.model_error)
                    .clone()
                    .unwrap_or_else(|| "no model is configured".into()),
                millis: 0,
            };
        };
        let started = Instant::now();
        let req = skald_llm::Request {
            model: model.model.clone(),
            messages: vec![skald_llm::Message::user("Reply with the word: ok")],
            tools: Vec::new(),
            tool_choice: skald_llm::ToolChoice::Auto,
            max_tokens: Some(8),
            temperature: None,
        };
        let first = tokio::time::timeout(TEST_MODEL_TIMEOUT, async {
            use futures::StreamExt;
            let mut stream = model.provider.stream(&req).await?;
            match stream.next().await {
                Some(Err(e)) => Err(e),
                _ => Ok(()),
            }
        })
        .await;
        let millis = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let (ok, message) = match first {
            Ok(Ok(())) => (true, format!("{} answered", model.label())),
            Ok(Err(e)) => (false, format!("{}: {e}", model.label())),
            Err(_) => (
                false,
                format!(
                    "{} did not answer within {} s",
                    model.label(),
                    TEST_MODEL_TIMEOUT.as_secs()
                ),
            ),
        };
        Reply::TestModel {
            ok,
            message,
            millis,
        }
    }

    async fn latex_build(&self, path: &str) -> Result<Reply, ServiceError> {
        let tex = self
            .policy
            .check(path, self.policy.root())
            .map_err(invalid)?;
        let engine = self.latex.clone();
        let doc = tex.clone();
        let started = Instant::now();
        // TeX runs in a worker process, waited for on a thread of its own, never on the
        // runtime's workers. A newer request for the document kills this build's worker
        // (`Superseded`), `latex_stop` and shutdown kill it too (`Cancelled`).
        let result = tokio::task::spawn_blocking(move || {
            engine.build(&doc, &skald_api::CancellationToken::new())
        })
        .await
        .unwrap_or_else(|e| Err(LatexError::Io(e.to_string())));
        let failed_after = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        Ok(match result {
            Ok(build) => {
                self.watches.set_inputs(&tex, &build.inputs);
                // The build's time in the URL: a rebuilt PDF is a new URL for the browser.
                let url = format!(
                    "{}&v={}",
                    self.route.url(&build.pdf),
                    std::fs::metadata(&build.pdf)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map_or(0, |d| d.as_millis())
                );
                Reply::LatexBuild {
                    ok: true,
                    pdf_url: Some(url),
                    from_cache: build.from_cache,
                    millis: build.millis,
                    errors: Vec::new(),
                    message: None,
                }
            }
            Err(LatexError::Compile { errors }) => Reply::LatexBuild {
                ok: false,
                pdf_url: None,
                from_cache: false,
                millis: failed_after,
                // Absolute where the file is the document's own, so the UI opens it.
                errors: errors
                    .into_iter()
                    .map(|mut e| {
                        let own = tex.parent().map(|d| d.join(&e.file));
                        if let Some(p) = own.filter(|p| p.is_file()) {
                            e.file = p.display().to_string();
                        }
                        e
                    })
                    .collect(),
                message: None,
            },
            Err(e) => Reply::LatexBuild {
                ok: false,
                pdf_url: None,
                from_cache: false,
                millis: failed_after,
                errors: Vec::new(),
                message: Some(e.to_string()),
            },
        })
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

fn to_values<T: serde::Serialize>(items: Vec<T>) -> Vec<serde_json::Value> {
    items
        .into_iter()
        .filter_map(|i| serde_json::to_value(i).ok())
        .collect()
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
