//! `skald acp`: Skald as an agent of the Agent Client Protocol over stdio, so that an
//! editor (Zed, JetBrains, Neovim) drives it (docs/acp.md). The one module that names the
//! `agent-client-protocol` crate.
//!
//! It is a carrier of the same service `skald serve` and the desktop app use: an ACP
//! session is a Skald chat (`session/new` creates one, `session/load` resumes any of
//! them), a prompt is a sent message, and the turn's events become `session/update`
//! notifications. Approvals go to the Agent Inbox as always and are also asked of the
//! editor with `session/request_permission`; whichever answers first decides, so one the
//! editor leaves unanswered still waits in the Inbox.
//!
//! When the editor offers its file system and terminals, the chats it opened use them
//! (`editor`): files are read and edited as the editor has them, commands run in its
//! terminals.
//!
//! Stdout carries only the protocol: everything else Skald says goes to stderr.

mod editor;

use agent_client_protocol::schema::ProtocolVersion;
pub(crate) use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, Stdio};
use skald_api::events::{Event, TurnOutcome};
use skald_api::protocol::{Command, Reply, Request, ServerMessage};
use skald_base::lock;
use skald_service::Service;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The most of a tool's result shown in the editor's tool call (the model reads all).
const SHOWN_RESULT: usize = 16 * 1024;

pub(crate) type Conn = ConnectionTo<Client>;

/// What the agent keeps for the connection.
struct State {
    service: Arc<Service>,
    conn: skald_service::Connection,
    next_id: std::sync::atomic::AtomicU64,
    /// The editor's connection, from initialize on.
    cx: Mutex<Option<Conn>>,
    /// Sessions this editor opened, with their folders.
    sessions: Mutex<HashMap<i64, PathBuf>>,
    /// Prompts waiting for their turn's end.
    waiting: Mutex<HashMap<i64, tokio::sync::oneshot::Sender<acp::StopReason>>>,
    /// Approvals already asked of the editor.
    asked: Mutex<HashSet<i64>>,
    /// What the editor lends, from initialize on.
    offers: Mutex<skald_api::editor::EditorOffers>,
    /// The calls that ran in the editor's terminals.
    terminals: editor::Terminals,
}

impl State {
    async fn call(&self, command: Command) -> Result<Reply, String> {
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        match self.conn.handle(Request { id, command }).await {
            ServerMessage::Reply { reply, .. } => Ok(reply),
            ServerMessage::Failure { error, .. } => Err(error),
            ServerMessage::Event { .. } => Err("an event instead of a reply".to_string()),
        }
    }

    /// `id` is this editor's from now on: noted, and its calls use what the editor lends.
    fn open(&self, id: i64, folder: PathBuf, cx: Conn) {
        lock(&self.sessions).insert(id, folder);
        self.service.attach_editor(
            id,
            Arc::new(editor::EditorLink {
                cx,
                session: acp::SessionId::new(id.to_string()),
                offers: *lock(&self.offers),
                terminals: self.terminals.clone(),
            }),
        );
    }

    fn send(&self, session: i64, update: acp::SessionUpdate) {
        if let Some(cx) = lock(&self.cx).clone() {
            let _ = cx.send_notification(acp::SessionNotification::new(
                acp::SessionId::new(session.to_string()),
                update,
            ));
        }
    }
}

