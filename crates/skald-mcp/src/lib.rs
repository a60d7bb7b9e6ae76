//! Skald's MCP client (docs/mcp.md, "Connecting never blocks a turn"). Servers connect in
//! the background and are supervised: a status per server (connecting, ready, failed with
//! the error and the tail of its log, disabled), reconnection with backoff, tool lists
//! refreshed on `list_changed`. Nothing here ever makes a turn wait for a server that is
//! not ready: callers read the status and the tools of ready servers, and only `wait_ready`
//! — for an agent that explicitly activates a server — waits, bounded by the connect
//! timeout.
//!
//! `rmcp` is used only in the `client` module.

mod client;
mod log;

use futures::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;
use skald_api::CancellationToken;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How to reach a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking MCP on stdin/stdout; stderr goes to its log.
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        /// Inherited variables the server must not see (model-provider keys).
        remove_env: Vec<String>,
        cwd: Option<PathBuf>,
        /// Run it through the command sandbox's helper with this policy (docs/sandbox.md);
        /// a private temporary folder is added when it starts.
        sandbox: Option<(PathBuf, skald_sandbox::Policy)>,
    },
    /// A streamable HTTP endpoint, with a bearer token if it needs one, or OAuth.
    Http {
        url: String,
        bearer: Option<String>,
        /// Log in with OAuth when the server asks (a server with a bearer token does not).
        oauth: Option<OAuth>,
    },
}

/// Where one server's OAuth login is kept (tokens, the client registration, the last
/// refusal): opaque text this crate writes, which the owner stores as a secret.
pub trait TokenStore: Send + Sync + 'static {
    fn load(&self) -> Result<Option<String>, String>;
    fn save(&self, text: &str) -> Result<(), String>;
    fn clear(&self) -> Result<(), String>;
    /// An exclusive hold on this login across processes while a refresh reads, spends and
    /// replaces its refresh token (blocking; released when dropped). None: no other
    /// process shares the store.
    fn hold(&self) -> Result<Option<Box<dyn Send>>, String> {
        Ok(None)
    }
}

/// How an HTTP server's OAuth login is kept and how Skald identifies itself.
#[derive(Clone)]
pub struct OAuth {
    pub store: Arc<dyn TokenStore>,
    /// The HTTPS URL of Skald's client ID metadata document (SEP-991), used when the
    /// authorization server accepts one; dynamic registration otherwise.
    pub client_metadata_url: Option<String>,
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("client_metadata_url", &self.client_metadata_url)
            .finish_non_exhaustive()
    }
}

impl PartialEq for OAuth {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.store, &other.store)
            && self.client_metadata_url == other.client_metadata_url
    }
}

impl Eq for OAuth {}

pub use client::oauth::{LOGIN_WAIT, LoggedIn};

/// Why a connection could not be made or ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fail {
    Broken(String),
    /// The server refused us: a login is the user's to do.
    Login(client::oauth::LoginNeeded),
}

impl From<String> for Fail {
    fn from(e: String) -> Self {
        Fail::Broken(e)
    }
}

#[derive(Debug, Clone)]
pub struct ServerSpec {
    pub name: String,
    pub transport: Transport,
    /// How long connecting and `initialize` may take.
    pub connect_timeout: Duration,
    /// How long a call may go without an answer or a progress notification.
    pub call_timeout: Duration,
    /// Where a stdio server's stderr is kept (rotated at 512 KB).
    pub log_path: Option<PathBuf>,
}

/// Where a server stands (defined with the protocol, which carries it to the UI).
pub use skald_api::records::McpStatus as Status;

/// A tool a server offers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpTool {
    pub server: String,
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// A resource a server offers (`resources/list`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct McpResource {
    pub server: String,
    pub uri: String,
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub mime_type: Option<String>,
    pub size: Option<u64>,
}

/// A prompt a server offers (`prompts/list`): a slash command for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct McpPrompt {
    pub server: String,
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub arguments: Vec<PromptArgument>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromptArgument {
    pub name: String,
    pub description: String,
    pub required: bool,
}

