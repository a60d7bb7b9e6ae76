//! The conversation as the model sees it, rebuilt from the store for each request.

use super::{TurnEnv, TurnError};
use serde_json::Value;
use skald_api::ToolCallStatus;
use skald_llm::{Message, ToolCall};
use skald_store::{ImageOwner, Role};

/// The conversation as the model must see it, in this order (docs/agent-loop.md,
/// "A round"): the static system part, the history with every tool call of an assistant
/// message followed by its result, then the short dynamic tail (time, OS, working
/// directory, the MCP servers' status). Keeping what changes at the end keeps the long
/// prefix cacheable by providers and by the local model's saved state.
pub(super) fn conversation(env: &TurnEnv<'_>, session_id: i64) -> Result<Vec<Message>, TurnError> {
    let (store, cfg, frame) = (env.store, env.cfg, env.frame);
    let mut out = vec![Message::system(cfg.system_prompt.clone())];
    // A summary stands in for the turns it covers (docs/agent-loop.md, "A round": after the
    // system part and the scratchpad, before the history). Summaries are of the root
    // conversation; a task agent's own conversation is short-lived.
    let summary = match frame.stack_id {
        None => store.latest_summary(session_id)?,
        Some(_) => None,
    };
    let covered = summary.as_ref().map_or(0, |s| s.up_to_message_id);
    if let Some(s) = summary {
        out.push(Message::system(format!("{SUMMARY_HEAD}\n\n{}", s.summary)));
    }
    let calls = store.list_tool_calls(session_id)?;
    let mut images = crate::images::SessionImages::read(store, session_id)?;
    if let Some(board) = scratchpad_message(store, session_id)? {
        out.insert(1, Message::system(board));
    }
    for m in store
        .list_messages(session_id)?
        .into_iter()
        .filter(|m| m.id > covered && m.stack_id == frame.stack_id)
    {
        match m.role {
            Role::System => out.push(Message::system(m.content)),
            Role::User => {
                let shown = images.parts(store, &ImageOwner::Message(m.id))?;
                out.push(Message::user(m.content).with_images(shown));
            }
            Role::Tool => {}
            Role::Assistant => {
                let mine: Vec<_> = calls
                    .iter()
                    .filter(|c| c.message_id == Some(m.id))
                    .collect();
                if m.content.is_empty() && mine.is_empty() {
                    continue;
                }
                let mut answer = Message::assistant(
                    m.content.clone(),
                    mine.iter()
                        .map(|c| ToolCall {
                            id: c.tool_call_id.clone(),
                            name: c.name.clone(),
                            arguments: match &c.args {
                                Value::String(raw) => raw.clone(),
                                v => v.to_string(),
                            },
                        })
                        .collect(),
                );
                answer.replay = m.replay.clone();
                out.push(answer);
                for c in mine {
                    let shown =
                        images.parts(store, &ImageOwner::ToolCall(c.tool_call_id.clone()))?;
                    out.push(
                        Message::tool_result(c.tool_call_id.clone(), result_text(c))
                            .with_images(shown),
                    );
                }
            }
        }
    }
    let mut tail = crate::agents::dynamic_tail(std::time::SystemTime::now(), &cfg.run.working_dir);
    if cfg.run.is_planning() {
        tail.push_str(PLANNING);
    }
    if let Some(mcp) = env.engine.and_then(|e| e.mcp.status_line(store)) {
        tail.push(' ');
        tail.push_str(&mcp);
    }
    out.push(Message::system(tail));
    Ok(out)
}

/// Said at the end of every request while the chat plans (docs/agent-loop.md, "Plan mode").
const PLANNING: &str = " This chat is in plan mode: read, search and ask, and change nothing \
    (commands run in a read-only sandbox). When your plan is ready, present it with \
    exit_plan_mode; the user approves it before anything changes.";

/// How the summary of compacted turns starts, where the model reads it.
pub(super) const SUMMARY_HEAD: &str = "Summary of the earlier part of this conversation:";

/// What the model reads as a call's result, whatever became of it.
fn result_text(c: &skald_store::ToolCallRecord) -> String {
    let result = c.result.clone().unwrap_or_default();
    match c.status {
        ToolCallStatus::Done | ToolCallStatus::Rejected => result,
        ToolCallStatus::Failed => format!("Error: {result}"),
        ToolCallStatus::Cancelled => {
            "The user stopped this tool call before it finished.".to_string()
        }
        ToolCallStatus::Interrupted if !result.is_empty() => result,
        ToolCallStatus::Interrupted => {
            "Skald stopped while this call was running; it did not complete and was not re-run."
                .to_string()
        }
        ToolCallStatus::Running | ToolCallStatus::Pending => {
            "This tool call did not complete.".to_string()
        }
    }
}

/// The scratchpad as the agents read it, or nothing when it is empty.
pub fn scratchpad_message(
    store: &skald_store::Store,
    session_id: i64,
) -> Result<Option<String>, skald_store::StoreError> {
    let entries = store.scratchpad(session_id)?;
    if entries.is_empty() {
        return Ok(None);
    }
    let mut out = "Session scratchpad — notes shared by every agent of this session \
                   (update with update_scratchpad):\n"
        .to_string();
    for (k, v) in entries {
        out.push_str(&format!("- {k}: {v}\n"));
    }
    Ok(Some(out))
}
