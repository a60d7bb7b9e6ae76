//! A scripted model server for tests and benchmarks: real HTTP/1.1 over a real socket on
//! 127.0.0.1, answering each request with the next scripted reply. It records every
//! request (headers and JSON body) so tests can check what the engine sent.
//!
//! Faults are scripted inside a reply's body. A body containing `HOLD` is sent up to that
//! marker and the connection is then held open for a minute: a model that stalls
//! mid-answer. `RESET` sends up to the marker and resets the connection (RST). Directive
//! lines at the start of a body: `DELAY_MS=<n>` answers after n milliseconds (a slow
//! model), `DRIP_MS=<n>` sends one SSE event (or NDJSON line) every n milliseconds (a model
//! producing tokens), `RETRY_AFTER=<s>` adds that header (a rate limit), `HEADER=<name>:
//! <value>` any header (a provider's rate-limit statement). Test support only: it panics on
//! malformed requests instead of answering them.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test support may panic

pub mod hub;
pub mod terminal;
pub mod web;

/// A temporary folder that a sandboxed command sees as it is, for a test about what the
/// sandbox lets it do *there*: not in `/tmp` or `/var/tmp`, which each command sees as
/// private, empty folders of its own. Made in the home folder, removed when dropped.
pub fn tempdir_seen_by_commands() -> tempfile::TempDir {
    let home = std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .filter(|h| !h.starts_with("/tmp") && !h.starts_with("/var/tmp"))
        .expect("these tests need a home folder outside /tmp and /var/tmp");
    tempfile::Builder::new()
        .prefix(".skald-test-")
        .tempdir_in(home)
        .unwrap()
}

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// The ripgrep flags that make `rg` walk exactly what grep_files walks: hidden files
/// included, .gitignore respected outside git repositories too, and the directories
/// grep_files never enters skipped.
pub const RG_SAME_WALK: &[&str] = &[
    "--hidden",
    "--no-require-git",
    "--no-messages",
    "--color=never",
    "-g",
    "!.git",
    "-g",
    "!node_modules",
    "-g",
    "!target",
    "-g",
    "!secrets",
];

/// Each route's key and the replies it has left.
type Routes = Vec<(&'static str, std::collections::VecDeque<Reply>)>;

/// One recorded request.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// The request line and headers, as received.
    pub headers: String,
    pub body: Value,
}

/// A reply: status, content type, body.
pub type Reply = (u16, &'static str, String);

pub struct ScriptedServer {
    /// `http://127.0.0.1:PORT/v1`, ready for `OPENAI_BASE_URL`.
    pub base_url: String,
    pub requests: Arc<Mutex<Vec<Recorded>>>,
}

impl ScriptedServer {
    /// Serves `replies` in order, one per request; connections beyond them are closed.
    pub fn new(replies: Vec<Reply>) -> ScriptedServer {
        Self::start(replies, false)
    }

    /// Serves `replies` over and over, for benchmarks of many rounds.
    pub fn cycling(replies: Vec<Reply>) -> ScriptedServer {
        Self::start(replies, true)
    }

    /// Serves each request from the first route whose key occurs in the request's
    /// system prompt (an empty key matches any), each route's replies in order: for
    /// agents that call the model concurrently (a background task beside its chat).
    /// A request whose route has no reply left is closed unanswered.
    pub fn routed(routes: Vec<(&'static str, Vec<Reply>)>) -> ScriptedServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = requests.clone();
        let routes: Arc<Mutex<Routes>> = Arc::new(Mutex::new(
            routes.into_iter().map(|(k, r)| (k, r.into())).collect(),
        ));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { break };
                let (log, routes) = (log.clone(), routes.clone());
                std::thread::spawn(move || {
                    let Some((headers, body)) = read_request(&stream) else {
                        return;
                    };
                    let system = body["messages"][0]["content"]
                        .as_str()
                        .or_else(|| body["system"].as_str())
                        .unwrap_or_default()
                        .to_string();
                    log.lock().unwrap().push(Recorded { headers, body });
                    let reply = {
                        let mut routes = routes.lock().unwrap();
                        routes
                            .iter_mut()
                            .find(|(k, _)| system.contains(k))
                            .and_then(|(_, r)| r.pop_front())
                    };
                    if let Some(reply) = reply {
                        respond(stream, reply);
                    }
                });
            }
        });
        ScriptedServer {
            base_url: format!("http://127.0.0.1:{port}/v1"),
            requests,
        }
    }

    /// `http://127.0.0.1:PORT`, for `ANTHROPIC_BASE_URL`.
    pub fn origin(&self) -> String {
        self.base_url.trim_end_matches("/v1").to_string()
    }

    /// `127.0.0.1:PORT`, for `OLLAMA_HOST`.
    pub fn host(&self) -> String {
        self.origin().trim_start_matches("http://").to_string()
    }

    pub fn recorded(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    fn start(replies: Vec<Reply>, cycle: bool) -> ScriptedServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = requests.clone();
        std::thread::spawn(move || {
            for (next, stream) in listener.incoming().enumerate() {
                let Ok(stream) = stream else { break };
                if next >= replies.len() && !cycle {
                    break;
                }
                let reply = replies[next % replies.len()].clone();
                let log = log.clone();
                std::thread::spawn(move || handle(stream, reply, &log));
            }
        });
        ScriptedServer {
            base_url: format!("http://127.0.0.1:{port}/v1"),
            requests,
        }
    }
}