/// One message of a prompt as the server wrote it: `user` or `assistant`, and its text
/// (embedded resources included, images described).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptMessage {
    pub role: String,
    pub text: String,
}

/// A server asks the chat's model for a completion (sampling): the conversation it
/// proposes, as text.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingRequest {
    /// (`user` or `assistant`, text), in order.
    pub messages: Vec<(String, String)>,
    pub system_prompt: Option<String>,
    pub max_tokens: u32,
}

/// The model's answer to a sampling request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sampled {
    pub text: String,
    pub model: String,
}

/// A progress notification for a running call.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// A tool's answer as the model reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallOutput {
    pub text: String,
    /// The server says the tool failed (the text says why).
    pub is_error: bool,
}

/// The user's answer to a server's form.
#[derive(Debug, Clone, PartialEq)]
pub enum Elicited {
    Accept(Value),
    Decline,
    Cancel,
}

#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("no MCP server named `{0}` is registered")]
    Unknown(String),
    #[error("MCP server `{server}` is not ready ({status})")]
    NotReady { server: String, status: String },
    #[error("the server gave no answer within {0:?}")]
    Timeout(Duration),
    #[error(
        "the server closed the connection during the call (it may have crashed); Skald reconnects to it"
    )]
    Closed,
    #[error("the call was stopped")]
    Cancelled,
    #[error("the server answered with an error: {0}")]
    Server(String),
    #[error("protocol error: {0}")]
    Protocol(String),
    #[error(
        "MCP server `{server}` {status}: the user signs in with `skald mcp login {server}` (or Sign in in Settings), then the call can be made again"
    )]
    NeedsLogin { server: String, status: String },
}

/// Fills the fields an accepted form leaves out with the defaults its schema gives
/// (SEP-1034), so a person who only changed one field still answers the whole form.
pub fn apply_defaults(content: &mut Value, schema: &Value) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    if !content.is_object() {
        *content = Value::Object(serde_json::Map::new());
    }
    if let Value::Object(map) = content {
        for (key, prop) in props {
            if let Some(default) = prop.get("default")
                && !map.contains_key(key)
            {
                map.insert(key.clone(), default.clone());
            }
        }
    }
}

