//! MCP servers inside the engine (docs/mcp.md): starting the registered ones, the
//! host side of the client (status events, server forms through the Agent Inbox), the
//! tools offered to agents that activated a server, the prompt's MCP list, and checking
//! a registration.

use crate::lock;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use skald_api::CancellationToken;
use skald_api::events::Event;
pub use skald_mcp::{
    ClientIdentity, IdentityProvider, LOGIN_WAIT, LoggedIn, McpTool, ServerSpec, Status, login,
    logout, open_in_browser,
};
use skald_mcp::{Elicited, McpManager, Transport};
use skald_store::{McpServerRecord, Store};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The MCP list when no server is registered (and for runs without an engine).
pub const NONE_CONFIGURED: &str = "No MCP servers are configured.";

/// MCP tools reach the model as `mcp__<server>__<tool>`.
pub const PREFIX: &str = "mcp__";

/// Providers accept tool names of at most 64 characters of `[A-Za-z0-9_-]`.
const MAX_TOOL_NAME: usize = 64;

pub fn tool_name(server: &str, tool: &str) -> String {
    format!("{PREFIX}{server}__{tool}")
}

/// `(server, tool)` of an `mcp__server__tool` name.
pub fn split_name(name: &str) -> Option<(&str, &str)> {
    name.strip_prefix(PREFIX)?.split_once("__")
}

