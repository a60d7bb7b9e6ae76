//! execute_cmd: run a shell command in its own process group, with a timeout, capturing
//! its output within a fixed budget.

use crate::fs::{self, in_range};
use crate::git_guard::GitGuard;
use serde::Deserialize;
use schemars::JsonSchema;
use skald_api::tool_args;
use serde_json::Value;
use skald_api::{ToolKind, 
    BoxToolFuture, CommandSandbox, SandboxMode, Tool, ToolCategory, ToolDescriptionLength,
    ToolError, ToolScope, tool_names as tn,
};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncReadExt;

pub struct ExecuteCmd;

// The arguments' doc comments are the descriptions the model reads.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// The shell command.
    command: String,
    /// Absolute directory to run in.
    workdir: Option<String>,
    /// Seconds before the command is killed (default 120).
    #[schemars(range(min = 1, max = MAX_TIMEOUT_SECS))]
    timeout: Option<u64>,
    /// Start it and return at once; it runs until it exits, check_process stops it, the chat is deleted or Skald ends.
    background: Option<bool>,
    /// Only after the sandbox refused something this command needs: what to run it with beyond the sandbox. The user is asked first.
    sandbox_grant: Option<GrantArgs>,
}

/// What `sandbox_grant` may hold (its descriptions are what the model reads).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GrantArgs {
    /// Absolute folders it must also write.
    write: Option<Vec<String>>,
    /// It needs the network.
    network: Option<bool>,
    /// Absolute paths of local sockets the sandbox hides that it must reach (a docker socket); what listens there acts outside the sandbox.
    sockets: Option<Vec<String>>,
    /// It cannot work in the sandbox at all.
    unsandboxed: Option<bool>,
    /// Why, for the user.
    reason: Option<String>,
}

impl GrantArgs {
    /// The grant these ask for; None when they ask for nothing more.
    fn into_grant(self) -> Result<Option<SandboxGrant>, ToolError> {
        let paths = |k: &str, list: Option<Vec<String>>| -> Result<Vec<PathBuf>, ToolError> {
            list.unwrap_or_default()
                .into_iter()
                .map(PathBuf::from)
                .map(|p| {
                    p.is_absolute().then_some(p).ok_or_else(|| {
                        ToolError::invalid("sandbox_grant", format!("`{k}` must list absolute paths"))
                    })
                })
                .collect()
        };
        let grant = SandboxGrant {
            write: paths("write", self.write)?,
            sockets: paths("sockets", self.sockets)?,
            network: self.network.unwrap_or(false),
            unsandboxed: self.unsandboxed.unwrap_or(false),
            reason: self.reason.unwrap_or_default(),
        };
        Ok((grant.unsandboxed
            || grant.network
            || !grant.write.is_empty()
            || !grant.sockets.is_empty())
        .then_some(grant))
    }
}

impl ExecuteCmd {
    pub const NAME: &'static str = tn::EXECUTE_CMD;
}

pub const DEFAULT_TIMEOUT_SECS: u64 = 120;
pub const MAX_TIMEOUT_SECS: u64 = 600;
/// Bytes of output kept for the model: the first 40% and the last 60% of it, since the
/// start says what ran and the end says how it finished.
pub const OUTPUT_CAP: usize = 100 * 1024;
const HEAD_SHARE: f64 = 0.4;
/// Environment variables holding model-provider keys, removed from every command's
/// environment.
pub const SECRET_ENV: &[&str] = &[
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "OPENROUTER_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "XAI_API_KEY",
];
/// After the command exits (or is killed), how long its pipes may take to drain.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);