fn handle(stream: TcpStream, reply: Reply, log: &Mutex<Vec<Recorded>>) {
    let Some((headers, body)) = read_request(&stream) else {
        return;
    };
    log.lock().unwrap().push(Recorded { headers, body });
    respond(stream, reply);
}

/// Reads one request: its head and its JSON body (`Null` if it is not JSON).
fn read_request(stream: &TcpStream) -> Option<(String, Value)> {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut headers = String::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        headers.push_str(&line);
    }
    let mut raw = vec![0u8; length];
    reader.read_exact(&mut raw).ok()?;
    Some((headers, serde_json::from_slice(&raw).unwrap_or(Value::Null)))
}

fn respond(mut stream: TcpStream, (status, ctype, body): Reply) {
    // Directive lines at the start of a body shape how it is sent (see the module docs).
    let (mut delay, mut drip, mut extra) = (0u64, 0u64, String::new());
    let mut body = body.as_str();
    while let Some((line, rest)) = body.split_once('\n') {
        if let Some(ms) = line.strip_prefix("DELAY_MS=") {
            delay = ms.parse().unwrap();
        } else if let Some(ms) = line.strip_prefix("DRIP_MS=") {
            drip = ms.parse().unwrap();
        } else if let Some(secs) = line.strip_prefix("RETRY_AFTER=") {
            extra.push_str(&format!("retry-after: {secs}\r\n"));
        } else if let Some(header) = line.strip_prefix("HEADER=") {
            extra.push_str(&format!("{header}\r\n"));
        } else {
            break;
        }
        body = rest;
    }
    std::thread::sleep(std::time::Duration::from_millis(delay));
    let head = format!(
        "HTTP/1.1 {status} Scripted\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\n{extra}connection: close\r\n\r\n",
        body.len()
    );
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    let (sent, end) = match (body.split_once("HOLD"), body.split_once("RESET")) {
        (Some((sent, _)), _) => (sent, End::Hold),
        (None, Some((sent, _))) => (sent, End::Reset),
        (None, None) => (body, End::Close),
    };
    if drip == 0 {
        let _ = stream.write_all(sent.as_bytes());
    } else {
        // One SSE event (or NDJSON line) at a time, like a model producing tokens.
        for piece in sent.split_inclusive('\n') {
            if stream.write_all(piece.as_bytes()).is_err() || stream.flush().is_err() {
                return;
            }
            if piece == "\n" || !sent.contains("\n\n") {
                std::thread::sleep(std::time::Duration::from_millis(drip));
            }
        }
    }
    let _ = stream.flush();
    match end {
        End::Hold => std::thread::sleep(std::time::Duration::from_secs(60)),
        // A zero linger makes the close an RST: the connection is reset, not ended.
        End::Reset => {
            let _ = socket2::SockRef::from(&stream).set_linger(Some(std::time::Duration::ZERO));
        }
        End::Close => {}
    }
}

enum End {
    Close,
    Hold,
    Reset,
}

/// OpenAI chunks as an SSE body ending with `[DONE]`.
pub fn sse(chunks: &[Value]) -> String {
    let mut s: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    s.push_str("data: [DONE]\n\n");
    s
}