/// A server name must fit tool names: letters, digits, `-` and single `_`, at most 32.
pub fn check_server_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 32
        && !name.starts_with('_')
        && !name.ends_with('_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !name.contains("__")
        && name != skald_api::tool_names::CONFIG_GROUP;
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{name}` cannot name an MCP server: use 1 to 32 letters, digits, `-` or `_` \
             (no `__`, no `_` at either end, and not `config`)"
        ))
    }
}

/// `${env:NAME}` and `${secret:NAME}` references in a server's environment and token,
/// resolved at start. Literal values pass through unchanged.
pub(crate) fn resolve(
    value: &str,
    secrets: Option<&skald_secrets::Secrets>,
) -> Result<String, String> {
    if let Some(var) = value
        .strip_prefix("${env:")
        .and_then(|v| v.strip_suffix('}'))
    {
        return std::env::var(var)
            .map_err(|_| format!("the environment variable {var} is not set"));
    }
    if let Some(name) = value
        .strip_prefix("${secret:")
        .and_then(|v| v.strip_suffix('}'))
    {
        if is_login_secret(name) {
            return Err(format!(
                "${{secret:{name}}} is an MCP server's login, which is not handed to anything"
            ));
        }
        let secrets = secrets.ok_or("secrets are not available in this run")?;
        return secrets
            .get(name)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("the secret {name} is not set (skald secrets set {name})"));
    }
    Ok(value.to_string())
}

/// Whether a value is a reference rather than a literal.
fn is_reference(value: &str) -> bool {
    (value.starts_with("${env:") || value.starts_with("${secret:")) && value.ends_with('}')
}

/// The prefix of the secrets that hold HTTP servers' OAuth logins.
const LOGIN_PREFIX: &str = "mcp-oauth.";

/// The secret an HTTP server's OAuth login is kept under.
pub fn login_secret(server: &str) -> String {
    format!("{LOGIN_PREFIX}{server}")
}

/// Whether a secret's name is an OAuth login's: written by logins only, never referred to
/// (`${secret:…}` would hand the whole record, refresh token included, to a server) nor
/// listed to agents.
pub fn is_login_secret(name: &str) -> bool {
    name.starts_with(LOGIN_PREFIX)
}

/// A server's OAuth login in the secrets store (the OS keyring or the encrypted file),
/// never in the database.
struct SavedLogin {
    secrets: Arc<skald_secrets::Secrets>,
    name: String,
    redactor: Option<Arc<Mutex<skald_secrets::Redactor>>>,
}

impl SavedLogin {
    /// New tokens (a login, a refresh) are redacted from then on, not from the next start.
    fn refresh_redactor(&self) {
        if let Some(r) = &self.redactor
            && let Ok(now) = self.secrets.redactor()
        {
            *lock(r) = now;
        }
    }
}

/// How HTTP servers' OAuth logins are kept and told about.
#[derive(Clone, Default)]
pub struct Logins {
    /// Skald's client ID metadata document, if one is configured (config `[mcp]`).
    pub client_metadata_url: Option<String>,
    /// The engine's redactor, rebuilt when a login's tokens change.
    pub redactor: Option<Arc<Mutex<skald_secrets::Redactor>>>,
}

impl skald_mcp::TokenStore for SavedLogin {
    fn load(&self) -> Result<Option<String>, String> {
        self.secrets.get(&self.name).map_err(|e| e.to_string())
    }
    fn save(&self, text: &str) -> Result<(), String> {
        self.secrets
            .set(&self.name, text)
            .map_err(|e| e.to_string())?;
        self.refresh_redactor();
        Ok(())
    }
    fn clear(&self) -> Result<(), String> {
        self.secrets.delete(&self.name).map_err(|e| e.to_string())?;
        self.refresh_redactor();
        Ok(())
    }
    fn hold(&self) -> Result<Option<Box<dyn Send>>, String> {
        // As long as a refresh may take (its request's timeout), and a little more.
        let held = self
            .secrets
            .hold(&self.name, std::time::Duration::from_secs(40))
            .map_err(|e| e.to_string())?;
        Ok(Some(Box::new(held)))
    }
}

/// The client's view of a stored registration. An HTTP server without a token logs in
/// with OAuth when it asks, its login kept in `secrets` (none: no OAuth in this run) as
/// `logins` says.
pub fn spec_for(
    rec: &McpServerRecord,
    connect: Duration,
    call: Duration,
    logs_dir: Option<&std::path::Path>,
    secrets: Option<&Arc<skald_secrets::Secrets>>,
    logins: &Logins,
    withheld: &crate::withheld::Withheld,
) -> Result<ServerSpec, String> {
    let plain = secrets.map(|s| &**s);
    let transport = match rec.transport.as_str() {
        "stdio" => {
            let command = rec
                .command
                .clone()
                .filter(|c| !c.trim().is_empty())
                .ok_or("a stdio server needs a command")?;
            let mut env = Vec::new();
            for (k, v) in &rec.env {
                let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                env.push((k.clone(), resolve(&v, plain)?));
            }
            Transport::Stdio {
                command,
                args: rec.args.clone(),
                env,
                // Model-provider keys stay with Skald, as for shell commands.
                remove_env: withheld.env(),
                cwd: None,
                sandbox: rec
                    .sandbox
                    .then(|| {
                        crate::sandbox::server_sandbox(&rec.name, withheld, rec.sandbox_network)
                    })
                    .transpose()?,
            }
        }
        "http" => Transport::Http {
            url: rec
                .url
                .clone()
                .filter(|u| u.starts_with("http://") || u.starts_with("https://"))
                .ok_or("an http server needs an http:// or https:// url")?,
            bearer: rec
                .api_key
                .as_deref()
                .map(|k| resolve(k, plain))
                .transpose()?,
            oauth: secrets
                .filter(|_| rec.api_key.is_none())
                .map(|s| skald_mcp::OAuth {
                    store: Arc::new(SavedLogin {
                        secrets: s.clone(),
                        name: login_secret(&rec.name),
                        redactor: logins.redactor.clone(),
                    }),
                    client_metadata_url: logins.client_metadata_url.clone(),
                }),
        },
        other => return Err(format!("unknown transport `{other}`: use stdio or http")),
    };
    Ok(ServerSpec {
        name: rec.name.clone(),
        transport,
        connect_timeout: connect,
        call_timeout: call,
        log_path: logs_dir.map(|d| d.join("mcp").join(format!("{}.log", rec.name))),
    })
}

/// Answers an approved sampling request with a model.
pub(crate) type Sampler = Arc<
    dyn Fn(
            i64,
            skald_mcp::SamplingRequest,
            CancellationToken,
        ) -> BoxFuture<'static, Result<skald_mcp::Sampled, String>>
        + Send
        + Sync,
>;

/// The engine's side of the MCP client.
pub struct Host {
    pub(crate) store: Arc<Store>,
    pub(crate) inbox: Arc<crate::inbox::Inbox>,
    pub(crate) sink: crate::sink::Sink,
    /// Sessions with a call in flight per server, newest last: a server's form is shown
    /// in the chat whose call caused it.
    pub(crate) active: Arc<Mutex<HashMap<String, Vec<i64>>>>,
    /// Secret values to keep out of what servers print (their log tail).
    pub(crate) redactor: Arc<Mutex<skald_secrets::Redactor>>,
    /// How sampling reaches a model, set by the engine once it exists (this module does
    /// not know the engine: it sits below it).
    pub(crate) sampler: Arc<std::sync::OnceLock<Sampler>>,
    /// Resources a server said changed since an agent last read them: (server, uri).
    pub(crate) updated: Arc<Mutex<std::collections::BTreeSet<(String, String)>>>,
    /// The chats that activated or called each server in this process, newest last:
    /// their folders are the server's roots.
    pub(crate) users: Arc<Mutex<HashMap<String, Vec<i64>>>>,
    /// Resources this process asked to hear about: the only updates taken.
    pub(crate) subscribed: Arc<Mutex<std::collections::BTreeSet<(String, String)>>>,
}

/// Most resources remembered as changed: a server that floods updates fills no more.
const UPDATED_MAX: usize = 64;

/// Most characters of a sampling request shown on its Inbox card's one line.
const SAMPLING_LABEL: usize = 160;

/// Most bytes of a sampling request: its whole text is on the Inbox card.
const SAMPLING_MAX: usize = 64 * 1024;

impl skald_mcp::Host for Host {
    fn status_changed(&self, server: &str, status: &Status) {
        match status {
            Status::Failed { error, .. } => tracing::warn!(server, "MCP server failed: {error}"),
            other => tracing::info!(server, "MCP server {}", other.describe()),
        }
        let mut status = status.clone();
        if let Status::Failed { log_tail, .. } = &mut status {
            *log_tail = lock(&self.redactor).redact(log_tail);
        }
        // Not a session's event: session 0 is the app as a whole.
        (self.sink)(
            0,
            Event::McpStatus {
                server: server.to_string(),
                status,
            },
        );
    }

    fn elicit(
        &self,
        server: &str,
        message: String,
        schema: Value,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Elicited> {
        let session = lock(&self.active)
            .get(server)
            .and_then(|v| v.last().copied());
        let (store, inbox, sink) = (self.store.clone(), self.inbox.clone(), self.sink.clone());
        let server = server.to_string();
        // The question lives in its own task: if the request is dropped, the task still
        // sees `cancel` and closes the Inbox item instead of leaving it open.
        let (tx, rx) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let answer =
                ask_form(store, inbox, sink, session, server, message, schema, cancel).await;
            let _ = tx.send(answer);
        });
        Box::pin(async move { rx.await.unwrap_or(Elicited::Cancel) })
    }

    /// Only for a resource an agent read (and so subscribed to): anything else a server
    /// says is not taken into any chat's context.
    fn resource_updated(&self, server: &str, uri: &str) {
        let key = (server.to_string(), uri.to_string());
        if !lock(&self.subscribed).contains(&key) {
            return;
        }
        let mut updated = lock(&self.updated);
        if updated.len() < UPDATED_MAX {
            updated.insert(key);
        }
    }

    /// The folders of the chat the server works for now — the one with a call in flight,
    /// else the last to activate or call it: its working folder and write grants. One
    /// chat's: a server two chats use must not reach one's folders through the other.
    fn roots(&self, server: &str) -> Vec<std::path::PathBuf> {
        let calling = lock(&self.active)
            .get(server)
            .and_then(|v| v.last().copied());
        let latest = lock(&self.users)
            .get(server)
            .and_then(|v| v.last().copied());
        let sessions: Vec<i64> = calling.or(latest).into_iter().collect();
        let mut out: Vec<std::path::PathBuf> = Vec::new();
        for id in sessions.iter().rev() {
            let Ok(session) = self.store.get_session(*id) else {
                continue;
            };
            // A chat in a worktree never writes the folder it copies: no grant that
            // reaches it is a root (as no command gets it, `sandbox::policy`).
            let source = session
                .working_dir
                .as_deref()
                .and_then(|d| {
                    self.store
                        .worktree_holding(std::path::Path::new(d))
                        .ok()
                        .flatten()
                })
                .map(|w| std::path::PathBuf::from(w.source));
            let reaches = |d: &str| {
                source.as_ref().is_some_and(|s| {
                    let d = std::path::Path::new(d);
                    skald_base::path::path_under(d, s) || skald_base::path::path_under(s, d)
                })
            };
            let mut dirs: Vec<String> = session.working_dir.into_iter().collect();
            if let Some(rc) = session.run_context_id
                && let Ok(rc) = self.store.get_run_context(rc)
            {
                dirs.extend(rc.allow_fs_writes.into_iter().filter(|d| !reaches(d)));
            }
            for d in dirs {
                let p = std::path::PathBuf::from(d);
                if p.is_absolute() && !out.contains(&p) {
                    out.push(p);
                }
            }
        }
        out
    }

    /// A server asks the chat's model for a completion: an approval in the Inbox of the
    /// chat whose call caused it (none: refused), then the engine's first model, without
    /// tools.
    fn sample(
        &self,
        server: &str,
        request: skald_mcp::SamplingRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<skald_mcp::Sampled, String>> {
        let session = lock(&self.active)
            .get(server)
            .and_then(|v| v.last().copied());
        let (store, inbox, sink) = (self.store.clone(), self.inbox.clone(), self.sink.clone());
        let sampler = self.sampler.get().cloned();
        let server = server.to_string();
        Box::pin(async move {
            let Some(session_id) = session else {
                return Err(
                    "Skald answers sampling only during a call a chat of the user made".to_string(),
                );
            };
            // The user approves what they can read on a card.
            let size: usize = request.messages.iter().map(|(_, t)| t.len()).sum::<usize>()
                + request.system_prompt.as_ref().map_or(0, String::len);
            if size > SAMPLING_MAX {
                return Err(format!(
                    "the request is {size} bytes; Skald shows the user at most {SAMPLING_MAX}"
                ));
            }
            let sampler = sampler.ok_or("no model is set up to answer")?;
            let first = request
                .messages
                .last()
                .map(|(_, t)| t.as_str())
                .unwrap_or("");
            let label: String = first.chars().take(SAMPLING_LABEL).collect();
            let emit = move |e: Event| sink(session_id, e);
            let item = inbox
                .request(
                    &store,
                    &skald_store::NewInboxItem {
                        session_id,
                        kind: skald_store::InboxKind::Approval,
                        tool_call_id: None,
                        agent_id: String::new(),
                        depth: 0,
                        title: format!("{server} asks the model: {label}"),
                        payload: skald_api::inbox::InboxRequest::Approval(
                            skald_api::inbox::ApprovalRequest {
                                tool: format!("sampling ({server})"),
                                arguments: json!({
                                    "messages": request.messages.iter().map(|(role, text)| json!({"role": role, "text": text})).collect::<Vec<_>>(),
                                    "system_prompt": request.system_prompt,
                                    "max_tokens": request.max_tokens,
                                }),
                                label: format!("{server} asks the model: {label}"),
                                reason: format!(
                                    "the MCP server {server} asks to use the chat's model (sampling); its answer goes to the server"
                                ),
                                category: None,
                                write: None,
                                sandbox: None,
                            },
                        )
                        .payload(),
                    },
                    &emit,
                )
                .map_err(|e| e.to_string())?;
            match inbox.wait(&store, item.id, &cancel).await {
                Ok(crate::inbox::Outcome::Approved) => {}
                Ok(crate::inbox::Outcome::Rejected(note)) => {
                    return Err(if note.trim().is_empty() {
                        "the user declined".to_string()
                    } else {
                        format!("the user declined: {note}")
                    });
                }
                Ok(crate::inbox::Outcome::Answered(_)) => {
                    return Err("the user answered instead of approving".to_string());
                }
                Ok(crate::inbox::Outcome::Cancelled) | Err(_) => {
                    return Err("the request was withdrawn".to_string());
                }
            }
            sampler(session_id, request, cancel).await
        })
    }
}

/// Puts a server's form in the Agent Inbox of the chat whose call caused it and waits for
/// the answer (or for `cancel`, which closes the item).
#[allow(clippy::too_many_arguments)]
async fn ask_form(
    store: Arc<Store>,
    inbox: Arc<crate::inbox::Inbox>,
    sink: crate::sink::Sink,
    session: Option<i64>,
    server: String,
    message: String,
    schema: Value,
    cancel: CancellationToken,
) -> Elicited {
    // A form with no call of ours behind it has no chat to appear in.
    let Some(session_id) = session else {
        return Elicited::Decline;
    };
    let emit = move |e: Event| sink(session_id, e);
    let item = inbox.request(
        &store,
        &skald_store::NewInboxItem {
            session_id,
            kind: skald_store::InboxKind::Elicitation,
            tool_call_id: None,
            agent_id: String::new(),
            depth: 0,
            title: format!("{server}: {message}"),
            payload: skald_api::inbox::InboxRequest::Elicitation(
                skald_api::inbox::ElicitationRequest {
                    server: server.to_string(),
                    message: message.to_string(),
                    schema: schema.clone(),
                },
            )
            .payload(),
        },
        &emit,
    );
    let Ok(item) = item else {
        return Elicited::Cancel;
    };
    // Fields the answer leaves out get the schema's defaults (SEP-1034).
    let accept = |mut content: Value| {
        skald_mcp::apply_defaults(&mut content, &schema);
        Elicited::Accept(content)
    };
    match inbox.wait(&store, item.id, &cancel).await {
        Ok(crate::inbox::Outcome::Answered(text)) => accept(form_content(&text, &schema)),
        Ok(crate::inbox::Outcome::Approved) => accept(json!({})),
        Ok(crate::inbox::Outcome::Rejected(_)) => Elicited::Decline,
        Ok(crate::inbox::Outcome::Cancelled) | Err(_) => Elicited::Cancel,
    }
}

/// A text answer as a form's content: a JSON object as is; otherwise the text fills the
/// form's one required (or only) field.
fn form_content(text: &str, schema: &Value) -> Value {
    if let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(text) {
        return v;
    }
    let field = schema["required"]
        .as_array()
        .and_then(|r| (r.len() == 1).then(|| r[0].as_str()).flatten())
        .or_else(|| {
            schema["properties"]
                .as_object()
                .filter(|p| p.len() == 1)
                .and_then(|p| p.keys().next().map(String::as_str))
        })
        .unwrap_or("value");
    json!({ field: text })
}

/// An agent frame: (session, stack row; `None` for the root agent).
pub(crate) type Frame = (i64, Option<i64>);

/// The engine's MCP servers.
pub struct Servers {
    pub manager: Arc<McpManager>,
    pub(crate) active: Arc<Mutex<HashMap<String, Vec<i64>>>>,
    pub connect_timeout: Duration,
    pub call_timeout: Duration,
    pub logs_dir: Mutex<Option<std::path::PathBuf>>,
    /// Where `${secret:NAME}` references are read and OAuth logins kept.
    pub secrets: Mutex<Option<Arc<skald_secrets::Secrets>>>,
    /// How OAuth logins are kept (config `[mcp]`, the engine's redactor).
    pub logins: Logins,
    /// The engine's withheld variables, kept from every server process.
    pub withheld: Arc<crate::withheld::Withheld>,
    /// Resources a server said changed since an agent last read them: (server, uri).
    pub(crate) updated: Arc<Mutex<std::collections::BTreeSet<(String, String)>>>,
    /// Resources this process asked to hear about.
    pub(crate) subscribed: Arc<Mutex<std::collections::BTreeSet<(String, String)>>>,
    /// The MCP tools each agent frame found with search_mcp_tools: (session, stack).
    pub(crate) loaded: Mutex<HashMap<Frame, std::collections::BTreeSet<String>>>,
    /// Bumped when a frame loads tools, so its turn offers them from the next round.
    pub(crate) loads: std::sync::atomic::AtomicU64,
    /// The chats that activated or called each server (the host's roots).
    pub(crate) users: Arc<Mutex<HashMap<String, Vec<i64>>>>,
}

impl Servers {
    /// Starts every registered server in the background (turned-off ones are recorded
    /// as disabled). Never waits for any of them.
    pub fn start_registered(&self, store: &Store) -> Result<(), skald_store::StoreError> {
        for rec in store.list_mcp_servers()? {
            self.start(&rec);
        }
        Ok(())
    }

    /// Starts (or restarts) one registered server, or records it as disabled.
    pub fn start(&self, rec: &McpServerRecord) {
        if !rec.enabled {
            self.manager.disabled(&rec.name);
            return;
        }
        let logs = lock(&self.logs_dir).clone();
        let secrets = lock(&self.secrets).clone();
        match spec_for(
            rec,
            self.connect_timeout,
            self.call_timeout,
            logs.as_deref(),
            secrets.as_ref(),
            &self.logins,
            &self.withheld,
        ) {
            Ok(spec) => self.manager.start(spec),
            Err(e) => self.manager.refuse(&rec.name, e),
        }
    }

    /// The client view of a registered HTTP server that logs in with OAuth.
    fn login_spec(
        &self,
        store: &Store,
        name: &str,
    ) -> Result<(McpServerRecord, ServerSpec), String> {
        let rec = store.get_mcp_server(name).map_err(|e| e.to_string())?;
        if rec.transport != "http" || rec.api_key.is_some() {
            return Err(format!(
                "`{name}` does not log in: only an HTTP server registered without a token does (OAuth)"
            ));
        }
        let secrets = lock(&self.secrets)
            .clone()
            .ok_or("the secrets store is not available, and a login is kept there")?;
        let logs = lock(&self.logs_dir).clone();
        let spec = spec_for(
            &rec,
            self.connect_timeout,
            self.call_timeout,
            logs.as_deref(),
            Some(&secrets),
            &self.logins,
            &self.withheld,
        )?;
        Ok((rec, spec))
    }

    /// Signs in to an HTTP server in the system browser (the app's Sign in), then
    /// connects to it again at once.
    pub async fn login(&self, store: &Store, name: &str) -> Result<LoggedIn, String> {
        let (rec, spec) = self.login_spec(store, name)?;
        let done = login(&spec, None, &|url: &str| open_in_browser(url), LOGIN_WAIT).await?;
        self.start(&rec);
        Ok(done)
    }

    /// Forgets an HTTP server's login; it then waits for a new one.
    pub async fn logout(&self, store: &Store, name: &str) -> Result<bool, String> {
        let (rec, spec) = self.login_spec(store, name)?;
        let had = logout(&spec).await?;
        self.start(&rec);
        Ok(had)
    }

    /// Turns a registered server on or off: stored, and connected or disconnected now. The
    /// one way every carrier (the UI, `toggle_item`) switches a server.
    pub fn set_enabled(
        &self,
        store: &Store,
        name: &str,
        enabled: bool,
    ) -> Result<McpServerRecord, skald_store::StoreError> {
        store.set_mcp_enabled(name, enabled)?;
        let rec = store.get_mcp_server(name)?;
        self.start(&rec);
        Ok(rec)
    }

    /// Notes a call in flight on `server` for `session` until the guard is dropped.
    pub(crate) fn enter(&self, server: &str, session: i64) -> ActiveCall {
        lock(&self.active)
            .entry(server.to_string())
            .or_default()
            .push(session);
        self.used_by(server, session);
        ActiveCall {
            active: self.active.clone(),
            server: server.to_string(),
            session,
        }
    }

    /// The prompt's MCP list (`<!-- MCP_LIST -->`): every registered server and whether
    /// this agent has activated it. Live status is not here but in `status_line`, at the
    /// end of the context: the list is part of the beginning every new chat shares, whose
    /// state providers and the local model keep, and a server that finishes connecting
    /// must not make it new.
    pub fn prompt_list(&self, store: &Store, granted: &[String]) -> String {
        let records = store.list_mcp_servers().unwrap_or_default();
        if records.is_empty() {
            return NONE_CONFIGURED.to_string();
        }
        let mut out = String::from(
            "MCP servers (activate one with activate_tools {\"groups\": [\"<name>\"]}; its tools \
             arrive from your next step; whether each is ready now is said at the end):\n",
        );
        for r in records {
            let active = if granted.contains(&r.name) {
                "active"
            } else {
                "not active"
            };
            let label = r.friendly_name.as_deref().unwrap_or(&r.name);
            let about = if r.description.is_empty() {
                String::new()
            } else {
                format!(" — {}", r.description)
            };
            out.push_str(&format!("- {} ({label}){about} [{active}]\n", r.name));
        }
        out
    }

    /// Every registered server's status as it is now ("everything ready, 14 tools;
    /// github connecting"), for the context's dynamic tail; none with no servers.
    pub fn status_line(&self, store: &Store) -> Option<String> {
        let records = store.list_mcp_servers().unwrap_or_default();
        if records.is_empty() {
            return None;
        }
        let each: Vec<String> = records
            .iter()
            .map(|r| {
                let status = self
                    .manager
                    .status(&r.name)
                    .map_or_else(|| "not started".to_string(), |s| s.describe());
                format!("{} {status}", r.name)
            })
            .collect();
        // A few, each cut short: the line is in every round's context.
        let changed: Vec<String> = lock(&self.updated)
            .iter()
            .take(10)
            .map(|(server, uri)| {
                let uri: String = uri.chars().take(200).collect();
                format!("{uri} ({server})")
            })
            .collect();
        let mut line = format!("MCP servers now: {}.", each.join("; "));
        if !changed.is_empty() {
            line.push_str(&format!(
                " Resources changed since they were read: {}.",
                changed.join(", ")
            ));
        }
        Some(line)
    }

    /// The tool definitions of the servers an agent activated that are ready.
    pub fn offered(&self, granted: &[String]) -> Vec<skald_llm::ToolSpec> {
        let mut out = Vec::new();
        for server in granted {
            for t in self.manager.tools(server) {
                let name = tool_name(server, &t.name);
                let fits = name.len() <= MAX_TOOL_NAME
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                if !fits {
                    tracing::warn!(server = %server, tool = %t.name, "MCP tool name cannot be offered to models");
                    continue;
                }
                let mut parameters = t.input_schema.clone();
                if parameters.get("type").is_none() {
                    parameters["type"] = json!("object");
                }
                out.push(skald_llm::ToolSpec {
                    name,
                    description: t.description.clone(),
                    parameters,
                });
            }
        }
        out
    }

    /// The prompts of every enabled, ready server, by server then name.
    pub fn prompt_infos(&self, store: &Store) -> Vec<skald_api::protocol::McpPromptInfo> {
        let mut out = Vec::new();
        for rec in store.list_mcp_servers().unwrap_or_default() {
            for p in self.manager.prompts(&rec.name) {
                out.push(skald_api::protocol::McpPromptInfo {
                    server: p.server,
                    name: p.name,
                    title: p.title,
                    description: p.description,
                    arguments: p
                        .arguments
                        .into_iter()
                        .map(|a| skald_api::protocol::McpPromptArgumentInfo {
                            name: a.name,
                            description: a.description,
                            required: a.required,
                        })
                        .collect(),
                });
            }
        }
        out
    }

    /// The resources of every enabled, ready server, by server.
    pub fn resource_infos(&self, store: &Store) -> Vec<skald_api::protocol::McpResourceInfo> {
        let mut out = Vec::new();
        for rec in store.list_mcp_servers().unwrap_or_default() {
            for r in self.manager.resources(&rec.name) {
                out.push(skald_api::protocol::McpResourceInfo {
                    server: r.server,
                    uri: r.uri,
                    name: r.name,
                    title: r.title,
                    description: r.description,
                    mime_type: r.mime_type,
                });
            }
        }
        out
    }

    /// A chat activated or calls a server: its folders are among the server's roots from
    /// now on, and a server that already asked for them is told they changed.
    pub(crate) fn used_by(&self, server: &str, session: i64) {
        let new = {
            let mut users = lock(&self.users);
            let sessions = users.entry(server.to_string()).or_default();
            let new = sessions.last() != Some(&session);
            sessions.retain(|s| *s != session);
            sessions.push(session);
            new
        };
        if new {
            self.manager.roots_changed(server);
        }
    }

    /// The tools a frame found with search_mcp_tools are offered to it from now on.
    pub(crate) fn load_tools(&self, session: i64, stack: Option<i64>, names: &[String]) {
        lock(&self.loaded)
            .entry((session, stack))
            .or_default()
            .extend(names.iter().cloned());
        self.loads.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }

    /// Changes whenever a frame loads tools.
    pub fn loads(&self) -> u64 {
        self.loads.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The activated servers' tools for one frame: every definition while they fit in
    /// `budget` tokens (estimated as a quarter of their JSON's bytes), else the ones the
    /// frame found with search_mcp_tools — and `true`, saying the search is to be offered.
    pub fn offered_within(
        &self,
        granted: &[String],
        session: i64,
        stack: Option<i64>,
        budget: Option<usize>,
    ) -> (Vec<skald_llm::ToolSpec>, bool) {
        let all = self.offered(granted);
        let Some(budget) = budget else {
            return (all, false);
        };
        let bytes: usize = all
            .iter()
            .map(|t| t.name.len() + t.description.len() + t.parameters.to_string().len())
            .sum();
        if bytes / 4 <= budget {
            return (all, false);
        }
        let loaded = lock(&self.loaded)
            .get(&(session, stack))
            .cloned()
            .unwrap_or_default();
        (
            all.into_iter()
                .filter(|t| loaded.contains(&t.name))
                .collect(),
            true,
        )
    }

    /// Whether a granted server that is ready offers resources (`read_mcp_resource` is
    /// offered then).
    pub fn has_resources(&self, granted: &[String]) -> bool {
        granted
            .iter()
            .any(|s| !self.manager.resources(s).is_empty())
    }

    /// An agent read a resource: it is current again, and the server (if it can) says
    /// when it changes, which the context's MCP status line then reports.
    pub(crate) async fn read(&self, server: &str, uri: &str) {
        let key = (server.to_string(), uri.to_string());
        lock(&self.updated).remove(&key);
        let new = lock(&self.subscribed).insert(key);
        if new && let Err(e) = self.manager.subscribe(server, uri).await {
            tracing::debug!(server, uri, "no updates for this resource: {e}");
        }
    }

    /// The input schema of an offered MCP tool, if its server is ready.
    pub fn schema(&self, name: &str) -> Option<Value> {
        let (server, tool) = split_name(name)?;
        self.manager
            .tools(server)
            .into_iter()
            .find(|t| t.name == tool)
            .map(|t| t.input_schema)
    }
}

/// A call in flight, so a server's form finds its chat.
pub(crate) struct ActiveCall {
    active: Arc<Mutex<HashMap<String, Vec<i64>>>>,
    server: String,
    session: i64,
}

impl Drop for ActiveCall {
    fn drop(&mut self) {
        if let Some(v) = lock(&self.active).get_mut(&self.server)
            && let Some(i) = v.iter().rposition(|s| *s == self.session)
        {
            v.remove(i);
        }
    }
}

/// A registration from `register_mcp`'s arguments (or the CLI's), checked: a valid name,
/// a transport with what it needs, and a token only as a reference.
pub fn record_from_args(args: &Value) -> Result<McpServerRecord, String> {
    let text = |k: &str| {
        args.get(k)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let name = text("name").ok_or("`name` is required")?;
    check_server_name(&name)?;
    let transport = text("transport").unwrap_or_else(|| {
        if text("url").is_some() {
            "http".into()
        } else {
            "stdio".into()
        }
    });
    let args_list: Vec<String> = match args.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or("`args` must be strings")
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("`args` must be an array of strings".into()),
    };
    let env = match args.get("env") {
        None | Some(Value::Null) => serde_json::Map::new(),
        Some(Value::Object(m)) if m.values().all(Value::is_string) => m.clone(),
        Some(_) => return Err("`env` must be an object of strings".into()),
    };
    let api_key = text("api_key");
    if let Some(key) = &api_key
        && !is_reference(key)
    {
        return Err(
            "`api_key` must be a reference such as ${secret:GITHUB_TOKEN} (set it with \
             set_secret or `skald secrets set`) or ${env:GITHUB_TOKEN}, never the token \
             itself: tokens do not belong in Skald's database or in a conversation"
                .into(),
        );
    }
    let rec = McpServerRecord {
        name,
        transport,
        command: text("command"),
        args: args_list,
        env,
        url: text("url"),
        api_key,
        description: text("description").unwrap_or_default(),
        friendly_name: text("friendly_name"),
        enabled: true,
        sandbox: false,
        sandbox_network: false,
        created_at: 0,
        updated_at: 0,
    };
    // The same checks starting it makes, minus the references, which resolve at start.
    let probe = McpServerRecord {
        env: serde_json::Map::new(),
        api_key: None,
        ..rec.clone()
    };
    spec_for(
        &probe,
        Duration::ZERO,
        Duration::ZERO,
        None,
        None,
        &Logins::default(),
        &Default::default(),
    )?;
    Ok(rec)
}

/// Host for a one-off check: statuses are read back, forms are declined.
struct ProbeHost;

impl skald_mcp::Host for ProbeHost {
    fn status_changed(&self, _server: &str, _status: &Status) {}
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

/// Connects to a registered server once, outside any engine, and reports its status and
/// tools (`skald mcp list`, `skald mcp tools`).
pub async fn probe(
    rec: &McpServerRecord,
    connect: Duration,
    logs_dir: Option<&std::path::Path>,
    secrets: Option<&Arc<skald_secrets::Secrets>>,
    withheld: &crate::withheld::Withheld,
) -> (Status, Vec<skald_mcp::McpTool>) {
    if !rec.enabled {
        return (Status::Disabled, Vec::new());
    }
    // No metadata document: a check never logs in, so it never needs one.
    let spec = match spec_for(
        rec,
        connect,
        connect,
        logs_dir,
        secrets,
        &Logins::default(),
        withheld,
    ) {
        Ok(s) => s,
        Err(error) => {
            return (
                Status::Failed {
                    error,
                    log_tail: String::new(),
                },
                Vec::new(),
            );
        }
    };
    let manager = McpManager::new(Arc::new(ProbeHost));
    manager.start(spec);
    // A little past the connect timeout, so a server that never answers is seen failed.
    let status = manager
        .wait_ready(&rec.name, connect + Duration::from_secs(2))
        .await
        .unwrap_or(Status::Connecting);
    let tools = manager.tools(&rec.name);
    manager.stop_all();
    (status, tools)
}

pub(crate) mod expand;

#[cfg(test)]
mod tests;
