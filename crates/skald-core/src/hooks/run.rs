//! Running one command hook: the event as JSON on stdin, in the chat's folder, killed
//! (with everything it started) at its timeout.

use super::HookSpec;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A hook's timeout when it names none (Claude Code's).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// The most of a hook's stdout and of its stderr that is read.
const MAX_OUTPUT: u64 = 64 * 1024;

/// What a hook answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Exit 0 with a JSON object on stdout.
    Json(Value),
    /// Exit 0 with other output (maybe none).
    Plain(String),
    /// Exit 2: stderr.
    Blocked(String),
    /// Another exit, or it could not run: why.
    Failed(String),
    /// Killed at its timeout (seconds).
    TimedOut(u64),
}

/// Where and how a hook runs.
pub struct Place<'a> {
    /// The chat's folder: the hook's working directory.
    pub cwd: &'a Path,
    /// `$SKALD_PROJECT_DIR`.
    pub project_dir: &'a Path,
    pub session_id: i64,
    /// Variables removed from its environment.
    pub hidden_env: &'a [String],
    /// The sandbox helper and policy it runs confined to, if any (a project's hooks in a
    /// sandboxed chat), with a temporary folder of its own added.
    pub sandbox: Option<&'a (PathBuf, skald_sandbox::Policy)>,
}

/// Runs `spec` with `payload` on stdin; returns its answer and how long it took.
pub async fn run(spec: &HookSpec, payload: &Value, at: Place<'_>) -> (Answer, Duration) {
    let started = Instant::now();
    let timeout = spec
        .timeout
        .filter(|s| *s > 0)
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_TIMEOUT);
    let answer = match tokio::time::timeout(timeout, run_inner(spec, payload, &at)).await {
        Ok(a) => a,
        // The child is killed with its group as `run_inner`'s future is dropped.
        Err(_) => Answer::TimedOut(timeout.as_secs()),
    };
    (answer, started.elapsed())
}

async fn run_inner(spec: &HookSpec, payload: &Value, at: &Place<'_>) -> Answer {
    // Held until the hook ends: a sandboxed hook's temporary folder.
    let mut _tmp = None;
    let mut cmd = match at.sandbox {
        None => shell(&spec.command),
        Some((helper, policy)) => match confined(helper, policy, &spec.command) {
            Ok((cmd, tmp)) => {
                _tmp = Some(tmp);
                cmd
            }
            Err(why) => return Answer::Failed(why),
        },
    };
    cmd.current_dir(at.cwd)
        .env("SKALD_PROJECT_DIR", at.project_dir)
        // Hooks written for Claude Code find the project the same way.
        .env("CLAUDE_PROJECT_DIR", at.project_dir)
        .env("SKALD_SESSION_ID", at.session_id.to_string())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    for name in at.hidden_env {
        cmd.env_remove(name);
    }
    // The sandbox helper makes a session of its own (whose group is its pid, which the
    // kill below names); it cannot if it already leads a group.
    #[cfg(unix)]
    if at.sandbox.is_none() {
        cmd.process_group(0);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Answer::Failed(format!("cannot start: {e}")),
    };
    let _group = GroupKill(child.id());
    if let Some(mut stdin) = child.stdin.take() {
        let body = payload.to_string();
        // A hook that does not read its input is fine: a closed pipe is not an error.
        let _ = stdin.write_all(body.as_bytes()).await;
    }
    let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
        return Answer::Failed("its output could not be read".to_string());
    };
    let (out, err) = tokio::join!(read_capped(out), read_capped(err));
    let status = match child.wait().await {
        Ok(s) => s,
        Err(e) => return Answer::Failed(format!("cannot wait for it: {e}")),
    };
    match status.code() {
        Some(0) => {
            let trimmed = out.trim();
            match serde_json::from_str::<Value>(trimmed) {
                Ok(v @ Value::Object(_)) => Answer::Json(v),
                _ => Answer::Plain(out),
            }
        }
        Some(2) => Answer::Blocked(err.trim().to_string()),
        Some(code) => Answer::Failed(format!(
            "exited with {code}{}",
            if err.trim().is_empty() {
                String::new()
            } else {
                format!(": {}", err.trim())
            }
        )),
        None => Answer::Failed("killed by a signal".to_string()),
    }
}

/// `sh -c command` through the sandbox helper, confined to `policy` with a temporary
/// folder of its own writable (and named in `$TMPDIR` and its kin), as a command is.
fn confined(
    helper: &Path,
    policy: &skald_sandbox::Policy,
    command: &str,
) -> Result<(tokio::process::Command, tempfile::TempDir), String> {
    let tmp = tempfile::Builder::new()
        .prefix("skald-hook-")
        .tempdir()
        .map_err(|e| format!("cannot make its temporary folder: {e}"))?;
    let tmp_path = std::fs::canonicalize(tmp.path()).unwrap_or_else(|_| tmp.path().to_path_buf());
    let mut policy = policy.clone();
    policy.writable.push(tmp_path.clone());
    let args = skald_sandbox::command_args(
        &policy,
        std::ffi::OsStr::new("sh"),
        &["-c".into(), command.into()],
    )?;
    let mut cmd = tokio::process::Command::new(helper);
    cmd.args(args);
    for var in skald_sandbox::TMP_VARS {
        cmd.env(var, &tmp_path);
    }
    Ok((cmd, tmp))
}

async fn read_capped(r: impl tokio::io::AsyncRead + Unpin) -> String {
    let mut buf = Vec::new();
    let _ = r.take(MAX_OUTPUT).read_to_end(&mut buf).await;
    String::from_utf8_lossy(&buf).into_owned()
}

#[cfg(unix)]
fn shell(command: &str) -> tokio::process::Command {
    let mut c = tokio::process::Command::new("sh");
    c.arg("-c").arg(command);
    c
}

#[cfg(not(unix))]
fn shell(command: &str) -> tokio::process::Command {
    let mut c = tokio::process::Command::new("cmd");
    c.arg("/C").arg(command);
    c
}

/// Kills the hook's process group when the run ends or is dropped at its timeout, so
/// what it started in the background does not outlive it.
struct GroupKill(Option<u32>);

impl Drop for GroupKill {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self.0.and_then(|p| i32::try_from(p).ok()) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}
