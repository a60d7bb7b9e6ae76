//! The one module that speaks `rmcp` (pinned in the workspace): connecting over stdio or
//! streamable HTTP, the client handler (progress, tool-list changes, elicitation), listing
//! and calling tools, and OAuth (`oauth`). Everything else in Skald sees only this
//! crate's own types, so an rmcp upgrade touches this module alone.

// Roots, sampling and `resources/subscribe` are deprecated for the protocol's next
// version (SEP-2577, 2026-07-28). Skald speaks 2025-11-25, where servers use them, so they
// are answered here until the version moves.
#![allow(deprecated)]

pub(crate) mod oauth;

use crate::{
    CallOutput, Elicited, Fail, Host, McpError, McpPrompt, McpResource, McpTool, OAuth, Progress,
    PromptArgument, PromptMessage, Transport,
};
use futures::StreamExt;
use futures::future::BoxFuture;
use rmcp::handler::client::progress::ProgressDispatcher;
use rmcp::model::{
    CallToolRequestParams, CancelledNotificationParam, ClientCapabilities, ClientConfig,
    ClientRequest, ContentBlock, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability, ErrorCode,
    FormElicitationCapability, GetPromptRequestParams, Implementation, ListRootsResult,
    ProgressNotificationParam, ProtocolVersion, ReadResourceRequestParams, Request,
    ResourceContents, ResourceUpdatedNotificationParam, Role, Root, RootsCapabilities,
    SamplingCapability, SamplingMessage, SamplingMessageContentBlock, ServerResult,
    SubscribeRequestParams,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestContext, RoleClient};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData, ServiceError, ServiceExt};
use serde_json::Value;
use skald_api::CancellationToken;
use std::sync::Arc;
use std::time::Duration;

/// What a server says has changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Changed {
    Tools,
    Resources,
    Prompts,
}

pub(crate) struct Handler {
    progress: ProgressDispatcher,
    changed: tokio::sync::mpsc::UnboundedSender<Changed>,
    /// Forms, roots, sampling and resource updates go to the owner.
    host: Arc<dyn Host>,
    server: String,
}

impl Handler {
    pub(crate) fn new(
        changed: tokio::sync::mpsc::UnboundedSender<Changed>,
        host: Arc<dyn Host>,
        server: String,
    ) -> Self {
        Handler {
            progress: ProgressDispatcher::new(),
            changed,
            host,
            server,
        }
    }
}

/// A host for a connection nobody works with (learning what login a server wants):
/// forms declined, no roots, no sampling.
pub(crate) struct Nobody;

impl Host for Nobody {
    fn status_changed(&self, _: &str, _: &crate::Status) {}
    fn elicit(
        &self,
        _: &str,
        _: String,
        _: Value,
        _: CancellationToken,
    ) -> BoxFuture<'static, Elicited> {
        Box::pin(async { Elicited::Decline })
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        caps.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        // The chat's folders, updated as chats come and go.
        let mut roots = RootsCapabilities::default();
        roots.list_changed = Some(true);
        caps.roots = Some(roots);
        caps.sampling = Some(SamplingCapability::default());
        // 2025-11-25 is the newest version with an initialize handshake, which every
        // server released so far speaks (and the conformance suite checks).
        ClientConfig::new(
            caps,
            Implementation::new("skald", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        self.progress.handle_notification(params).await;
    }

    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.changed.send(Changed::Tools);
    }

