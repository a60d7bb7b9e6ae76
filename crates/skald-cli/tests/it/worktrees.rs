//! Agents in worktrees of their own (docs/worktrees.md): `skald exec --worktree` makes one
//! (a git worktree on its own branch, or a copy of any other folder); the agent writes
//! only there — its write tools are refused in the folder it copies and its commands
//! cannot write that folder, whatever the grants — and `skald worktrees` lists and
//! discards them.

use crate::common::{SkaldCmd, bare, git, ok};
use serde_json::Value;
use skald_testkit::{ScriptedServer, answer, tool_call};
use std::path::Path;
use std::process::Command;

/// `dir` made a git repository on `main` with what it holds committed.
fn committed(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "first"]);
}

/// A folder commands see as it is, holding the data directory (`data`, its worktrees
/// beside it in `data-worktrees`) and the person's folder `work`.
struct Place {
    top: tempfile::TempDir,
}

impl Place {
    fn new() -> Place {
        let top = skald_testkit::tempdir_seen_by_commands();
        std::fs::create_dir(top.path().join("work")).unwrap();
        Place { top }
    }
    fn data(&self) -> std::path::PathBuf {
        self.top.path().join("data")
    }
    fn work(&self) -> std::path::PathBuf {
        std::fs::canonicalize(self.top.path().join("work")).unwrap()
    }
    fn top(&self) -> std::path::PathBuf {
        std::fs::canonicalize(self.top.path()).unwrap()
    }
}

fn listed(data: &Path) -> Value {
    let out = bare(data)
        .args(["worktrees", "list", "--json"])
        .output()
        .unwrap();
    serde_json::from_str(&ok(&out)).unwrap()
}

