//! The board of agents from the command line (docs/board.md): `skald agents list` shows
//! every chat across folders with its state, time, tokens, cost, files changed and last
//! message — whichever process ran it, and also after that process was killed.

use crate::common::{SkaldCmd, bare, ok, wait_for};
use serde_json::Value;
use skald_testkit::{ScriptedServer, answer, delayed, tool_call};
use std::path::Path;

fn board(data: &Path) -> Vec<Value> {
    let out = bare(data)
        .args(["agents", "list", "--json"])
        .output()
        .unwrap();
    serde_json::from_str(&ok(&out)).unwrap()
}

fn of(board: &[Value], session: &Value) -> Value {
    board
        .iter()
        .find(|a| a["session_id"] == *session)
        .unwrap_or_else(|| panic!("{session} not on {board:?}"))
        .clone()
}

#[test]
fn every_agent_is_on_the_board_with_what_it_did_and_how_it_ended() {
    let top = skald_testkit::tempdir_seen_by_commands();
    let work = top.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let work = std::fs::canonicalize(&work).unwrap();
    std::fs::write(work.join("draft.md"), "one\ntwo\nthree\n").unwrap();
    let data = top.path().join("data");

    // In a worktree: a new file of two lines and one line of three changed.
    let server = ScriptedServer::new(vec![
        tool_call(
            "w1",
            "write_file",
            r#"{"path": "notes.md", "content": "a\nb\n"}"#,
        ),
        tool_call(
            "w2",
            "write_file",
            r#"{"path": "draft.md", "content": "one\n2\nthree\n"}"#,
        ),
        answer("Wrote the notes and fixed the draft."),
    ]);
    let (out, events) = SkaldCmd::new(&data).against(&server).exec_json(
        &work,
        &["--worktree", "notes", "--approve", "all"],
        "notes please",
    );
    assert_eq!(out.status.code(), Some(0), "{events:?}");
    let in_worktree = events[0]["session_id"].clone();

    // In the folder itself, ending in a model that refuses.
    let server = ScriptedServer::new(vec![
        tool_call(
            "w1",
            "write_file",
            r#"{"path": "todo.md", "content": "x\n"}"#,
        ),
        (
            400,
            "application/json",
            r#"{"error": {"message": "this model is gone", "type": "invalid_request_error"}}"#
                .into(),
        ),
    ]);
    let (out, events) = SkaldCmd::new(&data).against(&server).exec_json(
        &work,
        &["--approve", "all"],
        "todo please",
    );
    assert_eq!(out.status.code(), Some(1), "{events:?}");
    let in_folder = events[0]["session_id"].clone();

    let all = board(&data);
    assert_eq!(all.len(), 2, "{all:?}");
    // Newest first.
    assert_eq!(all[0]["session_id"], in_folder);
    let a = of(&all, &in_worktree);
    assert_eq!(a["state"], "done", "{a}");
    assert_eq!(a["worktree"], "notes");
    assert_eq!(a["source"], work.display().to_string());
    assert_eq!(
        a["changes"],
        serde_json::json!({"files": 2, "added": 3, "removed": 1}),
        "{a}"
    );
    assert_eq!(a["last_message"], "Wrote the notes and fixed the draft.");
    // Two calls that made tool calls said what they used (10 in, 5 out each).
    assert_eq!(
        (a["input_tokens"].as_u64(), a["output_tokens"].as_u64()),
        (Some(20), Some(10))
    );
    assert_eq!(a["waiting"], 0);
    let b = of(&all, &in_folder);
    assert_eq!(b["state"], "failed", "{b}");
    assert_eq!(b["folder"], work.display().to_string());
    assert!(b.get("worktree").is_none(), "{b}");
    assert_eq!(
        b["changes"],
        serde_json::json!({"files": 1, "added": 1, "removed": 0}),
        "{b}"
    );

    // The table says the same.
    let text = ok(&bare(&data).args(["agents", "list"]).output().unwrap());
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(&in_worktree.to_string()))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("done") && line.contains("2 +3 −1") && line.contains("worktree notes"),
        "{line}"
    );
    assert!(line.contains("Wrote the notes"), "{line}");
    assert!(text.contains("failed"), "{text}");
    let limited = bare(&data)
        .args(["agents", "list", "--json", "--limit", "1"])
        .output()
        .unwrap();
    let limited: Vec<Value> = serde_json::from_str(&ok(&limited)).unwrap();
    assert_eq!(limited.len(), 1);
}

/// A kill -9 during a turn: the board says the agent was interrupted (not working), and
/// its worktree survives, listed.
#[test]
fn an_agent_whose_process_was_killed_is_interrupted_and_its_worktree_kept() {
    let top = skald_testkit::tempdir_seen_by_commands();
    let work = top.path().join("work");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(work.join("a.txt"), "a\n").unwrap();
    let data = top.path().join("data");
    let server = ScriptedServer::new(vec![delayed(60_000, answer("never"))]);
    let (mut child, rx) = SkaldCmd::new(&data).against(&server).spawn_exec_json(
        &work,
        &["--worktree", "long"],
        "take your time",
    );
    let seen = wait_for(&rx, |e| e["type"] == "turn_running");
    let session = seen[0]["session_id"].clone();
    // While it runs, another process sees it working.
    let a = of(&board(&data), &session);
    assert_eq!(a["state"], "working", "{a}");
    assert_eq!(a["worktree"], "long");
    child.kill().unwrap();
    child.wait().unwrap();
    let a = of(&board(&data), &session);
    assert_eq!(a["state"], "interrupted", "{a}");
    let listed = ok(&bare(&data)
        .args(["worktrees", "list", "--json"])
        .output()
        .unwrap());
    let listed: Vec<Value> = serde_json::from_str(&listed).unwrap();
    assert_eq!(listed[0]["name"], "long");
    assert!(
        Path::new(listed[0]["root"].as_str().unwrap())
            .join("a.txt")
            .is_file()
    );
}
