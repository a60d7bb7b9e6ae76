//! Hooks (docs/hooks.md) as real scripts against a real `skald exec` and the scripted
//! model: what they are given, what their decisions do, and a project's file running
//! only once approved.

use crate::common::{SkaldCmd, skald};
use serde_json::Value;
use skald_testkit::{ScriptedServer, answer, tool_call};
use std::path::{Path, PathBuf};
use std::process::Output;

struct Setup {
    data: tempfile::TempDir,
    work: tempfile::TempDir,
    scripts: tempfile::TempDir,
}

impl Setup {
    fn new() -> Setup {
        Setup {
            data: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
            scripts: tempfile::tempdir().unwrap(),
        }
    }

    /// A script of `body`; returns the command that runs it.
    fn script(&self, name: &str, body: &str) -> String {
        let path = self.scripts.path().join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        format!("sh {}", path.display())
    }

    /// Where scripts leave what they saw.
    fn seen(&self, name: &str) -> PathBuf {
        self.scripts.path().join(name)
    }

    /// config.toml with `hooks` as its `[hooks]` (TOML).
    fn config(&self, hooks: &str) {
        std::fs::write(self.data.path().join("config.toml"), hooks).unwrap();
    }

    fn exec(&self, server: &ScriptedServer, extra: &[&str], prompt: &str) -> (Output, Vec<Value>) {
        SkaldCmd::new(self.data.path())
            .against(server)
            .exec_json(self.work.path(), extra, prompt)
    }
}

impl Setup {
    /// Approves the project's hooks as `skald hooks list` shows them (the hash it prints).
    fn approve_project_hooks(&self) {
        let listed = skald(self.data.path(), None)
            .args(["hooks", "list", "--cwd"])
            .arg(self.work.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&listed.stdout);
        let sha = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("content (sha256 "))
            .and_then(|l| l.strip_suffix("):"))
            .unwrap_or_else(|| panic!("{text}"))
            .to_string();
        let approved = skald(self.data.path(), None)
            .args(["hooks", "approve", "--cwd"])
            .arg(self.work.path())
            .args(["--sha", &sha])
            .output()
            .unwrap();
        assert_eq!(approved.status.code(), Some(0));
    }
}

fn hook_runs<'a>(evs: &'a [Value], event: &str) -> Vec<&'a Value> {
    evs.iter()
        .filter(|e| e["type"] == "hook" && e["hook"]["event"] == event)
        .map(|e| &e["hook"])
        .collect()
}

fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn a_pretooluse_hook_gets_the_call_and_blocks_it_with_a_reason_the_model_reads() {
    let s = Setup::new();
    let payload = s.seen("payload.json");
    let guard = s.script(
        "guard.sh",
        &format!(
            "cat > {}\ncase \"$(cat {})\" in *rm\\ -rf*) echo 'no rm -rf here' >&2; exit 2;; esac\nexit 0",
            payload.display(),
            payload.display()
        ),
    );
    s.config(&format!(
        "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\nhooks = [{{ type = \"command\", command = {} }}]\n",
        toml_str(&guard)
    ));
    let server = ScriptedServer::new(vec![
        tool_call("c1", "execute_cmd", r#"{"command": "rm -rf build"}"#),
        answer("ok, I will not"),
    ]);
    let (out, evs) = s.exec(&server, &["--approve", "all"], "clean up");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rejected = evs
        .iter()
        .find(|e| e["type"] == "tool_rejected")
        .unwrap_or_else(|| panic!("{evs:?}"));
    assert!(
        rejected["reason"]
            .as_str()
            .unwrap()
            .contains("no rm -rf here"),
        "{rejected}"
    );
    let runs = hook_runs(&evs, "PreToolUse");
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["outcome"], "blocked");
    assert_eq!(runs[0]["source"], "user");
    // What the hook was given, in Claude Code's shape.
    let p = read_json(&payload);
    assert_eq!(p["hook_event_name"], "PreToolUse");
    assert_eq!(p["tool_name"], "execute_cmd");
    assert_eq!(p["tool_input"]["command"], "rm -rf build");
    assert_eq!(p["cwd"], s.work.path().to_string_lossy().as_ref());
    // The model read why.
    let second = server.recorded()[1].body.to_string();
    assert!(second.contains("no rm -rf here"), "{second}");
}

