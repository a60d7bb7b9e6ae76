//! `skald exec` against a scripted model server that speaks OpenAI's streaming protocol
//! over a real socket on 127.0.0.1.

use crate::common::{SkaldCmd, bare, result};
use serde_json::{Value, json};
use std::process::{Command, Output, Stdio};

use skald_testkit::{ScriptedServer, answer, delayed, sse, tool_call, tool_calls};

fn serve(replies: Vec<skald_testkit::Reply>) -> ScriptedServer {
    ScriptedServer::new(replies)
}

/// A `skald exec --json` run in fresh folders: its output and events, and the folders
/// (the work folder holds hello.txt).
struct Run {
    out: Output,
    events: Vec<Value>,
    data: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl Run {
    /// `skald exec --json EXTRA… PROMPT` in fresh folders, its model set by `model` —
    /// mostly `|c| c.against(&server)`.
    fn exec(model: impl FnOnce(SkaldCmd) -> SkaldCmd, extra: &[&str], prompt: &str) -> Run {
        let data = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        std::fs::write(work.path().join("hello.txt"), "hello from the fixture\n").unwrap();
        let (out, events) = model(SkaldCmd::new(data.path())).exec_json(work.path(), extra, prompt);
        Run {
            out,
            events,
            data,
            work,
        }
    }
}

fn types(events: &[Value]) -> Vec<String> {
    let mut t: Vec<String> = events
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect();
    t.dedup(); // token deltas come in pieces
    t
}

#[test]
fn a_two_round_turn_reads_a_file_and_answers() {
    let server = serve(vec![
        tool_call("call_1", "read_file", r#"{"path": "hello.txt"}"#),
        answer("The file says hello."),
    ]);
    // The key is the one the request is checked for below.
    let run = Run::exec(
        |c| c.against(&server).env("OPENAI_API_KEY", "test-key"),
        &[],
        "What does hello.txt say?",
    );
    assert_eq!(
        run.out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.out.stderr)
    );
    assert_eq!(
        types(&run.events),
        [
            "turn_running",
            "user_message",
            "tool_start",
            "tool_done",
            "token_delta",
            // What the turn cost, said just before it ends (docs/events.md, turn_usage).
            "turn_usage",
            "done"
        ]
    );
    let start = &run.events[2];
    assert_eq!(start["name"], "read_file");
    assert_eq!(start["label_short"], "read_file `hello.txt`");
    assert_eq!(start["path"], "hello.txt");
    assert!(
        run.events[3]["result"]
            .as_str()
            .unwrap()
            .contains("hello from the fixture")
    );
    let done = run.events.last().unwrap();
    assert_eq!(done["outcome"], "final");
    assert_eq!(done["text"], "The file says hello.");

    let requests = server.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    let first = &requests[0];
    assert!(
        first
            .headers
            .to_ascii_lowercase()
            .contains("authorization: bearer test-key")
    );
    assert_eq!(first.body["model"], "scripted-model");
    assert_eq!(first.body["stream"], true);
    let tools: Vec<&str> = first.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"read_file") && tools.contains(&"execute_cmd"));
    // The second round carries the call and its result.
    let msgs = requests[1].body["messages"].as_array().unwrap();
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "system"]);
    // The agent's prompt with its directives expanded leads; the dynamic tail ends.
    let system = msgs[0]["content"].as_str().unwrap();
    assert!(system.starts_with("You are Skald"), "{system}");
    assert!(system.contains("`software-engineer`") && system.contains("code-review"));
    assert!(
        msgs[4]["content"]
            .as_str()
            .unwrap()
            .starts_with("Current time: ")
    );
    assert_eq!(msgs[2]["tool_calls"][0]["id"], "call_1");
    assert_eq!(msgs[3]["tool_call_id"], "call_1");
    assert!(
        msgs[3]["content"]
            .as_str()
            .unwrap()
            .contains("hello from the fixture")
    );

    // Everything is in the store.
    let store = skald_store::Store::open(run.data.path().join("skald.db")).unwrap();
    let session = store.list_sessions().unwrap()[0].clone();
    assert_eq!(
        session.working_dir.as_deref(),
        Some(
            std::fs::canonicalize(run.work.path())
                .unwrap()
                .to_str()
                .unwrap()
        )
    );
    let history = store.list_messages(session.id).unwrap();
    let texts: Vec<(&str, &str)> = history
        .iter()
        .map(|m| (m.role.as_str(), m.content.as_str()))
        .collect();
    assert_eq!(
        texts,
        [
            ("user", "What does hello.txt say?"),
            ("assistant", ""),
            ("assistant", "The file says hello.")
        ]
    );
    assert!(
        history
            .iter()
            .all(|m| m.status == skald_store::MessageStatus::Complete)
    );
    // Every tool offered is remembered, so rules can name it.
    let known: Vec<String> = store
        .list_known_tools()
        .unwrap()
        .into_iter()
        .map(|k| k.name)
        .collect();
    assert!(known.contains(&"read_file".to_string()) && known.contains(&"execute_cmd".to_string()));
    let calls = store.list_tool_calls(session.id).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].status, skald_api::ToolCallStatus::Done);
    assert_eq!(calls[0].message_id, Some(history[1].id));
}

#[test]
fn shell_calls_are_rejected_headless_and_bad_arguments_reported() {
    let server = serve(vec![
        tool_call(
            "c_shell",
            "execute_cmd",
            r#"{"command": "touch made-by-model"}"#,
        ),
        tool_call("c_bad", "read_file", r#"{"path": "hello.txt""#),
        answer("Done."),
    ]);
    let run = Run::exec(|c| c.against(&server), &["--sandbox", "off"], "do things");
    assert_eq!(
        run.out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.out.stderr)
    );
    let t = types(&run.events);
    assert!(t.contains(&"tool_rejected".to_string()), "{t:?}");
    assert!(t.contains(&"tool_error".to_string()), "{t:?}");
    assert!(
        !run.work.path().join("made-by-model").exists(),
        "a rejected command must not run"
    );
    let requests = server.requests.lock().unwrap().clone();
    let msgs = requests[2].body["messages"].as_array().unwrap();
    let tool_msgs: Vec<&str> = msgs
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert!(
        tool_msgs[0].starts_with("User rejected this tool call."),
        "{tool_msgs:?}"
    );
    assert!(tool_msgs[1].contains("not valid JSON"), "{tool_msgs:?}");
}

#[test]
fn a_task_agent_can_be_run_and_an_unknown_one_is_refused() {
    let server = serve(vec![answer("Found it.")]);
    let run = Run::exec(
        |c| c.against(&server),
        &["--agent", "researcher"],
        "where is main?",
    );
    assert_eq!(run.out.status.code(), Some(0));
    let requests = server.requests.lock().unwrap().clone();
    let system = requests[0].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        system.starts_with("You are a meticulous researcher"),
        "{system}"
    );
    let run = Run::exec(|c| c.against(&server), &["--agent", "nobody"], "hi");
    assert_eq!(run.out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.out.stderr).contains("no agent `nobody`"));
}

#[test]
fn approve_all_runs_shell_commands() {
    let server = serve(vec![
        tool_call(
            "c1",
            "execute_cmd",
            r#"{"command": "echo approved > out.txt"}"#,
        ),
        answer("Written."),
    ]);
    let run = Run::exec(|c| c.against(&server), &["--approve", "all"], "write it");
    assert_eq!(run.out.status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(run.work.path().join("out.txt")).unwrap(),
        "approved\n"
    );
}

#[test]
fn a_final_http_error_fails_the_turn_without_retrying() {
    let server = serve(vec![(
        401,
        "application/json",
        json!({"error": {"message": "Incorrect API key provided"}}).to_string(),
    )]);
    let run = Run::exec(|c| c.against(&server), &[], "hi");
    assert_eq!(run.out.status.code(), Some(1));
    let failed = run
        .events
        .iter()
        .find(|e| e["type"] == "llm_failed")
        .unwrap();
    assert!(
        failed["message"].as_str().unwrap().contains("401"),
        "{failed}"
    );
    assert!(
        failed["message"]
            .as_str()
            .unwrap()
            .contains("Incorrect API key")
    );
    assert_eq!(run.events.last().unwrap()["outcome"], "failed");
    assert_eq!(server.requests.lock().unwrap().len(), 1);
    // The user's message is kept even though the model never answered.
    let store = skald_store::Store::open(run.data.path().join("skald.db")).unwrap();
    let s = store.list_sessions().unwrap()[0].clone();
    assert_eq!(store.list_messages(s.id).unwrap()[0].content, "hi");
}

#[test]
fn a_server_error_is_retried() {
    let server = serve(vec![
        (
            503,
            "application/json",
            json!({"error": {"message": "busy"}}).to_string(),
        ),
        answer("Back."),
    ]);
    let run = Run::exec(|c| c.against(&server), &[], "hi");
    assert_eq!(
        run.out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.out.stderr)
    );
    assert_eq!(run.events.last().unwrap()["text"], "Back.");
    assert_eq!(server.requests.lock().unwrap().len(), 2);
}

#[test]
fn no_model_configured_is_a_usage_error() {
    let data = tempfile::tempdir().unwrap();
    let out = bare(data.path()).args(["exec", "hi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("SKALD_MODEL"));
}

/// Waits for an event of `kind`, returning every event seen up to it.
#[cfg(unix)]
fn wait_for(rx: &std::sync::mpsc::Receiver<Value>, kind: &str) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let ev = rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("no `{kind}` event; saw {seen:?}"));
        let done = ev["type"] == kind;
        seen.push(ev);
        if done {
            return seen;
        }
    }
}