    async fn on_resource_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.changed.send(Changed::Resources);
    }

    async fn on_prompt_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.changed.send(Changed::Prompts);
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        self.host.resource_updated(&self.server, &params.uri);
    }

    async fn list_roots(
        &self,
        _cx: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let roots = self
            .host
            .roots(&self.server)
            .into_iter()
            .filter_map(|dir| {
                let uri = reqwest::Url::from_directory_path(&dir).ok()?.to_string();
                let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
                let mut root = Root::new(uri);
                root.name = name;
                Some(root)
            })
            .collect();
        Ok(ListRootsResult::new(roots))
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        cx: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let messages: Vec<(String, String)> = params
            .messages
            .into_iter()
            .map(|m| {
                let role = match m.role {
                    Role::Assistant => "assistant",
                    _ => "user",
                };
                let text: Vec<String> = m
                    .content
                    .into_vec()
                    .iter()
                    .map(|c| match c {
                        SamplingMessageContentBlock::Text(t) => t.text.clone(),
                        SamplingMessageContentBlock::Image(i) => {
                            format!("[image {} ({} bytes, base64)]", i.mime_type, i.data.len())
                        }
                        _ => "[content of a kind Skald does not pass on]".to_string(),
                    })
                    .collect();
                (role.to_string(), text.join("\n"))
            })
            .collect();
        let request = crate::SamplingRequest {
            messages,
            system_prompt: params.system_prompt,
            max_tokens: params.max_tokens,
        };
        let withdrawn = CancellationToken::new();
        let _close_on_drop = withdrawn.clone().drop_guard();
        let asking = self.host.sample(&self.server, request, withdrawn.clone());
        let answer = tokio::select! {
            _ = cx.ct.cancelled() => {
                withdrawn.cancel();
                Err("the server withdrew the request".to_string())
            }
            a = asking => a,
        };
        match answer {
            Ok(sampled) => Ok(CreateMessageResult::new(
                SamplingMessage::new(
                    Role::Assistant,
                    SamplingMessageContentBlock::text(sampled.text),
                ),
                sampled.model,
            )
            .with_stop_reason(CreateMessageResult::STOP_REASON_END_TURN)),
            Err(why) => Err(ErrorData::new(ErrorCode(-1), why, None)),
        }
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        cx: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let (message, schema) = match request {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => (
                message,
                serde_json::to_value(&requested_schema).unwrap_or(Value::Null),
            ),
            // URL elicitations send the user to a web page; a desktop app that opens
            // links for servers is a separate decision, so they are declined.
            _ => return Ok(ElicitResult::new(ElicitationAction::Decline)),
        };
        // Withdrawn by the server, or this request dropped (the call timed out or was
        // stopped): the token tells the asker, so the question is closed, not left open.
        let withdrawn = CancellationToken::new();
        let _close_on_drop = withdrawn.clone().drop_guard();
        let asking = self
            .host
            .elicit(&self.server, message, schema, withdrawn.clone());
        let answer = tokio::select! {
            _ = cx.ct.cancelled() => {
                withdrawn.cancel();
                Elicited::Cancel
            }
            a = asking => a,
        };
        Ok(match answer {
            Elicited::Accept(content) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(content)
            }
            Elicited::Decline => ElicitResult::new(ElicitationAction::Decline),
            Elicited::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }
}

pub(crate) type Client = rmcp::service::RunningService<RoleClient, Handler>;

/// A connected server and, for stdio, its process id (the leader of its process group).
pub(crate) struct Connected {
    pub client: Client,
    pub pid: Option<u32>,
    /// A sandboxed server's temporary folder, removed when the connection is dropped.
    pub _tmp: Option<tempfile::TempDir>,
}

/// The command that starts `command args…` in the sandbox, and its temporary folder.
fn sandboxed(
    helper: &std::path::Path,
    policy: &skald_sandbox::Policy,
    command: &str,
    args: &[String],
) -> Result<(tokio::process::Command, Option<tempfile::TempDir>), String> {
    let tmp = tempfile::Builder::new()
        .prefix("skald-mcp-")
        .tempdir()
        .map_err(|e| format!("cannot make the server's temporary folder: {e}"))?;
    let mut policy = policy.clone();
    policy
        .writable
        .push(std::fs::canonicalize(tmp.path()).unwrap_or_else(|_| tmp.path().to_path_buf()));
    let args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
    let helper_args = skald_sandbox::command_args(&policy, std::ffi::OsStr::new(command), &args)?;
    let mut cmd = tokio::process::Command::new(helper);
    cmd.args(helper_args);
    for var in ["TMPDIR", "TMP", "TEMP"] {
        cmd.env(var, tmp.path());
    }
    Ok((cmd, Some(tmp)))
}

/// How long a server that failed to start may take to finish saying why on its stderr.
const STDERR_GRACE: Duration = Duration::from_secs(2);

