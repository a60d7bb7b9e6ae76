//! `skald serve`: the UI in a browser. HTTP and a WebSocket on 127.0.0.1 only, carrying
//! the protocol of `skald_api::protocol` to `skald_service` — no logic of its own.
//!
//! Only the person who started it can drive it:
//! - a random token, printed at start inside the URL to open; the first visit trades it
//!   for an `HttpOnly`, `SameSite=Strict` cookie, which every other request must carry;
//! - the URL names a host of its own (`skald-<random>.localhost`, which browsers resolve
//!   to the loopback address): cookies are kept per host but not per port, so a cookie
//!   set for `127.0.0.1` would also go to every other local server the browser visits;
//! - the `Host` header must name that host (or the loopback address) and the port, so no
//!   DNS rebinding;
//! - the WebSocket and the file route check `Origin` (and `Sec-Fetch-Site`), so another
//!   local web page — or an HTML preview, which runs in an opaque origin — cannot use
//!   them even with the cookie.

use crate::exit;
use crate::fail::Fail;
use axum::Router;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::{SinkExt, StreamExt};
use skald_api::protocol::ServerMessage;
use skald_core::{Config, DataDir};
use skald_service::{RestartSignal, Service, ServiceConfig};
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The UI's own pages: scripts and styles from the server only, nothing from elsewhere.
const UI_CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
     img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; frame-src 'self'; \
     worker-src 'self' blob:; object-src 'none'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

pub struct ServeArgs<'a> {
    pub port: u16,
    pub root: Option<&'a Path>,
    pub ui_dir: Option<&'a Path>,
    pub model: Option<&'a str>,
}

struct App {
    service: Arc<Service>,
    token: String,
    cookie: String,
    /// `host:port` forms the server answers to.
    hosts: [String; 3],
    ui_dir: Option<PathBuf>,
}

/// Replies waiting to be written to one UI; beyond this its requests wait.
const REPLY_QUEUE: usize = 64;

/// What an approved `restart` hands to the server it starts: the same port, token and
/// host name, so the browser tab that is open reconnects with the cookie it has.
const RESTART_PORT: &str = "SKALD_RESTART_PORT";
const RESTART_TOKEN: &str = "SKALD_RESTART_TOKEN";
const RESTART_HOST: &str = "SKALD_RESTART_HOST";

/// How the server ended.
pub enum Ended {
    Exit(u8),
    /// An approved `restart`: the engine is shut down and the port closed; the caller
    /// starts the binary again with [`Relaunch::exec`] once its logs are flushed.
    Restart(Relaunch),
}

pub struct Relaunch {
    env: Vec<(&'static str, String)>,
}

impl Relaunch {
    /// Starts this binary again with the same arguments. On Unix the process image is
    /// replaced: same process, same terminal, so Ctrl-C still reaches the server.
    pub fn exec(self) -> u8 {
        let exe = match std::env::current_exe() {
            Ok(e) => e,
            Err(e) => {
                eprintln!("skald serve: cannot restart: {e}");
                return exit::FAILED;
            }
        };
        let args: Vec<OsString> = std::env::args_os().skip(1).collect();
        let mut cmd = std::process::Command::new(exe);
        cmd.args(args).envs(self.env);
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            let err = cmd.exec();
            eprintln!("skald serve: cannot restart: {err}");
            exit::FAILED
        }
        #[cfg(not(unix))]
        match cmd.spawn() {
            Ok(_) => exit::OK,
            Err(e) => {
                eprintln!("skald serve: cannot restart: {e}");
                exit::FAILED
            }
        }
    }
}

/// A value handed over by the server this one restarted, if it is well formed. The
/// variables never reach commands or MCP servers the agents start (`hidden_env`).
fn handed_over(name: &str, valid: impl Fn(&str) -> bool) -> Option<String> {
    std::env::var(name).ok().filter(|v| valid(v))
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_hexdigit())
}

pub async fn run(data_dir: &DataDir, config: &Config, a: ServeArgs<'_>) -> Ended {
    match serve(data_dir, config, a).await {
        Ok(ended) => ended,
        Err(e) => Ended::Exit(e.report("skald serve")),
    }
}

/// What a restarted server takes over from the one before it (checked, so a stray
/// environment variable cannot name a bad port, token or host).
struct Handover {
    port: Option<u16>,
    token: Option<String>,
    host: Option<String>,
}

fn handover() -> Handover {
    Handover {
        port: handed_over(RESTART_PORT, |v| v.parse::<u16>().is_ok_and(|p| p > 0))
            .and_then(|v| v.parse::<u16>().ok()),
        token: handed_over(RESTART_TOKEN, |v| is_hex(v, 48)),
        host: handed_over(RESTART_HOST, |v| {
            v.strip_prefix("skald-")
                .and_then(|r| r.strip_suffix(".localhost"))
                .is_some_and(|r| is_hex(r, 12))
        }),
    }
}