/// What the manager tells its owner.
pub trait Host: Send + Sync + 'static {
    /// A server's status changed (its tools may have too).
    fn status_changed(&self, server: &str, status: &Status);
    /// A server asks the user to fill in a form. `cancel` fires when the server withdraws
    /// the request or the call behind it ends, so the question does not stay open.
    fn elicit(
        &self,
        server: &str,
        message: String,
        schema: Value,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Elicited>;
    /// A resource this process subscribed to has changed.
    fn resource_updated(&self, _server: &str, _uri: &str) {}
    /// The folders a server may work in (MCP roots): those of the chats using it.
    fn roots(&self, _server: &str) -> Vec<PathBuf> {
        Vec::new()
    }
    /// A server asks the chat's model for a completion; the owner asks the user first.
    /// An error is what the server is told.
    fn sample(
        &self,
        _server: &str,
        _request: SamplingRequest,
        _cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<Sampled, String>> {
        Box::pin(async { Err("this client takes no sampling requests".to_string()) })
    }
}

struct Server {
    spec: ServerSpec,
    status: tokio::sync::watch::Sender<Status>,
    tools: Mutex<Vec<McpTool>>,
    resources: Mutex<Vec<McpResource>>,
    prompts: Mutex<Vec<McpPrompt>>,
    client: Mutex<Option<Arc<client::Client>>>,
    /// A connected stdio server's process id.
    pid: Mutex<Option<u32>>,
    stop: CancellationToken,
    /// Counts calls refused for want of a login; a connection heeds only those made
    /// while it lasts (one refused before it began is old news).
    login_needed: tokio::sync::watch::Sender<u64>,
}

use skald_base::lock;

pub struct McpManager {
    host: Arc<dyn Host>,
    servers: Mutex<HashMap<String, Arc<Server>>>,
    /// Bumped whenever a server's status or tools change, so callers can keep what they
    /// built from them until it moves.
    generation: Arc<std::sync::atomic::AtomicU64>,
}

/// First wait before reconnecting; it doubles up to `MAX_BACKOFF`.
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// How often a connected server is checked for having gone away.
const CHECK: Duration = Duration::from_millis(250);

impl McpManager {
    pub fn new(host: Arc<dyn Host>) -> Arc<McpManager> {
        let generation = Arc::new(std::sync::atomic::AtomicU64::new(0));
        Arc::new(McpManager {
            host: Arc::new(Counting {
                inner: host,
                generation: generation.clone(),
            }),
            servers: Mutex::new(HashMap::new()),
            generation,
        })
    }

    /// Starts connecting to a server in the background (replacing one of the same name).
    pub fn start(self: &Arc<Self>, spec: ServerSpec) {
        self.stop(&spec.name);
        let (status, _) = tokio::sync::watch::channel(Status::Connecting);
        let server = Arc::new(Server {
            spec,
            status,
            tools: Mutex::new(Vec::new()),
            resources: Mutex::new(Vec::new()),
            prompts: Mutex::new(Vec::new()),
            client: Mutex::new(None),
            pid: Mutex::new(None),
            stop: CancellationToken::new(),
            login_needed: tokio::sync::watch::channel(0).0,
        });
        lock(&self.servers).insert(server.spec.name.clone(), server.clone());
        self.host
            .status_changed(&server.spec.name, &Status::Connecting);
        let host = self.host.clone();
        tokio::spawn(supervise(host, server));
    }

    /// Records a registered server that cannot be started, and why (a missing variable
    /// its registration refers to, say).
    pub fn refuse(self: &Arc<Self>, name: &str, error: String) {
        self.park(
            name,
            Status::Failed {
                error,
                log_tail: String::new(),
            },
        );
    }

    /// Records a registered server that is turned off.
    pub fn disabled(self: &Arc<Self>, name: &str) {
        self.park(name, Status::Disabled);
    }

    /// A server known by name and status only, with nothing running.
    fn park(self: &Arc<Self>, name: &str, status: Status) {
        self.stop(name);
        let (tx, _) = tokio::sync::watch::channel(status.clone());
        let server = Arc::new(Server {
            spec: ServerSpec {
                name: name.to_string(),
                transport: Transport::Http {
                    url: String::new(),
                    bearer: None,
                    oauth: None,
                },
                connect_timeout: Duration::ZERO,
                call_timeout: Duration::ZERO,
                log_path: None,
            },
            status: tx,
            tools: Mutex::new(Vec::new()),
            resources: Mutex::new(Vec::new()),
            prompts: Mutex::new(Vec::new()),
            client: Mutex::new(None),
            pid: Mutex::new(None),
            stop: CancellationToken::new(),
            login_needed: tokio::sync::watch::channel(0).0,
        });
        lock(&self.servers).insert(name.to_string(), server);
        self.host.status_changed(name, &status);
    }

    /// Disconnects a server (its process group is stopped) and forgets it.
    pub fn stop(&self, name: &str) {
        if let Some(server) = lock(&self.servers).remove(name) {
            server.stop.cancel();
            terminate_group(*lock(&server.pid));
        }
    }

    /// Disconnects every server, their processes included: called at shutdown, when the
    /// runtime's tasks will not get to run again.
    pub fn stop_all(&self) {
        for (_, server) in lock(&self.servers).drain() {
            server.stop.cancel();
            terminate_group(*lock(&server.pid));
        }
    }

    /// Changes with every status or tool-list change of any server.
    pub fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::Acquire)
    }

    pub fn status(&self, name: &str) -> Option<Status> {
        lock(&self.servers)
            .get(name)
            .map(|s| s.status.borrow().clone())
    }

    /// The process id of a connected stdio server (the leader of its process group).
    pub fn process_id(&self, name: &str) -> Option<u32> {
        lock(&self.servers).get(name).and_then(|s| *lock(&s.pid))
    }

    /// Every server the manager runs, by name, with its status.
    pub fn statuses(&self) -> Vec<(String, Status)> {
        let mut out: Vec<(String, Status)> = lock(&self.servers)
            .iter()
            .map(|(n, s)| (n.clone(), s.status.borrow().clone()))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// The tools of a ready server (none while it is not ready).
    pub fn tools(&self, name: &str) -> Vec<McpTool> {
        match lock(&self.servers).get(name) {
            Some(s) if matches!(*s.status.borrow(), Status::Ready { .. }) => lock(&s.tools).clone(),
            _ => Vec::new(),
        }
    }

    /// Waits (at most `limit`) for a server still connecting to be ready or to fail.
    pub async fn wait_ready(&self, name: &str, limit: Duration) -> Option<Status> {
        let mut rx = lock(&self.servers).get(name)?.status.subscribe();
        let _ = tokio::time::timeout(limit, rx.wait_for(|s| *s != Status::Connecting)).await;
        let status = rx.borrow().clone();
        Some(status)
    }

    /// The resources of a ready server (none while it is not ready).
    pub fn resources(&self, name: &str) -> Vec<McpResource> {
        match lock(&self.servers).get(name) {
            Some(s) if matches!(*s.status.borrow(), Status::Ready { .. }) => {
                lock(&s.resources).clone()
            }
            _ => Vec::new(),
        }
    }

    /// The prompts of a ready server (none while it is not ready).
    pub fn prompts(&self, name: &str) -> Vec<McpPrompt> {
        match lock(&self.servers).get(name) {
            Some(s) if matches!(*s.status.borrow(), Status::Ready { .. }) => {
                lock(&s.prompts).clone()
            }
            _ => Vec::new(),
        }
    }

    /// Reads a resource of a server, as the model reads it: text as it is, binary
    /// contents described, at most `RESULT_CAP` bytes.
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
        cancel: &CancellationToken,
    ) -> Result<String, McpError> {
        let (srv, c) = self.connected(server, cancel).await?;
        let read = client::read_resource(&c, &srv.spec.transport, uri, srv.spec.call_timeout);
        let out = tokio::select! {
            _ = cancel.cancelled() => return Err(McpError::Cancelled),
            r = read => r,
        };
        self.noted(server, &srv, out)
    }

    /// A server's prompt with its arguments filled in: the messages it expands to.
    pub async fn get_prompt(
        &self,
        server: &str,
        prompt: &str,
        arguments: serde_json::Map<String, Value>,
        cancel: &CancellationToken,
    ) -> Result<Vec<PromptMessage>, McpError> {
        let (srv, c) = self.connected(server, cancel).await?;
        let got = client::get_prompt(
            &c,
            &srv.spec.transport,
            prompt,
            arguments,
            srv.spec.call_timeout,
        );
        let out = tokio::select! {
            _ = cancel.cancelled() => return Err(McpError::Cancelled),
            r = got => r,
        };
        self.noted(server, &srv, out)
    }

    /// Tells a connected server that the folders it may work in changed
    /// (`notifications/roots/list_changed`); it asks for them again.
    pub fn roots_changed(&self, name: &str) {
        let client = lock(&self.servers)
            .get(name)
            .and_then(|s| lock(&s.client).clone());
        if let Some(c) = client {
            tokio::spawn(async move { client::roots_changed(&c).await });
        }
    }

    /// Asks a server to say when a resource changes (`Host::resource_updated`), for as
    /// long as this connection lasts.
    pub async fn subscribe(&self, server: &str, uri: &str) -> Result<(), McpError> {
        let never = CancellationToken::new();
        let (srv, c) = self.connected(server, &never).await?;
        let out = client::subscribe(&c, &srv.spec.transport, uri, srv.spec.call_timeout).await;
        self.noted(server, &srv, out)
    }

    /// A ready server's client, waiting (bounded) for one that just went away to be back.
    async fn connected(
        &self,
        server: &str,
        cancel: &CancellationToken,
    ) -> Result<(Arc<Server>, Arc<client::Client>), McpError> {
        let srv = lock(&self.servers)
            .get(server)
            .cloned()
            .ok_or_else(|| McpError::Unknown(server.to_string()))?;
        let usable = |srv: &Server| {
            lock(&srv.client)
                .clone()
                .filter(|c| !c.is_transport_closed())
        };
        let mut connected = usable(&srv);
        if connected.is_none() {
            let mut rx = srv.status.subscribe();
            tokio::select! {
                _ = cancel.cancelled() => return Err(McpError::Cancelled),
                _ = restarted(&mut rx, srv.spec.connect_timeout) => {}
            }
            connected = usable(&srv);
        }
        match connected {
            Some(c) => Ok((srv, c)),
            None => Err(McpError::NotReady {
                server: server.to_string(),
                status: srv.status.borrow().describe(),
            }),
        }
    }

    /// A request's outcome, the server parked when it asked for a login.
    fn noted<T>(
        &self,
        server: &str,
        srv: &Server,
        out: Result<T, McpError>,
    ) -> Result<T, McpError> {
        if let Err(McpError::NeedsLogin { .. }) = &out {
            srv.login_needed.send_modify(|n| *n += 1);
        }
        out.map_err(|e| match e {
            McpError::NeedsLogin { status, .. } => McpError::NeedsLogin {
                server: server.to_string(),
                status,
            },
            e => e,
        })
    }

    /// Calls a tool of a ready server.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: serde_json::Map<String, Value>,
        cancel: &CancellationToken,
        on_progress: &(dyn Fn(Progress) + Send + Sync),
    ) -> Result<CallOutput, McpError> {
        let (srv, c) = self.connected(server, cancel).await?;
        let out = client::call(
            &c,
            &srv.spec.transport,
            tool,
            arguments,
            srv.spec.call_timeout,
            cancel,
            on_progress,
        )
        .await;
        self.noted(server, &srv, out)
    }
}

