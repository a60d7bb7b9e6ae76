//! A call that waits for its command: killed whole at its timeout or when the call is
//! dropped, its output kept within the budget.

use super::confined::unsandboxed_note;
use super::output::{HeadTail, OUTPUT_CAP, capture, render};
use super::start::{DRAIN_TIMEOUT, ProcessGroup, Running, Started, describe_status, guarded, start};
use skald_api::{CommandSandbox, ToolError};
use std::time::Duration;

pub(super) async fn run(
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
