//! A command started as a background process of the chat (docs/processes.md): the call
//! returns at once and the process runs on until it exits or is stopped.

use super::confined::unsandboxed_note;
use super::start::{DRAIN_TIMEOUT, ProcessGroup, Running, Started, describe_status, guarded, start};
use skald_api::{CommandSandbox, ToolError};
use std::time::Duration;
use tokio::io::AsyncReadExt;

/// Starts the command as a background process of the chat (docs/processes.md) and returns
/// at once. It runs with no timeout until it exits or is stopped — by check_process, the
/// person, its chat's deletion or Skald's end — and then it and every process it started
/// are killed (sandboxed: its PID namespace). Its output goes to the chat's table.
pub(super) async fn in_background(
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
pub(super) const GUARD_EVERY: Duration = Duration::from_secs(3);
/// How often the existing repositories are looked at for a redirect it made.
pub(super) const REDIRECTS_EVERY: Duration = Duration::from_millis(200);


pub(super) fn lock_output(
    h: &skald_api::processes::ProcessHandle,
) -> std::sync::MutexGuard<'_, skald_api::processes::ProcessOutput> {
    h.output.lock().unwrap_or_else(|e| e.into_inner())
}

/// Reads `pipe` to its end into a background process's output.
pub(super) async fn pour<R: tokio::io::AsyncRead + Unpin>(
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
