//! The chats: listing, creating, renaming and deleting them, their history page by page,
//! their usage, and the messages sent to them.

use crate::{HISTORY_PAGE, Service, ServiceError, convert, invalid};
use skald_api::ChatImage;
use skald_api::protocol::Reply;
use skald_api::protocol::{ChatMessage, ToolCallInfo};
use skald_base::lock;
use skald_core::session::manager::Sent;
use skald_core::turn::Prompt;
use skald_store::{ImageOwner, ImageRef};
use skald_store::{NewSession, SessionKind};
use std::cmp::Reverse;

impl Service {
    pub(crate) fn list_sessions(&self) -> Result<Reply, ServiceError> {
        let mut sessions: Vec<_> = self
            .store
            .list_sessions()?
            .into_iter()
            .filter(|s| s.kind == SessionKind::Interactive)
            .collect();
        sessions.sort_by_key(|s| Reverse(s.updated_at));
        Ok(Reply::ListSessions {
            sessions: sessions.into_iter().map(|s| self.session_info(s)).collect(),
        })
    }

    pub(crate) async fn create_session(
        &self,
        title: Option<String>,
        working_dir: Option<String>,
        agent_id: Option<String>,
        worktree: Option<String>,
    ) -> Result<Reply, ServiceError> {
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
        let made = match &worktree {
            Some(name) => Some(self.make_worktree(dir.clone(), name).await?),
            None => None,
        };
        let folder = made
            .as_ref()
            .map_or(dir.clone(), |m| m.worktree.working_dir.clone());
        let created = self.store.create_session(&NewSession {
            title: title.unwrap_or_else(|| "New chat".into()),
            agent_id: agent,
            working_dir: Some(folder.display().to_string()),
            ..NewSession::default()
        });
        let s = match (created, &made) {
            (Ok(s), _) => s,
            (Err(e), Some(m)) => {
                // No chat, no worktree left behind for it.
                let _ = skald_worktree::discard(&m.worktree);
                return Err(e.into());
            }
            (Err(e), None) => return Err(e.into()),
        };
        if let Some(m) = &made {
            skald_core::worktrees::record(&self.store, m, s.id)?;
        }
        Ok(Reply::CreateSession {
            session: self.session_info(s),
        })
    }

    pub(crate) fn rename_session(
        &self,
        session_id: i64,
        title: &str,
    ) -> Result<Reply, ServiceError> {
        let title = title.trim();
        if title.is_empty() {
            return Err(invalid("a chat's title cannot be empty"));
        }
        self.store.rename_session(session_id, title)?;
        Ok(Reply::RenameSession)
    }

    pub(crate) async fn delete_session(&self, session_id: i64) -> Result<Reply, ServiceError> {
        if self.sessions.is_running(session_id) {
            return Err(invalid(
                "this chat's turn is running; stop it before deleting the chat",
            ));
        }
        // Its background processes end with it, and so do those of the background tasks it
        // started (and theirs): found before the deletion takes the task rows with it.
        let owned = self.with_its_tasks(session_id)?;
        self.store.delete_session(session_id)?;
        let processes = &self.sessions.engine().processes;
        for id in owned {
            processes.remove_session(id).await;
        }
        Ok(Reply::DeleteSession)
    }

    /// `session_id` and the sessions of the tasks started from it, theirs included.
    fn with_its_tasks(&self, session_id: i64) -> Result<Vec<i64>, ServiceError> {
        // Bounded: task chains are shallow, and a cycle in bad data must not loop.
        const MOST: usize = 10_000;
        let mut owned = vec![session_id];
        let mut next = 0;
        while next < owned.len() && owned.len() < MOST {
            let tasks = self.store.list_tasks(Some(owned[next]))?;
            for id in tasks.into_iter().filter_map(|t| t.session_id) {
                if !owned.contains(&id) {
                    owned.push(id);
                }
            }
            next += 1;
        }
        Ok(owned)
    }

    /// The chat's background processes (docs/processes.md).
    pub(crate) fn list_processes(&self, session_id: i64) -> Result<Reply, ServiceError> {
        Ok(Reply::ListProcesses {
            processes: self.sessions.engine().processes.list(session_id),
        })
    }

    pub(crate) fn process_output(
        &self,
        session_id: i64,
        process_id: u32,
    ) -> Result<Reply, ServiceError> {
        let (process, output) = self
            .sessions
            .engine()
            .processes
            .output(session_id, process_id)
            .map_err(|e| invalid(e.to_string()))?;
        Ok(Reply::ProcessOutput { process, output })
    }

