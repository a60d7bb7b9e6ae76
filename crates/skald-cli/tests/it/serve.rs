//! `skald serve` end to end: a real server process on 127.0.0.1, driven over its WebSocket
//! and HTTP routes as the UI drives it, against a scripted model server.

use crate::common::skald;
use serde_json::{Value, json};
use skald_testkit::{ScriptedServer, answer, tool_call};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};
use tungstenite::client::IntoClientRequest;
use tungstenite::stream::MaybeTlsStream;

struct Serve {
    child: Child,
    port: u16,
    token: String,
    /// The host name of its own the URL names.
    name: String,
    /// Its later lines on stdout.
    lines: std::sync::mpsc::Receiver<String>,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(data: &Path, root: &Path, server: Option<&ScriptedServer>) -> Serve {
    serve_with(data, root, server, &[])
}

fn serve_with(
    data: &Path,
    root: &Path,
    server: Option<&ScriptedServer>,
    env: &[(&str, &str)],
) -> Serve {
    let mut cmd = skald(data, server);
    cmd.envs(env.iter().copied());
    cmd.args(["serve", "--port", "0", "--root"])
        .arg(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    // The tests' small bundle, unless the test names its own (an empty one: none).
    if let Some((_, named)) = env.iter().find(|(k, _)| *k == "SKALD_TEX_BUNDLE") {
        if named.is_empty() {
            cmd.env_remove("SKALD_TEX_BUNDLE");
        }
    } else if let Ok(zip) = std::fs::canonicalize(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/tex/bundle.zip"
    )) {
        cmd.env("SKALD_TEX_BUNDLE", zip);
    }
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    out.read_line(&mut line).unwrap();
    // The rest of its output is read too, so the server never writes into a closed pipe.
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in out.lines() {
            let Ok(l) = l else { return };
            let _ = tx.send(l);
        }
    });
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"));
    // http://skald-<random>.localhost:PORT/?token=T
    let (host, token) = url
        .trim_start_matches("http://")
        .split_once("/?token=")
        .unwrap();
    let (name, port) = host.split_once(':').unwrap();
    assert!(
        name.starts_with("skald-") && name.ends_with(".localhost"),
        "{url}"
    );
    Serve {
        child,
        port: port.parse().unwrap(),
        token: token.to_string(),
        name: name.to_string(),
        lines,
    }
}

struct Http {
    status: u16,
    headers: String,
    body: Vec<u8>,
}

impl Serve {
    fn cookie(&self) -> String {
        format!("skald_{}={}", self.port, self.token)
    }

    /// A raw HTTP/1.1 GET with the given extra header lines.
    fn get(&self, path: &str, extra: &[(&str, String)]) -> Http {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        let mut req = format!(
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n",
            self.port
        );
        for (k, v) in extra {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        s.write_all(req.as_bytes()).unwrap();
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).unwrap();
        let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let headers = String::from_utf8_lossy(&raw[..split]).to_string();
        let status = headers.split_whitespace().nth(1).unwrap().parse().unwrap();
        Http {
            status,
            headers: headers.to_ascii_lowercase(),
            body: raw[split + 4..].to_vec(),
        }
    }

    fn file(&self, path: &Path) -> Http {
        let q: String = path
            .display()
            .to_string()
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"/._-".contains(&b) {
                    char::from(b).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        self.get(&format!("/api/file?path={q}"), &[("Cookie", self.cookie())])
    }

    fn ws_with(&self, origin: Option<&str>, cookie: bool) -> Result<Ws, tungstenite::Error> {
        let mut req = format!("ws://127.0.0.1:{}/api/ws", self.port)
            .into_client_request()
            .unwrap();
        if let Some(o) = origin {
            req.headers_mut().insert("Origin", o.parse().unwrap());
        }
        if cookie {
            req.headers_mut()
                .insert("Cookie", self.cookie().parse().unwrap());
        }
        let (socket, _) = tungstenite::connect(req)?;
        if let MaybeTlsStream::Plain(s) = socket.get_ref() {
            s.set_read_timeout(Some(Duration::from_millis(200)))
                .unwrap();
        }
        Ok(Ws {
            socket,
            next_id: 0,
            events: Vec::new(),
        })
    }

    fn ws(&self) -> Ws {
        self.ws_with(Some(&format!("http://127.0.0.1:{}", self.port)), true)
            .unwrap()
    }
}

struct Ws {
    socket: tungstenite::WebSocket<MaybeTlsStream<TcpStream>>,
    next_id: u64,
    /// Events received and not yet looked at.
    events: Vec<Value>,
}

impl Ws {
    fn recv(&mut self, until: Instant) -> Option<Value> {
        while Instant::now() < until {
            match self.socket.read() {
                Ok(tungstenite::Message::Text(t)) => {
                    return Some(serde_json::from_str(&t).unwrap());
                }
                Ok(_) => continue,
                Err(tungstenite::Error::Io(e))
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    continue;
                }
                Err(e) => panic!("socket: {e}"),
            }
        }
        None
    }

    /// Sends a command; its reply (or failure), keeping the events that came meanwhile.
    fn call(&mut self, command: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let req = json!({"id": id, "command": command});
        self.socket
            .send(tungstenite::Message::Text(req.to_string().into()))
            .unwrap();
        let until = Instant::now() + Duration::from_secs(120);
        loop {
            let m = self.recv(until).expect("no reply in time");
            match m["type"].as_str() {
                Some("event") => self.events.push(m),
                _ if m["id"] == id => {
                    return if m["type"] == "reply" {
                        Ok(m["reply"].clone())
                    } else {
                        Err(m["error"].as_str().unwrap_or_default().to_string())
                    };
                }
                _ => {}
            }
        }
    }

    /// Waits for an event `pred` accepts (a minute at most); returns it.
    fn event(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.events.iter().position(|e| pred(&e["event"])) {
            return self.events.remove(i);
        }
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            let m = self
                .recv(until)
                .unwrap_or_else(|| panic!("no such event; saw {:?}", self.events));
            if m["type"] == "event" {
                if pred(&m["event"]) {
                    return m;
                }
                self.events.push(m);
            }
        }
    }
}

fn new_chat(ws: &mut Ws) -> i64 {
    ws.call(json!({"cmd": "create_session", "title": "test"}))
        .unwrap()["session"]["id"]
        .as_i64()
        .unwrap()
}

/// The UI's pages carry a policy that lets nothing load from or talk to another origin.
#[test]
fn the_ui_is_served_with_a_strict_content_security_policy() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve(&dir.path().join("data"), dir.path(), None);
    let page = s.get("/", &[("Cookie", s.cookie())]);
    assert_eq!(page.status, 200);
    let policy = page
        .headers
        .lines()
        .find_map(|l| l.strip_prefix("content-security-policy: "))
        .unwrap_or_else(|| panic!("no policy: {}", page.headers))
        .trim();
    assert_eq!(
        skald_testkit::csp_problems(policy),
        Vec::<String>::new(),
        "{policy}"
    );
    assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
}

/// The UI's route serves files of the UI folder only: `..` in any spelling reaches nothing
/// outside it.
#[test]
fn the_ui_route_never_leaves_the_ui_folder() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve(&dir.path().join("data"), dir.path(), None);
    let cookie = [("Cookie", s.cookie())];
    assert_eq!(s.get("/../../../../../../etc/passwd", &cookie).status, 400);
    assert_eq!(s.get("/assets/../../../../etc/passwd", &cookie).status, 400);
    for path in [
        "/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/..%2f..%2f..%2f..%2fetc%2fpasswd",
        "/%2fetc%2fpasswd",
        "/....//....//etc/passwd",
    ] {
        let r = s.get(path, &cookie);
        let body = String::from_utf8_lossy(&r.body);
        assert!(!body.contains("root:"), "{path}: {}", r.status);
    }
    // A backslash is a separator on Windows: refused everywhere.
    assert_eq!(s.get("/..\\..\\etc\\passwd", &cookie).status, 400);
}