/// Waits until a command under test has written its pid to `path`.
#[cfg(unix)]
fn wait_for_pidfile(path: &std::path::Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::fs::read_to_string(path)
        .map(|s| s.trim().is_empty())
        .unwrap_or(true)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[cfg(unix)]
fn interrupt(child: &std::process::Child) {
    use nix::sys::signal::{Signal, kill};
    kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        Signal::SIGINT,
    )
    .unwrap();
}

#[cfg(unix)]
#[test]
fn ctrl_c_during_a_model_stream_stops_the_turn_and_keeps_what_was_shown() {
    let stalled = format!(
        "data: {}\n\nHOLD",
        json!({"choices": [{"index": 0, "delta": {"content": "Partial ans"}}]})
    );
    let server = serve(vec![(200, "text/event-stream", stalled)]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (child, rx) =
        SkaldCmd::new(data.path())
            .against(&server)
            .spawn_exec_json(work.path(), &[], "tell me");
    wait_for(&rx, "token_delta");
    interrupt(&child);
    let events = wait_for(&rx, "done");
    assert_eq!(events.last().unwrap()["outcome"], "cancelled");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let store = skald_store::Store::open(data.path().join("skald.db")).unwrap();
    let s = store.list_sessions().unwrap()[0].clone();
    let history = store.list_messages(s.id).unwrap();
    assert_eq!(
        history[1].content, "Partial ans",
        "what the user saw is kept"
    );
    assert_eq!(history[1].status, skald_store::MessageStatus::Interrupted);
}

/// SIGTERM (a service manager, `kill`) and SIGHUP (a closed terminal) stop `skald exec`
/// as Ctrl-C does: the turn is cancelled and kept, and the background process it started
/// is stopped and said so — without them, the process ended by the signal's default
/// action, with nothing stopped or said.
#[cfg(unix)]
#[test]
fn sigterm_and_sighup_stop_the_turn_and_its_background_processes_like_ctrl_c() {
    use nix::sys::signal::{Signal, kill};
    for signal in [Signal::SIGTERM, Signal::SIGHUP] {
        let stalled = format!(
            "data: {}\n\nHOLD",
            json!({"choices": [{"index": 0, "delta": {"content": "Working"}}]})
        );
        let server = serve(vec![
            tool_call(
                "c1",
                "execute_cmd",
                r#"{"command": "read -r pid _ < /proc/self/stat; echo $pid > bg.tmp; mv bg.tmp bg.pid; exec sleep 300", "background": true}"#,
            ),
            (200, "text/event-stream", stalled),
        ]);
        let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (child, rx) = SkaldCmd::new(data.path()).against(&server).spawn_exec_json(
            work.path(),
            &["--approve", "all"],
            "start it",
        );
        wait_for(&rx, "token_delta");
        let pidfile = work.path().join("bg.pid");
        wait_for_pidfile(&pidfile);
        kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
        let events = wait_for(&rx, "done");
        assert_eq!(events.last().unwrap()["outcome"], "cancelled", "{signal}");
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{signal}: {stderr}");
        assert!(
            stderr.contains("stopped 1 background process the turn left running"),
            "{signal}: {stderr}"
        );
        let pid = std::fs::read_to_string(&pidfile).unwrap();
        let cmdline = format!("/proc/{}/cmdline", pid.trim());
        assert!(
            (0..250).any(|_| {
                std::thread::sleep(std::time::Duration::from_millis(20));
                std::fs::read(&cmdline).map_or(true, |c| c.is_empty())
            }),
            "{signal}: {pid} still runs"
        );
    }
}

#[cfg(unix)]
#[test]
fn ctrl_c_during_a_long_shell_command_kills_it_and_marks_the_call_cancelled() {
    let server = serve(vec![tool_call(
        "c_sleep",
        "execute_cmd",
        r#"{"command": "sh -c 'read -r p _ < /proc/self/stat; echo $p > sleep.pid; exec sleep 10' & wait"}"#,
    )]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (child, rx) = SkaldCmd::new(data.path()).against(&server).spawn_exec_json(
        work.path(),
        &["--approve", "all"],
        "wait",
    );
    wait_for(&rx, "tool_start");
    let pidfile = work.path().join("sleep.pid");
    wait_for_pidfile(&pidfile);
    interrupt(&child);
    let events = wait_for(&rx, "done");
    assert!(
        events.iter().any(|e| e["type"] == "tool_cancelled"),
        "{events:?}"
    );
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(130));
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let gone = (0..250).any(|_| {
        let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                !s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(false);
        if alive {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        !alive
    });
    assert!(gone, "the command's sleep survived the stop");
    let store = skald_store::Store::open(data.path().join("skald.db")).unwrap();
    let s = store.list_sessions().unwrap()[0].clone();
    assert_eq!(
        store.list_tool_calls(s.id).unwrap()[0].status,
        skald_api::ToolCallStatus::Cancelled
    );
}

#[cfg(unix)]
#[test]
fn kill_9_mid_tool_then_resume_loses_nothing() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;

    let server = serve(vec![tool_call(
        "c_long",
        "execute_cmd",
        r#"{"command": "read -r pid _ < /proc/self/stat; echo $pid > cmd.pid; sleep 30"}"#,
    )]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (mut child, rx) = SkaldCmd::new(data.path()).against(&server).spawn_exec_json(
        work.path(),
        &["--approve", "all"],
        "run the long thing",
    );
    wait_for(&rx, "tool_start");
    let pidfile = work.path().join("cmd.pid");
    wait_for_pidfile(&pidfile);
    kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    child.wait().unwrap();
    // The orphaned command is ours to clean up: a killed Skald cannot.
    let orphan: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let _ = kill(Pid::from_raw(-orphan), Signal::SIGKILL);

    let db = data.path().join("skald.db");
    {
        let store = skald_store::Store::open(&db).unwrap();
        store.integrity_check().unwrap();
        let s = store.list_sessions().unwrap()[0].clone();
        assert_eq!(
            store.list_messages(s.id).unwrap()[0].content,
            "run the long thing"
        );
        assert_eq!(
            store.list_tool_calls(s.id).unwrap()[0].status,
            skald_api::ToolCallStatus::Running
        );
    }

    let server = serve(vec![answer("It was interrupted; nothing else to do.")]);
    let (child, rx) = SkaldCmd::new(data.path()).against(&server).spawn_exec_json(
        work.path(),
        &["--session", "1"],
        "go on",
    );
    let events = wait_for(&rx, "done");
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(0));
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "tool_error" && e["tool_call_id"] == "c_long"),
        "{events:?}"
    );
    let request = server.requests.lock().unwrap()[0].body.clone();
    let msgs = request["messages"].as_array().unwrap();
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "user", "system"]
    );
    assert!(
        msgs[3]["content"]
            .as_str()
            .unwrap()
            .contains("was not run again")
    );
    assert_eq!(msgs[4]["content"], "go on");

    let store = skald_store::Store::open(&db).unwrap();
    store.integrity_check().unwrap();
    let history = store.list_messages(1).unwrap();
    let texts: Vec<&str> = history.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(
        texts,
        [
            "run the long thing",
            "",
            "go on",
            "It was interrupted; nothing else to do."
        ]
    );
    assert_eq!(
        store.list_tool_calls(1).unwrap()[0].status,
        skald_api::ToolCallStatus::Interrupted
    );
}

#[test]
fn anthropic_messages_two_round_turn() {
    let sse = crate::common::anthropic_sse;
    let tool_round = sse(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 20}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"hello.txt\"}"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}),
        json!({"type": "message_stop"}),
    ]);
    let text_round = sse(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 40}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "ping"}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "It says hello."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 4}}),
        json!({"type": "message_stop"}),
    ]);
    let server = serve(vec![
        (200, "text/event-stream", tool_round),
        (200, "text/event-stream", text_round),
    ]);
    let base = server.origin();
    let run = Run::exec(
        |c| {
            c.env("ANTHROPIC_BASE_URL", &base)
                .env("ANTHROPIC_API_KEY", "ant-key")
                .env("SKALD_MODEL", "anthropic/claude-test")
        },
        &[],
        "What does hello.txt say?",
    );
    assert_eq!(
        run.out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.out.stderr)
    );
    assert_eq!(run.events.last().unwrap()["text"], "It says hello.");
    let requests = server.requests.lock().unwrap().clone();
    let h = requests[0].headers.to_ascii_lowercase();
    assert!(h.starts_with("post /v1/messages "), "{h}");
    assert!(h.contains("x-api-key: ant-key") && h.contains("anthropic-version: 2023-06-01"));
    assert_eq!(requests[0].body["model"], "claude-test");
    assert!(
        requests[0].body["system"]
            .as_str()
            .unwrap()
            .starts_with("You are Skald")
    );
    let second = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(second[1]["content"][0]["type"], "tool_use");
    assert_eq!(second[2]["content"][0]["type"], "tool_result");
    assert_eq!(second[2]["content"][0]["tool_use_id"], "toolu_1");
    assert!(
        second[2]["content"][0]["content"]
            .as_str()
            .unwrap()
            .contains("hello from the fixture")
    );
}