/// Connects and initialises within `timeout`. A stdio server's stderr lines go to `stderr`.
pub(crate) async fn connect(
    transport: &Transport,
    handler: Handler,
    timeout: Duration,
    stderr: impl FnMut(String) + Send + 'static,
) -> Result<Connected, Fail> {
    match transport {
        Transport::Stdio {
            command,
            args,
            env,
            remove_env,
            cwd,
            sandbox,
        } => {
            let (mut cmd, tmp) = match sandbox {
                None => {
                    let mut cmd = tokio::process::Command::new(command);
                    cmd.args(args);
                    (cmd, None)
                }
                Some((helper, policy)) => sandboxed(helper, policy, command, args)?,
            };
            for var in remove_env {
                cmd.env_remove(var);
            }
            cmd.envs(env.iter().map(|(k, v)| (k, v)));
            if let Some(dir) = cwd {
                cmd.current_dir(dir);
            }
            // Its own process group, so stopping the server stops what it started too
            // (`npx` runs the real server as a grandchild). The sandbox helper makes a
            // session of its own, whose group is its pid; a group leader could not.
            #[cfg(unix)]
            if sandbox.is_none() {
                cmd.process_group(0);
            }
            let (transport, err) = TokioChildProcess::builder(cmd)
                .stderr(std::process::Stdio::piped())
                .spawn()
                .map_err(|e| Fail::Broken(format!("cannot start `{command}`: {e}")))?;
            let pid = transport.id();
            let draining = err.map(|err| tokio::spawn(drain(err, stderr)));
            let served = match tokio::time::timeout(timeout, handler.serve(transport)).await {
                Ok(Ok(client)) => Ok(client),
                Ok(Err(e)) => Err(format!("initialize failed: {e}")),
                Err(_) => Err(format!(
                    "no answer to initialize within {} s",
                    timeout.as_secs()
                )),
            };
            let client = match served {
                Ok(client) => client,
                Err(why) => {
                    crate::kill_group(pid);
                    // What the server said on its way out explains the failure better
                    // than a broken pipe: let the reader reach the end of it first. A
                    // grandchild holding the pipe open cannot keep us here long.
                    if let Some(draining) = draining {
                        let _ = tokio::time::timeout(STDERR_GRACE, draining).await;
                    }
                    return Err(Fail::Broken(why));
                }
            };
            Ok(Connected {
                client,
                pid,
                _tmp: tmp,
            })
        }
        Transport::Http { url, bearer, oauth } => {
            let late = || {
                Fail::Broken(format!(
                    "no answer to initialize within {} s",
                    timeout.as_secs()
                ))
            };
            let mut cfg = StreamableHttpClientTransportConfig::with_uri(url.clone());
            let served = match (bearer, oauth) {
                (Some(token), _) => {
                    cfg = cfg.auth_header(token.clone());
                    let transport = StreamableHttpClientTransport::from_config(cfg);
                    tokio::time::timeout(timeout, handler.serve(transport))
                        .await
                        .map_err(|_| late())?
                }
                (None, None) => {
                    let transport = StreamableHttpClientTransport::from_config(cfg);
                    tokio::time::timeout(timeout, handler.serve(transport))
                        .await
                        .map_err(|_| late())?
                }
                (None, Some(oauth)) => {
                    let serving = async {
                        let http = oauth::http_client(url, oauth).await?;
                        let transport = StreamableHttpClientTransport::with_client(http, cfg);
                        Ok::<_, String>(handler.serve(transport).await)
                    };
                    let served = tokio::time::timeout(timeout, serving)
                        .await
                        .map_err(|_| late())??;
                    if let Err(e) = &served
                        && let Some(challenge) = e.auth_challenge()
                    {
                        return Err(Fail::Login(oauth::refused(url, oauth, challenge).await));
                    }
                    served
                }
            };
            let client = served.map_err(|e| Fail::Broken(format!("initialize failed: {e}")))?;
            Ok(Connected {
                client,
                pid: None,
                _tmp: None,
            })
        }
    }
}

/// The server's OAuth settings, when it logs in with OAuth.
fn oauth_of(transport: &Transport) -> Option<(&str, &OAuth)> {
    match transport {
        Transport::Http {
            url,
            bearer: None,
            oauth: Some(oauth),
        } => Some((url, oauth)),
        _ => None,
    }
}

/// A request refused for want of a login: the refusal is kept for the login to answer.
async fn login_needed(transport: &Transport, e: &ServiceError) -> Option<oauth::LoginNeeded> {
    let (url, oauth) = oauth_of(transport)?;
    let challenge = e.auth_challenge()?;
    Some(oauth::refused(url, oauth, challenge).await)
}

