//! Settings: agents, background tasks, schedules, MCP servers, secrets, plugins and what
//! Skald runs with.

use crate::{Service, ServiceError, blocking, invalid, log_tail};
use skald_api::protocol::McpServerInfo;
use skald_api::protocol::{AgentInfo, Reply};
use skald_api::records::McpStatus;
use skald_base::lock;
use skald_llm::ModelChoice;
use std::sync::Arc;

/// The most agents Settings lets run at once: past it, a typo, not a choice.
const MAX_AT_ONCE: u32 = 64;

impl Service {
    pub(crate) fn list_agents(&self) -> Reply {
        Reply::ListAgents {
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
        }
    }

    /// The keyring is D-Bus (or a file) and may wait: off the async workers.
    pub(crate) async fn list_secrets(&self) -> Result<Reply, ServiceError> {
        let secrets = self.secrets()?;
        let backend = secrets.backend();
        let names = blocking(move || secrets.list(None)).await?;
        Ok(Reply::ListSecrets {
            names,
            store: match backend {
                skald_secrets::Backend::Keyring => "the OS keyring".into(),
                skald_secrets::Backend::File => "Skald's encrypted file".into(),
            },
        })
    }

    pub(crate) async fn set_secret(
        &self,
        name: String,
        value: String,
    ) -> Result<Reply, ServiceError> {
        let secrets = self.secrets()?;
        blocking(move || secrets.set(&name, &value)).await?;
        self.sessions.engine().refresh_redactor();
        Ok(Reply::SetSecret)
    }

    pub(crate) async fn remove_secret(&self, name: String) -> Result<Reply, ServiceError> {
        let secrets = self.secrets()?;
        let n = name.clone();
        let gone = blocking(move || secrets.delete(&n)).await?;
        if !gone {
            return Err(invalid(format!("no secret named {name}")));
        }
        self.sessions.engine().refresh_redactor();
        Ok(Reply::RemoveSecret)
    }

    pub(crate) async fn settings(&self) -> Result<Reply, ServiceError> {
        let web = self.web_settings().await;
        let engine = self.sessions.engine();
        let today_cost_usd = self
            .store
            .usage_since(skald_core::usage::start_of_today())?
            .cost_usd;
        Ok(Reply::Settings {
            version: env!("CARGO_PKG_VERSION").to_string(),
            data_dir: self.data_dir.root().display().to_string(),
            models: engine.models().iter().map(ModelChoice::label).collect(),
            model_error: lock(&self.model_error).clone(),
            config_path: self.data_dir.config_path().display().to_string(),
            approval: "Calls that need approval wait in the chat and the Inbox".into(),
            tex: skald_core::doctor::tex_status(&self.data_dir),
            compact_at: engine.limits.compact_at(),
            daily_budget_usd: engine.limits.daily_usd(),
            at_once: u32::try_from(engine.slots.limit()).unwrap_or(u32::MAX),
            today_cost_usd,
            rate_limits: engine.limits.rate_limits(),
            web,
            language_servers: skald_core::doctor::language_servers(&lock(&self.config).lsp),
        })
    }

    /// `[web]` as the engine uses it, with doctor's word on web search. Whether the key
    /// is stored is asked of the keyring off the async workers.
    async fn web_settings(&self) -> skald_api::protocol::WebSettings {
        let web = self.sessions.engine().web();
        let key_stored = match self.secrets() {
            Ok(secrets) => blocking(move || {
                secrets
                    .get(skald_core::config::WEB_SEARCH_KEY)
                    .map(|v| v.is_some())
            })
            .await
            .unwrap_or(false),
            Err(_) => false,
        };
        let check = skald_core::doctor::web_search_status(&web, key_stored);
        skald_api::protocol::WebSettings {
            search: web.search.clone(),
            search_url: web.search_url.clone(),
            provider_search: web.provider_search,
            timeout_secs: web.timeout_secs,
            key_stored,
            ready: check.status == skald_core::doctor::CheckStatus::Ok,
            status: check.detail,
            hint: check.hint,
        }
    }

    /// Writes `[web]` and has the engine's chats use it from their next call. A setting
    /// that would not work (an unknown search, SearXNG without its address) is refused
    /// before anything is written.
    pub(crate) async fn set_web(
        &self,
        search: String,
        search_url: String,
        provider_search: bool,
        timeout_secs: u64,
    ) -> Result<Reply, ServiceError> {
        let search = search.trim().to_ascii_lowercase();
        let search_url = search_url.trim().to_string();
        if !(1..=600).contains(&timeout_secs) {
            return Err(invalid(format!(
                "a fetch's timeout is 1 to 600 seconds, not {timeout_secs}"
            )));
        }
        let mut web = self.sessions.engine().web();
        web.search = search.clone();
        web.search_url = search_url.clone();
        web.provider_search = provider_search;
        web.timeout_secs = timeout_secs;
        web.search_api().map_err(invalid)?;
        if !search_url.is_empty() {
            skald_web::parse_url(&search_url).map_err(|e| invalid(e.to_string()))?;
        }
        let text = |s: String| (!s.is_empty()).then(|| s.into());
        let config = skald_core::config::set_values(
            &self.data_dir.config_path(),
            "web",
            vec![
                ("search", text(search)),
                ("search_url", text(search_url)),
                ("provider_search", Some(provider_search.into())),
                (
                    "timeout_secs",
                    Some(i64::try_from(timeout_secs).unwrap_or(30).into()),
                ),
            ],
        )
        .map_err(|e| invalid(e.to_string()))?;
        self.sessions.engine().set_web(config.web.clone());
        *lock(&self.config) = config;
        Ok(Reply::SetWeb {
            web: self.web_settings().await,
        })
    }

