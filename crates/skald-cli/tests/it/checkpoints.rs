//! Checkpoints end to end: `skald exec` against the scripted model writes a file and runs a
//! shell command that creates and removes files; each call's changes are a checkpoint
//! named in the `--json` events; `skald checkpoints list|diff|restore` shows them, brings
//! the folder back, and undoes the restore.

use crate::common::{events, ok, skald};
use serde_json::Value;
use skald_testkit::{ScriptedServer, answer, tool_call};
use std::fs;
use std::path::Path;

fn checkpoints_of(evs: &[Value]) -> Vec<Value> {
    evs.iter()
        .filter(|e| e["type"] == "checkpoint")
        .map(|e| e["checkpoint"].clone())
        .collect()
}

fn run_json(data: &Path, args: &[&str]) -> Value {
    let out = skald(data, None).args(args).arg("--json").output().unwrap();
    serde_json::from_str(&ok(&out)).unwrap()
}

fn read(p: &Path) -> Option<String> {
    fs::read_to_string(p).ok()
}

#[test]
fn a_shell_commands_changes_are_a_checkpoint_and_a_restore_can_be_undone() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    fs::write(w.join("notes.md"), "v1\n").unwrap();
    fs::write(w.join("gone.txt"), "to be removed\n").unwrap();
    fs::write(w.join(".gitignore"), "build/\n").unwrap();
    fs::create_dir(w.join("build")).unwrap();
    fs::write(w.join("build/cache"), "ignored\n").unwrap();
    let server = ScriptedServer::new(vec![
        tool_call(
            "c1",
            "write_file",
            r#"{"path": "notes.md", "content": "v2\n"}"#,
        ),
        tool_call(
            "c2",
            "execute_cmd",
            r#"{"command": "mkdir -p out && echo made > out/made.txt && rm gone.txt && echo x > build/cache"}"#,
        ),
        tool_call("c3", "read_file", r#"{"path": "notes.md"}"#),
        answer("Done."),
    ]);
    let out = skald(data.path(), Some(&server))
        .args([
            "exec",
            "--json",
            "--approve",
            "all",
            "--sandbox",
            "off",
            "--cwd",
        ])
        .arg(w)
        .arg("edit the notes and tidy up")
        .output()
        .unwrap();
    let evs = events(&ok(&out));
    let cps = checkpoints_of(&evs);
    assert_eq!(cps.len(), 2, "one per call that changed files: {cps:?}");
    assert_eq!(cps[0]["tool_call_id"], "c1");
    assert_eq!(cps[0]["changes"]["total"], 1);
    assert_eq!(cps[0]["changes"]["files"][0]["path"], "notes.md");
    assert_eq!(cps[1]["tool_call_id"], "c2");
    let files: Vec<(String, String)> = cps[1]["changes"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        files,
        vec![
            ("gone.txt".to_string(), "deleted".to_string()),
            ("out/made.txt".to_string(), "added".to_string()),
        ],
        "the command's changes, and not the ignored build/ folder"
    );
    // Each checkpoint event comes after its call's result.
    let done_at = |id: &str| {
        evs.iter()
            .position(|e| e["type"] == "tool_done" && e["tool_call_id"] == id)
            .unwrap()
    };
    let cp_at = |id: &str| {
        evs.iter()
            .position(|e| e["type"] == "checkpoint" && e["checkpoint"]["tool_call_id"] == id)
            .unwrap()
    };
    assert!(done_at("c1") < cp_at("c1") && done_at("c2") < cp_at("c2"));
    let session = cps[0]["session_id"].as_i64().unwrap();

    let listed = run_json(data.path(), &["checkpoints", "list", &session.to_string()]);
    assert_eq!(listed.as_array().unwrap().len(), 2);
    let text = ok(&skald(data.path(), None)
        .args(["checkpoints", "list", &session.to_string()])
        .output()
        .unwrap());
    assert!(
        text.contains("notes.md") && text.contains("2 files changed"),
        "{text}"
    );

    let first = cps[0]["id"].as_i64().unwrap().to_string();
    let diff = ok(&skald(data.path(), None)
        .args(["checkpoints", "diff", &first])
        .output()
        .unwrap());
    assert!(diff.contains("-v1") && diff.contains("+v2"), "{diff}");

    // Back to before the first call: both calls' changes are undone, ignored files kept.
    let restored = run_json(data.path(), &["checkpoints", "restore", &first]);
    assert_eq!(restored["kind"], "restore");
    assert_eq!(restored["restored_to"].as_i64().unwrap().to_string(), first);
    assert_eq!(read(&w.join("notes.md")).as_deref(), Some("v1\n"));
    assert_eq!(
        read(&w.join("gone.txt")).as_deref(),
        Some("to be removed\n")
    );
    assert!(!w.join("out").exists());
    assert_eq!(read(&w.join("build/cache")).as_deref(), Some("x\n"));

    // The restore is a checkpoint too: restoring to before it undoes it.
    let undo = restored["id"].as_i64().unwrap().to_string();
    let text = ok(&skald(data.path(), None)
        .args(["checkpoints", "restore", &undo])
        .output()
        .unwrap());
    assert!(text.contains("To undo this restore"), "{text}");
    assert_eq!(read(&w.join("notes.md")).as_deref(), Some("v2\n"));
    assert!(read(&w.join("gone.txt")).is_none());
    assert_eq!(read(&w.join("out/made.txt")).as_deref(), Some("made\n"));
    let listed = run_json(data.path(), &["checkpoints", "list", &session.to_string()]);
    assert_eq!(listed.as_array().unwrap().len(), 4);

    // The shadow repository is in the data directory, never in the folder.
    assert!(!w.join(".git").exists());
    assert!(data.path().join("checkpoints").is_dir());
}

