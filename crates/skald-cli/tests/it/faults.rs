//! The fault suite: `skald exec` against model servers and MCP servers that misbehave the
//! way real ones do. Each fault ends in a retry that succeeds or a clear error within its
//! timeout, and the chat stays usable: a next turn in the same session works and sees the
//! whole history. (A stream that stops without `[DONE]` and an unknown-key 401 are in
//! exec.rs; the provider-level wire cases in skald-llm/tests/wire.rs.)

use crate::common::{SkaldCmd, events, ok, result, skald};
use serde_json::{Value, json};
use skald_testkit::{Reply, ScriptedServer, answer, tool_call};
use std::path::Path;
use std::process::Output;

/// One `skald exec --json` turn against `server`, continuing `session` if given.
fn turn(
    server: &ScriptedServer,
    data: &Path,
    work: &Path,
    session: Option<i64>,
    vars: &[(&str, &str)],
    prompt: &str,
) -> (Output, Vec<Value>) {
    let mut cmd = skald(data, Some(server));
    cmd.args(["exec", "--json", "--approve", "all", "--cwd"])
        .arg(work);
    if let Some(id) = session {
        cmd.args(["--session", &id.to_string()]);
    }
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.arg(prompt).output().unwrap();
    let evs = events(&String::from_utf8_lossy(&out.stdout));
    (out, evs)
}

/// The chat goes on after the fault: a healthy model answers a next turn in the same
/// session, and its request carries the earlier user message.
fn still_usable(data: &Path, work: &Path, earlier_prompt: &str) {
    let server = ScriptedServer::new(vec![answer("Still here.")]);
    let (out, evs) = turn(&server, data, work, Some(1), &[], "are you there?");
    ok(&out);
    assert_eq!(evs.last().unwrap()["text"], "Still here.");
    let sent = server.recorded()[0].body["messages"].to_string();
    assert!(sent.contains(earlier_prompt), "{sent}");
    let store = skald_store::Store::open(data.join("skald.db")).unwrap();
    store.integrity_check().unwrap();
}

fn dirs() -> (tempfile::TempDir, tempfile::TempDir) {
    (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap())
}

fn failed_message(evs: &[Value]) -> String {
    evs.iter()
        .filter(|e| e["type"] == "llm_failed")
        .map(|e| e["message"].as_str().unwrap().to_string())
        .collect::<Vec<_>>()
        .join(" | ")
}

#[test]
fn a_rate_limit_with_retry_after_is_waited_out() {
    let limited: Reply = (
        429,
        "application/json",
        format!(
            "RETRY_AFTER=1\n{}",
            json!({"error": {"message": "Rate limit reached"}})
        ),
    );
    let server = ScriptedServer::new(vec![limited, answer("After the wait.")]);
    let (data, work) = dirs();
    let (out, evs) = turn(&server, data.path(), work.path(), None, &[], "hello");
    ok(&out);
    assert_eq!(evs.last().unwrap()["text"], "After the wait.");
    assert_eq!(server.recorded().len(), 2, "asked again after the 429");
    still_usable(data.path(), work.path(), "hello");
}

#[test]
fn server_errors_that_persist_end_the_turn_with_a_clear_error() {
    let error: Reply = (
        500,
        "application/json",
        json!({"error": {"message": "internal failure"}}).to_string(),
    );
    let server = ScriptedServer::new(vec![error.clone(), error.clone(), error.clone(), error]);
    let (data, work) = dirs();
    let (out, evs) = turn(&server, data.path(), work.path(), None, &[], "hello");
    assert_eq!(out.status.code(), Some(1));
    let message = failed_message(&evs);
    assert!(
        message.contains("500") && message.contains("internal failure"),
        "{message}"
    );
    assert_eq!(evs.last().unwrap()["outcome"], "failed");
    assert_eq!(server.recorded().len(), 4, "retried, then gave up");
    still_usable(data.path(), work.path(), "hello");
}

#[test]
fn a_connection_reset_mid_answer_is_asked_again_and_keeps_what_was_shown() {
    let reset = format!(
        "data: {}\n\nRESET",
        json!({"choices": [{"index": 0, "delta": {"content": "Half an ans"}}]})
    );
    let server = ScriptedServer::new(vec![
        (200, "text/event-stream", reset),
        answer("A whole answer."),
    ]);
    let (data, work) = dirs();
    let (out, evs) = turn(&server, data.path(), work.path(), None, &[], "hello");
    ok(&out);
    assert!(
        evs.iter()
            .any(|e| e["type"] == "llm_failed" && e["retrying"] == true),
        "{evs:?}"
    );
    assert_eq!(evs.last().unwrap()["text"], "A whole answer.");
    let store = skald_store::Store::open(data.path().join("skald.db")).unwrap();
    let texts: Vec<String> = store
        .list_messages(1)
        .unwrap()
        .into_iter()
        .map(|m| m.content)
        .collect();
    assert_eq!(texts, ["hello", "Half an ans", "A whole answer."]);
    drop(store);
    still_usable(data.path(), work.path(), "hello");
}