/// A client registered with an authorization server by hand, for `login`: its ID and a
/// secret, or a PEM private key and its algorithm (RS256 … ES384) for `private_key_jwt`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientIdentity {
    pub client_id: String,
    pub client_secret: Option<String>,
    pub private_key_pem: Option<String>,
    pub signing_algorithm: Option<String>,
    /// Sign in through the user's identity provider instead of a browser at the server
    /// (cross-app access, SEP-990).
    pub identity_provider: Option<IdentityProvider>,
}

/// The user's enterprise identity provider, for cross-app access: its issuer, Skald's
/// client there, and the user's ID token from it, exchanged for the server's tokens.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IdentityProvider {
    pub issuer: String,
    pub client_id: String,
    pub client_secret: Option<String>,
    pub id_token: String,
}

/// Signs in to an HTTP server (OAuth in the system browser, through `open`), keeping the
/// tokens in its store. `client` is a client registered with the authorization server by
/// hand, kept for later logins; an authorization server that takes only the client
/// credentials grant (or a client with a private key) gets tokens without a browser, and
/// so does a login through the user's identity provider (cross-app access). A server
/// already refused us is answered from that refusal; otherwise it is connected to once to
/// learn what it asks for.
pub async fn login(
    spec: &ServerSpec,
    client: Option<ClientIdentity>,
    open: &(dyn Fn(&str) + Send + Sync),
    wait: Duration,
) -> Result<LoggedIn, String> {
    let Transport::Http {
        url,
        bearer: None,
        oauth: Some(oauth),
    } = &spec.transport
    else {
        return Err(format!(
            "`{}` does not log in: only an HTTP server without a bearer token does (OAuth)",
            spec.name
        ));
    };
    if !client::oauth::has_refusal(url, oauth).await? {
        client::learn_refusal(spec).await?;
    }
    let idp = client
        .as_ref()
        .and_then(|c| c.identity_provider.clone())
        .map(|p| client::oauth::Enterprise {
            issuer: p.issuer,
            client_id: p.client_id,
            client_secret: p.client_secret,
            id_token: p.id_token,
        });
    let client = client.map(|c| client::oauth::Preregistered {
        client_id: c.client_id,
        client_secret: c.client_secret,
        private_key: c.private_key_pem,
        signing_algorithm: c.signing_algorithm,
    });
    client::oauth::login(url, oauth, client, idp, open, wait).await
}

