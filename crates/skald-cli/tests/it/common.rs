//! Helpers the CLI's end-to-end tests share: the `skald` command (`SkaldCmd`) against a
//! scripted model, its outputs, and the JSON events of `--json` runs.

use serde_json::Value;
use skald_testkit::ScriptedServer;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::Receiver;

/// The variables of a developer's own setup that would reach a test's `skald`: data
/// directory, providers, model choice.
const DEVELOPER_VARS: &[&str] = &[
    "SKALD_DATA_DIR",
    "SKALD_MODEL",
    "SKALD_FALLBACK_MODELS",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_API_KEY",
    "OLLAMA_HOST",
];

/// Points a `skald` command at DATA and keeps the developer's own setup out of it: none
/// of their provider, model or data-dir variables, secrets in the file vault — never their
/// keyring — and stdin closed.
fn isolate(c: &mut Command, data: &Path) {
    c.arg("--data-dir").arg(data);
    isolate_env(c, data);
}

/// `isolate`'s environment alone, for a command that runs `skald` itself (with the data
/// directory from `SKALD_DATA_DIR`).
fn isolate_env(c: &mut Command, data: &Path) {
    for var in DEVELOPER_VARS {
        c.env_remove(var);
    }
    // The developer's own AGENTS.md (~/.config/skald) stays out of the test's prompts.
    c.env("XDG_CONFIG_HOME", data.join("user-config"));
    c.env("SKALD_SECRETS", "file").stdin(Stdio::null());
}

/// The API key `SkaldCmd::against` gives the scripted server (tests that check what a
/// command may see look for it).
const TEST_KEY: &str = "sk-test-provider-key";

/// The `skald` command of a test: built from a data directory, isolated from the
/// developer's setup (`isolate`), with no provider unless `against` or `env` names one.
/// `cmd` hands over the `Command` (to add arguments, pipe stdin, spawn); `exec_json` and
/// `spawn_exec_json` run `skald exec --json` themselves.
pub struct SkaldCmd(Command);

impl SkaldCmd {
    /// `skald --data-dir DATA`, isolated.
    pub fn new(data: &Path) -> SkaldCmd {
        SkaldCmd::isolating(Command::new(env!("CARGO_BIN_EXE_skald")), data)
    }

    /// `program` — another copy of the binary, or a wrapper that runs it — given
    /// `--data-dir DATA` and isolated as `new` is.
    pub fn isolating(mut program: Command, data: &Path) -> SkaldCmd {
        isolate(&mut program, data);
        SkaldCmd(program)
    }

    /// `program`, which starts `skald` itself, with the isolated environment alone (no
    /// `--data-dir`: the data directory is the program's to pass on).
    pub fn runner(mut program: Command, data: &Path) -> SkaldCmd {
        isolate_env(&mut program, data);
        SkaldCmd(program)
    }

    /// The scripted OpenAI-protocol `server` is the model: `scripted-model`, key `TEST_KEY`.
    pub fn against(self, server: &ScriptedServer) -> SkaldCmd {
        self.against_url(&server.base_url)
    }

    /// `against` for an OpenAI-protocol server at `base_url` that is no `ScriptedServer`.
    pub fn against_url(self, base_url: &str) -> SkaldCmd {
        self.env("OPENAI_BASE_URL", base_url)
            .env("OPENAI_API_KEY", TEST_KEY)
            .env("SKALD_MODEL", "scripted-model")
    }

    /// Sets one variable: another provider's, a key or model other than `against`'s (a
    /// later value replaces an earlier one), or a setting such as `HOME`.
    pub fn env(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> SkaldCmd {
        self.0.env(key, value);
        self
    }

    /// The command, to finish and run.
    pub fn cmd(self) -> Command {
        self.0
    }

    /// `skald exec --json --cwd CWD EXTRA… PROMPT`, run to its end: the output and the
    /// events of its stdout.
    pub fn exec_json(self, cwd: &Path, extra: &[&str], prompt: &str) -> (Output, Vec<Value>) {
        let out = self.exec_cmd(cwd, extra, prompt).output().unwrap();
        let events = events(&String::from_utf8_lossy(&out.stdout));
        (out, events)
    }

    /// `exec_json` started: the child, and the events of its stdout as they come.
    pub fn spawn_exec_json(
        self,
        cwd: &Path,
        extra: &[&str],
        prompt: &str,
    ) -> (Child, Receiver<Value>) {
        spawn_json(self.exec_cmd(cwd, extra, prompt))
    }

    fn exec_cmd(self, cwd: &Path, extra: &[&str], prompt: &str) -> Command {
        let mut c = self.0;
        c.args(["exec", "--json", "--cwd"])
            .arg(cwd)
            .args(extra)
            .arg(prompt);
        c
    }
}

/// `skald --data-dir DATA`, isolated, with no provider: `SkaldCmd::new(data).cmd()`.
pub fn bare(data: &Path) -> Command {
    SkaldCmd::new(data).cmd()
}

/// `bare`, or with the scripted `server` as the model when given: `SkaldCmd` with
/// `against`, as a `Command`.
pub fn skald(data: &Path, server: Option<&ScriptedServer>) -> Command {
    let c = SkaldCmd::new(data);
    match server {
        Some(s) => c.against(s).cmd(),
        None => c.cmd(),
    }
}

/// The output of a run that must have succeeded.
pub fn ok(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The events of a `--json` run's output.
pub fn events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// `"tool_done <result>"` or `"tool_error <error>"` for a call.
pub fn result(events: &[Value], id: &str) -> String {
    events
        .iter()
        .find(|e| {
            e["tool_call_id"] == id && (e["type"] == "tool_done" || e["type"] == "tool_error")
        })
        .map(|e| {
            let text = e.get("result").or(e.get("error")).unwrap();
            format!("{} {}", e["type"].as_str().unwrap(), text.as_str().unwrap())
        })
        .unwrap_or_else(|| panic!("no result for {id}"))
}

/// The tool names offered in the scripted server's `i`-th request.
pub fn offered(server: &ScriptedServer, i: usize) -> Vec<String> {
    server.recorded()[i].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

/// Stores a secret with `skald secrets set`, the value on stdin.
pub fn set_secret(data: &Path, name: &str, value: &str) -> String {
    let mut set = skald(data, None)
        .args(["secrets", "set", name])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    set.stdin
        .take()
        .unwrap()
        .write_all(format!("{value}\n").as_bytes())
        .unwrap();
    ok(&set.wait_with_output().unwrap())
}

/// Starts `cmd` (a `--json` run) and streams the JSON lines of its stdout.
pub fn spawn_json(mut cmd: Command) -> (Child, Receiver<Value>) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str::<Value>(&line) {
                let _ = tx.send(v);
            }
        }
    });
    (child, rx)
}

/// Waits (a minute at most) for an event that `pred` accepts; returns every event seen up
/// to and including it.
pub fn wait_for(rx: &Receiver<Value>, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let ev = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("timed out; saw {seen:?}"));
        let hit = pred(&ev);
        seen.push(ev);
        if hit {
            return seen;
        }
    }
}

/// Anthropic's server-sent events, each named by its type.
pub fn anthropic_sse(events: &[serde_json::Value]) -> String {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

/// `git ARGS` in `dir` as a person would run it, none of the repository's hooks run (the
/// tests' own commits must not trip hooks planted to catch Skald's); its output.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.hooksPath=/nonexistent",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
