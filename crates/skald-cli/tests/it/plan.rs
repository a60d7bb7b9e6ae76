//! Plan mode (docs/agent-loop.md, "Plan mode") with `skald exec --plan`: the agent is
//! offered only tools that change nothing, its commands run in the read-only sandbox, and
//! once the person approves its plan it acts in the same turn.

use crate::common::{SkaldCmd, offered};
use skald_testkit::{ScriptedServer, answer, tool_call};

#[test]
fn a_planning_agent_changes_nothing_until_its_plan_is_approved_then_acts() {
    let data = tempfile::tempdir().unwrap();
    let work = skald_testkit::tempdir_seen_by_commands();
    std::fs::write(work.path().join("notes.txt"), "to do: a.txt\n").unwrap();
    let server = ScriptedServer::new(vec![
        tool_call(
            "w1",
            "write_file",
            r#"{"path": "a.txt", "content": "early"}"#,
        ),
        tool_call(
            "c1",
            "execute_cmd",
            r#"{"command": "cat notes.txt; touch made-while-planning.txt"}"#,
        ),
        tool_call(
            "g1",
            "execute_cmd",
            r#"{"command": "touch x", "sandbox_grant": {"write": ["/tmp"], "reason": "try"}}"#,
        ),
        tool_call("p1", "exit_plan_mode", r#"{"plan": "1. Write a.txt"}"#),
        tool_call(
            "w2",
            "write_file",
            r#"{"path": "a.txt", "content": "planned"}"#,
        ),
        answer("Done as planned."),
    ]);
    let (out, events) = SkaldCmd::new(data.path()).against(&server).exec_json(
        work.path(),
        &["--plan", "--approve", "all"],
        "Make a.txt",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let planning = offered(&server, 0);
    for tool in [
        "read_file",
        "grep_files",
        "execute_cmd",
        "exit_plan_mode",
        "ask_user_clarification",
    ] {
        assert!(
            planning.iter().any(|t| t == tool),
            "{tool} missing: {planning:?}"
        );
    }
    for tool in [
        "write_file",
        "edit_file",
        "insert_at_line",
        "replace_lines",
        "register_mcp",
    ] {
        assert!(
            !planning.iter().any(|t| t == tool),
            "{tool} offered: {planning:?}"
        );
    }
    let result = |id: &str| -> serde_json::Value {
        events
            .iter()
            .find(|e| {
                e["tool_call_id"] == id
                    && matches!(
                        e["type"].as_str(),
                        Some("tool_done" | "tool_error" | "tool_rejected")
                    )
            })
            .unwrap_or_else(|| panic!("no result for {id}: {events:?}"))
            .clone()
    };
    // A write the model tries anyway is refused, saying why.
    let w1 = result("w1");
    assert!(w1.to_string().contains("This chat is in plan mode"), "{w1}");
    // A command runs, read-only: it reads, and cannot write.
    let c1 = result("c1");
    assert_eq!(c1["type"], "tool_done", "{c1}");
    assert!(
        c1["result"].as_str().unwrap().contains("to do: a.txt"),
        "{c1}"
    );
    assert!(!work.path().join("made-while-planning.txt").exists());
    // Nothing beyond the read-only sandbox can be granted while planning.
    let g1 = result("g1");
    assert!(
        g1.to_string()
            .contains("commands run only in the read-only sandbox"),
        "{g1}"
    );
    // The plan, approved (--approve all), and the chat acts in the same turn.
    let p1 = result("p1");
    assert_eq!(p1["type"], "tool_done", "{p1}");
    let acting = offered(&server, 4);
    assert!(acting.iter().any(|t| t == "write_file"), "{acting:?}");
    assert!(!acting.iter().any(|t| t == "exit_plan_mode"), "{acting:?}");
    assert_eq!(result("w2")["type"], "tool_done");
    assert_eq!(
        std::fs::read_to_string(work.path().join("a.txt")).unwrap(),
        "planned"
    );
    // The model was told it plans, and no longer once it acts.
    let said = |i: usize| server.recorded()[i].body["messages"].to_string();
    let told = "the user approves it before anything changes";
    assert!(said(0).contains(told));
    assert!(!said(4).contains(told));
}

#[test]
fn a_plan_not_approved_leaves_the_chat_planning() {
    let data = tempfile::tempdir().unwrap();
    let work = skald_testkit::tempdir_seen_by_commands();
    let server = ScriptedServer::new(vec![
        tool_call(
            "p1",
            "exit_plan_mode",
            r#"{"plan": "1. Delete everything"}"#,
        ),
        answer("Here is my plan: delete everything."),
    ]);
    // Headless, nothing is approved (--approve never).
    let (out, events) =
        SkaldCmd::new(data.path())
            .against(&server)
            .exec_json(work.path(), &["--plan"], "Plan it");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let p1 = events
        .iter()
        .find(|e| e["tool_call_id"] == "p1" && e["type"] == "tool_rejected")
        .unwrap_or_else(|| panic!("{events:?}"));
    assert!(
        p1["reason"].as_str().unwrap().contains("needs approval"),
        "{p1}"
    );
    let again = offered(&server, 1);
    assert!(again.iter().any(|t| t == "exit_plan_mode"), "{again:?}");
    assert!(!again.iter().any(|t| t == "write_file"), "{again:?}");
}

const SE: &str = "senior software engineer";

/// An agent that plans cannot start work that would act on its own later: an async task or
/// a scheduled one is refused (a sync one plans with it), nothing is made, and no file is
/// written (#49 review, finding 1).
#[test]
fn a_planning_agent_cannot_delegate_work_that_would_act_later() {
    let data = tempfile::tempdir().unwrap();
    let work = skald_testkit::tempdir_seen_by_commands();
    let server = ScriptedServer::routed(vec![
        (
            SE,
            vec![
                tool_call(
                    "t1",
                    "execute_cmd",
                    r#"{"command": "echo written-while-planning > escaped.txt"}"#,
                ),
                answer("Done."),
            ],
        ),
        (
            "",
            vec![
                tool_call(
                    "a1",
                    "execute_task",
                    r#"{"mode": "async", "title": "Look around", "agent_id": "software-engineer", "prompt": "Look around."}"#,
                ),
                tool_call(
                    "a2",
                    "execute_task",
                    r#"{"mode": "cron", "cron": "* * * * * *", "title": "Tidy", "agent_id": "software-engineer", "prompt": "Tidy up."}"#,
                ),
                answer("Here is my plan."),
            ],
        ),
    ]);
    let (out, events) = SkaldCmd::new(data.path()).against(&server).exec_json(
        work.path(),
        &["--plan", "--approve", "all"],
        "Plan the change; change nothing.",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for id in ["a1", "a2"] {
        let refused = events
            .iter()
            .find(|e| e["tool_call_id"] == id && e["type"] == "tool_rejected")
            .unwrap_or_else(|| panic!("{id} not refused: {events:?}"));
        assert!(
            refused.to_string().contains("only a sync task"),
            "{refused}"
        );
    }
    assert!(!work.path().join("escaped.txt").exists());
    let listed = crate::common::bare(data.path())
        .args(["cron", "list", "--json"])
        .output()
        .unwrap();
    let jobs: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(jobs, serde_json::json!([]), "no job scheduled");
}

/// A rule that gives a command the network does not give it to a planning chat's
/// commands (finding 7).
#[test]
fn a_planning_command_has_no_network_whatever_a_rule_gives() {
    let data = tempfile::tempdir().unwrap();
    let work = skald_testkit::tempdir_seen_by_commands();
    let add = crate::common::bare(data.path())
        .args([
            "rules",
            "add",
            "--tool",
            "execute_cmd",
            "--command",
            "python3",
            "--action",
            "allow",
            "--network",
        ])
        .output()
        .unwrap();
    assert_eq!(
        add.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&add.stderr)
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let cmd = serde_json::json!({"command": format!(
        "python3 -c \"import socket; s=socket.create_connection(('127.0.0.1', {port}), 5); s.sendall(b'POST /x'); print('connected')\""
    )})
    .to_string();
    let server = ScriptedServer::new(vec![
        tool_call("n1", "execute_cmd", &cmd),
        answer("Planned."),
        tool_call("n2", "execute_cmd", &cmd),
        answer("Acted."),
    ]);
    let (_, events) = SkaldCmd::new(data.path()).against(&server).exec_json(
        work.path(),
        &["--plan"],
        "Plan only.",
    );
    let result = events
        .iter()
        .find(|e| e["tool_call_id"] == "n1" && e["type"] == "tool_done")
        .map(|e| e["result"].to_string())
        .unwrap_or_default();
    assert!(!result.contains("connected"), "{result}");
    listener.set_nonblocking(true).unwrap();
    assert!(
        listener.accept().is_err(),
        "the planning command reached the network"
    );
    // Acting, the rule gives it as before.
    let (_, events) =
        SkaldCmd::new(data.path())
            .against(&server)
            .exec_json(work.path(), &[], "Act.");
    let acted = events
        .iter()
        .find(|e| e["tool_call_id"] == "n2" && e["type"] == "tool_done")
        .unwrap_or_else(|| panic!("{events:?}"));
    assert!(acted["result"].to_string().contains("connected"), "{acted}");
}
