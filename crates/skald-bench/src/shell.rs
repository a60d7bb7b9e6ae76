//! execute_cmd's overhead over a bare `sh -c` spawn, both in the same async runtime, with
//! and without the sandbox.

use crate::timing::ratio;
use anyhow::{Result, bail};
use serde_json::json;
use skald_api::{CommandSandbox, ExecutionOutcome, SandboxMode, Tool, ToolScope};
use skald_tools::ExecuteCmd;
use std::time::{Duration, Instant};

const RUNS: usize = 300;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The sandbox a chat in `dir` gets, made the way the engine makes it
/// (`skald_core::sandbox::command_sandbox`): the folder writable, every mask a chat has
/// (Skald's data and secrets, the credential folders, the escape sockets, `secrets/`
/// folders in `dir`), network off.
fn sandbox(dir: &std::path::Path) -> Result<CommandSandbox> {
    let data = skald_core::DataDir::resolve(None).map_err(|e| anyhow::anyhow!("{e}"))?;
    let withheld = skald_core::withheld::Withheld::default();
    withheld.protect(&data.secrets_dir());
    withheld.hide_from_commands(data.root());
    let run = skald_core::approval::RunContext {
        working_dir: dir.to_path_buf(),
        protected: withheld.folders(),
        hidden_from_commands: withheld.from_commands(),
        sandbox: skald_core::config::SandboxSettings {
            mode: SandboxMode::WorkspaceWrite,
            network: false,
            always_ask: false,
        },
        ..Default::default()
    };
    match skald_core::sandbox::command_sandbox(&run) {
        on @ CommandSandbox::On { .. } => Ok(on),
        other => bail!("the sandbox is not available here: {other:?}"),
    }
}

async fn bare_spawn() -> Result<Duration> {
    let t = Instant::now();
    let status = tokio::process::Command::new("sh")
        .args(["-c", "true"])
        .output()
        .await?
        .status;
    let elapsed = t.elapsed();
    if !status.success() {
        bail!("sh -c true failed");
    }
    Ok(elapsed)
}

/// The one-shot helper alone (what a command the spawner cannot carry, an editor's terminal
/// or a sandboxed MCP server goes through): `skald-sandbox --policy … -- sh -c true`.
async fn helper_spawn(sandbox: &CommandSandbox) -> Result<Duration> {
    let CommandSandbox::On { helper, policy, .. } = sandbox else {
        bail!("no sandbox");
    };
    let args = skald_sandbox::command_args(
        policy,
        std::ffi::OsStr::new("sh"),
        &["-c".into(), "true".into()],
    )
    .map_err(anyhow::Error::msg)?;
    let t = Instant::now();
    let status = tokio::process::Command::new(helper)
        .args(args)
        .output()
        .await?
        .status;
    let elapsed = t.elapsed();
    if !status.success() {
        bail!("the sandbox helper failed");
    }
    Ok(elapsed)
}

async fn execute_cmd(dir: &std::path::Path, sandbox: CommandSandbox) -> Result<Duration> {
    let t = Instant::now();
    let exec = ExecuteCmd.run(&(), json!({"command": "true"}));
    let outcome = ToolScope::new(dir)
        .with_sandbox(sandbox)
        .run(exec.wait())
        .await;
    let elapsed = t.elapsed();
    match outcome {
        ExecutionOutcome::Completed(text) if text.starts_with("[exit code 0]") => Ok(elapsed),
        other => bail!("execute_cmd failed: {other:?}"),
    }
}

pub fn run() -> Result<String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let folder = tempfile::tempdir()?;
    let dir = folder.path().canonicalize()?;
    let confined = sandbox(&dir)?;
    let (task_dir, task_sandbox) = (dir.clone(), confined.clone());
    // In a task of the runtime, as the engine runs a tool call (each turn of a session is a
    // spawned task), not on the thread that called `block_on`: there every wake of the
    // future is one more hand-over, from the runtime's thread that saw the event.
    let measured = rt.spawn(async move {
        let (dir, confined) = (task_dir, task_sandbox);
        let mut ours = Vec::with_capacity(RUNS);
        let mut sandboxed = Vec::with_capacity(RUNS);
        let mut helper = Vec::with_capacity(RUNS);
        let mut bare = Vec::with_capacity(RUNS);
        for i in 0..=RUNS {
            let a = execute_cmd(&dir, CommandSandbox::Off).await?;
            let b = execute_cmd(&dir, confined.clone()).await?;
            let h = helper_spawn(&confined).await?;
            let c = bare_spawn().await?;
            // The first round warms everything up (and starts the spawner).
            if i > 0 {
                ours.push(a);
                sandboxed.push(b);
                helper.push(h);
                bare.push(c);
            }
        }
        Ok::<_, anyhow::Error>((
            median(ours),
            median(sandboxed),
            median(helper),
            median(bare),
        ))
    });
    let (ours, sandboxed, helper, bare) = rt.block_on(measured)??;
    let us = |d: Duration| format!("{:.0} µs", d.as_secs_f64() * 1e6);
    Ok(format!(
        "## execute_cmd vs a bare spawn\n\n\
         `execute_cmd {{\"command\": \"true\"}}` (own process group, piped and capped output, \
         timeout, group kill on exit), unsandboxed and in the `workspace-write` sandbox with the \
         policy a chat's commands get ({masks} paths hidden: Skald's data, the credential \
         folders, the escape sockets; which of them exist is watched, not looked up per command), \
         through the spawner (whose user and mount namespaces and masks were made once; per \
         command a thread readied once the one before was done, with its private temporary \
         folder, its Landlock rules, the seccomp filter of the thread that made it and the \
         program looked up, reads the request, which carries the pipes, an answer socket and \
         the environment when it is not the one sent before, and starts the command; the \
         answers are awaited in the runtime), against \
         `tokio::process::Command::new(\"sh\").args([\"-c\", \"true\"]).output()` in the same \
         runtime (all in one of its tasks, as the engine runs a tool call), interleaved, \
         median of {RUNS} runs each. Also the one-shot helper alone \
         (`skald-sandbox --policy … -- sh -c true`: namespaces, masks, Landlock, seccomp and a \
         second exec per command), which commands the spawner cannot carry, editors' terminals \
         and sandboxed MCP servers use. Goal: sandboxed ≤ 1.3× a bare spawn.\n\n\
         | execute_cmd | bare spawn | overhead | ratio |\n| --- | --- | --- | --- |\n\
         | {} | {} | {} | {} |\n\
         | sandboxed: {} | {} | {} | {} |\n\
         | one-shot helper alone: {} | {} | {} | {} |\n",
        us(ours),
        us(bare),
        us(ours.saturating_sub(bare)),
        ratio(ours, bare),
        us(sandboxed),
        us(bare),
        us(sandboxed.saturating_sub(bare)),
        ratio(sandboxed, bare),
        us(helper),
        us(bare),
        us(helper.saturating_sub(bare)),
        ratio(helper, bare),
        masks = match &confined {
            CommandSandbox::On { policy, .. } => policy.masked.len(),
            _ => 0,
        },
    ))
}
