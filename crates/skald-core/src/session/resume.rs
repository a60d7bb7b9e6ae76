//! Picking a session up after Skald stopped mid-turn (a crash, a kill, a power cut).
//! Rehydration is re-running from intent (docs/agent-loop.md, "Resume after a crash"): a
//! stored call is (name, args, status), never a checkpoint.

use crate::turn::{Emit, TurnEnv, TurnError, run_call};
use serde_json::Value;
use skald_api::events::Event;
use skald_api::{CancellationToken, ToolCallStatus, ToolCategory};
use skald_llm::ToolCall;
use skald_store::{MessageStatus, ResultType};

/// What resuming did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ResumeReport {
    /// Answers that were streaming when Skald stopped, now kept as interrupted.
    pub messages: usize,
    /// Calls run again from their arguments.
    pub rerun: usize,
    /// Shell calls reported to the model as interrupted instead of run twice, and
    /// sub-agents' own calls closed because their delegation starts over.
    pub interrupted: usize,
}

/// Text stored for a shell call that was running when Skald stopped.
pub const INTERRUPTED_NOTE: &str = "Skald stopped while this command was running, so it may \
    have done part of its work; it was not run again. Check its effects before repeating it.";

/// Text stored for a sub-agent's call that was unfinished when Skald stopped.
pub const SUB_AGENT_NOTE: &str = "Skald stopped while the sub-agent that made this call was \
    working; its task is started again from the beginning instead.";

