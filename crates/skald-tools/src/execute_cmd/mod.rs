//! execute_cmd: run a shell command in its own process group, with a timeout, capturing
//! its output within a fixed budget.
//!
//! By concern: `grant` (what a call asks for beyond the sandbox), `start` (how a command
//! starts, confined or not, and its process group), `confined` (the sandbox's spawner and
//! helper), `foreground` (a call that waits for its command), `background` (a process of
//! the chat), `terminal` (an editor's terminal), `output` (the budget of what is kept).

mod background;
mod confined;
mod foreground;
mod grant;
mod output;
mod start;
mod terminal;

pub use grant::SandboxGrant;
pub use output::{HeadTail, OUTPUT_CAP};

use crate::fs::{self, in_range};
use background::in_background;
use foreground::run;
use grant::GrantArgs;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use skald_api::tool_args;
use skald_api::{
    BoxToolFuture, Tool, ToolCategory, ToolDescriptionLength, ToolError, ToolKind, ToolScope,
    tool_names as tn,
};
use std::path::PathBuf;
use std::time::Duration;
use terminal::in_terminal;

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

impl ExecuteCmd {
    pub const NAME: &'static str = tn::EXECUTE_CMD;
}

pub const DEFAULT_TIMEOUT_SECS: u64 = 120;
pub const MAX_TIMEOUT_SECS: u64 = 600;
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

#[cfg(test)]
mod tests;
