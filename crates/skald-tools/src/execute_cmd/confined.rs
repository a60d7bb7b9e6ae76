//! A command about to run in the sandbox: its policy and private temporary folder, its
//! start through the sandbox's spawner or its helper, and what the sandbox refused.

use super::SECRET_ENV;
use super::start::{Pipe, ProcessGroup, Started};
use skald_api::{CommandSandbox, SandboxMode, ToolError};
use std::path::PathBuf;

/// Said under the output of a command that ran unconfined although a mode is set: it was
/// approved as one, and the model should know why nothing fenced it.
pub(super) fn unsandboxed_note(sandbox: &CommandSandbox) -> String {
    match sandbox {
        CommandSandbox::Unavailable { mode, why } => format!(
            "[not sandboxed: the sandbox ({mode}) is not available here ({why}); this command \
             ran as the user after approval]\n"
        ),
        _ => String::new(),
    }
}

/// A command about to run in the sandbox: its policy, to which its private temporary folder
/// is added once there is one (the spawner makes it; for the helper, `own_tmp` does), and
/// how to start it.
pub(super) struct Confined {
    pub(super) mode: SandboxMode,
    pub(super) helper: PathBuf,
    pub(super) policy: skald_sandbox::Policy,
    /// The private temporary folder, once there is one.
    tmp: Option<PathBuf>,
    /// The folder made here for the helper, removed when the command is done.
    _own_tmp: Option<tempfile::TempDir>,
}

impl Confined {
    pub(super) fn prepare(sandbox: &CommandSandbox) -> Option<Confined> {
        let CommandSandbox::On {
            mode,
            helper,
            policy,
        } = sandbox
        else {
            return None;
        };
        Some(Confined {
            mode: *mode,
            helper: helper.clone(),
            policy: policy.clone(),
            tmp: None,
            _own_tmp: None,
        })
    }

    /// Makes the private temporary folder for a start through the helper.
    pub(super) fn own_tmp(&mut self) -> Result<(), ToolError> {
        let tmp = tempfile::Builder::new()
            .prefix("skald-cmd-")
            .tempdir()
            .map_err(|e| {
                ToolError::failed(format!(
                    "cannot make the command's temporary folder, so it did not run: {e}"
                ))
            })?;
        let real = std::fs::canonicalize(tmp.path()).unwrap_or_else(|_| tmp.path().to_path_buf());
        self.policy.writable.push(real);
        self.tmp = Some(tmp.path().to_path_buf());
        self._own_tmp = Some(tmp);
        Ok(())
    }

    /// Starts the command through the sandbox's spawner (`skald_sandbox::spawner`), which
    /// costs a fraction of the helper's start. `None`: it cannot carry this command, nothing
    /// ran, and the caller starts it through the helper.
    #[cfg(target_os = "linux")]
    pub(super) async fn launch(
        &mut self,
        command: &str,
        workdir: &std::path::Path,
        hidden_env: &[String],
    ) -> Result<Option<Started>, ToolError> {
        use skald_sandbox::spawner::{self, Launch, LaunchError};
        let pipe = |what: &str| {
            spawner::pipe().map_err(|e| {
                ToolError::failed(format!(
                    "cannot make the command's {what} pipe, so it did not run: {e}"
                ))
            })
        };
        let (out_r, out_w) = pipe("output")?;
        let (err_r, err_w) = pipe("error")?;
        // The environment the helper would pass on: Skald's, less the keys. The spawner
        // adds the private temporary folder it made.
        let env: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os()
            .filter(|(k, _)| {
                let k = k.to_string_lossy();
                !SECRET_ENV.contains(&k.as_ref()) && !hidden_env.iter().any(|h| *h == k)
            })
            .collect();
        let launch = Launch {
            program: "sh".into(),
            args: vec!["-c".into(), command.into()],
            cwd: workdir.to_path_buf(),
            env,
            policy: self.policy.clone(),
            stdout: out_w.into(),
            stderr: err_w.into(),
        };
        // Handed over at once when this chat's spawner runs; starting one waits for its
        // answer (bounded), so that happens off the async threads.
        let requested = match spawner::try_request(&self.helper, launch, false) {
            Ok(r) => r,
            Err(launch) => {
                let helper = self.helper.clone();
                tokio::task::spawn_blocking(move || spawner::try_request(&helper, *launch, true))
                    .await
                    .map_err(|e| ToolError::failed(format!("starting the command failed: {e}")))?
                    .unwrap_or_else(|_| {
                        Err(LaunchError::Unsupported(
                            "no spawner was free to take the command".to_string(),
                        ))
                    })
            }
        };
        let refused = |why: String| {
            ToolError::failed(format!(
                "the sandbox could not start, so the command did not run: {why}"
            ))
        };
        let requested = match requested {
            Ok(r) => r,
            Err(LaunchError::Unsupported(why)) => {
                tracing::debug!(%why, "execute_cmd: the sandbox's spawner cannot carry this command; using the helper");
                return Ok(None);
            }
            Err(LaunchError::Refused(why)) => return Err(refused(why)),
        };
        // The next command's pipes and answer socket, while this one starts.
        spawner::make_ahead();
        // The answers are awaited here rather than on a blocking thread: each hand-over
        // between threads is a noticeable share of a short command's cost. Tokio is given
        // the sequenced-packet socket as a datagram one, which reads one packet per `recv`
        // all the same and, unlike a raw descriptor, needs no `unsafe` to register.
        let answers = requested
            .answers()
            .try_clone_to_owned()
            .and_then(|fd| {
                tokio::net::UnixDatagram::from_std(std::os::unix::net::UnixDatagram::from(fd))
            })
            .map_err(|e| refused(format!("cannot wait for the spawner's answer: {e}")))?;
        let first = match tokio::time::timeout(spawner::ANSWER_TIMEOUT, next_answer(&answers)).await
        {
            Ok(Ok(answer)) => answer,
            Ok(Err(e)) => return Err(refused(format!("the spawner could not be heard: {e}"))),
            Err(_) => {
                requested.gave_up();
                return Err(refused(format!(
                    "the sandbox's spawner did not confirm the command started within {} s",
                    spawner::ANSWER_TIMEOUT.as_secs()
                )));
            }
        };
        let launched = match requested.on_first(first) {
            Ok(l) => l,
            Err(LaunchError::Refused(why) | LaunchError::Unsupported(why)) => {
                return Err(refused(why));
            }
        };
        let reader = |r: std::io::PipeReader| -> Result<Pipe, ToolError> {
            let r = tokio::net::unix::pipe::Receiver::from_owned_fd(r.into())
                .map_err(|e| ToolError::failed(format!("cannot read the command's output: {e}")))?;
            Ok(Some(Box::pin(r)))
        };
        let pid = launched.pid;
        self.policy.writable.push(launched.tmp.clone());
        self.tmp = Some(launched.tmp.clone());
        let (stdout, stderr) = match (reader(out_r), reader(err_r)) {
            (Ok(o), Ok(e)) => (o, e),
            (Err(e), _) | (_, Err(e)) => {
                ProcessGroup(Some(pid)).kill();
                return Err(e);
            }
        };
        Ok(Some(Started {
            pid: Some(pid),
            stdout,
            stderr,
            exit: Box::pin(async move {
                // Holds the spawner for as long as the command runs.
                let _launched = launched;
                loop {
                    match next_answer(&answers).await? {
                        spawner::Answer::Exited(status) => return Ok(status),
                        spawner::Answer::Ended => {
                            return Err(std::io::Error::other(
                                "the sandbox's spawner stopped while the command ran",
                            ));
                        }
                        _ => continue,
                    }
                }
            }),
        }))
    }

