//! `skald acp` driven by the official Agent Client Protocol TypeScript SDK acting as the
//! editor (tests/acp/editor.mjs), against the scripted model: a streamed answer, a plan,
//! a permission round trip, a cancel, and a session loaded after Skald restarted.

use crate::common::SkaldCmd;
use serde_json::Value;
use skald_testkit::{ScriptedServer, answer, dripped, tool_call};
use std::path::Path;
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

#[test]
fn an_editor_streams_approves_cancels_and_loads_a_session_after_a_restart() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // Every command asks, so the command below is a permission round trip.
    std::fs::write(
        data.path().join("config.toml"),
        "[sandbox]\nask = \"always\"\n",
    )
    .unwrap();
    let long = "word ".repeat(400);
    let server = ScriptedServer::new(vec![
        tool_call(
            "plan",
            "write_todos",
            r#"{"todos": [{"content": "Look around", "status": "completed"}, {"content": "Run the command", "status": "in_progress"}]}"#,
        ),
        tool_call("run", "execute_cmd", r#"{"command": "echo acp-ran"}"#),
        answer("All done."),
        dripped(20, answer(&long)),
        answer("Back again."),
        // The third editor, which lends its file system and terminals.
        tool_call("look", "read_file", r#"{"path": "notes.txt"}"#),
        tool_call(
            "change",
            "edit_file",
            r#"{"path": "notes.txt", "old": "unsaved", "new": "edited"}"#,
        ),
        tool_call(
            "term",
            "execute_cmd",
            r#"{"command": "echo via-terminal; echo key=${OPENAI_API_KEY:-none}"}"#,
        ),
        answer("Edited in the editor."),
    ]);
    // The editor starts `skald acp` itself; it passes on this environment (the scripted
    // model, isolated as every test's `skald` is).
    let out = SkaldCmd::runner(Command::new("node"), data.path())
        .against(&server)
        .cmd()
        .arg(repo().join("tests/acp/editor.mjs"))
        .arg(env!("CARGO_BIN_EXE_skald"))
        .arg(data.path())
        .arg(work.path())
        .current_dir(repo().join("tests/acp"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "editor failed:\n{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{stderr}", String::from_utf8_lossy(&out.stdout)));
    let first = &report["first"];
    assert_eq!(first["init"]["protocolVersion"], 1);
    assert_eq!(first["init"]["agentCapabilities"]["loadSession"], true);
    assert_eq!(
        first["init"]["agentCapabilities"]["promptCapabilities"]["image"],
        true
    );
    // The third prompt's image reached the model with its text (docs/images.md).
    let asked = server.recorded()[4].body["messages"].clone();
    let user = asked
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "user")
        .unwrap()
        .clone();
    assert_eq!(user["content"][0]["text"], "are you back?", "{asked}");
    assert_eq!(
        user["content"][1]["image_url"]["url"],
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
        "{asked}"
    );
    assert_eq!(first["p1"], "end_turn", "{report}");
    let updates = first["updates"].as_array().unwrap();
    let kinds: Vec<&str> = updates
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap())
        .collect();
    // The plan from write_todos.
    let plan = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "plan")
        .unwrap_or_else(|| panic!("{kinds:?}"));
    assert_eq!(plan["entries"][1]["content"], "Run the command");
    assert_eq!(plan["entries"][1]["status"], "in_progress");
    // The command: a tool call with Skald's label and kind, allowed in the editor, run,
    // and its output in the update that completes it.
    let started = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call" && u["toolCallId"] == "run")
        .unwrap_or_else(|| panic!("{kinds:?}"));
    assert_eq!(started["kind"], "execute");
    assert!(
        started["title"].as_str().unwrap().contains("echo acp-ran"),
        "{started}"
    );
    let permissions = first["permissions"].as_array().unwrap();
    assert_eq!(permissions.len(), 1, "{permissions:?}");
    assert_eq!(permissions[0]["toolCall"]["toolCallId"], "run");
    let kinds_offered: Vec<&str> = permissions[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds_offered, ["allow_once", "allow_always", "reject_once"]);
    let done = updates
        .iter()
        .find(|u| {
            u["sessionUpdate"] == "tool_call_update"
                && u["toolCallId"] == "run"
                && u["status"] == "completed"
        })
        .unwrap_or_else(|| panic!("{updates:?}"));
    assert!(done.to_string().contains("acp-ran"), "{done}");
    let streamed: String = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(streamed, "All done.");
    // Cancelled while streaming.
    assert_eq!(first["p2"], "cancelled");
    assert_eq!(
        first["exit"], 0,
        "skald acp ends when the editor closes its stdin"
    );

    // After the restart: the session loads with its conversation, and goes on.
    let second = &report["second"];
    let replayed = second["replayed"].as_array().unwrap();
    let said: Vec<String> = replayed
        .iter()
        .filter(|u| u["sessionUpdate"] == "user_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(said[0], "plan it and run the command", "{replayed:?}");
    assert!(
        replayed.iter().any(|u| u["sessionUpdate"] == "tool_call"
            && u["toolCallId"] == "run"
            && u["status"] == "completed"),
        "{replayed:?}"
    );
    assert!(replayed.iter().any(
        |u| u["sessionUpdate"] == "agent_message_chunk" && u["content"]["text"] == "All done."
    ));
    assert_eq!(second["p3"], "end_turn");
    assert_eq!(second["answer"], "Back again.");

    // Editors that lend nothing were asked for nothing.
    let before = &report["lentBefore"];
    assert_eq!(
        (&before["reads"], &before["writes"], &before["terminals"]),
        (&Value::from(0), &Value::from(0), &Value::from(0)),
        "{report}"
    );
    // The third lends its file system and terminals: the file was read as the editor had
    // it (its unsaved buffer, not the disk), the edit went to the editor, and the command
    // ran in its terminal without the provider key of the editor's environment.
    let third = &report["third"];
    assert_eq!(third["p"], "end_turn", "{report}");
    let lent = &report["lent"];
    let notes = std::fs::canonicalize(work.path())
        .unwrap()
        .join("notes.txt")
        .display()
        .to_string();
    let reads: Vec<&str> = lent["reads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert!(
        reads.len() >= 2 && reads.iter().all(|p| *p == notes),
        "{reads:?}"
    );
    let results = tool_results(&server);
    assert!(
        results.iter().any(|r| r.contains("unsaved text")),
        "read_file gave the model the editor's buffer: {results:?}"
    );
    assert!(
        !results.iter().any(|r| r.contains("disk text")),
        "{results:?}"
    );
    let writes = lent["writes"].as_array().unwrap();
    assert_eq!(writes.len(), 1, "{writes:?}");
    assert_eq!(writes[0]["path"], notes.as_str());
    assert_eq!(writes[0]["content"], "edited text\n");
    assert_eq!(report["onDisk"], "edited text\n");
    let terminals = lent["terminals"].as_array().unwrap();
    assert_eq!(terminals.len(), 1, "{terminals:?}");
    let params = &terminals[0]["params"];
    assert_eq!(params["command"], "env");
    let args: Vec<&str> = params["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let unset: Vec<&str> = args
        .windows(2)
        .filter(|w| w[0] == "-u")
        .map(|w| w[1])
        .collect();
    assert!(unset.contains(&"OPENAI_API_KEY"), "{args:?}");
    assert_eq!(
        unset.len(),
        unset.iter().collect::<std::collections::HashSet<_>>().len(),
        "each variable once: {args:?}"
    );
    assert_eq!(
        std::fs::canonicalize(params["cwd"].as_str().unwrap()).unwrap(),
        std::fs::canonicalize(work.path()).unwrap()
    );
    let output = terminals[0]["output"].as_str().unwrap();
    assert!(output.contains("via-terminal"), "{output}");
    assert!(output.contains("key=none"), "{output}");
    assert!(!output.contains("sk-test-provider-key"), "{output}");
    assert_eq!(lent["released"], serde_json::json!([terminals[0]["id"]]));
    assert!(
        results
            .iter()
            .any(|r| r.contains("via-terminal") && r.contains("exit code 0")),
        "{results:?}"
    );
    // The edit and the command were allowed for good in the editor: the rules the Inbox
    // proposes are stored.
    let asked: Vec<&Value> = third["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["toolCall"]["toolCallId"])
        .collect();
    assert_eq!(asked, ["change", "term"], "{report}");
    let rules = |dir: &Path| -> Vec<Value> {
        let listed = crate::common::bare(dir)
            .args(["rules", "list", "--json"])
            .output()
            .unwrap();
        let all: Value = serde_json::from_slice(&listed.stdout).unwrap();
        all.as_array()
            .unwrap()
            .iter()
            .filter(|r| r["action"] == "allow" && r["tool_pattern"] == "execute_cmd")
            .map(|r| r["command_pattern"].clone())
            .collect()
    };
    let fresh = tempfile::tempdir().unwrap();
    let (seeded, now) = (rules(fresh.path()), rules(data.path()));
    assert_eq!(
        now.len(),
        seeded.len() + 1,
        "seeded {seeded:?}, now {now:?}"
    );
    // The call showed its terminal while it ran, and kept it when it ended.
    let updates = third["updates"].as_array().unwrap();
    assert!(
        updates
            .iter()
            .any(|u| u["sessionUpdate"] == "tool_call_update"
                && u["toolCallId"] == "term"
                && u["content"][0]["type"] == "terminal"
                && u["content"][0]["terminalId"] == terminals[0]["id"]),
        "{updates:?}"
    );
    let ended = updates
        .iter()
        .find(|u| {
            u["sessionUpdate"] == "tool_call_update"
                && u["toolCallId"] == "term"
                && u["status"] == "completed"
        })
        .unwrap_or_else(|| panic!("{updates:?}"));
    assert!(ended.get("content").is_none(), "{ended}");
    assert!(
        ended["rawOutput"]
            .as_str()
            .unwrap()
            .contains("via-terminal"),
        "{ended}"
    );
}

/// The tool results the model was sent, in order.
fn tool_results(server: &ScriptedServer) -> Vec<String> {
    let mut seen = Vec::new();
    for r in server.recorded() {
        for m in r.body["messages"].as_array().into_iter().flatten() {
            if m["role"] == "tool" {
                let text = m["content"].as_str().unwrap_or_default().to_string();
                if !seen.contains(&text) {
                    seen.push(text);
                }
            }
        }
    }
    seen
}
