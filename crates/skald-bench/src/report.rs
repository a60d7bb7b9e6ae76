//! docs/performance.md: each benchmark owns a marked section and replaces only that, so
//! benchmarks of different subsystems can be re-run independently.

use anyhow::{Context, Result};
use std::path::Path;

const HEADER: &str = "# Performance\n\n\
Every figure here is measured against a reference program doing the same job on the same \
input in the same run, on the machine named in each section; ratios below 1 mean Skald is \
faster. Regenerate with `bash scripts/bench.sh`. Tests never assert times; this report \
states them.\n";

pub fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string());
    let date = std::process::Command::new("date")
        .arg("+%Y-%m-%d")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    format!("{date}, {cores} cores, {cpu}")
}

pub fn write_section(path: &Path, name: &str, machine: &str, body: &str) -> Result<()> {
    let existing = std::fs::read_to_string(path).unwrap_or_default();
    let begin = format!("<!-- bench:{name} -->");
    let end = format!("<!-- /bench:{name} -->");
    let section = format!("{begin}\n{body}\n_Measured {machine}._\n{end}");
    let mut text = if existing.is_empty() {
        HEADER.to_string()
    } else {
        existing
    };
    match (text.find(&begin), text.find(&end)) {
        (Some(a), Some(b)) if b > a => text.replace_range(a..b + end.len(), &section),
        _ => {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push('\n');
            text.push_str(&section);
            text.push('\n');
        }
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}