#[test]
fn only_the_token_holder_on_the_loopback_origin_gets_in() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve(&dir.path().join("data"), dir.path(), None);
    // No cookie: nothing, not even the page.
    assert_eq!(s.get("/", &[]).status, 401);
    assert_eq!(s.get("/api/file?path=/etc/hostname", &[]).status, 401);
    // A wrong token is refused; the right one is traded for a strict, HttpOnly cookie.
    assert_eq!(s.get("/?token=nope", &[]).status, 401);
    let first = s.get(&format!("/?token={}", s.token), &[]);
    assert_eq!(first.status, 303);
    assert!(first.headers.contains(&format!(
        "set-cookie: skald_{}={}; httponly; samesite=strict",
        s.port, s.token
    )));
    // A rebinding attack's Host is refused even with the cookie.
    let mut s2 = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    write!(
        s2,
        "GET / HTTP/1.1\r\nHost: evil.example:{}\r\nCookie: {}\r\nConnection: close\r\n\r\n",
        s.port,
        s.cookie()
    )
    .unwrap();
    let mut out = String::new();
    s2.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 421"), "{out}");
    // Its own host name works like the loopback address (past the host check, the file
    // route refuses a path outside its folders); another .localhost name does not.
    for (host, status) in [
        (format!("{}:{}", s.name, s.port), "HTTP/1.1 403"),
        (format!("skald-0000.localhost:{}", s.port), "HTTP/1.1 421"),
    ] {
        let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
        write!(
            c,
            "GET /api/file?path=/nonexistent HTTP/1.1\r\nHost: {host}\r\nCookie: {}\r\nConnection: close\r\n\r\n",
            s.cookie()
        )
        .unwrap();
        let mut out = String::new();
        c.read_to_string(&mut out).unwrap();
        assert!(out.starts_with(status), "{host}: {out}");
    }
    assert!(
        s.ws_with(Some(&format!("http://{}:{}", s.name, s.port)), true)
            .is_ok()
    );
    // The WebSocket wants the cookie and our own Origin: another page, an HTML preview
    // (opaque origin "null") and a client without Origin are all refused.
    assert!(
        s.ws_with(Some(&format!("http://127.0.0.1:{}", s.port)), false)
            .is_err()
    );
    for origin in [Some("http://evil.example"), Some("null"), None] {
        assert!(s.ws_with(origin, true).is_err(), "{origin:?} got in");
    }
    let mut ws = s.ws();
    assert!(
        ws.call(json!({"cmd": "list_sessions"})).unwrap()["sessions"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    // A malformed request gets a failure naming the problem, and the socket stays up.
    ws.socket
        .send(tungstenite::Message::Text(
            r#"{"id": 77, "command": {"cmd": "no_such"}}"#.into(),
        ))
        .unwrap();
    let m = ws.recv(Instant::now() + Duration::from_secs(10)).unwrap();
    assert_eq!(m["type"], "failure");
    assert_eq!(m["id"], 77);
    assert!(m["error"].as_str().unwrap().contains("no_such"), "{m}");
    // With no model configured the UI is told what to do instead of a turn that fails.
    let id = new_chat(&mut ws);
    let err = ws
        .call(json!({"cmd": "send_message", "session_id": id, "text": "hi"}))
        .unwrap_err();
    assert!(err.contains("Configure a provider in Settings"), "{err}");
    let settings = ws.call(json!({"cmd": "settings"})).unwrap();
    assert!(settings["models"].as_array().unwrap().is_empty());
    assert!(settings["model_error"].is_string());
}

#[test]
fn a_chat_streams_its_answer_and_keeps_its_history() {
    let dir = tempfile::tempdir().unwrap();
    let model = ScriptedServer::new(vec![answer("Hello **there**, from the model.")]);
    let s = serve(&dir.path().join("data"), dir.path(), Some(&model));
    let mut ws = s.ws();
    let id = new_chat(&mut ws);
    let sent = ws
        .call(json!({"cmd": "send_message", "session_id": id, "text": "Say hello"}))
        .unwrap();
    assert_eq!(sent["queued"], false);
    let delta = ws.event(|e| e["type"] == "token_delta");
    assert_eq!(delta["session_id"], id);
    let done = ws.event(|e| e["type"] == "done");
    assert_eq!(done["event"]["outcome"], "final");
    assert_eq!(done["event"]["text"], "Hello **there**, from the model.");
    let usage = ws.call(json!({"cmd": "usage", "session_id": id})).unwrap();
    assert_eq!(usage["requests"], 1, "{usage}");
    let h = ws
        .call(json!({"cmd": "history", "session_id": id}))
        .unwrap();
    let msgs = h["messages"].as_array().unwrap();
    assert_eq!(msgs[0]["role"], "user");
    assert_eq!(msgs[0]["content"], "Say hello");
    let last = msgs.last().unwrap();
    assert_eq!(last["role"], "assistant");
    // The same renderer as the viewer: Markdown to sanitised HTML.
    assert!(
        last["html"]
            .as_str()
            .unwrap()
            .contains("<strong>there</strong>"),
        "{last}"
    );
    let r = ws
        .call(json!({"cmd": "render_markdown", "text": "<script>x</script>\n\n*hi*"}))
        .unwrap();
    assert_eq!(r["html"].as_str().unwrap().trim(), "<p><em>hi</em></p>");
    // Rename, list, delete.
    ws.call(json!({"cmd": "rename_session", "session_id": id, "title": "Greeting"}))
        .unwrap();
    let list = ws.call(json!({"cmd": "list_sessions"})).unwrap();
    assert_eq!(list["sessions"][0]["title"], "Greeting");
    ws.call(json!({"cmd": "delete_session", "session_id": id}))
        .unwrap();
    assert!(
        ws.call(json!({"cmd": "history", "session_id": id}))
            .is_err()
    );
}

/// An image pasted in the composer: kept at once, named by the message, shown in the
/// history and sent to the model; its bytes come back by their SHA-256 (docs/images.md).
#[test]
fn an_image_attached_in_the_composer_reaches_the_model_and_the_history() {
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    let dir = tempfile::tempdir().unwrap();
    let model = ScriptedServer::new(vec![answer("One pixel.")]);
    let s = serve(&dir.path().join("data"), dir.path(), Some(&model));
    let mut ws = s.ws();
    let id = new_chat(&mut ws);
    let attached = ws
        .call(json!({"cmd": "attach_image", "data": PNG, "name": "/home/u/dot.png"}))
        .unwrap();
    let image = attached["image"].clone();
    assert_eq!(image["name"], "dot.png");
    assert_eq!(image["media_type"], "image/png");
    assert!(attached.get("warning").is_none(), "{attached}");
    // What is not an image, or not base64, is refused with the reason.
    let e = ws
        .call(json!({"cmd": "attach_image", "data": "aGVsbG8="}))
        .unwrap_err();
    assert!(e.contains("not a PNG, JPEG, WebP or GIF image"), "{e}");
    let e = ws
        .call(json!({"cmd": "attach_image", "data": "***"}))
        .unwrap_err();
    assert!(e.contains("not valid base64"), "{e}");
    // A message of an image alone is a message; a name the client gives is cleaned of
    // what would hide or reorder text in the chat.
    let mut named = image.clone();
    named["name"] = json!("photo\u{202E}gnp.exe\u{1b}[31m");
    ws.call(json!({"cmd": "send_message", "session_id": id, "text": "", "images": [named]}))
        .unwrap();
    let user = ws.event(|e| e["type"] == "user_message");
    assert_eq!(user["event"]["images"][0]["sha256"], image["sha256"]);
    ws.event(|e| e["type"] == "done");
    let asked = model.recorded()[0].body["messages"].to_string();
    assert!(
        asked.contains(&format!("data:image/png;base64,{PNG}")),
        "{asked}"
    );
    let h = ws
        .call(json!({"cmd": "history", "session_id": id}))
        .unwrap();
    assert_eq!(h["messages"][0]["images"][0]["sha256"], image["sha256"]);
    assert_eq!(h["messages"][0]["images"][0]["name"], "photognp.exe[31m");
    let got = ws
        .call(json!({"cmd": "get_image", "sha256": image["sha256"]}))
        .unwrap();
    assert_eq!(got["media_type"], "image/png");
    assert_eq!(got["data"], PNG);
    // An image that was never kept, or a name that is no SHA-256, is refused.
    let e = ws
        .call(
            json!({"cmd": "send_message", "session_id": id, "text": "again",
                     "images": [{"sha256": "ab".repeat(32), "media_type": "image/png",
                                 "width": 1, "height": 1, "bytes": 1}]}),
        )
        .unwrap_err();
    assert!(e.contains("not kept here"), "{e}");
    assert!(
        ws.call(json!({"cmd": "get_image", "sha256": "../../etc/passwd"}))
            .is_err()
    );
}

/// The largest image is 40 MB of base64 in one request, which a client may send as one
/// WebSocket frame, over the usual 16 MiB: it is answered like any other, the connection
/// kept (docs/ui.md, "Images in the composer and the chat").
#[test]
fn an_image_as_large_as_allowed_arrives_in_one_frame() {
    use base64::Engine as _;
    let dir = tempfile::tempdir().unwrap();
    let s = serve(&dir.path().join("data"), dir.path(), None);
    let mut ws = s.ws();
    // A PNG's signature, then nothing an image is made of: read, and refused for that.
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    bytes.resize(20 << 20, 0);
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let e = ws
        .call(json!({"cmd": "attach_image", "data": data}))
        .unwrap_err();
    assert!(e.contains("cannot be read"), "{e}");
    // Past the largest image: refused by its size.
    bytes.resize(31 << 20, 0);
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let e = ws
        .call(json!({"cmd": "attach_image", "data": data}))
        .unwrap_err();
    assert!(e.contains("larger than the 30 MB"), "{e}");
    ws.call(json!({"cmd": "list_sessions"})).unwrap();
}

/// A chat's own model and effort, set from the chat header: used from its next turn,
/// shown with the chat, checked when set, and given back to the configured model.
#[test]
fn a_chat_gets_its_own_model_and_effort_from_its_next_turn() {
    let dir = tempfile::tempdir().unwrap();
    let model = ScriptedServer::new(vec![answer("Reasoned."), answer("Plain again.")]);
    let s = serve(&dir.path().join("data"), dir.path(), Some(&model));
    let mut ws = s.ws();
    let id = new_chat(&mut ws);
    let listed = ws.call(json!({"cmd": "list_models"})).unwrap();
    assert_eq!(listed["models"][0]["label"], "openai/scripted-model");
    assert_eq!(listed["models"][0]["default"], true);
    assert_eq!(listed["models"][0]["takes_effort"], false);
    // Checked when set: an effort no model has, an effort for a model that takes none, a
    // provider that is not configured.
    let e = ws
        .call(json!({"cmd": "set_session_model", "session_id": id, "model": "openai/o3-mini", "effort": "max"}))
        .unwrap_err();
    assert!(e.contains("low, medium or high"), "{e}");
    let e = ws
        .call(json!({"cmd": "set_session_model", "session_id": id, "effort": "high"}))
        .unwrap_err();
    assert!(
        e.contains("openai/scripted-model takes no reasoning effort"),
        "{e}"
    );
    let e = ws
        .call(json!({"cmd": "set_session_model", "session_id": id, "model": "anthropic/claude-sonnet-4-5"}))
        .unwrap_err();
    assert!(
        e.contains("anthropic/claude-sonnet-4-5 cannot be used"),
        "{e}"
    );
    let set = ws
        .call(json!({"cmd": "set_session_model", "session_id": id, "model": "openai/o3-mini", "effort": "high"}))
        .unwrap();
    assert_eq!(set["session"]["model"], "openai/o3-mini");
    assert_eq!(set["session"]["effort"], "high");
    // An image attached for this chat is warned about for its model, which cannot see.
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    let for_chat = ws
        .call(json!({"cmd": "attach_image", "data": PNG, "session_id": id}))
        .unwrap();
    assert!(
        for_chat["warning"]
            .as_str()
            .unwrap()
            .starts_with("openai/o3-mini cannot see images"),
        "{for_chat}"
    );
    let elsewhere = ws
        .call(json!({"cmd": "attach_image", "data": PNG}))
        .unwrap();
    assert!(elsewhere.get("warning").is_none(), "{elsewhere}");
    ws.call(json!({"cmd": "send_message", "session_id": id, "text": "Think."}))
        .unwrap();
    ws.event(|e| e["type"] == "done");
    let sent = model.recorded()[0].body.clone();
    assert_eq!(sent["model"], "o3-mini");
    assert_eq!(sent["reasoning_effort"], "high");
    let h = ws
        .call(json!({"cmd": "history", "session_id": id}))
        .unwrap();
    assert_eq!(h["session"]["model"], "openai/o3-mini");
    // Given back: the configured model, its own effort.
    let back = ws
        .call(json!({"cmd": "set_session_model", "session_id": id}))
        .unwrap();
    assert!(back["session"].get("model").is_none(), "{back}");
    ws.call(json!({"cmd": "send_message", "session_id": id, "text": "Again."}))
        .unwrap();
    ws.event(|e| e["type"] == "done" && e["text"] == "Plain again.");
    let sent = model.recorded()[1].body.clone();
    assert_eq!(sent["model"], "scripted-model");
    assert!(sent.get("reasoning_effort").is_none(), "{sent}");
}

/// Edit and resend, and "fork from here": each a new chat beside the original, which keeps
/// every message; the fork says where it came from.
#[test]
fn an_edited_message_and_fork_from_here_branch_into_new_chats() {
    let dir = tempfile::tempdir().unwrap();
    let model = ScriptedServer::new(vec![
        answer("Paris."),
        answer("Rome."),
        answer("Madrid, after the edit."),
    ]);
    let s = serve(&dir.path().join("data"), dir.path(), Some(&model));
    let mut ws = s.ws();
    let id = new_chat(&mut ws);
    for (text, said) in [("Capital of France?", "Paris."), ("And Italy?", "Rome.")] {
        ws.call(json!({"cmd": "send_message", "session_id": id, "text": text}))
            .unwrap();
        ws.event(|e| e["type"] == "done" && e["text"] == said);
    }
    let h = ws
        .call(json!({"cmd": "history", "session_id": id}))
        .unwrap();
    let msgs = h["messages"].as_array().unwrap().clone();
    let second_question = msgs[2]["id"].as_i64().unwrap();
    let first_answer = msgs[1]["id"].as_i64().unwrap();
    // Edit the second question: a new chat with the first exchange and the edit, answered.
    let edited = ws
        .call(
            json!({"cmd": "edit_message", "session_id": id, "message_id": second_question,
                     "text": "And Spain?"}),
        )
        .unwrap();
    let fork = edited["session"]["id"].as_i64().unwrap();
    assert_ne!(fork, id);
    assert_eq!(edited["session"]["forked_from"], id);
    assert_eq!(edited["session"]["forked_after"], first_answer);
    assert_eq!(edited["session"]["title"], "test (edited)");
    ws.event(|e| e["type"] == "done" && e["text"] == "Madrid, after the edit.");
    let asked = model.recorded()[2].body["messages"].to_string();
    assert!(
        asked.contains("Capital of France?") && asked.contains("And Spain?"),
        "{asked}"
    );
    assert!(!asked.contains("And Italy?"), "{asked}");
    let texts = |sid: i64, ws: &mut Ws| -> Vec<String> {
        ws.call(json!({"cmd": "history", "session_id": sid}))
            .unwrap()["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        texts(fork, &mut ws),
        [
            "Capital of France?",
            "Paris.",
            "And Spain?",
            "Madrid, after the edit."
        ]
    );
    // The original is as it was.
    assert_eq!(
        texts(id, &mut ws),
        ["Capital of France?", "Paris.", "And Italy?", "Rome."]
    );
    // Fork from here, on the first answer: the chat up to it, nothing sent.
    let forked = ws
        .call(json!({"cmd": "fork_session", "session_id": id, "message_id": first_answer}))
        .unwrap();
    let here = forked["session"]["id"].as_i64().unwrap();
    assert_eq!(texts(here, &mut ws), ["Capital of France?", "Paris."]);
    assert_eq!(forked["session"]["forked_from"], id);
    // Only a person's message can be edited; a message of another chat is not this one's.
    let e = ws
        .call(json!({"cmd": "edit_message", "session_id": id, "message_id": first_answer, "text": "x"}))
        .unwrap_err();
    assert!(e.contains("only a message the person wrote"), "{e}");
    let e = ws
        .call(json!({"cmd": "fork_session", "session_id": here, "message_id": second_question}))
        .unwrap_err();
    assert!(e.contains("has no message"), "{e}");
    let listed = ws.call(json!({"cmd": "list_sessions"})).unwrap();
    assert_eq!(listed["sessions"].as_array().unwrap().len(), 3, "{listed}");
}

/// Plan mode chosen from the chat header: the chat says so, and its next turn is offered
/// only the tools that change nothing; acting again gives them back.
#[test]
fn plan_mode_is_set_from_the_ui_and_applies_from_the_next_turn() {
    let dir = tempfile::tempdir().unwrap();
    let model = ScriptedServer::new(vec![answer("A plan."), answer("Acting.")]);
    let s = serve(&dir.path().join("data"), dir.path(), Some(&model));
    let mut ws = s.ws();
    let id = new_chat(&mut ws);
    let listed = ws.call(json!({"cmd": "list_sessions"})).unwrap();
    assert_eq!(listed["sessions"][0]["mode"], "act");
    let set = ws
        .call(json!({"cmd": "set_session_mode", "session_id": id, "mode": "plan"}))
        .unwrap();
    assert_eq!(set["session"]["mode"], "plan");
    for (text, said, mode) in [
        ("Plan it.", "A plan.", "plan"),
        ("Do it.", "Acting.", "act"),
    ] {
        ws.call(json!({"cmd": "set_session_mode", "session_id": id, "mode": mode}))
            .unwrap();
        ws.call(json!({"cmd": "send_message", "session_id": id, "text": text}))
            .unwrap();
        ws.event(|e| e["type"] == "done" && e["text"] == said);
    }
    let tools = |i: usize| -> Vec<String> {
        model.recorded()[i].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(tools(0).contains(&"exit_plan_mode".to_string()));
    assert!(!tools(0).contains(&"write_file".to_string()));
    assert!(tools(1).contains(&"write_file".to_string()));
    assert!(!tools(1).contains(&"exit_plan_mode".to_string()));
    assert!(
        ws.call(json!({"cmd": "set_session_mode", "session_id": id, "mode": "dream"}))
            .is_err()
    );
}

/// A plan is approved on its own card, by the person: a bypass granted for another call,
/// or a rule that allows it, does not approve it (#49 review, finding 2).
#[test]
fn a_plan_is_approved_only_on_its_card_never_by_a_bypass_or_a_rule() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("spec.txt"), "the spec\n").unwrap();
    let read = json!({"path": outside.path().join("spec.txt")}).to_string();
    let model = ScriptedServer::new(vec![
        tool_call("r1", "read_file", &read),
        tool_call("p1", "exit_plan_mode", r#"{"plan": "1. Rewrite a.txt"}"#),
        answer("Still planning."),
        tool_call("p2", "exit_plan_mode", r#"{"plan": "2. Rewrite a.txt"}"#),
        answer("Still planning."),
    ]);
    let data = dir.path().join("data");
    let s = serve(&data, dir.path(), Some(&model));
    let mut ws = s.ws();
    let id = new_chat(&mut ws);
    ws.call(json!({"cmd": "set_session_mode", "session_id": id, "mode": "plan"}))
        .unwrap();
    ws.call(json!({"cmd": "send_message", "session_id": id, "text": "Plan it."}))
        .unwrap();
    let asked = ws.event(|e| e["type"] == "inbox_requested");
    assert_eq!(asked["event"]["item"]["payload"]["tool"], "read_file");
    // "Approve everything for 30 minutes", for the read.
    ws.call(
        json!({"cmd": "answer", "inbox_id": asked["event"]["item"]["id"],
        "answer": {"decision": "approve_with_bypass", "scope": {"scope": "all"}, "minutes": 30}}),
    )
    .unwrap();
    let plan = ws.event(|e| {
        e["type"] == "done"
            || (e["type"] == "inbox_requested" && e["item"]["payload"]["tool"] == "exit_plan_mode")
    });
    assert_eq!(plan["event"]["type"], "inbox_requested", "{plan}");
    ws.call(
        json!({"cmd": "answer", "inbox_id": plan["event"]["item"]["id"],
        "answer": {"decision": "reject", "note": "not yet"}}),
    )
    .unwrap();
    ws.event(|e| e["type"] == "done");
    // A rule that allows it, added meanwhile: the next plan still asks.
    let add = crate::common::bare(&data)
        .args([
            "rules",
            "add",
            "--tool",
            "exit_plan_mode",
            "--action",
            "allow",
        ])
        .output()
        .unwrap();
    assert_eq!(
        add.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&add.stderr)
    );
    ws.call(json!({"cmd": "send_message", "session_id": id, "text": "Plan again."}))
        .unwrap();
    let plan = ws.event(|e| {
        e["type"] == "done"
            || (e["type"] == "inbox_requested" && e["item"]["payload"]["tool"] == "exit_plan_mode")
    });
    assert_eq!(plan["event"]["type"], "inbox_requested", "{plan}");
    let mode = ws.call(json!({"cmd": "list_sessions"})).unwrap()["sessions"][0]["mode"].clone();
    assert_eq!(mode, "plan");
}

/// A planning agent can check on a background process but not stop it (finding 8).
#[test]
fn a_planning_agent_cannot_stop_a_running_process() {
    let dir = tempfile::tempdir().unwrap();
    let model = ScriptedServer::new(vec![
        tool_call(
            "c1",
            "execute_cmd",
            r#"{"command": "sleep 300", "background": true}"#,
        ),
        answer("Dev server started."),
        tool_call("k1", "check_process", r#"{"process_id": 1, "stop": true}"#),
        tool_call("k2", "check_process", r#"{"process_id": 1}"#),
        answer("Planned."),
    ]);
    let s = serve(&dir.path().join("data"), dir.path(), Some(&model));
    let mut ws = s.ws();
    let id = new_chat(&mut ws);
    ws.call(json!({"cmd": "send_message", "session_id": id, "text": "Start the server."}))
        .unwrap();
    ws.event(|e| e["type"] == "done" && e["text"] == "Dev server started.");
    ws.call(json!({"cmd": "set_session_mode", "session_id": id, "mode": "plan"}))
        .unwrap();
    ws.call(json!({"cmd": "send_message", "session_id": id, "text": "Plan only."}))
        .unwrap();
    let refused = ws.event(|e| e["tool_call_id"] == "k1" && e["type"] != "tool_start");
    assert!(
        refused.to_string().contains("not stopped until then"),
        "{refused}"
    );
    let checked = ws.event(|e| e["tool_call_id"] == "k2" && e["type"] == "tool_done");
    assert!(checked.to_string().contains("running"), "{checked}");
    ws.event(|e| e["type"] == "done" && e["text"] == "Planned.");
    let listed = ws
        .call(json!({"cmd": "list_processes", "session_id": id}))
        .unwrap();
    assert_eq!(listed["processes"][0]["status"], "running", "{listed}");
    ws.call(json!({"cmd": "stop_process", "session_id": id, "process_id": 1}))
        .unwrap();
}

/// A chat kept on a model of its own keeps its background tasks there: the configured
/// provider never sees them (finding 3).
#[test]
fn a_chats_background_task_uses_the_chats_own_model() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    const SE: &str = "senior software engineer";
    let configured = ScriptedServer::routed(vec![(
        SE,
        vec![answer("The configured model read the task.")],
    )]);
    let private = ScriptedServer::routed(vec![
        (SE, vec![answer("Done privately.")]),
        (
            "",
            vec![
                tool_call(
                    "a1",
                    "execute_task",
                    r#"{"mode": "async", "title": "Read", "agent_id": "software-engineer", "prompt": "Summarise the confidential notes."}"#,
                ),
                answer("Started."),
                answer("Reported."),
            ],
        ),
    ]);
    std::fs::write(
        data.join("config.toml"),
        format!(
            "[providers.private]\nkind = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"PRIVATE_KEY\"\n",
            private.base_url
        ),
    )
    .unwrap();
    let s = serve_with(
        &data,
        dir.path(),
        Some(&configured),
        &[("PRIVATE_KEY", "k-private")],
    );
    let mut ws = s.ws();
    let id = new_chat(&mut ws);
    ws.call(json!({"cmd": "set_session_model", "session_id": id, "model": "private/on-prem"}))
        .unwrap();
    ws.call(json!({"cmd": "send_message", "session_id": id, "text": "Private work."}))
        .unwrap();
    ws.event(|e| e["type"] == "task_update" && e["status"] != "running");
    assert!(
        configured.recorded().is_empty(),
        "the configured provider was called"
    );
    let task = private
        .recorded()
        .iter()
        .find(|r| r.body.to_string().contains(SE))
        .map(|r| r.body["model"].clone());
    assert_eq!(task, Some(json!("on-prem")));
}

/// A chat in a worktree from the UI: made, its agent's changes reviewed and one hunk
/// applied to the folder, the worktree listed and discarded (docs/worktrees.md).
#[test]
fn a_chat_in_a_worktree_is_reviewed_applied_and_discarded_from_the_ui() {
    let top = skald_testkit::tempdir_seen_by_commands();
    let work = top.path().join("paper");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(work.join("draft.md"), "one\ntwo\nthree\nfour\nfive\n").unwrap();
    let model = ScriptedServer::new(vec![
        tool_call(
            "c1",
            "execute_cmd",
            r#"{"command": "sed -i 's/^one$/ONE/; s/^five$/FIVE/' draft.md"}"#,
        ),
        answer("Edited."),
    ]);
    let data = top.path().join("data");
    let s = serve(&data, &work, Some(&model));
    let mut ws = s.ws();
    let made = ws
        .call(json!({"cmd": "create_session", "title": "edit", "worktree": "edit"}))
        .unwrap();
    let id = made["session"]["id"].as_i64().unwrap();
    let folder = made["session"]["working_dir"].as_str().unwrap().to_string();
    assert_eq!(
        std::path::Path::new(&folder),
        top.path().join("data-worktrees/edit")
    );
    let listed = ws.call(json!({"cmd": "list_worktrees"})).unwrap();
    assert_eq!(listed["worktrees"][0]["session_id"], id);
    assert_eq!(listed["worktrees"][0]["kind"], "copy");
    ws.call(json!({"cmd": "send_message", "session_id": id, "text": "Edit it."}))
        .unwrap();
    ws.event(|e| e["type"] == "done" && e["text"] == "Edited.");
    // The person's folder is untouched until applied.
    assert_eq!(
        std::fs::read_to_string(work.join("draft.md")).unwrap(),
        "one\ntwo\nthree\nfour\nfive\n"
    );
    let diff = ws
        .call(json!({"cmd": "worktree_diff", "name": "edit"}))
        .unwrap();
    assert_eq!(diff["files"][0]["path"], "draft.md");
    assert_eq!(diff["files"][0]["hunks"].as_array().unwrap().len(), 2);
    // Applied only as reviewed: a state the person did not see is refused.
    let e = ws
        .call(
            json!({"cmd": "apply_worktree", "name": "edit", "snapshot": "0123abcd",
            "files": [{"path": "draft.md", "hunks": [1]}]}),
        )
        .unwrap_err();
    assert!(e.contains("changed since it was reviewed"), "{e}");
    let applied = ws
        .call(
            json!({"cmd": "apply_worktree", "name": "edit", "snapshot": diff["snapshot"],
            "files": [{"path": "draft.md", "hunks": [1]}]}),
        )
        .unwrap();
    assert_eq!(applied["report"]["written"], json!(["draft.md"]));
    assert_eq!(
        std::fs::read_to_string(work.join("draft.md")).unwrap(),
        "one\ntwo\nthree\nfour\nFIVE\n"
    );
    // Undone like any restore.
    let cp = applied["report"]["checkpoint_id"].as_i64().unwrap();
    ws.call(json!({"cmd": "restore_checkpoint", "id": cp}))
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(work.join("draft.md")).unwrap(),
        "one\ntwo\nthree\nfour\nfive\n"
    );
    let e = ws
        .call(json!({"cmd": "apply_worktree", "name": "nope"}))
        .unwrap_err();
    assert!(e.contains("no worktree named nope"), "{e}");
    ws.call(json!({"cmd": "discard_worktree", "name": "edit"}))
        .unwrap();
    assert!(!std::path::Path::new(&folder).exists());
    let listed = ws.call(json!({"cmd": "list_worktrees"})).unwrap();
    assert_eq!(listed["worktrees"], json!([]));
}

/// Three agents at once, each in its own worktree of one folder: each writes only its own
/// worktree, none the person's folder nor another's worktree (#50).
#[test]
fn three_agents_at_once_each_write_only_their_own_worktree() {
    let top = skald_testkit::tempdir_seen_by_commands();
    let work = top.path().join("project");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(work.join("README.md"), "shared\n").unwrap();
    let work = std::fs::canonicalize(&work).unwrap();
    let names = ["one", "two", "three"];
    // Each agent names its files after its folder (its worktree), and tries the person's
    // folder and its siblings too. The three first requests come at once; each chat asks
    // again only after its command (which sleeps), so the answers come after the calls.
    let cmd = json!({"command": format!(
        "sleep 0.5; n=$(basename \"$PWD\"); echo $n > mine-$n.txt; \
         echo $n > {}/escaped-$n.txt; for d in ../*/; do echo $n > \"$d\"stray-$n.txt; done; true",
        work.display()
    )})
    .to_string();
    let mut replies: Vec<skald_testkit::Reply> = (0..3)
        .map(|i| tool_call(&format!("c{i}"), "execute_cmd", &cmd))
        .collect();
    replies.extend((0..3).map(|_| answer("Done.")));
    let model = ScriptedServer::new(replies);
    let data = top.path().join("data");
    let s = serve(&data, &work, Some(&model));
    let mut ws = s.ws();
    let mut chats = Vec::new();
    for n in names {
        let made = ws
            .call(json!({"cmd": "create_session", "title": n, "worktree": n}))
            .unwrap();
        chats.push(made["session"]["id"].as_i64().unwrap());
    }
    // All three at once.
    for (id, n) in chats.iter().zip(names) {
        ws.call(json!({"cmd": "send_message", "session_id": id, "text": format!("agent {n}")}))
            .unwrap();
    }
    // In whatever order they end.
    let mut ended = std::collections::BTreeSet::new();
    while ended.len() < chats.len() {
        let done = ws.event(|e| e["type"] == "done");
        assert_eq!(done["event"]["text"], "Done.", "{done}");
        ended.insert(done["event"]["session_id"].as_i64().unwrap());
    }
    assert_eq!(ended, chats.iter().copied().collect());
    let root = top.path().join("data-worktrees");
    for n in names {
        let mine = root.join(n);
        assert_eq!(
            std::fs::read_to_string(mine.join(format!("mine-{n}.txt"))).unwrap(),
            format!("{n}\n")
        );
        assert!(mine.join("README.md").is_file());
        for other in names.iter().filter(|o| **o != n) {
            assert!(
                !mine.join(format!("stray-{other}.txt")).exists(),
                "{other} wrote {n}'s worktree"
            );
            assert!(!mine.join(format!("mine-{other}.txt")).exists());
        }
        assert!(
            !work.join(format!("escaped-{n}.txt")).exists(),
            "{n} wrote the person's folder"
        );
    }
    let listed: Vec<String> = std::fs::read_dir(&work)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(listed, ["README.md"], "the person's folder changed");
}

/// A context a person can see and a compaction that loses nothing: what fills the context,
/// "compact now" announced and made, the summary shown over its messages, and undone.
#[test]
fn the_context_is_shown_compacted_on_request_and_the_compaction_undone() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    // Never unasked: only "compact now" summarises.
    std::fs::write(data.join("config.toml"), "[agent]\ncompact_at = 0\n").unwrap();
    let model = ScriptedServer::new(vec![
        answer("First answer."),
        answer("Second answer."),
        answer("SUMMARY: the person asked twice.\nLeft out: nothing."),
    ]);
    let s = serve(&data, dir.path(), Some(&model));
    let mut ws = s.ws();
    let id = new_chat(&mut ws);
    for (text, said) in [
        ("First question?", "First answer."),
        ("Second question?", "Second answer."),
    ] {
        ws.call(json!({"cmd": "send_message", "session_id": id, "text": text}))
            .unwrap();
        ws.event(|e| e["type"] == "done" && e["text"] == said);
    }
    let usage = ws
        .call(json!({"cmd": "context_usage", "session_id": id}))
        .unwrap();
    assert_eq!(usage["window"], 128_000);
    assert_eq!(usage["compact_at"], 0);
    let part = |what: &str| {
        usage["parts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["what"] == what)
            .unwrap()["tokens"]
            .as_u64()
            .unwrap()
    };
    assert!(part("system") > 100, "{usage}");
    assert!(part("tools") > 1000, "{usage}");
    assert!(part("messages") > 5, "{usage}");
    assert_eq!(part("summary"), 0);
    let total: u64 = [
        "system",
        "instructions",
        "tools",
        "summary",
        "messages",
        "tool_results",
    ]
    .iter()
    .map(|w| part(w))
    .sum();
    assert_eq!(usage["tokens"], total);
    assert!(usage["last_input_tokens"].is_u64() || usage.get("last_input_tokens").is_none());
    // Compact now: announced, then made; the messages stay.
    ws.call(json!({"cmd": "compact_now", "session_id": id}))
        .unwrap();
    let started = ws.event(|e| e["type"] == "compaction_started");
    let up_to = started["event"]["up_to_message_id"].as_i64().unwrap();
    ws.event(|e| e["type"] == "context_compacted");
    let h = ws
        .call(json!({"cmd": "history", "session_id": id}))
        .unwrap();
    assert_eq!(h["messages"].as_array().unwrap().len(), 4);
    assert_eq!(h["summary"]["up_to_message_id"], up_to);
    assert!(
        h["summary"]["summary"]
            .as_str()
            .unwrap()
            .contains("Left out:")
    );
    let asked = model.recorded()[2].body["messages"].to_string();
    assert!(
        asked.contains("Left out:"),
        "the summary is asked to say what it leaves out"
    );
    let usage = ws
        .call(json!({"cmd": "context_usage", "session_id": id}))
        .unwrap();
    assert!(part_of(&usage, "summary") > 0, "{usage}");
    // Undone: the turns are sent whole again.
    let undone = ws
        .call(json!({"cmd": "undo_compaction", "session_id": id}))
        .unwrap();
    assert_eq!(undone["undone"], true);
    let h = ws
        .call(json!({"cmd": "history", "session_id": id}))
        .unwrap();
    assert!(h.get("summary").is_none(), "{h}");
    let again = ws
        .call(json!({"cmd": "undo_compaction", "session_id": id}))
        .unwrap();
    assert_eq!(again["undone"], false);
}

/// Settings sets the context threshold and the daily budget (written to config.toml, used
/// at once); a turn past the budget asks in the Inbox and goes on only if told to; the
/// chat's usage and Settings show the cost, the budget and the provider's rate limits.
#[test]
fn the_budget_and_threshold_are_set_from_the_ui_and_a_turn_past_the_budget_asks() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    // $10 a million tokens read, $100,000 a million written: the first answer's 100
    // tokens cost $10; what a request reads stays far under the $5 budget.
    std::fs::write(
        data.join("config.toml"),
        "[models.prices]\n\"openai/scripted-*\" = { input = 10.0, output = 100000.0 }\n",
    )
    .unwrap();
    let costly = (
        200,
        "text/event-stream",
        skald_testkit::sse(&[
            json!({"choices": [{"index": 0, "delta": {"content": "One."}, "finish_reason": "stop"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 1000, "completion_tokens": 100}}),
        ]),
    );
    let model = ScriptedServer::new(vec![
        skald_testkit::with_headers(
            &[
                ("x-ratelimit-limit-requests", "50"),
                ("x-ratelimit-remaining-requests", "41"),
            ],
            costly,
        ),
        answer("Three."),
    ]);
    let s = serve(&data, dir.path(), Some(&model));
    let mut ws = s.ws();
    let id = new_chat(&mut ws);
    let settings = ws.call(json!({"cmd": "settings"})).unwrap();
    assert_eq!(settings["compact_at"], 80);
    assert!(settings.get("daily_budget_usd").is_none(), "{settings}");
    // Refused: what the settings do not take.
    for (cmd, e) in [
        (
            json!({"cmd": "set_daily_budget", "usd": -1.0}),
            "positive number",
        ),
        (
            json!({"cmd": "set_daily_budget", "usd": 0.0}),
            "positive number",
        ),
        (json!({"cmd": "set_compact_at", "percent": 101}), "0 to 100"),
    ] {
        let err = ws.call(cmd).unwrap_err();
        assert!(err.contains(e), "{err}");
    }
    ws.call(json!({"cmd": "set_compact_at", "percent": 60}))
        .unwrap();
    ws.call(json!({"cmd": "set_daily_budget", "usd": 5.0}))
        .unwrap();
    let config = std::fs::read_to_string(data.join("config.toml")).unwrap();
    assert!(
        config.contains("compact_at = 60") && config.contains("daily_usd = 5.0"),
        "{config}"
    );
    let context = ws
        .call(json!({"cmd": "context_usage", "session_id": id}))
        .unwrap();
    assert_eq!(context["compact_at"], 60);

    ws.call(json!({"cmd": "send_message", "session_id": id, "text": "One?"}))
        .unwrap();
    ws.event(|e| e["type"] == "done" && e["outcome"] == "final");
    let usage = ws.call(json!({"cmd": "usage", "session_id": id})).unwrap();
    assert!(
        (usage["cost_usd"].as_f64().unwrap() - 10.01).abs() < 1e-9,
        "{usage}"
    );
    assert_eq!(usage["daily_budget_usd"], 5.0);
    assert_eq!(usage["rate_limits"]["provider"], "openai");
    assert_eq!(usage["rate_limits"]["requests"]["remaining"], 41);
    let settings = ws.call(json!({"cmd": "settings"})).unwrap();
    assert!((settings["today_cost_usd"].as_f64().unwrap() - 10.01).abs() < 1e-9);
    assert_eq!(settings["rate_limits"][0]["requests"]["limit"], 50);

    // Past the budget: the turn asks before its model call. "Stop" stops it.
    ws.call(json!({"cmd": "send_message", "session_id": id, "text": "Two?"}))
        .unwrap();
    let asked = ws.event(|e| e["type"] == "inbox_requested");
    let item = &asked["event"]["item"];
    assert_eq!(item["title"], "Daily budget");
    let question = item["payload"]["question"].as_str().unwrap();
    assert!(
        question.contains("$10.01 of your $5.00 daily budget"),
        "{question}"
    );
    ws.call(json!({"cmd": "answer", "inbox_id": item["id"], "answer": {"decision": "text", "text": "Stop"}}))
        .unwrap();
    ws.event(|e| e["type"] == "error" && e["message"].as_str().unwrap().contains("not to pass"));
    ws.event(|e| e["type"] == "done" && e["outcome"] == "cancelled");
    assert_eq!(model.recorded().len(), 1);
    // "Run it" lets the turn go on.
    ws.call(json!({"cmd": "send_message", "session_id": id, "text": "Three?"}))
        .unwrap();
    let asked = ws.event(|e| e["type"] == "inbox_requested");
    let inbox_id = asked["event"]["item"]["id"].clone();
    ws.call(json!({"cmd": "answer", "inbox_id": inbox_id, "answer": {"decision": "text", "text": "Run it"}}))
        .unwrap();
    ws.event(|e| e["type"] == "done" && e["text"] == "Three.");
    assert_eq!(model.recorded().len(), 2);
    // No budget: removed from the file.
    ws.call(json!({"cmd": "set_daily_budget"})).unwrap();
    let config = std::fs::read_to_string(data.join("config.toml")).unwrap();
    assert!(!config.contains("daily_usd"), "{config}");
    let settings = ws.call(json!({"cmd": "settings"})).unwrap();
    assert!(settings.get("daily_budget_usd").is_none(), "{settings}");
}

fn part_of(usage: &Value, what: &str) -> u64 {
    usage["parts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["what"] == what)
        .unwrap()["tokens"]
        .as_u64()
        .unwrap()
}

/// The app prepares its default local model itself when it starts (its chats may be
/// offered what `skald exec`'s are not, so the command line's preparation need not match
/// them): the state is saved with no chat open, and the first chat reads none of the
/// prompt.
#[cfg(feature = "local")]
#[test]
fn the_server_prepares_its_default_local_model_so_the_first_chat_reads_none_of_the_prompt() {
    use crate::local::{MODEL, models_dir, one_model_at_a_time, saved_states};
    let _one = one_model_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let states = |data: &Path| -> Vec<String> {
        let mut v = saved_states(data);
        v.retain(|f| f.ends_with(".kv"));
        v
    };
    // Added, not prepared: `models add` leaves that to the first chat.
    crate::common::ok(
        &skald(&data, None)
            .args(["models", "add", "--name", "smol"])
            .arg(models_dir().join(format!("{MODEL}.gguf")))
            .output()
            .unwrap(),
    );
    assert!(states(&data).is_empty());
    let s = serve(&data, dir.path(), None);
    let mut ws = s.ws();
    let until = Instant::now() + Duration::from_secs(600);
    while states(&data).is_empty() {
        assert!(
            Instant::now() < until,
            "the server did not prepare its model"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let prepared = states(&data);
    let id = new_chat(&mut ws);
    ws.call(json!({"cmd": "send_message", "session_id": id, "text": "Say hi."}))
        .unwrap();
    let done = ws.event(|e| e["type"] == "done");
    assert_eq!(done["event"]["outcome"], "final", "{done}");
    let reading: Vec<&Value> = ws
        .events
        .iter()
        .filter(|e| e["event"]["type"] == "prompt_progress")
        .collect();
    assert!(reading.is_empty(), "the chat read the prompt: {reading:?}");
    assert_eq!(states(&data), prepared);
}

#[test]
fn writes_wait_for_the_inbox_and_approve_or_reject_from_the_ui() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "old\n").unwrap();
    let model = ScriptedServer::new(vec![
        tool_call(
            "w1",
            "write_file",
            r#"{"path": "notes.txt", "content": "new\n"}"#,
        ),
        answer("Written."),
        tool_call(
            "w2",
            "write_file",
            r#"{"path": "other.txt", "content": "x"}"#,
        ),
        answer("Not written, as you asked."),
    ]);
    let s = serve(&dir.path().join("data"), dir.path(), Some(&model));
    let mut ws = s.ws();
    let id = new_chat(&mut ws);
    ws.call(json!({"cmd": "send_message", "session_id": id, "text": "write it"}))
        .unwrap();
    let wait = ws.event(|e| e["type"] == "approval_required");
    let inbox_id = wait["event"]["inbox_id"].as_i64().unwrap();
    // The Inbox has it, with the write's before and after for the diff view.
    let inbox = ws.call(json!({"cmd": "inbox"})).unwrap();
    let item = &inbox["items"][0];
    assert_eq!(item["id"], inbox_id);
    assert_eq!(item["kind"], "approval");
    assert_eq!(item["session_title"], "test");
    assert_eq!(item["payload"]["write"]["old"], "old\n");
    assert_eq!(item["payload"]["write"]["new"], "new\n");
    // The rule editor's proposal for "always".
    let rule = ws
        .call(json!({"cmd": "propose_rule", "inbox_id": inbox_id}))
        .unwrap();
    assert_eq!(rule["rule"]["tool_pattern"], "@fs_write");
    assert_eq!(rule["rule"]["action"], "allow");
    // The editor says what else "always" would allow.
    let reach = rule["reach"].as_str().unwrap();
    assert!(
        reach.starts_with("Also allows @fs_write on notes.txt"),
        "{reach}"
    );
    ws.call(json!({"cmd": "answer", "inbox_id": inbox_id, "answer": {"decision": "approve"}}))
        .unwrap();
    ws.event(|e| e["type"] == "tool_done" && e["tool_call_id"] == "w1");
    ws.event(|e| e["type"] == "done");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "new\n"
    );
    // A rejection with a note: nothing written, the note reaches the model.
    ws.call(json!({"cmd": "send_message", "session_id": id, "text": "another"}))
        .unwrap();
    let wait = ws.event(|e| e["type"] == "approval_required");
    let inbox_id = wait["event"]["inbox_id"].as_i64().unwrap();
    ws.call(json!({"cmd": "answer", "inbox_id": inbox_id,
        "answer": {"decision": "reject", "note": "not that file"}}))
        .unwrap();
    ws.event(|e| e["type"] == "tool_rejected" && e["tool_call_id"] == "w2");
    ws.event(|e| e["type"] == "done");
    assert!(!dir.path().join("other.txt").exists());
    let told = model.recorded()[3].body.to_string();
    assert!(told.contains("not that file"), "{told}");
    assert!(
        ws.call(json!({"cmd": "inbox"})).unwrap()["items"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    // History shows both calls with their labels and ends.
    let h = ws
        .call(json!({"cmd": "history", "session_id": id}))
        .unwrap();
    let calls = h["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["status"], "done");
    assert_eq!(calls[1]["status"], "rejected");
    assert!(
        calls[0]["label_short"]
            .as_str()
            .unwrap()
            .contains("notes.txt")
    );
}

#[test]
fn the_file_route_applies_the_path_policy_and_isolates_html() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    std::fs::create_dir_all(root.join("secrets")).unwrap();
    std::fs::write(
        root.join("pic.svg"),
        "<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>",
    )
    .unwrap();
    std::fs::write(
        root.join("page.html"),
        "<h1>hi</h1><script>fetch('/api/ws')</script>",
    )
    .unwrap();
    std::fs::write(root.join("notes.md"), "# Notes\n\n![pic](pic.svg)\n").unwrap();
    std::fs::write(root.join("secrets/key.txt"), "s3cret").unwrap();
    std::fs::write(dir.path().join("outside.txt"), "private").unwrap();
    let s = serve(&dir.path().join("data"), &root, None);
    let md = s.file(&root.join("notes.md"));
    assert_eq!(md.status, 200);
    assert!(md.headers.contains("content-type: text/plain"));
    // Outside the folders Skald works in, through `..`, and the seeded secrets deny.
    assert_eq!(s.file(&dir.path().join("outside.txt")).status, 403);
    assert_eq!(s.file(&root.join("../outside.txt")).status, 403);
    let secret = s.file(&root.join("secrets/key.txt"));
    assert_eq!(secret.status, 403);
    assert!(!String::from_utf8_lossy(&secret.body).contains("s3cret"));
    // A symlink inside the folder pointing out of it is judged by its target.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.path().join("outside.txt"), root.join("link.txt")).unwrap();
        assert_eq!(s.file(&root.join("link.txt")).status, 403);
    }
    // HTML and SVG come sandboxed: no script of theirs runs with the app's origin.
    let html = s.file(&root.join("page.html"));
    assert_eq!(html.status, 200);
    assert!(
        html.headers
            .contains("content-security-policy: sandbox allow-scripts; default-src 'none'"),
        "{}",
        html.headers
    );
    let svg = s.file(&root.join("pic.svg"));
    assert!(svg.headers.contains("content-type: image/svg+xml"));
    assert!(svg.headers.contains("content-security-policy: sandbox;"));
    // A cross-site request carrying the cookie is still refused.
    let q = format!("/api/file?path={}", root.join("notes.md").display());
    let cross = s.get(
        &q,
        &[
            ("Cookie", s.cookie()),
            ("Sec-Fetch-Site", "cross-site".into()),
        ],
    );
    assert_eq!(cross.status, 403);
    let foreign = s.get(&q, &[("Cookie", s.cookie()), ("Origin", "null".into())]);
    assert_eq!(foreign.status, 403);
    // The viewer's view of Markdown points its image at the route.
    let mut ws = s.ws();
    let v = ws
        .call(json!({"cmd": "view", "path": root.join("notes.md").display().to_string()}))
        .unwrap();
    assert_eq!(v["kind"]["kind"], "markdown");
    assert_eq!(v["display_path"], "notes.md");
    let html = v["view"]["html"].as_str().unwrap();
    assert!(html.contains("/api/file?path="), "{html}");
    let err = ws
        .call(json!({"cmd": "view", "path": root.join("secrets/key.txt").display().to_string()}))
        .unwrap_err();
    assert!(err.contains("denied"), "{err}");
    let err = ws
        .call(json!({"cmd": "view", "path": root.join("gone.md").display().to_string()}))
        .unwrap_err();
    assert!(err.contains("gone.md"), "{err}");
}

/// The review's findings: the viewer and the file route honoured deny rules but not the
/// credential folders (a chat working in the home folder showed `~/.ssh/id_rsa`), and
/// only the top-level `secrets/` was protected. Both follow the file tools' policy now,
/// through symlinks and `..` too.
#[cfg(unix)]
#[test]
fn the_viewer_refuses_credential_folders_and_secrets_at_any_depth() {
    let dir = tempfile::tempdir().unwrap();
    let home = std::fs::canonicalize(dir.path()).unwrap();
    const MARK: &str = "PRIVATE-KEY-MARKER";
    let secret_files = [
        ".ssh/id_rsa",
        ".aws/credentials",
        ".netrc",
        ".config/gh/hosts.yml",
        "app/config/secrets/prod.key",
        "app/secrets/x.md",
        "deep/a/b/secrets/c/d.txt",
    ];
    for f in secret_files {
        let p = home.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, format!("{MARK} {f}")).unwrap();
    }
    std::fs::write(home.join("notes.md"), "fine").unwrap();
    std::os::unix::fs::symlink(home.join(".ssh"), home.join("keys")).unwrap();
    std::os::unix::fs::symlink(home.join("app/config/secrets"), home.join("cfg")).unwrap();
    let s = serve_with(
        &home.join(".local/share/skald"),
        &home,
        None,
        &[("HOME", home.to_str().unwrap())],
    );
    assert_eq!(s.file(&home.join("notes.md")).status, 200);
    let mut tries: Vec<std::path::PathBuf> = secret_files.iter().map(|f| home.join(f)).collect();
    tries.extend([
        home.join("keys/id_rsa"),
        home.join("cfg/prod.key"),
        home.join("app/x/../config/secrets/prod.key"),
        home.join(".ssh"),
        home.join("app/secrets"),
    ]);
    let mut ws = s.ws();
    for path in &tries {
        let r = s.file(path);
        assert_eq!(r.status, 403, "{}", path.display());
        assert!(
            !String::from_utf8_lossy(&r.body).contains(MARK),
            "{}",
            path.display()
        );
        let err = ws
            .call(json!({"cmd": "view", "path": path.display().to_string()}))
            .unwrap_err();
        assert!(!err.contains(MARK), "{err}");
        assert!(
            err.contains("secrets") || err.contains("credentials") || err.contains("approval"),
            "{}: {err}",
            path.display()
        );
    }
}

#[test]
fn a_followed_file_reports_its_changes_until_unsubscribed() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let doc = root.join("doc.md");
    std::fs::write(&doc, "one").unwrap();
    let s = serve(&root.join("data"), &root, None);
    let mut ws = s.ws();
    let path = doc.display().to_string();
    ws.call(json!({"cmd": "subscribe", "path": path})).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    // An editor's save: a temporary file renamed over the original.
    std::fs::write(root.join(".doc.md.tmp"), "two").unwrap();
    std::fs::rename(root.join(".doc.md.tmp"), &doc).unwrap();
    let changed = ws.event(|e| e["type"] == "file_changed");
    assert_eq!(changed["event"]["path"], path);
    assert!(changed["session_id"].is_null());
    ws.call(json!({"cmd": "unsubscribe", "path": path}))
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(&doc, "three").unwrap();
    // Nothing more comes: a later command's reply arrives with no event before it.
    std::thread::sleep(Duration::from_millis(1500));
    ws.call(json!({"cmd": "list_sessions"})).unwrap();
    assert!(
        !ws.events
            .iter()
            .any(|e| e["event"]["type"] == "file_changed"),
        "{:?}",
        ws.events
    );
}

#[test]
fn latex_builds_through_the_protocol_with_errors_at_their_line() {
    let bundle = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/tex/bundle.zip"
    ));
    if !bundle.exists() {
        panic!("tests/tex/bundle.zip is missing: run scripts/setup.sh --test");
    }
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let tex = root.join("paper.tex");
    std::fs::write(
        &tex,
        "\\documentclass{article}\n\\begin{document}\nHello.\n\\end{document}\n",
    )
    .unwrap();
    let s = serve(&root.join("data"), &root, None);
    let mut ws = s.ws();
    let path = tex.display().to_string();
    ws.call(json!({"cmd": "subscribe", "path": path})).unwrap();
    let b = ws
        .call(json!({"cmd": "latex_build", "path": path}))
        .unwrap();
    assert_eq!(b["ok"], true, "{b}");
    // What the build did, heard by every UI while it ran: a first build makes the format.
    let stages: Vec<Value> = ws
        .events
        .iter()
        .filter(|e| e["event"]["type"] == "latex_progress" && e["event"]["path"] == path)
        .map(|e| e["event"]["stage"].clone())
        .collect();
    assert_eq!(
        stages.first(),
        Some(&json!({"stage": "format"})),
        "{stages:?}"
    );
    assert!(
        stages.contains(&json!({"stage": "tex", "pass": 1})),
        "{stages:?}"
    );
    assert_eq!(stages.last(), Some(&json!({"stage": "pdf"})), "{stages:?}");
    let url = b["pdf_url"].as_str().unwrap();
    let pdf = s.get(url, &[("Cookie", s.cookie())]);
    assert_eq!(pdf.status, 200);
    assert!(pdf.headers.contains("content-type: application/pdf"));
    assert!(pdf.body.starts_with(b"%PDF"));
    let again = ws
        .call(json!({"cmd": "latex_build", "path": path}))
        .unwrap();
    assert_eq!(again["from_cache"], true);
    // An edit is reported; the rebuild fails with the line of the error.
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(
        &tex,
        "\\documentclass{article}\n\\begin{document}\nHello.\n\\undefinedmacro\n\\end{document}\n",
    )
    .unwrap();
    let changed = ws.event(|e| e["type"] == "file_changed");
    assert_eq!(changed["event"]["path"], path);
    let bad = ws
        .call(json!({"cmd": "latex_build", "path": path}))
        .unwrap();
    assert_eq!(bad["ok"], false);
    let e = &bad["errors"][0];
    assert_eq!(e["line"], 4, "{bad}");
    assert!(e["file"].as_str().unwrap().ends_with("paper.tex"), "{bad}");
}