#[test]
fn a_hook_lets_through_what_the_rules_would_ask_about_but_never_what_they_deny() {
    let s = Setup::new();
    let allow = s.script(
        "allow.sh",
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "fine by me"}}'"#,
    );
    s.config(&format!(
        "[[hooks.PreToolUse]]\nmatcher = \"execute_cmd\"\nhooks = [{{ type = \"command\", command = {} }}]\n",
        toml_str(&allow)
    ));
    // Without a sandbox every command needs approval, and this run gives none: the hook's
    // allow is what runs it.
    let server = ScriptedServer::new(vec![
        tool_call(
            "c1",
            "execute_cmd",
            r#"{"command": "echo hello-from-the-command"}"#,
        ),
        answer("done"),
    ]);
    let (out, evs) = s.exec(
        &server,
        &["--approve", "never", "--sandbox", "off"],
        "say hello",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let done = evs
        .iter()
        .find(|e| e["type"] == "tool_done")
        .unwrap_or_else(|| panic!("{evs:?}"));
    assert!(
        done["result"]
            .as_str()
            .unwrap()
            .contains("hello-from-the-command")
    );
    // A deny rule still denies.
    let add = skald(s.data.path(), None)
        .args([
            "rules",
            "add",
            "--tool",
            "execute_cmd",
            "--command",
            "echo",
            "--action",
            "deny",
        ])
        .output()
        .unwrap();
    assert_eq!(
        add.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&add.stderr)
    );
    let server = ScriptedServer::new(vec![
        tool_call("c1", "execute_cmd", r#"{"command": "echo again"}"#),
        answer("done"),
    ]);
    let (_, evs) = s.exec(
        &server,
        &["--approve", "all", "--sandbox", "off"],
        "say hello",
    );
    let rejected = evs
        .iter()
        .find(|e| e["type"] == "tool_rejected")
        .unwrap_or_else(|| panic!("{evs:?}"));
    assert!(
        rejected["reason"]
            .as_str()
            .unwrap()
            .contains("denied by the user's approval rules"),
        "{rejected}"
    );
    assert!(
        hook_runs(&evs, "PreToolUse").is_empty(),
        "a denied call asks no hook"
    );
}

#[test]
fn prompt_hooks_add_context_or_block_and_a_stop_hook_sends_the_agent_back_once() {
    let s = Setup::new();
    let context = s.script("context.sh", "echo 'The branch is CONTEXT-MARKER.'");
    let stop = s.script(
        "stop.sh",
        r#"case "$(cat)" in *'"stop_hook_active":true'*) exit 0;; esac
echo '{"decision": "block", "reason": "run the tests first"}'"#,
    );
    let post = s.script(
        "post.sh",
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "POST-MARKER"}}'"#,
    );
    s.config(&format!(
        "[[hooks.UserPromptSubmit]]\nhooks = [{{ type = \"command\", command = {} }}]\n\
         [[hooks.Stop]]\nhooks = [{{ type = \"command\", command = {} }}]\n\
         [[hooks.PostToolUse]]\nmatcher = \"Read\"\nhooks = [{{ type = \"command\", command = {} }}]\n",
        toml_str(&context),
        toml_str(&stop),
        toml_str(&post)
    ));
    std::fs::write(s.work.path().join("a.txt"), "file text\n").unwrap();
    let server = ScriptedServer::new(vec![
        tool_call("c1", "read_file", r#"{"path": "a.txt"}"#),
        answer("first answer"),
        answer("second answer"),
    ]);
    let (out, evs) = s.exec(&server, &[], "go");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = server.recorded();
    assert_eq!(requests.len(), 3, "sent back once, then let stop");
    assert!(requests[0].body.to_string().contains("CONTEXT-MARKER"));
    let done = evs.iter().find(|e| e["type"] == "tool_done").unwrap();
    assert!(
        done["result"].as_str().unwrap().contains("POST-MARKER"),
        "{done}"
    );
    assert!(requests[2].body.to_string().contains("run the tests first"));
    let end = evs.iter().find(|e| e["type"] == "done").unwrap();
    assert_eq!(end["text"], "second answer");
    assert_eq!(hook_runs(&evs, "Stop").len(), 2);

    // A blocking UserPromptSubmit hook: the model is never asked, and the person is told.
    let block = s.script("block.sh", "echo 'not on a Friday' >&2; exit 2");
    s.config(&format!(
        "[[hooks.UserPromptSubmit]]\nhooks = [{{ type = \"command\", command = {} }}]\n",
        toml_str(&block)
    ));
    let server = ScriptedServer::new(vec![answer("never")]);
    let (out, evs) = s.exec(&server, &[], "deploy");
    assert!(server.recorded().is_empty());
    assert_ne!(out.status.code(), Some(0));
    let error = evs
        .iter()
        .find(|e| e["type"] == "error")
        .unwrap_or_else(|| panic!("{evs:?}"));
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("not on a Friday")
    );
}