/// Finishes what a session left unfinished: streaming answers are marked interrupted
/// (their text kept), `running` calls are re-run — except shell commands, which are marked
/// interrupted, since running a command twice is rarely what anyone wants — and `pending`
/// calls are asked again through the approval path.
pub async fn resume_pending_tools(
    env: &TurnEnv<'_>,
    session_id: i64,
    cancel: &CancellationToken,
    emit: Emit<'_>,
) -> Result<ResumeReport, TurnError> {
    let store = env.store;
    let mut report = ResumeReport::default();
    for m in store.list_messages(session_id)? {
        if m.status == MessageStatus::Streaming {
            store.update_message(
                m.id,
                &m.content,
                m.reasoning.as_deref(),
                MessageStatus::Interrupted,
            )?;
            report.messages += 1;
        }
    }
    // Sub-agents' calls are closed before any delegation is re-run, so the new run's events
    // are not followed by notes about the old one.
    let (children, roots): (Vec<_>, Vec<_>) = store
        .list_tool_calls(session_id)?
        .into_iter()
        .partition(|c| c.stack_id.is_some());
    for rec in children.into_iter().chain(roots) {
        if !rec.status.is_unfinished() {
            continue;
        }
        let shell = env.registry.category_of(&rec.name) == Some(ToolCategory::Shell);
        // A sub-agent's own call belongs to a frame that no longer exists: the delegation
        // that started it is re-run from its task, so the call is closed rather than run
        // again with the root agent's tools and folder.
        let note = if rec.stack_id.is_some() {
            Some(SUB_AGENT_NOTE)
        } else if rec.status == ToolCallStatus::Running && shell {
            Some(INTERRUPTED_NOTE)
        } else {
            None
        };
        if let Some(note) = note {
            store.set_tool_call_status(
                session_id,
                &rec.tool_call_id,
                ToolCallStatus::Interrupted,
                Some((note, ResultType::Text)),
            )?;
            emit(Event::ToolError {
                tool_call_id: rec.tool_call_id.clone(),
                error: note.to_string(),
            });
            report.interrupted += 1;
            continue;
        }
        let call = ToolCall {
            id: rec.tool_call_id.clone(),
            name: rec.name.clone(),
            arguments: match &rec.args {
                Value::String(raw) => raw.clone(),
                v => v.to_string(),
            },
        };
        if run_call(env, session_id, &call, cancel, emit).await? {
            break;
        }
        report.rerun += 1;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin_registry;
    use crate::turn::{ApprovalMode, TurnConfig};
    use serde_json::json;
    use skald_store::{NewMessage, NewSession, NewToolCall, Role, Store};
    use std::sync::Mutex;

    #[tokio::test]
    async fn reruns_reads_interrupts_shell_and_keeps_streamed_text() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.md"), "remember this\n").unwrap();
        let store = Store::open_in_memory().unwrap();
        let s = store.create_session(&NewSession::default()).unwrap();
        store
            .append_message(&NewMessage::new(s.id, Role::User, "go"))
            .unwrap();
        let msg = store
            .append_message(&NewMessage {
                status: MessageStatus::Streaming,
                ..NewMessage::new(s.id, Role::Assistant, "Reading your no")
            })
            .unwrap();
        for (id, name, args) in [
            ("c_read", "read_file", json!({"path": "notes.md"})),
            ("c_cmd", "execute_cmd", json!({"command": "touch twice"})),
        ] {
            store
                .insert_tool_call(&NewToolCall {
                    tool_call_id: id.into(),
                    session_id: s.id,
                    stack_id: None,
                    message_id: Some(msg.id),
                    name: name.into(),
                    args,
                    status: ToolCallStatus::Running,
                })
                .unwrap();
        }
        // A sub-agent's write: its frame is gone, so it is closed, not run as the root agent.
        let frame = store
            .create_stack_frame(s.id, None, "c_task", "researcher", 1)
            .unwrap();
        store
            .insert_tool_call(&NewToolCall {
                tool_call_id: "c_child".into(),
                session_id: s.id,
                stack_id: Some(frame),
                message_id: None,
                name: "write_file".into(),
                args: json!({"path": "child.txt", "content": "x"}),
                status: ToolCallStatus::Running,
            })
            .unwrap();
        let registry = builtin_registry().unwrap();
        let models = crate::models::ModelList::new(vec![
            skald_llm::from_env(Some("openai/unused"), |_| None).unwrap(),
        ]);
        let health = crate::models::ModelHealth::default();
        let cfg = TurnConfig {
            max_rounds: 1,
            context_window: 128_000,
            approval: ApprovalMode::All,
            run: crate::approval::RunContext {
                group: "default".into(),
                agent_id: "main".into(),
                working_dir: dir.path().to_path_buf(),
                ..Default::default()
            },
            system_prompt: String::new(),
            background: false,
            first_tool_choice: skald_llm::ToolChoice::Auto,
            instructions: Default::default(),
            hooks: Default::default(),
            effort: None,
            compact_at: 80,
        };
        let env = TurnEnv {
            store: &store,
            registry: &registry,
            models: &models,
            health: &health,
            cfg: &cfg,
            queued: None,
            ask: None,
            inbox: None,
            frame: crate::turn::Frame::default(),
            library: None,
            mcp_list: "",
            engine: None,
        };
        let seen = Mutex::new(Vec::new());
        let emit = |e: Event| seen.lock().unwrap().push(e);
        let report = resume_pending_tools(&env, s.id, &CancellationToken::new(), &emit)
            .await
            .unwrap();
        assert_eq!(
            report,
            ResumeReport {
                messages: 1,
                rerun: 1,
                interrupted: 2
            }
        );
        let calls = store.list_tool_calls(s.id).unwrap();
        assert_eq!(calls[0].status, ToolCallStatus::Done);
        assert!(
            calls[0]
                .result
                .as_deref()
                .unwrap()
                .contains("remember this")
        );
        assert_eq!(calls[1].status, ToolCallStatus::Interrupted);
        assert!(
            !dir.path().join("twice").exists(),
            "a shell command is never re-run"
        );
        assert_eq!(calls[2].status, ToolCallStatus::Interrupted);
        assert!(!dir.path().join("child.txt").exists());
        let history = store.list_messages(s.id).unwrap();
        assert_eq!(history[1].content, "Reading your no");
        assert_eq!(history[1].status, MessageStatus::Interrupted);
        // Resuming again finds nothing left to do.
        let again = resume_pending_tools(&env, s.id, &CancellationToken::new(), &emit)
            .await
            .unwrap();
        assert_eq!(again, ResumeReport::default());
    }
}
