//! The sandbox's edges (docs/security.md, "The sandbox's edges"): what a sandboxed command,
//! which runs without asking, could reach around the sandbox rather than through it — the
//! terminal Skald runs in, descriptors Skald was handed, … Each test runs the real `skald`
//! and the real helper, and tries the neighbours of the case it is named for.

use crate::common::SkaldCmd;
use crate::sandbox::{Fixture, out};
use std::ffi::OsStr;
use std::io::Read;

const SKALD: &str = env!("CARGO_BIN_EXE_skald");

/// `skald tool execute_cmd --sandbox workspace-write` for `command`, as arguments after the
/// program (for a wrapper that runs it).
fn tool_args(f: &Fixture, command: &str) -> Vec<String> {
    let args = serde_json::json!({"command": command, "timeout": 30}).to_string();
    vec![
        "tool".into(),
        "execute_cmd".into(),
        "--sandbox".into(),
        "workspace-write".into(),
        "--cwd".into(),
        f.work().display().to_string(),
        "--args".into(),
        args,
    ]
}

#[test]
fn a_sandboxed_command_cannot_type_into_the_terminal_skald_runs_in() {
    use skald_testkit::terminal::{
        THEN_READ_THE_TERMINAL, TYPE_INTO_THE_TERMINAL, assert_nothing_typed, in_a_terminal,
    };
    let f = Fixture::new();
    // The attack of the report: a line queued into the terminal would run in the user's
    // shell, unconfined, once `skald` ends (here `read` takes it instead).
    let command = format!("python3 -c '{TYPE_INTO_THE_TERMINAL}'");
    let args = tool_args(&f, &command);
    let mut line: Vec<&OsStr> = vec!["-c".as_ref(), THEN_READ_THE_TERMINAL.as_ref()];
    line.push("bash".as_ref());
    line.push(SKALD.as_ref());
    line.extend(args.iter().map(OsStr::new));
    let o = SkaldCmd::runner(in_a_terminal("bash", &line), f.data.path())
        .env("SKALD_DATA_DIR", f.data.path())
        .env("HOME", f.home.path())
        .cmd()
        .output()
        .unwrap();
    let text = out(&o);
    // It ran in the sandbox, through the spawner, without asking.
    assert!(text.contains("tty-w"), "{text}");
    assert_nothing_typed(&text, true);
}

#[test]
fn a_sandboxed_command_cannot_use_descriptors_skald_inherited() {
    let f = Fixture::new();
    let file = f.outside().join("inherited");
    std::fs::write(&file, "").unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Whoever started Skald left a file (7) and a connected socket (8) open without
    // close-on-exec; the network is off and the file is outside the writable folders.
    let wrapper = format!(
        "import os, socket, sys\n\
         f = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)\n\
         s = socket.create_connection(('127.0.0.1', {port}))\n\
         os.dup2(f, 7); os.dup2(s.fileno(), 8)\n\
         os.execv(sys.argv[2], sys.argv[2:])\n"
    );
    let command = "echo leaked >&7; echo leaked >&8; ls /proc/self/fd; exit 0";
    let mut c = std::process::Command::new("python3");
    c.arg("-c").arg(&wrapper).arg(&file).arg(SKALD);
    c.args(tool_args(&f, command));
    let o = SkaldCmd::runner(c, f.data.path())
        .env("SKALD_DATA_DIR", f.data.path())
        .env("HOME", f.home.path())
        .cmd()
        .output()
        .unwrap();
    let text = out(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "", "{text}");
    let (mut conn, _) = listener.accept().unwrap();
    conn.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let mut got = String::new();
    // `skald` has ended, so its copy is closed: the read ends with what was sent, if any.
    let _ = conn.read_to_string(&mut got);
    assert_eq!(got, "", "{text}");
    assert!(text.contains("Bad file descriptor"), "{text}");
}

/// A tmux server of the user's, on a socket of its own name in tmux's folder in `/tmp`;
/// killed when dropped.
struct Tmux(String);

impl Tmux {
    fn start() -> Tmux {
        let name = format!("skald-test-{}-{}", std::process::id(), line!());
        let ok = std::process::Command::new("tmux")
            .args(["-L", &name, "new-session", "-d", "sleep 600"])
            .status()
            .unwrap()
            .success();
        assert!(ok, "tmux could not start a server");
        Tmux(name)
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .args(["-L", &self.0, "kill-server"])
            .status();
    }
}