#[test]
fn malformed_tool_call_arguments_go_back_to_the_model_as_an_error() {
    let server = ScriptedServer::new(vec![
        tool_call("m1", "read_file", r#"{"path": "notes.txt""#),
        answer("I will fix my call."),
    ]);
    let (data, work) = dirs();
    std::fs::write(work.path().join("notes.txt"), "notes").unwrap();
    let (out, evs) = turn(&server, data.path(), work.path(), None, &[], "read notes");
    ok(&out);
    let r = result(&evs, "m1");
    assert!(r.starts_with("tool_error") && r.contains("JSON"), "{r}");
    // The model reads the error as the call's result and answers.
    let sent = server.recorded()[1].body["messages"].to_string();
    assert!(sent.contains("JSON"), "{sent}");
    assert_eq!(evs.last().unwrap()["text"], "I will fix my call.");
    still_usable(data.path(), work.path(), "read notes");
}

#[test]
fn a_server_that_accepts_and_never_answers_times_out() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming() {
            held.push(s);
        }
    });
    let (data, work) = dirs();
    let out = SkaldCmd::new(data.path())
        .against_url(&url)
        .env("SKALD_MODEL_TIMEOUT_SECS", "1")
        .cmd()
        .args(["exec", "--json", "--cwd"])
        .arg(work.path())
        .arg("hello")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let evs = events(&String::from_utf8_lossy(&out.stdout));
    let message = failed_message(&evs);
    assert!(message.contains("did not answer within 1s"), "{message}");
    still_usable(data.path(), work.path(), "hello");
}

#[test]
fn a_stream_that_stalls_is_given_up_and_asked_again() {
    let stalled = format!(
        "data: {}\n\nHOLD",
        json!({"choices": [{"index": 0, "delta": {"content": "Thinking"}}]})
    );
    let server = ScriptedServer::new(vec![
        (200, "text/event-stream", stalled),
        answer("Done thinking."),
    ]);
    let (data, work) = dirs();
    let (out, evs) = turn(
        &server,
        data.path(),
        work.path(),
        None,
        &[("SKALD_MODEL_IDLE_SECS", "1")],
        "hello",
    );
    ok(&out);
    assert!(
        failed_message(&evs).contains("did not answer within 1s"),
        "{evs:?}"
    );
    assert_eq!(evs.last().unwrap()["text"], "Done thinking.");
    still_usable(data.path(), work.path(), "hello");
}

#[test]
fn a_bad_timeout_setting_is_a_clear_error() {
    let server = ScriptedServer::new(vec![]);
    let (data, work) = dirs();
    let (out, _) = turn(
        &server,
        data.path(),
        work.path(),
        None,
        &[("SKALD_MODEL_TIMEOUT_SECS", "soon")],
        "hello",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("SKALD_MODEL_TIMEOUT_SECS") && err.contains("`soon`"),
        "{err}"
    );
}

/// An MCP server that writes garbage to stdout, answers with 5 MB, never answers, and
/// crashes: each call gets a result or a clear error in time, the server keeps serving
/// (or comes back after its crash), and the chat goes on.
#[test]
fn a_misbehaving_mcp_server_never_takes_the_chat_down() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/faulty_server.py");
    let (data, work) = dirs();
    let starts = work.path().join("starts.log");
    std::fs::write(
        data.path().join("config.toml"),
        "[mcp]\ncall_timeout_secs = 3\n",
    )
    .unwrap();
    let add = skald(data.path(), None)
        .args([
            "mcp",
            "add",
            "faulty",
            "--description",
            "misbehaves on request",
            "--",
        ])
        .arg("python3")
        .arg(&script)
        .output()
        .unwrap();
    assert!(ok(&add).contains("is ready with"));
    let call = |id: &str, tool: &str, args: Value| {
        tool_call(id, &format!("mcp__faulty__{tool}"), &args.to_string())
    };
    let server = ScriptedServer::new(vec![
        tool_call("a1", "activate_tools", r#"{"groups": ["faulty"]}"#),
        call("g1", "garbage", json!({})),
        call("h1", "huge", json!({"bytes": 5_000_000})),
        call("n1", "hang", json!({})),
        call("e1", "echo", json!({"text": "alive after the hang"})),
        call("c1", "crash", json!({})),
        call("e2", "echo", json!({"text": "alive after the crash"})),
        answer("The server misbehaved; I carried on."),
    ]);
    let (out, evs) = turn(
        &server,
        data.path(),
        work.path(),
        None,
        &[("FAULTY_STARTS", starts.to_str().unwrap())],
        "try the faulty server",
    );
    ok(&out);
    assert_eq!(result(&evs, "g1"), "tool_done answered after the noise");
    let huge = result(&evs, "h1");
    assert!(
        huge.starts_with("tool_done"),
        "{}",
        &huge[..200.min(huge.len())]
    );
    assert!(
        huge.len() < 120_000,
        "the result is cut: {} bytes",
        huge.len()
    );
    assert!(
        huge.contains("5000000-byte result"),
        "{}",
        &huge[huge.len() - 200..]
    );
    let hang = result(&evs, "n1");
    assert!(
        hang.starts_with("tool_error") && hang.contains("3s"),
        "{hang}"
    );
    assert_eq!(result(&evs, "e1"), "tool_done alive after the hang");
    let crash = result(&evs, "c1");
    assert!(crash.starts_with("tool_error"), "{crash}");
    assert_eq!(result(&evs, "e2"), "tool_done alive after the crash");
    let started = std::fs::read_to_string(&starts).unwrap().lines().count();
    assert!(
        started >= 2,
        "the crashed server was started again ({started} starts)"
    );
    assert_eq!(
        evs.last().unwrap()["text"],
        "The server misbehaved; I carried on."
    );
    // What the model reads of the huge result is the capped text, not 5 MB.
    let last = server.recorded().last().unwrap().body.to_string();
    assert!(
        last.len() < 1_000_000,
        "{} bytes sent to the model",
        last.len()
    );
    still_usable(data.path(), work.path(), "try the faulty server");
}