#[test]
fn a_failing_or_slow_hook_is_shown_and_the_turn_goes_on() {
    let s = Setup::new();
    let broken = s.script("broken.sh", "echo 'oops' >&2; exit 1");
    let slow = s.script("slow.sh", "sleep 30");
    s.config(&format!(
        "[[hooks.PreToolUse]]\nhooks = [{{ type = \"command\", command = {} }}, {{ type = \"command\", command = {}, timeout = 1 }}]\n",
        toml_str(&broken),
        toml_str(&slow)
    ));
    std::fs::write(s.work.path().join("a.txt"), "file text\n").unwrap();
    let server = ScriptedServer::new(vec![
        tool_call("c1", "read_file", r#"{"path": "a.txt"}"#),
        answer("done"),
    ]);
    let started = std::time::Instant::now();
    let (out, evs) = s.exec(&server, &[], "go");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(25),
        "the slow hook was killed"
    );
    let runs = hook_runs(&evs, "PreToolUse");
    let outcomes: Vec<&str> = runs
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["error", "timeout"]);
    assert!(runs[0]["message"].as_str().unwrap().contains("oops"));
    assert!(evs.iter().any(|e| e["type"] == "tool_done"));
}

#[test]
fn a_projects_hooks_run_only_once_their_content_is_approved() {
    let s = Setup::new();
    std::fs::create_dir_all(s.work.path().join(".git")).unwrap();
    // In the project, as its hooks' files are: a project's hooks run in the chat's
    // sandbox, which writes only the chat's folder.
    let marker = s.work.path().join("ran");
    std::fs::write(
        s.work.path().join("project.sh"),
        format!("#!/bin/sh\necho run >> {}\n", marker.display()),
    )
    .unwrap();
    let hook = format!("sh {}", s.work.path().join("project.sh").display());
    let file = s.work.path().join(".skald/hooks.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let write_file = |cmd: &str| {
        std::fs::write(
            &file,
            serde_json::json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": cmd}]}]}})
                .to_string(),
        )
        .unwrap();
    };
    write_file(&hook);
    let run = || {
        let server = ScriptedServer::new(vec![answer("done")]);
        s.exec(&server, &[], "hello").1
    };
    let evs = run();
    assert!(!marker.exists(), "not approved: not run");
    let ctx = evs
        .iter()
        .find(|e| e["type"] == "context")
        .unwrap_or_else(|| panic!("{evs:?}"));
    assert_eq!(ctx["context"]["project_hooks"]["approved"], false);
    assert_eq!(ctx["context"]["project_hooks"]["hooks"], 1);
    let listed = skald(s.data.path(), None)
        .args(["hooks", "list", "--cwd"])
        .arg(s.work.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(text.contains("NOT approved"), "{text}");
    // The list shows the file's content and the hash that approving must name.
    let sha = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("content (sha256 "))
        .and_then(|l| l.strip_suffix("):"))
        .unwrap_or_else(|| panic!("{text}"))
        .to_string();
    assert!(
        text.contains(&format!("│ {}", std::fs::read_to_string(&file).unwrap())),
        "{text}"
    );
    let approve_sha = |sha: Option<&str>| {
        let mut c = skald(s.data.path(), None);
        c.args(["hooks", "approve", "--cwd"]).arg(s.work.path());
        if let Some(sha) = sha {
            c.args(["--sha", sha]);
        }
        c.output().unwrap()
    };
    // Without the hash of what was read, or with another one, nothing is approved: the
    // file may have changed since it was read.
    for wrong in [None, Some("0".repeat(64).as_str()), Some(&sha[..12])] {
        let o = approve_sha(wrong);
        assert_eq!(o.status.code(), Some(2), "{wrong:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(&sha),
            "{wrong:?}"
        );
    }
    let evs = run();
    assert!(!marker.exists(), "approved without its hash");
    assert_eq!(
        evs.iter().find(|e| e["type"] == "context").unwrap()["context"]["project_hooks"]["approved"],
        false
    );
    let approve = approve_sha(Some(&sha));
    assert_eq!(
        approve.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&approve.stderr)
    );
    let evs = run();
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "run\n");
    let runs = hook_runs(&evs, "UserPromptSubmit");
    assert_eq!(runs[0]["source"], "project");
    // Changed: waits for approval again.
    write_file(&format!("{hook}; echo changed"));
    run();
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "run\n");
    // Changed after it was read: the hash read before approves nothing.
    let o = approve_sha(Some(&sha));
    assert_eq!(o.status.code(), Some(2));
    run();
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "run\n");
}

