//! The model settings: which provider and model Skald talks to, the local models it can
//! pull and run, and a test call to the one in use.

use crate::{Service, ServiceError, TEST_MODEL_TIMEOUT, blocking, choose_models, invalid};
use skald_api::protocol::{LocalModelInfo, RecommendedModel, Reply, ServerMessage};
use skald_base::lock;
use skald_core::Config;
use skald_llm::ModelChoice;
use std::sync::{Arc, Mutex};
use std::time::Instant;

impl Service {
    /// Writes the provider and model into config.toml (the key into the secrets) and
    /// switches the engine to it.
    pub(crate) async fn configure_model(
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

    pub(crate) fn use_models(&self, config: Config, models: Vec<ModelChoice>) -> Reply {
        let labels = models.iter().map(ModelChoice::label).collect();
        self.sessions.engine().set_models(models);
        *lock(&self.config) = config;
        *lock(&self.model_error) = None;
        Reply::ConfigureModel { models: labels }
    }

    /// Makes a model of the models folder the default.
    pub(crate) fn use_local_model(&self, name: &str) -> Result<Reply, ServiceError> {
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

    pub(crate) fn local_models(&self) -> Reply {
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

    /// Downloads a model — a recommended one by name, a hub file (`hf:…`) or a URL — and
    /// prepares it for chats, reporting progress to every UI.
    pub(crate) async fn pull_model(&self, name: &str) -> Result<Reply, ServiceError> {
        use skald_llm::local::pull;
        let wanted = pull::Wanted::parse(name, None).map_err(|e| invalid(e.to_string()))?;
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
        let progress = per_percent(&self.events, |done, total| {
            skald_api::events::Event::ModelPull {
                name: name.to_string(),
                done,
                total,
            }
        });
        pull::fetch(
            &wanted,
            &self.data_dir.models_dir(),
            &pull::HubAccess::from_env(),
            &progress,
        )
        .await
        .map_err(|e| invalid(e.to_string()))?;
        self.prepare_model(name, &wanted.name).await;
        Ok(Reply::PullModel {
            model: format!("local/{}", wanted.name),
        })
    }

    /// A model downloaded is one to chat with: it reads a new chat's prompt now, so that
    /// the first chat does not (docs/models.md, "The first answer"). `asked` is the name
    /// the download was asked by, which the progress events carry. A failure leaves the
    /// model usable; the first chat then reads the prompt itself.
    async fn prepare_model(&self, asked: &str, name: &str) {
        if !skald_llm::local::AVAILABLE {
            return;
        }
        let engine = self.sessions.engine().clone();
        let config = lock(&self.config).clone();
        let model = format!("local/{name}");
        match choose_models(&engine, &config, Some(&model), &self.data_dir.models_dir()) {
            Ok(m) => {
                if let Some(chosen) = m.into_iter().next() {
                    let never = skald_api::CancellationToken::new();
                    self.prepare_chosen(asked, &chosen, &never).await;
                }
            }
            Err(e) => tracing::warn!(model, "cannot prepare the model for chats: {e}"),
        }
    }

    /// The default model, when it is a local one, reads a new chat's prompt in the
    /// background: at start and when the default changes. A preparation made by the
    /// command line need not match the app's chats (they are offered `restart`, an MCP
    /// server may have been added since), and this also loads the model, so the first
    /// chat starts at once. Preparing again what is prepared only loads the saved state.
    pub(crate) fn prepare_default(self: &Arc<Self>) {
        let Some(chosen) = self.sessions.engine().models().first().cloned() else {
            return;
        };
        if !skald_llm::local::AVAILABLE || chosen.provider.kind != skald_llm::ProviderKind::Local {
            return;
        }
        let cancel = skald_api::CancellationToken::new();
        // One at a time: a newer default replaces the one being prepared.
        if let Some(older) = lock(&self.preparing).replace(cancel.clone()) {
            older.cancel();
        }
        let service = self.clone();
        tokio::spawn(async move {
            service
                .prepare_chosen(&chosen.model, &chosen, &cancel)
                .await;
        });
    }

    /// Prepares `chosen` for the main agent's new chats, reporting progress to every UI
    /// as `model_prepare` events under `asked`, the last one whole however it ended, so a
    /// UI never keeps showing a preparation that is over.
    async fn prepare_chosen(
        &self,
        asked: &str,
        chosen: &ModelChoice,
        cancel: &skald_api::CancellationToken,
    ) {
        let engine = self.sessions.engine().clone();
        let progress = per_percent(&self.events, |read, total| {
            skald_api::events::Event::ModelPrepare {
                name: asked.to_string(),
                read,
                total,
            }
        });
        // A new chat's folder, as `create_session` gives it.
        let folder = self.policy.root().to_path_buf();
        if let Err(e) = engine
            .prepare_chat(chosen, "main", &folder, &progress, cancel)
            .await
        {
            tracing::warn!(
                model = chosen.label(),
                "cannot prepare the model for chats: {e}"
            );
        }
        let _ = self.events.send(ServerMessage::Event {
            session_id: None,
            event: skald_api::events::Event::ModelPrepare {
                name: asked.to_string(),
                read: 1,
                total: 1,
            },
        });
    }

    pub(crate) async fn test_model(&self) -> Reply {
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
            effort: None,
            web_search: false,
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

    /// The models a chat can be given: the configured one, its fallbacks, and the local
    /// models, each with what it can do.
    pub(crate) fn list_models(&self) -> Result<Reply, ServiceError> {
        let engine = self.sessions.engine();
        let configured = engine.models();
        let mut models: Vec<skald_api::protocol::ModelOption> = configured
            .iter()
            .enumerate()
            .map(|(i, m)| option(engine, m, i == 0))
            .collect();
        let config = lock(&self.config).clone();
        for name in skald_core::models::local_models(&self.data_dir.models_dir()) {
            let label = format!("local/{name}");
            if models.iter().any(|m| m.label == label) {
                continue;
            }
            if let Ok(chosen) =
                choose_models(engine, &config, Some(&label), &self.data_dir.models_dir())
                && let Some(first) = chosen.first()
            {
                models.push(option(engine, first, false));
            }
        }
        Ok(Reply::ListModels { models })
    }

    /// Gives a chat its own model and effort. The model must resolve now (its provider
    /// configured, its key present); the effort must be one the model takes.
    /// The model `spec` names, if a chat can be given it: its provider configured, with
    /// its key.
    pub(crate) fn usable_model(&self, spec: &str) -> Result<Option<ModelChoice>, ServiceError> {
        let engine = self.sessions.engine();
        let config = lock(&self.config).clone();
        let first = choose_models(engine, &config, Some(spec), &self.data_dir.models_dir())
            .map_err(|e| invalid(format!("{spec} cannot be used: {e}")))?
            .into_iter()
            .next();
        if let Some(m) = &first
            && m.provider.lacks_key()
        {
            return Err(invalid(format!(
                "{spec} cannot be used: {} has no key; configure it in Settings",
                m.provider.name
            )));
        }
        Ok(first)
    }

    pub(crate) fn set_session_model(
        &self,
        session_id: i64,
        model: Option<String>,
        effort: Option<String>,
    ) -> Result<Reply, ServiceError> {
        let model = model
            .map(|m| m.trim().to_string())
            .filter(|m| !m.is_empty());
        let effort = effort
            .map(|e| e.trim().to_ascii_lowercase())
            .filter(|e| !e.is_empty());
        let engine = self.sessions.engine();
        let chosen = match &model {
            Some(spec) => self.usable_model(spec)?,
            None => engine.models().first().cloned(),
        };
        if let Some(e) = &effort {
            if skald_llm::effort::Effort::parse(e).is_none() {
                return Err(invalid(format!(
                    "the effort is low, medium or high, not `{e}`"
                )));
            }
            if let Some(m) = &chosen
                && !skald_llm::effort::takes_effort(m.provider.kind, &m.model)
            {
                return Err(invalid(format!("{} takes no reasoning effort", m.label())));
            }
        }
        self.store
            .set_session_model(session_id, model.as_deref(), effort.as_deref())?;
        let session = self.store.get_session(session_id)?;
        Ok(Reply::SetSessionModel {
            session: self.session_info(session),
        })
    }
}

/// A progress callback that sends `event(done, total)` to every UI once per percent:
/// plenty for a progress bar.
fn per_percent<'a>(
    events: &'a tokio::sync::broadcast::Sender<ServerMessage>,
    event: impl Fn(u64, u64) -> skald_api::events::Event + Send + Sync + 'a,
) -> impl Fn(u64, u64) + Send + Sync + 'a {
    let last = Mutex::new(u64::MAX);
    move |done, total| {
        let pct = done.saturating_mul(100) / total.max(1);
        let mut last = lock(&last);
        if *last != pct {
            *last = pct;
            let _ = events.send(ServerMessage::Event {
                session_id: None,
                event: event(done, total),
            });
        }
    }
}

fn option(
    engine: &skald_core::engine::Engine,
    m: &ModelChoice,
    default: bool,
) -> skald_api::protocol::ModelOption {
    skald_api::protocol::ModelOption {
        label: m.label(),
        sees_images: engine.sees_images(m),
        takes_effort: skald_llm::effort::takes_effort(m.provider.kind, &m.model),
        default,
    }
}