#[test]
fn ollama_chat_two_round_turn() {
    let ndjson = |lines: &[Value]| -> String { lines.iter().map(|l| format!("{l}\n")).collect() };
    let server = serve(vec![
        (
            200,
            "application/x-ndjson",
            ndjson(&[
                json!({"model": "llama-test", "message": {"role": "assistant", "content": "", "tool_calls": [
                    {"function": {"name": "read_file", "arguments": {"path": "hello.txt"}}}]}, "done": false}),
                json!({"model": "llama-test", "message": {"role": "assistant", "content": ""}, "done": true,
                       "done_reason": "stop", "prompt_eval_count": 30, "eval_count": 8}),
            ]),
        ),
        (
            200,
            "application/x-ndjson",
            ndjson(&[
                json!({"message": {"role": "assistant", "content": "It says "}, "done": false}),
                json!({"message": {"role": "assistant", "content": "hello."}, "done": false}),
                json!({"message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop"}),
            ]),
        ),
    ]);
    let host = server
        .base_url
        .trim_start_matches("http://")
        .trim_end_matches("/v1")
        .to_string();
    let run = Run::exec(
        |c| {
            c.env("OLLAMA_HOST", &host)
                .env("SKALD_MODEL", "ollama/llama-test")
        },
        &[],
        "What does hello.txt say?",
    );
    assert_eq!(
        run.out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.out.stderr)
    );
    assert_eq!(run.events.last().unwrap()["text"], "It says hello.");
    let requests = server.requests.lock().unwrap().clone();
    assert!(
        requests[0]
            .headers
            .to_ascii_lowercase()
            .starts_with("post /api/chat ")
    );
    assert_eq!(requests[0].body["model"], "llama-test");
    let second = requests[1].body["messages"].as_array().unwrap();
    let roles: Vec<&str> = second.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "system"]);
    assert_eq!(
        second[2]["tool_calls"][0]["function"]["arguments"]["path"],
        "hello.txt"
    );
    assert!(
        second[3]["content"]
            .as_str()
            .unwrap()
            .contains("hello from the fixture")
    );
}

#[test]
fn a_failing_model_falls_back_to_the_next_and_usage_is_recorded() {
    let primary = serve(vec![(
        401,
        "application/json",
        json!({"error": {"message": "bad key"}}).to_string(),
    )]);
    let backup = serve(vec![answer("From the backup.")]);
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        data.path().join("config.toml"),
        format!(
            "[providers.backup]\nkind = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"BACKUP_KEY\"\n",
            backup.base_url
        ),
    )
    .unwrap();
    // The scripted primary, as `openai/primary-model` and with a wrong key.
    let out = SkaldCmd::new(data.path())
        .against(&primary)
        .env("OPENAI_API_KEY", "wrong")
        .env("SKALD_MODEL", "openai/primary-model")
        .env("SKALD_FALLBACK_MODELS", "backup/model-b")
        .env("BACKUP_KEY", "backup-secret")
        .cmd()
        .args(["exec", "--json", "--cwd"])
        .arg(work.path())
        .arg("hi")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let fallback = events
        .iter()
        .find(|e| e["type"] == "model_fallback")
        .unwrap();
    assert_eq!(fallback["from"], "openai/primary-model");
    assert_eq!(fallback["to"], "backup/model-b");
    assert!(fallback["reason"].as_str().unwrap().contains("401"));
    assert_eq!(events.last().unwrap()["text"], "From the backup.");
    let b = backup.requests.lock().unwrap()[0].clone();
    assert!(
        b.headers
            .to_ascii_lowercase()
            .contains("authorization: bearer backup-secret")
    );
    assert_eq!(b.body["model"], "model-b");

    let store = skald_store::Store::open(data.path().join("skald.db")).unwrap();
    let usage = store.session_usage(1).unwrap();
    assert_eq!(usage.requests, 2, "the failed and the answered call");
    assert_eq!(
        (usage.input_tokens, usage.output_tokens),
        (0, 0),
        "the scripted answer has no usage chunk"
    );
}

#[test]
fn a_stream_cut_mid_answer_is_asked_again_and_nothing_shown_is_lost() {
    // The first answer stops after "Par" with no finish reason and no [DONE].
    let cut = format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": {"content": "Par"}}]})
    );
    let server = serve(vec![
        (200, "text/event-stream", cut),
        tool_call_free_answer_with_usage("Partial answer, now complete."),
    ]);
    let run = Run::exec(|c| c.against(&server), &[], "answer me");
    assert_eq!(
        run.out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.out.stderr)
    );
    assert!(
        run.events
            .iter()
            .any(|e| e["type"] == "llm_failed" && e["retrying"] == true)
    );
    assert_eq!(
        run.events.last().unwrap()["text"],
        "Partial answer, now complete."
    );
    let requests = server.requests.lock().unwrap().clone();
    let msgs = requests[1].body["messages"].as_array().unwrap();
    assert!(
        msgs.iter()
            .any(|m| m["role"] == "assistant" && m["content"] == "Par"),
        "the model sees what it already said"
    );
    let store = skald_store::Store::open(run.data.path().join("skald.db")).unwrap();
    let history = store.list_messages(1).unwrap();
    assert_eq!(history[1].content, "Par");
    assert_eq!(history[1].status, skald_store::MessageStatus::Interrupted);
    assert_eq!(history[2].content, "Partial answer, now complete.");
    let usage = store.session_usage(1).unwrap();
    assert_eq!(
        (usage.requests, usage.input_tokens, usage.output_tokens),
        (2, 7, 3)
    );
}

fn tool_call_free_answer_with_usage(text: &str) -> (u16, &'static str, String) {
    (
        200,
        "text/event-stream",
        sse(&[
            json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 3}}),
        ]),
    )
}

#[test]
fn a_long_conversation_is_summarised_and_nothing_is_deleted() {
    let server = serve(vec![
        answer("First answer."),
        answer("SUMMARY: the user asked a long first question; answered."),
        answer("Second answer."),
    ]);
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        data.path().join("config.toml"),
        "[models]\ncontext_window = 300\n",
    )
    .unwrap();
    let run = |args: &[&str]| -> Vec<Value> {
        let out = SkaldCmd::new(data.path())
            .against(&server)
            .cmd()
            .args(["exec", "--json", "--cwd"])
            .arg(work.path())
            .args(args)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let long_question = format!("First question: {}", "lorem ipsum ".repeat(100));
    run(&[&long_question]);
    let events = run(&["--session", "1", "Second question?"]);
    assert!(
        events.iter().any(|e| e["type"] == "context_compacted"),
        "{events:?}"
    );
    assert_eq!(events.last().unwrap()["text"], "Second answer.");

    let requests = server.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 3);
    let summarise = requests[1].body["messages"].as_array().unwrap();
    assert!(
        summarise[0]["content"]
            .as_str()
            .unwrap()
            .contains("summarising the earlier part")
    );
    assert!(
        summarise[1]["content"]
            .as_str()
            .unwrap()
            .contains("First question: lorem")
    );
    let last = requests[2].body["messages"].as_array().unwrap();
    let contents: Vec<&str> = last
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert!(
        contents[1].contains("SUMMARY: the user asked"),
        "{contents:?}"
    );
    assert!(
        !contents.iter().any(|c| c.contains("lorem ipsum lorem")),
        "the long turn is replaced"
    );
    assert!(contents.contains(&"Second question?"));

    let store = skald_store::Store::open(data.path().join("skald.db")).unwrap();
    let texts: Vec<String> = store
        .list_messages(1)
        .unwrap()
        .into_iter()
        .map(|m| m.content)
        .collect();
    assert_eq!(
        texts,
        [
            long_question.as_str(),
            "First answer.",
            "Second question?",
            "Second answer."
        ]
    );
    assert!(store.latest_summary(1).unwrap().is_some());
}