/// What an HTTP server's saved OAuth login says, read without connecting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoginState {
    /// No login is kept (the server may need none).
    NotSignedIn,
    SignedIn {
        scopes: Vec<String>,
    },
    /// The server refused us, or the login ran out: `Status::NeedsLogin`.
    Needs(Status),
}

/// The saved login of a server that logs in with OAuth (`None` for the others).
pub async fn login_state(spec: &ServerSpec) -> Result<Option<LoginState>, String> {
    match &spec.transport {
        Transport::Http {
            url,
            bearer: None,
            oauth: Some(oauth),
        } => client::oauth::state(url, oauth).await.map(Some),
        _ => Ok(None),
    }
}

/// Forgets an HTTP server's OAuth login. Returns whether there was one.
pub async fn logout(spec: &ServerSpec) -> Result<bool, String> {
    match &spec.transport {
        Transport::Http {
            oauth: Some(oauth), ..
        } => client::oauth::logout(oauth).await,
        _ => Ok(false),
    }
}

/// Opens `url` in the user's browser (`$BROWSER` first, then the desktop's default) and
/// returns at once: a browser command may run until the page it opened is done, and the
/// login must be listening for that page's redirect meanwhile.
pub fn open_in_browser(url: &str) {
    let url = url.to_string();
    std::thread::spawn(move || {
        if let Err(e) = webbrowser::open(&url) {
            tracing::warn!("cannot open a browser: {e}");
            eprintln!("Skald could not open a browser ({e}); open the address above yourself.");
        }
    });
}