impl<Cx: ?Sized + Sync> Tool<Cx> for ExecuteCmd {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Run a shell command with `sh -c` and return its exit code and output (stdout and \
         stderr, at most 100 KB: the start and the end are kept). `workdir` (absolute) \
         defaults to the working directory; `timeout` is 1-600 seconds (default 120), after \
         which the command and everything it started are killed. Prefer the dedicated tools \
         (read_file, grep_files, list_files, edit_file) over cat, grep, find or sed. Where \
         the sandbox is on, a command writes only the working folder and its own $TMPDIR, \
         has no network, and cannot see secrets; its result says what was refused. For a \
         process that must keep running (a dev server, a watcher), set `background`: the \
         call returns at once with a process id, the process runs on (no timeout) and is \
         listed in the chat; read its output or stop it with check_process."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn describe(&self, args: &Value, length: ToolDescriptionLength) -> String {
        fs::label(
            Tool::<Cx>::name(self),
            args.get("command").and_then(Value::as_str),
            length,
        )
    }

    fn execute_async<'a>(&'a self, _cx: &'a Cx, args: Value) -> BoxToolFuture<'a> {
        Box::pin(async move {
            let args: Args = tool_args::parse(args)?;
            let command = args.command;
            if command.trim().is_empty() {
                return Err(ToolError::invalid("command", "must not be empty"));
            }
            let scope = ToolScope::current();
            let workdir = match args.workdir.map(PathBuf::from) {
                None => scope.working_dir().to_path_buf(),
                Some(w) if w.is_absolute() => w,
                Some(_) => {
                    return Err(ToolError::invalid("workdir", "must be an absolute path"));
                }
            };
            if !workdir.is_dir() {
                return Err(ToolError::invalid(
                    "workdir",
                    format!("{} is not a directory", workdir.display()),
                ));
            }
            let timeout =
                in_range("timeout", args.timeout, 1, MAX_TIMEOUT_SECS)?.unwrap_or(DEFAULT_TIMEOUT_SECS);
            // The approval gate asked the user about a grant before this call could run.
            let sandbox = match args.sandbox_grant.map(GrantArgs::into_grant).transpose()?.flatten() {
                Some(grant) => grant.widen(scope.sandbox())?,
                None => scope.sandbox().clone(),
            };
            // Logged before it runs, so auto-approved commands are traceable too.
            tracing::info!(
                command = %command,
                workdir = %workdir.display(),
                timeout_secs = timeout,
                "execute_cmd: running shell command"
            );
            if args.background.unwrap_or(false) {
                // Not in an editor's terminal: the process must be Skald's to list and stop.
                let slot = scope.processes().ok_or_else(|| {
                    ToolError::invalid(
                        "background",
                        "a background process belongs to a chat, and this run has none \
                         (skald tool); run it without background",
                    )
                })?;
                return in_background(slot, &command, &workdir, scope.hidden_env(), &sandbox).await;
            }
            let timeout = Duration::from_secs(timeout);
            match scope.editor().filter(|e| e.offers().terminals) {
                Some(editor) => {
                    in_terminal(
                        editor,
                        &command,
                        &workdir,
                        timeout,
                        scope.hidden_env(),
                        &sandbox,
                    )
                    .await
                }
                None => run(&command, &workdir, timeout, scope.hidden_env(), &sandbox).await,
            }
        })
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Shell
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }

    fn for_small_models(&self) -> bool {
        true
    }

    fn hook_alias(&self) -> Option<&'static str> {
        Some("Bash")
    }

    fn changes_files(&self) -> bool {
        true
    }
}

/// A command started as `execute_cmd` starts it, with what must live as long as it runs.
struct Running {
    /// Its sandbox (with its private temporary folder), `None` when it runs unconfined.
    confined: Option<Confined>,
    started: Started,
    /// What it may leave for git to run later, looked for when it is over.
    redirects: Option<GitGuard>,
}