/// Waits up to two seconds for `path` (tmux runs a new window's command a moment later).
fn appears(path: &std::path::Path) -> bool {
    for _ in 0..40 {
        if path.exists() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    false
}

#[test]
fn a_sandboxed_command_cannot_have_a_multiplexer_or_daemon_in_tmp_run_commands() {
    let f = Fixture::new();
    let tmux = Tmux::start();
    // A daemon of the user's listening in /var/tmp: it would act for whoever connects.
    let daemon_dir = tempfile::Builder::new()
        .prefix("skald-test-daemon-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let daemon = std::os::unix::net::UnixListener::bind(daemon_dir.path().join("d.sock")).unwrap();
    daemon.set_nonblocking(true).unwrap();
    let marker = f.outside().join("ran-outside");
    let command = format!(
        "tmux -L {t} new-window -d 'touch {m}'; tmux -L {t} run-shell 'touch {m}'; \
         tmux -L {t} send-keys 'touch {m}' Enter; \
         python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' \
         {d}/d.sock; ls /tmp; exit 0",
        t = tmux.0,
        m = marker.display(),
        d = daemon_dir.path().display()
    );
    let o = f.cmd("workspace-write", &[], &command);
    let text = out(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(
        !appears(&marker),
        "tmux ran a command for the sandbox: {text}"
    );
    assert!(daemon.accept().is_err(), "the daemon was reached: {text}");
    // The model is told why.
    assert!(text.contains("is out of sight"), "{text}");
    // The same lines unsandboxed do reach them: the test's servers work.
    let direct = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "tmux -L {} new-window -d 'touch {}'",
            tmux.0,
            marker.display()
        ))
        .status()
        .unwrap();
    assert!(direct.success());
    assert!(
        appears(&marker),
        "the test's tmux server does not run commands"
    );
}

#[test]
fn a_deny_rule_sees_through_the_programs_that_run_a_command() {
    let f = Fixture::new();
    f.add_rule(&[
        "--tool",
        "execute_cmd",
        "--command",
        "rm",
        "--action",
        "deny",
    ]);
    let victim = f.work().join("x");
    // Each of these deletes `x` when it runs (the commands run in the sandbox, without
    // asking, and the chat's folder is writable): the rule must stop every one.
    for line in [
        "env -S\"rm x\"",
        "env -vS \"rm x\"",
        "find x -exec rm x \\;",
        "find . -name x -execdir rm {} +",
        "flock L rm x",
        "flock L -c 'rm x'",
        "prlimit rm x",
        "setpriv rm x",
        "unshare rm x",
        "script -qc \"rm x\" /dev/null",
        "strace -o /dev/null rm x",
        "git -c alias.x='!rm x' x",
        "echo 'rm x' | sh",
        "watch -n 1 -g 'rm x'",
    ] {
        std::fs::write(&victim, "keep").unwrap();
        let o = f.cmd("workspace-write", &[], line);
        let text = out(&o);
        assert!(victim.exists(), "{line:?} ran rm: {text}");
        assert!(text.contains("denied"), "{line:?}: {text}");
    }
    // The same rule leaves what runs no `rm` alone.
    std::fs::write(&victim, "keep").unwrap();
    let o = f.cmd("workspace-write", &[], "flock L cat x");
    assert!(out(&o).contains("keep"), "{}", out(&o));
}

/// Item 8 of the report: a chat working in the home folder holds Skald's data directory.
/// Commands never see it (the sandbox hides it); the file tools now refuse it too — its
/// settings, logs, database and checkpoints — whatever `--approve all` says, and a walk of
/// the home folder skips it. Its skills stay readable, as `SKILL.md` asks.
#[test]
fn file_tools_do_not_reach_skalds_data_directory_from_a_chat_in_the_home_folder() {
    use crate::common::{events, ok, result, skald};
    use skald_testkit::{ScriptedServer, answer, tool_call};
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join(".local/share/skald");
    std::fs::create_dir_all(data.join("logs")).unwrap();
    std::fs::write(data.join("config.toml"), "# marker-in-config\n").unwrap();
    std::fs::write(data.join("logs/skald.2026-12-05.log"), "marker-in-log\n").unwrap();
    std::fs::write(home.path().join("notes.md"), "marker-in-notes\n").unwrap();
    std::os::unix::fs::symlink(&data, home.path().join("innocent")).unwrap();
    let calls = [
        (
            "c1",
            "read_file",
            r#"{"path": ".local/share/skald/config.toml"}"#,
        ),
        (
            "c2",
            "read_file",
            r#"{"path": "innocent/logs/skald.2026-12-05.log"}"#,
        ),
        ("c3", "list_files", r#"{"path": ".local/share/skald"}"#),
        ("c4", "grep_files", r#"{"pattern": "marker-in"}"#),
        (
            "c5",
            "search_file",
            r#"{"path": ".local/share/skald/config.toml", "query": "marker"}"#,
        ),
        (
            "c6",
            "write_file",
            r#"{"path": ".local/share/skald/config.toml", "content": "x"}"#,
        ),
        (
            "c7",
            "read_file",
            r#"{"path": ".local/share/skald/bundled/skills/code-review/SKILL.md"}"#,
        ),
    ];
    let mut replies: Vec<_> = calls
        .iter()
        .map(|(id, tool, args)| tool_call(id, tool, args))
        .collect();
    replies.push(answer("done"));
    let server = ScriptedServer::new(replies);
    let o = skald(&data, Some(&server))
        .args(["exec", "--json", "--approve", "all", "--cwd"])
        .arg(home.path())
        .arg("look around")
        .output()
        .unwrap();
    let evs = events(&ok(&o));
    // A refused call's reason, or a finished one's result.
    let said = |id: &str| {
        evs.iter()
            .find(|e| e["tool_call_id"] == id && e["type"] == "tool_rejected")
            .map(|e| e["reason"].to_string())
            .unwrap_or_else(|| result(&evs, id))
    };
    for id in ["c1", "c2", "c3", "c5", "c6"] {
        let r = said(id);
        assert!(r.contains("Skald's data directory"), "{id}: {r}");
        assert!(!r.contains("marker-in"), "{id}: {r}");
    }
    let grep = result(&evs, "c4");
    assert!(grep.contains("marker-in-notes"), "{grep}");
    assert!(
        !grep.contains("marker-in-config") && !grep.contains("marker-in-log"),
        "{grep}"
    );
    assert_eq!(
        std::fs::read_to_string(data.join("config.toml")).unwrap(),
        "# marker-in-config\n"
    );
    let skill = result(&evs, "c7");
    assert!(
        skill.starts_with("tool_done") && skill.contains("name: code-review"),
        "{skill}"
    );
}

/// Item 11 of the report: what an MCP server says — its tools' descriptions, its errors,
/// its stderr — reaches the terminal with its controls escaped, so a server cannot retitle
/// the terminal, clear it or hide a later prompt. Tried on every listing that prints it.
#[test]
fn strings_from_an_mcp_server_reach_the_terminal_escaped() {
    use crate::common::skald;
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/faulty_server.py");
    let data = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let o = skald(data.path(), None).args(args).output().unwrap();
        let all = [o.stdout.as_slice(), o.stderr.as_slice()].concat();
        (o.status.code(), String::from_utf8_lossy(&all).into_owned())
    };
    let clean = |what: &str, text: &str| {
        assert!(
            !text.contains('\x1b') && !text.contains('\x07'),
            "{what}: {text:?}"
        );
    };
    let (code, text) = run(&[
        "mcp",
        "add",
        "hostile",
        "--env",
        "FAULTY_HOSTILE=1",
        "--",
        "python3",
        script.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{text}");
    clean("add", &text);
    let (code, text) = run(&["mcp", "tools", "hostile"]);
    assert_eq!(code, Some(0), "{text}");
    clean("tools", &text);
    assert!(text.contains("\\x1b]0;owned\\x07"), "shown escaped: {text}");
    // A server that fails at start, saying so with controls on its stderr.
    let (code, text) = run(&[
        "mcp",
        "add",
        "broken",
        "--",
        "sh",
        "-c",
        "printf '\\033]0;owned\\007\\033[2Jgone\\n' >&2; exit 3",
    ]);
    clean("add broken", &text);
    let _ = code;
    for args in [
        &["mcp", "list"][..],
        &["mcp", "tools", "broken"][..],
        &["mcp", "list", "--json"][..],
    ] {
        let (_, text) = run(args);
        clean(&args.join(" "), &text);
    }
    let (_, text) = run(&["mcp", "tools", "broken"]);
    assert!(text.contains("gone"), "its output is still shown: {text}");
}

/// The neighbour of item 5 the review found: `.git/commondir` is a new file in the writable
/// `.git` naming another repository, whose hooks and configuration git then uses outside
/// the sandbox. Whatever a command leaves there — a file, a link, a folder, in the chat's
/// repository or one nested in it, or before it is killed at its timeout — is gone once
/// the command is, and the result says so; git still works.
#[test]
fn a_git_redirect_a_sandboxed_command_leaves_is_removed_and_said() {
    let f = Fixture::new();
    let w = f.work();
    let git = |dir: &std::path::Path, args: &[&str]| {
        std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-C"])
            .arg(dir)
            .args(args)
            .output()
            .unwrap()
    };
    let nested = w.join("libs/dep");
    std::fs::create_dir_all(&nested).unwrap();
    for repo in [w.as_path(), nested.as_path()] {
        assert!(git(repo, &["init", "-q"]).status.success());
        assert!(
            git(repo, &["commit", "-q", "--allow-empty", "-m", "one"])
                .status
                .success()
        );
    }
    // The repository it would send git to, with a hook that would run.
    let evil = "git init -q evil && printf '#!/bin/sh\\ntouch pwned\\n' > evil/.git/hooks/post-checkout \
                && chmod +x evil/.git/hooks/post-checkout";
    let gone = |at: &std::path::Path| at.join(".git/commondir").symlink_metadata().is_err();
    for line in [
        format!("{evil} && echo \"$PWD/evil/.git\" > .git/commondir"),
        "ln -s /tmp .git/commondir".to_string(),
        // Its first act, before Skald could look at the folder after starting it.
        "echo \"$PWD/elsewhere\" > .git/commondir".to_string(),
        "mkdir -p .git/commondir/x".to_string(),
        format!("{evil} && echo \"$PWD/evil/.git\" > libs/dep/.git/commondir"),
    ] {
        let o = f.cmd("workspace-write", &[], &line);
        let text = out(&o);
        assert!(gone(&w) && gone(&nested), "{line}: {text}");
        assert!(
            text.contains("commondir, which the command made"),
            "{line}: it is said: {text}"
        );
        let _ = std::fs::remove_dir_all(w.join("evil"));
    }
    // Made, then killed at its timeout.
    let args = serde_json::json!({
        "command": "echo /elsewhere > .git/commondir; sleep 30",
        "timeout": 1
    })
    .to_string();
    let o = f.tool().args(["--args", &args]).output().unwrap();
    let text = out(&o);
    assert!(text.contains("timed out") && gone(&w), "{text}");
    assert!(text.contains("commondir, which the command made"), "{text}");
    let status = git(&w, &["status"]);
    assert!(status.status.success(), "{status:?}");
    assert!(!w.join("pwned").exists());
}

/// Item 5 of the report, through `skald tool` and its spawner: in the chat's repository and
/// in a repository nested in its folder, git's hooks and configuration are read-only to a
/// sandboxed command (which runs without asking), as are a project's `.skald` scripts; the
/// refusal says why; git still commits.
#[test]
fn a_sandboxed_command_cannot_change_what_runs_later_outside_the_sandbox() {
    let f = Fixture::new();
    let w = f.work();
    let git = |dir: &std::path::Path, args: &[&str]| {
        let o = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-C"])
            .arg(dir)
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "git {args:?}: {o:?}");
    };
    let nested = w.join("libs/dep");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::create_dir_all(w.join(".skald")).unwrap();
    std::fs::write(w.join(".skald/fmt.sh"), "echo formatted\n").unwrap();
    for repo in [w.as_path(), nested.as_path()] {
        git(repo, &["init", "-q"]);
        git(repo, &["commit", "-q", "--allow-empty", "-m", "one"]);
        // A repository without a hooks folder gets an empty one, so none can be made.
        std::fs::remove_dir_all(repo.join(".git/hooks")).unwrap();
    }
    // A submodule's repository inside the chat's, with its own configuration, and its
    // checkout's `.git` file naming it.
    std::fs::create_dir_all(w.join(".git/modules/sub")).unwrap();
    std::fs::write(w.join(".git/modules/sub/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(w.join("sub")).unwrap();
    std::fs::write(w.join("sub/.git"), "gitdir: ../.git/modules/sub\n").unwrap();
    let configs: Vec<Vec<u8>> = [&w, &nested]
        .iter()
        .map(|r| std::fs::read(r.join(".git/config")).unwrap())
        .collect();
    for line in [
        "git config core.fsmonitor 'touch pwned'",
        "git -C libs/dep config core.hooksPath ../../evil",
        "mkdir -p .git/hooks && printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/post-checkout",
        "printf '#!/bin/sh\\ntouch pwned\\n' > libs/dep/.git/hooks/pre-commit",
        "echo 'touch pwned' >> .skald/fmt.sh",
        "mv .git .git-old",
        "git config -f .git/modules/sub/config core.fsmonitor 'touch pwned'",
        "echo 'gitdir: /elsewhere' > sub/.git",
    ] {
        let o = f.cmd("workspace-write", &[], line);
        let text = out(&o);
        for (repo, config) in [&w, &nested].iter().zip(&configs) {
            assert_eq!(
                &std::fs::read(repo.join(".git/config")).unwrap(),
                config,
                "{line}: {text}"
            );
            assert_eq!(
                std::fs::read_dir(repo.join(".git/hooks")).unwrap().count(),
                0,
                "{line}: {text}"
            );
        }
        assert_eq!(
            std::fs::read_to_string(w.join(".skald/fmt.sh")).unwrap(),
            "echo formatted\n",
            "{line}: {text}"
        );
        assert!(w.join(".git/HEAD").is_file(), "{line}: {text}");
        assert_eq!(
            std::fs::read_to_string(w.join(".git/modules/sub/config")).unwrap(),
            "[core]\n",
            "{line}: {text}"
        );
        assert_eq!(
            std::fs::read_to_string(w.join("sub/.git")).unwrap(),
            "gitdir: ../.git/modules/sub\n",
            "{line}: {text}"
        );
        assert!(
            text.contains("runs later outside the sandbox"),
            "{line}: the refusal is explained: {text}"
        );
    }
    // What an agent does in a repository still works.
    let o = f.cmd(
        "workspace-write",
        &[],
        "echo x > a && git add a && git -c user.name=t -c user.email=t@t commit -qm two \
         && git log --oneline | wc -l",
    );
    assert!(out(&o).contains('2'), "{}", out(&o));
    assert!(!w.join("pwned").exists());
}

/// Item 2's grant: a socket the sandbox hides (here the SSH agent's, as
/// `$SSH_AUTH_SOCK` names it; a docker socket is the same) is reached only by a call whose
/// `sandbox_grant` names it, and only once the person approves. Its neighbours: a hidden
/// folder or file that is not a socket, and a socket inside a folder hidden whole (Skald's
/// data), cannot be granted this way.
#[test]
fn a_hidden_socket_is_reached_only_through_an_approved_grant_that_names_it() {
    use std::io::Write;
    let f = Fixture::new();
    let sock = f.work().join("agent.sock");
    let listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            let _ = s.write_all(b"answered-by-the-agent\n");
        }
    });
    let inside_data = f.data.path().canonicalize().unwrap().join("inner.sock");
    let _inner = std::os::unix::net::UnixListener::bind(&inside_data).unwrap();
    let connect = |path: &std::path::Path| {
        format!(
            "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); \
             s.connect(\"{}\"); print(s.recv(99).decode())'",
            path.display()
        )
    };
    let run = |command: String, sockets: &[&std::path::Path], approve: bool| {
        let mut args = serde_json::json!({"command": command, "timeout": 20});
        if !sockets.is_empty() {
            let list: Vec<String> = sockets.iter().map(|p| p.display().to_string()).collect();
            args["sandbox_grant"] = serde_json::json!({"sockets": list, "reason": "it signs"});
        }
        let mut c = f.tool();
        c.env("SSH_AUTH_SOCK", &sock);
        if approve {
            c.arg("--approve");
        }
        c.args(["--args", &args.to_string()]).output().unwrap()
    };
    // Hidden from a sandboxed command, which ran without asking.
    let o = run(connect(&sock), &[], false);
    let text = out(&o);
    assert!(!text.contains("answered-by-the-agent"), "{text}");
    assert!(text.contains("exit code"), "it ran: {text}");
    // Named in a grant, it asks first: not approved, nothing ran.
    let o = run(connect(&sock), &[&sock], false);
    let text = out(&o);
    assert_eq!(o.status.code(), Some(3), "{text}");
    assert!(text.contains("reach the local socket"), "{text}");
    // Approved, that socket answers.
    let o = run(connect(&sock), &[&sock], true);
    let text = out(&o);
    assert!(text.contains("answered-by-the-agent"), "{text}");
    // What is not a socket, or a socket in a folder hidden whole, stays hidden.
    let ssh = f.home.path().canonicalize().unwrap().join(".ssh");
    for (named, why) in [
        (ssh.clone(), "is not a socket"),
        (ssh.join("id_ed25519"), "is not a socket"),
        (inside_data.clone(), "stays hidden whole"),
    ] {
        let o = run(connect(&named), &[&named], true);
        let text = out(&o);
        assert!(text.contains(why), "{}: {text}", named.display());
        assert!(!text.contains("TOPSECRET"), "{text}");
    }
}

/// Item 5's neighbour the attack review found: a repository a sandboxed command makes is
/// configuration it wrote, which git runs outside the sandbox — a plain `git status` in
/// the chat's repository runs a gitlinked repository's `core.fsmonitor`, and an editor
/// opens new repositories by itself. After the command such a repository runs nothing:
/// reached as a gitlink (also from a folder the walk skips, and through a `.git` file), at
/// the top of a folder, or by its hooks; a `.git/modules` repository cannot be written at
/// all. A plain `git init` keeps its configuration and is not mentioned.
#[test]
fn a_repository_a_sandboxed_command_makes_runs_nothing_for_git_outside() {
    let f = Fixture::new();
    let w = f.work();
    let git = |dir: &std::path::Path, args: &[&str]| {
        std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-C"])
            .arg(dir)
            .args(args)
            .output()
            .unwrap()
    };
    assert!(git(&w, &["init", "-q"]).status.success());
    assert!(
        git(&w, &["commit", "-q", "--allow-empty", "-m", "one"])
            .status
            .success()
    );
    let pwned = f.outside().join("pwned");
    let evil = |dir: &str| {
        format!(
            "git init -q {dir} && git -C {dir} -c user.name=t -c user.email=t@t commit -q \
             --allow-empty -m x && git -C {dir} config core.fsmonitor 'touch {p}; false' && \
             git -C {dir} config alias.st '!touch {p}' && \
             printf '#!/bin/sh\\ntouch {p}\\n' > {dir}/.git/hooks/post-checkout && \
             chmod +x {dir}/.git/hooks/post-checkout",
            p = pwned.display()
        )
    };
    for (line, repo) in [
        // The report's case: made, configured, and added as a gitlink.
        (
            format!("{} && git add sub", evil("sub")),
            w.join("sub/.git"),
        ),
        // In a folder the walk does not enter: found through the index.
        (
            format!("{} && git add node_modules/dep", evil("node_modules/dep")),
            w.join("node_modules/dep/.git"),
        ),
        // A new repository at the top of a folder, no gitlink (an editor opens it).
        (evil("fresh"), w.join("fresh/.git")),
        // A `.git` file sending git to a repository elsewhere in the folder.
        (
            format!(
                "{} && mkdir linked && git -C linked init -q 2>/dev/null; rm -rf linked/.git; \
                 echo \"gitdir: $PWD/store/.git\" > linked/.git",
                evil("store")
            ),
            w.join("store/.git"),
        ),
    ] {
        let o = f.cmd("workspace-write", &[], &line);
        let text = out(&o);
        assert!(text.contains("exit code 0"), "{line}: {text}");
        assert!(
            text.contains(&format!(
                "{} is a repository the command made",
                repo.display()
            )),
            "{line}: {text}"
        );
        // The person's git, outside the sandbox, in every place it could start.
        for dir in [
            w.clone(),
            repo.parent().unwrap().to_path_buf(),
            w.join("linked"),
        ] {
            if dir.exists() {
                let _ = git(&dir, &["status"]);
                let _ = git(&dir, &["st"]);
                let _ = git(&dir, &["checkout", "-q", "-b", "again"]);
            }
        }
        assert!(
            !pwned.exists(),
            "{line}: git ran what the command wrote: {text}"
        );
        assert!(repo.join("config.sandboxed").exists() || repo.is_file());
        let _ = git(
            &w,
            &[
                "rm",
                "-q",
                "--cached",
                "-r",
                "--ignore-unmatch",
                "sub",
                "node_modules",
            ],
        );
    }
    // A submodule's repository in `.git/modules` cannot be made at all.
    let o = f.cmd(
        "workspace-write",
        &[],
        "mkdir -p .git/modules/x && echo made",
    );
    let text = out(&o);
    assert!(!text.contains("\nmade"), "{text}");
    assert!(!w.join(".git/modules/x").exists(), "{text}");
    // What a plain `git init` writes runs nothing: it stays, unmentioned.
    let o = f.cmd("workspace-write", &[], "git init -q plain && echo ok");
    let text = out(&o);
    assert!(
        text.contains("ok") && !text.contains("plain/.git is a repository"),
        "{text}"
    );
    assert!(!w.join("plain/.git/config.sandboxed").exists());
}

/// The second attack review's ways to hide a repository from the check above, each of
/// which made the person's `git status` run what the command wrote: an index whose times
/// were set back, or that git's library cannot read (a split index), naming a gitlink
/// into a folder the walk skips; a folder laid out as a bare repository; a `.git` link to
/// one in a skipped folder; a configuration git's library could not take (a key with no
/// value); a `.git` file sending git to the command's own temporary folder; a
/// `config.worktree` in the chat's repository; and a folder too big to walk, which is said.
#[test]
fn a_repository_hidden_from_the_check_is_still_found_or_said() {
    let f = Fixture::new();
    let w = f.work();
    let git = |dir: &std::path::Path, args: &[&str]| {
        std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-C"])
            .arg(dir)
            .args(args)
            .output()
            .unwrap()
    };
    assert!(git(&w, &["init", "-q"]).status.success());
    assert!(
        git(&w, &["commit", "-q", "--allow-empty", "-m", "one"])
            .status
            .success()
    );
    assert!(
        git(&w, &["config", "extensions.worktreeConfig", "true"])
            .status
            .success()
    );
    let pwned = f.outside().join("pwned");
    let monitor = format!("touch {}; false", pwned.display());
    let evil = |dir: &str| {
        format!(
            "git init -q {dir} && git -C {dir} -c user.name=t -c user.email=t@t commit -q \
             --allow-empty -m x && git -C {dir} config core.fsmonitor '{monitor}'"
        )
    };
    // What the third review's cases write, kept beside the folder for the command to copy:
    // a configuration git's library reads as one harmless value where git reads a setting.
    std::fs::write(
        w.join("payload.cfg"),
        format!("[user]\n\tname = \"a\\\\\"; x\\\n[core] fsmonitor = \"{monitor}\"\n"),
    )
    .unwrap();
    // A repository that was there, whose folder the command will rename to make its own.
    assert!(git(&w, &["init", "-q", "known"]).status.success());
    let cases: Vec<(String, String, Vec<&str>)> = vec![
        (
            format!(
                "{} && git -C cfgdiff config --unset core.fsmonitor && \
                 cat payload.cfg >> cfgdiff/.git/config && git add cfgdiff",
                evil("cfgdiff")
            ),
            String::new(),
            vec!["", "cfgdiff"],
        ),
        (
            format!(
                "{} && mkdir -p \"app1/$(printf '.\\n_')\" && \
                 printf 'gitdir: .\\n_/../../node_modules/a/evil/.git\\n' > app1/.git && git add app1",
                evil("node_modules/a/evil")
            ),
            format!(
                "{} is a repository the command made",
                w.join("node_modules/a/evil/.git").display()
            ),
            vec!["", "app1"],
        ),
        (
            format!("mv known known.old && {} && git add known", evil("known")),
            format!(
                "{} is a repository the command made",
                w.join("known/.git").display()
            ),
            vec!["", "known"],
        ),
        (
            format!(
                "mkdir -p lay/o lay/refs && ln -s o lay/objects && echo 'ref: refs/heads/main' > \
                 lay/HEAD && printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = .\\n\\tfsmonitor = {monitor}\\n' \
                 > lay/config"
            ),
            format!(
                "{} is a repository the command made",
                w.join("lay").display()
            ),
            vec!["lay"],
        ),
        (
            format!(
                "{} && git add target/a && touch -d 2000-01-01 .git/index",
                evil("target/a")
            ),
            format!(
                "{} is a repository the command made",
                w.join("target/a/.git").display()
            ),
            vec![""],
        ),
        (
            format!(
                "{} && git add target/b && git update-index --split-index",
                evil("target/b")
            ),
            format!(
                "{} is a repository the command made",
                w.join("target/b/.git").display()
            ),
            vec![""],
        ),
        (
            format!(
                "mkdir -p tools/objects tools/refs tools/src && echo 'ref: refs/heads/main' > \
                 tools/HEAD && printf '[core]\\n\\tbare = false\\n\\tworktree = ..\\n\\tfsmonitor = {monitor}\\n' \
                 > tools/config"
            ),
            format!(
                "{} is a repository the command made",
                w.join("tools").display()
            ),
            vec!["tools", "tools/src"],
        ),
        (
            format!(
                "git init -q --bare target/g && git --git-dir=target/g config core.bare false && \
                 git --git-dir=target/g config core.fsmonitor '{monitor}' && mkdir linkapp && \
                 ln -s ../target/g linkapp/.git"
            ),
            format!(
                "{} is a repository the command made",
                w.join("target/g").display()
            ),
            vec!["linkapp"],
        ),
        (
            format!(
                "git init -q valueless && printf '[x]\\n\\tflag\\n[core]\\n\\tfsmonitor = {monitor}\\n' \
                 >> valueless/.git/config"
            ),
            format!(
                "{} is a repository the command made",
                w.join("valueless/.git").display()
            ),
            vec!["valueless"],
        ),
        (
            format!(
                "{} && mkdir away && echo \"gitdir: $TMPDIR/r/.git\" > away/.git",
                evil("$TMPDIR/r")
            ),
            format!("{} was made by the command", w.join("away/.git").display()),
            vec!["away"],
        ),
        (
            format!("printf '[core]\\n\\tfsmonitor = {monitor}\\n' > .git/config.worktree"),
            format!("removed {}", w.join(".git/config.worktree").display()),
            vec![""],
        ),
        (
            // The folder filled beforehand (below): making 50 001 files in the
            // sandbox takes longer than a loaded machine's command timeout.
            evil("z/y/x/deep"),
            "were not looked at".to_string(),
            vec![],
        ),
        // Last: an index that would hang a reader is said, not waited on.
        (
            "rm .git/index && mkfifo .git/index".to_string(),
            "it could not be read".to_string(),
            vec![],
        ),
    ];
    for (line, said, dirs) in cases {
        if line.contains("z/y/x/deep") {
            std::fs::create_dir(w.join("aaflood")).unwrap();
            for n in 0..50_001 {
                std::fs::write(w.join(format!("aaflood/{n}")), "").unwrap();
            }
        }
        let o = f.cmd("workspace-write", &[], &line);
        let text = out(&o);
        assert!(text.contains("exit code 0"), "{line}: {text}");
        assert!(text.contains(&said), "{line}: wanted {said:?} in {text}");
        for dir in dirs {
            let _ = git(&w.join(dir), &["status"]);
        }
        assert!(
            !pwned.exists(),
            "{line}: git ran what the command wrote: {text}"
        );
        let index = w.join(".git/index");
        if index.symlink_metadata().is_ok_and(|m| !m.is_file()) {
            std::fs::remove_file(&index).unwrap();
        }
        let _ = git(
            &w,
            &["rm", "-q", "--cached", "-r", "--ignore-unmatch", "target"],
        );
        let _ = std::fs::remove_dir_all(w.join("aaflood"));
    }
}

/// A folder granted inside the chat's folder, which one sandboxed command swaps for a link
/// to a folder outside, does not make the link's target writable for the next command:
/// the grant is the folder as it was given (stored canonical, never resolved again), and
/// the helper opens every writable folder with no link on its path.
#[test]
fn a_granted_folder_swapped_for_a_link_does_not_make_its_target_writable() {
    use skald_testkit::{ScriptedServer, answer, tool_call};
    let f = Fixture::new();
    let w = f.work();
    let outside = f.outside();
    std::fs::create_dir(w.join("out")).unwrap();
    let swap = format!(
        "mv out out.real && ln -s {} out && echo swapped",
        outside.display()
    );
    let write = format!(
        "echo pwned > out/x; echo pwned > {}/y; echo pwned > out.real/z; ls out.real",
        outside.display()
    );
    let server = ScriptedServer::new(vec![
        tool_call(
            "c1",
            "execute_cmd",
            &serde_json::json!({ "command": swap }).to_string(),
        ),
        tool_call(
            "c2",
            "execute_cmd",
            &serde_json::json!({ "command": write }).to_string(),
        ),
        answer("done"),
    ]);
    let grant = w.join("out").display().to_string();
    let o = f.exec(
        &server,
        &["--sandbox", "workspace-write", "--allow-write", &grant],
        "go",
    );
    let stdout = out(&o);
    assert!(stdout.contains("swapped"), "{stdout}");
    let theirs: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        theirs.is_empty(),
        "the link's target became writable: {theirs:?}"
    );
    // The chat's folder stays writable, the renamed grant with it.
    assert_eq!(
        std::fs::read_to_string(w.join("out.real/z")).unwrap(),
        "pwned\n"
    );
}

/// The chat's folder itself, inside a write grant, renamed away by a sandboxed command and
/// replaced with a link to a folder outside: the chat does not move there. The file tools
/// judge paths against the folder as it was stored (what is behind the link is outside,
/// and asks), and the next command cannot write behind the link.
#[test]
fn a_chats_folder_swapped_for_a_link_does_not_move_the_chat() {
    use skald_testkit::{ScriptedServer, answer, tool_call};
    let f = Fixture::new();
    let grant = f.work();
    let chat = grant.join("proj");
    std::fs::create_dir(&chat).unwrap();
    let outside = f.outside();
    std::fs::write(outside.join("secret.txt"), "OUTSIDE SECRET\n").unwrap();
    let swap = format!(
        "cd .. && mv proj proj.real && ln -s {} proj && echo swapped",
        outside.display()
    );
    let calls = [
        ("c1", "execute_cmd", serde_json::json!({ "command": swap })),
        ("c2", "read_file", serde_json::json!({"path": "secret.txt"})),
        (
            "c3",
            "write_file",
            serde_json::json!({"path": "data/pwned.txt", "content": "pwned"}),
        ),
        (
            "c4",
            "write_file",
            serde_json::json!({"path": "pwned.txt", "content": "pwned"}),
        ),
        (
            "c5",
            "execute_cmd",
            serde_json::json!({"command": format!(
                "echo pwned > sandbox-pwned.txt; echo pwned > {}/proj.real/inside.txt",
                grant.display()
            )}),
        ),
        ("c6", "list_files", serde_json::json!({})),
    ];
    let mut replies: Vec<_> = calls
        .iter()
        .map(|(id, tool, args)| tool_call(id, tool, &args.to_string()))
        .collect();
    replies.push(answer("done"));
    let server = ScriptedServer::new(replies);
    let o = f
        .skald_cmd()
        .against(&server)
        .cmd()
        .args([
            "exec",
            "--json",
            "--sandbox",
            "workspace-write",
            "--allow-write",
        ])
        .arg(&grant)
        .arg("--cwd")
        .arg(&chat)
        .arg("go")
        .output()
        .unwrap();
    let said = out(&o);
    assert!(said.contains("swapped"), "{said}");
    assert!(!said.contains("OUTSIDE SECRET"), "{said}");
    let theirs: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(theirs, ["secret.txt"], "{said}");
    // What the grant allows still works: the real folder, renamed, is inside it.
    assert_eq!(
        std::fs::read_to_string(grant.join("proj.real/inside.txt")).unwrap(),
        "pwned\n"
    );
}