impl Drop for McpManager {
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// Waits, bounded, for a server that went away to be started again, so a call made just
/// after a crash goes to the new process instead of failing. A crash is noticed and a
/// reconnect begun within about `FIRST_BACKOFF`; a server that has been failing for longer
/// is in a longer backoff, and the call gives up after a few seconds instead of waiting it
/// out. Once connecting, the connection may take its timeout.
async fn restarted(rx: &mut tokio::sync::watch::Receiver<Status>, connect: Duration) {
    // A crash not noticed yet still reads "ready": that state does not count.
    let stale = matches!(*rx.borrow_and_update(), Status::Ready { .. });
    let begun = tokio::time::timeout(FIRST_BACKOFF * 3, async {
        if stale {
            let _ = rx.changed().await;
        }
        let _ = rx.wait_for(|s| !matches!(s, Status::Failed { .. })).await;
    })
    .await;
    if begun.is_ok() {
        let _ = tokio::time::timeout(connect, rx.wait_for(|s| *s != Status::Connecting)).await;
    }
}

/// Counts status changes on their way to the owner's host.
struct Counting {
    inner: Arc<dyn Host>,
    generation: Arc<std::sync::atomic::AtomicU64>,
}

impl Host for Counting {
    fn status_changed(&self, server: &str, status: &Status) {
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        self.inner.status_changed(server, status);
    }