/// Serves the protocol on stdin and stdout until the editor closes stdin.
pub async fn serve(service: Arc<Service>) -> Result<(), String> {
    let state = Arc::new(State {
        conn: service.connect(),
        service,
        next_id: std::sync::atomic::AtomicU64::new(1),
        cx: Mutex::new(None),
        sessions: Mutex::new(HashMap::new()),
        waiting: Mutex::new(HashMap::new()),
        asked: Mutex::new(HashSet::new()),
        offers: Mutex::new(Default::default()),
        terminals: Default::default(),
    });
    pump(state.clone());
    let (s1, s2, s3, s4, s5) = (
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
    );
    let served = Agent
        .v1()
        .name("skald")
        .on_receive_request(
            async move |req: acp::InitializeRequest,
                        responder: Responder<acp::InitializeResponse>,
                        cx: Conn| {
                *lock(&s1.cx) = Some(cx);
                *lock(&s1.offers) = editor::offers(&req.client_capabilities);
                responder.respond(
                    acp::InitializeResponse::new(ProtocolVersion::V1)
                        .agent_capabilities(
                            acp::AgentCapabilities::new()
                                .load_session(true)
                                .prompt_capabilities(
                                    acp::PromptCapabilities::new()
                                        .embedded_context(true)
                                        .image(true)
                                        .audio(false),
                                ),
                        )
                        .auth_methods(vec![])
                        .agent_info(acp::Implementation::new(
                            "skald",
                            env!("CARGO_PKG_VERSION"),
                        )),
                )
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::NewSessionRequest,
                        responder: Responder<acp::NewSessionResponse>,
                        cx: Conn| {
                if !req.mcp_servers.is_empty() {
                    eprintln!(
                        "skald acp: the editor's MCP servers are not used; add them with `skald mcp add`"
                    );
                }
                let reply = s2
                    .call(Command::CreateSession {
                        title: None,
                        working_dir: Some(req.cwd.to_string_lossy().into_owned()),
                        agent_id: None,
                        worktree: None,
                    })
                    .await;
                match reply {
                    Ok(Reply::CreateSession { session }) => {
                        s2.open(session.id, req.cwd.clone(), cx);
                        responder.respond(acp::NewSessionResponse::new(acp::SessionId::new(
                            session.id.to_string(),
                        )))
                    }
                    Ok(_) => responder.respond_with_error(
                        agent_client_protocol::Error::internal_error(),
                    ),
                    Err(e) => responder.respond_with_error(
                        agent_client_protocol::Error::invalid_params().data(serde_json::json!(e)),
                    ),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::LoadSessionRequest,
                        responder: Responder<acp::LoadSessionResponse>,
                        cx: Conn| {
                let Some(id) = session_id(&req.session_id) else {
                    return responder.respond_with_error(
                        acp::Error::session_not_found(req.session_id.clone()).into(),
                    );
                };
                match replay(&s3, id).await {
                    Ok(folder) => {
                        s3.open(id, folder, cx);
                        responder.respond(acp::LoadSessionResponse::new())
                    }
                    Err(_) => responder.respond_with_error(
                        acp::Error::session_not_found(req.session_id.clone()).into(),
                    ),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::PromptRequest,
                        responder: Responder<acp::PromptResponse>,
                        cx: Conn| {
                let known = session_id(&req.session_id)
                    .filter(|id| lock(&s4.sessions).contains_key(id));
                let Some(id) = known else {
                    return responder.respond_with_error(
                        acp::Error::session_not_found(req.session_id.clone()).into(),
                    );
                };
                let text = prompt_text(&req.prompt);
                let (tx, rx) = tokio::sync::oneshot::channel();
                lock(&s4.waiting).insert(id, tx);
                let state = s4.clone();
                cx.spawn(async move {
                    let sent = match attach_images(&state, id, &req.prompt).await {
                        Ok(images) => {
                            state
                                .call(Command::SendMessage {
                                    session_id: id,
                                    text,
                                    images,
                                })
                                .await
                        }
                        Err(e) => Err(e),
                    };
                    if let Err(e) = sent {
                        lock(&state.waiting).remove(&id);
                        return responder.respond_with_error(
                            agent_client_protocol::Error::invalid_params()
                                .data(serde_json::json!(e)),
                        );
                    }
                    let reason = rx.await.unwrap_or(acp::StopReason::Cancelled);
                    responder.respond(acp::PromptResponse::new(reason))
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |n: acp::CancelNotification, cx: Conn| {
                if let Some(id) = session_id(&n.session_id) {
                    let state = s5.clone();
                    cx.spawn(async move {
                        let _ = state.call(Command::Stop { session_id: id }).await;
                        Ok(())
                    })?;
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(Stdio::new())
        .await
        .map_err(|e| e.to_string());
    // The editor is gone: whatever runs on in these chats works on its own.
    for id in lock(&state.sessions).keys() {
        state.service.detach_editor(*id);
    }
    served
}

fn session_id(id: &acp::SessionId) -> Option<i64> {
    id.0.parse().ok()
}

/// The prompt as one message: its text, and the text of resources the editor embedded
/// (a file it attached), each under its URI.
fn prompt_text(blocks: &[acp::ContentBlock]) -> String {
    let mut out = Vec::new();
    for b in blocks {
        match b {
            acp::ContentBlock::Text(t) => out.push(t.text.clone()),
            acp::ContentBlock::ResourceLink(l) => out.push(format!("[{}]({})", l.name, l.uri)),
            acp::ContentBlock::Resource(r) => {
                if let acp::EmbeddedResourceResource::TextResourceContents(t) = &r.resource {
                    out.push(format!("{}:\n```\n{}\n```", t.uri, t.text));
                }
            }
            _ => {}
        }
    }
    out.join("\n\n")
}

/// The prompt's images (`image` blocks, base64), kept for the message to show.
async fn attach_images(
    state: &State,
    session_id: i64,
    blocks: &[acp::ContentBlock],
) -> Result<Vec<skald_api::ChatImage>, String> {
    let mut images = Vec::new();
    for b in blocks {
        if let acp::ContentBlock::Image(i) = b {
            let name = i
                .uri
                .as_deref()
                .and_then(|u| u.rsplit('/').next())
                .map(str::to_string);
            match state
                .call(Command::AttachImage {
                    data: i.data.clone(),
                    name,
                    session_id: Some(session_id),
                })
                .await?
            {
                Reply::AttachImage { image, .. } => images.push(image),
                other => return Err(format!("unexpected reply to an image: {other:?}")),
            }
        }
    }
    Ok(images)
}

/// Sends a loaded session's conversation as updates, before `session/load` answers.
/// Returns its folder.
async fn replay(state: &State, id: i64) -> Result<PathBuf, String> {
    let Reply::History {
        session,
        messages,
        tool_calls,
        ..
    } = state
        .call(Command::History {
            session_id: id,
            before: None,
            limit: Some(500),
        })
        .await?
    else {
        return Err("no history".to_string());
    };
    let folder = PathBuf::from(session.working_dir.clone().unwrap_or_default());
    for m in messages.iter().filter(|m| m.stack_id.is_none()) {
        let chunk = acp::ContentChunk::new(m.content.clone().into());
        match m.role {
            skald_api::records::Role::User if !m.synthetic => {
                state.send(id, acp::SessionUpdate::UserMessageChunk(chunk))
            }
            skald_api::records::Role::Assistant => {
                if !m.content.is_empty() {
                    state.send(id, acp::SessionUpdate::AgentMessageChunk(chunk));
                }
                for c in tool_calls.iter().filter(|c| c.message_id == Some(m.id)) {
                    let status = match c.status {
                        skald_api::ToolCallStatus::Done => acp::ToolCallStatus::Completed,
                        skald_api::ToolCallStatus::Running | skald_api::ToolCallStatus::Pending => {
                            acp::ToolCallStatus::InProgress
                        }
                        _ => acp::ToolCallStatus::Failed,
                    };
                    let mut call = tool_call(
                        &c.tool_call_id,
                        &c.name,
                        &c.label_short,
                        &c.arguments,
                        c.path.as_deref(),
                        &folder,
                    )
                    .status(status);
                    if let Some(r) = &c.result {
                        call = call.content(vec![acp::ToolCallContent::from(shown(r))]);
                    }
                    state.send(id, acp::SessionUpdate::ToolCall(call));
                }
            }
            _ => {}
        }
    }
    Ok(folder)
}

/// A call as the editor shows it: Skald's label, its kind, the file it works on.
fn tool_call(
    id: &str,
    name: &str,
    label: &str,
    arguments: &serde_json::Value,
    path: Option<&str>,
    folder: &std::path::Path,
) -> acp::ToolCall {
    let mut call = acp::ToolCall::new(id.to_string(), label.to_string())
        .kind(kind_of(name))
        .raw_input(arguments.clone());
    if let Some(p) = path {
        call = call.locations(vec![acp::ToolCallLocation::new(folder.join(p))]);
    }
    call
}

/// The kind of action a call of `name` is, as its tool declares it (`Tool::kind`); a
/// server's tool, or one Skald does not ship, is `other`.
fn kind_of(name: &str) -> acp::ToolKind {
    use skald_api::ToolKind;
    match skald_core::tools::named(name).map(|t| t.kind()) {
        Some(ToolKind::Read) => acp::ToolKind::Read,
        Some(ToolKind::Edit) => acp::ToolKind::Edit,
        Some(ToolKind::Delete) => acp::ToolKind::Delete,
        Some(ToolKind::Move) => acp::ToolKind::Move,
        Some(ToolKind::Search) => acp::ToolKind::Search,
        Some(ToolKind::Execute) => acp::ToolKind::Execute,
        Some(ToolKind::Think) => acp::ToolKind::Think,
        Some(ToolKind::Fetch) => acp::ToolKind::Fetch,
        Some(ToolKind::Other) | None => acp::ToolKind::Other,
    }
}

fn shown(text: &str) -> String {
    if text.len() <= SHOWN_RESULT {
        return text.to_string();
    }
    let mut cut = SHOWN_RESULT;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}\n[… {} more bytes]", &text[..cut], text.len() - cut)
}

/// The todo list of a `write_todos` call as the editor's plan.
fn plan_of(arguments: &serde_json::Value) -> Option<acp::Plan> {
    let todos = arguments.get("todos")?.as_array()?;
    let entries = todos
        .iter()
        .filter_map(|t| {
            let content = t.get("content")?.as_str()?.to_string();
            let status = match t.get("status").and_then(|s| s.as_str()) {
                Some("in_progress") => acp::PlanEntryStatus::InProgress,
                Some("completed") | Some("done") => acp::PlanEntryStatus::Completed,
                _ => acp::PlanEntryStatus::Pending,
            };
            Some(acp::PlanEntry::new(
                content,
                acp::PlanEntryPriority::Medium,
                status,
            ))
        })
        .collect();
    Some(acp::Plan::new(entries))
}

/// Turns the service's events for this editor's sessions into updates, ends prompts when
/// their turn ends, and asks the editor about approvals.
fn pump(state: Arc<State>) {
    let mut events = state.service.subscribe();
    tokio::spawn(async move {
        loop {
            let m = match events.recv().await {
                Ok(m) => m,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                    eprintln!("skald acp: {n} events were missed");
                    continue;
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            };
            let ServerMessage::Event {
                session_id: Some(id),
                event,
            } = m
            else {
                continue;
            };
            let Some(folder) = lock(&state.sessions).get(&id).cloned() else {
                continue;
            };
            on_event(&state, id, &folder, event);
        }
    });
}

fn on_event(state: &Arc<State>, id: i64, folder: &std::path::Path, event: Event) {
    let update = match event {
        Event::TokenDelta { text } => Some(acp::SessionUpdate::AgentMessageChunk(
            acp::ContentChunk::new(text.into()),
        )),
        Event::Thinking { text } => Some(acp::SessionUpdate::AgentThoughtChunk(
            acp::ContentChunk::new(text.into()),
        )),
        Event::ToolStart {
            tool_call_id,
            name,
            arguments,
            label_short,
            path,
            ..
        } => {
            if name == skald_api::tool_names::WRITE_TODOS
                && let Some(plan) = plan_of(&arguments)
            {
                state.send(id, acp::SessionUpdate::Plan(plan));
            }
            Some(acp::SessionUpdate::ToolCall(
                tool_call(
                    &tool_call_id,
                    &name,
                    &label_short,
                    &arguments,
                    path.as_deref(),
                    folder,
                )
                .status(acp::ToolCallStatus::InProgress),
            ))
        }
        Event::ToolDone {
            tool_call_id,
            result,
            ..
        } => Some(finished(
            state,
            &tool_call_id,
            acp::ToolCallStatus::Completed,
            &result,
        )),
        Event::ToolError {
            tool_call_id,
            error,
        } => Some(finished(
            state,
            &tool_call_id,
            acp::ToolCallStatus::Failed,
            &error,
        )),
        Event::ToolRejected {
            tool_call_id,
            reason,
        } => Some(finished(
            state,
            &tool_call_id,
            acp::ToolCallStatus::Failed,
            &reason,
        )),
        Event::ToolCancelled { tool_call_id } => Some(finished(
            state,
            &tool_call_id,
            acp::ToolCallStatus::Failed,
            "stopped",
        )),
        Event::Error { message }
        | Event::LlmFailed {
            message,
            retrying: false,
        } => Some(acp::SessionUpdate::AgentMessageChunk(
            acp::ContentChunk::new(format!("\n\n[{message}]").into()),
        )),
        Event::ApprovalRequired {
            tool_call_id,
            name,
            label,
            inbox_id,
            ..
        } => {
            ask(state.clone(), id, inbox_id, tool_call_id, name, label);
            None
        }
        Event::Done { outcome, .. } => {
            let reason = match outcome {
                TurnOutcome::Final | TurnOutcome::Failed => acp::StopReason::EndTurn,
                TurnOutcome::Cancelled => acp::StopReason::Cancelled,
                TurnOutcome::Exhausted => acp::StopReason::MaxTurnRequests,
            };
            if let Some(tx) = lock(&state.waiting).remove(&id) {
                let _ = tx.send(reason);
            }
            None
        }
        _ => None,
    };
    if let Some(u) = update {
        state.send(id, u);
    }
}

/// The update ending a call: its status and result. A command that ran in the editor's
/// terminal keeps that terminal as its content (the editor goes on showing a released
/// terminal's output, and a reference to it after release is not the protocol's); its
/// result, with Skald's notes, is the raw output.
fn finished(
    state: &State,
    id: &str,
    status: acp::ToolCallStatus,
    text: &str,
) -> acp::SessionUpdate {
    let fields = acp::ToolCallUpdateFields::new().status(status);
    let fields = if lock(&state.terminals).remove(id) {
        fields.raw_output(serde_json::Value::String(shown(text)))
    } else {
        fields.content(vec![acp::ToolCallContent::from(shown(text))])
    };
    acp::SessionUpdate::ToolCallUpdate(acp::ToolCallUpdate::new(id.to_string(), fields))
}

/// Asks the editor whether a call may run; its answer goes to the Inbox item (unless the
/// Inbox was answered first). Allow always stores the rule the Inbox would propose.
fn ask(state: Arc<State>, id: i64, inbox_id: i64, call_id: String, name: String, label: String) {
    if !lock(&state.asked).insert(inbox_id) {
        return;
    }
    let Some(cx) = lock(&state.cx).clone() else {
        return;
    };
    tokio::spawn(async move {
        let request = acp::RequestPermissionRequest::new(
            acp::SessionId::new(id.to_string()),
            acp::ToolCallUpdate::new(
                call_id,
                acp::ToolCallUpdateFields::new()
                    .title(label)
                    .kind(kind_of(&name)),
            ),
            vec![
                acp::PermissionOption::new(
                    "allow_once",
                    "Allow once",
                    acp::PermissionOptionKind::AllowOnce,
                ),
                acp::PermissionOption::new(
                    "allow_always",
                    "Always allow (as the Inbox proposes)",
                    acp::PermissionOptionKind::AllowAlways,
                ),
                acp::PermissionOption::new(
                    "reject_once",
                    "Reject",
                    acp::PermissionOptionKind::RejectOnce,
                ),
            ],
        );
        let Ok(answer) = cx.send_request(request).block_task().await else {
            return;
        };
        let choice = match answer.outcome {
            acp::RequestPermissionOutcome::Selected(s) => s.option_id.0.to_string(),
            // The editor gave up (its prompt was cancelled): the Inbox still has it.
            _ => return,
        };
        let answer = match choice.as_str() {
            "allow_once" => skald_api::inbox::InboxAnswer::Approve,
            "allow_always" => match state.call(Command::ProposeRule { inbox_id }).await {
                Ok(Reply::ProposeRule { rule, .. }) => {
                    skald_api::inbox::InboxAnswer::AlwaysAllow { rule }
                }
                _ => skald_api::inbox::InboxAnswer::Approve,
            },
            _ => skald_api::inbox::InboxAnswer::Reject {
                note: "rejected in the editor".to_string(),
            },
        };
        // Answered in the Inbox already: that answer stands.
        let _ = state.call(Command::Answer { inbox_id, answer }).await;
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each tool's kind comes from the tool itself: the ones an old table named wrongly
    /// (an outline and a search as "other") and a server's tool.
    #[test]
    fn a_calls_kind_is_what_its_tool_declares() {
        for (name, kind) in [
            ("read_file", acp::ToolKind::Read),
            ("get_ast_outline", acp::ToolKind::Read),
            ("search_file", acp::ToolKind::Search),
            ("grep_files", acp::ToolKind::Search),
            ("edit_file", acp::ToolKind::Edit),
            ("execute_cmd", acp::ToolKind::Execute),
            ("write_todos", acp::ToolKind::Think),
            ("notify", acp::ToolKind::Other),
            ("mcp__github__search", acp::ToolKind::Other),
        ] {
            assert_eq!(kind_of(name), kind, "{name}");
        }
    }
}
