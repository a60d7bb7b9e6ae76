//! The desktop app: start to interactive and the memory of all its processes, empty and
//! with a 10,000-message chat open, against Tauri 2's hello-world window (crates/tauri-hello:
//! the same Tauri and WebKitGTK, the same window size, a static page) started the same way.
//! Memory is also broken down by process. The driving is
//! `ui/e2e/desktop-bench.mjs` (tauri-driver, WebKitWebDriver) in Xvfb and a private D-Bus
//! session; this runs it and writes the table.

use anyhow::{Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

const RUNS: usize = 3;

pub fn run(skald: &Path) -> Result<String> {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let desktop = skald.with_file_name("skald-desktop");
    let hello = skald.with_file_name("tauri-hello");
    for bin in [&desktop, &hello] {
        if !bin.is_file() {
            bail!(
                "no {}: build it with `cargo build --release -p skald-desktop -p tauri-hello`",
                bin.display()
            );
        }
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
            .env("TAURI_HELLO_BIN", std::fs::canonicalize(&hello)?)
            .env("SKALD_BIN", std::fs::canonicalize(skald)?),
        "ui/e2e/desktop-bench.mjs under dbus-run-session and xvfb-run",
    )?;
    let num = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let (start, hello_start) = (num("skald_start_ms"), num("hello_start_ms"));
    let total = |case: &str| v[case]["total_mb"].as_f64().unwrap_or(f64::NAN);
    let part = |case: &str, process: &str| v[case]["by_mb"][process].as_f64().unwrap_or(0.0);
    let elements = |case: &str| v[case]["elements"].as_u64().unwrap_or(0);
    let hello_total = total("hello");
    let mut s = String::from("## Desktop app: start and memory\n\n");
    s.push_str(&format!(
        "The release `skald-desktop` in Xvfb, driven by tauri-driver and WebKitWebDriver, median of {RUNS} launches, against Tauri 2's hello-world (`crates/tauri-hello`: the vanilla template's static page, no commands, the same Tauri build and features, WebKitGTK and window size) launched the same way. Start: from the WebDriver session request (the app is launched) to its sessions list on screen (the hello-world's page). Memory: the proportional set size (PSS: shared pages divided among the processes that share them, so the WebKit libraries count once) of the app and every process it started (WebKitGTK's web and network processes), 2 s after the window is ready (*empty*), then 2 s after opening a chat of 10,000 stored messages; the hello-world 2 s after its page is up. Elements: the page's DOM element count. Goal: with the chat open ≤ 1.3× the hello-world.\n\n"
    ));
    s.push_str("| case | Skald | Tauri hello-world | ratio |\n| --- | --- | --- | --- |\n");
    s.push_str(&format!(
        "| start to interactive | {start:.0} ms | {hello_start:.0} ms | {:.2}× |\n",
        start / hello_start
    ));
    for (label, case) in [
        ("memory, empty", "skald_empty"),
        ("memory, 10,000-message chat open", "skald_chat"),
    ] {
        s.push_str(&format!(
            "| {label} | {:.0} MB | {hello_total:.0} MB | {:.2}× |\n",
            total(case),
            total(case) / hello_total
        ));
    }
    s.push_str(
        "\nWhere the memory is (PSS in MB of the median run, by process):\n\n\
         | process | Skald, empty | Skald, chat open | Tauri hello-world |\n| --- | --- | --- | --- |\n",
    );
    let mut names: Vec<String> = ["skald_empty", "skald_chat", "hello"]
        .iter()
        .filter_map(|case| v[*case]["by_mb"].as_object())
        .flat_map(|m| m.keys().cloned())
        .collect();
    names.sort();
    names.dedup();
    for name in &names {
        let label = if name == "app" {
            "the app's own process"
        } else {
            name.as_str()
        };
        s.push_str(&format!(
            "| {label} | {:.0} | {:.0} | {:.0} |\n",
            part("skald_empty", name),
            part("skald_chat", name),
            part("hello", name)
        ));
    }
    s.push_str(&format!(
        "| DOM elements | {} | {} | {} |\n",
        elements("skald_empty"),
        elements("skald_chat"),
        elements("hello")
    ));
    Ok(s)
}