    fn elicit(
        &self,
        server: &str,
        message: String,
        schema: Value,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Elicited> {
        self.inner.elicit(server, message, schema, cancel)
    }

    fn resource_updated(&self, server: &str, uri: &str) {
        self.inner.resource_updated(server, uri);
    }

    fn roots(&self, server: &str) -> Vec<PathBuf> {
        self.inner.roots(server)
    }

    fn sample(
        &self,
        server: &str,
        request: SamplingRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<Sampled, String>> {
        self.inner.sample(server, request, cancel)
    }
}

fn set_status(host: &Arc<dyn Host>, server: &Server, status: Status) {
    // A supervisor whose server was replaced or stopped says nothing more.
    if server.stop.is_cancelled() {
        return;
    }
    server.status.send_replace(status.clone());
    host.status_changed(&server.spec.name, &status);
}

/// Connects, keeps the tool list fresh, notices the server going away, and reconnects
/// with backoff — until the server is stopped.
async fn supervise(host: Arc<dyn Host>, server: Arc<Server>) {
    let name = server.spec.name.clone();
    let log = Arc::new(Mutex::new(log::Log::new(server.spec.log_path.clone())));
    let mut backoff = FIRST_BACKOFF;
    loop {
        if server.stop.is_cancelled() {
            return;
        }
        set_status(&host, &server, Status::Connecting);
        let (changed_tx, mut changed_rx) = tokio::sync::mpsc::unbounded_channel();
        let handler = client::Handler::new(changed_tx, host.clone(), name.clone());
        let sink = log.clone();
        let connecting = client::connect(
            &server.spec.transport,
            handler,
            server.spec.connect_timeout,
            move |line| lock(&sink).write_line(&line),
        );
        let connected = tokio::select! {
            _ = server.stop.cancelled() => return,
            c = connecting => c,
        };
        let failure = match connected {
            Err(e) => e,
            Ok(c) => {
                let pid = c.pid;
                let client = Arc::new(c.client);
                match client::list_tools(
                    &client,
                    &server.spec.transport,
                    &name,
                    server.spec.connect_timeout,
                )
                .await
                {
                    Err(e) => {
                        client.cancellation_token().cancel();
                        kill_group(pid);
                        e
                    }
                    Ok(tools) => {
                        backoff = FIRST_BACKOFF;
                        let count = tools.len();
                        *lock(&server.tools) = tools;
                        // Resources and prompts are extras: a server that lists them
                        // badly still gives its tools.
                        let timeout = server.spec.connect_timeout;
                        *lock(&server.resources) =
                            client::list_resources(&client, &name, timeout).await;
                        *lock(&server.prompts) =
                            client::list_prompts(&client, &name, timeout).await;
                        *lock(&server.client) = Some(client.clone());
                        *lock(&server.pid) = pid;
                        set_status(&host, &server, Status::Ready { tools: count });
                        let reason = watch(&host, &server, &client, &mut changed_rx).await;
                        *lock(&server.client) = None;
                        *lock(&server.pid) = None;
                        client.cancellation_token().cancel();
                        kill_group(pid);
                        match reason {
                            Some(r) => r,
                            None => return,
                        }
                    }
                }
            }
        };
        let failure = match failure {
            Fail::Broken(e) => e,
            // A machine or enterprise login asks for new tokens when it connects again: no
            // person to wait for, so it is retried with backoff like any failure.
            Fail::Login(_) if renews_by_itself(&server.spec.transport).await => {
                "the server refused the login's token; asking for a new one".to_string()
            }
            Fail::Login(need) => {
                let kept = login_kept(&server.spec.transport).await;
                set_status(
                    &host,
                    &server,
                    Status::NeedsLogin {
                        expired: need.expired,
                        scope: need.scope,
                    },
                );
                // Parked, not retried: only a login changes the answer.
                tokio::select! {
                    _ = server.stop.cancelled() => return,
                    _ = login_landed(&server.spec.transport, kept) => {}
                }
                backoff = FIRST_BACKOFF;
                continue;
            }
        };
        let tail = lock(&log).tail(20);
        tracing::warn!(server = %name, "MCP server failed: {failure}");
        set_status(
            &host,
            &server,
            Status::Failed {
                error: failure,
                log_tail: tail,
            },
        );
        tokio::select! {
            _ = server.stop.cancelled() => return,
            _ = tokio::time::sleep(backoff) => {}
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// Whether the server's login gets new tokens without a person (client credentials, or
/// an enterprise ID token still valid).
async fn renews_by_itself(transport: &Transport) -> bool {
    match transport {
        Transport::Http {
            url,
            oauth: Some(oauth),
            ..
        } => client::oauth::renews_by_itself(url, oauth).await,
        _ => false,
    }
}

/// The saved login's text now (none for a server without OAuth).
async fn login_kept(transport: &Transport) -> Option<String> {
    match transport {
        Transport::Http {
            oauth: Some(oauth), ..
        } => client::oauth::snapshot(oauth).await,
        _ => None,
    }
}

/// How often a server waiting for a login looks for one.
const LOGIN_CHECK: Duration = Duration::from_secs(1);

/// Returns once the saved login differs from `kept` (never for a server without OAuth).
async fn login_landed(transport: &Transport, kept: Option<String>) {
    loop {
        tokio::time::sleep(LOGIN_CHECK).await;
        if matches!(transport, Transport::Http { oauth: Some(_), .. })
            && login_kept(transport).await != kept
        {
            return;
        }
    }
}

/// While connected: refreshes the tool list on `list_changed`. Returns why the connection
/// ended, or `None` when the server was stopped.
async fn watch(
    host: &Arc<dyn Host>,
    server: &Arc<Server>,
    client: &Arc<client::Client>,
    changed: &mut tokio::sync::mpsc::UnboundedReceiver<client::Changed>,
) -> Option<Fail> {
    let timeout = server.spec.connect_timeout;
    let name = server.spec.name.as_str();
    let mut refused = server.login_needed.subscribe();
    refused.borrow_and_update();
    loop {
        tokio::select! {
            _ = server.stop.cancelled() => return None,
            Ok(()) = refused.changed() => {
                return Some(match &server.spec.transport {
                    Transport::Http { url, oauth: Some(oauth), .. } => {
                        Fail::Login(client::oauth::pending(url, oauth).await)
                    }
                    _ => Fail::Broken("the server refused the call".to_string()),
                });
            }
            Some(kind) = changed.recv() => match kind {
                client::Changed::Resources => {
                    *lock(&server.resources) = client::list_resources(client, name, timeout).await;
                    let now = server.status.borrow().clone();
                    host.status_changed(name, &now);
                }
                client::Changed::Prompts => {
                    *lock(&server.prompts) = client::list_prompts(client, name, timeout).await;
                    let now = server.status.borrow().clone();
                    host.status_changed(name, &now);
                }
                client::Changed::Tools => {
                    match client::list_tools(client, &server.spec.transport, name, timeout).await {
                        Ok(tools) => {
                            let count = tools.len();
                            *lock(&server.tools) = tools;
                            set_status(host, server, Status::Ready { tools: count });
                        }
                        Err(e) => return Some(e),
                    }
                }
            },
            _ = tokio::time::sleep(CHECK) => {
                if client.is_closed() || client.peer().is_transport_closed() {
                    return Some(Fail::Broken("the server closed the connection".to_string()));
                }
            }
        }
    }
}

/// Stops a stdio server's process group now: SIGTERM, a moment, then SIGKILL — without
/// relying on the async runtime, which may be shutting down.
fn terminate_group(pid: Option<u32>) {
    #[cfg(unix)]
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        use nix::sys::signal::{Signal, killpg};
        let group = nix::unistd::Pid::from_raw(pid);
        if killpg(group, Signal::SIGTERM).is_ok() {
            std::thread::sleep(Duration::from_millis(100));
            let _ = killpg(group, Signal::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// Stops a stdio server's whole process group (it may have started helpers).
pub(crate) fn kill_group(pid: Option<u32>) {
    #[cfg(unix)]
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        use nix::sys::signal::{Signal, killpg};
        let _ = killpg(nix::unistd::Pid::from_raw(pid), Signal::SIGTERM);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(2)).await;
            let _ = killpg(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
        });
    }
    #[cfg(not(unix))]
    let _ = pid;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_what_the_answer_leaves_out() {
        let schema = serde_json::json!({"properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "city": {"type": "string"}
        }});
        let mut content = serde_json::json!({"name": "Ada"});
        apply_defaults(&mut content, &schema);
        assert_eq!(content, serde_json::json!({"name": "Ada", "age": 30}));
        let mut empty = Value::Null;
        apply_defaults(&mut empty, &schema);
        assert_eq!(empty, serde_json::json!({"name": "John Doe", "age": 30}));
    }
}