/// The folder new chats work in: `--root`, or the current one; it must be a folder.
fn chat_root(root: Option<&Path>) -> Result<PathBuf, Fail> {
    match root
        .map(Path::to_path_buf)
        .map_or_else(std::env::current_dir, Ok)
        .and_then(std::fs::canonicalize)
    {
        Ok(r) if r.is_dir() => Ok(r),
        Ok(r) => Err(Fail::usage(format!("{} is not a folder", r.display()))),
        Err(e) => Err(Fail::usage(format!("cannot use the folder: {e}"))),
    }
}

/// The loopback listener, and the port it got (0 asks for a free one).
async fn listen(port: u16) -> Result<(tokio::net::TcpListener, u16), Fail> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|e| Fail::failed(format!("cannot listen on 127.0.0.1:{port}: {e}")))?;
    let port = listener.local_addr().map_err(Fail::failed)?.port();
    Ok((listener, port))
}

fn print_url(app: &App, restarted: bool) {
    use std::io::Write;
    // A closed stdout (a launcher that read the URL and went) must not end the server.
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "Skald is {}: open http://{}/?token={}",
        if restarted { "restarted" } else { "ready" },
        app.hosts[0],
        app.token
    );
    let _ = writeln!(
        out,
        "(only this URL opens it; Ctrl-C stops the server. A browser that cannot open \
         *.localhost names can use http://{}/?token={} — its cookie then also goes to \
         other servers on 127.0.0.1)",
        app.hosts[1], app.token
    );
    let _ = out.flush();
}

/// Serves until Ctrl-C (or SIGTERM, SIGHUP) or an approved `restart`; whether it was a restart.
async fn serve_until_stopped(
    listener: tokio::net::TcpListener,
    app: Arc<App>,
    service: &Arc<Service>,
    mut interrupted: crate::stop_signal::StopSignal,
) -> Result<bool, Fail> {
    let router = Router::new()
        .route("/api/ws", get(ws))
        .route("/api/file", get(file))
        .fallback(get(page))
        .with_state(app);
    // Ctrl-C, or an approved `restart` once the turns have ended (the service is then
    // already shut down).
    let restart = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop = {
        let (service, restart) = (service.clone(), restart.clone());
        async move {
            tokio::select! {
                () = interrupted.wait() => {}
                () = service.restart_requested() => {
                    restart.store(true, std::sync::atomic::Ordering::SeqCst);
                }
            }
        }
    };
    let served = axum::serve(listener, router)
        .with_graceful_shutdown(stop)
        .await;
    if let Err(e) = served {
        service.shutdown().await;
        return Err(Fail::failed(e));
    }
    Ok(restart.load(std::sync::atomic::Ordering::SeqCst))
}

async fn serve(data_dir: &DataDir, config: &Config, a: ServeArgs<'_>) -> Result<Ended, Fail> {
    let handed = handover();
    let restarted = handed.port.is_some();
    let root = chat_root(a.root)?;
    let (listener, port) = listen(handed.port.unwrap_or(a.port)).await?;
    let service = Service::start(ServiceConfig {
        data_dir: data_dir.clone(),
        root,
        config: config.clone(),
        model: a.model.map(str::to_string),
        tex_bundle: skald_base::tex::named_bundle(),
        file_route: skald_service::FILE_ROUTE.to_string(),
        restart: Some(RestartSignal::default()),
        hidden_env: [RESTART_PORT, RESTART_TOKEN, RESTART_HOST]
            .map(str::to_string)
            .to_vec(),
    })
    .map_err(Fail::failed)?;
    let token = handed
        .token
        .map_or_else(new_token, Ok)
        .map_err(|e| Fail::failed(format!("cannot make a token: {e}")))?;
    let ui_dir = find_ui(a.ui_dir);
    if ui_dir.is_none() {
        eprintln!(
            "skald serve: the UI is not built; run `npm --prefix ui ci && npm --prefix ui run \
             build` (or pass --ui-dir). The API is served anyway."
        );
    }
    let name = handed
        .host
        .map_or_else(
            || new_token().map(|t| format!("skald-{}.localhost", &t[..12])),
            Ok,
        )
        .map_err(|e| Fail::failed(format!("cannot make a host name: {e}")))?;
    let (token_for_restart, name_for_restart) = (token.clone(), name.clone());
    let app = Arc::new(App {
        service: service.clone(),
        // For the loopback forms, whose cookies other local servers also get: each
        // server's has its own name at least.
        cookie: format!("skald_{port}"),
        token,
        hosts: [
            format!("{name}:{port}"),
            format!("127.0.0.1:{port}"),
            format!("localhost:{port}"),
        ],
        ui_dir,
    });
    // Listening for Ctrl-C before the URL is out: a client that connects and then
    // interrupts at once must find the handler in place, not the default that kills.
    let interrupted = crate::stop_signal::StopSignal::listen().map_err(Fail::failed)?;
    print_url(&app, restarted);
    if !serve_until_stopped(listener, app, &service, interrupted).await? {
        service.shutdown().await;
        return Ok(Ended::Exit(exit::OK));
    }
    println!("Skald is restarting…");
    Ok(Ended::Restart(Relaunch {
        env: vec![
            (RESTART_PORT, port.to_string()),
            (RESTART_TOKEN, token_for_restart),
            (RESTART_HOST, name_for_restart),
        ],
    }))
}