#[test]
fn reused_tool_call_ids_are_made_unique() {
    let server = serve(vec![
        tool_call("same", "read_file", r#"{"path": "hello.txt"}"#),
        tool_call("same", "list_files", r#"{}"#),
        answer("Done."),
    ]);
    let run = Run::exec(|c| c.against(&server), &[], "look around");
    assert_eq!(
        run.out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.out.stderr)
    );
    let ids: Vec<&str> = run
        .events
        .iter()
        .filter(|e| e["type"] == "tool_done")
        .map(|e| e["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["same", "same_2"]);
    let msgs = server.recorded()[2].body["messages"].clone();
    let tool_ids: Vec<&str> = msgs
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(tool_ids, ["same", "same_2"]);
}

#[test]
fn a_denied_tool_is_hidden_from_the_model_and_refused_if_called() {
    let server = serve(vec![
        tool_call("c1", "execute_cmd", r#"{"command": "ls"}"#),
        answer("I could not run commands."),
    ]);
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let skald = |args: &[&str]| {
        SkaldCmd::new(data.path())
            .against(&server)
            .cmd()
            .args(args)
            .output()
            .unwrap()
    };
    let out = skald(&[
        "rules",
        "add",
        "--tool",
        "execute_cmd",
        "--action",
        "deny",
        "--priority",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let out = skald(&[
        "exec",
        "--json",
        "--approve",
        "all",
        "--cwd",
        work.path().to_str().unwrap(),
        "list files",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = server.recorded();
    let offered: Vec<String> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        !offered.contains(&"execute_cmd".to_string()),
        "denied tools are not offered"
    );
    assert!(offered.contains(&"read_file".to_string()));
    // The model called it anyway: refused, even with --approve all.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let rejected = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "tool_rejected")
        .unwrap();
    assert!(
        rejected["reason"]
            .as_str()
            .unwrap()
            .contains("denied by the user's approval rules")
    );
}

/// `--approve ask` through a real pseudo-terminal (util-linux `script`), answered y or n.
#[cfg(target_os = "linux")]
#[test]
fn approve_ask_prompts_on_a_terminal() {
    for (answer_line, runs) in [("y", true), ("n", false)] {
        let server = serve(vec![
            tool_call(
                "c1",
                "execute_cmd",
                r#"{"command": "echo asked > out.txt"}"#,
            ),
            answer("Done."),
        ]);
        let data = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let cmd = format!(
            "{} --data-dir {} exec --json --approve ask --sandbox off --cwd {} 'write the file'",
            env!("CARGO_BIN_EXE_skald"),
            data.path().display(),
            work.path().display()
        );
        let mut child = SkaldCmd::runner(Command::new("script"), data.path())
            .against(&server)
            .cmd()
            .args(["-qec", &cmd, "/dev/null"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(format!("{answer_line}\n").as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            text.contains("needs approval"),
            "the prompt is shown: {text}"
        );
        assert_eq!(
            work.path().join("out.txt").exists(),
            runs,
            "answer {answer_line}: {text}"
        );
        if !runs {
            assert!(text.contains("declined when asked"), "{text}");
        }
    }
}

/// The terminal prompt shows a multi-line command whole, every line behind the gutter,
/// with an ESC and a right-to-left override escaped: neither byte reaches the terminal,
/// so the command cannot repaint the prompt or hide a line.
#[cfg(target_os = "linux")]
#[test]
fn approve_ask_shows_every_line_with_controls_escaped() {
    let command = format!(
        "echo first{}\n\u{1b}[1A\u{1b}[2Kecho second \u{202e}txt.exe\nrm -rf ./{}",
        "x".repeat(150),
        "y".repeat(20)
    );
    let server = serve(vec![
        tool_call(
            "c1",
            "execute_cmd",
            &json!({ "command": command }).to_string(),
        ),
        answer("Done."),
    ]);
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let cmd = format!(
        "{} --data-dir {} exec --approve ask --sandbox off --cwd {} 'run it'",
        env!("CARGO_BIN_EXE_skald"),
        data.path().display(),
        work.path().display()
    );
    let mut child = SkaldCmd::runner(Command::new("script"), data.path())
        .against(&server)
        .cmd()
        .args(["-qec", &cmd, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(b"n\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
    assert!(
        text.contains("needs approval"),
        "the prompt is shown: {text}"
    );
    let lines: Vec<&str> = text.lines().collect();
    for expected in [
        format!("│ echo first{}", "x".repeat(150)),
        "│ \\x1b[1A\\x1b[2Kecho second \\u{202e}txt.exe".to_string(),
        format!("│ rm -rf ./{}", "y".repeat(20)),
    ] {
        assert!(
            lines.iter().any(|l| l.trim_start() == expected),
            "the line {expected:?} is shown on its own: {text}"
        );
    }
    assert!(!text.contains('\u{1b}'), "no raw ESC: {text:?}");
    assert!(!text.contains('\u{202e}'), "no raw U+202E: {text:?}");
}

#[test]
fn approve_ask_without_a_terminal_rejects() {
    let server = serve(vec![
        tool_call("c1", "execute_cmd", r#"{"command": "echo no > out.txt"}"#),
        answer("Done."),
    ]);
    let run = Run::exec(
        |c| c.against(&server),
        &["--approve", "ask", "--sandbox", "off"],
        "write it",
    );
    assert_eq!(run.out.status.code(), Some(0));
    assert!(!run.work.path().join("out.txt").exists());
    assert!(String::from_utf8_lossy(&run.out.stderr).contains("not a terminal"));
}

#[test]
fn a_run_context_grants_writes_sets_the_group_and_adds_prompt_lines() {
    let server = serve(vec![
        tool_call(
            "c1",
            "write_file",
            r#"{"path": "out/report.md", "content": "done"}"#,
        ),
        tool_call(
            "c2",
            "write_file",
            r#"{"path": "elsewhere.md", "content": "no"}"#,
        ),
        answer("Wrote the report."),
    ]);
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(work.path().join("out")).unwrap();
    let out_dir = work.path().join("out");
    let run = |args: &[&str]| {
        SkaldCmd::new(data.path())
            .against(&server)
            .cmd()
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&[
        "exec",
        "--json",
        "--cwd",
        work.path().to_str().unwrap(),
        "--allow-write",
        out_dir.to_str().unwrap(),
        "--group",
        "reporting",
        "--extra-prompt",
        "Write reports in Markdown.",
        "write the report",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(out_dir.join("report.md")).unwrap(),
        "done"
    );
    assert!(
        !work.path().join("elsewhere.md").exists(),
        "outside the grant it still needs approval"
    );
    let system = server.recorded()[0].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(system.ends_with("Write reports in Markdown."), "{system}");
    let store = skald_store::Store::open(data.path().join("skald.db")).unwrap();
    let s = store.get_session(1).unwrap();
    let rc = store.get_run_context(s.run_context_id.unwrap()).unwrap();
    assert_eq!(rc.permission_group, "reporting");
    // A continued session keeps its context; new context flags are refused.
    let out = run(&["exec", "--session", "1", "--group", "other", "hi"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("keeps the run context"));
}

#[test]
fn the_scratchpad_is_shared_through_the_session_and_todos_are_a_private_checklist() {
    let server = serve(vec![
        tool_call(
            "c1",
            "update_scratchpad",
            r#"{"key": "goal", "value": "ship v1"}"#,
        ),
        tool_call(
            "c2",
            "write_todos",
            r#"{"todos": [{"content": "plan", "status": "completed"}, {"content": "build", "status": "pending"}]}"#,
        ),
        answer("Noted."),
        answer("Still shipping v1."),
    ]);
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        SkaldCmd::new(data.path())
            .against(&server)
            .cmd()
            .args(["exec", "--json", "--cwd"])
            .arg(work.path())
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["set the goal"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let todo = events
        .iter()
        .find(|e| e["type"] == "tool_done" && e["tool_call_id"] == "c2")
        .unwrap();
    assert_eq!(
        todo["result"],
        "Todo list (2 items, 1 done):\n- [x] plan\n- [ ] build\n"
    );
    // Both engine tools are offered, and neither needed --approve.
    let offered: Vec<String> = server.recorded()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        offered.contains(&"update_scratchpad".into()) && offered.contains(&"write_todos".into())
    );

    let out = run(&["--session", "1", "what is the goal?"]);
    assert_eq!(out.status.code(), Some(0));
    let msgs = server.recorded()[3].body["messages"].clone();
    let board = msgs[1]["content"].as_str().unwrap();
    assert!(board.starts_with("Session scratchpad"), "{board}");
    assert!(board.contains("- goal: ship v1"));
}

#[test]
fn execute_task_runs_a_task_agent_inline_and_returns_its_answer() {
    let server = serve(vec![
        tool_call(
            "t1",
            "execute_task",
            r#"{"mode": "sync", "title": "Read", "description": "Read hello.txt", "agent_id": "researcher", "prompt": "What does hello.txt say?"}"#,
        ),
        tool_call("r1", "read_file", r#"{"path": "hello.txt"}"#),
        answer("The file says hello."),
        answer("The researcher reports: hello."),
    ]);
    let run = Run::exec(|c| c.against(&server), &[], "ask the researcher");
    assert_eq!(
        run.out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.out.stderr)
    );
    let t = types(&run.events);
    let start = t.iter().position(|x| x == "agent_start").unwrap();
    let done = t.iter().position(|x| x == "agent_done").unwrap();
    assert!(start < done);
    assert_eq!(
        t.iter().filter(|x| *x == "done").count(),
        1,
        "one done: the user's turn"
    );
    let agent = run
        .events
        .iter()
        .find(|e| e["type"] == "agent_start")
        .unwrap();
    assert_eq!(
        (agent["agent_id"].as_str(), agent["depth"].as_u64()),
        (Some("researcher"), Some(1))
    );
    let result = run
        .events
        .iter()
        .find(|e| e["type"] == "tool_done" && e["tool_call_id"] == "t1")
        .unwrap();
    assert_eq!(result["result"], "The file says hello.");
    assert_eq!(
        run.events.last().unwrap()["text"],
        "The researcher reports: hello."
    );

    let requests = server.recorded();
    // The task agent: its own prompt, the job as the user message, execute_subtask instead
    // of execute_task.
    let sub = &requests[1].body;
    assert!(
        sub["messages"][0]["content"]
            .as_str()
            .unwrap()
            .starts_with("You are a meticulous researcher")
    );
    let sub_msgs = sub["messages"].as_array().unwrap();
    assert!(
        sub_msgs
            .iter()
            .any(|m| m["role"] == "user" && m["content"] == "What does hello.txt say?")
    );
    assert!(
        !sub_msgs
            .iter()
            .any(|m| m["content"] == "ask the researcher"),
        "the parent's chat is not the child's"
    );
    let sub_tools: Vec<&str> = sub["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(sub_tools.contains(&"execute_subtask") && !sub_tools.contains(&"execute_task"));
    // The root sees the delegation's answer, not the child's own calls.
    let root = requests[3].body["messages"].as_array().unwrap().clone();
    assert!(
        root.iter()
            .any(|m| m["role"] == "tool" && m["content"] == "The file says hello.")
    );
    assert!(!root.iter().any(|m| m["tool_call_id"] == "r1"));
    let root_tools: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(root_tools.contains(&"execute_task"));

    // In the store the child's messages sit under its own stack frame.
    let store = skald_store::Store::open(run.data.path().join("skald.db")).unwrap();
    let msgs = store.list_messages(1).unwrap();
    let child: Vec<&str> = msgs
        .iter()
        .filter(|m| m.stack_id.is_some())
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(
        child,
        ["What does hello.txt say?", "", "The file says hello."]
    );
}

#[test]
fn delegation_refuses_what_it_must() {
    let server = serve(vec![
        tool_call(
            "t1",
            "execute_task",
            r#"{"mode": "someday", "title": "x", "agent_id": "researcher", "prompt": "p"}"#,
        ),
        tool_call(
            "t2",
            "execute_task",
            r#"{"mode": "sync", "title": "x", "agent_id": "main", "prompt": "p"}"#,
        ),
        tool_call(
            "t3",
            "execute_task",
            r#"{"mode": "sync", "title": "x", "agent_id": "nobody", "prompt": "p"}"#,
        ),
        answer("Could not delegate."),
    ]);
    let run = Run::exec(|c| c.against(&server), &[], "delegate badly");
    assert_eq!(run.out.status.code(), Some(0));
    let errors: Vec<String> = run
        .events
        .iter()
        .filter(|e| e["type"] == "tool_error")
        .map(|e| e["error"].as_str().unwrap().to_string())
        .collect();
    assert!(
        errors[0].contains("\"someday\" is not one of"),
        "{errors:?}"
    );
    assert!(
        errors[1].contains("`main` is not a task agent"),
        "{errors:?}"
    );
    assert!(errors[2].contains("no agent `nobody`"), "{errors:?}");
}

/// `--approve inbox`: the turn waits; `skald inbox answer` from another process lets it go
/// on — also after the waiting process was killed and the session is continued.
#[cfg(unix)]
#[test]
fn approvals_wait_in_the_inbox_across_processes_and_restarts() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let inbox_answer = |data: &std::path::Path, id: i64, decision: &str| {
        bare(data)
            .args(["inbox", "answer", &id.to_string(), decision])
            .output()
            .unwrap()
    };

    // Live: a task agent's call waits in the Inbox, is approved from another process.
    let server = serve(vec![
        tool_call(
            "t1",
            "execute_task",
            r#"{"mode": "sync", "title": "x", "agent_id": "software-engineer", "prompt": "make it"}"#,
        ),
        tool_call("c1", "execute_cmd", r#"{"command": "touch made.txt"}"#),
        answer("Made it."),
        answer("The engineer made it."),
    ]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (child, rx) = SkaldCmd::new(data.path()).against(&server).spawn_exec_json(
        work.path(),
        &["--approve", "inbox", "--sandbox", "off"],
        "make the file",
    );
    let seen = wait_for(&rx, "approval_required");
    assert!(
        seen.iter().any(|e| e["type"] == "agent_start"),
        "the child is the one waiting"
    );
    let id = seen.last().unwrap()["inbox_id"].as_i64().unwrap();
    let listed = bare(data.path())
        .args(["inbox", "list", "--json"])
        .output()
        .unwrap();
    let items: Vec<Value> = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(
        (items[0]["agent_id"].as_str(), items[0]["depth"].as_i64()),
        (Some("software-engineer"), Some(1))
    );
    assert_eq!(
        inbox_answer(data.path(), id, "approve").status.code(),
        Some(0)
    );
    let events = wait_for(&rx, "done");
    assert_eq!(events.last().unwrap()["text"], "The engineer made it.");
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(0));
    assert!(work.path().join("made.txt").exists());

    // Across a restart: the waiting process dies, the answer comes, the session goes on.
    let server = serve(vec![tool_call(
        "c2",
        "execute_cmd",
        r#"{"command": "touch later.txt"}"#,
    )]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (mut child, rx) = SkaldCmd::new(data.path()).against(&server).spawn_exec_json(
        work.path(),
        &["--approve", "inbox", "--sandbox", "off"],
        "later",
    );
    let seen = wait_for(&rx, "approval_required");
    let id = seen.last().unwrap()["inbox_id"].as_i64().unwrap();
    kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    child.wait().unwrap();
    assert_eq!(
        inbox_answer(data.path(), id, "approve").status.code(),
        Some(0)
    );
    assert!(
        !work.path().join("later.txt").exists(),
        "nothing runs until the session goes on"
    );
    let server2 = serve(vec![answer("Done after the restart.")]);
    let (child, rx) = SkaldCmd::new(data.path())
        .against(&server2)
        .spawn_exec_json(
            work.path(),
            &["--session", "1", "--approve", "inbox", "--sandbox", "off"],
            "go on",
        );
    let events = wait_for(&rx, "done");
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(0));
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "tool_done" && e["tool_call_id"] == "c2"),
        "{events:?}"
    );
    assert!(work.path().join("later.txt").exists());
}

#[test]
fn two_delegations_in_one_reply_run_concurrently_and_are_recorded_in_call_order() {
    let server = serve(vec![
        tool_calls(&[
            (
                "t1",
                "execute_task",
                r#"{"mode": "sync", "title": "a", "agent_id": "researcher", "prompt": "first job"}"#,
            ),
            (
                "t2",
                "execute_task",
                r#"{"mode": "sync", "title": "b", "agent_id": "software-engineer", "prompt": "second job"}"#,
            ),
        ]),
        // Whichever task agent asks first waits longest, so they finish out of order.
        delayed(400, answer("slow answer")),
        answer("quick answer"),
        answer("Both jobs done."),
    ]);
    let run = Run::exec(|c| c.against(&server), &[], "do two jobs");
    assert_eq!(
        run.out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.out.stderr)
    );
    let kinds: Vec<&str> = run
        .events
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    let first_done = kinds.iter().position(|k| *k == "agent_done").unwrap();
    let starts_before = kinds[..first_done]
        .iter()
        .filter(|k| **k == "agent_start")
        .count();
    assert_eq!(
        starts_before, 2,
        "both task agents were running at once: {kinds:?}"
    );
    // Which task agent got the slow reply depends on which connected first; either way
    // the quick answer is in first.
    let finished: Vec<&str> = run
        .events
        .iter()
        .filter(|e| e["type"] == "tool_done")
        .map(|e| e["result"].as_str().unwrap())
        .collect();
    assert_eq!(
        finished,
        ["quick answer", "slow answer"],
        "they finished out of order"
    );
    // The root's next request has the results in call order.
    let msgs = server.recorded()[3].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let ids: Vec<&str> = msgs
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["t1", "t2"]);
    assert_eq!(run.events.last().unwrap()["text"], "Both jobs done.");
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_the_whole_stack() {
    let server = serve(vec![
        tool_call(
            "t1",
            "execute_task",
            r#"{"mode": "sync", "title": "w", "agent_id": "software-engineer", "prompt": "wait"}"#,
        ),
        tool_call(
            "c1",
            "execute_cmd",
            r#"{"command": "sleep 30 & echo $! > deep.pid; wait"}"#,
        ),
    ]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (child, rx) = SkaldCmd::new(data.path()).against(&server).spawn_exec_json(
        work.path(),
        &["--approve", "all"],
        "delegate a wait",
    );
    wait_for(&rx, "agent_start");
    let pidfile = work.path().join("deep.pid");
    wait_for_pidfile(&pidfile);
    interrupt(&child);
    let events = wait_for(&rx, "done");
    assert_eq!(events.last().unwrap()["outcome"], "cancelled");
    let cancelled: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "tool_cancelled")
        .map(|e| e["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        cancelled,
        ["c1", "t1"],
        "the child's command, then the delegation"
    );
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(130));
    let store = skald_store::Store::open(data.path().join("skald.db")).unwrap();
    assert!(
        store
            .list_tool_calls(1)
            .unwrap()
            .iter()
            .all(|c| c.status == skald_api::ToolCallStatus::Cancelled)
    );
}

#[cfg(unix)]
#[test]
fn a_question_waits_in_the_inbox_for_a_text_answer() {
    let server = serve(vec![
        tool_call(
            "q1",
            "ask_user_clarification",
            r#"{"title": "Colour", "question": "Which colour should the button be?", "suggested_answers": ["blue", "green"]}"#,
        ),
        answer("Making it teal."),
    ]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (child, rx) = SkaldCmd::new(data.path()).against(&server).spawn_exec_json(
        work.path(),
        &["--approve", "inbox"],
        "style the button",
    );
    let seen = wait_for(&rx, "agent_question");
    let q = seen.last().unwrap();
    assert_eq!(q["suggested_answers"], json!(["blue", "green"]));
    let id = q["inbox_id"].as_i64().unwrap();
    let skald_inbox = |args: &[&str]| bare(data.path()).arg("inbox").args(args).output().unwrap();
    // A question is answered with text, not approve/reject.
    assert_eq!(
        skald_inbox(&["answer", &id.to_string(), "approve"])
            .status
            .code(),
        Some(2)
    );
    let out = skald_inbox(&["answer", &id.to_string(), "--text", "teal, actually"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = wait_for(&rx, "done");
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(0));
    assert!(events.iter().any(|e| e["type"] == "tool_done" && e["result"] == "The user answered: teal, actually"));
    let msgs = server.recorded()[1].body["messages"].clone();
    assert!(
        msgs.as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "tool" && m["content"] == "The user answered: teal, actually")
    );
}

#[test]
fn a_headless_run_cannot_ask_and_says_so() {
    let server = serve(vec![
        tool_call(
            "q1",
            "ask_user_clarification",
            r#"{"question": "Which colour?"}"#,
        ),
        answer("I picked blue."),
    ]);
    let run = Run::exec(|c| c.against(&server), &[], "style the button");
    assert_eq!(run.out.status.code(), Some(0));
    // No one to answer is the person's no, stored as a rejected call (issue #48), with
    // why for the model.
    let rejected = run
        .events
        .iter()
        .find(|e| e["type"] == "tool_rejected")
        .unwrap();
    assert!(
        rejected["reason"]
            .as_str()
            .unwrap()
            .contains("no one can answer questions in this run")
    );
    assert!(!run.events.iter().any(|e| e["type"] == "tool_error"));
}

/// A tool the agent was not offered is refused with what would offer it: the config
/// group for a configuration tool, an image provider for image generation (which the
/// config group never offers).
#[test]
fn an_unoffered_tool_is_refused_with_what_would_offer_it() {
    let server = serve(vec![
        tool_call(
            "i1",
            "image_generate",
            r#"{"provider_id": "x", "prompt": "a cat"}"#,
        ),
        tool_call("s1", "set_secret", r#"{"key": "K", "value": "v"}"#),
        answer("done"),
    ]);
    let run = Run::exec(|c| c.against(&server), &[], "draw a cat");
    assert_eq!(run.out.status.code(), Some(0));
    let error_of = |id: &str| {
        run.events
            .iter()
            .find(|e| e["type"] == "tool_error" && e["tool_call_id"] == id)
            .and_then(|e| e["error"].as_str())
            .unwrap_or_else(|| panic!("no error for {id}: {:?}", run.events))
            .to_string()
    };
    let image = error_of("i1");
    assert!(image.contains("image-generation"), "{image}");
    assert!(!image.contains("activate_tools with groups"), "{image}");
    let config = error_of("s1");
    assert!(config.contains("activate_tools"), "{config}");
}

#[cfg(unix)]
#[test]
fn a_question_is_answered_after_a_restart() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let server = serve(vec![tool_call(
        "q1",
        "ask_user_clarification",
        r#"{"question": "Which database?"}"#,
    )]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (mut child, rx) = SkaldCmd::new(data.path()).against(&server).spawn_exec_json(
        work.path(),
        &["--approve", "inbox"],
        "migrate",
    );
    let seen = wait_for(&rx, "agent_question");
    let id = seen.last().unwrap()["inbox_id"].as_i64().unwrap();
    kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    child.wait().unwrap();
    let out = bare(data.path())
        .args(["inbox", "answer", &id.to_string(), "--text", "staging"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let server2 = serve(vec![answer("Migrating staging.")]);
    let (child, rx) = SkaldCmd::new(data.path())
        .against(&server2)
        .spawn_exec_json(
            work.path(),
            &["--session", "1", "--approve", "inbox"],
            "go on",
        );
    let events = wait_for(&rx, "done");
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(0));
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "tool_done" && e["result"] == "The user answered: staging"),
        "{events:?}"
    );
}

/// A chat working in the home folder (the desktop's default) reads ordinary files freely,
/// but a read of `~/.ssh` asks (so headless it is refused) and a grep over the home folder
/// does not look inside it.
#[test]
fn credential_folders_in_the_home_folder_always_ask() {
    let (data, home_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let home = std::fs::canonicalize(home_dir.path()).unwrap();
    let aws = json!({"path": home.join(".aws/credentials")}).to_string();
    let server = serve(vec![
        tool_call("k1", "read_file", r#"{"path": ".ssh/id_ed25519"}"#),
        tool_call("k2", "read_file", &aws),
        tool_call(
            "g1",
            "grep_files",
            r#"{"pattern": "PRIVATE", "output_mode": "files_only"}"#,
        ),
        tool_call("n1", "read_file", r#"{"path": "notes.txt"}"#),
        answer("Done."),
    ]);
    for dir in [".ssh", ".aws"] {
        std::fs::create_dir_all(home.join(dir)).unwrap();
    }
    std::fs::write(
        home.join(".ssh/id_ed25519"),
        "-----BEGIN PRIVATE KEY-----\n",
    )
    .unwrap();
    std::fs::write(
        home.join(".aws/credentials"),
        "aws_secret_access_key = PRIVATE\n",
    )
    .unwrap();
    std::fs::write(home.join("notes.txt"), "PRIVATE notes, mine to read\n").unwrap();
    let out = SkaldCmd::new(data.path())
        .against(&server)
        .cmd()
        .env("HOME", &home)
        .args(["exec", "--json", "--cwd"])
        .arg(&home)
        .arg("look around")
        .output()
        .unwrap();
    let events = crate::common::events(&crate::common::ok(&out));
    for id in ["k1", "k2"] {
        let rejected = events
            .iter()
            .find(|e| e["type"] == "tool_rejected" && e["tool_call_id"] == id)
            .unwrap_or_else(|| panic!("{id} was not refused: {events:?}"));
        assert!(
            rejected["reason"]
                .as_str()
                .unwrap()
                .contains("holds credentials"),
            "{rejected}"
        );
    }
    let grep = events
        .iter()
        .find(|e| e["type"] == "tool_done" && e["tool_call_id"] == "g1")
        .unwrap()["result"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(grep.contains("notes.txt"), "{grep}");
    assert!(!grep.contains(".ssh") && !grep.contains(".aws"), "{grep}");
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "tool_done" && e["tool_call_id"] == "n1"),
        "{events:?}"
    );
    let sent = server
        .requests
        .lock()
        .unwrap()
        .last()
        .unwrap()
        .body
        .to_string();
    assert!(
        !sent.contains("BEGIN PRIVATE KEY") && !sent.contains("aws_secret"),
        "{sent}"
    );
}

#[test]
fn keys_of_configured_providers_never_reach_commands_and_sessions_stay_in_their_folder() {
    let server = serve(vec![
        tool_call(
            "c1",
            "execute_cmd",
            r#"{"command": "echo \"[$MINE_KEY]\""}"#,
        ),
        answer("Done."),
    ]);
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        data.path().join("config.toml"),
        format!(
            "[providers.mine]\nkind = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"MINE_KEY\"\n",
            server.base_url
        ),
    )
    .unwrap();
    let out = SkaldCmd::new(data.path())
        .env("SKALD_MODEL", "mine/model-x")
        .env("MINE_KEY", "sk-mine-secret")
        .cmd()
        .args(["exec", "--json", "--approve", "all", "--cwd"])
        .arg(work.path())
        .arg("show the key")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains("sk-mine-secret"),
        "the key leaked: {stdout}"
    );
    assert!(stdout.contains("[]"));
    // The session works in `work`; continuing it from elsewhere with --cwd is refused.
    let other = tempfile::tempdir().unwrap();
    let out = SkaldCmd::new(data.path())
        .env("SKALD_MODEL", "mine/model-x")
        .cmd()
        .args(["exec", "--session", "1", "--cwd"])
        .arg(other.path())
        .arg("again")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("would move it"));
}

/// The researcher's system prompt starts with this; the routed server tells its requests
/// from the chat's by it.
const RESEARCHER: &str = "meticulous researcher";

/// execute_task async: the call returns at once, the task runs in its own background
/// session, and its result is delivered into the chat, which goes on with it.
#[test]
fn an_async_task_reports_back_and_the_chat_goes_on() {
    let server = ScriptedServer::routed(vec![
        (
            RESEARCHER,
            vec![
                tool_call("r1", "read_file", r#"{"path": "hello.txt"}"#),
                delayed(500, answer("hello.txt says: hello from the fixture")),
            ],
        ),
        (
            "",
            vec![
                tool_call(
                    "t1",
                    "execute_task",
                    r#"{"mode": "async", "title": "Read hello", "agent_id": "researcher", "prompt": "What does hello.txt say?"}"#,
                ),
                answer("Started a background task."),
                answer("The task found the greeting."),
                answer("(spare)"),
            ],
        ),
    ]);
    let run = Run::exec(|c| c.against(&server), &[], "find out in the background");
    assert_eq!(
        run.out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.out.stderr)
    );
    let started = run
        .events
        .iter()
        .find(|e| e["type"] == "tool_done" && e["tool_call_id"] == "t1")
        .unwrap();
    let result: Value = serde_json::from_str(started["result"].as_str().unwrap()).unwrap();
    assert_eq!(result, json!({"task_id": 1, "status": "started"}));
    let updates: Vec<&str> = run
        .events
        .iter()
        .filter(|e| e["type"] == "task_update")
        .map(|e| e["status"].as_str().unwrap())
        .collect();
    assert_eq!(updates, ["running", "done"]);
    // The task's own events come with their session.
    assert!(
        run.events
            .iter()
            .any(|e| e["type"] == "tool_done" && e["tool_call_id"] == "r1" && e["session_id"] == 2)
    );
    // The delivery is a completed read_agent_result call in the chat, and the chat's
    // last answer came after it.
    let delivered = run
        .events
        .iter()
        .position(|e| e["type"] == "tool_start" && e["name"] == "read_agent_result")
        .expect("the result is delivered");
    let last_done = run
        .events
        .iter()
        .rposition(|e| e["type"] == "done" && e.get("session_id").is_some_and(|s| s == 1))
        .unwrap();
    assert!(delivered < last_done);

    // The model read the result as a tool result holding task_completed.
    let root_requests: Vec<_> = server
        .recorded()
        .into_iter()
        .filter(|r| {
            !r.body["messages"][0]["content"]
                .as_str()
                .unwrap()
                .contains(RESEARCHER)
        })
        .collect();
    let last = root_requests.last().unwrap().body["messages"].clone();
    let completed = last
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["content"].as_str().unwrap().contains("task_completed"))
        .expect("task_completed reaches the model");
    let payload: Value = serde_json::from_str(completed["content"].as_str().unwrap()).unwrap();
    assert_eq!(payload["result"], "hello.txt says: hello from the fixture");
    assert_eq!(payload["title"], "Read hello");
    assert_eq!(payload["status"], "done");

    // `skald tasks list` shows it done, and its session is a background one.
    let out = bare(run.data.path())
        .args(["tasks", "list", "--json"])
        .output()
        .unwrap();
    let tasks: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(tasks[0]["status"], "done");
    assert_eq!(tasks[0]["parent_session_id"], 1);
    let store = skald_store::Store::open(run.data.path().join("skald.db")).unwrap();
    let bg = store.get_session(2).unwrap();
    assert_eq!(bg.kind, skald_store::SessionKind::Background);
    assert_eq!(bg.home_session_id, Some(1));
    // The task agent was offered execute_subtask and notify, not execute_task.
    let task_req = server
        .recorded()
        .into_iter()
        .find(|r| {
            r.body["messages"][0]["content"]
                .as_str()
                .unwrap()
                .contains(RESEARCHER)
        })
        .unwrap();
    let tools: Vec<String> = task_req.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(tools.contains(&"execute_subtask".to_string()), "{tools:?}");
    assert!(tools.contains(&"notify".to_string()), "{tools:?}");
    assert!(!tools.contains(&"execute_task".to_string()), "{tools:?}");
}

/// Notifications from a background agent sent within the batch window arrive in the home
/// chat as one read_notification call.
#[test]
fn notifications_arrive_in_one_batch() {
    let server = ScriptedServer::routed(vec![
        (
            RESEARCHER,
            vec![
                tool_calls(&[
                    (
                        "n1",
                        "notify",
                        r#"{"source": "researcher", "event_type": "progress", "summary": "half way"}"#,
                    ),
                    (
                        "n2",
                        "notify",
                        r#"{"source": "researcher", "event_type": "progress", "summary": "nearly there"}"#,
                    ),
                ]),
                delayed(1500, answer("All done.")),
            ],
        ),
        (
            "",
            vec![
                tool_call(
                    "t1",
                    "execute_task",
                    r#"{"mode": "async", "title": "Long job", "agent_id": "researcher", "prompt": "work"}"#,
                ),
                answer("Started."),
                answer("Noted the progress."),
                answer("The job is done."),
                answer("(spare)"),
            ],
        ),
    ]);
    let run = Run::exec(|c| c.against(&server), &[], "run a long job");
    assert_eq!(
        run.out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.out.stderr)
    );
    let store = skald_store::Store::open(run.data.path().join("skald.db")).unwrap();
    let batches: Vec<_> = store
        .list_tool_calls(1)
        .unwrap()
        .into_iter()
        .filter(|c| c.name == "read_notification")
        .collect();
    assert_eq!(batches.len(), 1, "{batches:?}");
    let v: Value = serde_json::from_str(batches[0].result.as_deref().unwrap()).unwrap();
    let summaries: Vec<&str> = v["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["summary"].as_str().unwrap())
        .collect();
    assert_eq!(summaries, ["half way", "nearly there"]);
    // Both the batch and the task's result reached the chat's model.
    let last = server
        .recorded()
        .into_iter()
        .rfind(|r| {
            !r.body["messages"][0]["content"]
                .as_str()
                .unwrap()
                .contains(RESEARCHER)
        })
        .unwrap();
    let text = last.body["messages"].to_string();
    assert!(
        text.contains("nearly there") && text.contains("task_completed"),
        "{text}"
    );
}

/// A background task that needs approval waits in the Inbox instead of failing, even when
/// the chat itself was started with --approve never; `skald inbox answer` lets it go on.
#[cfg(unix)]
#[test]
fn a_background_task_waits_in_the_inbox_for_approval() {
    let server = ScriptedServer::routed(vec![
        (
            RESEARCHER,
            vec![
                tool_call("c1", "execute_cmd", r#"{"command": "echo from-the-task"}"#),
                answer("The command printed from-the-task."),
            ],
        ),
        (
            "",
            vec![
                tool_call(
                    "t1",
                    "execute_task",
                    r#"{"mode": "async", "title": "Echo", "agent_id": "researcher", "prompt": "run echo"}"#,
                ),
                answer("Started."),
                answer("It printed from-the-task."),
                answer("(spare)"),
            ],
        ),
    ]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (child, rx) = SkaldCmd::new(data.path()).against(&server).spawn_exec_json(
        work.path(),
        &["--sandbox", "off"],
        "echo in the background",
    );
    let seen = wait_for(&rx, "approval_required");
    let ask = seen.last().unwrap();
    assert_eq!(ask["session_id"], 2, "the task's session asks");
    let id = ask["inbox_id"].as_i64().unwrap();
    let out = bare(data.path())
        .args(["inbox", "answer", &id.to_string(), "approve"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let store = skald_store::Store::open(data.path().join("skald.db")).unwrap();
    let call = store.find_tool_call(2, "c1").unwrap().unwrap();
    assert_eq!(call.status, skald_api::ToolCallStatus::Done);
    assert!(call.result.unwrap().contains("from-the-task"));
    assert_eq!(
        store.get_task(1).unwrap().status,
        skald_store::TaskStatus::Done
    );
}

/// execute_task cron: the chat schedules a job for a task agent; `skald cron list` shows it
/// with the chat as its home.
#[test]
fn a_chat_schedules_a_job() {
    let server = serve(vec![
        tool_call(
            "t1",
            "execute_task",
            r#"{"mode": "cron", "title": "Morning digest", "agent_id": "researcher", "prompt": "Summarise the notes", "cron": "0 0 9 * * MON-FRI"}"#,
        ),
        answer("Scheduled."),
    ]);
    let run = Run::exec(
        |c| c.against(&server),
        &[],
        "every weekday at nine, summarise my notes",
    );
    assert_eq!(
        run.out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.out.stderr)
    );
    let done = run
        .events
        .iter()
        .find(|e| e["type"] == "tool_done" && e["tool_call_id"] == "t1")
        .unwrap();
    let v: Value = serde_json::from_str(done["result"].as_str().unwrap()).unwrap();
    assert_eq!(v["status"], "scheduled");
    assert!(v["next_run"].as_str().unwrap().ends_with('Z'));
    let out = bare(run.data.path())
        .args(["cron", "list", "--json"])
        .output()
        .unwrap();
    let jobs: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(jobs[0]["name"], "Morning digest");
    assert_eq!(jobs[0]["agent_id"], "researcher");
    assert_eq!(jobs[0]["home_session_id"], 1);
    assert_eq!(jobs[0]["enabled"], true);
    let label = run
        .events
        .iter()
        .find(|e| e["type"] == "tool_start" && e["tool_call_id"] == "t1")
        .unwrap()["label_short"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(label.starts_with("execute_task 📅 → researcher"), "{label}");
}

/// show_file_to_user opens a file in the viewer (an open_file event with the path as the
/// user reads it); a missing file is an error, and background agents are not offered it.
#[test]
fn show_file_to_user_opens_the_viewer() {
    let server = serve(vec![
        tool_calls(&[
            ("v1", "show_file_to_user", r#"{"path": "hello.txt"}"#),
            ("v2", "show_file_to_user", r#"{"path": "missing.md"}"#),
        ]),
        answer("Opened it."),
    ]);
    let run = Run::exec(|c| c.against(&server), &[], "show me hello.txt");
    assert_eq!(run.out.status.code(), Some(0));
    let open: Vec<&Value> = run
        .events
        .iter()
        .filter(|e| e["type"] == "open_file")
        .collect();
    assert_eq!(open.len(), 1);
    assert_eq!(open[0]["path"], "hello.txt");
    let start = run
        .events
        .iter()
        .find(|e| e["type"] == "tool_start" && e["tool_call_id"] == "v1")
        .unwrap();
    assert_eq!(start["label_short"], "show_file_to_user `hello.txt`");
    assert_eq!(start["path"], "hello.txt");
    assert!(run.events.iter().any(|e| {
        e["type"] == "tool_error"
            && e["tool_call_id"] == "v2"
            && e["error"]
                .as_str()
                .unwrap()
                .contains("no file at `missing.md`")
    }));
}

/// A chat is one process's at a time: a second `skald exec --session` on a chat whose turn
/// is running elsewhere is told it is busy, and writes nothing.
#[cfg(unix)]
#[test]
fn a_chat_in_use_by_another_process_is_refused() {
    let stalled = format!(
        "data: {}\n\nHOLD",
        json!({"choices": [{"index": 0, "delta": {"content": "Thinking"}}]})
    );
    let server = serve(vec![(200, "text/event-stream", stalled)]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (child, rx) = SkaldCmd::new(data.path()).against(&server).spawn_exec_json(
        work.path(),
        &[],
        "a long answer",
    );
    wait_for(&rx, "token_delta");
    let second = SkaldCmd::new(data.path())
        .against(&server)
        .cmd()
        .args(["exec", "--json", "--session", "1", "me too"])
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(1));
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains("in use by another Skald process"), "{err}");
    interrupt(&child);
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(130));
    let store = skald_store::Store::open(data.path().join("skald.db")).unwrap();
    let texts: Vec<String> = store
        .list_messages(1)
        .unwrap()
        .into_iter()
        .map(|m| m.content)
        .collect();
    assert!(!texts.iter().any(|t| t == "me too"), "{texts:?}");
    // Once the first process is gone, the chat is free at once.
    let third = serve(vec![answer("Free again.")]);
    let out = SkaldCmd::new(data.path())
        .against(&third)
        .cmd()
        .args(["exec", "--json", "--session", "1", "now?"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Five delegations in one reply: at most four task agents run at once, they finish out of
/// order, and their results are recorded — and shown to the model — in call order.
#[test]
fn at_most_four_delegations_run_at_once_and_results_keep_call_order() {
    let call = |id: &'static str, agent: &'static str| {
        (
            id,
            "execute_task",
            if agent == "researcher" {
                r#"{"mode": "sync", "title": "job", "agent_id": "researcher", "prompt": "a job"}"#
            } else {
                r#"{"mode": "sync", "title": "job", "agent_id": "software-engineer", "prompt": "a job"}"#
            },
        )
    };
    let server = serve(vec![
        tool_calls(&[
            call("t1", "researcher"),
            call("t2", "software-engineer"),
            call("t3", "researcher"),
            call("t4", "software-engineer"),
            call("t5", "researcher"),
        ]),
        // The first to ask waits longest: they finish in reverse order of asking.
        delayed(900, answer("answer one")),
        delayed(700, answer("answer two")),
        delayed(500, answer("answer three")),
        delayed(300, answer("answer four")),
        answer("answer five"),
        answer("All five done."),
    ]);
    let run = Run::exec(|c| c.against(&server), &[], "do five jobs");
    assert_eq!(
        run.out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.out.stderr)
    );
    let (mut running, mut most) = (0, 0);
    for e in &run.events {
        match e["type"].as_str().unwrap() {
            "agent_start" => {
                running += 1;
                most = most.max(running);
            }
            "agent_done" => running -= 1,
            _ => {}
        }
    }
    assert_eq!(most, 4, "four at once, never five");
    let done_order: Vec<&str> = run
        .events
        .iter()
        .filter(|e| e["type"] == "tool_done")
        .filter_map(|e| e["tool_call_id"].as_str())
        .filter(|id| id.starts_with('t'))
        .collect();
    assert_ne!(
        done_order,
        ["t1", "t2", "t3", "t4", "t5"],
        "they finished out of order"
    );
    // The model reads the results in the order it made the calls.
    let last = server.recorded().last().unwrap().body["messages"].clone();
    let ids: Vec<&str> = last
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["t1", "t2", "t3", "t4", "t5"]);
}

/// The user a test runs Skald as so that /proc's same-user rules apply: root may read any
/// process (CAP_SYS_PTRACE), so a test running as root runs Skald as `nobody`, with a copy
/// of the binary and folders that user can reach. `None` when already unprivileged.
#[cfg(target_os = "linux")]
fn unprivileged() -> Option<(u32, u32)> {
    let uid = std::fs::metadata("/proc/self").map(|m| {
        use std::os::unix::fs::MetadataExt;
        m.uid()
    });
    (uid.ok() == Some(0)).then_some((65534, 65534))
}

/// `skald exec --json --approve all` in `work`, as the unprivileged user of
/// `unprivileged()` when the test runs as root; with a provider key of `key`.
#[cfg(target_os = "linux")]
fn exec_unprivileged(server: &ScriptedServer, key: &str, prompt: &str) -> (Run, tempfile::TempDir) {
    use std::os::unix::fs::PermissionsExt;
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let bin_dir = tempfile::tempdir().unwrap();
    let bin = bin_dir.path().join("skald");
    std::fs::copy(env!("CARGO_BIN_EXE_skald"), &bin).unwrap();
    let cmd = match unprivileged() {
        Some((uid, gid)) => {
            for d in [data.path(), work.path(), bin_dir.path()] {
                std::os::unix::fs::chown(d, Some(uid), Some(gid)).unwrap();
                std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
            let mut c = Command::new("setpriv");
            c.args([
                format!("--reuid={uid}"),
                format!("--regid={gid}"),
                "--clear-groups".to_string(),
            ])
            .arg(&bin);
            c
        }
        None => Command::new(&bin),
    };
    let (out, events) = SkaldCmd::isolating(cmd, data.path())
        .against(server)
        .env("OPENAI_API_KEY", key)
        .env("HOME", data.path())
        .exec_json(work.path(), &["--approve", "all"], prompt);
    (
        Run {
            out,
            events,
            data,
            work,
        },
        bin_dir,
    )
}

/// The review's finding: any approved command could read the provider keys from
/// `/proc/$PPID/environ` (and the memory they sit in). Skald is non-dumpable, so the
/// kernel refuses the reads to processes of the same user.
#[cfg(target_os = "linux")]
#[test]
fn a_command_cannot_read_skalds_environment_or_memory() {
    const KEY: &str = "sk-canary-7f3a9c1e-provider-key";
    let probe = "read -r _ _ _ pp _ < /proc/self/stat; cat /proc/$pp/environ; for f in /proc/$pp/task/*/environ; do cat $f; done; \
                 dd if=/proc/$pp/mem bs=1 count=1 skip=4194304 2>&1; \
                 cat /proc/$pp/cmdline >/dev/null && echo cmdline-readable; echo probe-done";
    // The attack is real where the parent is dumpable: the same probe, the same user,
    // from a plain shell holding the key, reads it.
    let mut control = match unprivileged() {
        Some((uid, gid)) => {
            let mut c = Command::new("setpriv");
            c.args([
                format!("--reuid={uid}"),
                format!("--regid={gid}"),
                "--clear-groups".into(),
            ]);
            c.arg("sh");
            c
        }
        None => Command::new("sh"),
    };
    let control = control
        .arg("-c")
        .arg(format!("sh -c '{}'; sleep 0", probe.replace('\'', "")))
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&control.stdout).contains(KEY),
        "the probe must work against a dumpable parent: {}",
        String::from_utf8_lossy(&control.stdout)
    );

    let server = serve(vec![
        tool_call(
            "c1",
            "execute_cmd",
            &json!({ "command": probe }).to_string(),
        ),
        answer("Done."),
    ]);
    let (run, _bin) = exec_unprivileged(&server, KEY, "look around");
    assert_eq!(
        run.out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.out.stderr)
    );
    let result = crate::common::result(&run.events, "c1");
    assert!(result.contains("probe-done"), "{result}");
    assert!(
        result.contains("cmdline-readable"),
        "only the private parts are refused: {result}"
    );
    assert!(
        !result.contains(KEY),
        "the key leaked to the command: {result}"
    );
    assert!(result.contains("Permission denied"), "{result}");
    for request in server.recorded() {
        assert!(
            !request.body.to_string().contains(KEY),
            "the key reached the model"
        );
    }
}

/// The review's finding: the data directory was 0755 with 0644 files, so other local
/// users could read every chat and log.
#[cfg(unix)]
#[test]
fn the_data_directory_and_its_files_are_the_users_alone() {
    use std::os::unix::fs::PermissionsExt;
    let server = serve(vec![
        tool_call("c1", "read_file", r#"{"path": "hello.txt"}"#),
        answer("Read."),
    ]);
    let run = Run::exec(|c| c.against(&server), &[], "read it");
    assert_eq!(run.out.status.code(), Some(0));
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(run.data.path()), 0o700);
    let mut seen = Vec::new();
    let mut stack = vec![run.data.path().to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                assert_eq!(mode(&path), 0o700, "{}", path.display());
                stack.push(path);
            } else {
                assert_eq!(mode(&path), 0o600, "{}", path.display());
                seen.push(path.file_name().unwrap().to_string_lossy().into_owned());
            }
        }
    }
    for name in ["skald.db", "config.toml"] {
        assert!(seen.iter().any(|s| s == name), "{name} in {seen:?}");
    }
    assert!(
        seen.iter().any(|s| s.ends_with(".log")),
        "a log file in {seen:?}"
    );
}

/// A background process (`execute_cmd` with `background: true`) a one-shot turn started
/// ends with `skald exec`, which says so; the call itself returned at once.
#[test]
fn a_background_process_ends_with_skald_exec_and_it_says_so() {
    let server = serve(vec![
        tool_call(
            "c1",
            "execute_cmd",
            r#"{"command": "read -r pid _ < /proc/self/stat; echo $pid > bg.tmp; mv bg.tmp bg.pid; exec sleep 300", "background": true}"#,
        ),
        // Waits until it has started, for the test to know its pid.
        tool_call(
            "c2",
            "execute_cmd",
            r#"{"command": "while [ ! -s bg.pid ]; do sleep 0.05; done; echo seen"}"#,
        ),
        answer("Started."),
    ]);
    let run = Run::exec(|c| c.against(&server), &["--approve", "all"], "start it");
    let stderr = String::from_utf8_lossy(&run.out.stderr);
    assert_eq!(run.out.status.code(), Some(0), "{stderr}");
    let done = result(&run.events, "c1");
    assert!(
        done.contains("started in the background as process 1"),
        "{done}"
    );
    assert!(
        stderr.contains("stopped 1 background process the turn left running"),
        "{stderr}"
    );
    // Started before the turn ended, and gone now.
    let pid = std::fs::read_to_string(run.work.path().join("bg.pid")).unwrap_or_default();
    let cmdline = format!("/proc/{}/cmdline", pid.trim());
    assert!(
        !pid.trim().is_empty() && std::fs::read(&cmdline).map_or(true, |c| c.is_empty()),
        "{pid}"
    );
}