#[test]
fn a_folder_over_the_limit_says_so_once_and_the_calls_still_run() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    for i in 0..5 {
        fs::write(work.path().join(format!("f{i}.txt")), "x").unwrap();
    }
    fs::write(
        data.path().join("config.toml"),
        "[checkpoints]\nmax_files = 3\n",
    )
    .unwrap();
    let server = ScriptedServer::new(vec![
        tool_call("c1", "write_file", r#"{"path": "a.txt", "content": "1"}"#),
        tool_call("c2", "write_file", r#"{"path": "b.txt", "content": "2"}"#),
        answer("Done."),
    ]);
    let out = skald(data.path(), Some(&server))
        .args(["exec", "--json", "--approve", "all", "--cwd"])
        .arg(work.path())
        .arg("write two files")
        .output()
        .unwrap();
    let evs = events(&ok(&out));
    let cps = checkpoints_of(&evs);
    assert_eq!(cps.len(), 1, "told once: {cps:?}");
    let note = cps[0]["note"].as_str().unwrap();
    assert!(
        note.contains("too large") && note.contains("max_files"),
        "{note}"
    );
    assert!(cps[0]["before"].is_null());
    assert_eq!(read(&work.path().join("a.txt")).as_deref(), Some("1"));
    assert_eq!(read(&work.path().join("b.txt")).as_deref(), Some("2"));
    let restore = skald(data.path(), None)
        .args(["checkpoints", "restore", &cps[0]["id"].to_string()])
        .output()
        .unwrap();
    assert_eq!(restore.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&restore.stderr).contains("no recorded state"),
        "{}",
        String::from_utf8_lossy(&restore.stderr)
    );
}

