//! The engine as one shareable value: the store, tools, models and agents every turn runs
//! against, plus the work that outlives a turn — background tasks (`execute_task` with
//! mode async), notifications from background agents, and the deliveries that bring their
//! results into a chat (docs/tasks.md, "Background tasks", "Notifications").
//!
//! Carriers (`skald exec`, `skald cron run`, the session manager behind `skald serve` and
//! the desktop app) build one and hand out borrowed `TurnEnv`s from it.

use crate::agents::Library;
use crate::approval::RunContext;
use crate::inbox::Inbox;
use crate::lock;
use crate::models::ModelHealth;
use registry::ToolRegistry;
pub mod context;
pub mod registry;
pub mod tool_context;

use context::{ApprovalMode, Ask, Frame, TurnConfig, TurnEnv, TurnError};
use skald_api::CancellationToken;
use skald_api::events::Event;
use skald_llm::ModelChoice;
use skald_store::{Session, SessionKind, Store};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("{0}")]
    Store(#[from] skald_store::StoreError),
    #[error("{0}")]
    Agent(#[from] crate::agents::AgentError),
    #[error("{0}")]
    Turn(#[from] TurnError),
    #[error("{0}")]
    Model(#[from] skald_llm::LlmError),
    /// A chat's own model that cannot be resolved.
    #[error("{0}")]
    ChatModel(String),
    #[error(
        "session {session_id} is in use by another Skald process ({owner}); it is free again \
         when that process ends, or within a minute if it died"
    )]
    Busy { session_id: i64, owner: String },
}

/// This process's name in leases: its pid (so a lease of a process that is gone can be
/// taken over at once) and a nonce (pids are reused).
fn process_owner() -> String {
    format!(
        "pid:{}:{}",
        std::process::id(),
        skald_store::now_ms().rem_euclid(1_000_000_007)
    )
}

/// Settings every turn the engine runs uses.
#[derive(Debug, Clone)]
pub struct TurnSettings {
    pub max_rounds: usize,
    /// config.toml `[agent] compact_at`.
    pub compact_at: u8,
    /// What happens to calls needing approval in chats the engine drives.
    pub approval: ApprovalMode,
    pub context_window: usize,
    /// MCP connect and call timeouts.
    pub mcp: crate::config::McpConfig,
    /// How commands in the engine's chats are confined (config.toml `[sandbox]`).
    pub sandbox: crate::sandbox::SandboxSettings,
    /// Where checkpoints of the chats' folders are kept (config.toml `[checkpoints]`).
    pub checkpoints: crate::checkpoints::CheckpointSettings,
    /// The person's hooks (config.toml `[hooks]`, docs/hooks.md).
    pub hooks: crate::hooks::HooksConfig,
    /// Where tools keep what they derive from files (`DataDir::cache_dir`); none keeps
    /// nothing across calls (an engine without a data directory, as in-process tests).
    pub cache_dir: Option<std::path::PathBuf>,
    /// Which models the user says can or cannot see images (config.toml `[models.vision]`).
    pub vision: std::collections::BTreeMap<String, bool>,
    /// What the user says models cost (config.toml `[models.prices]`).
    pub prices: std::collections::BTreeMap<String, skald_llm::prices::Price>,
    /// config.toml `[budget] daily_usd`.
    pub daily_usd: Option<f64>,
    /// config.toml `[agent] at_once`.
    pub at_once: usize,
    /// config.toml `[web]`: the web tools (docs/web.md).
    pub web: crate::config::WebConfig,
    /// config.toml `[lsp]`: language servers (docs/lsp.md).
    pub lsp: skald_api::LspSetup,
}

impl TurnSettings {
    /// The settings config.toml gives the chats of an engine working in `data_dir`, whose
    /// calls needing approval go by `approval`.
    pub fn from_config(
        config: &crate::Config,
        data_dir: &crate::DataDir,
        approval: ApprovalMode,
    ) -> TurnSettings {
        TurnSettings {
            max_rounds: config.agent.max_rounds.max(1),
            compact_at: config.agent.compact_at.min(100),
            approval,
            context_window: config.models.context_window,
            mcp: config.mcp.clone(),
            sandbox: config.sandbox.settings(),
            checkpoints: config.checkpoints.settings(data_dir.root()),
            hooks: config.hooks.clone(),
            cache_dir: Some(data_dir.cache_dir()),
            vision: config.models.vision.clone(),
            prices: config.models.prices.clone(),
            daily_usd: config.budget.daily_usd,
            at_once: config.agent.at_once,
            web: config.web.clone(),
            lsp: config.lsp.setup(),
        }
    }
}

pub use crate::sink::Sink;

pub struct Engine {
    pub store: Arc<Store>,
    pub registry: Arc<ToolRegistry>,
    /// The model first, then its fallbacks.
    pub(crate) models: crate::models::ModelList,
    pub health: Arc<ModelHealth>,
    pub library: Arc<Library>,
    pub inbox: Arc<Inbox>,
    pub settings: TurnSettings,
    /// The context threshold and daily budget as they are now (Settings changes them while
    /// the engine runs), and the providers' rate limits.
    pub limits: crate::limits::Limits,
    /// How many of its chats' turns run at once; the rest wait in line.
    pub slots: crate::slots::Slots,
    /// The registered MCP servers and their client.
    pub mcp: Arc<crate::mcp::Servers>,
    /// The plugins Skald ships, on or off.
    pub plugins: crate::plugins::Plugins,
    /// The user's secrets, once opened; and the redactor over their values.
    pub(crate) secrets: Mutex<Option<Arc<skald_secrets::Secrets>>>,
    pub(crate) redactor: Arc<Mutex<skald_secrets::Redactor>>,
    pub(crate) sink: Sink,
    /// Running background tasks: task id -> (parent chat, stop token).
    pub(crate) tasks: Mutex<HashMap<i64, (i64, CancellationToken)>>,
    /// Wakes carriers waiting for a task to end or a delivery to arrive.
    pub(crate) changed: tokio::sync::Notify,
    /// Stops every background task at shutdown.
    pub(crate) shutdown: CancellationToken,
    /// Processes agents started in the background (`execute_cmd` with `background:
    /// true`), per chat; stopped at shutdown (docs/processes.md).
    pub processes: Arc<skald_api::processes::Processes>,
    /// This process's name in leases.
    pub(crate) owner: String,
    /// What every tool and process this engine starts is kept from: Skald's secrets
    /// folder, provider keys in the environment.
    pub withheld: Arc<crate::withheld::Withheld>,
    /// Checkpoints of the folders its chats change (docs/checkpoints.md).
    pub checkpoints: crate::checkpoints::Checkpoints,
    /// Where the person's own AGENTS.md and skills are (docs/instructions.md).
    pub places: crate::instructions::Places,
    /// Sessions a turn ran in in this process (SessionStart hooks' `resume`).
    started: Mutex<std::collections::HashSet<i64>>,
    /// Editors driving chats of this process, which lend those chats' calls their file
    /// system and terminals (docs/acp.md).
    editors: Mutex<HashMap<i64, Arc<dyn skald_api::editor::Editor>>>,
    /// Turns a chat's own model (`provider/model`) into the models its turns use, with
    /// the keys and providers of whoever hosts the engine (docs/models.md, "A model per
    /// chat"); without one, a chat's own model cannot be used.
    model_resolver: Mutex<Option<ModelResolver>>,
    /// config.toml `[web]` as it is now: Settings changes it while the engine runs.
    web: Mutex<crate::config::WebConfig>,
}

/// See `Engine::set_model_resolver`.
pub type ModelResolver = Arc<dyn Fn(&str) -> Result<Vec<ModelChoice>, String> + Send + Sync>;

impl Engine {
    pub fn new(
        store: Arc<Store>,
        registry: Arc<ToolRegistry>,
        models: Vec<ModelChoice>,
        library: Arc<Library>,
        settings: TurnSettings,
        sink: Sink,
    ) -> Arc<Engine> {
        let inbox = Inbox::new();
        let web = settings.web.clone();
        let active = Arc::new(Mutex::new(HashMap::new()));
        let redactor = Arc::new(Mutex::new(skald_secrets::Redactor::default()));
        let withheld = Arc::new(crate::withheld::Withheld::default());
        let sampler = Arc::new(std::sync::OnceLock::new());
        let updated = Arc::new(Mutex::new(std::collections::BTreeSet::new()));
        let users = Arc::new(Mutex::new(HashMap::new()));
        let subscribed = Arc::new(Mutex::new(std::collections::BTreeSet::new()));
        let host = crate::mcp::Host {
            store: store.clone(),
            inbox: inbox.clone(),
            sink: sink.clone(),
            active: active.clone(),
            redactor: redactor.clone(),
            sampler: sampler.clone(),
            updated: updated.clone(),
            users: users.clone(),
            subscribed: subscribed.clone(),
        };
        let mcp = Arc::new(crate::mcp::Servers {
            manager: skald_mcp::McpManager::new(Arc::new(host)),
            active,
            connect_timeout: std::time::Duration::from_secs(settings.mcp.connect_timeout_secs),
            call_timeout: std::time::Duration::from_secs(settings.mcp.call_timeout_secs),
            logs_dir: Mutex::new(None),
            secrets: Mutex::new(None),
            logins: crate::mcp::Logins {
                client_metadata_url: settings.mcp.client_metadata_url.clone(),
                redactor: Some(redactor.clone()),
            },
            withheld: withheld.clone(),
            updated,
            subscribed,
            loaded: Mutex::new(HashMap::new()),
            loads: std::sync::atomic::AtomicU64::new(0),
            users,
        });
        let checkpoints = crate::checkpoints::Checkpoints::new(settings.checkpoints.clone());
        let shutdown = CancellationToken::new();
        let told = sink.clone();
        let processes = skald_api::processes::Processes::new(
            Arc::new(move |session_id, process| {
                told(session_id, Event::ProcessUpdate { process });
            }),
            shutdown.clone(),
        );
        let engine = Arc::new(Engine {
            store,
            registry,
            models: {
                let list = crate::models::ModelList::new(models);
                list.set_vision(settings.vision.clone());
                list.set_prices(settings.prices.clone());
                list
            },
            health: Arc::new(ModelHealth::default()),
            library,
            inbox,
            limits: crate::limits::Limits::new(settings.compact_at, settings.daily_usd),
            slots: crate::slots::Slots::new(settings.at_once),
            settings,
            mcp,
            plugins: crate::plugins::Plugins::default(),
            secrets: Mutex::new(None),
            redactor,
            sink,
            tasks: Mutex::new(HashMap::new()),
            changed: tokio::sync::Notify::new(),
            shutdown,
            processes,
            owner: process_owner(),
            withheld,
            checkpoints,
            places: crate::instructions::Places::of_user(),
            started: Mutex::new(std::collections::HashSet::new()),
            editors: Mutex::new(HashMap::new()),
            model_resolver: Mutex::new(None),
            web: Mutex::new(web),
        });
        // The MCP host answers servers' sampling requests with the engine's models; a weak
        // handle, so the engine's servers do not keep it alive.
        let weak = Arc::downgrade(&engine);
        let answer: crate::mcp::Sampler = Arc::new(move |session_id, request, cancel| {
            let weak = weak.clone();
            Box::pin(async move {
                let engine = weak.upgrade().ok_or("the engine is shutting down")?;
                engine.sample(session_id, request, &cancel).await
            })
        });
        let _ = sampler.set(answer);
        engine
    }

    /// From now on the calls of `session_id` (its sub-agents' included) use `editor`'s
    /// file system and terminals, as far as it offers them.
    pub fn attach_editor(&self, session_id: i64, editor: Arc<dyn skald_api::editor::Editor>) {
        lock(&self.editors).insert(session_id, editor);
    }

    /// The editor is gone: the session's calls work on disk and in their own processes.
    pub fn detach_editor(&self, session_id: i64) {
        lock(&self.editors).remove(&session_id);
    }

    /// What call `call_id` of `session_id` may use of an attached editor.
    pub fn editor_for(
        &self,
        session_id: i64,
        call_id: &str,
    ) -> Option<skald_api::editor::EditorAccess> {
        lock(&self.editors)
            .get(&session_id)
            .map(|e| skald_api::editor::EditorAccess::new(e.clone(), call_id))
    }

    /// Notes that a turn runs in `session_id`; whether it is the first in this process.
    pub fn started_session(&self, session_id: i64) -> bool {
        lock(&self.started).insert(session_id)
    }

    /// Opens the user's secrets (`<data dir>/secrets`, or the OS keyring): MCP servers can
    /// then use `${secret:NAME}`, agents `set_secret` and `list_secrets`, and every tool
    /// result has their values redacted.
    pub fn open_secrets(
        &self,
        data_dir: &std::path::Path,
    ) -> Result<(), skald_secrets::SecretError> {
        // Whatever folder a chat works in, file tools never reach Skald's own secrets;
        // protected before opening, so a keyring failure leaves the folder guarded.
        self.withheld
            .protect(&crate::DataDir::at(data_dir).secrets_dir());
        self.withheld.hide_from_commands(data_dir);
        let secrets = Arc::new(skald_secrets::Secrets::open(data_dir)?);
        *lock(&self.redactor) = secrets.redactor()?;
        *lock(&self.mcp.secrets) = Some(secrets.clone());
        *lock(&self.secrets) = Some(secrets);
        Ok(())
    }

    /// config.toml `[web]` as it is now (docs/web.md).
    pub fn web(&self) -> crate::config::WebConfig {
        lock(&self.web).clone()
    }

    /// Has the engine's chats use `web` from their next call.
    pub fn set_web(&self, web: crate::config::WebConfig) {
        *lock(&self.web) = web;
    }

    pub fn secrets(&self) -> Option<Arc<skald_secrets::Secrets>> {
        lock(&self.secrets).clone()
    }

    /// An MCP server's sampling request, approved by the user: the conversation it
    /// proposes, answered without tools by the model the next turn of chat `session_id`
    /// (whose call caused it) would use — its own model if it has one — the first of the
    /// list that is not down. The call is recorded with its cost, like a turn's. What the
    /// model says is redacted before it goes to the server, as a tool result would be.
    pub(crate) async fn sample(
        &self,
        session_id: i64,
        request: skald_mcp::SamplingRequest,
        cancel: &CancellationToken,
    ) -> Result<skald_mcp::Sampled, String> {
        let own = match self.store.get_session(session_id) {
            Ok(session) => self.models_for(&session).map_err(|e| e.to_string())?,
            Err(_) => None,
        };
        let list = own.as_ref().unwrap_or(&self.models);
        let models = list.current();
        let model = *crate::models::candidates(&models, &self.health)
            .first()
            .ok_or("no model is configured")?;
        let mut messages = Vec::new();
        if let Some(system) = request.system_prompt.filter(|s| !s.trim().is_empty()) {
            messages.push(skald_llm::Message::system(system));
        }
        for (role, text) in request.messages {
            messages.push(if role == "assistant" {
                skald_llm::Message::assistant(text, Vec::new())
            } else {
                skald_llm::Message::user(text)
            });
        }
        let call = skald_llm::Request {
            model: model.model.clone(),
            messages,
            tools: Vec::new(),
            tool_choice: skald_llm::ToolChoice::Auto,
            max_tokens: Some(request.max_tokens.clamp(1, 16_384)),
            temperature: None,
            effort: None,
            web_search: false,
        };
        let answer = async {
            match model.provider.stream(&call).await {
                Ok(stream) => skald_llm::collect(stream).await,
                Err(e) => Err(e),
            }
        };
        let started_at = skald_store::now_ms();
        let answer = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err("the request was withdrawn".to_string()),
            r = answer => r,
        };
        let failure = answer.as_ref().err().map(ToString::to_string);
        let recorded = crate::usage::record_call(
            &self.store,
            session_id,
            model,
            list.price_of(model),
            match failure {
                None => skald_store::RequestStatus::Ok,
                Some(_) => skald_store::RequestStatus::Failed,
            },
            answer.as_ref().ok().and_then(|a| a.usage),
            failure.as_deref(),
            started_at,
        );
        if let Err(e) = recorded {
            tracing::warn!("cannot record a sampling call: {e}");
        }
        let answer = answer.map_err(|e| format!("the model failed: {e}"))?;
        Ok(skald_mcp::Sampled {
            text: lock(&self.redactor).redact(&answer.text),
            model: model.model.clone(),
        })
    }

    /// Re-reads the values to redact (after a secret was set or removed).
    pub fn refresh_redactor(&self) {
        if let Some(s) = self.secrets()
            && let Ok(r) = s.redactor()
        {
            *lock(&self.redactor) = r;
        }
    }

    /// `text` with every secret value replaced by its name.
    pub fn redact(&self, text: &str) -> String {
        let r = lock(&self.redactor);
        if r.is_empty() {
            text.to_string()
        } else {
            r.redact(text)
        }
    }

    /// Starts the plugins the user turned on.
    pub fn start_plugins(&self) {
        self.plugins.start_enabled(&self.store);
    }

    /// Starts the registered MCP servers in the background (stderr logs under
    /// `logs_dir/mcp`). Never waits for them.
    pub fn start_mcp(&self, logs_dir: Option<std::path::PathBuf>) -> Result<(), EngineError> {
        *lock(&self.mcp.logs_dir) = logs_dir;
        Ok(self.mcp.start_registered(&self.store)?)
    }

    /// The models turns start with now.
    pub fn models(&self) -> Arc<Vec<ModelChoice>> {
        self.models.current()
    }

    /// Whether `model` can see images (docs/images.md).
    pub fn sees_images(&self, model: &ModelChoice) -> bool {
        self.models.sees_images(model)
    }

    /// Sets how a chat's own model is resolved (the service and `skald exec` give theirs).
    pub fn set_model_resolver(&self, resolver: ModelResolver) {
        *lock(&self.model_resolver) = Some(resolver);
    }

    /// The models a chat's turns use: its own model, then the configured fallbacks, when
    /// it has one; `None` when it has none (the engine's models then).
    pub fn models_for(
        &self,
        session: &Session,
    ) -> Result<Option<crate::models::ModelList>, EngineError> {
        let Some(spec) = session.model.as_deref() else {
            return Ok(None);
        };
        let resolver = lock(&self.model_resolver).clone().ok_or_else(|| {
            EngineError::ChatModel(format!(
                "the chat's model {spec} cannot be used here: nothing resolves model names"
            ))
        })?;
        let models = resolver(spec).map_err(|e| {
            EngineError::ChatModel(format!("the chat's model {spec} cannot be used: {e}"))
        })?;
        let list = crate::models::ModelList::new(models).learning_with(&self.models);
        list.set_vision(self.settings.vision.clone());
        list.set_prices(self.settings.prices.clone());
        Ok(Some(list))
    }

    /// Replaces the models for turns that start from now on.
    pub fn set_models(&self, models: Vec<ModelChoice>) {
        self.models.set(models);
    }

    /// Sends an event of `session_id` to the engine's sink.
    pub fn emit(&self, session_id: i64, event: Event) {
        (self.sink)(session_id, event);
    }

    /// The turn configuration a session runs with: its agent's prompt, its run context
    /// with the stored extra lines, and whether it is a background session.
    pub fn config_for(
        &self,
        session: &Session,
        approval: ApprovalMode,
    ) -> Result<TurnConfig, EngineError> {
        let granted = self.store.granted_groups(session.id, None)?;
        let mcp_list = self.mcp.prompt_list(&self.store, &granted);
        let (mut run, extra) = RunContext::for_session(
            &self.store,
            session,
            self.library.skill_dirs(),
            &self.withheld,
            self.settings.sandbox,
        )?;
        run.agent_id = session.agent_id.clone();
        let (system_prompt, instructions, hooks) =
            self.prompt_for(&session.agent_id, &mcp_list, &extra, &mut run)?;
        Ok(TurnConfig {
            max_rounds: self.settings.max_rounds,
            context_window: self.settings.context_window,
            approval,
            run,
            system_prompt,
            background: session.kind == SessionKind::Background,
            first_tool_choice: skald_llm::ToolChoice::Auto,
            instructions,
            hooks,
            effort: session
                .effort
                .as_deref()
                .and_then(skald_llm::effort::Effort::parse),
            compact_at: self.limits.compact_at(),
        })
    }

    /// The system prompt of a turn of `agent` in `run`'s folder: the agent's own, the
    /// chat's extra lines, then the AGENTS.md files and skills of the folder and the
    /// person (docs/instructions.md), whose skill folders `run` may then read; and the
    /// hooks of the folder (docs/hooks.md).
    pub fn prompt_for(
        &self,
        agent: &str,
        mcp_list: &str,
        extra: &str,
        run: &mut RunContext,
    ) -> Result<(String, crate::instructions::Gathered, crate::hooks::Active), EngineError> {
        let mut prompt = self.library.system_prompt(agent, mcp_list)?;
        // What the agent may not read, less Skald's data directory: the file tools refuse
        // it, but the person's own AGENTS.md and skills may live there (a config folder
        // set inside it), and are read by Skald, not by the agent.
        let denied: Vec<std::path::PathBuf> =
            crate::approval::denied_paths(&self.store, run, skald_api::tool_names::READ_FILE)
                .into_iter()
                .filter(|d| !run.hidden_from_commands.contains(d))
                .collect();
        let mut gathered = crate::instructions::gather(&run.working_dir, &self.places, &denied);
        let hooks =
            crate::hooks::Active::for_folder(&self.settings.hooks, &self.store, &run.working_dir);
        gathered.context.project_hooks = hooks.project.clone();
        run.allow_fs_reads
            .extend(gathered.skill_dirs.iter().cloned());
        for part in [extra.trim(), gathered.text.trim()] {
            if !part.is_empty() {
                prompt.push_str("\n\n");
                prompt.push_str(part);
            }
        }
        Ok((prompt, gathered, hooks))
    }

    /// How a session's commands are confined now (its own setting over config.toml's),
    /// as a chat shows it.
    pub fn sandbox_of(&self, session: &Session) -> Result<skald_api::SandboxInfo, EngineError> {
        let (run, _) = RunContext::for_session(
            &self.store,
            session,
            Vec::new(),
            &self.withheld,
            self.settings.sandbox,
        )?;
        Ok(run.sandbox.info())
    }

    /// A turn environment over the engine's parts.
    pub fn env<'a>(
        self: &'a Arc<Self>,
        cfg: &'a TurnConfig,
        queued: Option<&'a (dyn Fn() -> Vec<crate::engine::context::Prompt> + Send + Sync)>,
        ask: Option<Ask<'a>>,
    ) -> TurnEnv<'a> {
        TurnEnv {
            store: &self.store,
            registry: &self.registry,
            models: &self.models,
            health: &self.health,
            cfg,
            queued,
            ask,
            inbox: Some(&self.inbox),
            frame: Frame::default(),
            library: Some(&self.library),
            mcp_list: crate::mcp::NONE_CONFIGURED,
            engine: Some(self),
        }
    }
}
