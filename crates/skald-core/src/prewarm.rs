//! Reading a new chat's prompt before there is a chat. Every chat with an agent starts
//! with the same few thousand tokens (its instructions and its tools' schemas); a local
//! model on a small machine takes half a minute to read them, and keeps the state they
//! leave on disk once it has (skald-llm's `local::saved`). Preparing reads them once,
//! when a model is installed, so that even the first chat answers within seconds. Above
//! `turn` (whose first request it sends) and `engine`.

use crate::engine::{Engine, EngineError};
use crate::turn;
use futures::StreamExt;
use skald_api::CancellationToken;
use skald_llm::{Event, ModelChoice, Request, ToolChoice};
use skald_store::{Session, SessionKind};
use std::path::Path;
use std::sync::Arc;

/// How preparing ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prepared {
    /// The prompt was read (or its saved state found); new chats start from it.
    Ready,
    /// Stopped before the model finished reading.
    Cancelled,
}

impl Engine {
    /// Reads, with `model`, what the first request of a new chat with `agent` in `folder`
    /// sends, generating one token, and reports how far the reading is (`done`, `total`
    /// tokens). A local model saves the state of the part every such chat shares; for
    /// any other model this is one short request.
    pub async fn prepare_chat(
        self: &Arc<Self>,
        model: &ModelChoice,
        agent: &str,
        folder: &Path,
        progress: &(dyn Fn(u64, u64) + Send + Sync),
        cancel: &CancellationToken,
    ) -> Result<Prepared, EngineError> {
        // A chat as it is before its first message: the agent, the folder, no stored
        // run context, so every setting is the default a new chat gets.
        let session = Session {
            id: 0,
            title: String::new(),
            agent_id: agent.to_string(),
            kind: SessionKind::Interactive,
            working_dir: Some(folder.display().to_string()),
            run_context_id: None,
            home_session_id: None,
            created_at: 0,
            updated_at: 0,
            model: None,
            effort: None,
            forked_from: None,
            forked_after: None,
            mode: skald_api::records::ChatMode::Act,
        };
        let cfg = self.config_for(&session, self.settings.approval)?;
        let env = self.env(&cfg, None, None);
        // The words do not matter: only what comes before them is kept.
        let (messages, tools) = turn::first_request(&env, "Hello")?;
        let request = Request {
            model: model.model.clone(),
            messages,
            tools: turn::fit_to_model(model, &tools, env.registry),
            tool_choice: ToolChoice::Auto,
            max_tokens: Some(1),
            temperature: None,
            effort: None,
            web_search: false,
        };
        let mut stream = model.provider.stream(&request).await?;
        loop {
            let event = tokio::select! {
                () = cancel.cancelled() => return Ok(Prepared::Cancelled),
                e = stream.next() => e,
            };
            match event {
                None => return Ok(Prepared::Ready),
                Some(Ok(Event::Reading { done, total })) => progress(done, total),
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.into()),
            }
        }
    }
}
