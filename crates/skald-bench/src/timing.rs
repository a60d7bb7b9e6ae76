//! Wall-clock medians of repeated runs.

use anyhow::{Context, Result, bail};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Median of `runs` timed calls of `f`, after one untimed warm-up call.
pub fn median<F: FnMut() -> Result<()>>(runs: usize, mut f: F) -> Result<Duration> {
    f()?;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        f()?;
        times.push(t.elapsed());
    }
    times.sort();
    Ok(times[times.len() / 2])
}

/// Runs a command to completion, its output discarded (read fully, as a caller would),
/// failing unless its exit code is in `ok_codes`.
pub fn run_quiet(cmd: &mut Command, ok_codes: &[i32]) -> Result<Vec<u8>> {
    let out = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .output()
        .with_context(|| format!("cannot run {cmd:?}"))?;
    let code = out.status.code().unwrap_or(-1);
    if !ok_codes.contains(&code) {
        bail!(
            "{cmd:?} exited with {code}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(out.stdout)
}

pub fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

pub fn ratio(ours: Duration, reference: Duration) -> String {
    format!(
        "{:.2}×",
        ours.as_secs_f64() / reference.as_secs_f64().max(1e-9)
    )
}

/// Runs a script that prints its measurements as one JSON line last (the browser-side
/// benchmarks in ui/e2e), and reads that line.
pub fn json_result(cmd: &mut Command, what: &str) -> Result<serde_json::Value> {
    let out = cmd.output().with_context(|| format!("running {what}"))?;
    if !out.status.success() {
        anyhow::bail!("{what} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .with_context(|| format!("no JSON from {what}"))?;
    Ok(serde_json::from_str(line)?)
}