#[test]
fn the_offline_tex_bundle_is_built_from_the_ui_and_used_by_the_next_build() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let data = root.join("data");
    // No bundle named: previews use the online bundle until the offline one exists.
    let s = serve_with(&data, &root, None, &[("SKALD_TEX_BUNDLE", "")]);
    let mut ws = s.ws();
    let before = ws.call(json!({"cmd": "settings"})).unwrap();
    let tex = &before["tex"];
    assert_eq!(tex["offline"], false, "{before}");
    assert!(tex["bundle"].as_str().unwrap().contains("online"), "{tex}");
    assert!(
        tex["system_tex"].is_string(),
        "scripts/setup.sh --test installs TeX Live: {tex}"
    );
    let built = ws.call(json!({"cmd": "build_tex_bundle"})).unwrap();
    let zip = data.join("tex").join("bundle.zip");
    assert_eq!(built["path"], zip.display().to_string(), "{built}");
    assert!(built["files"].as_u64().unwrap() > 1000, "{built}");
    assert_eq!(
        built["bytes"].as_u64().unwrap(),
        std::fs::metadata(&zip).unwrap().len()
    );
    let last = ws.event(|e| e["type"] == "tex_bundle" && e["done"] == e["total"]);
    assert_eq!(
        last["event"]["total"].as_u64().unwrap() + 2,
        built["files"].as_u64().unwrap()
    );
    assert!(!data.join("tex").join("bundle.zip.partial").exists());
    let after = ws.call(json!({"cmd": "settings"})).unwrap();
    assert_eq!(after["tex"]["offline"], true, "{after}");
    assert_eq!(
        after["tex"]["bundle"],
        format!("offline bundle at {}", zip.display())
    );
    // The running server's next compile uses it.
    let paper = root.join("paper.tex");
    std::fs::write(
        &paper,
        "\\documentclass{article}\n\\begin{document}\nOffline.\n\\end{document}\n",
    )
    .unwrap();
    let b = ws
        .call(json!({"cmd": "latex_build", "path": paper.display().to_string()}))
        .unwrap();
    assert_eq!(b["ok"], true, "{b}");
}