    #[cfg(not(target_os = "linux"))]
    pub(super) async fn launch(
        &mut self,
        _: &str,
        _: &std::path::Path,
        _: &[String],
    ) -> Result<Option<Started>, ToolError> {
        Ok(None)
    }

    pub(super) fn command(&self, command: &str) -> Result<tokio::process::Command, ToolError> {
        let mut c = tokio::process::Command::new(&self.helper);
        c.args(self.helper_args(command)?);
        for (var, value) in self.env() {
            c.env(var, value);
        }
        Ok(c)
    }

    /// The helper's arguments: the policy, then `sh -c COMMAND`.
    pub(super) fn helper_args(&self, command: &str) -> Result<Vec<std::ffi::OsString>, ToolError> {
        skald_sandbox::command_args(
            &self.policy,
            std::ffi::OsStr::new("sh"),
            &["-c".into(), command.into()],
        )
        .map_err(|e| ToolError::failed(format!("{e}, so the command did not run")))
    }

    /// The command's private temporary folder, under every name programs look for.
    pub(super) fn env(&self) -> Vec<(&'static str, &std::path::Path)> {
        let Some(tmp) = &self.tmp else {
            return Vec::new();
        };
        skald_sandbox::TMP_VARS
            .into_iter()
            .map(|var| (var, tmp.as_path()))
            .collect()
    }

    /// The helper's own failure (it could not confine itself and ran nothing), if that is
    /// how it ended.
    pub(super) fn setup_failure(&self, code: Option<i32>, err: &str) -> Option<String> {
        if code != Some(skald_sandbox::SETUP_FAILED) {
            return None;
        }
        let first = err.lines().next()?;
        first
            .strip_prefix(skald_sandbox::PREFIX)
            .map(|why| why.trim().to_string())
    }

    /// What the sandbox refused, as far as the output shows, with what to do about it.
    pub(super) fn explain(&self, workdir: &std::path::Path, succeeded: bool, output: &str) -> String {
        let refused = skald_sandbox::explain(&self.policy, workdir, succeeded, output);
        if refused.is_empty() {
            return String::new();
        }
        let mut note = format!(
            "[sandbox {}, network {}: ",
            self.mode,
            if self.policy.network { "on" } else { "off" }
        );
        let lines: Vec<String> = refused.iter().map(|r| r.describe()).collect();
        note.push_str(&lines.join("; "));
        note.push_str(
            ". To run it with more, call execute_cmd again with `sandbox_grant` naming what it \
             needs (`write` folders, `network`, hidden `sockets`, or `unsandboxed`) and a `reason`: the user is asked.]\n",
        );
        note
    }
}

/// The spawner's next answer about a command (`skald_sandbox::spawner::Answer`).
#[cfg(target_os = "linux")]
pub(super) async fn next_answer(
    answers: &tokio::net::UnixDatagram,
) -> std::io::Result<skald_sandbox::spawner::Answer> {
    let mut packet = [0u8; skald_sandbox::spawner::ANSWER_MAX];
    let n = answers.recv(&mut packet).await?;
    skald_sandbox::spawner::answer_from(&packet[..n])
}
