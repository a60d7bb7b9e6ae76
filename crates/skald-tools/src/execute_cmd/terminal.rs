//! A command run in a terminal of the editor that drives the chat (docs/acp.md).

use super::SECRET_ENV;
use super::confined::{Confined, unsandboxed_note};
use super::output::OUTPUT_CAP;
use super::start::guarded;
use crate::git_guard::GitGuard;
use skald_api::{CommandSandbox, ToolError};
use std::time::Duration;

/// Runs the command in a terminal of the editor that drives the chat (docs/acp.md), so the
/// person watches it there. It is confined the same way: the editor starts the sandbox
/// helper, which confines itself before the shell runs. The editor's environment is not
/// Skald's, so the provider keys and hidden variables are removed by `env -u` in front.
pub(super) async fn in_terminal(
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