#[test]
fn an_unknown_checkpoint_or_session_is_a_usage_error() {
    let data = tempfile::tempdir().unwrap();
    let out = skald(data.path(), None)
        .args(["checkpoints", "list", "42"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = skald(data.path(), None)
        .args(["checkpoints", "diff", "42"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("no checkpoint 42"));
}

#[test]
fn a_rewind_goes_on_in_a_new_chat_and_the_original_keeps_every_message() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    fs::write(work.path().join("plan.md"), "draft\n").unwrap();
    let server = ScriptedServer::new(vec![
        answer("Hello."),
        tool_call(
            "c1",
            "write_file",
            r#"{"path": "plan.md", "content": "final\n"}"#,
        ),
        answer("Rewrote the plan."),
        answer("Going on from before the rewrite."),
    ]);
    let exec = |args: &[&str]| {
        let out = skald(data.path(), Some(&server))
            .args(["exec", "--json", "--approve", "all", "--cwd"])
            .arg(work.path())
            .args(args)
            .output()
            .unwrap();
        events(&ok(&out))
    };
    let first = exec(&["hi"]);
    let session = first
        .iter()
        .find_map(|e| e["session_id"].as_i64())
        .unwrap()
        .to_string();
    let evs = exec(&["--session", &session, "rewrite the plan"]);
    let cp = checkpoints_of(&evs).pop().unwrap();
    let restored = run_json(
        data.path(),
        &["checkpoints", "restore", &cp["id"].to_string(), "--rewind"],
    );
    assert_eq!(
        read(&work.path().join("plan.md")).as_deref(),
        Some("draft\n")
    );
    let fork = restored["fork_session_id"].as_i64().unwrap();
    let store = skald_store::Store::open(data.path().join("skald.db")).unwrap();
    let texts = |id: i64| -> Vec<String> {
        store
            .list_messages(id)
            .unwrap()
            .into_iter()
            .filter(|m| !m.content.is_empty())
            .map(|m| m.content)
            .collect()
    };
    let original = texts(session.parse().unwrap());
    let rewound = texts(fork);
    assert!(
        original.iter().any(|t| t == "Rewrote the plan."),
        "{original:?}"
    );
    assert_eq!(
        rewound.last().map(String::as_str),
        Some("rewrite the plan"),
        "the rewound chat ends before the call: {rewound:?}"
    );
    assert!(!rewound.iter().any(|t| t == "Rewrote the plan."));
    assert_eq!(store.list_tool_calls(fork).unwrap().len(), 0);
    let fork_session = store.get_session(fork).unwrap();
    assert!(fork_session.title.ends_with("(rewound)") || fork_session.title == "Rewound chat");
    assert_eq!(
        fork_session.working_dir,
        store
            .get_session(session.parse().unwrap())
            .unwrap()
            .working_dir
    );
    // The rewound chat is a chat like any other.
    let evs = exec(&["--session", &fork.to_string(), "go on"]);
    assert!(
        evs.iter()
            .any(|e| e["type"] == "done" && e["text"] == "Going on from before the rewrite."),
        "{evs:?}"
    );
}

/// A chat's own changes reviewed hunk by hunk and taken back in part, merged with what
/// the person changed since; a clash writes nothing; the revert is undone like a restore
/// (docs/worktrees.md, "A chat's own changes").
#[test]
fn a_chats_changes_are_taken_back_hunk_by_hunk_and_the_revert_undone() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let w = std::fs::canonicalize(work.path()).unwrap();
    let lines = |changed: &[(usize, &str)]| -> String {
        (1..=12)
            .map(|i| {
                changed
                    .iter()
                    .find(|(n, _)| *n == i)
                    .map_or(format!("{i}\n"), |(_, t)| format!("{t}\n"))
            })
            .collect()
    };
    fs::write(w.join("notes.md"), lines(&[])).unwrap();
    let server =
        ScriptedServer::new(vec![
        tool_call(
            "w1",
            "write_file",
            &serde_json::json!({"path": "notes.md", "content": lines(&[(2, "two"), (10, "ten")])})
                .to_string(),
        ),
        tool_call("w2", "write_file", r#"{"path": "new.md", "content": "new\n"}"#),
        answer("Done."),
    ]);
    let out = skald(data.path(), Some(&server))
        .args(["exec", "--json", "--approve", "all", "--cwd"])
        .arg(&w)
        .arg("change things")
        .output()
        .unwrap();
    let evs = events(&ok(&out));
    let session = evs[0]["session_id"].as_i64().unwrap().to_string();

    let files = run_json(data.path(), &["checkpoints", "changes", &session]);
    let files = files.as_array().unwrap();
    assert_eq!(files.len(), 2, "{files:?}");
    let notes = files.iter().find(|f| f["path"] == "notes.md").unwrap();
    assert_eq!(notes["hunks"].as_array().unwrap().len(), 2, "{notes}");
    assert_eq!(notes["hunks"][0]["added"], serde_json::json!(["two\n"]));

    // The person changes a line of their own meanwhile.
    fs::write(
        w.join("notes.md"),
        lines(&[(2, "two"), (6, "mine"), (10, "ten")]),
    )
    .unwrap();
    let report = run_json(
        data.path(),
        &["checkpoints", "revert", &session, "--hunk", "notes.md:0"],
    );
    assert_eq!(
        report["written"],
        serde_json::json!(["notes.md"]),
        "{report}"
    );
    assert_eq!(
        read(&w.join("notes.md")).unwrap(),
        lines(&[(6, "mine"), (10, "ten")])
    );
    assert_eq!(read(&w.join("new.md")).unwrap(), "new\n");
    let undo = report["checkpoint_id"].as_i64().unwrap().to_string();

    // What is left to review is what the chat changed less what was taken back.
    let files = run_json(data.path(), &["checkpoints", "changes", &session]);
    let notes = files
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "notes.md")
        .unwrap()
        .clone();
    assert!(!notes.to_string().contains("two"), "{notes}");

    // The revert is a checkpoint: restoring to before it brings the hunk back.
    ok(&skald(data.path(), None)
        .args(["checkpoints", "restore", &undo])
        .output()
        .unwrap());
    assert_eq!(
        read(&w.join("notes.md")).unwrap(),
        lines(&[(2, "two"), (6, "mine"), (10, "ten")])
    );

    // The person changed the chat's other line: taking it back clashes, nothing written.
    fs::write(w.join("notes.md"), lines(&[(2, "two"), (10, "TEN!")])).unwrap();
    let files = run_json(data.path(), &["checkpoints", "changes", &session]);
    let notes = files
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "notes.md")
        .unwrap()
        .clone();
    let ten = notes["hunks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h.to_string().contains("ten"))
        .unwrap()["index"]
        .to_string();
    let out = skald(data.path(), None)
        .args(["checkpoints", "revert", &session, "--json", "--hunk"])
        .arg(format!("notes.md:{ten}"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["conflicts"][0]["path"], "notes.md", "{report}");
    assert_eq!(
        read(&w.join("notes.md")).unwrap(),
        lines(&[(2, "two"), (10, "TEN!")])
    );
    // A whole new file taken back is removed; a file the chat never changed is refused.
    run_json(
        data.path(),
        &["checkpoints", "revert", &session, "--hunk", "new.md"],
    );
    assert!(!w.join("new.md").exists());
    let out = skald(data.path(), None)
        .args(["checkpoints", "revert", &session, "--hunk", "other.md"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not among the files"));
}

/// A file the chat's checkpoints never record (a deny rule names it) is not taken by a
/// restore for one the restored state lacks: it stays.
#[test]
fn a_restore_leaves_a_file_its_checkpoints_never_recorded() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let w = std::fs::canonicalize(work.path()).unwrap();
    fs::write(w.join("prod.env"), "KEY=only-copy\n").unwrap();
    fs::write(w.join("notes.md"), "v1\n").unwrap();
    ok(&skald(data.path(), None)
        .args([
            "rules", "add", "--tool", "@fs_any", "--action", "deny", "--path",
        ])
        .arg(w.join("prod.env"))
        .output()
        .unwrap());
    let server = ScriptedServer::new(vec![
        tool_call(
            "w1",
            "write_file",
            r#"{"path": "notes.md", "content": "v2\n"}"#,
        ),
        answer("Done."),
    ]);
    let out = skald(data.path(), Some(&server))
        .args(["exec", "--json", "--approve", "all", "--cwd"])
        .arg(&w)
        .arg("edit")
        .output()
        .unwrap();
    let evs = events(&ok(&out));
    let cp = checkpoints_of(&evs)[0]["id"].to_string();
    ok(&skald(data.path(), None)
        .args(["checkpoints", "restore", &cp])
        .output()
        .unwrap());
    assert_eq!(read(&w.join("notes.md")).as_deref(), Some("v1\n"));
    assert_eq!(
        read(&w.join("prod.env")).as_deref(),
        Some("KEY=only-copy\n"),
        "the restore removed a file its checkpoints never recorded"
    );
}
