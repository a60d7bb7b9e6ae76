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