#[test]
fn a_looping_latex_build_is_stopped_through_the_protocol_and_the_next_one_works() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let tex = root.join("loop.tex");
    std::fs::write(
        &tex,
        "\\documentclass{article}\n\\begin{document}\n\\def\\x{\\x}\\x\n\\end{document}\n",
    )
    .unwrap();
    let s = serve(&root.join("data"), &root, None);
    let mut ws = s.ws();
    let path = tex.display().to_string();
    let send = |ws: &mut Ws, id: u64, command: Value| {
        let req = json!({"id": id, "command": command});
        ws.socket
            .send(tungstenite::Message::Text(req.to_string().into()))
            .unwrap();
    };
    // The build's reply comes only once it is stopped; `latex_stop` is sent until one
    // finds the build under way.
    send(&mut ws, 1000, json!({"cmd": "latex_build", "path": path}));
    let until = Instant::now() + Duration::from_secs(60);
    let (mut build, mut stopped, mut stop_id) = (None, false, 2000);
    let mut next_stop = Instant::now();
    while build.is_none() {
        assert!(Instant::now() < until, "the build was never stopped");
        if !stopped && Instant::now() >= next_stop {
            stop_id += 1;
            send(&mut ws, stop_id, json!({"cmd": "latex_stop", "path": path}));
            next_stop = Instant::now() + Duration::from_millis(300);
        }
        let Some(m) = ws.recv(Instant::now() + Duration::from_millis(100)) else {
            continue;
        };
        if m["id"] == 1000 {
            build = Some(m["reply"].clone());
        } else if m["reply"]["cmd"] == "latex_stop" && m["reply"]["stopped"] == true {
            stopped = true;
        }
    }
    let build = build.unwrap();
    assert!(stopped);
    assert_eq!(build["ok"], false, "{build}");
    assert_eq!(build["message"], "the build was stopped", "{build}");
    let r = ws.call(json!({"cmd": "latex_stop", "path": path})).unwrap();
    assert_eq!(r["stopped"], false, "nothing is left running");
    // The next build of the same server works.
    std::fs::write(
        &tex,
        "\\documentclass{article}\n\\begin{document}\nFixed.\n\\end{document}\n",
    )
    .unwrap();
    let ok = ws
        .call(json!({"cmd": "latex_build", "path": path}))
        .unwrap();
    assert_eq!(ok["ok"], true, "{ok}");
}