/// Starts the command: through the sandbox's spawner, else its helper, else unconfined.
async fn start(
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

async fn run(
    command: &str,
    workdir: &std::path::Path,
    timeout: Duration,
    hidden_env: &[String],
    sandbox: &CommandSandbox,
) -> Result<String, ToolError> {
    let Running {
        confined,
        started,
        redirects,
    } = start(command, workdir, hidden_env, sandbox).await?;
    // Kills the whole group when this call ends in any way: finished, timed out, stopped
    // (the future dropped), or panicked. Background children (`sleep 100 &`) die with it.
    // The sandbox helper makes a session of its own (whose group is its pid) and runs the
    // shell in it, and the spawner starts it as the leader of a group of its own, so either
    // way the group is the command's (and, sandboxed, a PID namespace ends what left it).
    let group = ProcessGroup(started.pid);
    let Started {
        stdout,
        stderr,
        mut exit,
        ..
    } = started;
    let (mut out, mut err) = (HeadTail::default(), HeadTail::default());
    let waited = {
        // Both pipes are read in this task, beside the wait: tasks of their own would each
        // be a hand-over to another of the runtime's threads, a noticeable share of a short
        // command's time.
        let readers = async {
            tokio::join!(capture(stdout, &mut out), capture(stderr, &mut err));
        };
        let mut readers = std::pin::pin!(readers);
        let mut read_all = false;
        let waited = tokio::time::timeout(timeout, async {
            loop {
                tokio::select! {
                    status = &mut exit => break status,
                    () = &mut readers, if !read_all => read_all = true,
                }
            }
        })
        .await;
        group.kill();
        if waited.is_err() {
            // Still running at its timeout, so not yet reaped: its pid is still its own.
            group.kill_leader();
        }
        // A process outside the command's group (`setsid …`) may hold the pipes open
        // forever: after `DRAIN_TIMEOUT` the rest is abandoned and what arrived is used.
        if !read_all {
            let _ = tokio::time::timeout(DRAIN_TIMEOUT, &mut readers).await;
        }
        if waited.is_err() && redirects.is_some() {
            // Killed at its timeout: its end is awaited before what it left is looked at.
            let _ = tokio::time::timeout(DRAIN_TIMEOUT, &mut exit).await;
        }
        waited
    };
    let undone = guarded(redirects.map(std::sync::Arc::new)).await;
    if let (Some(c), Ok(Ok(status))) = (&confined, &waited)
        && let Some(why) = c.setup_failure(status.code(), &err.render(OUTPUT_CAP))
    {
        return Err(ToolError::failed(format!(
            "the sandbox could not start, so the command did not run: {why}"
        )));
    }
    let output = render(&out, &err);
    let note = match (&confined, &waited) {
        (Some(c), Ok(Ok(status))) => c.explain(workdir, status.success(), &output),
        _ => unsandboxed_note(sandbox),
    } + &undone;
    match waited {
        Ok(Ok(status)) => Ok(format!("[{}]\n{output}{note}", describe_status(status))),
        Ok(Err(e)) => Err(ToolError::failed(format!(
            "waiting for the command failed: {e}"
        ))),
        Err(_) => Err(ToolError::failed(format!(
            "the command timed out after {} s; it and every process it started were killed\n{output}{note}",
            timeout.as_secs()
        ))),
    }
}

/// Starts the command as a background process of the chat (docs/processes.md) and returns
/// at once. It runs with no timeout until it exits or is stopped — by check_process, the
/// person, its chat's deletion or Skald's end — and then it and every process it started
/// are killed (sandboxed: its PID namespace). Its output goes to the chat's table.
async fn in_background(
    slot: &skald_api::ProcessSlot,
    command: &str,
    workdir: &std::path::Path,
    hidden_env: &[String],
    sandbox: &CommandSandbox,
) -> Result<String, ToolError> {
    let handle = slot
        .table
        .reserve(slot.session_id)
        .map_err(|e| ToolError::failed(e.to_string()))?;
    let Running {
        confined,
        started,
        redirects,
    } = start(command, workdir, hidden_env, sandbox).await?;
    let sandboxed = confined.as_ref().map(|c| c.mode);
    let to = handle.clone();
    let run: skald_api::processes::ProcessRun = Box::pin(async move {
        let group = ProcessGroup(started.pid);
        let Started {
            stdout,
            stderr,
            mut exit,
            ..
        } = started;
        let readers = async {
            tokio::join!(pour(stdout, &to), pour(stderr, &to));
        };
        let mut readers = std::pin::pin!(readers);
        let stop = to.stop.clone();
        let mut stopped = std::pin::pin!(stop.cancelled());
        let mut read_all = false;
        // What it leaves for git is looked for while it runs, not only at its end: a
        // background process may run for hours.
        // A redirect into the existing repositories (a few file lookups) is looked for
        // often, since the person's git follows it at once; the walk for new
        // repositories, every `GUARD_EVERY`.
        let guard = redirects.map(std::sync::Arc::new);
        let mut every = tokio::time::interval(REDIRECTS_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        every.tick().await;
        let walk_every = (GUARD_EVERY.as_millis() / REDIRECTS_EVERY.as_millis()).max(1);
        let mut ticks: u128 = 0;
        let exited = loop {
            tokio::select! {
                status = &mut exit => break Some(status),
                () = &mut readers, if !read_all => read_all = true,
                () = &mut stopped => break None,
                _ = every.tick(), if guard.is_some() => {
                    ticks += 1;
                    let said = if ticks.is_multiple_of(walk_every) {
                        guarded(guard.clone()).await
                    } else {
                        guard.as_ref().map(|g| g.check_redirects()).unwrap_or_default()
                    };
                    if !said.is_empty() {
                        to.push(said.trim_start().as_bytes());
                        to.push(b"\n");
                    }
                }
            }
        };
        group.kill();
        if exited.is_none() {
            // Still running, so not yet reaped: its pid is still its own.
            group.kill_leader();
        }
        if !read_all {
            let _ = tokio::time::timeout(DRAIN_TIMEOUT, &mut readers).await;
        }
        let exited = match exited {
            Some(status) => Some(status),
            None => tokio::time::timeout(DRAIN_TIMEOUT, &mut exit).await.ok(),
        };
        let undone = guarded(guard).await;
        let how = match exited {
            _ if to.stop.is_cancelled() => {
                "stopped: it and every process it started were killed".to_string()
            }
            Some(Ok(status)) => {
                let text = lock_output(&to).text();
                match confined
                    .as_ref()
                    .and_then(|c| c.setup_failure(status.code(), &text))
                {
                    Some(why) => {
                        format!("the sandbox could not start, so the command did not run: {why}")
                    }
                    None => describe_status(status),
                }
            }
            Some(Err(e)) => format!("waiting for it failed: {e}"),
            None => "it did not end when killed".to_string(),
        };
        // Its private temporary folder goes only now, when nothing of it runs.
        drop(confined);
        if undone.is_empty() {
            how
        } else {
            format!("{how}\n{}", undone.trim_end())
        }
    });
    let info = slot.table.start(
        slot.session_id,
        command,
        &workdir.display().to_string(),
        handle,
        run,
    );
    let (how, untied) = match sandboxed {
        Some(mode) => (format!(", sandboxed ({mode})"), ""),
        // Nothing ties an unconfined process to Skald's own end: only Skald stopping it.
        None => (
            String::new(),
            " (Not sandboxed, it is not tied to Skald's process: if Skald is killed \
             outright, it may keep running.)",
        ),
    };
    Ok(format!(
        "[started in the background as process {id}{how}]\nIt runs until it exits, \
         check_process stops it, the chat is deleted or Skald ends.{untied} Read its output \
         with check_process (process_id {id}).\n{}",
        unsandboxed_note(sandbox),
        id = info.id,
    ))
}

/// How often a background process's folders are walked for what it leaves for git.
const GUARD_EVERY: Duration = Duration::from_secs(3);
/// How often the existing repositories are looked at for a redirect it made.
const REDIRECTS_EVERY: Duration = Duration::from_millis(200);

/// `GitGuard::check` off the async workers (it walks the folders); its lines, if any.
async fn guarded(guard: Option<std::sync::Arc<GitGuard>>) -> String {
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

fn lock_output(
    h: &skald_api::processes::ProcessHandle,
) -> std::sync::MutexGuard<'_, skald_api::processes::ProcessOutput> {
    h.output.lock().unwrap_or_else(|e| e.into_inner())
}

/// Reads `pipe` to its end into a background process's output.
async fn pour<R: tokio::io::AsyncRead + Unpin>(
    pipe: Option<R>,
    into: &skald_api::processes::ProcessHandle,
) {
    let Some(mut pipe) = pipe else { return };
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => into.push(&buf[..n]),
        }
    }
}