#[test]
fn an_agent_in_a_git_worktree_writes_only_its_worktree_and_it_is_discarded() {
    let p = Place::new();
    let work = p.work();
    std::fs::write(work.join("README.md"), "hello\n").unwrap();
    committed(&work);
    let direct = work.join("direct.txt");
    let server = ScriptedServer::new(vec![
        tool_call(
            "w1",
            "write_file",
            r#"{"path": "notes.txt", "content": "from the agent\n"}"#,
        ),
        tool_call(
            "c1",
            "execute_cmd",
            &serde_json::json!({"command": format!(
                "echo inside > inside.txt; echo escaped > {}/escaped.txt", work.display()
            )})
            .to_string(),
        ),
        tool_call(
            "w2",
            "write_file",
            &serde_json::json!({"path": direct, "content": "x"}).to_string(),
        ),
        answer("Done."),
    ]);
    // Even a write grant holding the folder (its parent) gives the agent no way in.
    let (out, events) = SkaldCmd::new(&p.data()).against(&server).exec_json(
        &work,
        &[
            "--worktree",
            "fix",
            "--approve",
            "all",
            "--allow-write",
            p.top.path().to_str().unwrap(),
        ],
        "make notes",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{events:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all = listed(&p.data());
    let w = &all[0];
    assert_eq!(
        (w["name"].as_str(), w["kind"].as_str()),
        (Some("fix"), Some("git"))
    );
    assert_eq!(w["branch"], "skald/fix");
    assert_eq!(w["source"], work.display().to_string());
    assert_eq!(w["session_id"], events[0]["session_id"]);
    let root = std::path::PathBuf::from(w["root"].as_str().unwrap());
    assert_eq!(root, p.top.path().join("data-worktrees/fix"));
    // The agent's work is in its worktree …
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "from the agent\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("inside.txt")).unwrap(),
        "inside\n"
    );
    assert!(root.join("README.md").is_file());
    // … and none of it in the person's folder: the write tool was refused there, and the
    // command could not write it.
    for never in ["notes.txt", "inside.txt", "escaped.txt", "direct.txt"] {
        assert!(!work.join(never).exists(), "{never} reached the folder");
    }
    let refused = events
        .iter()
        .find(|e| e["tool_call_id"] == "w2" && e["type"] != "tool_start")
        .unwrap();
    assert!(refused.to_string().contains("never writes"), "{refused}");
    let branches = git(&work, &["branch", "--list"]);
    assert!(
        branches.contains("skald/fix") && branches.contains("* main"),
        "{branches}"
    );
    assert_eq!(git(&work, &["status", "--porcelain"]), "");
    // The name is taken while it lives.
    let (out, _) =
        SkaldCmd::new(&p.data())
            .against(&server)
            .exec_json(&work, &["--worktree", "fix"], "again");
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Discarded: the folder and the branch go; the person's folder is as it was.
    ok(&bare(&p.data())
        .args(["worktrees", "discard", "fix"])
        .output()
        .unwrap());
    assert!(!root.exists());
    assert!(!git(&work, &["branch", "--list"]).contains("skald/fix"));
    assert_eq!(listed(&p.data()), serde_json::json!([]));
    let out = bare(&p.data())
        .args(["worktrees", "discard", "fix"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_folder_that_is_no_repository_is_copied_for_the_agent() {
    let p = Place::new();
    let work = p.work();
    std::fs::create_dir(work.join("chapters")).unwrap();
    std::fs::write(work.join("chapters/one.tex"), "\\section{One}\n").unwrap();
    let server = ScriptedServer::new(vec![
        tool_call(
            "c1",
            "execute_cmd",
            r#"{"command": "echo revised >> chapters/one.tex"}"#,
        ),
        answer("Revised."),
    ]);
    let (out, events) = SkaldCmd::new(&p.data()).against(&server).exec_json(
        &work,
        &["--worktree", "--approve", "all"],
        "revise",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{events:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    let w = &listed(&p.data())[0];
    assert_eq!(
        (w["name"].as_str(), w["kind"].as_str()),
        (Some("work-1"), Some("copy"))
    );
    assert!(w.get("branch").is_none(), "{w}");
    let root = Path::new(w["working_dir"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(root.join("chapters/one.tex")).unwrap(),
        "\\section{One}\nrevised\n"
    );
    // Appending in place changed the copy, not the person's file.
    assert_eq!(
        std::fs::read_to_string(work.join("chapters/one.tex")).unwrap(),
        "\\section{One}\n"
    );
}

#[test]
fn a_worktree_is_only_for_a_new_chat_and_needs_a_name_git_takes() {
    let p = Place::new();
    let work = p.work();
    let server = ScriptedServer::new(vec![]);
    for (extra, says) in [
        (
            vec!["--worktree", "x", "--session", "1"],
            "keeps its folder",
        ),
        (vec!["--worktree", "a/../b"], "cannot name a worktree"),
    ] {
        let out = SkaldCmd::new(&p.data())
            .against(&server)
            .cmd()
            .arg("exec")
            .args(&extra)
            .arg("--cwd")
            .arg(&work)
            .arg("hi")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{err}");
    }
    assert!(!p.top.path().join("data-worktrees/x").exists());
}

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// What the agent changed is reviewed hunk by hunk and the chosen part applied, merged with
/// what the person changed meanwhile; the apply is undone like a restore; a clash writes
/// nothing and shows the clash.
#[test]
fn a_worktree_is_reviewed_hunk_by_hunk_applied_merged_undone_and_a_clash_writes_nothing() {
    let p = Place::new();
    let work = p.work();
    let lines = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
    std::fs::write(work.join("doc.txt"), lines).unwrap();
    committed(&work);
    let server = ScriptedServer::new(vec![
        tool_call(
            "c1",
            "execute_cmd",
            r#"{"command": "sed -i 's/^b$/B by the agent/; s/^i$/I by the agent/' doc.txt && echo new > new.txt"}"#,
        ),
        answer("Done."),
    ]);
    let (out, events) = SkaldCmd::new(&p.data()).against(&server).exec_json(
        &work,
        &["--worktree", "edit", "--approve", "all"],
        "edit",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{events:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The person works on meanwhile.
    std::fs::write(
        work.join("doc.txt"),
        lines.replace("e\n", "E by the person\n"),
    )
    .unwrap();
    let diff = json_of(
        &bare(&p.data())
            .args(["worktrees", "diff", "edit", "--json"])
            .output()
            .unwrap(),
    );
    let files: Vec<(&str, &str)> = diff
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["status"].as_str().unwrap()))
        .collect();
    assert_eq!(files, [("doc.txt", "modified"), ("new.txt", "added")]);
    let hunks = &diff[0]["hunks"];
    assert_eq!(hunks.as_array().unwrap().len(), 2, "{hunks}");
    assert_eq!(hunks[0]["added"][0], "B by the agent\n");
    assert_eq!(hunks[1]["removed"][0], "i\n");
    // The first hunk alone, merged with the person's line.
    let applied = json_of(
        &bare(&p.data())
            .args([
                "worktrees",
                "apply",
                "edit",
                "--hunk",
                "doc.txt:0",
                "--json",
            ])
            .output()
            .unwrap(),
    );
    assert_eq!(
        applied["written"],
        serde_json::json!(["doc.txt"]),
        "{applied}"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("doc.txt")).unwrap(),
        "a\nB by the agent\nc\nd\nE by the person\nf\ng\nh\ni\nj\n"
    );
    assert!(
        !work.join("new.txt").exists(),
        "a file not chosen was applied"
    );
    // Undone like a restore: the person's own change stays.
    let id = applied["checkpoint_id"].as_i64().unwrap().to_string();
    ok(&bare(&p.data())
        .args(["checkpoints", "restore", &id])
        .output()
        .unwrap());
    assert_eq!(
        std::fs::read_to_string(work.join("doc.txt")).unwrap(),
        lines.replace("e\n", "E by the person\n")
    );
    // The person changes the agent's other line differently: applying everything clashes,
    // and nothing is written, not even the file that would not clash.
    let theirs = lines
        .replace("e\n", "E by the person\n")
        .replace("i\n", "I by the person\n");
    std::fs::write(work.join("doc.txt"), &theirs).unwrap();
    let out = bare(&p.data())
        .args(["worktrees", "apply", "edit", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let clash = json_of(&out);
    assert_eq!(clash["conflicts"][0]["path"], "doc.txt", "{clash}");
    let markers = clash["conflicts"][0]["markers"].as_str().unwrap();
    assert!(
        markers.contains("<<<<<<<")
            && markers.contains("I by the person")
            && markers.contains("I by the agent"),
        "{markers}"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("doc.txt")).unwrap(),
        theirs
    );
    assert!(!work.join("new.txt").exists());
    // A hunk of a file the worktree did not change is refused by name.
    let out = bare(&p.data())
        .args(["worktrees", "apply", "edit", "--hunk", "other.txt:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("other.txt is not among"));
    // Without the clash, everything applies.
    std::fs::write(
        work.join("doc.txt"),
        lines.replace("e\n", "E by the person\n"),
    )
    .unwrap();
    let applied = json_of(
        &bare(&p.data())
            .args(["worktrees", "apply", "edit", "--json"])
            .output()
            .unwrap(),
    );
    assert_eq!(
        applied["written"],
        serde_json::json!(["doc.txt", "new.txt"]),
        "{applied}"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("doc.txt")).unwrap(),
        "a\nB by the agent\nc\nd\nE by the person\nf\ng\nh\nI by the agent\nj\n"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("new.txt")).unwrap(),
        "new\n"
    );
    // Applied again: nothing left to do.
    let again = json_of(
        &bare(&p.data())
            .args(["worktrees", "apply", "edit", "--json"])
            .output()
            .unwrap(),
    );
    assert_eq!(again["written"], serde_json::json!([]), "{again}");
}

fn in_person_folder(work: &Path, names: &[&str]) -> Vec<String> {
    names
        .iter()
        .filter(|n| work.join(n).exists())
        .map(|n| n.to_string())
        .collect()
}

/// The worktree chat's background task, and a rewind of the chat, work in the worktree
/// and keep out of the person's folder as the chat does, whatever the grants (#50
/// review, finding 1).
#[test]
fn a_worktree_chats_tasks_and_rewinds_keep_out_of_the_persons_folder() {
    const SE: &str = "senior software engineer";
    let p = Place::new();
    let work = p.work();
    std::fs::write(work.join("README.md"), "hello\n").unwrap();
    let to = |name: &str| work.join(name);
    let server = ScriptedServer::routed(vec![
        (
            SE,
            vec![
                tool_call("w9", "write_file", &serde_json::json!({"path": to("by_task_tool.txt"), "content": "x"}).to_string()),
                tool_call("c9", "execute_cmd", &serde_json::json!({"command": format!("echo x > {}", to("by_task_cmd.txt").display())}).to_string()),
                answer("Done."),
            ],
        ),
        (
            "",
            vec![
                tool_call("w1", "write_file", r#"{"path": "notes.txt", "content": "in the worktree\n"}"#),
                tool_call("t1", "execute_task", r#"{"mode": "async", "title": "T", "agent_id": "software-engineer", "prompt": "Go."}"#),
                answer("Started."),
                answer("Got it."),
                answer("(spare)"),
            ],
        ),
    ]);
    let grant = p.top();
    let (out, events) = SkaldCmd::new(&p.data()).against(&server).exec_json(
        &work,
        &[
            "--worktree",
            "t",
            "--approve",
            "all",
            "--allow-write",
            grant.to_str().unwrap(),
        ],
        "go",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        events.iter().any(|e| e["tool_call_id"] == "w9"),
        "the task did not run: {events:?}"
    );
    assert_eq!(
        in_person_folder(&work, &["by_task_tool.txt", "by_task_cmd.txt", "notes.txt"]),
        Vec::<String>::new()
    );
    // Rewound to before its write: the new chat works in the worktree, kept out alike.
    let session = events[0]["session_id"].as_i64().unwrap().to_string();
    let cps: Value = json_of(
        &bare(&p.data())
            .args(["checkpoints", "list", &session, "--json"])
            .output()
            .unwrap(),
    );
    let id = cps
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["tool_call_id"] == "w1")
        .unwrap()["id"]
        .to_string();
    let rewound = json_of(
        &bare(&p.data())
            .args(["checkpoints", "restore", &id, "--rewind", "--json"])
            .output()
            .unwrap(),
    );
    let fork = rewound["fork_session_id"].to_string();
    let second = ScriptedServer::new(vec![
        tool_call("w2", "write_file", &serde_json::json!({"path": to("by_fork_tool.txt"), "content": "x"}).to_string()),
        tool_call("c2", "execute_cmd", &serde_json::json!({"command": format!("echo x > {}", to("by_fork_cmd.txt").display())}).to_string()),
        answer("Done."),
    ]);
    let wt = std::path::PathBuf::from(listed(&p.data())[0]["working_dir"].as_str().unwrap());
    let (out, _) = SkaldCmd::new(&p.data()).against(&second).exec_json(
        &wt,
        &["--session", &fork, "--approve", "all"],
        "go on",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(second.recorded().len(), 3, "the fork's calls ran");
    assert_eq!(
        in_person_folder(&work, &["by_fork_tool.txt", "by_fork_cmd.txt"]),
        Vec::<String>::new()
    );
}

/// An MCP server of a worktree chat is given no root that holds the person's folder
/// (finding 2).
#[test]
fn a_worktree_chats_mcp_roots_leave_out_the_persons_folder() {
    let p = Place::new();
    let work = p.work();
    std::fs::create_dir_all(p.data()).unwrap();
    crate::mcp::add_everything(&p.data());
    let server = ScriptedServer::new(vec![
        tool_call("a1", "activate_tools", r#"{"groups": ["everything"]}"#),
        skald_testkit::delayed(1500, tool_call("w1", "write_todos", r#"{"todos": []}"#)),
        tool_call("r1", "mcp__everything__get-roots-list", "{}"),
        answer("ok"),
    ]);
    let grant = p.top();
    let (_, events) = SkaldCmd::new(&p.data()).against(&server).exec_json(
        &work,
        &[
            "--worktree",
            "m",
            "--approve",
            "all",
            "--allow-write",
            grant.to_str().unwrap(),
        ],
        "roots?",
    );
    let roots = crate::common::result(&events, "r1");
    assert!(roots.contains("data-worktrees/m"), "{roots}");
    let top_root = format!("file://{}/", grant.display());
    assert!(
        !roots.lines().any(|l| l.trim_end().ends_with(&top_root)),
        "{roots}"
    );
}

/// Git's and Skald's own files in a worktree are not the agent's to write: a `.git` file
/// repointed at a repository of the agent's making would run its code in the person's
/// next `git` (finding 3). In a chat that is no worktree's, such a write always asks.
#[test]
fn git_s_own_files_are_never_written_by_a_worktree_agent() {
    let p = Place::new();
    let work = p.work();
    std::fs::write(work.join("README.md"), "hello\n").unwrap();
    committed(&work);
    let pwned = p.top().join("PWNED");
    let config = format!(
        "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"touch {}; false\"\n",
        pwned.display()
    );
    let server = ScriptedServer::new(vec![
        tool_call(
            "w1",
            "write_file",
            r#"{"path": "evil/HEAD", "content": "ref: refs/heads/main\n"}"#,
        ),
        tool_call(
            "w4",
            "write_file",
            &serde_json::json!({"path": "evil/config", "content": config}).to_string(),
        ),
        tool_call(
            "w5",
            "write_file",
            r#"{"path": ".git", "content": "gitdir: evil\n"}"#,
        ),
        tool_call(
            "w6",
            "write_file",
            r#"{"path": ".skald/hooks.json", "content": "{}"}"#,
        ),
        answer("Done."),
    ]);
    let (out, events) = SkaldCmd::new(&p.data()).against(&server).exec_json(
        &work,
        &["--worktree", "g", "--approve", "all"],
        "work",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for id in ["w5", "w6"] {
        let refused = events
            .iter()
            .find(|e| e["tool_call_id"] == id && e["type"] == "tool_rejected");
        assert!(
            refused.is_some_and(|e| e.to_string().contains("not the agent's to write")),
            "{id}: {events:?}"
        );
    }
    let wt = std::path::PathBuf::from(listed(&p.data())[0]["root"].as_str().unwrap());
    assert!(
        std::fs::read_to_string(wt.join(".git"))
            .unwrap()
            .contains(".git/worktrees/skald-g"),
        "the .git file was changed"
    );
    let st = Command::new("git")
        .args(["status", "--short"])
        .current_dir(&wt)
        .output()
        .unwrap();
    assert!(st.status.success());
    assert!(!pwned.exists(), "the person's git ran the agent's code");
}

/// A folder holding the data directory (the home folder) is copied without the worktrees
/// folder, which lies inside it (finding 4); a data directory reached through a link
/// makes worktrees whose chats run (finding 6).
#[test]
fn a_home_folder_is_copied_without_its_worktrees_and_a_linked_data_dir_works() {
    let p = Place::new();
    let home = p.work();
    std::fs::write(home.join("notes.txt"), "mine\n").unwrap();
    let data = home.join(".local/share/skald");
    std::fs::create_dir_all(&data).unwrap();
    let server = ScriptedServer::new(vec![answer("hi"), answer("hi"), answer("hi")]);
    for name in ["h1", "h2"] {
        let (out, _) = SkaldCmd::new(&data).against(&server).exec_json(
            &home,
            &["--worktree", name, "--approve", "all"],
            "hello",
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let wt = home.join(".local/share/skald-worktrees/h2");
    assert!(wt.join("notes.txt").is_file());
    let inside = Command::new("find").arg(&wt).output().unwrap();
    assert!(
        !wt.join(".local/share/skald-worktrees").exists(),
        "the worktrees were copied into a worktree: {}",
        String::from_utf8_lossy(&inside.stdout)
    );
    // Through a link.
    std::fs::create_dir(p.top().join("real")).unwrap();
    std::os::unix::fs::symlink(p.top().join("real"), p.top().join("via")).unwrap();
    let linked = p.top().join("via/data");
    let server = ScriptedServer::new(vec![
        tool_call(
            "w1",
            "write_file",
            r#"{"path": "notes.txt", "content": "x\n"}"#,
        ),
        answer("Done."),
    ]);
    let (out, events) = SkaldCmd::new(&linked).against(&server).exec_json(
        &home,
        &["--worktree", "l", "--approve", "all"],
        "notes",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{events:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(p.top().join("real/data-worktrees/l/notes.txt")).unwrap(),
        "x\n"
    );
}

/// A run killed after it made a worktree and before it recorded its chat leaves the folder:
/// it is listed as not recorded and removed by name.
#[test]
fn a_worktree_left_by_a_stopped_run_is_listed_and_removed() {
    let p = Place::new();
    std::fs::create_dir_all(p.data()).unwrap();
    let stray = p.top().join("data-worktrees/left-1");
    std::fs::create_dir_all(stray.join("sub")).unwrap();
    std::fs::write(stray.join("sub/a.txt"), "a").unwrap();
    let out = bare(&p.data())
        .args(["worktrees", "list"])
        .output()
        .unwrap();
    let text = ok(&out);
    assert!(text.contains("left-1  not recorded"), "{text}");
    for bad in ["../data", "left-1/sub"] {
        let out = bare(&p.data())
            .args(["worktrees", "discard", bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
    }
    assert!(stray.exists());
    ok(&bare(&p.data())
        .args(["worktrees", "discard", "left-1"])
        .output()
        .unwrap());
    assert!(!stray.exists());
    assert!(p.data().exists());
}

/// For a git folder: the agent's work committed on its branch, then merged into the
/// person's branch; a clash merges nothing (docs/worktrees.md, "Commit and merge").
#[test]
fn a_git_worktree_s_work_is_committed_on_its_branch_and_merged() {
    let p = Place::new();
    let work = p.work();
    std::fs::write(work.join("README.md"), "hello\n").unwrap();
    std::fs::write(work.join("plan.md"), "one\ntwo\n").unwrap();
    committed(&work);
    let server = ScriptedServer::new(vec![
        tool_call(
            "w1",
            "write_file",
            r#"{"path": "notes.txt", "content": "from the agent\n"}"#,
        ),
        tool_call(
            "w2",
            "write_file",
            r#"{"path": "plan.md", "content": "one\nagent\n"}"#,
        ),
        answer("Done."),
    ]);
    let (out, events) = SkaldCmd::new(&p.data()).against(&server).exec_json(
        &work,
        &["--worktree", "feat", "--approve", "all"],
        "notes",
    );
    assert_eq!(out.status.code(), Some(0), "{events:?}");
    let run = |args: &[&str]| bare(&p.data()).args(args).output().unwrap();
    // Nothing committed yet: merging is refused, and says why.
    let out = run(&["worktrees", "merge", "feat"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not committed"));
    let said = ok(&run(&[
        "worktrees",
        "commit",
        "feat",
        "-m",
        "Notes by the agent",
    ]));
    assert!(said.contains("skald/feat"), "{said}");
    assert_eq!(
        git(&work, &["log", "-1", "--format=%s", "skald/feat"]).trim(),
        "Notes by the agent"
    );
    let out = run(&["worktrees", "commit", "feat"]);
    assert_eq!(out.status.code(), Some(2), "nothing left to commit");

    // The person changed the same line meanwhile: nothing is merged.
    std::fs::write(work.join("plan.md"), "one\nperson\n").unwrap();
    git(&work, &["commit", "-q", "-am", "mine"]);
    let head = git(&work, &["rev-parse", "HEAD"]);
    let out = run(&["worktrees", "merge", "feat", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["outcome"], "conflicts");
    assert_eq!(report["conflicts"], serde_json::json!(["plan.md"]));
    assert_eq!(git(&work, &["rev-parse", "HEAD"]), head);
    assert!(!work.join("notes.txt").exists());
    assert_eq!(git(&work, &["status", "--porcelain"]), "");

    // Taken back, the merge goes through as a merge commit.
    git(&work, &["reset", "-q", "--hard", "HEAD~1"]);
    std::fs::write(work.join("README.md"), "hello, person\n").unwrap();
    git(&work, &["commit", "-q", "-am", "readme"]);
    let said = ok(&run(&["worktrees", "merge", "feat"]));
    assert!(said.contains("Merged skald/feat into main"), "{said}");
    assert_eq!(
        std::fs::read_to_string(work.join("notes.txt")).unwrap(),
        "from the agent\n"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("plan.md")).unwrap(),
        "one\nagent\n"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("README.md")).unwrap(),
        "hello, person\n"
    );
    assert_eq!(git(&work, &["status", "--porcelain"]), "");
    assert_eq!(
        git(&work, &["log", "-1", "--format=%P"])
            .split_whitespace()
            .count(),
        2
    );
}

/// Worktrees left unused are offered for cleaning up, with the space they take, and
/// removed only when the person says so (docs/worktrees.md, "Disk use and cleaning up").
#[test]
fn worktrees_unused_for_long_are_listed_with_their_size_and_removed_only_when_asked() {
    let p = Place::new();
    let work = p.work();
    std::fs::write(work.join("big.bin"), vec![7u8; 256 * 1024]).unwrap();
    for name in ["stale", "fresh"] {
        let server = ScriptedServer::new(vec![answer("Done.")]);
        let (out, events) =
            SkaldCmd::new(&p.data())
                .against(&server)
                .exec_json(&work, &["--worktree", name], "hi");
        assert_eq!(out.status.code(), Some(0), "{events:?}");
    }
    // "stale" last used a month ago.
    let month_ago = skald_store::now_ms() - 30 * 24 * 3600 * 1000;
    let db = rusqlite::Connection::open(p.data().join("skald.db")).unwrap();
    db.execute(
        "UPDATE worktrees SET created_at = ?1 WHERE name = 'stale'",
        [month_ago],
    )
    .unwrap();
    db.execute(
        "UPDATE chat_sessions SET updated_at = ?1, created_at = ?1, turn_started_at = ?1,
                                  turn_ended_at = ?1
         WHERE id = (SELECT session_id FROM worktrees WHERE name = 'stale')",
        [month_ago],
    )
    .unwrap();
    drop(db);
    let all = listed(&p.data());
    let stale = all
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == "stale")
        .unwrap();
    assert!(
        stale["disk_bytes"].as_u64().unwrap() >= 256 * 1024,
        "{stale}"
    );
    assert!(
        stale["last_used_at"].as_i64().unwrap() <= month_ago + 1000,
        "{stale}"
    );
    let text = ok(&bare(&p.data())
        .args(["worktrees", "list"])
        .output()
        .unwrap());
    assert!(text.contains("unused for 30 days"), "{text}");

    // No terminal to ask on: listed, nothing removed.
    let said = ok(&bare(&p.data())
        .args(["worktrees", "clean"])
        .output()
        .unwrap());
    assert!(said.contains("stale") && !said.contains("fresh"), "{said}");
    assert!(said.contains("Nothing removed"), "{said}");
    let root = |n: &str| p.top().join("data-worktrees").join(n);
    assert!(root("stale").is_dir());
    // A shorter time than the setting's, and only what is older than it.
    let said = ok(&bare(&p.data())
        .args(["worktrees", "clean", "--older-than", "31"])
        .output()
        .unwrap());
    assert!(said.contains("No worktree"), "{said}");
    let said = ok(&bare(&p.data())
        .args(["worktrees", "clean", "--yes"])
        .output()
        .unwrap());
    assert!(said.contains("Discarded stale"), "{said}");
    assert!(!root("stale").exists());
    assert!(root("fresh").join("big.bin").is_file());
    let names: Vec<Value> = listed(&p.data())
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].clone())
        .collect();
    assert_eq!(names, [serde_json::json!("fresh")]);
    // The person's folder is untouched.
    assert!(work.join("big.bin").is_file());
}

/// A scheduled job added with --worktree runs each time in a worktree of its own; the
/// folder is untouched until its work is applied (docs/worktrees.md, "Background tasks
/// and scheduled jobs").
#[test]
fn a_scheduled_job_with_worktree_runs_in_its_own_copy_of_the_folder() {
    let p = Place::new();
    let work = p.work();
    std::fs::write(work.join("digest.md"), "last week\n").unwrap();
    let server = ScriptedServer::routed(vec![
        (
            "meticulous researcher",
            vec![
                tool_call(
                    "w1",
                    "write_file",
                    r##"{"path": "digest.md", "content": "# This week\n"}"##,
                ),
                answer("Digest written."),
            ],
        ),
        ("", vec![answer("ok")]),
    ]);
    let out = bare(&p.data())
        .args([
            "cron",
            "add",
            "--agent",
            "researcher",
            "--name",
            "digest",
            "--prompt",
            "Write the digest",
            "--cron",
            "0 0 0 1 1 *",
            "--worktree",
            "--json",
            "--cwd",
        ])
        .arg(&work)
        .output()
        .unwrap();
    let job: Value = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!(job["worktree"], true, "{job}");
    let id = job["id"].as_i64().unwrap();
    let store = skald_store::Store::open(p.data().join("skald.db")).unwrap();
    let seen = store.get_job(id).unwrap().next_run_at.unwrap();
    assert!(
        store
            .advance_job(id, seen, Some(skald_store::now_ms() - 1000))
            .unwrap()
    );
    drop(store);
    ok(&SkaldCmd::new(&p.data())
        .against(&server)
        .cmd()
        .args(["cron", "run", "--once", "--approve", "all"])
        .output()
        .unwrap());
    // The folder is as it was; the run's worktree has the digest.
    assert_eq!(
        std::fs::read_to_string(work.join("digest.md")).unwrap(),
        "last week\n"
    );
    let all = listed(&p.data());
    let w = &all[0];
    assert_eq!(w["source"], work.display().to_string(), "{all}");
    assert_eq!(
        std::fs::read_to_string(Path::new(w["root"].as_str().unwrap()).join("digest.md")).unwrap(),
        "# This week\n"
    );
    // Applied by the person, it reaches the folder.
    let name = w["name"].as_str().unwrap();
    ok(&bare(&p.data())
        .args(["worktrees", "apply", name])
        .output()
        .unwrap());
    assert_eq!(
        std::fs::read_to_string(work.join("digest.md")).unwrap(),
        "# This week\n"
    );
}

/// A background task asked to work in a worktree does; a sync one cannot be.
#[test]
fn a_background_task_with_worktree_works_in_its_own_copy_of_the_folder() {
    let p = Place::new();
    let work = p.work();
    std::fs::write(work.join("notes.md"), "mine\n").unwrap();
    let task = serde_json::json!({
        "mode": "async", "title": "Rewrite", "prompt": "Rewrite the notes",
        "agent_id": "researcher", "worktree": true
    })
    .to_string();
    let sync = serde_json::json!({
        "mode": "sync", "title": "Rewrite", "prompt": "Rewrite the notes",
        "agent_id": "researcher", "worktree": true
    })
    .to_string();
    let server = ScriptedServer::routed(vec![
        (
            "meticulous researcher",
            vec![
                tool_call(
                    "w1",
                    "write_file",
                    r#"{"path": "notes.md", "content": "rewritten\n"}"#,
                ),
                answer("Rewritten."),
            ],
        ),
        (
            "",
            vec![
                tool_call("t0", "execute_task", &sync),
                tool_call("t1", "execute_task", &task),
                answer("Started."),
                answer("The task is done."),
            ],
        ),
    ]);
    let (out, events) = SkaldCmd::new(&p.data()).against(&server).exec_json(
        &work,
        &["--approve", "all"],
        "rewrite in the background",
    );
    assert_eq!(out.status.code(), Some(0), "{events:?}");
    let refused = events
        .iter()
        .find(|e| e["tool_call_id"] == "t0" && e["type"] == "tool_error")
        .unwrap_or_else(|| panic!("{events:?}"));
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("async and cron"),
        "{refused}"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("notes.md")).unwrap(),
        "mine\n"
    );
    let all = listed(&p.data());
    let w = &all[0];
    assert_eq!(w["source"], work.display().to_string(), "{all}");
    assert_eq!(
        std::fs::read_to_string(Path::new(w["root"].as_str().unwrap()).join("notes.md")).unwrap(),
        "rewritten\n"
    );
}