/// The sandbox review's item 5: a project hook that runs a script of the project's
/// (`sh .skald/fmt.sh`) is approved with that script, so a change to the script — by a
/// sandboxed command, a `git pull` — waits for approval again like a change to the hooks
/// file. `skald hooks list` shows every file the approval covers.
#[test]
fn approving_a_projects_hooks_covers_every_file_under_skald_and_a_changed_script_asks_again() {
    let s = Setup::new();
    std::fs::create_dir_all(s.work.path().join(".git")).unwrap();
    let marker = s.work.path().join("ran");
    let dir = s.work.path().join(".skald");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("fmt.sh"),
        format!("echo run >> {}\n", marker.display()),
    )
    .unwrap();
    std::fs::write(
        dir.join("hooks.json"),
        serde_json::json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "sh .skald/fmt.sh"}]}]}})
            .to_string(),
    )
    .unwrap();
    let list = || {
        let o = skald(s.data.path(), None)
            .args(["hooks", "list", "--cwd"])
            .arg(s.work.path())
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let sha_of = |text: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix("content (sha256 "))
            .and_then(|l| l.strip_suffix("):"))
            .unwrap_or_else(|| panic!("{text}"))
            .to_string()
    };
    let text = list();
    assert!(
        text.contains(".skald/fmt.sh:")
            && text.contains(&format!("│ echo run >> {}", marker.display())),
        "{text}"
    );
    let approve = |sha: &str| {
        skald(s.data.path(), None)
            .args(["hooks", "approve", "--cwd"])
            .arg(s.work.path())
            .args(["--sha", sha])
            .output()
            .unwrap()
    };
    let o = approve(&sha_of(&text));
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains(".skald/fmt.sh"));
    let run = || {
        let server = ScriptedServer::new(vec![answer("done")]);
        s.exec(&server, &[], "hello").1
    };
    run();
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "run\n");
    // The script changes (the hooks file does not): nothing runs until approved again.
    std::fs::write(
        dir.join("fmt.sh"),
        format!("echo changed >> {}\n", marker.display()),
    )
    .unwrap();
    let evs = run();
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "run\n");
    assert_eq!(
        evs.iter().find(|e| e["type"] == "context").unwrap()["context"]["project_hooks"]["approved"],
        false
    );
    // So does a new file in the folder.
    let o = approve(&sha_of(&list()));
    assert_eq!(o.status.code(), Some(0));
    run();
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "run\nchanged\n");
    std::fs::write(dir.join("lib.sh"), "echo more\n").unwrap();
    run();
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "run\nchanged\n");
}

/// The sandbox review's item 5: a project's hooks are the repository's code, run from the
/// chat's folder whose files sandboxed commands may have written, so in a sandboxed chat
/// they run in its sandbox: they write the chat's folder and nothing outside it. The
/// person's own hooks (config.toml) run as the person, and so does a project's hook in a
/// chat with the sandbox off.
#[test]
fn a_projects_hooks_run_in_the_chats_sandbox_and_the_persons_own_do_not() {
    let s = Setup::new();
    std::fs::create_dir_all(s.work.path().join(".git")).unwrap();
    let outside = skald_testkit::tempdir_seen_by_commands();
    let o = outside.path();
    s.config(&format!(
        "[[hooks.UserPromptSubmit]]\nhooks = [{{ type = \"command\", command = {} }}]\n",
        toml_str(&format!("touch {}/user-hook", o.display()))
    ));
    let dir = s.work.path().join(".skald");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("hooks.json"),
        serde_json::json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command",
            "command": format!("touch inside; touch {}/project-hook; echo t > $TMPDIR/t && touch tmp-ok", o.display())}]}]}})
        .to_string(),
    )
    .unwrap();
    s.approve_project_hooks();
    let server = ScriptedServer::new(vec![answer("done")]);
    let (_, evs) = s.exec(&server, &["--sandbox", "workspace-write"], "hello");
    let runs = hook_runs(&evs, "UserPromptSubmit");
    assert_eq!(runs.len(), 2, "{evs:?}");
    assert!(
        o.join("user-hook").exists(),
        "the person's hook runs as the person"
    );
    assert!(s.work.path().join("inside").exists(), "{runs:?}");
    assert!(
        s.work.path().join("tmp-ok").exists(),
        "its own temporary folder: {runs:?}"
    );
    assert!(
        !o.join("project-hook").exists(),
        "the project's hook wrote outside: {runs:?}"
    );
    // With the sandbox off, the chat's commands run as the person, and so do its hooks.
    let server = ScriptedServer::new(vec![answer("done")]);
    s.exec(&server, &["--sandbox", "off"], "hello");
    assert!(o.join("project-hook").exists());
}