#[test]
fn a_provider_configured_from_the_ui_is_used_at_once_and_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let model = ScriptedServer::new(vec![answer("Configured and answering."), answer("again")]);
    let s = serve(&data, dir.path(), None);
    let mut ws = s.ws();
    let bad = ws
        .call(
            json!({"cmd": "configure_model", "kind": "openai", "model": "m",
            "base_url": "ftp://nowhere"}),
        )
        .unwrap_err();
    assert!(bad.contains("http://"), "{bad}");
    let r = ws
        .call(
            json!({"cmd": "configure_model", "kind": "openai", "model": "scripted-model",
            "base_url": model.base_url, "api_key": "sk-from-the-ui"}),
        )
        .unwrap();
    assert_eq!(r["models"][0], "openai/scripted-model");
    let id = new_chat(&mut ws);
    ws.call(json!({"cmd": "send_message", "session_id": id, "text": "hi"}))
        .unwrap();
    let done = ws.event(|e| e["type"] == "done");
    assert_eq!(done["event"]["text"], "Configured and answering.");
    let headers = model.recorded()[0].headers.to_ascii_lowercase();
    assert!(
        headers.contains("authorization: bearer sk-from-the-ui"),
        "{headers}"
    );
    // The key is a secret, never in config.toml.
    let config = std::fs::read_to_string(data.join("config.toml")).unwrap();
    assert!(
        config.contains("default = \"openai/scripted-model\""),
        "{config}"
    );
    assert!(!config.contains("sk-from-the-ui"));
    let secrets = ws.call(json!({"cmd": "list_secrets"})).unwrap();
    assert_eq!(secrets["names"], json!(["SKALD_OPENAI_API_KEY"]));
    drop(ws);
    drop(s);
    // A new server finds the provider in config.toml and its key among the secrets — a
    // stale key in the environment does not shadow the one typed in the UI.
    let s = serve_with(
        &data,
        dir.path(),
        None,
        &[("OPENAI_API_KEY", "sk-stale-from-the-shell")],
    );
    let mut ws = s.ws();
    let settings = ws.call(json!({"cmd": "settings"})).unwrap();
    assert_eq!(settings["models"], json!(["openai/scripted-model"]));
    let t = ws.call(json!({"cmd": "test_model"})).unwrap();
    assert_eq!(t["ok"], true, "{t}");
    let headers = model.recorded()[1].headers.to_ascii_lowercase();
    assert!(
        headers.contains("authorization: bearer sk-from-the-ui"),
        "{headers}"
    );
}

