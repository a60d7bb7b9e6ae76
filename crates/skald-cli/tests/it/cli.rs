//! `skald` run as a real process: the catalog, direct tool runs and their exit codes.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

struct Sandbox {
    data: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        let work = tempfile::tempdir().unwrap();
        std::fs::write(work.path().join("hello.txt"), "hello\nworld\n").unwrap();
        Sandbox {
            data: tempfile::tempdir().unwrap(),
            work,
        }
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = crate::common::bare(self.data.path());
        c.args(args)
            .current_dir(self.work.path())
            .stdin(Stdio::null());
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn tools_json_lists_the_catalog() {
    let sb = Sandbox::new();
    let out = sb.run(&["tools", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let tools: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    for tool in &tools {
        for key in ["name", "description", "category", "parameters"] {
            assert!(tool.get(key).is_some(), "{key} missing in {tool}");
        }
        assert_eq!(tool["parameters"]["type"], "object", "{}", tool["name"]);
    }
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for expected in [
        "list_files",
        "read_file",
        "write_file",
        "edit_file",
        "insert_at_line",
        "replace_lines",
        "search_file",
        "grep_files",
        "get_ast_outline",
        "execute_cmd",
        "execute_task",
        "show_file_to_user",
    ] {
        assert!(names.contains(&expected), "{expected} not in {names:?}");
    }
    let read = tools.iter().find(|t| t["name"] == "read_file").unwrap();
    assert_eq!(read["category"], "filesystem");
    assert_eq!(read["source"], "builtin");

    let human = sb.run(&["tools"]);
    assert!(human.status.success());
    assert!(text(&human.stdout).contains("read_file"));
}

/// What the model is offered stays byte for byte what it was unless a tool changes, so
/// providers' prompt caches keep hitting: `skald tools --json` is compared with the
/// reviewed copy in `tests/it/tools.golden.json`. When a change is meant, run this test
/// with `SKALD_BLESS=1` to rewrite the copy, and review its diff.
#[test]
fn tool_definitions_are_byte_stable() {
    let sb = Sandbox::new();
    let out = sb.run(&["tools", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let now = text(&out.stdout);
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/tools.golden.json");
    if std::env::var_os("SKALD_BLESS").is_some() {
        std::fs::write(&golden, &now).unwrap();
        return;
    }
    let reviewed = std::fs::read_to_string(&golden).unwrap();
    if now != reviewed {
        let (now_lines, reviewed_lines): (Vec<&str>, Vec<&str>) =
            (now.lines().collect(), reviewed.lines().collect());
        let first = now_lines
            .iter()
            .zip(&reviewed_lines)
            .position(|(a, b)| a != b)
            .unwrap_or(now_lines.len().min(reviewed_lines.len()));
        let around = |lines: &[&str]| {
            lines[first.saturating_sub(3)..(first + 4).min(lines.len())].join("\n")
        };
        panic!(
            "the tool definitions changed at line {}; if that is meant, rerun with \
             SKALD_BLESS=1 and review the diff of {}.\nnow:\n{}\nreviewed:\n{}",
            first + 1,
            golden.display(),
            around(&now_lines),
            around(&reviewed_lines)
        );
    }
}

#[test]
fn tool_runs_end_to_end_and_exits_zero() {
    let sb = Sandbox::new();
    let out = sb.run(&["tool", "read_file", "--args", r#"{"path": "hello.txt"}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "     1\thello\n     2\tworld\n");

    // --cwd decides where relative paths resolve.
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("hello.txt"), "elsewhere\n").unwrap();
    let out = sb.run(&[
        "tool",
        "read_file",
        "--args",
        r#"{"path": "hello.txt"}"#,
        "--cwd",
        other.path().to_str().unwrap(),
    ]);
    assert_eq!(text(&out.stdout), "     1\telsewhere\n");

    // Arguments from stdin.
    let mut child = sb
        .cmd(&["tool", "write_file", "--args", "-", "--approve"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"path": "new/file.txt", "content": "made by skald\n"}"#)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(sb.work.path().join("new/file.txt")).unwrap(),
        "made by skald\n"
    );
}

#[test]
fn a_failing_tool_exits_one_with_the_message_on_stderr() {
    let sb = Sandbox::new();
    let out = sb.run(&["tool", "read_file", "--args", r#"{"path": "missing.txt"}"#]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    assert!(err.starts_with("error: cannot read "), "{err}");
    assert!(
        err.contains("missing.txt: no such file or directory"),
        "{err}"
    );
}

#[test]
fn usage_errors_exit_two_and_say_what_is_wrong() {
    let sb = Sandbox::new();
    let cases: &[(&[&str], &str)] = &[
        (&["tool", "no_such_tool"], "unknown tool `no_such_tool`"),
        (
            &["tool", "read_fil", "--args", "{}"],
            "did you mean read_file",
        ),
        (
            &["tool", "read_file", "--args", "{not json"],
            "--args is not valid JSON",
        ),
        (
            &["tool", "read_file", "--args", "[]"],
            "must be a JSON object",
        ),
        (
            &["tool", "read_file", "--args", "{}"],
            "\"path\" is a required property",
        ),
        (
            &[
                "tool",
                "read_file",
                "--args",
                r#"{"path": "a", "limit": 99999}"#,
            ],
            "argument `limit`",
        ),
        (
            &["tool", "read_file", "--args", r#"{"path": "a", "pth": 1}"#],
            "pth",
        ),
        (
            &[
                "tool",
                "read_file",
                "--args",
                r#"{"path": "a"}"#,
                "--cwd",
                "/no/such/dir",
            ],
            "working directory /no/such/dir",
        ),
        (
            &["tool", "write_todos", "--args", "{}"],
            "inside agent turns",
        ),
    ];
    for (args, expected) in cases {
        let out = sb.run(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        let err = text(&out.stderr);
        assert!(
            err.contains(expected),
            "{args:?}: expected `{expected}` in `{err}`"
        );
    }
    // clap's own usage errors use the same code.
    assert_eq!(sb.run(&["tool"]).status.code(), Some(2));
    assert_eq!(sb.run(&["no-such-command"]).status.code(), Some(2));
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_a_running_tool_and_exits_130() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;

    let sb = Sandbox::new();
    let pidfile = sb.work.path().join("sleep.pid");
    let command = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
    let args = serde_json::json!({ "command": command }).to_string();
    let child = sb
        .cmd(&["tool", "execute_cmd", "--args", &args, "--approve"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !pidfile.exists() || std::fs::read_to_string(&pidfile).unwrap().trim().is_empty() {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let grandchild: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("cancelled"));
    // The sleep in the command's process group was killed with it.
    assert!(
        wait_gone(grandchild),
        "grandchild {grandchild} survived Ctrl-C"
    );
}

#[cfg(target_os = "linux")]
fn wait_gone(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat)
                if stat
                    .rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with('Z')) =>
            {
                return true;
            }
            Ok(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    false
}

#[cfg(all(unix, not(target_os = "linux")))]
fn wait_gone(_pid: i32) -> bool {
    true
}

#[test]
fn provider_keys_never_reach_a_shell_command() {
    let sb = Sandbox::new();
    let out = sb
        .cmd(&[
            "tool",
            "execute_cmd",
            "--args",
            r#"{"command": "echo \"[$OPENAI_API_KEY][$ANTHROPIC_API_KEY][$HARMLESS]\""}"#,
            "--approve",
        ])
        .env("OPENAI_API_KEY", "sk-must-not-leak")
        .env("ANTHROPIC_API_KEY", "sk-ant-must-not-leak")
        .env("HARMLESS", "kept")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("[][][kept]"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn version_and_doctor() {
    let sb = Sandbox::new();
    let out = sb.run(&["version"]);
    assert!(out.status.success());
    assert!(text(&out.stdout).starts_with(&format!("skald {}", env!("CARGO_PKG_VERSION"))));

    let out = sb.run(&["doctor", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let checks: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let db = checks.iter().find(|c| c["name"] == "database").unwrap();
    assert_eq!(db["status"], "ok");
    // The first run created the data directory with its commented config and the store.
    assert!(sb.data.path().join("config.toml").is_file());
    assert!(sb.data.path().join("skald.db").is_file());
    assert!(Path::new(&sb.data.path().join("logs")).is_dir());
}

#[test]
fn a_broken_config_is_reported_not_ignored() {
    let sb = Sandbox::new();
    std::fs::write(sb.data.path().join("config.toml"), "[log]\nlevel = 5\n").unwrap();
    let out = sb.run(&["tools"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("config.toml is not valid"), "{err}");
}

/// The README's example, as written: `skald rules add … --action allow` with no
/// `--priority` must let the command run (it used to land at 100, behind the seeded
/// `require execute_cmd` at 20), and a deny still wins over it.
#[test]
fn the_readmes_allow_rule_works_at_its_default_priority() {
    let sb = Sandbox::new();
    let add = |extra: &[&str]| {
        let mut args = vec!["rules", "add", "--tool", "execute_cmd"];
        args.extend_from_slice(extra);
        let out = sb.run(&args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    };
    add(&["--command", "echo", "--action", "allow"]);
    let out = sb.run(&[
        "tool",
        "execute_cmd",
        "--args",
        r#"{"command": "echo allowed"}"#,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("allowed"));
    // Still nothing smuggled behind it.
    let out = sb.run(&[
        "tool",
        "execute_cmd",
        "--args",
        r#"{"command": "echo x #'\ntouch pwned #'"}"#,
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(!sb.work.path().join("pwned").exists());
    add(&["--command", "echo denied", "--action", "deny"]);
    let out = sb.run(&[
        "tool",
        "execute_cmd",
        "--args",
        r#"{"command": "echo denied"}"#,
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("denied by rule #"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn the_approval_gate_applies_to_direct_runs() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.work.path().join("secrets")).unwrap();
    std::fs::write(sb.work.path().join("secrets/key"), "sk-secret").unwrap();
    // A deny cannot be approved away.
    for extra in [&[][..], &["--approve"][..]] {
        let mut args = vec!["tool", "read_file", "--args", r#"{"path": "secrets/key"}"#];
        args.extend_from_slice(extra);
        let out = sb.run(&args);
        assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("denied by rule #"),
            "{}",
            text(&out.stderr)
        );
        assert!(!text(&out.stdout).contains("sk-secret"));
    }
    // A shell command needs approval.
    let out = sb.run(&["tool", "execute_cmd", "--args", r#"{"command": "echo hi"}"#]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        text(&out.stderr).contains("needs approval"),
        "{}",
        text(&out.stderr)
    );
    // A rule allows `echo` and nothing smuggled behind it.
    let out = sb.run(&[
        "rules",
        "add",
        "--tool",
        "execute_cmd",
        "--command",
        "echo",
        "--action",
        "allow",
        "--priority",
        "5",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let id: i64 = text(&out.stdout)
        .trim()
        .trim_start_matches("added rule ")
        .parse()
        .unwrap();
    let out = sb.run(&["tool", "execute_cmd", "--args", r#"{"command": "echo hi"}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("hi"));
    let out = sb.run(&[
        "tool",
        "execute_cmd",
        "--args",
        r#"{"command": "echo hi; touch pwned"}"#,
    ]);
    assert_eq!(out.status.code(), Some(3));
    assert!(!sb.work.path().join("pwned").exists());
    let listed = sb.run(&["rules", "list"]);
    assert!(
        text(&listed.stdout).contains("command `echo`"),
        "{}",
        text(&listed.stdout)
    );
    assert_eq!(
        sb.run(&["rules", "rm", &id.to_string()]).status.code(),
        Some(0)
    );
    assert_eq!(
        sb.run(&["rules", "rm", &id.to_string()]).status.code(),
        Some(2)
    );
    let out = sb.run(&["tool", "execute_cmd", "--args", r#"{"command": "echo hi"}"#]);
    assert_eq!(out.status.code(), Some(3), "the rule is gone");
}

#[test]
fn inbox_list_and_answer() {
    let sb = Sandbox::new();
    let out = sb.run(&["inbox", "list"]);
    assert!(text(&out.stdout).contains("Nothing is waiting"));
    // An item as a waiting turn leaves it.
    let store = skald_store::Store::open(sb.data.path().join("skald.db")).unwrap();
    let s = store
        .create_session(&skald_store::NewSession::default())
        .unwrap();
    let item = store
        .add_inbox_item(&skald_store::NewInboxItem {
            session_id: s.id,
            kind: skald_store::InboxKind::Approval,
            tool_call_id: Some("c1".into()),
            agent_id: "main".into(),
            depth: 0,
            title: "execute_cmd `make deploy`".into(),
            payload: serde_json::json!({"reason": "rule #4 (require execute_cmd)"}),
        })
        .unwrap();
    let out = sb.run(&["inbox", "list"]);
    assert!(
        text(&out.stdout).contains("execute_cmd `make deploy`"),
        "{}",
        text(&out.stdout)
    );
    let out = sb.run(&[
        "inbox",
        "answer",
        &item.id.to_string(),
        "reject",
        "--note",
        "not on Fridays",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let it = store.get_inbox_item(item.id).unwrap();
    assert_eq!(it.status, skald_store::InboxStatus::Rejected);
    assert_eq!(it.answer.as_deref(), Some("not on Fridays"));
    // Answered once only; unknown ids are usage errors.
    assert_eq!(
        sb.run(&["inbox", "answer", &item.id.to_string(), "approve"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        sb.run(&["inbox", "answer", "999", "approve"]).status.code(),
        Some(2)
    );
    assert_eq!(
        sb.run(&["inbox", "answer", "1", "maybe"]).status.code(),
        Some(2)
    );
}

#[test]
fn inbox_always_stores_a_rule_only_when_this_answer_approved_the_item() {
    let sb = Sandbox::new();
    let store = skald_store::Store::open(sb.data.path().join("skald.db")).unwrap();
    let s = store
        .create_session(&skald_store::NewSession {
            working_dir: Some(sb.work.path().display().to_string()),
            ..skald_store::NewSession::default()
        })
        .unwrap();
    let item = |call: &str| {
        store
            .add_inbox_item(&skald_store::NewInboxItem {
                session_id: s.id,
                kind: skald_store::InboxKind::Approval,
                tool_call_id: Some(call.into()),
                agent_id: "main".into(),
                depth: 0,
                title: "execute_cmd `make deploy`".into(),
                payload: serde_json::json!({
                    "tool": "execute_cmd",
                    "arguments": {"command": "make deploy"},
                }),
            })
            .unwrap()
    };
    let rules_before = store.list_rules().unwrap().len();
    let answered = item("c1");
    store
        .resolve_inbox_item(answered.id, skald_store::InboxStatus::Rejected, Some(""))
        .unwrap();
    let out = sb.run(&[
        "inbox",
        "answer",
        &answered.id.to_string(),
        "approve",
        "--always",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(
        store.list_rules().unwrap().len(),
        rules_before,
        "a lost answer stores no rule"
    );
    let pending = item("c2");
    let out = sb.run(&[
        "inbox",
        "answer",
        &pending.id.to_string(),
        "approve",
        "--always",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("always allow execute_cmd `make deploy"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(store.list_rules().unwrap().len(), rules_before + 1);
    assert_eq!(
        store.get_inbox_item(pending.id).unwrap().status,
        skald_store::InboxStatus::Approved
    );
}

#[test]
fn a_denied_folder_stays_out_of_recursive_tools_run_on_its_parent() {
    let sb = Sandbox::new();
    let w = sb.work.path();
    std::fs::create_dir_all(w.join("private/deeper")).unwrap();
    std::fs::write(w.join("private/deeper/key.rs"), "fn hidden_token() {}\n").unwrap();
    std::fs::write(w.join("public.rs"), "fn hidden_token() {}\n").unwrap();
    let out = sb.run(&[
        "rules",
        "add",
        "--tool",
        "*",
        "--path",
        "private/*",
        "--working-dir",
        w.to_str().unwrap(),
        "--action",
        "deny",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for (tool, args) in [
        ("grep_files", r#"{"pattern": "hidden_token"}"#),
        ("list_files", r#"{"depth": 5}"#),
        ("get_ast_outline", r#"{"path": "."}"#),
    ] {
        let out = sb.run(&["tool", tool, "--args", args]);
        assert_eq!(out.status.code(), Some(0), "{tool}: {}", text(&out.stderr));
        let shown = text(&out.stdout);
        assert!(shown.contains("public.rs"), "{tool}: {shown}");
        assert!(
            !shown.contains("key.rs") && !shown.contains("deeper"),
            "{tool} reached into the denied folder: {shown}"
        );
    }
    // Naming the folder itself is denied by the gate.
    let out = sb.run(&["tool", "list_files", "--args", r#"{"path": "private"}"#]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
}