    /// Writes `[agent] compact_at` and has the engine's turns use it from their next one.
    pub(crate) fn set_compact_at(&self, percent: u8) -> Result<Reply, ServiceError> {
        if percent > 100 {
            return Err(invalid(format!(
                "compact_at is a percent of the model's window, 0 to 100, not {percent}"
            )));
        }
        let config = skald_core::config::set_value(
            &self.data_dir.config_path(),
            "agent",
            "compact_at",
            Some(i64::from(percent).into()),
        )
        .map_err(|e| invalid(e.to_string()))?;
        self.sessions.engine().limits.set_compact_at(percent);
        *lock(&self.config) = config;
        Ok(Reply::SetCompactAt { percent })
    }

    /// Writes `[budget] daily_usd` (none removes it) and has the engine's turns keep to it
    /// from their next model call.
    pub(crate) fn set_daily_budget(&self, usd: Option<f64>) -> Result<Reply, ServiceError> {
        if let Some(u) = usd
            && !(u.is_finite() && u > 0.0)
        {
            return Err(invalid(format!(
                "a daily budget is a positive number of US dollars, not {u}; to have none, \
                 leave it empty"
            )));
        }
        let config = skald_core::config::set_value(
            &self.data_dir.config_path(),
            "budget",
            "daily_usd",
            usd.map(Into::into),
        )
        .map_err(|e| invalid(e.to_string()))?;
        self.sessions.engine().limits.set_daily_usd(usd);
        *lock(&self.config) = config;
        Ok(Reply::SetDailyBudget { usd })
    }

    /// Writes `[agent] at_once` and has the engine run that many turns at once from now:
    /// waiting turns that now fit start.
    pub(crate) fn set_at_once(&self, count: u32) -> Result<Reply, ServiceError> {
        if count > MAX_AT_ONCE {
            return Err(invalid(format!(
                "at most {MAX_AT_ONCE} agents can be let run at once, not {count}; 0 sets no \
                 limit"
            )));
        }
        let config = skald_core::config::set_value(
            &self.data_dir.config_path(),
            "agent",
            "at_once",
            Some(i64::from(count).into()),
        )
        .map_err(|e| invalid(e.to_string()))?;
        self.sessions
            .engine()
            .slots
            .set_limit(usize::try_from(count).unwrap_or(usize::MAX));
        *lock(&self.config) = config;
        Ok(Reply::SetAtOnce { count })
    }

    /// Builds the offline TeX bundle from the installed TeX Live, reporting progress to
    /// every UI; the LaTeX engine uses it from its next compile.
    pub(crate) async fn build_tex_bundle(&self) -> Result<Reply, ServiceError> {
        if self
            .building_tex
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return Err(invalid("the TeX bundle is being built already"));
        }
        // Cleared however this ends, a window closed mid-build included.
        struct Building<'a>(&'a std::sync::atomic::AtomicBool);
        impl Drop for Building<'_> {
            fn drop(&mut self) {
                self.0.store(false, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let _building = Building(&self.building_tex);
        let events = self.events.clone();
        let out = self.data_dir.tex_bundle_path();
        let built = blocking(move || {
            let trees = skald_viewer::latex::bundle::SYSTEM_TREES;
            skald_viewer::latex::bundle::build(trees, None, &out, &mut |done, total| {
                let _ = events.send(skald_api::protocol::ServerMessage::Event {
                    session_id: None,
                    event: skald_api::events::Event::TexBundle {
                        done: done as u64,
                        total: total as u64,
                    },
                });
            })
        })
        .await?;
        Ok(Reply::BuildTexBundle {
            path: built.path.display().to_string(),
            files: built.files as u64,
            bytes: built.bytes,
        })
    }

    pub(crate) fn secrets(&self) -> Result<Arc<skald_secrets::Secrets>, ServiceError> {
        self.sessions.engine().secrets().ok_or_else(|| {
            invalid("secrets are not available: neither the OS keyring nor Skald's file opened")
        })
    }

    pub(crate) fn mcp_servers(&self) -> Result<Vec<McpServerInfo>, ServiceError> {
        let engine = self.sessions.engine();
        let manager = &engine.mcp.manager;
        let logs = self.data_dir.logs_dir();
        Ok(self
            .store
            .list_mcp_servers()?
            .into_iter()
            .map(|r| {
                let status = match manager.status(&r.name) {
                    // The log tail is redacted as in the `mcp_status` event.
                    Some(McpStatus::Failed { error, log_tail }) => McpStatus::Failed {
                        error,
                        log_tail: engine.redact(&log_tail),
                    },
                    Some(s) => s,
                    None if !r.enabled => McpStatus::Disabled,
                    None => McpStatus::NotStarted,
                };
                McpServerInfo {
                    log_tail: log_tail(&logs.join("mcp").join(format!("{}.log", r.name)), 20),
                    name: r.name,
                    enabled: r.enabled,
                    transport: r.transport,
                    description: r.description,
                    status,
                    sandbox: r.sandbox,
                    sandbox_network: r.sandbox_network,
                }
            })
            .collect())
    }
}
