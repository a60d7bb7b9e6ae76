//! Stored records to the protocol's types, and the protocol's answers to the engine's.

use skald_api::ToolDescriptionLength;
use skald_api::protocol::{BypassSpec, ChatMessage, InboxAnswer, SessionInfo, ToolCallInfo};
use skald_core::ToolRegistry;
use skald_core::approval::{BypassScope, RuleSpec};
use skald_core::inbox::Answer;
use skald_store::{Message, Role, Session, ToolCallRecord};
use skald_viewer::FileRoute;
use std::path::Path;

/// A chat as the UI lists it; `running` and `queued` as this process knows them.
pub fn session(s: Session, running: bool, queued: bool) -> SessionInfo {
    SessionInfo {
        id: s.id,
        title: s.title,
        agent_id: s.agent_id,
        kind: s.kind,
        working_dir: s.working_dir,
        created_at: s.created_at,
        updated_at: s.updated_at,
        running,
        queued: running && queued,
        model: s.model,
        effort: s.effort,
        forked_from: s.forked_from,
        forked_after: s.forked_after,
        mode: s.mode,
    }
}

/// A stored message; an assistant's is rendered with the viewer's Markdown renderer, its
/// relative links against the chat's folder.
pub fn message(m: &Message, base: &Path, route: &FileRoute) -> ChatMessage {
    let html = (m.role == Role::Assistant && !m.content.is_empty())
        .then(|| skald_viewer::render_markdown(&m.content, base, route));
    ChatMessage {
        id: m.id,
        stack_id: m.stack_id,
        role: m.role,
        content: m.content.clone(),
        html,
        reasoning: m.reasoning.clone(),
        status: m.status,
        synthetic: m.synthetic,
        created_at: m.created_at,
        images: Vec::new(),
    }
}

pub fn tool_call(c: ToolCallRecord, registry: &ToolRegistry) -> ToolCallInfo {
    // What the model sent may hold a secret's value (set_secret): shown as the engine
    // shows it everywhere else.
    let shown = registry.redacted_args(&c.name, c.args.clone());
    ToolCallInfo {
        label_short: registry.describe_call(&c.name, &shown, ToolDescriptionLength::Short),
        label_full: registry.describe_call(&c.name, &shown, ToolDescriptionLength::Full),
        path: registry.target_path(&c.name, &shown),
        tool_call_id: c.tool_call_id,
        message_id: c.message_id,
        stack_id: c.stack_id,
        name: c.name,
        arguments: shown,
        status: c.status,
        result: c.result,
        images: Vec::new(),
    }
}

pub fn answer(a: InboxAnswer) -> Result<Answer, String> {
    Ok(match a {
        InboxAnswer::Approve => Answer::Approve,
        InboxAnswer::Reject { note } => Answer::Reject { note },
        InboxAnswer::Text { text } => Answer::Text { text },
        InboxAnswer::ApproveWithBypass { scope, minutes } => Answer::ApproveWithBypass {
            scope: match scope {
                BypassSpec::All => BypassScope::All,
                BypassSpec::Category(c) => BypassScope::Category(c.as_str().to_string()),
                BypassSpec::McpServer(s) => BypassScope::McpServer(s),
            },
            minutes,
        },
        InboxAnswer::AlwaysAllow { rule } => Answer::AlwaysAllow {
            rule: RuleSpec {
                action: rule.action,
                group: rule.group,
                tool_pattern: rule.tool_pattern,
                path_pattern: rule.path_pattern.filter(|p| !p.is_empty()),
                command_pattern: rule.command_pattern.filter(|p| !p.is_empty()),
                working_dir: rule.working_dir.filter(|p| !p.is_empty()),
                note: rule.note,
                network: rule.network,
                domain_pattern: rule.domain_pattern.filter(|p| !p.trim().is_empty()),
            },
        },
    })
}