type Pipe = Option<std::pin::Pin<Box<dyn tokio::io::AsyncRead + Send>>>;

/// A command that is running, however it was started: its group, its output and its end.
struct Started {
    pid: Option<u32>,
    stdout: Pipe,
    stderr: Pipe,
    exit: std::pin::Pin<
        Box<dyn std::future::Future<Output = std::io::Result<std::process::ExitStatus>> + Send>,
    >,
}

impl Started {
    /// A child of this process: the shell, or the sandbox helper in its place.
    /// `own_group`: start it as the leader of a process group of its own. Not for the
    /// sandbox helper, which makes a session of its own (so that the command has no
    /// controlling terminal), and a group leader cannot.
    fn child(
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

/// Runs the command in a terminal of the editor that drives the chat (docs/acp.md), so the
/// person watches it there. It is confined the same way: the editor starts the sandbox
/// helper, which confines itself before the shell runs. The editor's environment is not
/// Skald's, so the provider keys and hidden variables are removed by `env -u` in front.
async fn in_terminal(
    editor: &skald_api::editor::EditorAccess,
    command: &str,
    workdir: &std::path::Path,
    timeout: Duration,
    hidden_env: &[String],
    sandbox: &CommandSandbox,
) -> Result<String, ToolError> {
    use skald_api::editor::{TerminalCommand, TerminalExit};
    let mut confined = Confined::prepare(sandbox);
    // Taken before the command starts, as for a command of Skald's own.
    let guard = confined.as_ref().map(|c| GitGuard::before(&c.policy));
    if let Some(c) = &mut confined {
        c.own_tmp()?;
    }
    let mut args: Vec<String> = Vec::new();
    let mut unset: Vec<&str> = SECRET_ENV.to_vec();
    for key in hidden_env {
        if !unset.contains(&key.as_str()) {
            unset.push(key);
        }
    }
    for key in unset {
        args.push("-u".into());
        args.push(key.into());
    }
    let mut env = Vec::new();
    match &confined {
        Some(c) => {
            args.push(c.helper.to_string_lossy().into_owned());
            for a in c.helper_args(command)? {
                let a = a.into_string().map_err(|_| {
                    ToolError::failed(
                        "the sandbox's arguments are not valid UTF-8, which an editor's \
                         terminal cannot take, so the command did not run",
                    )
                })?;
                args.push(a);
            }
            for (var, value) in c.env() {
                env.push((var.to_string(), value.to_string_lossy().into_owned()));
            }
        }
        None => args.extend(["sh".to_string(), "-c".to_string(), command.to_string()]),
    }
    let outcome = editor
        .run_in_terminal(TerminalCommand {
            program: "env".into(),
            args,
            env,
            cwd: workdir.to_path_buf(),
            output_limit: OUTPUT_CAP,
            timeout,
        })
        .await
        .map_err(|why| {
            ToolError::failed(format!(
                "the editor could not run the command in its terminal: {why}"
            ))
        })?;
    let code = match outcome.exit {
        TerminalExit::Code(c) => Some(c),
        _ => None,
    };
    if let Some(c) = &confined
        && let Some(why) = c.setup_failure(code, &outcome.output)
    {
        return Err(ToolError::failed(format!(
            "the sandbox could not start, so the command did not run: {why}"
        )));
    }
    let mut output = String::from("--- output (the editor's terminal) ---\n");
    if outcome.truncated {
        output.push_str("[… the start was cut by the editor …]\n");
    }
    output.push_str(if outcome.output.is_empty() {
        "(no output)"
    } else {
        &outcome.output
    });
    if !output.ends_with('\n') {
        output.push('\n');
    }
    let note = match (&confined, &outcome.exit) {
        (Some(c), TerminalExit::Code(code)) => c.explain(workdir, *code == 0, &output),
        (Some(c), TerminalExit::Signal(_)) => c.explain(workdir, false, &output),
        (None, _) => unsandboxed_note(sandbox),
        _ => String::new(),
    } + &guarded(guard.map(std::sync::Arc::new)).await;
    match outcome.exit {
        TerminalExit::Code(code) => Ok(format!("[exit code {code}]\n{output}{note}")),
        TerminalExit::Signal(sig) => Ok(format!("[killed by signal {sig}]\n{output}{note}")),
        TerminalExit::Unknown => Ok(format!("[exited]\n{output}{note}")),
        TerminalExit::TimedOut => Err(ToolError::failed(format!(
            "the command timed out after {} s; the editor killed it\n{output}{note}",
            timeout.as_secs()
        ))),
    }
}

/// What a call asks for beyond the sandbox (`sandbox_grant`), approved by the user.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SandboxGrant {
    pub write: Vec<PathBuf>,
    pub network: bool,
    /// Local sockets the sandbox hides (a docker socket, an agent's) that the command may
    /// reach: each unhidden by name, never by a folder holding it.
    pub sockets: Vec<PathBuf>,
    pub unsandboxed: bool,
    pub reason: String,
}

impl SandboxGrant {
    /// The grant a call's arguments ask for; None when they ask for nothing more. The
    /// approval gate reads it here, from the raw arguments, and the call from its own.
    pub fn from_args(args: &Value) -> Result<Option<SandboxGrant>, ToolError> {
        let Some(g) = args.get("sandbox_grant").filter(|g| !g.is_null()) else {
            return Ok(None);
        };
        let g: GrantArgs = serde_json::from_value(g.clone())
            .map_err(|e| ToolError::invalid("sandbox_grant", e.to_string()))?;
        g.into_grant()
    }