fn new_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 24];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The built UI: the flag, `SKALD_UI_DIR`, beside the binary, or the source tree's build.
fn find_ui(flag: Option<&Path>) -> Option<PathBuf> {
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf));
    let candidates = [
        flag.map(Path::to_path_buf),
        std::env::var_os("SKALD_UI_DIR").map(PathBuf::from),
        exe_dir.as_ref().map(|d| d.join("ui")),
        exe_dir.as_ref().map(|d| d.join("../share/skald/ui")),
        Some(PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../ui/dist"
        ))),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|d| d.join("index.html").is_file())
        .and_then(|d| std::fs::canonicalize(d).ok())
}

fn deny(status: StatusCode, why: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        why.to_string(),
    )
        .into_response()
}

impl App {
    fn host_ok(&self, headers: &HeaderMap) -> bool {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        self.hosts.iter().any(|h| h.eq_ignore_ascii_case(host))
    }

    fn cookie_ok(&self, headers: &HeaderMap) -> bool {
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|kv| kv.trim().split_once('='))
            .any(|(k, v)| k == self.cookie && constant_eq(v.as_bytes(), self.token.as_bytes()))
    }

    /// The request comes from the UI's own pages: no foreign (or opaque) Origin, and not
    /// a cross-site fetch.
    fn same_origin(&self, headers: &HeaderMap, require_origin: bool) -> bool {
        let origin_ok = match headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) {
            Some(o) => o
                .strip_prefix("http://")
                .is_some_and(|h| self.hosts.iter().any(|x| x.eq_ignore_ascii_case(h))),
            None => !require_origin,
        };
        let site_ok = match headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
            Some(s) => s == "same-origin" || s == "none",
            None => true,
        };
        origin_ok && site_ok
    }

    /// The refusal of a request that may not go on.
    fn refusal(&self, headers: &HeaderMap) -> Option<Response> {
        if !self.host_ok(headers) {
            return Some(deny(StatusCode::MISDIRECTED_REQUEST, "wrong host"));
        }
        if !self.cookie_ok(headers) {
            return Some(deny(
                StatusCode::UNAUTHORIZED,
                "Open the URL `skald serve` printed (it carries the token).",
            ));
        }
        None
    }
}