    pub(crate) async fn stop_process(
        &self,
        session_id: i64,
        process_id: u32,
    ) -> Result<Reply, ServiceError> {
        let process = self
            .sessions
            .engine()
            .processes
            .stop(session_id, process_id)
            .await
            .map_err(|e| invalid(e.to_string()))?;
        Ok(Reply::StopProcess { process })
    }

    /// A page of the chat's history: `limit` messages (500 when unset) before `before`, with
    /// the tool calls of those messages.
    pub(crate) fn history(
        &self,
        session_id: i64,
        before: Option<i64>,
        limit: Option<u32>,
    ) -> Result<Reply, ServiceError> {
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
        let mut shown = self.store.session_images(session_id)?;
        let mut images = |owner: ImageOwner| -> Vec<ChatImage> {
            shown
                .remove(&owner)
                .unwrap_or_default()
                .iter()
                .map(skald_core::images::chat_image)
                .collect()
        };
        let messages: Vec<_> = messages
            .into_iter()
            .map(|mut m: ChatMessage| {
                m.images = images(ImageOwner::Message(m.id));
                m
            })
            .collect();
        let tool_calls = self
            .store
            .list_tool_calls(session_id)?
            .into_iter()
            .filter(|c| {
                c.message_id
                    .is_none_or(|id| (start == 0 || id >= first) && id < last)
            })
            .map(|c| {
                let owner = ImageOwner::ToolCall(c.tool_call_id.clone());
                ToolCallInfo {
                    images: images(owner),
                    ..convert::tool_call(c, registry)
                }
            })
            .collect();
        let summary =
            self.store
                .latest_summary(session_id)?
                .map(|s| skald_api::protocol::SummaryInfo {
                    up_to_message_id: s.up_to_message_id,
                    summary: s.summary,
                    created_at: s.created_at,
                });
        Ok(Reply::History {
            session: self.session_info(session),
            messages,
            tool_calls,
            has_more: start > 0,
            summary,
        })
    }

    pub(crate) fn usage(&self, session_id: i64) -> Result<Reply, ServiceError> {
        let u = self.store.session_usage(session_id)?;
        let today = self
            .store
            .usage_since(skald_core::usage::start_of_today())?;
        let engine = self.sessions.engine();
        // The provider the chat's next turn calls: its own model's, else the configured
        // one's.
        let session = self.store.get_session(session_id)?;
        let provider = match session.model.as_deref().and_then(|m| m.split_once('/')) {
            Some((provider, _)) => Some(provider.to_string()),
            None => engine.models().first().map(|m| m.provider.name.clone()),
        };
        Ok(Reply::Usage {
            requests: u.requests,
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cost_usd: u.cost_usd,
            unpriced: u.unpriced,
            today_cost_usd: today.cost_usd,
            daily_budget_usd: engine.limits.daily_usd(),
            rate_limits: provider.and_then(|p| engine.limits.rate_limits_of(&p)),
        })
    }

    /// How the session's commands are confined now.
    pub(crate) fn sandbox(&self, session_id: i64) -> Result<skald_api::SandboxInfo, ServiceError> {
        let session = self.store.get_session(session_id)?;
        Ok(self.sessions.engine().sandbox_of(&session)?)
    }

    /// Stores the chat's own sandbox setting; its next turn runs with it.
    pub(crate) fn set_sandbox(
        &self,
        session_id: i64,
        mode: skald_api::SandboxMode,
        network: bool,
    ) -> Result<skald_api::SandboxInfo, ServiceError> {
        let rc = self.store.ensure_run_context(session_id)?;
        self.store
            .set_run_context_sandbox(rc, Some(mode), Some(network))?;
        self.sandbox(session_id)
    }

    /// What the chat's agent is given now besides its own prompt (its context view).
    pub(crate) fn session_context(&self, session_id: i64) -> Result<Reply, ServiceError> {
        let session = self.store.get_session(session_id)?;
        let engine = self.sessions.engine();
        let cfg = engine.config_for(&session, skald_core::turn::ApprovalMode::Inbox)?;
        Ok(Reply::SessionContext {
            context: cfg.instructions.context,
        })
    }