    /// What the user is asked to allow, in one line.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.unsandboxed {
            parts.push("run with no sandbox".to_string());
        } else {
            if self.network {
                parts.push("use the network".to_string());
            }
            if !self.write.is_empty() {
                let list: Vec<String> =
                    self.write.iter().map(|p| p.display().to_string()).collect();
                parts.push(format!("also write {}", list.join(", ")));
            }
            if !self.sockets.is_empty() {
                let list: Vec<String> = self
                    .sockets
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect();
                parts.push(format!(
                    "reach the local socket{} {} (what listens there acts outside the sandbox)",
                    if list.len() == 1 { "" } else { "s" },
                    list.join(", ")
                ));
            }
        }
        let mut s = parts.join(" and ");
        if !self.reason.trim().is_empty() {
            s.push_str(&format!(" (the agent says: {})", self.reason.trim()));
        }
        s
    }

    /// The sandbox the command runs in once the grant is approved. The hidden paths stay
    /// hidden whatever folder is granted; a granted socket is unhidden by itself; only
    /// `unsandboxed` lifts them all.
    fn widen(&self, sandbox: &CommandSandbox) -> Result<CommandSandbox, ToolError> {
        Ok(match sandbox {
            CommandSandbox::On { .. } if self.unsandboxed => CommandSandbox::Off,
            CommandSandbox::On {
                mode,
                helper,
                policy,
            } => {
                let mut policy = policy.clone();
                policy.network |= self.network;
                for w in &self.write {
                    let real = std::fs::canonicalize(w).unwrap_or_else(|_| w.clone());
                    if !policy.writable.contains(&real) {
                        policy.writable.push(real);
                    }
                }
                for socket in &self.sockets {
                    unhide_socket(&mut policy, socket)?;
                }
                CommandSandbox::On {
                    mode: *mode,
                    helper: helper.clone(),
                    policy,
                }
            }
            other => other.clone(),
        })
    }
}