fn constant_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn ws(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Response {
    if let Some(r) = app.refusal(&headers) {
        return r;
    }
    if !app.same_origin(&headers, true) {
        return deny(StatusCode::FORBIDDEN, "foreign origin");
    }
    let service = app.service.clone();
    // An image attached in the composer comes whole in one request: 30 MB is 40 MB of
    // base64, more than the 16 MiB frame a WebSocket takes by default (docs/images.md).
    upgrade
        .max_frame_size(MAX_REQUEST_BYTES)
        .max_message_size(MAX_REQUEST_BYTES)
        .on_upgrade(move |socket| talk(service, socket))
}

/// The largest request a UI may send: an image of `skald_llm::vision::MAX_INPUT_BYTES` as
/// base64, and room for the rest of the command.
const MAX_REQUEST_BYTES: usize = 48 << 20;
const _: () =
    assert!(MAX_REQUEST_BYTES > skald_llm::vision::MAX_INPUT_BYTES.div_ceil(3) * 4 + 4096);

/// One UI: requests answered concurrently (a LaTeX build does not hold up a message) but
/// subscriptions in order, and every engine event pushed. A UI that stops reading falls
/// behind the events (and is told) instead of piling them up here.
async fn talk(service: Arc<Service>, socket: WebSocket) {
    use skald_api::protocol::{Command, Request};
    let conn = Arc::new(service.connect());
    let (mut sink, mut stream) = socket.split();
    let (tx, mut rx) = tokio::sync::mpsc::channel::<ServerMessage>(REPLY_QUEUE);
    let mut events = service.subscribe();
    let writer = tokio::spawn(async move {
        loop {
            let m = tokio::select! {
                reply = rx.recv() => match reply {
                    Some(m) => m,
                    None => return,
                },
                event = events.recv() => match event {
                    Ok(m) => m,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                        ServerMessage::Event {
                            session_id: None,
                            event: skald_api::events::Event::Error {
                                message: format!(
                                    "{n} updates were missed while this window was busy; \
                                     reload the chat to see them"
                                ),
                            },
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                },
            };
            let Ok(text) = serde_json::to_string(&m) else {
                continue;
            };
            if sink.send(Message::Text(text.into())).await.is_err() {
                return;
            }
        }
    });
    while let Some(Ok(msg)) = stream.next().await {
        let text = match msg {
            Message::Text(t) => t.to_string(),
            Message::Close(_) => break,
            _ => continue,
        };
        // Following a file and letting it go are quick and must keep their order (a
        // viewer opened and closed at once); everything else runs beside the rest.
        let ordered = matches!(
            serde_json::from_str::<Request>(&text).map(|r| r.command),
            Ok(Command::Subscribe { .. } | Command::Unsubscribe { .. })
        );
        if ordered {
            let reply = conn.handle_text(&text).await;
            if tx.send(reply).await.is_err() {
                break;
            }
            continue;
        }
        let conn = conn.clone();
        let tx = tx.clone();
        tokio::spawn(async move {
            let _ = tx.send(conn.handle_text(&text).await).await;
        });
    }
    writer.abort();
}

async fn file(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    if let Some(r) = app.refusal(&headers) {
        return r;
    }
    if !app.same_origin(&headers, false) {
        return deny(StatusCode::FORBIDDEN, "foreign origin");
    }
    let (service, raw) = (app.service.clone(), q.get("path").cloned());
    let route = match tokio::task::spawn_blocking(move || service.file_route(raw.as_deref())).await
    {
        Ok(Ok(route)) => route,
        Ok(Err(refusal)) => {
            let status =
                StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            return deny(status, &refusal.to_string());
        }
        Err(e) => return deny(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    };
    // Streamed: a large file never sits in memory whole.
    let file = match route.open() {
        Ok(f) => tokio::fs::File::from_std(f),
        Err(e) => {
            return deny(
                StatusCode::NOT_FOUND,
                &format!("{}: {e}", route.path.display()),
            );
        }
    };
    let served = route.served;
    let body = axum::body::Body::from_stream(tokio_util::io::ReaderStream::new(file));
    let mut response = body.into_response();
    let h = response.headers_mut();
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(route.len));
    if let Ok(v) = HeaderValue::from_str(&served.mime) {
        h.insert(header::CONTENT_TYPE, v);
    }
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Some(csp) = served.csp.and_then(|c| HeaderValue::from_str(&c).ok()) {
        h.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    response
}

/// The UI's files; the first visit with the token sets the cookie.
async fn page(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    uri: Uri,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    if !app.host_ok(&headers) {
        return deny(StatusCode::MISDIRECTED_REQUEST, "wrong host");
    }
    if let Some(t) = q.get("token") {
        if !constant_eq(t.as_bytes(), app.token.as_bytes()) {
            return deny(StatusCode::UNAUTHORIZED, "wrong token");
        }
        // Out of the address bar and history at once.
        let cookie = format!(
            "{}={}; HttpOnly; SameSite=Strict; Path=/",
            app.cookie, app.token
        );
        let mut r = (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response();
        if let Ok(v) = HeaderValue::from_str(&cookie) {
            r.headers_mut().insert(header::SET_COOKIE, v);
        }
        return r;
    }
    if let Some(r) = app.refusal(&headers) {
        return r;
    }
    let Some(dir) = &app.ui_dir else {
        return deny(
            StatusCode::SERVICE_UNAVAILABLE,
            "The UI is not built: run `npm --prefix ui ci && npm --prefix ui run build`.",
        );
    };
    let rel = uri.path().trim_start_matches('/');
    let rel = if rel.is_empty() { "index.html" } else { rel };
    // Plain names only: no `..`, no root or drive prefix that `join` would put first.
    if !Path::new(rel)
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)))
        || rel.contains('\\')
    {
        return deny(StatusCode::BAD_REQUEST, "bad path");
    }
    let mut path = dir.join(rel);
    // Client-side routes are the app's page.
    if !path.is_file() {
        path = dir.join("index.html");
    }
    let Ok(bytes) = tokio::fs::read(&path).await else {
        return deny(StatusCode::NOT_FOUND, "not found");
    };
    let mime = match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "json" | "map" => "application/json",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "ttf" => "font/ttf",
        "wasm" => "application/wasm",
        "bcmap" | "pfb" => "application/octet-stream",
        _ => "application/octet-stream",
    };
    let mut response = bytes.into_response();
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(UI_CSP),
    );
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    response
}