    /// Lets the chat's project hooks run as the file is now; refused when the file
    /// changed since the person saw it (`sha256` is what the context view showed).
    pub(crate) fn approve_hooks(
        &self,
        session_id: i64,
        sha256: &str,
    ) -> Result<Reply, ServiceError> {
        let session = self.store.get_session(session_id)?;
        let engine = self.sessions.engine();
        let cfg = engine.config_for(&session, skald_core::turn::ApprovalMode::Inbox)?;
        let project = cfg.hooks.project.ok_or_else(|| {
            ServiceError::Invalid("this chat's project has no hooks file".to_string())
        })?;
        if project.sha256 != sha256 {
            return Err(ServiceError::Invalid(format!(
                "{} changed since it was shown; look at it again before approving",
                project.path
            )));
        }
        self.store.approve_hooks(&project.path, &project.sha256)?;
        let cfg = engine.config_for(&session, skald_core::turn::ApprovalMode::Inbox)?;
        Ok(Reply::ApproveHooks {
            context: cfg.instructions.context,
        })
    }

    pub(crate) async fn checkpoints(&self, session_id: i64) -> Result<Reply, ServiceError> {
        self.store.get_session(session_id)?;
        let checkpoints = self.store.checkpoints(session_id)?;
        // Opening each folder's checkpoints finishes a restore a crash interrupted there.
        for problem in self
            .sessions
            .engine()
            .checkpoints
            .recover(&checkpoints)
            .await
        {
            tracing::warn!(%problem, "checkpoints could not be opened");
        }
        Ok(Reply::Checkpoints { checkpoints })
    }

    pub(crate) async fn checkpoint_diff(
        &self,
        id: i64,
        path: Option<String>,
    ) -> Result<Reply, ServiceError> {
        let engine = self.sessions.engine();
        let text = engine
            .checkpoints
            .diff(
                &self.store,
                id,
                path.into_iter().collect(),
                skald_core::checkpoints::MAX_PATCH_BYTES,
            )
            .await
            .map_err(invalid)?;
        Ok(Reply::CheckpointDiff { text })
    }

    pub(crate) async fn restore_checkpoint(
        &self,
        id: i64,
        rewind: bool,
    ) -> Result<Reply, ServiceError> {
        let engine = self.sessions.engine();
        let row = self
            .store
            .checkpoint(id)?
            .ok_or_else(|| invalid(format!("there is no checkpoint {id}")))?;
        // The agent may be changing the same files: it is stopped first, by the person.
        if self.sessions.is_running(row.session_id) {
            return Err(invalid(
                "the chat's turn is running; stop it before restoring its folder",
            ));
        }
        let (checkpoint, fork) = engine
            .checkpoints
            .restore_and_rewind(&self.store, id, rewind)
            .await
            .map_err(invalid)?;
        engine.emit(
            row.session_id,
            skald_api::events::Event::Checkpoint {
                checkpoint: checkpoint.clone(),
            },
        );
        // The restore is shown whether or not the rewind worked.
        let fork = fork.map_err(invalid)?;
        Ok(Reply::RestoreCheckpoint {
            checkpoint,
            fork: fork.map(|s| self.session_info(s)),
        })
    }

    pub(crate) fn send_message(
        &self,
        session_id: i64,
        text: String,
        images: Vec<ChatImage>,
    ) -> Result<Reply, ServiceError> {
        if text.trim().is_empty() && images.is_empty() {
            return Err(invalid("the message is empty"));
        }
        // Refused here, before anything runs, rather than by the turn.
        for image in &images {
            if self.store.image(&image.sha256)?.is_none() {
                return Err(invalid(format!(
                    "the image {} is not kept here; attach it again",
                    image.name.as_deref().unwrap_or(&image.sha256)
                )));
            }
        }
        if self.sessions.engine().models().is_empty() {
            return Err(invalid(format!(
                "no model can be used: {}. Configure a provider in Settings.",
                lock(&self.model_error)
                    .as_deref()
                    .unwrap_or("none is configured")
            )));
        }
        let prompt = Prompt {
            text,
            images: images
                .into_iter()
                .map(|i| ImageRef {
                    sha256: i.sha256,
                    name: i.name.as_deref().map(skald_core::images::clean_name),
                })
                .collect(),
        };
        let sent = self.sessions.send_message(session_id, prompt)?;
        Ok(Reply::SendMessage {
            queued: sent == Sent::Queued,
        })
    }

    /// "Fork from here": the chat up to and including `message_id`, as a new chat.
    pub(crate) fn fork_from(
        &self,
        session_id: i64,
        message_id: i64,
    ) -> Result<Reply, ServiceError> {
        let original = self.store.get_session(session_id)?;
        self.message_of(session_id, message_id)?;
        // Ids grow across chats, and the copy takes this chat's messages below the bound.
        let fork = self.store.fork_session(
            session_id,
            message_id + 1,
            &fork_title(&original.title, "fork"),
        )?;
        Ok(Reply::ForkSession {
            session: self.session_info(fork),
        })
    }

