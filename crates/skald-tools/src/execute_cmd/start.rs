//! How a command starts (through the sandbox's spawner, else its helper, else unconfined)
//! and ends: its process group, killed whole, and its exit status in words.

use super::SECRET_ENV;
use super::confined::Confined;
use crate::git_guard::GitGuard;
use skald_api::{CommandSandbox, ToolError};
use std::process::Stdio;
use std::time::Duration;

/// After the command exits (or is killed), how long its pipes may take to drain.
pub(super) const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);

/// A command started as `execute_cmd` starts it, with what must live as long as it runs.
pub(super) struct Running {
    /// Its sandbox (with its private temporary folder), `None` when it runs unconfined.
    pub(super) confined: Option<Confined>,
    pub(super) started: Started,
    /// What it may leave for git to run later, looked for when it is over.
    pub(super) redirects: Option<GitGuard>,
}

/// Starts the command: through the sandbox's spawner, else its helper, else unconfined.
pub(super) async fn start(
    command: &str,
    workdir: &std::path::Path,
    hidden_env: &[String],
    sandbox: &CommandSandbox,
) -> Result<Running, ToolError> {
    let mut confined = Confined::prepare(sandbox);
    // Looked at before the command starts: a `commondir` it writes at once must not count
    // as one that was there before it.
    let redirects = confined.as_ref().map(|c| GitGuard::before(&c.policy));
    let spawned = match &mut confined {
        Some(c) => c.launch(command, workdir, hidden_env).await?,
        None => None,
    };
    let started = match spawned {
        Some(s) => s,
        None => {
            let cmd = match &mut confined {
                Some(c) => {
                    c.own_tmp()?;
                    c.command(command)?
                }
                None => shell(command),
            };
            Started::child(cmd, workdir, hidden_env, confined.is_none())?
        }
    };
    Ok(Running {
        confined,
        started,
        redirects,
    })
}

/// `GitGuard::check` off the async workers (it walks the folders); its lines, if any.
pub(super) async fn guarded(guard: Option<std::sync::Arc<GitGuard>>) -> String {
    match guard {
        Some(g) => tokio::task::spawn_blocking(move || g.check())
            .await
            .unwrap_or_else(|e| {
                format!(
                    "\n[sandbox: looking for what the command left for git failed ({e}): check the repositories in this folder before running git there]"
                )
            }),
        None => String::new(),
    }
}

pub(super) type Pipe = Option<std::pin::Pin<Box<dyn tokio::io::AsyncRead + Send>>>;

/// A command that is running, however it was started: its group, its output and its end.
pub(super) struct Started {
    pub(super) pid: Option<u32>,
    pub(super) stdout: Pipe,
    pub(super) stderr: Pipe,
    pub(super) exit: std::pin::Pin<
        Box<dyn std::future::Future<Output = std::io::Result<std::process::ExitStatus>> + Send>,
    >,
}

impl Started {
    /// A child of this process: the shell, or the sandbox helper in its place.
    /// `own_group`: start it as the leader of a process group of its own. Not for the
    /// sandbox helper, which makes a session of its own (so that the command has no
    /// controlling terminal), and a group leader cannot.
    pub(super) fn child(
        mut cmd: tokio::process::Command,
        workdir: &std::path::Path,
        hidden_env: &[String],
        own_group: bool,
    ) -> Result<Started, ToolError> {
        // The keys Skald itself uses to reach model providers are not the command's
        // business, and anything the command prints ends up in front of the model.
        for key in SECRET_ENV {
            cmd.env_remove(key);
        }
        for key in hidden_env {
            cmd.env_remove(key);
        }
        cmd.current_dir(workdir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        if own_group {
            cmd.process_group(0);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| ToolError::failed(format!("cannot start the shell: {e}")))?;
        let stdout: Pipe = match child.stdout.take() {
            Some(p) => Some(Box::pin(p)),
            None => None,
        };
        let stderr: Pipe = match child.stderr.take() {
            Some(p) => Some(Box::pin(p)),
            None => None,
        };
        Ok(Started {
            pid: child.id(),
            stdout,
            stderr,
            // The child moves into the future: dropping it kills the process.
            exit: Box::pin(async move { child.wait().await }),
        })
    }
}

pub(super) fn shell(command: &str) -> tokio::process::Command {
    #[cfg(unix)]
    {
        let mut c = tokio::process::Command::new("sh");
        c.arg("-c").arg(command);
        c
    }
    #[cfg(not(unix))]
    {
        let mut c = tokio::process::Command::new("cmd");
        c.arg("/C").arg(command);
        c
    }
}

pub(super) fn describe_status(status: std::process::ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit code {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return format!("killed by signal {sig}");
        }
    }
    "exited".to_string()
}

pub(super) struct ProcessGroup(pub(super) Option<u32>);

impl ProcessGroup {
    pub(super) fn kill(&self) {
        #[cfg(unix)]
        if let Some(pid) = self.0.and_then(|p| i32::try_from(p).ok()) {
            use nix::sys::signal::{Signal, killpg};
            // ESRCH (nothing left in the group) is the normal case after a clean exit.
            let _ = killpg(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
        }
    }

    /// Kills the group's first process itself, which may have left its group (a `setpgid`
    /// of its own): sandboxed, it is its PID namespace's first process, whose end ends the
    /// rest. Only while it is known to run (at its timeout): once it has exited and been
    /// reaped, its pid may be another process's.
    pub(super) fn kill_leader(&self) {
        #[cfg(unix)]
        if let Some(pid) = self.0.and_then(|p| i32::try_from(p).ok()) {
            use nix::sys::signal::{Signal, kill};
            let _ = kill(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}
