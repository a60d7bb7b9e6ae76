//! The command sandbox with real processes (docs/sandbox.md): `skald tool execute_cmd
//! --sandbox …` and agent turns through `skald exec`, confined by the real
//! `skald-sandbox` helper (user and mount namespaces, Landlock, seccomp).

use crate::common::{SkaldCmd, events, result};
use skald_testkit::{ScriptedServer, answer, tool_call};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A data directory, a chat's folder, a home folder with keys, and a folder outside (one a
/// command sees: not in the private `/tmp`).
pub(crate) struct Fixture {
    pub(crate) data: tempfile::TempDir,
    pub(crate) work: tempfile::TempDir,
    pub(crate) home: tempfile::TempDir,
    pub(crate) outside: tempfile::TempDir,
}

impl Fixture {
    pub(crate) fn new() -> Fixture {
        let f = Fixture {
            data: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
            outside: skald_testkit::tempdir_seen_by_commands(),
        };
        for (dir, file, text) in [
            (f.work.path(), "secrets/api-key", "TOPSECRET-work"),
            (f.work.path(), "app/config/secrets/db", "TOPSECRET-nested"),
            (f.home.path(), ".ssh/id_ed25519", "TOPSECRET-ssh"),
            (f.data.path(), "notes.txt", "TOPSECRET-data"),
            (f.work.path(), "README", "readable"),
        ] {
            let path = dir.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        f
    }

    pub(crate) fn work(&self) -> PathBuf {
        self.work.path().canonicalize().unwrap()
    }

    pub(crate) fn outside(&self) -> PathBuf {
        self.outside.path().canonicalize().unwrap()
    }

    /// `skald` with this fixture's data directory and home folder.
    pub(crate) fn skald_cmd(&self) -> SkaldCmd {
        SkaldCmd::new(self.data.path()).env("HOME", self.home.path())
    }

    /// `skald_cmd` as a `Command`.
    pub(crate) fn skald(&self) -> Command {
        self.skald_cmd().cmd()
    }

    /// `skald exec --json EXTRA… PROMPT` in the chat's folder against the scripted `server`.
    pub(crate) fn exec(&self, server: &ScriptedServer, extra: &[&str], prompt: &str) -> Output {
        self.skald_cmd()
            .against(server)
            .cmd()
            .args(["exec", "--json"])
            .args(extra)
            .arg("--cwd")
            .arg(self.work.path())
            .arg(prompt)
            .output()
            .unwrap()
    }

    /// `skald tool execute_cmd --sandbox workspace-write --cwd WORK` without its arguments.
    pub(crate) fn tool(&self) -> Command {
        let mut c = self.skald();
        c.args([
            "tool",
            "execute_cmd",
            "--sandbox",
            "workspace-write",
            "--cwd",
        ])
        .arg(self.work.path());
        c
    }

    /// `skald tool execute_cmd --sandbox MODE` in the chat's folder, with no --approve.
    pub(crate) fn cmd(&self, mode: &str, extra: &[&str], command: &str) -> Output {
        let args = serde_json::json!({"command": command, "timeout": 20}).to_string();
        self.skald()
            .args(["tool", "execute_cmd", "--sandbox", mode, "--cwd"])
            .arg(self.work.path())
            .args(extra)
            .args(["--args", &args])
            .output()
            .unwrap()
    }

    /// `skald rules add ARGS…`, which must succeed.
    pub(crate) fn add_rule(&self, args: &[&str]) {
        let add = self
            .skald()
            .args(["rules", "add"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(add.status.code(), Some(0), "{}", out(&add));
    }
}

pub(crate) fn out(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn a_sandboxed_command_writes_its_folder_and_temp_but_not_home_or_other_folders() {
    let f = Fixture::new();
    let outside = f.outside();
    let command = format!(
        "echo in > inside.txt; echo x > \"$HOME/home.txt\"; echo x > {o}/o.txt; \
         mkdir {o}/d; touch \"$TMPDIR/t\" && echo tmp-ok; exit 0",
        o = outside.display()
    );
    let o = f.cmd("workspace-write", &[], &command);
    let text = out(&o);
    // It ran without --approve: no rule names it, so it runs in the sandbox.
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert_eq!(
        std::fs::read_to_string(f.work().join("inside.txt")).unwrap(),
        "in\n"
    );
    assert!(text.contains("tmp-ok"), "{text}");
    assert!(!f.home.path().join("home.txt").exists(), "{text}");
    assert!(!outside.join("o.txt").exists(), "{text}");
    assert!(!outside.join("d").exists(), "{text}");
    // The model is told what was refused, and how to ask for more.
    assert!(
        text.contains(&format!(
            "writing {} was refused",
            outside.join("o.txt").display()
        )),
        "{text}"
    );
    assert!(text.contains("sandbox_grant"), "{text}");

    // read-only: not even the chat's folder.
    let o = f.cmd(
        "read-only",
        &[],
        "echo x > ro.txt; touch \"$TMPDIR/t\" && echo tmp-ok",
    );
    assert!(!f.work().join("ro.txt").exists(), "{}", out(&o));
    assert!(out(&o).contains("tmp-ok"), "{}", out(&o));
}

#[test]
fn a_sandboxed_command_cannot_read_secrets_keys_skalds_data_or_skalds_environment() {
    let f = Fixture::new();
    let data = f.data.path().canonicalize().unwrap();
    let command = format!(
        "read -r _ _ _ pp _ < /proc/self/stat; cat secrets/api-key; cat app/config/secrets/db; cat \"$HOME/.ssh/id_ed25519\"; \
         cat {data}/notes.txt; ls {data}; cat /proc/$pp/environ; cat /proc/$pp/mem; \
         kill -0 $pp && echo signalled; cat README",
        data = data.display()
    );
    let o = f
        .tool()
        .env("SKALD_TEST_MARK", "TOPSECRET-env")
        .args([
            "--args",
            &serde_json::json!({ "command": command }).to_string(),
        ])
        .output()
        .unwrap();
    let text = out(&o);
    // The command itself ran and read what is not hidden.
    assert!(text.contains("readable"), "{text}");
    for secret in [
        "TOPSECRET-work",
        "TOPSECRET-nested",
        "TOPSECRET-ssh",
        "TOPSECRET-data",
        "skald.db",
    ] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
    // Its parent is `skald`: its environment (with the mark) and memory stay closed, and
    // it cannot be signalled from inside.
    assert!(text.contains("environ: Permission denied"), "{text}");
    assert!(!text.contains("signalled"), "{text}");
    assert!(
        text.contains("processes outside the sandbox are closed"),
        "refusals named: {text}"
    );
}

#[test]
fn a_sandboxed_command_cannot_reach_skald_through_the_spawner_that_started_it() {
    let f = Fixture::new();
    // The command's parent is the sandbox's spawner; Skald is the spawner's parent.
    let command = "read -r _ _ _ pp _ < /proc/self/stat; sk=$(awk '/^PPid/{print $2}' /proc/$pp/status); echo \"skald=$sk\"; \
                   cat /proc/$sk/environ; cat /proc/$sk/mem; cat /proc/$pp/environ; \
                   kill -0 $sk && echo signalled-skald; kill -0 $pp && echo signalled-spawner; \
                   exit 0";
    let child = f
        .tool()
        .env("SKALD_TEST_MARK", "TOPSECRET-env")
        .args([
            "--args",
            &serde_json::json!({ "command": command }).to_string(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    let text = out(&o);
    assert!(text.contains(&format!("skald={pid}")), "{text}");
    assert!(!text.contains("TOPSECRET-env"), "{text}");
    assert!(!text.contains("signalled"), "{text}");
    assert_eq!(
        text.matches("environ: Permission denied").count(),
        2,
        "{text}"
    );
    assert!(text.contains("mem: Permission denied"), "{text}");
}

#[test]
fn the_network_is_off_in_the_sandbox_unless_it_is_allowed() {
    let f = Fixture::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let connect = format!(
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 5); \
         print('connected')\""
    );
    let o = f.cmd("workspace-write", &[], &connect);
    let text = out(&o);
    assert!(!text.contains("connected\n"), "{text}");
    assert!(text.contains("a network connection was refused"), "{text}");
    assert!(listener.accept().is_err(), "nothing reached the listener");
    // UDP and other families are refused too (seccomp), not only TCP (Landlock).
    let udp = "python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM); print('udp-open')\"";
    assert!(!out(&f.cmd("workspace-write", &[], udp)).contains("udp-open"));

    let o = f.cmd("workspace-write", &["--network"], &connect);
    let text = out(&o);
    assert!(text.contains("connected"), "{text}");
    listener.set_nonblocking(false).unwrap();
    assert!(listener.accept().is_ok());

    // An allow rule can give the commands it allows the network; others stay without.
    f.add_rule(&[
        "--tool",
        "execute_cmd",
        "--command",
        "python3",
        "--action",
        "allow",
        "--network",
    ]);
    let o = f.cmd("workspace-write", &[], &connect);
    assert!(out(&o).contains("connected"), "{}", out(&o));
    assert!(listener.accept().is_ok());
    let by_sh = format!("sh -c \"{}\"", connect.replace('"', "\\\""));
    let o = f.cmd("workspace-write", &[], &by_sh);
    assert!(!out(&o).contains("connected\n"), "{}", out(&o));
    // --network goes only with an allow rule for commands.
    let bad = f
        .skald()
        .args([
            "rules",
            "add",
            "--tool",
            "read_file",
            "--action",
            "allow",
            "--network",
        ])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "{}", out(&bad));
}

#[test]
fn a_rule_allowed_command_that_does_more_than_its_name_says_is_still_fenced() {
    let f = Fixture::new();
    // The user allowed python3 scripts; this one is a writer in disguise. However the
    // matcher reads a line, the sandbox decides what it can write.
    f.add_rule(&[
        "--tool",
        "execute_cmd",
        "--command",
        "python3",
        "--action",
        "allow",
    ]);
    let target = f.outside().join("pwned");
    let command = format!(
        "python3 -c \"open('{}', 'w').write('x')\"",
        target.display()
    );
    let o = f.cmd("workspace-write", &[], &command);
    assert!(!target.exists(), "{}", out(&o));
    assert!(out(&o).contains("PermissionError"), "{}", out(&o));
}

#[test]
fn a_timed_out_or_stopped_sandboxed_command_dies_with_its_whole_group() {
    let f = Fixture::new();
    // The pid as Skald sees it: `$!` counts in the command's own PID namespace.
    let command =
        "sh -c 'read -r p _ < /proc/self/stat; echo $p > bg.pid; exec sleep 300' & sleep 300";
    let args = serde_json::json!({"command": command, "timeout": 2}).to_string();
    let o = f.tool().args(["--args", &args]).output().unwrap();
    assert!(out(&o).contains("timed out"), "{}", out(&o));
    let pid = read_pid(&f.work().join("bg.pid"));
    assert!(gone(pid), "background process {pid} survived the timeout");

    // Stopped: Ctrl-C to `skald tool` is what /stop is to a chat (the call is cancelled).
    std::fs::remove_file(f.work().join("bg.pid")).unwrap();
    let args = serde_json::json!({"command": command, "timeout": 120}).to_string();
    let mut child = f
        .tool()
        .args(["--args", &args])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid_file = f.work().join("bg.pid");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !pid_file.exists()
        || std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .is_empty()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the command never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let pid = read_pid(&pid_file);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    child.wait().unwrap();
    assert!(gone(pid), "background process {pid} survived the stop");
}

fn read_pid(path: &Path) -> i32 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Whether `pid` is gone (or a zombie nobody waits for), within a few seconds.
fn gone(pid: i32) -> bool {
    for _ in 0..100 {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat) if stat.contains(") Z ") => return true,
            Ok(_) => std::thread::sleep(std::time::Duration::from_millis(50)),
        }
    }
    false
}

#[test]
fn where_the_sandbox_cannot_start_every_command_asks_and_says_why() {
    let f = Fixture::new();
    // A helper that fails the way a kernel without user namespaces makes it fail.
    let fake = f.outside().join("skald-sandbox");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'skald-sandbox: cannot create a user namespace (EPERM)' >&2\nexit 125\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = |extra: &[&str]| {
        let args = serde_json::json!({"command": "echo ran > ran.txt"}).to_string();
        f.tool()
            .env("SKALD_SANDBOX_HELPER", &fake)
            .args(extra)
            .args(["--args", &args])
            .output()
            .unwrap()
    };
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(3), "{}", out(&o));
    assert!(!f.work().join("ran.txt").exists());
    // Approved, it runs as the user, and its result says it was not sandboxed and why.
    let o = run(&["--approve"]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert!(f.work().join("ran.txt").exists());
    assert!(
        out(&o).contains("[not sandboxed: the sandbox (workspace-write) is not available here (cannot create a user namespace (EPERM))"),
        "{}",
        out(&o)
    );
}

/// An agent's turn in the default mode: its command runs without asking, fenced; asking
/// for more is an approval that names it; `--sandbox off` asks as before.
#[test]
fn an_agents_commands_run_sandboxed_by_default_and_asking_for_more_asks() {
    let f = Fixture::new();
    let outside = f.outside();
    let grant = serde_json::json!({
        "command": format!("echo more > {}/granted.txt", outside.display()),
        "sandbox_grant": {"write": [outside.display().to_string()], "reason": "the report goes there"},
    })
    .to_string();
    let server = ScriptedServer::new(vec![
        tool_call(
            "c1",
            "execute_cmd",
            &serde_json::json!({"command": format!("touch made.txt; touch {}/no.txt", outside.display())}).to_string(),
        ),
        tool_call("c2", "execute_cmd", &grant),
        answer("Done."),
    ]);
    let o = f.exec(&server, &[], "make the files");
    let evs = events(&String::from_utf8_lossy(&o.stdout));
    assert!(f.work().join("made.txt").exists(), "{}", out(&o));
    assert!(!outside.join("no.txt").exists());
    let first = result(&evs, "c1");
    assert!(first.contains("was refused"), "{first}");
    // The grant needs a yes, and `--approve never` gives none: it did not run.
    let second = evs
        .iter()
        .find(|e| e["tool_call_id"] == "c2" && e["type"] == "tool_rejected")
        .map(|e| e["reason"].as_str().unwrap().to_string())
        .unwrap_or_else(|| panic!("c2 was not rejected: {evs:?}"));
    assert!(
        second.contains("needs approval")
            && second.contains(&format!("also write {}", outside.display())),
        "{second}"
    );
    assert!(!outside.join("granted.txt").exists());

    // With --approve all the grant is given, and only the granted folder opens.
    let server = ScriptedServer::new(vec![
        tool_call("c2", "execute_cmd", &grant),
        answer("Done."),
    ]);
    let o = f.exec(&server, &["--approve", "all"], "again");
    assert!(outside.join("granted.txt").exists(), "{}", out(&o));

    // --sandbox off: the command asks, as it did before there was a sandbox.
    let server = ScriptedServer::new(vec![
        tool_call("c1", "execute_cmd", r#"{"command": "touch off.txt"}"#),
        answer("Done."),
    ]);
    let o = f.exec(&server, &["--sandbox", "off"], "touch it");
    assert!(!f.work().join("off.txt").exists(), "{}", out(&o));
}
