//! MCP end to end: `skald mcp` and `skald exec` with a scripted model driving the
//! reference server `@modelcontextprotocol/server-everything` (tests/mcp, installed by
//! `scripts/setup.sh --test`) over stdio on 127.0.0.1.

use serde_json::Value;
use skald_testkit::{ScriptedServer, answer, delayed, tool_call, tool_calls};
use std::path::{Path, PathBuf};

use crate::common::{events, offered, ok, result, set_secret, skald, spawn_json, wait_for};

fn everything_js() -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        p.exists(),
        "the reference MCP servers are not installed: run `bash scripts/setup.sh --test`"
    );
    p.display().to_string()
}

pub(crate) fn add_everything(data: &Path) {
    let out = skald(data, None)
        .args([
            "mcp",
            "add",
            "everything",
            "--description",
            "the MCP reference server",
            "--",
        ])
        .args(["node", &everything_js(), "stdio"])
        .output()
        .unwrap();
    let text = ok(&out);
    assert!(text.contains("is ready with"), "{text}");
}

/// An agent registers server-everything itself (config group), activates it, and calls
/// its tools; model-provider keys never reach the server's process.
#[test]
fn an_agent_registers_activates_and_calls_an_mcp_server() {
    let js = everything_js();
    let register = serde_json::json!({
        "name": "everything", "command": "node", "args": [js, "stdio"],
        "description": "the MCP reference server"
    })
    .to_string();
    let server = ScriptedServer::new(vec![
        tool_call("a1", "activate_tools", r#"{"groups": ["config"]}"#),
        tool_call("r1", "register_mcp", &register),
        tool_call("a2", "activate_tools", r#"{"groups": ["everything"]}"#),
        tool_calls(&[
            (
                "e1",
                "mcp__everything__echo",
                r#"{"message": "hello over MCP"}"#,
            ),
            ("s1", "mcp__everything__get-sum", r#"{"a": 2, "b": 3}"#),
            ("v1", "mcp__everything__get-env", "{}"),
        ]),
        answer("2 + 3 = 5."),
    ]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let out = skald(data.path(), Some(&server))
        .args(["exec", "--json", "--approve", "all", "--cwd"])
        .arg(work.path())
        .arg("add 2 and 3 with the everything server")
        .output()
        .unwrap();
    let ev = events(&ok(&out));
    assert!(
        result(&ev, "r1").contains("ready with"),
        "{}",
        result(&ev, "r1")
    );
    assert!(
        result(&ev, "a2").contains("everything: ready"),
        "{}",
        result(&ev, "a2")
    );
    assert!(
        result(&ev, "e1").contains("hello over MCP"),
        "{}",
        result(&ev, "e1")
    );
    assert!(result(&ev, "s1").contains('5'), "{}", result(&ev, "s1"));
    let env = result(&ev, "v1");
    assert!(
        env.starts_with("tool_done") && env.contains("PATH"),
        "{env}"
    );
    assert!(
        !env.contains("sk-test-provider-key"),
        "a provider key reached the server"
    );
    // Tools arrive only after activation, from the next step.
    assert!(!offered(&server, 2).iter().any(|t| t.starts_with("mcp__")));
    assert!(offered(&server, 3).contains(&"mcp__everything__echo".to_string()));
    // The labels show the call; the tool names were recorded for the approval UI.
    let start = ev
        .iter()
        .find(|e| e["type"] == "tool_start" && e["tool_call_id"] == "e1")
        .unwrap();
    assert_eq!(start["name"], "mcp__everything__echo");
    let text = ok(&skald(data.path(), None).args(["tools"]).output().unwrap());
    assert!(text.contains("mcp__everything__echo"), "{text}");
}

/// Grants outlive the process: the continued session's prompt lists the server as active
/// and, once it is ready, its tools are offered without activating it again. A server
/// that never answers does not hold the turn up.
#[test]
fn grants_survive_a_restart_and_a_silent_server_never_blocks() {
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    add_everything(data.path());
    let first = ScriptedServer::new(vec![
        tool_call("a1", "activate_tools", r#"{"groups": ["everything"]}"#),
        answer("Activated."),
    ]);
    ok(&skald(data.path(), Some(&first))
        .args(["exec", "--json", "--approve", "all", "--cwd"])
        .arg(work.path())
        .arg("activate everything")
        .output()
        .unwrap());
    // A second server that never answers initialize (registered without the check, which
    // would wait out its connect timeout).
    let text = ok(&skald(data.path(), None)
        .args(["mcp", "add", "silent", "--no-check", "--"])
        .args(["sh", "-c", "sleep 120"])
        .output()
        .unwrap());
    assert!(text.contains("registered `silent`"), "{text}");

    // The first reply is held back a moment, so the server is ready by the second round.
    let second = ScriptedServer::new(vec![
        delayed(3000, tool_call("w1", "write_todos", r#"{"todos": []}"#)),
        tool_call(
            "e1",
            "mcp__everything__echo",
            r#"{"message": "still granted"}"#,
        ),
        answer("Done."),
    ]);
    let started = std::time::Instant::now();
    let out = skald(data.path(), Some(&second))
        .args([
            "exec",
            "--json",
            "--approve",
            "all",
            "--session",
            "1",
            "echo again",
        ])
        .output()
        .unwrap();
    let ev = events(&ok(&out));
    // The silent server's 30 s connect timeout did not hold the turn up.
    assert!(started.elapsed() < std::time::Duration::from_secs(25));
    let prompt = second.recorded()[0].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(prompt.contains("- everything"), "{prompt}");
    assert!(prompt.contains(" [active]"), "{prompt}");
    assert!(
        prompt.contains("- silent (silent)") && prompt.contains(" [not active]"),
        "{prompt}"
    );
    // Whether a server is ready is live, so it is said at the end of the context, where
    // a change does not make the shared beginning new.
    assert!(!prompt.contains("connecting"), "{prompt}");
    let messages = second.recorded()[0].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let tail = messages.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        tail.contains("MCP servers now: ")
            && tail.contains("silent connecting")
            && tail.contains("everything "),
        "{tail}"
    );
    assert!(offered(&second, 1).contains(&"mcp__everything__echo".to_string()));
    assert!(
        result(&ev, "e1").contains("still granted"),
        "{}",
        result(&ev, "e1")
    );
}

fn spawn_exec(
    data: &Path,
    server: &ScriptedServer,
    prompt: &str,
) -> (std::process::Child, std::sync::mpsc::Receiver<Value>) {
    let mut cmd = skald(data, Some(server));
    cmd.args(["exec", "--json", "--approve", "all", prompt]);
    spawn_json(cmd)
}

/// Every event of a chat that was `seen` while it ran and the rest, once it ended well.
fn ended(
    child: std::process::Child,
    seen: Vec<Value>,
    rx: &std::sync::mpsc::Receiver<Value>,
) -> Vec<Value> {
    ok(&child.wait_with_output().unwrap());
    seen.into_iter().chain(rx.try_iter()).collect()
}

/// A server's form (elicitation) waits in the Agent Inbox and is filled in from another
/// process with `skald inbox answer ID --text`.
#[test]
fn an_elicitation_is_answered_from_the_inbox() {
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let _ = work;
    add_everything(data.path());
    let server = ScriptedServer::new(vec![
        tool_call("a1", "activate_tools", r#"{"groups": ["everything"]}"#),
        // Held back a moment: the server adds its form tool once it knows we take forms.
        delayed(1500, tool_call("w1", "write_todos", r#"{"todos": []}"#)),
        tool_call("f1", "mcp__everything__trigger-elicitation-request", "{}"),
        answer("Thanks, Ada."),
    ]);
    let (child, rx) = spawn_exec(data.path(), &server, "fill in the form");
    let seen = wait_for(&rx, |e| e["type"] == "inbox_requested");
    let item = &seen.last().unwrap()["item"];
    assert_eq!(item["kind"], "elicitation");
    assert!(item["payload"]["schema"]["properties"]["name"].is_object());
    let id = item["id"].as_i64().unwrap().to_string();
    // It is a form: approve alone is refused; a JSON answer fills it.
    let refused = skald(data.path(), None)
        .args(["inbox", "answer", &id, "approve"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    ok(&skald(data.path(), None)
        .args([
            "inbox",
            "answer",
            &id,
            "--text",
            r#"{"name": "Ada Lovelace"}"#,
        ])
        .output()
        .unwrap());
    let ev = ended(child, seen, &rx);
    assert!(
        result(&ev, "f1").contains("Ada Lovelace"),
        "{}",
        result(&ev, "f1")
    );
}

/// Ctrl-C during a long MCP call stops it (the server is told) and the turn ends.
#[cfg(unix)]
#[test]
fn ctrl_c_stops_a_long_mcp_call() {
    let (data, _work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    add_everything(data.path());
    let server = ScriptedServer::new(vec![
        tool_call("a1", "activate_tools", r#"{"groups": ["everything"]}"#),
        tool_call(
            "l1",
            "mcp__everything__trigger-long-running-operation",
            r#"{"duration": 60, "steps": 60}"#,
        ),
        answer("(not reached)"),
    ]);
    let (child, rx) = spawn_exec(data.path(), &server, "run the long operation");
    // Progress arrives while it runs.
    wait_for(&rx, |e| {
        e["type"] == "tool_progress" && e["tool_call_id"] == "l1"
    });
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let seen = wait_for(&rx, |e| e["type"] == "done");
    assert_eq!(seen.last().unwrap()["outcome"], "cancelled");
    assert!(
        seen.iter()
            .any(|e| e["type"] == "tool_cancelled" && e["tool_call_id"] == "l1")
    );
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
}

/// A secret reaches an MCP server through `${secret:NAME}`, and its value is redacted
/// from what the server sends back; an agent's `set_secret` value is kept nowhere but the
/// vault, and `list_secrets` shows names only.
#[test]
fn secrets_reach_servers_but_never_the_model() {
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let text = set_secret(data.path(), "NOTES_TOKEN", "tok-very-secret-4242");
    assert!(text.contains("encrypted vault"), "{text}");
    let listed = ok(&skald(data.path(), None)
        .args(["secrets", "list"])
        .output()
        .unwrap());
    assert_eq!(listed.trim(), "NOTES_TOKEN");
    let out = skald(data.path(), None)
        .args([
            "mcp",
            "add",
            "everything",
            "--env",
            "NOTES_TOKEN=${secret:NOTES_TOKEN}",
            "--",
        ])
        .args(["node", &everything_js(), "stdio"])
        .output()
        .unwrap();
    assert!(ok(&out).contains("is ready"));

    let server = ScriptedServer::new(vec![
        tool_call(
            "a1",
            "activate_tools",
            r#"{"groups": ["everything", "config"]}"#,
        ),
        tool_calls(&[
            ("v1", "mcp__everything__get-env", "{}"),
            (
                "s1",
                "set_secret",
                r#"{"key": "AGENT_KEY", "value": "agent-given-9999"}"#,
            ),
            ("l1", "list_secrets", "{}"),
        ]),
        answer("Done."),
    ]);
    let out = skald(data.path(), Some(&server))
        .args(["exec", "--json", "--approve", "all", "--cwd"])
        .arg(work.path())
        .arg("check the environment")
        .output()
        .unwrap();
    let stdout = ok(&out);
    let ev = events(&stdout);
    let env = result(&ev, "v1");
    assert!(
        env.contains("NOTES_TOKEN") && env.contains("[secret:NOTES_TOKEN]"),
        "{env}"
    );
    assert!(
        !stdout.contains("tok-very-secret-4242"),
        "a secret value reached the output"
    );
    assert!(
        !stdout.contains("agent-given-9999"),
        "set_secret's value was shown"
    );
    assert!(
        result(&ev, "s1").contains("stored"),
        "{}",
        result(&ev, "s1")
    );
    assert!(result(&ev, "l1").contains("AGENT_KEY") && result(&ev, "l1").contains("NOTES_TOKEN"));
    // The model never sees the values again, and the database never held them.
    let last = server.recorded().last().unwrap().body.to_string();
    assert!(!last.contains("tok-very-secret-4242") && !last.contains("agent-given-9999"));
    let db = std::fs::read(data.path().join("skald.db")).unwrap();
    let wal = std::fs::read(data.path().join("skald.db-wal")).unwrap_or_default();
    for bytes in [db, wal] {
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains("tok-very-secret-4242") && !text.contains("agent-given-9999"));
    }
    // The CLI still has both.
    let listed = ok(&skald(data.path(), None)
        .args(["secrets", "list", "--json"])
        .output()
        .unwrap());
    assert_eq!(listed.trim(), r#"["AGENT_KEY","NOTES_TOKEN"]"#);
    ok(&skald(data.path(), None)
        .args(["secrets", "rm", "AGENT_KEY"])
        .output()
        .unwrap());
    let gone = skald(data.path(), None)
        .args(["secrets", "rm", "AGENT_KEY"])
        .output()
        .unwrap();
    assert_eq!(gone.status.code(), Some(2));
}

/// `skald plugins configure image-generation --enable --config CONFIG`, which must work.
fn turn_images_on(data: &Path, config: Value) {
    ok(&skald(data, None)
        .args([
            "plugins",
            "configure",
            "image-generation",
            "--enable",
            "--config",
            &config.to_string(),
        ])
        .output()
        .unwrap());
}

/// The image-generation plugin: configured from the command line with a secret key, it
/// gives agents image_generate, which calls an OpenAI-compatible images API (here a
/// scripted one), saves the image under the working folder and opens it in the viewer.
#[test]
fn the_image_plugin_generates_and_saves_an_image() {
    const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let images_reply = (
        200u16,
        "application/json",
        serde_json::json!({"data": [{"b64_json": PNG_1X1, "revised_prompt": "a small red square"}]})
            .to_string(),
    );
    let server = ScriptedServer::new(vec![
        tool_call("p1", "image_generate_providers_list", "{}"),
        tool_call(
            "i1",
            "image_generate",
            r#"{"provider_id": "openai", "prompt": "A red square!", "extra_params": {"quality": "low"}}"#,
        ),
        images_reply,
        answer("Here is your square."),
    ]);
    // Off until configured: the tools are not offered.
    let listed = ok(&skald(data.path(), None)
        .args(["plugins", "list"])
        .output()
        .unwrap());
    assert!(
        listed.contains("image-generation") && listed.contains("off"),
        "{listed}"
    );
    set_secret(data.path(), "IMG_KEY", "img-secret-777");
    let bad = skald(data.path(), None)
        .args([
            "plugins",
            "configure",
            "image-generation",
            "--enable",
            "--config",
        ])
        .arg(r#"{"api_key": "img-secret-777"}"#)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "a literal key is refused");
    turn_images_on(
        data.path(),
        serde_json::json!({"base_url": server.base_url, "api_key": "${secret:IMG_KEY}"}),
    );

    let out = skald(data.path(), Some(&server))
        .args(["exec", "--json", "--cwd"])
        .arg(work.path())
        .arg("draw a red square")
        .output()
        .unwrap();
    let stdout = ok(&out);
    let ev = events(&stdout);
    assert!(
        result(&ev, "p1").contains("gpt-image-1"),
        "{}",
        result(&ev, "p1")
    );
    let r = result(&ev, "i1");
    assert!(r.starts_with("tool_done"), "{r}");
    let v: Value = serde_json::from_str(r.trim_start_matches("tool_done ")).unwrap();
    let rel = v["path"].as_str().unwrap();
    assert!(
        rel.starts_with("images/a-red-square-") && rel.ends_with(".png"),
        "{rel}"
    );
    let bytes = std::fs::read(work.path().join(rel)).unwrap();
    assert_eq!(&bytes[..4], b"\x89PNG");
    assert!(
        ev.iter()
            .any(|e| e["type"] == "open_file" && e["path"] == rel)
    );
    assert_eq!(v["revised_prompt"], "a small red square");
    // The images API got the key from the secret, the prompt and the extra parameters.
    let req = &server.recorded()[2];
    assert!(
        req.headers.starts_with("POST /v1/images/generations"),
        "{}",
        req.headers
    );
    assert!(
        req.headers
            .to_ascii_lowercase()
            .contains("authorization: bearer img-secret-777")
    );
    assert_eq!(req.body["prompt"], "A red square!");
    assert_eq!(req.body["quality"], "low");
    assert!(!stdout.contains("img-secret-777"));
}

/// Ctrl-C while an image is being generated stops the request at once, and the calls the
/// same reply makes after it never start: the scratchpad stays empty. (Before every tool
/// went through the registry, image_generate waited out the provider's timeout and the
/// engine tool after it ran in a stopped turn.)
#[cfg(unix)]
#[test]
fn ctrl_c_stops_an_image_generation_and_the_calls_after_it() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;

    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let server = ScriptedServer::new(vec![
        tool_calls(&[
            (
                "i1",
                "image_generate",
                r#"{"provider_id": "openai", "prompt": "A slow square"}"#,
            ),
            (
                "s1",
                "update_scratchpad",
                r#"{"key": "after", "value": "ran in a stopped turn"}"#,
            ),
        ]),
        // The images API never answers within the test.
        delayed(600_000, answer("unused")),
    ]);
    set_secret(data.path(), "IMG_KEY", "img-secret-777");
    turn_images_on(
        data.path(),
        serde_json::json!({
            "base_url": server.base_url,
            "api_key": "${secret:IMG_KEY}",
            "timeout_secs": 5
        }),
    );
    let mut cmd = skald(data.path(), Some(&server));
    cmd.args(["exec", "--json", "--cwd"])
        .arg(work.path())
        .arg("draw a slow square");
    let (child, rx) = spawn_json(cmd);
    wait_for(&rx, |e| {
        e["type"] == "tool_start" && e["tool_call_id"] == "i1"
    });
    // The request is in flight once the images API has it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while server.recorded().len() < 2 {
        assert!(std::time::Instant::now() < deadline, "no image request");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let seen = wait_for(&rx, |e| {
        e["tool_call_id"] == "i1" && e["type"] != "tool_start"
    });
    assert_eq!(seen.last().unwrap()["type"], "tool_cancelled", "{seen:?}");
    let rest: Vec<Value> = rx.iter().collect();
    let s1: Vec<&Value> = rest.iter().filter(|e| e["tool_call_id"] == "s1").collect();
    assert!(
        s1.iter().all(|e| e["type"] != "tool_done"),
        "the call after the stop ran: {s1:?}"
    );
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert!(!work.path().join("images").exists());
}

/// A model that calls what it was not offered — a made-up tool, a configuration tool
/// before `activate_tools`, a registered MCP server's tool before activating it — gets
/// each call refused with a reason it can act on, and nothing runs.
#[test]
fn tools_that_were_not_offered_are_refused_with_a_reason() {
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    add_everything(data.path());
    let server = ScriptedServer::new(vec![
        tool_calls(&[
            ("u1", "no_such_tool", "{}"),
            (
                "u2",
                "register_mcp",
                r#"{"name": "x", "command": "touch", "args": ["registered"]}"#,
            ),
            ("u3", "mcp__everything__echo", r#"{"message": "too early"}"#),
        ]),
        answer("I will use what I have."),
    ]);
    let out = skald(data.path(), Some(&server))
        .args(["exec", "--json", "--approve", "all", "--cwd"])
        .arg(work.path())
        .arg("try things")
        .output()
        .unwrap();
    let ev = events(&ok(&out));
    let r1 = result(&ev, "u1");
    assert!(
        r1.starts_with("tool_error") && r1.contains("not among the tools you have"),
        "{r1}"
    );
    let r2 = result(&ev, "u2");
    assert!(
        r2.starts_with("tool_error") && r2.contains("activate_tools"),
        "{r2}"
    );
    let r3 = result(&ev, "u3");
    assert!(r3.starts_with("tool_error"), "{r3}");
    assert!(!work.path().join("registered").exists());
    let listed = ok(&skald(data.path(), None)
        .args(["mcp", "list"])
        .output()
        .unwrap());
    assert!(!listed.contains("\nx "), "nothing was registered: {listed}");
    assert_eq!(
        ev.last().unwrap()["text"],
        "I will use what I have.",
        "the turn goes on"
    );
}

/// The last user message of the scripted model's `i`-th request.
fn last_user(server: &ScriptedServer, i: usize) -> String {
    let body = &server.recorded()[i].body;
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

const ARCHITECTURE: &str = "demo://resource/static/document/architecture.md";

/// A server's prompt runs as `/server:prompt ARGS` in `skald exec`, an `@server:uri`
/// mention attaches the resource, and an agent that activated the server lists and reads
/// its resources with read_mcp_resource, which is offered only then.
#[test]
fn prompts_run_as_slash_commands_and_resources_attach_and_read() {
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    add_everything(data.path());
    let server = ScriptedServer::new(vec![
        answer("It is sunny."),
        answer("An architecture."),
        tool_call("a1", "activate_tools", r#"{"groups": ["everything"]}"#),
        tool_call("l1", "read_mcp_resource", r#"{"server": "everything"}"#),
        tool_call(
            "r1",
            "read_mcp_resource",
            &serde_json::json!({"server": "everything", "uri": ARCHITECTURE}).to_string(),
        ),
        answer("Read it."),
    ]);
    let exec = |prompt: &str| {
        skald(data.path(), Some(&server))
            .args(["exec", "--json", "--approve", "all", "--cwd"])
            .arg(work.path())
            .arg(prompt)
            .output()
            .unwrap()
    };
    // Positional words bind to the prompt's arguments in order.
    let out = exec("/everything:args-prompt Paris");
    let ev = events(&ok(&out));
    assert_eq!(last_user(&server, 0), "What's weather in Paris?");
    let shown = ev.iter().find(|e| e["type"] == "user_message").unwrap();
    assert_eq!(shown["text"], "What's weather in Paris?");

    ok(&exec(&format!(
        "summarise @everything:{ARCHITECTURE}, please"
    )));
    let sent = last_user(&server, 1);
    assert!(
        sent.starts_with(&format!("summarise @everything:{ARCHITECTURE}, please")),
        "{sent}"
    );
    assert!(
        sent.contains(&format!(
            "--- attached: {ARCHITECTURE} from the MCP server everything ---"
        )) && sent.contains("# Everything Server – Architecture"),
        "{sent}"
    );

    let ev = events(&ok(&exec("read the architecture document")));
    let listed = result(&ev, "l1");
    assert!(listed.contains(ARCHITECTURE), "{listed}");
    let read = result(&ev, "r1");
    assert!(
        read.contains("# Everything Server – Architecture"),
        "{read}"
    );
    assert!(!offered(&server, 2).contains(&"read_mcp_resource".to_string()));
    assert!(offered(&server, 3).contains(&"read_mcp_resource".to_string()));

    // A prompt missing its required argument, or one the server does not have, says so
    // and sends nothing to the model.
    let asked = server.recorded().len();
    for (line, says) in [
        ("/everything:args-prompt", "needs `city` (Name of the city)"),
        (
            "/everything:no-such-prompt",
            "has no prompt `no-such-prompt`",
        ),
    ] {
        let out = exec(line);
        assert_ne!(out.status.code(), Some(0), "{line}");
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(text.contains(says), "{line}: {text}");
    }
    assert_eq!(server.recorded().len(), asked);
}

/// A server sees the chat's folder as its root, asks the chat's model through the user's
/// approval in the Inbox (sampling), and its resource links reach the chat.
#[test]
fn roots_are_the_chats_folder_and_sampling_waits_for_the_user() {
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    add_everything(data.path());
    let server = ScriptedServer::new(vec![
        tool_call("a1", "activate_tools", r#"{"groups": ["everything"]}"#),
        // Held back a moment: the server adds its roots and sampling tools once it knows
        // the client takes them.
        delayed(1500, tool_call("w1", "write_todos", r#"{"todos": []}"#)),
        tool_call("g1", "mcp__everything__get-roots-list", "{}"),
        tool_call(
            "s1",
            "mcp__everything__trigger-sampling-request",
            r#"{"prompt": "say hi", "maxTokens": 50}"#,
        ),
        // The sampling request's answer, from the chat's model.
        answer("hello from the model"),
        tool_call(
            "k1",
            "mcp__everything__get-resource-links",
            r#"{"count": 2}"#,
        ),
        answer("done"),
    ]);
    let mut cmd = skald(data.path(), Some(&server));
    cmd.args(["exec", "--json", "--approve", "all", "--cwd"])
        .arg(work.path())
        .arg("exercise the server");
    let (child, rx) = spawn_json(cmd);
    let seen = wait_for(&rx, |e| e["type"] == "inbox_requested");
    let item = &seen.last().unwrap()["item"];
    assert_eq!(item["kind"], "approval");
    assert!(
        item["title"]
            .as_str()
            .unwrap()
            .starts_with("everything asks the model:"),
        "{item}"
    );
    assert!(
        item["payload"]["arguments"].to_string().contains("say hi"),
        "{item}"
    );
    let id = item["id"].as_i64().unwrap().to_string();
    ok(&skald(data.path(), None)
        .args(["inbox", "answer", &id, "approve"])
        .output()
        .unwrap());
    let ev = ended(child, seen, &rx);
    let roots = result(&ev, "g1");
    let folder = work.path().canonicalize().unwrap();
    let name = folder.file_name().unwrap().to_string_lossy().to_string();
    assert!(
        roots.contains("Current MCP Roots (1 total)") && roots.contains(&name),
        "{roots}"
    );
    let sampled = result(&ev, "s1");
    assert!(sampled.contains("hello from the model"), "{sampled}");
    // The model was asked without tools, with the server's message.
    let asked = server
        .recorded()
        .into_iter()
        .find(|r| r.body.to_string().contains("say hi"))
        .unwrap();
    assert!(
        asked
            .body
            .get("tools")
            .is_none_or(|t| t.as_array().is_some_and(Vec::is_empty))
    );
    let links = result(&ev, "k1");
    assert!(
        links.contains("[resource link demo://resource/dynamic/"),
        "{links}"
    );
    // Every model call is counted, the sampling one too (the chat's cost, the budget).
    let store = skald_store::Store::open(data.path().join("skald.db")).unwrap();
    assert_eq!(
        store.usage_since(0).unwrap().requests as usize,
        server.recorded().len()
    );
}

/// With more tool definitions than `[mcp] tool_search_percent` of the context window,
/// an agent gets search_mcp_tools instead of every definition, and what it finds is in
/// its list from the next step.
#[test]
fn too_many_tools_are_searched_instead_of_all_offered() {
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    add_everything(data.path());
    std::fs::write(
        data.path().join("config.toml"),
        "[models]\ncontext_window = 4000\n\n[mcp]\ntool_search_percent = 10\n",
    )
    .unwrap();
    let server = ScriptedServer::new(vec![
        tool_call("a1", "activate_tools", r#"{"groups": ["everything"]}"#),
        tool_call(
            "q1",
            "search_mcp_tools",
            r#"{"query": "echo a message back"}"#,
        ),
        tool_call("e1", "mcp__everything__echo", r#"{"message": "found it"}"#),
        answer("done"),
    ]);
    let out = skald(data.path(), Some(&server))
        .args(["exec", "--json", "--approve", "all", "--cwd"])
        .arg(work.path())
        .arg("echo something")
        .output()
        .unwrap();
    let ev = events(&ok(&out));
    let after_activation = offered(&server, 1);
    assert!(after_activation.contains(&"search_mcp_tools".to_string()));
    assert!(
        !after_activation.iter().any(|t| t.starts_with("mcp__")),
        "{after_activation:?}"
    );
    let found = result(&ev, "q1");
    assert!(found.contains("mcp__everything__echo"), "{found}");
    let after_search = offered(&server, 2);
    assert!(after_search.contains(&"mcp__everything__echo".to_string()));
    assert!(
        after_search
            .iter()
            .filter(|t| t.starts_with("mcp__"))
            .count()
            < 9,
        "only what the search found: {after_search:?}"
    );
    assert!(result(&ev, "e1").contains("found it"));
}

/// `skald tools` starts the servers that are on and lists their tools as models see them,
/// beside the built-in ones.
#[test]
fn skald_tools_lists_a_connected_servers_tools() {
    let data = tempfile::tempdir().unwrap();
    add_everything(data.path());
    let out = ok(&skald(data.path(), None)
        .args(["tools", "--json"])
        .output()
        .unwrap());
    let tools: Vec<Value> = serde_json::from_str(&out).unwrap();
    let echo = tools
        .iter()
        .find(|t| t["name"] == "mcp__everything__echo")
        .unwrap_or_else(|| panic!("no server tool listed: {out}"));
    assert_eq!(echo["source"], "mcp");
    assert_eq!(echo["parameters"]["type"], "object");
    assert!(tools.iter().any(|t| t["name"] == "read_file"));
    let human = ok(&skald(data.path(), None).args(["tools"]).output().unwrap());
    assert!(
        human
            .lines()
            .any(|l| l.starts_with("mcp__everything__echo") && l.ends_with("(mcp)")),
        "{human}"
    );
    // Turned off, a server is not started; its tools, seen before, stay listed as such.
    ok(&skald(data.path(), None)
        .args(["mcp", "disable", "everything"])
        .output()
        .unwrap());
    let off = ok(&skald(data.path(), None).args(["tools"]).output().unwrap());
    assert!(
        !off.lines()
            .any(|l| l.starts_with("mcp__everything__echo") && l.ends_with("(mcp)")),
        "{off}"
    );
}