/// Takes a granted socket out of the paths the sandbox hides. Only a socket, and only one
/// hidden by itself: a credential folder or Skald's data is not a socket, and a socket in a
/// hidden folder (`/run/user`, where the session bus runs anything unconfined) stays
/// hidden with the rest of it. One in `/tmp` or `/var/tmp` is out of sight in any case
/// (each command has its own), unless a folder bound back holds it.
fn unhide_socket(
    policy: &mut skald_sandbox::Policy,
    socket: &std::path::Path,
) -> Result<(), ToolError> {
    let bad = |why: String| ToolError::invalid("sandbox_grant", why);
    let shown = socket.display();
    let real = std::fs::canonicalize(socket)
        .map_err(|e| bad(format!("`sockets`: {shown} cannot be reached ({e})")))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = std::fs::metadata(&real)
            .map_err(|e| bad(format!("`sockets`: {shown} cannot be reached ({e})")))?
            .file_type();
        if !kind.is_socket() {
            return Err(bad(format!(
                "`sockets`: {shown} is not a socket; only a socket can be granted this way"
            )));
        }
    }
    let same = |m: &PathBuf| m == socket || std::fs::canonicalize(m).is_ok_and(|c| c == real);
    if let Some(folder) = policy
        .masked
        .iter()
        .find(|m| !same(m) && (real.starts_with(m) || socket.starts_with(m)))
    {
        return Err(bad(format!(
            "`sockets`: {shown} is inside {}, which stays hidden whole (what else is there \
             could act outside the sandbox too); it cannot be granted by itself",
            folder.display()
        )));
    }
    let private = skald_sandbox::PRIVATE_TMP
        .iter()
        .any(|t| real.starts_with(t));
    if private && !policy.writable.iter().any(|w| real.starts_with(w)) {
        return Err(bad(format!(
            "`sockets`: {shown} is in a temporary folder each sandboxed command sees empty, \
             its own; grant the folder holding it with `write` to reach it"
        )));
    }
    policy.masked.retain(|m| !same(m));
    Ok(())
}

