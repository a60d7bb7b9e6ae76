//! The UI: a 10,000-message chat opened from `skald serve` in headless Chromium, against the
//! same browser painting the same messages as one static page. The browser side is
//! `ui/e2e/bench.mjs` (playwright-core); this runs it and writes the table.

use anyhow::{Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

const RUNS: usize = 5;

pub fn run(skald: &Path) -> Result<String> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../ui/e2e/bench.mjs");
    let dist = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../ui/dist/index.html");
    if !dist.is_file() {
        bail!("the UI is not built: run `npm --prefix ui run build`");
    }
    let v = crate::timing::json_result(
        Command::new("node")
            .arg(&script)
            .arg(RUNS.to_string())
            .env("SKALD_BIN", std::fs::canonicalize(skald)?),
        "ui/e2e/bench.mjs",
    )?;
    let ours = v["skald_open_ms"].as_f64().unwrap_or(f64::NAN);
    let reference = v["reference_open_ms"].as_f64().unwrap_or(f64::NAN);
    let heap = v["skald_js_heap_mb"].as_f64().unwrap_or(f64::NAN);
    let mut s = String::from("## UI: a 10,000-message chat\n\n");
    s.push_str(&format!(
        "A chat of 10,000 stored messages (half of them Markdown answers) opened in the UI from a release `skald serve`, in headless Chromium (Debian's, driven by playwright-core): from the click on the chat to the frame after its last message is in the DOM, median of {RUNS} fresh pages. The UI asks for the last 500 messages (older ones come as the list scrolls up) and keeps only the rows on screen in the DOM. The reference is the same Chromium loading and painting the same 10,000 messages as one static HTML page from a local server (no app, no protocol, no virtualisation). Goal: ≤ 300 ms.\n\n"
    ));
    s.push_str("| case | Skald UI | static page | ratio |\n| --- | --- | --- | --- |\n");
    s.push_str(&format!(
        "| open a 10,000-message chat | {ours:.0} ms | {reference:.0} ms | {:.2}× |\n\n",
        ours / reference
    ));
    s.push_str(&format!(
        "JavaScript heap with the chat open: {heap:.1} MB.\n"
    ));
    Ok(s)
}
