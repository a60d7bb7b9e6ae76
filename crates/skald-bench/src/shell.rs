//! execute_cmd's overhead over a bare `sh -c` spawn, both in the same async runtime.

use crate::timing::ratio;
use anyhow::{Result, bail};
use serde_json::json;
use skald_api::{ExecutionOutcome, Tool, ToolScope};
use skald_tools::ExecuteCmd;
use std::time::{Duration, Instant};

const RUNS: usize = 300;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

pub fn run() -> Result<String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let dir = std::env::temp_dir();
    let (ours, bare) = rt.block_on(async {
        let mut ours = Vec::with_capacity(RUNS);
        let mut bare = Vec::with_capacity(RUNS);
        for i in 0..=RUNS {
            let t = Instant::now();
            let exec = ExecuteCmd.run(&(), json!({"command": "true"}));
            let outcome = ToolScope::new(&dir).run(exec.wait()).await;
            let elapsed = t.elapsed();
            if !matches!(outcome, ExecutionOutcome::Completed(_)) {
                bail!("execute_cmd failed: {outcome:?}");
            }
            let t = Instant::now();
            let status = tokio::process::Command::new("sh")
                .args(["-c", "true"])
                .output()
                .await?
                .status;
            let bare_elapsed = t.elapsed();
            if !status.success() {
                bail!("sh -c true failed");
            }
            // The first round warms both up.
            if i > 0 {
                ours.push(elapsed);
                bare.push(bare_elapsed);
            }
        }
        Ok((median(ours), median(bare)))
    })?;
    let us = |d: Duration| format!("{:.0} µs", d.as_secs_f64() * 1e6);
    Ok(format!(
        "## execute_cmd vs a bare spawn\n\n\
         `execute_cmd {{\"command\": \"true\"}}` (own process group, piped and capped output, \
         timeout, group kill on exit) against `tokio::process::Command::new(\"sh\").args([\"-c\", \
         \"true\"]).output()` in the same runtime, alternating, median of {RUNS} runs.\n\n\
         | execute_cmd | bare spawn | overhead | ratio |\n| --- | --- | --- | --- |\n\
         | {} | {} | {} | {} |\n",
        us(ours),
        us(bare),
        us(ours.saturating_sub(bare)),
        ratio(ours, bare)
    ))
}