#[cfg(test)]
mod grant_tests {
    use super::*;

    #[test]
    fn a_socket_is_unhidden_by_name_and_nothing_else_is() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().canonicalize().unwrap();
        let sock = dir.join("agent.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        let hidden_dir = dir.join("hidden");
        std::fs::create_dir(&hidden_dir).unwrap();
        let inner = hidden_dir.join("bus");
        let _inner = std::os::unix::net::UnixListener::bind(&inner).unwrap();
        let keys = dir.join("keys");
        std::fs::write(&keys, "k").unwrap();
        let policy = || skald_sandbox::Policy {
            writable: vec![dir.clone()],
            masked: vec![sock.clone(), hidden_dir.clone(), keys.clone()],
            ..Default::default()
        };
        let mut p = policy();
        unhide_socket(&mut p, &sock).unwrap();
        assert_eq!(p.masked, vec![hidden_dir.clone(), keys.clone()]);
        for (path, why) in [
            (&keys, "is not a socket"),
            (&hidden_dir, "is not a socket"),
            (&inner, "stays hidden whole"),
        ] {
            let mut p = policy();
            let e = unhide_socket(&mut p, path).unwrap_err().to_string();
            assert!(e.contains(why), "{path:?}: {e}");
            assert_eq!(p.masked, policy().masked);
        }
        let e = unhide_socket(&mut policy(), &dir.join("none")).unwrap_err();
        assert!(e.to_string().contains("cannot be reached"), "{e}");
    }
}

impl SandboxGrant {
    /// Whether the grant asks for more than the network (which a rule can give).
    pub fn only_network(&self) -> bool {
        !self.unsandboxed && self.write.is_empty() && self.sockets.is_empty()
    }
}