/// An OpenAI streamed reply making one tool call, its arguments split in two chunks.
pub fn tool_call(id: &str, name: &str, args: &str) -> Reply {
    (
        200,
        "text/event-stream",
        sse(&[
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
                {"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "function": {"arguments": args}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5}}),
        ]),
    )
}

/// An OpenAI streamed reply making several tool calls at once: (id, name, arguments).
pub fn tool_calls(calls: &[(&str, &str, &str)]) -> Reply {
    let list: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (id, name, args))| {
            json!({"index": i, "id": id, "type": "function", "function": {"name": name, "arguments": args}})
        })
        .collect();
    (
        200,
        "text/event-stream",
        sse(&[
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": list}}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ]),
    )
}

/// `reply` sent one event every `ms` milliseconds.
pub fn dripped(ms: u64, reply: Reply) -> Reply {
    (reply.0, reply.1, format!("DRIP_MS={ms}\n{}", reply.2))
}

/// `reply` sent with these extra response headers.
pub fn with_headers(headers: &[(&str, &str)], reply: Reply) -> Reply {
    let lines: String = headers
        .iter()
        .map(|(k, v)| format!("HEADER={k}: {v}\n"))
        .collect();
    (reply.0, reply.1, format!("{lines}{}", reply.2))
}

/// `reply` answered only after `ms` milliseconds.
pub fn delayed(ms: u64, reply: Reply) -> Reply {
    (reply.0, reply.1, format!("DELAY_MS={ms}\n{}", reply.2))
}

/// An OpenAI streamed text answer in two pieces.
pub fn answer(text: &str) -> Reply {
    let half = text
        .char_indices()
        .nth(text.chars().count() / 2)
        .map_or(0, |(i, _)| i);
    (
        200,
        "text/event-stream",
        sse(&[
            json!({"choices": [{"index": 0, "delta": {"content": &text[..half]}}]}),
            json!({"choices": [{"index": 0, "delta": {"content": &text[half..]}, "finish_reason": "stop"}]}),
        ]),
    )
}

/// What is wrong with a Content-Security-Policy for a page of Skald's UI, which shows
/// model output and the user's files (empty when nothing is). The defence against a
/// hostile document sending data out rests on it: nothing may load from, or connect to,
/// anywhere but the app itself and its own `.localhost` schemes; scripts only from the
/// app; no plugins; no `<base>` or form posts.
pub fn csp_problems(policy: &str) -> Vec<String> {
    let directives: Vec<(&str, Vec<&str>)> = policy
        .split(';')
        .filter_map(|d| {
            let mut words = d.split_whitespace();
            words.next().map(|name| (name, words.collect()))
        })
        .collect();
    let get = |name: &str| {
        directives
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| s.clone())
    };
    let mut problems = Vec::new();
    for required in ["default-src", "script-src", "img-src", "connect-src"] {
        if get(required).is_none() {
            problems.push(format!("no {required}"));
        }
    }
    for (name, want) in [
        ("object-src", "'none'"),
        ("base-uri", "'none'"),
        ("form-action", "'none'"),
    ] {
        if get(name).as_deref() != Some(&[want][..]) {
            problems.push(format!("{name} is not {want}"));
        }
    }
    for (name, sources) in &directives {
        for s in sources {
            let lower = s.to_ascii_lowercase();
            let host = lower
                .split_once("://")
                .map(|(_, rest)| rest.split([':', '/']).next().unwrap_or_default());
            let outside = match host {
                Some(h) => h != "localhost" && !h.ends_with(".localhost") && h != "127.0.0.1",
                None => {
                    lower.contains('*')
                        || matches!(lower.as_str(), "http:" | "https:" | "ws:" | "wss:" | "ftp:")
                }
            };
            if outside {
                problems.push(format!("{name} allows {s}"));
            }
        }
    }
    if let Some(script) = get("script-src") {
        for s in script {
            if s.starts_with("'unsafe-") || matches!(s, "data:" | "blob:") {
                problems.push(format!("script-src allows {s}"));
            }
        }
    }
    problems
}

/// The settings of every property test: 10,000 cases in every test run, or
/// `PROPTEST_CASES` for a long one (docs/security.md); failures are not persisted (the
/// shrunk case is printed instead).
pub fn property_config() -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(10_000),
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csp_problems_names_what_would_let_data_out() {
        let strict = "default-src 'self'; script-src 'self'; img-src 'self' data: http://skald-file.localhost; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'";
        assert_eq!(csp_problems(strict), Vec::<String>::new());
        let loose = strict
            .replace("img-src 'self'", "img-src https: 'self'")
            .replace("script-src 'self'", "script-src 'self' 'unsafe-eval'")
            .replace("connect-src 'self'", "connect-src https://evil.example");
        let p = csp_problems(&loose);
        assert_eq!(p.len(), 3, "{p:?}");
        assert!(csp_problems("img-src *").len() >= 4);
    }
}