/// Connects once, as a chat would, to have the server say what login it wants (kept in
/// the store for the login to answer). A server that lets us in needs no login.
pub(crate) async fn learn_refusal(spec: &crate::ServerSpec) -> Result<(), String> {
    let (changed, _) = tokio::sync::mpsc::unbounded_channel();
    let handler = Handler::new(changed, Arc::new(Nobody), spec.name.clone());
    let broken = |e: Fail| match e {
        Fail::Broken(e) => Err(e),
        Fail::Login(_) => Ok(()),
    };
    let connected = match connect(&spec.transport, handler, spec.connect_timeout, |_| {}).await {
        Ok(c) => c,
        Err(e) => return broken(e),
    };
    let listed = list_tools(
        &connected.client,
        &spec.transport,
        &spec.name,
        spec.connect_timeout,
    )
    .await;
    connected.client.cancellation_token().cancel();
    match listed {
        Ok(_) => Err(format!(
            "`{}` answered without asking for a login: there is nothing to sign in to (`skald mcp logout {}` forgets a login to start again)",
            spec.name, spec.name
        )),
        Err(e) => broken(e),
    }
}

/// Reads the server's stderr to its end, line by line. Bytes that are not UTF-8 are
/// shown as U+FFFD rather than ending the read: a closed pipe would kill the server at its
/// next write.
async fn drain(err: tokio::process::ChildStderr, mut sink: impl FnMut(String)) {
    use tokio::io::AsyncBufReadExt;
    let mut reader = tokio::io::BufReader::new(err);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line);
                sink(text.trim_end_matches(['\n', '\r']).to_string());
            }
        }
    }
}

/// Every tool the server offers, following pagination.
pub(crate) async fn list_tools(
    client: &Client,
    transport: &Transport,
    server: &str,
    timeout: Duration,
) -> Result<Vec<McpTool>, Fail> {
    let listed = tokio::time::timeout(timeout, client.list_all_tools())
        .await
        .map_err(|_| {
            Fail::Broken(format!(
                "tools/list took longer than {} s",
                timeout.as_secs()
            ))
        })?;
    let tools = match listed {
        Ok(t) => t,
        Err(e) => {
            return Err(match login_needed(transport, &e).await {
                Some(need) => Fail::Login(need),
                None => Fail::Broken(format!("tools/list failed: {e}")),
            });
        }
    };
    Ok(tools
        .into_iter()
        .map(|t| McpTool {
            server: server.to_string(),
            name: t.name.to_string(),
            description: t.description.map(|d| d.to_string()).unwrap_or_default(),
            input_schema: Value::Object((*t.input_schema).clone()),
        })
        .collect())
}

/// Every resource the server offers, following pagination; none when it offers none or
/// listing them fails (logged: resources are extras, the tools still work).
pub(crate) async fn list_resources(
    client: &Client,
    server: &str,
    timeout: Duration,
) -> Vec<McpResource> {
    let offers = client
        .peer_info()
        .is_some_and(|i| i.capabilities.resources.is_some());
    if !offers {
        return Vec::new();
    }
    match tokio::time::timeout(timeout, client.list_all_resources()).await {
        Ok(Ok(list)) => list
            .into_iter()
            .map(|r| McpResource {
                server: server.to_string(),
                uri: r.uri,
                name: r.name,
                title: r.title,
                description: r.description.unwrap_or_default(),
                mime_type: r.mime_type,
                size: r.size,
            })
            .collect(),
        Ok(Err(e)) => {
            tracing::warn!(server, "resources/list failed: {e}");
            Vec::new()
        }
        Err(_) => {
            tracing::warn!(server, "resources/list took longer than {timeout:?}");
            Vec::new()
        }
    }
}

/// Every prompt the server offers (as `list_resources`).
pub(crate) async fn list_prompts(
    client: &Client,
    server: &str,
    timeout: Duration,
) -> Vec<McpPrompt> {
    let offers = client
        .peer_info()
        .is_some_and(|i| i.capabilities.prompts.is_some());
    if !offers {
        return Vec::new();
    }
    match tokio::time::timeout(timeout, client.list_all_prompts()).await {
        Ok(Ok(list)) => list
            .into_iter()
            .map(|p| McpPrompt {
                server: server.to_string(),
                name: p.name,
                title: p.title,
                description: p.description.unwrap_or_default(),
                arguments: p
                    .arguments
                    .unwrap_or_default()
                    .into_iter()
                    .map(|a| PromptArgument {
                        name: a.name,
                        description: a.description.unwrap_or_default(),
                        required: a.required.unwrap_or(false),
                    })
                    .collect(),
            })
            .collect(),
        Ok(Err(e)) => {
            tracing::warn!(server, "prompts/list failed: {e}");
            Vec::new()
        }
        Err(_) => {
            tracing::warn!(server, "prompts/list took longer than {timeout:?}");
            Vec::new()
        }
    }
}

