//! The desktop app: start to interactive and the memory of all its processes with a
//! 10,000-message chat open, against WebKitGTK's MiniBrowser (the same web engine, no app)
//! started the same way and showing the same messages as a static page. The driving is
//! `ui/e2e/desktop-bench.mjs` (tauri-driver, WebKitWebDriver) in Xvfb and a private D-Bus
//! session; this runs it and writes the table.

use anyhow::{Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

const RUNS: usize = 3;

pub fn run(skald: &Path) -> Result<String> {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let desktop = skald.with_file_name("skald-desktop");
    if !desktop.is_file() {
        bail!(
            "no {}: build it with `cargo build --release -p skald-desktop`",
            desktop.display()
        );
    }
    let v = crate::timing::json_result(
        Command::new("dbus-run-session")
            .args([
                "--",
                "xvfb-run",
                "-a",
                "-s",
                "-screen 0 1400x900x24",
                "node",
            ])
            .arg(repo.join("ui/e2e/desktop-bench.mjs"))
            .arg(RUNS.to_string())
            .env("SKALD_DESKTOP_BIN", std::fs::canonicalize(&desktop)?)
            .env("SKALD_BIN", std::fs::canonicalize(skald)?),
        "ui/e2e/desktop-bench.mjs under dbus-run-session and xvfb-run",
    )?;
    let num = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let (start, ref_start) = (num("skald_start_ms"), num("reference_start_ms"));
    let (rss, ref_rss) = (num("skald_rss_mb"), num("reference_rss_mb"));
    let mut s = String::from("## Desktop app: start and memory\n\n");
    s.push_str(&format!(
        "The release `skald-desktop` in Xvfb, driven by tauri-driver and WebKitWebDriver, median of {RUNS} launches. Start: from the WebDriver session request (the app is launched) to its sessions list on screen. Memory: the proportional set size (PSS: shared pages divided among the processes that share them, so the WebKit libraries count once) of the app and every process it started (WebKitGTK's web and network processes), 2 s after opening a chat of 10,000 stored messages. The reference is WebKitGTK's own MiniBrowser under the same WebDriver: started to a page of its own, then showing the same 10,000 messages as one static page. Goals: start ≤ 1.5 s, memory ≤ 120 MB.\n\n"
    ));
    s.push_str("| case | Skald | MiniBrowser | ratio |\n| --- | --- | --- | --- |\n");
    s.push_str(&format!(
        "| start to interactive | {start:.0} ms | {ref_start:.0} ms | {:.2}× |\n",
        start / ref_start
    ));
    s.push_str(&format!(
        "| memory, 10,000-message chat open | {rss:.0} MB | {ref_rss:.0} MB | {:.2}× |\n",
        rss / ref_rss
    ));
    Ok(s)
}