#[test]
fn a_scheduled_job_is_edited_toggled_and_removed_from_the_ui() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let added = skald(&data, None)
        .args([
            "cron",
            "add",
            "--agent",
            "researcher",
            "--cron",
            "0 9 * * *",
            "--tz",
            "UTC",
            "--prompt",
            "Summarise the notes",
            "--json",
        ])
        .output()
        .unwrap();
    let job: Value = serde_json::from_str(&crate::common::ok(&added)).unwrap();
    let id = job["id"].as_i64().unwrap();
    let s = serve(&data, dir.path(), None);
    let mut ws = s.ws();
    let err = ws
        .call(
            json!({"cmd": "update_cron", "id": id, "name": "n", "prompt": "p",
            "cron": "61 * * * *", "timezone": "UTC"}),
        )
        .unwrap_err();
    assert!(err.contains("61"), "{err}");
    let err = ws
        .call(
            json!({"cmd": "update_cron", "id": id, "name": "n", "prompt": "p",
            "cron": "0 9 * * *", "timezone": "Mars/Olympus"}),
        )
        .unwrap_err();
    assert!(err.contains("Mars/Olympus"), "{err}");
    let r = ws
        .call(json!({"cmd": "update_cron", "id": id, "name": "Evening digest",
            "prompt": "Summarise today's notes", "cron": "30 18 * * *", "timezone": "Europe/Berlin"}))
        .unwrap();
    assert_eq!(r["job"]["cron"], "30 18 * * *");
    assert_eq!(r["job"]["timezone"], "Europe/Berlin");
    assert_ne!(r["job"]["next_run_at"], job["next_run_at"]);
    ws.call(json!({"cmd": "set_cron_enabled", "id": id, "enabled": false}))
        .unwrap();
    let jobs = ws.call(json!({"cmd": "list_cron"})).unwrap();
    assert_eq!(jobs["jobs"][0]["enabled"], false);
    assert_eq!(jobs["jobs"][0]["name"], "Evening digest");
    ws.call(json!({"cmd": "remove_cron", "id": id})).unwrap();
    assert!(
        ws.call(json!({"cmd": "list_cron"})).unwrap()["jobs"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn plugins_are_switched_and_configured_from_the_ui() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve(&dir.path().join("data"), dir.path(), None);
    let mut ws = s.ws();
    let err = ws
        .call(json!({"cmd": "configure_plugin", "id": "nope", "enabled": true}))
        .unwrap_err();
    assert!(err.contains("image-generation"), "{err}");
    let err = ws
        .call(json!({"cmd": "configure_plugin", "id": "image-generation",
            "config": {"model": 7}}))
        .unwrap_err();
    assert!(err.contains("does not fit"), "{err}");
    let ok = ws
        .call(
            json!({"cmd": "configure_plugin", "id": "image-generation", "enabled": true,
            "config": {"api_key": "${secret:IMAGES_KEY}", "model": "gpt-image-1"}}),
        )
        .unwrap();
    assert!(ok["message"].as_str().unwrap().contains("on"), "{ok}");
    let list = ws.call(json!({"cmd": "list_plugins"})).unwrap();
    let p = &list["plugins"][0];
    assert_eq!(p["id"], "image-generation");
    assert_eq!(p["enabled"], true);
    assert_eq!(p["config"]["api_key"], "${secret:IMAGES_KEY}");
    ws.call(json!({"cmd": "configure_plugin", "id": "image-generation", "enabled": false}))
        .unwrap();
    let list = ws.call(json!({"cmd": "list_plugins"})).unwrap();
    assert_eq!(list["plugins"][0]["enabled"], false);
}

/// An MCP server switched off from the UI is disconnected at once, and switched on again
/// it connects: the same operation the agents' toggle_item runs. (The UI's switch used to
/// only write the setting, so a running server stayed connected until a restart.)
#[test]
fn an_mcp_server_switched_from_the_ui_disconnects_and_reconnects() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    crate::mcp::add_everything(&data);
    let s = serve(&data, dir.path(), None);
    let mut ws = s.ws();
    let state = |ws: &mut Ws| -> String {
        let list = ws.call(json!({"cmd": "list_mcp"})).unwrap();
        list["servers"][0]["status"]["state"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let wait_for_state = |ws: &mut Ws, want: &str| {
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            let now = state(ws);
            if now == want {
                return;
            }
            assert!(Instant::now() < until, "still {now}, not {want}");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    wait_for_state(&mut ws, "ready");
    ws.call(json!({"cmd": "set_mcp_enabled", "name": "everything", "enabled": false}))
        .unwrap();
    assert_eq!(state(&mut ws), "disabled");
    ws.call(json!({"cmd": "set_mcp_enabled", "name": "everything", "enabled": true}))
        .unwrap();
    wait_for_state(&mut ws, "ready");
    let err = ws
        .call(json!({"cmd": "set_mcp_enabled", "name": "nope", "enabled": true}))
        .unwrap_err();
    assert!(!err.is_empty());
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_the_server_even_while_a_window_is_connected() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let dir = tempfile::tempdir().unwrap();
    let mut s = serve(&dir.path().join("data"), dir.path(), None);
    let mut ws = s.ws();
    ws.call(json!({"cmd": "list_sessions"})).unwrap();
    kill(Pid::from_raw(s.child.id() as i32), Signal::SIGINT).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(st) = s.child.try_wait().unwrap() {
            break st;
        }
        assert!(Instant::now() < deadline, "the server is still running");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status.code(), Some(0));
}

#[test]
fn an_approved_restart_starts_the_server_again_at_the_same_address_with_every_chat() {
    let dir = tempfile::tempdir().unwrap();
    let model = ScriptedServer::new(vec![
        tool_call("r1", "restart", r#"{"reason": "new settings"}"#),
        answer("Restarting now."),
        tool_call("c1", "execute_cmd", r#"{"command": "env"}"#),
        answer("Listed."),
    ]);
    // The command is approved too (as it would be with no sandbox), so it runs only after
    // the restart.
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    std::fs::write(
        dir.path().join("data/config.toml"),
        "[sandbox]\nask = \"always\"\n",
    )
    .unwrap();
    let mut s = serve(&dir.path().join("data"), dir.path(), Some(&model));
    let mut ws = s.ws();
    let id = new_chat(&mut ws);
    ws.call(json!({"cmd": "send_message", "session_id": id, "text": "restart please"}))
        .unwrap();
    // Restarting is approved first, like a shell command.
    let wait = ws.event(|e| e["type"] == "approval_required");
    let inbox_id = wait["event"]["inbox_id"].as_i64().unwrap();
    let inbox = ws.call(json!({"cmd": "inbox"})).unwrap();
    assert_eq!(inbox["items"][0]["title"], "Restart Skald: new settings");
    ws.call(json!({"cmd": "answer", "inbox_id": inbox_id, "answer": {"decision": "approve"}}))
        .unwrap();
    // The turn ends with its answer before the server goes.
    ws.event(|e| e["type"] == "done");
    let until = Instant::now() + Duration::from_secs(60);
    let mut said = Vec::new();
    let again = loop {
        let left = until.saturating_duration_since(Instant::now());
        match s.lines.recv_timeout(left) {
            Ok(l) if l.starts_with("Skald is restarted") => break l,
            Ok(l) => said.push(l),
            Err(e) => panic!("no restart ({e}); the server said {said:?}"),
        }
    };
    assert!(said.iter().any(|l| l.contains("restarting")), "{said:?}");
    // The same URL: the open tab's cookie still works.
    assert!(
        again.contains(&format!("http://{}:{}/?token={}", s.name, s.port, s.token)),
        "{again}"
    );
    // On Unix the process image was replaced: the same process, still running.
    assert!(s.child.try_wait().unwrap().is_none());
    let mut ws = loop {
        match s.ws_with(Some(&format!("http://127.0.0.1:{}", s.port)), true) {
            Ok(ws) => break ws,
            Err(e) => {
                assert!(Instant::now() < until, "cannot reconnect: {e}");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    };
    let h = ws
        .call(json!({"cmd": "history", "session_id": id}))
        .unwrap();
    let calls = h["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["name"], "restart");
    assert_eq!(calls[0]["status"], "done");
    let last = h["messages"].as_array().unwrap().last().unwrap().clone();
    assert!(last.to_string().contains("Restarting now."), "{last}");
    // The token handed over is not handed on to the commands the agents run.
    ws.call(json!({"cmd": "send_message", "session_id": id, "text": "show env"}))
        .unwrap();
    let wait = ws.event(|e| e["type"] == "approval_required");
    let inbox_id = wait["event"]["inbox_id"].as_i64().unwrap();
    ws.call(json!({"cmd": "answer", "inbox_id": inbox_id, "answer": {"decision": "approve"}}))
        .unwrap();
    ws.event(|e| e["type"] == "done");
    let h = ws
        .call(json!({"cmd": "history", "session_id": id}))
        .unwrap();
    let out = h["tool_calls"][1]["result"].as_str().unwrap().to_string();
    assert!(out.contains("PATH="), "{out}");
    assert!(!out.contains("SKALD_RESTART"), "{out}");
    assert!(!out.contains(&s.token), "{out}");
}

/// The researcher's system prompt contains this; the routed model server tells its
/// requests (the cron job's, the background task's) from the chats' by it.
const RESEARCHER: &str = "meticulous researcher";
/// The extra prompt of the chat that starts the background task, which routes its
/// requests.
const TASK_STARTER: &str = "load-test task starter";
const CHATS: usize = 20;
const TURNS: usize = 10;
/// Model rounds in a turn when the script is not interleaved: nine reads, then the answer.
const ROUNDS: usize = 10;

/// Which percentile of `v` (sorted in place).
fn percentile(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v.get(((v.len() as f64 - 1.0) * p).round() as usize)
        .copied()
        .unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// The load test: 20 chats in one `skald serve` run tool rounds at once, while a
/// `skald cron run` process runs a job every two seconds and a chat's background task
/// works — against one scripted model server. Every turn must end with its answer (no
/// failed model call, no failed tool), nothing may stall (each wait is bounded), and the
/// store must be whole and consistent afterwards. It reports throughput and the round
/// overhead (a read_file round against an instant model) beside a raw HTTP client's
/// round trips to the same kind of server; `SKALD_LOAD_REPORT=FILE` writes that report as
/// Markdown (`scripts/bench.sh` puts it in docs/performance.md).
#[test]
fn twenty_chats_a_cron_job_and_a_background_task_run_at_once() {
    let read = |i: usize| tool_call(&format!("r{i}"), "read_file", r#"{"path": "tiny.txt"}"#);
    let mut chat_script = Vec::new();
    for i in 0..CHATS * TURNS * 3 {
        chat_script.extend((0..ROUNDS - 1).map(|j| read(i * ROUNDS + j)));
        chat_script.push(answer("Read it."));
    }
    let mut researcher_script = Vec::new();
    for i in 0..400 {
        researcher_script.push(read(i));
        researcher_script.push(answer("tiny.txt says tiny."));
    }
    let task_starter = vec![
        tool_call(
            "task",
            "execute_task",
            r#"{"mode": "async", "title": "Read tiny", "agent_id": "researcher", "prompt": "What does tiny.txt say?"}"#,
        ),
        answer("Started a background task."),
        answer("The task reported back."),
    ];
    let server = ScriptedServer::routed(vec![
        (RESEARCHER, researcher_script),
        (TASK_STARTER, task_starter),
        ("", chat_script),
    ]);
    let (data, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(root.path().join("tiny.txt"), "tiny\n").unwrap();
    // The chats draw on one script, so a turn's rounds vary around ten; none may end as
    // "exhausted" for it.
    std::fs::write(
        data.path().join("config.toml"),
        "[agent]\nmax_rounds = 1000\n",
    )
    .unwrap();
    let job = skald(data.path(), None)
        .args([
            "cron",
            "add",
            "--agent",
            "researcher",
            "--name",
            "pulse",
            "--tz",
            "UTC",
        ])
        .args([
            "--prompt",
            "Check tiny.txt",
            "--cron",
            "*/2 * * * * *",
            "--json",
            "--cwd",
        ])
        .arg(root.path())
        .output()
        .unwrap();
    let job: Value = serde_json::from_str(&crate::common::ok(&job)).unwrap();
    let srv = serve(data.path(), root.path(), Some(&server));
    let scheduler = skald(data.path(), Some(&server))
        .args(["cron", "run"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    // A chat of its own (a `skald exec` whose extra prompt routes its requests) starts the
    // background task and waits for its report.
    let tasker = skald(data.path(), Some(&server))
        .args(["exec", "--json", "--extra-prompt", TASK_STARTER, "--cwd"])
        .arg(root.path())
        .arg("read tiny.txt in the background")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    let started = Instant::now();
    let chats: Vec<_> = (0..CHATS)
        .map(|_| {
            let mut ws = srv.ws();
            let id = new_chat(&mut ws);
            std::thread::spawn(move || {
                let mut gaps = Vec::new();
                let mut rounds = 0;
                for t in 0..TURNS {
                    ws.call(json!({"cmd": "send_message", "session_id": id, "text": format!("turn {t}")}))
                        .unwrap();
                    let until = Instant::now() + Duration::from_secs(120);
                    let mut last_done: Option<Instant> = None;
                    loop {
                        let m = ws
                            .recv(until)
                            .unwrap_or_else(|| panic!("chat {id}: turn {t} stalled"));
                        let at = Instant::now();
                        if m["type"] != "event" || m["session_id"] != id {
                            continue;
                        }
                        let ev = &m["event"];
                        match ev["type"].as_str().unwrap() {
                            "llm_failed" | "tool_error" | "error" | "tool_rejected" => {
                                panic!("chat {id}: {ev}")
                            }
                            "tool_start" => {
                                rounds += 1;
                                if let Some(d) = last_done.take() {
                                    gaps.push(at - d);
                                }
                            }
                            "tool_done" => last_done = Some(at),
                            "done" => {
                                assert_eq!(ev["outcome"], "final", "chat {id}: {ev}");
                                break;
                            }
                            _ => {}
                        }
                    }
                }
                (id, rounds, gaps)
            })
        })
        .collect();
    let mut gaps = Vec::new();
    let mut rounds = 0;
    let mut ids = Vec::new();
    for c in chats {
        let (id, r, g) = c.join().unwrap();
        ids.push(id);
        rounds += r;
        gaps.extend(g);
    }
    let wall = started.elapsed();

    let out = tasker.wait_with_output().unwrap();
    let text = crate::common::ok(&out);
    assert!(text.contains("The task reported back."), "{text}");
    // At least one of the job's runs has finished (a fast machine may be done with the
    // chats before the first one is); then the scheduler stops.
    let job_id = job["id"].as_i64().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !skald_store::Store::open(data.path().join("skald.db"))
        .unwrap()
        .list_runs(job_id)
        .unwrap()
        .iter()
        .any(|r| r.status == skald_store::RunStatus::Done)
    {
        assert!(
            Instant::now() < deadline,
            "the cron job never finished a run"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(scheduler.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = scheduler.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let store = skald_store::Store::open(data.path().join("skald.db")).unwrap();
    store.integrity_check().unwrap();
    let runs = store.list_runs(job_id).unwrap();
    let done_runs = runs
        .iter()
        .filter(|r| r.status == skald_store::RunStatus::Done)
        .count();
    assert!(done_runs >= 1, "no cron run finished: {runs:?}");
    assert!(
        runs.iter().all(|r| matches!(
            r.status,
            skald_store::RunStatus::Done | skald_store::RunStatus::Interrupted
        )),
        "{runs:?}"
    );
    for s in store.list_sessions().unwrap() {
        for c in store.list_tool_calls(s.id).unwrap() {
            assert!(!c.status.is_unfinished(), "session {}: {c:?}", s.id);
        }
    }
    for id in &ids {
        let msgs = store.list_messages(*id).unwrap();
        let users = msgs
            .iter()
            .filter(|m| m.role == skald_store::Role::User)
            .count();
        assert_eq!(users, TURNS, "chat {id}");
        assert!(
            msgs.iter()
                .all(|m| m.status != skald_store::MessageStatus::Streaming),
            "chat {id}"
        );
        assert_eq!(msgs.last().unwrap().content, "Read it.", "chat {id}");
    }

    // The reference: a raw HTTP client, 20 threads of sequential requests to the same
    // kind of server with the same reply.
    let raw = ScriptedServer::cycling(vec![read(0)]);
    let addr = raw.host();
    let body = server.recorded()[1].body.to_string();
    let raw_started = Instant::now();
    let clients: Vec<_> = (0..CHATS)
        .map(|_| {
            let (addr, body) = (addr.clone(), body.clone());
            std::thread::spawn(move || {
                let mut times = Vec::new();
                for _ in 0..TURNS * ROUNDS {
                    let t = Instant::now();
                    let mut s = TcpStream::connect(&addr).unwrap();
                    write!(
                        s,
                        "POST /v1/chat/completions HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    )
                    .unwrap();
                    let mut reply = Vec::new();
                    s.read_to_end(&mut reply).unwrap();
                    assert!(reply.starts_with(b"HTTP/1.1 200"));
                    times.push(t.elapsed());
                }
                times
            })
        })
        .collect();
    let mut raw_times: Vec<Duration> = clients
        .into_iter()
        .flat_map(|c| c.join().unwrap())
        .collect();
    let raw_wall = raw_started.elapsed();

    let (p50, p99) = (percentile(&mut gaps, 0.5), percentile(&mut gaps, 0.99));
    let (raw50, raw99) = (
        percentile(&mut raw_times, 0.5),
        percentile(&mut raw_times, 0.99),
    );
    let throughput = rounds as f64 / wall.as_secs_f64();
    let raw_throughput = raw_times.len() as f64 / raw_wall.as_secs_f64();
    let report = format!(
        "{CHATS} chats in one `skald serve`, each sending {TURNS} messages in a row; a turn is read_file rounds against an instant scripted model (one script of nine reads and an answer, drawn on by all chats at once, so about ten rounds a turn); meanwhile `skald cron run` runs a researcher job every 2 s and a background task works. Round overhead: from a call's `tool_done` to the next call's `tool_start` in the same chat, as the WebSocket client sees it (the engine stores the result, asks the model over HTTP, parses its stream, checks the approval rules and starts the tool). Reference: a raw HTTP/1.1 client, {CHATS} threads each sending the same request {} times in a row to the same kind of server. Errors: 0 (every turn ended with its answer); cron runs finished: {done_runs}.\n\n\
         | | rounds | wall time | throughput | p50 | p99 |\n| --- | --- | --- | --- | --- | --- |\n\
         | Skald, {CHATS} chats | {rounds} | {:.2} s | {throughput:.0} rounds/s | {} | {} |\n\
         | raw HTTP client, {CHATS} threads | {} | {:.2} s | {raw_throughput:.0} requests/s | {} | {} |\n\
         | **ratio** | | | {:.2}× | {:.2}× | {:.2}× |\n",
        TURNS * ROUNDS,
        wall.as_secs_f64(),
        ms(p50),
        ms(p99),
        raw_times.len(),
        raw_wall.as_secs_f64(),
        ms(raw50),
        ms(raw99),
        raw_throughput / throughput,
        p50.as_secs_f64() / raw50.as_secs_f64(),
        p99.as_secs_f64() / raw99.as_secs_f64(),
    );
    eprintln!("{report}");
    if let Ok(path) = std::env::var("SKALD_LOAD_REPORT") {
        std::fs::write(path, &report).unwrap();
    }
}

/// A chat's own sandbox setting (set from the UI) decides its next turn's commands: off,
/// a command waits for approval; workspace-write, it runs sandboxed without asking. The
/// setting is kept with the chat.
#[test]
fn a_chats_own_sandbox_setting_decides_whether_its_commands_ask() {
    let dir = tempfile::tempdir().unwrap();
    let model = ScriptedServer::new(vec![
        tool_call("c1", "execute_cmd", r#"{"command": "touch off.txt"}"#),
        answer("Asked."),
        tool_call("c2", "execute_cmd", r#"{"command": "touch boxed.txt"}"#),
        answer("Ran."),
    ]);
    let mut s = serve(&dir.path().join("data"), dir.path(), Some(&model));
    let mut ws = s.ws();
    let id = new_chat(&mut ws);
    let info = ws
        .call(json!({"cmd": "sandbox", "session_id": id}))
        .unwrap();
    assert_eq!(info["sandbox"]["mode"], "workspace-write", "{info}");
    let set = ws
        .call(json!({"cmd": "set_sandbox", "session_id": id, "mode": "off", "network": false}))
        .unwrap();
    assert_eq!(set["sandbox"]["mode"], "off", "{set}");
    assert_eq!(
        ws.call(json!({"cmd": "sandbox", "session_id": id}))
            .unwrap()["sandbox"]["mode"],
        "off"
    );
    ws.call(json!({"cmd": "send_message", "session_id": id, "text": "touch it"}))
        .unwrap();
    let wait = ws.event(|e| e["type"] == "approval_required");
    let inbox_id = wait["event"]["inbox_id"].as_i64().unwrap();
    let inbox = ws.call(json!({"cmd": "inbox"})).unwrap();
    let item = &inbox["items"][0];
    assert_eq!(item["payload"]["sandbox"]["mode"], "off", "{item}");
    ws.call(json!({"cmd": "answer", "inbox_id": inbox_id, "answer": {"decision": "reject", "note": "no"}}))
        .unwrap();
    ws.event(|e| e["type"] == "done");
    assert!(!dir.path().join("off.txt").exists());

    ws.call(json!({"cmd": "set_sandbox", "session_id": id, "mode": "workspace-write", "network": false}))
        .unwrap();
    ws.call(json!({"cmd": "send_message", "session_id": id, "text": "again"}))
        .unwrap();
    ws.event(|e| e["type"] == "tool_done" && e["tool_call_id"] == "c2");
    ws.event(|e| e["type"] == "done");
    assert!(dir.path().join("boxed.txt").exists());
    assert!(s.child.try_wait().unwrap().is_none());
}

/// Whether process `pid` is gone: no longer in /proc, or a husk with nothing left of it.
fn gone(pid: &str) -> bool {
    // An empty command line is also what a process shows for a moment while it execs
    // (`exec sleep 300` right after writing its pid): gone only if it stays empty.
    let empty =
        || std::fs::read(format!("/proc/{}/cmdline", pid.trim())).map_or(true, |c| c.is_empty());
    empty() && {
        std::thread::sleep(Duration::from_millis(100));
        empty()
    }
}

/// What the system says of these processes, for a failure's message: the first lines of
/// `/proc/PID/status` (name, state, parent) and the command line.
fn states(pids: &[&str]) -> String {
    pids.iter()
        .map(|pid| {
            let pid = pid.trim();
            let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
                .map(|s| s.lines().take(7).collect::<Vec<_>>().join("; "))
                .unwrap_or_else(|e| e.to_string());
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
                .unwrap_or_default();
            format!("[{pid}: {status}; cmdline {cmdline:?}]")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Waits up to ten seconds for `done`; whether it came.
fn within_10s(mut done: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

/// Issue #47 item 4: a process the agent wants to keep is asked for (`background: true`).
/// The call returns at once; the process, and a process it started, run on; the agent
/// reads what it wrote with check_process; the chat lists it with its output; stopping it
/// ends it and what it started; deleting its chat ends another; and a process left
/// running when Skald is killed outright does not outlive it.
#[test]
fn a_background_process_runs_on_until_stopped_its_chat_deleted_or_skald_gone() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().canonicalize().unwrap();
    // Each writes its own pid and a child's (as the system sees them) once it has said
    // it is ready, then waits.
    let line = |tag: &str| {
        json!({
            "command": format!(
                "sh -c 'read -r p _ < /proc/self/stat; echo $p > {tag}.kid.tmp; \
                 mv {tag}.kid.tmp {tag}.kid; exec sleep 300' & \
                 echo ready-{tag}; read -r p _ < /proc/self/stat; echo $p > {tag}.tmp; \
                 mv {tag}.tmp {tag}.pid; wait"
            ),
            "background": true
        })
        .to_string()
    };
    let model = ScriptedServer::new(vec![
        tool_call("c1", "execute_cmd", &line("one")),
        answer("Started."),
        tool_call("c2", "check_process", r#"{"process_id": 1}"#),
        answer("It runs."),
        tool_call("c3", "execute_cmd", &line("two")),
        answer("Started another."),
        tool_call("c4", "execute_cmd", &line("three")),
        answer("And one more."),
    ]);
    let mut s = serve(&dir.path().join("data"), dir.path(), Some(&model));
    let mut ws = s.ws();
    let chat = new_chat(&mut ws);
    ws.call(json!({"cmd": "send_message", "session_id": chat, "text": "start the server"}))
        .unwrap();
    let started = ws.event(|e| e["type"] == "tool_done" && e["tool_call_id"] == "c1");
    let result = started["event"]["result"].as_str().unwrap().to_string();
    assert!(
        result.contains("started in the background as process 1"),
        "{result}"
    );
    let update = ws.event(|e| e["type"] == "process_update");
    assert_eq!(update["session_id"], chat, "{update}");
    assert_eq!(update["event"]["process"]["status"], "running", "{update}");
    ws.event(|e| e["type"] == "done");
    let pid = |name: &str| std::fs::read_to_string(w.join(name)).unwrap_or_default();
    assert!(within_10s(
        || !pid("one.pid").is_empty() && !pid("one.kid").is_empty()
    ));
    let (main, kid) = (pid("one.pid"), pid("one.kid"));
    assert!(
        !gone(&main) && !gone(&kid),
        "it runs on after its call: {}",
        states(&[&main, &kid])
    );

    // The person sees it and what it wrote.
    let listed = ws
        .call(json!({"cmd": "list_processes", "session_id": chat}))
        .unwrap();
    assert_eq!(listed["processes"][0]["status"], "running", "{listed}");
    assert!(
        listed["processes"][0]["command"]
            .as_str()
            .unwrap()
            .contains("ready-"),
        "{listed}"
    );
    let mut output = Value::Null;
    assert!(within_10s(|| {
        output = ws
            .call(json!({"cmd": "process_output", "session_id": chat, "process_id": 1}))
            .unwrap();
        output["output"].as_str().unwrap().contains("ready-one")
    }));
    // Another chat does not reach it.
    let other = new_chat(&mut ws);
    let err = ws
        .call(json!({"cmd": "stop_process", "session_id": other, "process_id": 1}))
        .unwrap_err();
    assert!(err.contains("no background process 1"), "{err}");
    assert!(!gone(&main));

    // The agent reads it.
    ws.call(json!({"cmd": "send_message", "session_id": chat, "text": "is it up?"}))
        .unwrap();
    let checked = ws.event(|e| e["type"] == "tool_done" && e["tool_call_id"] == "c2");
    let text = checked["event"]["result"].as_str().unwrap();
    assert!(
        text.contains("[process 1: running]") && text.contains("ready-one"),
        "{text}"
    );
    ws.event(|e| e["type"] == "done");

    // The person stops it: it and the process it started end.
    let stopped = ws
        .call(json!({"cmd": "stop_process", "session_id": chat, "process_id": 1}))
        .unwrap();
    assert_eq!(stopped["process"]["status"], "stopped", "{stopped}");
    assert!(
        within_10s(|| gone(&main) && gone(&kid)),
        "{}",
        states(&[&main, &kid])
    );

    // Deleting its chat ends another.
    ws.call(json!({"cmd": "send_message", "session_id": chat, "text": "another"}))
        .unwrap();
    ws.event(|e| e["type"] == "tool_done" && e["tool_call_id"] == "c3");
    ws.event(|e| e["type"] == "done");
    assert!(within_10s(
        || !pid("two.pid").is_empty() && !pid("two.kid").is_empty()
    ));
    let (main, kid) = (pid("two.pid"), pid("two.kid"));
    ws.call(json!({"cmd": "delete_session", "session_id": chat}))
        .unwrap();
    assert!(
        within_10s(|| gone(&main) && gone(&kid)),
        "{}",
        states(&[&main, &kid])
    );

    // Skald killed outright: what it left running goes with it.
    ws.call(json!({"cmd": "send_message", "session_id": other, "text": "one more"}))
        .unwrap();
    ws.event(|e| e["type"] == "tool_done" && e["tool_call_id"] == "c4");
    assert!(within_10s(
        || !pid("three.pid").is_empty() && !pid("three.kid").is_empty()
    ));
    let (main, kid) = (pid("three.pid"), pid("three.kid"));
    s.child.kill().unwrap();
    s.child.wait().unwrap();
    assert!(
        within_10s(|| gone(&main) && gone(&kid)),
        "{}",
        states(&[&main, &kid])
    );
}

/// A background task's processes belong to the chat that started the task: deleting that
/// chat ends them too, not only the chat's own (the attack review found them running on).
#[test]
fn deleting_a_chat_ends_the_background_processes_of_the_tasks_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().canonicalize().unwrap();
    let model = ScriptedServer::routed(vec![
        (
            "senior software engineer",
            vec![
                tool_call(
                    "t1",
                    "execute_cmd",
                    r#"{"command": "read -r p _ < /proc/self/stat; echo $p > task.tmp; mv task.tmp task.pid; exec sleep 300", "background": true}"#,
                ),
                answer("Started the server."),
            ],
        ),
        (
            "",
            vec![
                tool_call(
                    "c1",
                    "execute_task",
                    r#"{"mode": "async", "title": "Serve", "agent_id": "software-engineer", "prompt": "Start the server."}"#,
                ),
                answer("Started a task."),
                answer("The task reported back."),
                answer("Noted."),
            ],
        ),
    ]);
    let s = serve(&dir.path().join("data"), dir.path(), Some(&model));
    let mut ws = s.ws();
    let chat = new_chat(&mut ws);
    ws.call(json!({"cmd": "send_message", "session_id": chat, "text": "start a task"}))
        .unwrap();
    let pid = || std::fs::read_to_string(w.join("task.pid")).unwrap_or_default();
    assert!(
        within_10s(|| !pid().is_empty()),
        "the task never started it"
    );
    let pid = pid();
    assert!(!gone(&pid));
    // The chat may be busy with the task's report for a moment.
    let deleted = within_10s(|| {
        ws.call(json!({"cmd": "delete_session", "session_id": chat}))
            .is_ok()
    });
    assert!(deleted, "the chat could not be deleted");
    assert!(within_10s(|| gone(&pid)), "{pid} outlived its chat");
    drop(s);
}

/// The board of agents and how many run at once (docs/board.md): with Settings letting one
/// run, a second chat's turn waits in line and says so, the board shows one working and
/// one queued, a queued turn stopped ends without a model call, and the line moves on.
#[test]
fn the_board_shows_every_agent_and_turns_beyond_at_once_wait_in_line() {
    let top = skald_testkit::tempdir_seen_by_commands();
    let work = top.path().join("project");
    std::fs::create_dir(&work).unwrap();
    let work = std::fs::canonicalize(&work).unwrap();
    let model = ScriptedServer::new(vec![
        skald_testkit::delayed(2500, answer("First one done.")),
        answer("Second one done."),
    ]);
    let data = top.path().join("data");
    let s = serve(&data, &work, Some(&model));
    let mut ws = s.ws();
    let set = ws.call(json!({"cmd": "set_at_once", "count": 1})).unwrap();
    assert_eq!(set["count"], 1);
    assert_eq!(ws.call(json!({"cmd": "settings"})).unwrap()["at_once"], 1);
    let config = std::fs::read_to_string(data.join("config.toml")).unwrap();
    assert!(config.contains("at_once = 1"), "{config}");
    assert!(
        ws.call(json!({"cmd": "set_at_once", "count": 100000}))
            .is_err()
    );

    let (a, b, c) = (new_chat(&mut ws), new_chat(&mut ws), new_chat(&mut ws));
    ws.call(json!({"cmd": "send_message", "session_id": a, "text": "first"}))
        .unwrap();
    ws.event(|e| e["type"] == "turn_running" && e["session_id"] == a);
    ws.call(json!({"cmd": "send_message", "session_id": b, "text": "second"}))
        .unwrap();
    let queued = ws.event(|e| e["type"] == "turn_queued" && e["session_id"] == b);
    assert_eq!(queued["event"]["ahead"], 0, "{queued}");
    ws.call(json!({"cmd": "send_message", "session_id": c, "text": "third"}))
        .unwrap();
    let queued = ws.event(|e| e["type"] == "turn_queued" && e["session_id"] == c);
    assert_eq!(queued["event"]["ahead"], 1, "{queued}");

    let board = ws.call(json!({"cmd": "board"})).unwrap();
    let state = |board: &Value, id: i64| {
        board["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["session_id"] == id)
            .unwrap_or_else(|| panic!("{id} not on {board}"))["state"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        (state(&board, a), state(&board, b), state(&board, c)),
        ("working".into(), "queued".into(), "queued".into()),
        "{board}"
    );
    // The chat list says which chat waits, not only that it runs.
    let listed = ws.call(json!({"cmd": "list_sessions"})).unwrap();
    let flag = |id: i64| {
        listed["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .map(|s| (s["running"].clone(), s["queued"].clone()))
            .unwrap()
    };
    assert_eq!(flag(b), (json!(true), json!(true)), "{listed}");
    assert_eq!(flag(a), (json!(true), Value::Null), "{listed}");
    // Stopped while it waits: it ends at once, and never calls the model.
    ws.call(json!({"cmd": "stop", "session_id": c})).unwrap();
    let done = ws.event(|e| e["type"] == "done" && e["session_id"] == c);
    assert_eq!(done["event"]["outcome"], "cancelled");

    let done = ws.event(|e| e["type"] == "done" && e["session_id"] == a);
    assert_eq!(done["event"]["text"], "First one done.");
    // The second starts only once the first ended.
    ws.event(|e| e["type"] == "turn_running" && e["session_id"] == b);
    let done = ws.event(|e| e["type"] == "done" && e["session_id"] == b);
    assert_eq!(done["event"]["text"], "Second one done.");
    assert_eq!(model.recorded().len(), 2);

    let board = ws.call(json!({"cmd": "board"})).unwrap();
    assert_eq!(
        (state(&board, a), state(&board, b), state(&board, c)),
        ("done".into(), "done".into(), "stopped".into()),
        "{board}"
    );
    let first = board["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["session_id"] == a)
        .unwrap();
    assert_eq!(first["last_message"], "First one done.");
    assert_eq!(first["folder"], work.display().to_string());
    // It worked about as long as its model took to answer.
    assert!(first["active_ms"].as_u64().unwrap() >= 2000, "{first}");
    // Newest activity first.
    assert_eq!(board["agents"][0]["session_id"], b, "{board}");
}

/// Best of N (docs/worktrees.md): one prompt to two agents with different models, each in
/// its own worktree of one folder; their worktrees share a trial and their diffs differ;
/// one is applied and the other discarded. A model that cannot be used makes nothing.
#[test]
fn best_of_two_gives_one_prompt_to_two_models_in_their_own_worktrees() {
    let top = skald_testkit::tempdir_seen_by_commands();
    let work = top.path().join("essay");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(work.join("draft.md"), "first draft\n").unwrap();
    let work = std::fs::canonicalize(&work).unwrap();
    let cmd = json!({"command": "basename \"$PWD\" > draft.md"}).to_string();
    let model = ScriptedServer::new(vec![
        tool_call("c0", "execute_cmd", &cmd),
        tool_call("c1", "execute_cmd", &cmd),
        answer("Rewritten."),
        answer("Rewritten."),
    ]);
    let data = top.path().join("data");
    let s = serve(&data, &work, Some(&model));
    let mut ws = s.ws();
    // Too few agents, or a model whose provider has no key: refused, nothing made.
    assert!(
        ws.call(json!({"cmd": "best_of", "text": "x", "models": [null]}))
            .is_err()
    );
    let refused = ws
        .call(json!({"cmd": "best_of", "text": "x",
                     "models": [null, "anthropic/claude-sonnet-4-5"]}))
        .unwrap_err();
    assert!(refused.contains("no key"), "{refused}");
    let listed = ws.call(json!({"cmd": "list_worktrees"})).unwrap();
    assert_eq!(listed["worktrees"], json!([]), "{listed}");

    let made = ws
        .call(json!({"cmd": "best_of", "text": "rewrite the draft",
                     "models": [null, "openai/other-model"]}))
        .unwrap();
    assert_eq!(made["trial"], "essay-try1", "{made}");
    let chats: Vec<i64> = made["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_i64().unwrap())
        .collect();
    assert_eq!(chats.len(), 2);
    assert_eq!(made["sessions"][1]["model"], "openai/other-model");
    let mut ended = std::collections::BTreeSet::new();
    while ended.len() < 2 {
        let done = ws.event(|e| e["type"] == "done");
        assert_eq!(done["event"]["text"], "Rewritten.", "{done}");
        ended.insert(done["event"]["session_id"].as_i64().unwrap());
    }
    let models: std::collections::BTreeSet<String> = model
        .recorded()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        models,
        ["other-model", "scripted-model"]
            .map(String::from)
            .into_iter()
            .collect()
    );
    let listed = ws.call(json!({"cmd": "list_worktrees"})).unwrap();
    let trial: Vec<&Value> = listed["worktrees"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["trial"] == "essay-try1")
        .collect();
    assert_eq!(trial.len(), 2, "{listed}");
    // Side by side: each wrote its own answer.
    for letter in ["a", "b"] {
        let name = format!("essay-try1-{letter}");
        let diff = ws
            .call(json!({"cmd": "worktree_diff", "name": name}))
            .unwrap();
        assert_eq!(diff["files"][0]["path"], "draft.md");
        assert_eq!(
            diff["files"][0]["hunks"][0]["added"],
            json!([format!("{name}\n")]),
            "{diff}"
        );
    }
    // B is picked: applied; A discarded.
    let applied = ws
        .call(json!({"cmd": "apply_worktree", "name": "essay-try1-b"}))
        .unwrap();
    assert_eq!(applied["report"]["written"], json!(["draft.md"]));
    ws.call(json!({"cmd": "discard_worktree", "name": "essay-try1-a"}))
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(work.join("draft.md")).unwrap(),
        "essay-try1-b\n"
    );
    // The next trial of the folder is another.
    assert!(!top.path().join("data-worktrees/essay-try1-a").exists());
}

/// Settings → Web: `[web]` read with doctor's word on it, refused when it would not
/// work, written, and used by the chats from their next call without a restart.
#[test]
fn web_settings_are_shown_checked_written_and_used_at_once() {
    use skald_testkit::web::{Route, WebSite};
    let data = tempfile::tempdir().unwrap();
    let data = data.path();
    let dir = tempfile::tempdir().unwrap();
    let site = WebSite::new(vec![(
        "/searx/search",
        Route::ok("application/json", r#"{"results":[]}"#),
    )]);
    let model = ScriptedServer::new(vec![answer("One."), answer("Two.")]);
    let s = serve(data, dir.path(), Some(&model));
    let mut ws = s.ws();
    let settings = ws.call(json!({"cmd": "settings"})).unwrap();
    assert_eq!(settings["web"]["search"], "");
    // Which languages have a server here: every language Skald asks about is listed.
    let languages: Vec<&str> = settings["language_servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["language"].as_str().unwrap())
        .collect();
    assert_eq!(
        languages,
        ["python", "typescript", "rust", "go", "c"],
        "{settings}"
    );
    assert_eq!(settings["web"]["ready"], false);
    assert!(
        settings["web"]["hint"]
            .as_str()
            .unwrap()
            .contains("searxng"),
        "{settings}"
    );
    let set = |search: &str, url: &str, secs: u64| json!({"cmd": "set_web", "search": search, "search_url": url, "provider_search": true, "timeout_secs": secs});
    for (cmd, e) in [
        (set("searxng", "", 30), "needs search_url"),
        (set("google", "", 30), "not one of"),
        (set("searxng", "not a url", 30), "bad URL"),
        (set("searxng", &site.url("/searx"), 0), "1 to 600"),
    ] {
        let err = ws.call(cmd).unwrap_err();
        assert!(err.contains(e), "{err}");
    }
    let id = new_chat(&mut ws);
    ws.call(json!({"cmd": "send_message", "session_id": id, "text": "One?"}))
        .unwrap();
    ws.event(|e| e["type"] == "done");
    let first: Vec<String> = crate::common::offered(&model, 0);
    assert!(!first.iter().any(|t| t == "web_search"), "{first:?}");

    let reply = ws.call(set("searxng", &site.url("/searx"), 20)).unwrap();
    assert_eq!(reply["web"]["ready"], true, "{reply}");
    assert!(
        reply["web"]["status"]
            .as_str()
            .unwrap()
            .starts_with("searxng at"),
        "{reply}"
    );
    let config = std::fs::read_to_string(data.join("config.toml")).unwrap();
    assert!(
        config.contains("search = \"searxng\"") && config.contains("timeout_secs = 20"),
        "{config}"
    );
    ws.call(json!({"cmd": "send_message", "session_id": id, "text": "Two?"}))
        .unwrap();
    ws.event(|e| e["type"] == "done" && e.to_string().contains("Two."));
    let second = crate::common::offered(&model, 1);
    assert!(second.iter().any(|t| t == "web_search"), "{second:?}");
}