/// Reads a resource: each content as the model reads it, capped.
pub(crate) async fn read_resource(
    client: &Client,
    transport: &Transport,
    uri: &str,
    timeout: Duration,
) -> Result<String, McpError> {
    let read = tokio::time::timeout(
        timeout,
        client.read_resource(ReadResourceRequestParams::new(uri)),
    )
    .await
    .map_err(|_| McpError::Timeout(timeout))?;
    let result = match read {
        Ok(r) => r,
        Err(e) => return Err(refusal(transport, e).await),
    };
    let parts: Vec<String> = result.contents.iter().map(contents_text).collect();
    Ok(capped(parts.join("\n")))
}

/// A prompt with its arguments: its messages as text.
pub(crate) async fn get_prompt(
    client: &Client,
    transport: &Transport,
    prompt: &str,
    arguments: serde_json::Map<String, Value>,
    timeout: Duration,
) -> Result<Vec<PromptMessage>, McpError> {
    let mut params = GetPromptRequestParams::new(prompt.to_string());
    if !arguments.is_empty() {
        params.arguments = Some(arguments);
    }
    let got = tokio::time::timeout(timeout, client.get_prompt(params))
        .await
        .map_err(|_| McpError::Timeout(timeout))?;
    let result = match got {
        Ok(r) => r,
        Err(e) => return Err(refusal(transport, e).await),
    };
    Ok(result
        .messages
        .iter()
        .map(|m| PromptMessage {
            role: match m.role {
                Role::Assistant => "assistant".to_string(),
                _ => "user".to_string(),
            },
            text: capped(block_text(&m.content)),
        })
        .collect())
}

/// Says the roots changed, if the server's client still runs (bounded: a notification).
pub(crate) async fn roots_changed(client: &Client) {
    let _ = tokio::time::timeout(
        Duration::from_secs(5),
        client.peer().notify_roots_list_changed(),
    )
    .await;
}

/// Subscribes to a resource's updates.
pub(crate) async fn subscribe(
    client: &Client,
    transport: &Transport,
    uri: &str,
    timeout: Duration,
) -> Result<(), McpError> {
    let offers = client.peer_info().is_some_and(|i| {
        i.capabilities
            .resources
            .as_ref()
            .is_some_and(|r| r.subscribe == Some(true))
    });
    if !offers {
        return Err(McpError::Protocol(
            "the server does not offer resource subscriptions".to_string(),
        ));
    }
    let sent = tokio::time::timeout(timeout, client.subscribe(SubscribeRequestParams::new(uri)))
        .await
        .map_err(|_| McpError::Timeout(timeout))?;
    match sent {
        Ok(()) => Ok(()),
        Err(e) => Err(refusal(transport, e).await),
    }
}