    /// Edit and resend: the chat before the person's message `message_id`, as a new chat
    /// in which `text` is sent instead. The original keeps every message.
    pub(crate) fn edit_message(
        &self,
        session_id: i64,
        message_id: i64,
        text: String,
        images: Vec<ChatImage>,
    ) -> Result<Reply, ServiceError> {
        let original = self.store.get_session(session_id)?;
        let message = self.message_of(session_id, message_id)?;
        if message.role != skald_store::Role::User
            || message.stack_id.is_some()
            || message.synthetic
        {
            return Err(invalid("only a message the person wrote can be edited"));
        }
        if text.trim().is_empty() && images.is_empty() {
            return Err(invalid("the message is empty"));
        }
        let fork = self.store.fork_session(
            session_id,
            message_id,
            &fork_title(&original.title, "edited"),
        )?;
        let sent = self.send_message(fork.id, text, images);
        let fork = self.store.get_session(fork.id)?;
        match sent {
            Ok(Reply::SendMessage { queued }) => Ok(Reply::EditMessage {
                session: self.session_info(fork),
                queued,
            }),
            Ok(_) => Ok(Reply::EditMessage {
                session: self.session_info(fork),
                queued: false,
            }),
            // Nothing was sent: the fork would be the original's start alone. The person's
            // text stays in their composer with the reason.
            Err(e) => {
                if let Err(gone) = self.store.delete_session(fork.id) {
                    tracing::warn!("cannot remove the unused fork {}: {gone}", fork.id);
                }
                Err(e)
            }
        }
    }

    fn message_of(
        &self,
        session_id: i64,
        message_id: i64,
    ) -> Result<skald_store::Message, ServiceError> {
        self.store
            .list_messages(session_id)?
            .into_iter()
            .find(|m| m.id == message_id)
            .ok_or_else(|| invalid(format!("chat {session_id} has no message {message_id}")))
    }

    /// What fills the chat's context now (docs/agent-loop.md, "Long conversations").
    pub(crate) fn context_usage(&self, session_id: i64) -> Result<Reply, ServiceError> {
        let engine = self.sessions.engine();
        let (parts, window, compact_at) = engine
            .context_of(session_id)
            .map_err(|e| invalid(e.to_string()))?;
        let last_input_tokens = self.store.last_input_tokens(session_id)?;
        let part = |what: &str, tokens: u64| skald_api::protocol::ContextPart {
            what: what.to_string(),
            tokens,
        };
        Ok(Reply::ContextUsage {
            tokens: parts.total(),
            window: window as u64,
            compact_at,
            last_input_tokens,
            parts: vec![
                part("system", parts.system),
                part("instructions", parts.instructions),
                part("tools", parts.tools),
                part("summary", parts.summary),
                part("messages", parts.messages),
                part("tool_results", parts.tool_results),
            ],
        })
    }

    /// "Compact now", in the background: its events come as a turn's do.
    /// Summarises the chat's older turns now; the reply says whether a summary was made
    /// (the events announce it meanwhile, to every window).
    pub(crate) async fn compact_now(&self, session_id: i64) -> Result<Reply, ServiceError> {
        self.store.get_session(session_id)?;
        if self.sessions.is_running(session_id) {
            return Err(invalid(
                "the chat's turn is running; compact it when the turn has ended",
            ));
        }
        let engine = self.sessions.engine().clone();
        let events = self.events.clone();
        let emit = |event: skald_api::events::Event| {
            let _ = events.send(skald_api::protocol::ServerMessage::Event {
                session_id: Some(session_id),
                event,
            });
        };
        let never = skald_api::CancellationToken::new();
        let compacted = engine
            .compact_session(session_id, &never, &emit)
            .await
            .map_err(|e| invalid(format!("the chat could not be compacted: {e}")))?;
        Ok(Reply::CompactNow { compacted })
    }

    /// Undoes the chat's latest compaction.
    pub(crate) fn undo_compaction(&self, session_id: i64) -> Result<Reply, ServiceError> {
        self.store.get_session(session_id)?;
        Ok(Reply::UndoCompaction {
            undone: self.store.undo_latest_summary(session_id)?.is_some(),
        })
    }
}

/// A fork's title: the original's, marked.
fn fork_title(title: &str, how: &str) -> String {
    match title.trim() {
        "" => format!("Chat ({how})"),
        t => format!("{t} ({how})"),
    }
}