/// From the sandbox review: a hook's "allow" lifts an ordinary "needs approval", never a
/// call that asks to leave the sandbox (more folders, the network, no sandbox) or a file
/// tool in a credential folder: only the person lifts those, and a project's hook may run
/// code a sandboxed command wrote.
#[test]
fn a_hooks_allow_never_lifts_a_sandbox_grant_or_a_credential_folder() {
    let s = Setup::new();
    let allow = s.script(
        "allow.sh",
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}'"#,
    );
    s.config(&format!(
        "[[hooks.PreToolUse]]\nhooks = [{{ type = \"command\", command = {} }}]\n",
        toml_str(&allow)
    ));
    let home = std::env::var("HOME").unwrap();
    let calls = [
        (
            "g1",
            "execute_cmd",
            serde_json::json!({"command": "echo unsandboxed-ran",
                "sandbox_grant": {"unsandboxed": true, "reason": "x"}}),
        ),
        (
            "g2",
            "execute_cmd",
            serde_json::json!({"command": "echo network-ran",
                "sandbox_grant": {"network": true, "reason": "x"}}),
        ),
        (
            "g3",
            "read_file",
            serde_json::json!({"path": format!("{home}/.ssh/id_ed25519")}),
        ),
        // An ordinary "needs approval" is still the hook's to lift.
        (
            "g4",
            "execute_cmd",
            serde_json::json!({"command": "echo plain-ran"}),
        ),
    ];
    let mut replies: Vec<_> = calls
        .iter()
        .map(|(id, tool, args)| tool_call(id, tool, &args.to_string()))
        .collect();
    replies.push(answer("done"));
    let server = ScriptedServer::new(replies);
    let (_, evs) = s.exec(&server, &["--approve", "never"], "try");
    for id in ["g1", "g2", "g3"] {
        assert!(
            evs.iter()
                .any(|e| e["type"] == "tool_rejected" && e["tool_call_id"] == id),
            "{id} was not refused: {evs:?}"
        );
    }
    assert!(crate::common::result(&evs, "g4").contains("plain-ran"));
}

/// From the sandbox review: the project's files are approved as they are when a turn
/// begins, and read again before its hooks run: a script changed during the turn (here by
/// the agent's own write) does not run unapproved later in that turn.
#[test]
fn a_project_script_changed_during_the_turn_does_not_run_unapproved() {
    let s = Setup::new();
    std::fs::create_dir_all(s.work.path().join(".git")).unwrap();
    let marker = s.work.path().join("ran");
    let dir = s.work.path().join(".skald");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("fmt.sh"),
        format!("echo approved >> {}\n", marker.display()),
    )
    .unwrap();
    std::fs::write(
        dir.join("hooks.json"),
        serde_json::json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "sh .skald/fmt.sh"}]}]}})
            .to_string(),
    )
    .unwrap();
    s.approve_project_hooks();
    let evil = serde_json::json!({"path": ".skald/fmt.sh",
        "content": format!("echo unapproved >> {}\n", marker.display())});
    let server = ScriptedServer::new(vec![
        tool_call("w1", "write_file", &evil.to_string()),
        answer("done"),
    ]);
    s.exec(&server, &["--approve", "all"], "tidy up");
    let ran = std::fs::read_to_string(&marker).unwrap_or_default();
    assert!(!ran.contains("unapproved"), "{ran}");
}