/// Calls a tool. Progress notifications go to `on_progress`; `cancel` sends
/// `notifications/cancelled`; `timeout` runs from the last sign of life (progress resets it).
pub(crate) async fn call(
    client: &Client,
    transport: &Transport,
    tool: &str,
    arguments: serde_json::Map<String, Value>,
    timeout: Duration,
    cancel: &CancellationToken,
    on_progress: &(dyn Fn(Progress) + Send + Sync),
) -> Result<CallOutput, McpError> {
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
    let options = PeerRequestOptions::with_timeout(timeout).reset_timeout_on_progress();
    let sent = client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(Request::new(params)),
            options,
        )
        .await;
    let handle = match sent {
        Ok(h) => h,
        Err(e) => return Err(refusal(transport, e).await),
    };
    let mut progress = client
        .service()
        .progress
        .subscribe(handle.progress_token.clone())
        .await;
    let (id, peer) = (handle.id.clone(), handle.peer.clone());
    let response = handle.await_response();
    tokio::pin!(response);
    let mut listening = true;
    let result = loop {
        tokio::select! {
            biased;
            _ = cancel.cancelled() => {
                let note = CancelledNotificationParam::new(Some(id), Some("stopped by the user".into()));
                let _ = tokio::time::timeout(Duration::from_secs(2), peer.notify_cancelled(note)).await;
                return Err(McpError::Cancelled);
            }
            r = &mut response => break r,
            p = progress.next(), if listening => match p {
                Some(p) => on_progress(Progress {
                    progress: p.progress,
                    total: p.total,
                    message: p.message,
                }),
                None => listening = false,
            },
        }
    };
    let result = match result {
        Ok(r) => r,
        Err(e) => return Err(refusal(transport, e).await),
    };
    match result {
        ServerResult::CallToolResult(r) => {
            let mut parts: Vec<String> = r.content.iter().map(block_text).collect();
            if parts.iter().all(String::is_empty)
                && let Some(structured) = &r.structured_content
            {
                parts = vec![structured.to_string()];
            }
            Ok(CallOutput {
                text: capped(
                    parts
                        .into_iter()
                        .filter(|p| !p.is_empty())
                        .collect::<Vec<_>>()
                        .join("\n"),
                ),
                is_error: r.is_error.unwrap_or(false),
            })
        }
        ServerResult::EmptyResult(_) => Ok(CallOutput {
            text: String::new(),
            is_error: false,
        }),
        _ => Err(McpError::Protocol(
            "the server answered tools/call with something else than a tool result".into(),
        )),
    }
}

/// Most bytes of one tool result the model reads (as for `execute_cmd`): a server may
/// answer with anything, and the history goes to the model with every round.
pub const RESULT_CAP: usize = 100 * 1024;

/// `text` cut to [`RESULT_CAP`] on a character boundary, saying how much was left out.
fn capped(text: String) -> String {
    if text.len() <= RESULT_CAP {
        return text;
    }
    let mut end = RESULT_CAP;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[Skald kept the first {end} bytes of this {}-byte result; the rest was cut]",
        &text[..end],
        text.len()
    )
}

/// What the model reads of one content block: text as is, everything else described.
fn block_text(block: &ContentBlock) -> String {
    if let Some(t) = block.as_text() {
        return t.text.clone();
    }
    if let Some(i) = block.as_image() {
        return format!("[image {} ({} bytes, base64)]", i.mime_type, i.data.len());
    }
    if let Some(r) = block.as_resource() {
        return contents_text(&r.resource);
    }
    if let Some(l) = block.as_resource_link() {
        return format!("[resource link {} ({})]", l.uri, l.name);
    }
    "[content of a kind Skald does not show]".to_string()
}

/// A failed request's error, saying so when the server wants a login.
async fn refusal(transport: &Transport, e: ServiceError) -> McpError {
    match login_needed(transport, &e).await {
        Some(need) => McpError::NeedsLogin {
            server: String::new(),
            status: crate::Status::NeedsLogin {
                expired: need.expired,
                scope: need.scope,
            }
            .describe(),
        },
        None => service_error(e),
    }
}

/// What the model reads of a resource's contents: text under its URI, binary described.
fn contents_text(contents: &ResourceContents) -> String {
    match contents {
        ResourceContents::TextResourceContents { uri, text, .. } => {
            format!("[resource {uri}]\n{text}")
        }
        ResourceContents::BlobResourceContents {
            uri,
            blob,
            mime_type,
            ..
        } => format!(
            "[resource {uri} ({}, {} bytes, base64)]",
            mime_type.as_deref().unwrap_or("binary"),
            blob.len()
        ),
        _ => "[resource]".to_string(),
    }
}

fn service_error(e: ServiceError) -> McpError {
    match e {
        ServiceError::McpError(data) => McpError::Server(data.message.to_string()),
        ServiceError::Timeout { timeout } => McpError::Timeout(timeout),
        ServiceError::TransportClosed => McpError::Closed,
        ServiceError::Cancelled { .. } => McpError::Cancelled,
        other => McpError::Protocol(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_results_are_cut_on_a_character_boundary_with_a_note() {
        assert_eq!(capped("short".into()), "short");
        let long = "é".repeat(RESULT_CAP); // two bytes each
        let out = capped(long.clone());
        let (kept, note) = out.rsplit_once('\n').unwrap();
        assert!(long.starts_with(kept) && kept.len() <= RESULT_CAP);
        assert!(
            note.contains(&format!("{}-byte result", long.len())),
            "{note}"
        );
    }
}