/// Said under the output of a command that ran unconfined although a mode is set: it was
/// approved as one, and the model should know why nothing fenced it.
fn unsandboxed_note(sandbox: &CommandSandbox) -> String {
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
struct Confined {
    mode: SandboxMode,
    helper: PathBuf,
    policy: skald_sandbox::Policy,
    /// The private temporary folder, once there is one.
    tmp: Option<PathBuf>,
    /// The folder made here for the helper, removed when the command is done.
    _own_tmp: Option<tempfile::TempDir>,
}

impl Confined {
    fn prepare(sandbox: &CommandSandbox) -> Option<Confined> {
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
    fn own_tmp(&mut self) -> Result<(), ToolError> {
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
    async fn launch(
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
    async fn launch(
        &mut self,
        _: &str,
        _: &std::path::Path,
        _: &[String],
    ) -> Result<Option<Started>, ToolError> {
        Ok(None)
    }

    fn command(&self, command: &str) -> Result<tokio::process::Command, ToolError> {
        let mut c = tokio::process::Command::new(&self.helper);
        c.args(self.helper_args(command)?);
        for (var, value) in self.env() {
            c.env(var, value);
        }
        Ok(c)
    }

    /// The helper's arguments: the policy, then `sh -c COMMAND`.
    fn helper_args(&self, command: &str) -> Result<Vec<std::ffi::OsString>, ToolError> {
        skald_sandbox::command_args(
            &self.policy,
            std::ffi::OsStr::new("sh"),
            &["-c".into(), command.into()],
        )
        .map_err(|e| ToolError::failed(format!("{e}, so the command did not run")))
    }

    /// The command's private temporary folder, under every name programs look for.
    fn env(&self) -> Vec<(&'static str, &std::path::Path)> {
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
    fn setup_failure(&self, code: Option<i32>, err: &str) -> Option<String> {
        if code != Some(skald_sandbox::SETUP_FAILED) {
            return None;
        }
        let first = err.lines().next()?;
        first
            .strip_prefix(skald_sandbox::PREFIX)
            .map(|why| why.trim().to_string())
    }

    /// What the sandbox refused, as far as the output shows, with what to do about it.
    fn explain(&self, workdir: &std::path::Path, succeeded: bool, output: &str) -> String {
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
async fn next_answer(
    answers: &tokio::net::UnixDatagram,
) -> std::io::Result<skald_sandbox::spawner::Answer> {
    let mut packet = [0u8; skald_sandbox::spawner::ANSWER_MAX];
    let n = answers.recv(&mut packet).await?;
    skald_sandbox::spawner::answer_from(&packet[..n])
}

fn shell(command: &str) -> tokio::process::Command {
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

fn describe_status(status: std::process::ExitStatus) -> String {
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

struct ProcessGroup(Option<u32>);

impl ProcessGroup {
    fn kill(&self) {
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
    fn kill_leader(&self) {
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

/// The start and end of a stream, and how long it was in all.
#[derive(Debug, Default)]
pub struct HeadTail {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: usize,
}

impl HeadTail {
    const HEAD_CAP: usize = (OUTPUT_CAP as f64 * HEAD_SHARE) as usize;
    const TAIL_CAP: usize = OUTPUT_CAP - Self::HEAD_CAP;

    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len();
        let room = Self::HEAD_CAP - self.head.len();
        let take = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..take]);
        bytes = &bytes[take..];
        if bytes.len() >= Self::TAIL_CAP {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - Self::TAIL_CAP..]);
        } else {
            let overflow = (self.tail.len() + bytes.len()).saturating_sub(Self::TAIL_CAP);
            self.tail.drain(..overflow);
            self.tail.extend(bytes);
        }
    }

    pub fn total(&self) -> usize {
        self.total
    }

    /// At most `budget` bytes: everything if it fits, else the first 40% and the last 60%
    /// of the budget around a marker saying how much was cut.
    pub fn render(&self, budget: usize) -> String {
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        if self.total <= budget {
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            return String::from_utf8_lossy(&all).into_owned();
        }
        let head_n = ((budget as f64 * HEAD_SHARE) as usize).min(self.head.len());
        let tail_n = (budget - head_n).min(tail.len());
        let cut = self.total - head_n - tail_n;
        format!(
            "{}\n[… {cut} bytes cut …]\n{}",
            String::from_utf8_lossy(&self.head[..head_n]),
            String::from_utf8_lossy(&tail[tail.len() - tail_n..])
        )
    }
}

/// Reads `pipe` to its end into `into`; what arrived stays there if this is abandoned.
async fn capture<R: tokio::io::AsyncRead + Unpin>(pipe: Option<R>, into: &mut HeadTail) {
    let Some(mut pipe) = pipe else { return };
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => into.push(&buf[..n]),
        }
    }
}

/// Splits the output budget between the streams: each gets what it has if it fits, and a
/// stream smaller than half leaves the rest to the other.
fn budgets(out: usize, err: usize) -> (usize, usize) {
    let half = OUTPUT_CAP / 2;
    if out + err <= OUTPUT_CAP {
        (out, err)
    } else if out <= half {
        (out, OUTPUT_CAP - out)
    } else if err <= half {
        (OUTPUT_CAP - err, err)
    } else {
        (half, OUTPUT_CAP - half)
    }
}

fn render(out: &HeadTail, err: &HeadTail) -> String {
    let (bo, be) = budgets(out.total(), err.total());
    let mut text = String::new();
    if out.total() > 0 {
        text.push_str("--- stdout ---\n");
        text.push_str(&out.render(bo));
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    if err.total() > 0 {
        text.push_str("--- stderr ---\n");
        text.push_str(&err.render(be));
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    if text.is_empty() {
        text.push_str("(no output)\n");
    }
    text
}

#[cfg(test)]
#[path = "execute_cmd_tests.rs"]
mod tests;
