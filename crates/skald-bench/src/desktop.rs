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
    let total = |case: &str| v[case]["total_mb"].as_f64().unwrap_or(f64::NAN);
    let part = |case: &str, process: &str| v[case]["by_mb"][process].as_f64().unwrap_or(0.0);
    let elements = |case: &str| v[case]["elements"].as_u64().unwrap_or(0);
    let (hello, hello_cpu) = (total("hello"), total("hello_cpu"));
    let mut s = String::from("## Desktop app: start and memory\n\n");
    s.push_str(&format!(
        "The release `skald-desktop` in Xvfb, driven by tauri-driver and WebKitWebDriver, median of {RUNS} launches, against Tauri 2's hello-world (`crates/tauri-hello`: the vanilla template's static page, no commands, the same Tauri build and features, WebKitGTK and window size) launched the same way. Start: from the WebDriver session request (the app is launched) to its sessions list on screen (the hello-world's page). Memory: the proportional set size (PSS: shared pages divided among the processes that share them, so the WebKit libraries count once) of the app and every process it started (WebKitGTK's web and network processes), 2 s after the window is ready (*empty*), then 2 s after opening a chat of 10,000 stored messages; the hello-world 2 s after its page is up. Elements: the page's DOM element count.\n\n\
         Each is measured in both ways WebKitGTK can draw a page: composited with OpenGL (the hello-world as Tauri ships it; Skald with `[desktop] rendering = \"gpu\"`) and painted in software (Skald's default `auto` on a machine without a GPU driver, as this one: OpenGL here would be Mesa's llvmpipe, on the CPU; the hello-world with `WEBKIT_DISABLE_COMPOSITING_MODE=1`). Goal: Skald as it ships, with the chat open, ≤ 1.3× the hello-world as Tauri ships it.\n\n"
    ));
    s.push_str(
        "| case | Skald (default; software here) | Skald, `rendering = \"gpu\"` | hello-world as shipped (OpenGL) | hello-world in software |\n| --- | --- | --- | --- | --- |\n",
    );
    s.push_str(&format!(
        "| start to interactive | {:.0} ms | {:.0} ms | {:.0} ms | {:.0} ms |\n",
        num("skald_start_ms"),
        num("skald_gpu_start_ms"),
        num("hello_start_ms"),
        num("hello_cpu_start_ms")
    ));
    for (label, case, gpu_case) in [
        ("memory, empty", "skald_empty", "skald_gpu_empty"),
        (
            "memory, 10,000-message chat open",
            "skald_chat",
            "skald_gpu_chat",
        ),
    ] {
        s.push_str(&format!(
            "| {label} | {:.0} MB | {:.0} MB | {hello:.0} MB | {hello_cpu:.0} MB |\n",
            total(case),
            total(gpu_case)
        ));
    }
    let (chat, gpu_chat) = (total("skald_chat"), total("skald_gpu_chat"));
    s.push_str(&format!(
        "\nWith the chat open: Skald as it ships {:.2}× the hello-world as Tauri ships it (goal ≤ 1.3×); drawn the same way, {:.2}× in software and {:.2}× with OpenGL. Start, as shipped: {:.2}×.\n",
        chat / hello,
        chat / hello_cpu,
        gpu_chat / hello,
        num("skald_start_ms") / num("hello_start_ms")
    ));
    let cases = [
        ("skald_empty", "Skald, empty"),
        ("skald_chat", "Skald, chat open"),
        ("skald_gpu_chat", "Skald `gpu`, chat open"),
        ("hello", "hello-world"),
        ("hello_cpu", "hello-world in software"),
    ];
    s.push_str("\nWhere the memory is (PSS in MB of the median run, by process):\n\n| process |");
    for (_, label) in &cases {
        s.push_str(&format!(" {label} |"));
    }
    s.push_str("\n| --- |");
    s.push_str(&" --- |".repeat(cases.len()));
    s.push('\n');
    let mut names: Vec<String> = cases
        .iter()
        .filter_map(|(case, _)| v[*case]["by_mb"].as_object())
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
        s.push_str(&format!("| {label} |"));
        for (case, _) in &cases {
            s.push_str(&format!(" {:.0} |", part(case, name)));
        }
        s.push('\n');
    }
    s.push_str("| DOM elements |");
    for (case, _) in &cases {
        s.push_str(&format!(" {} |", elements(case)));
    }
    s.push('\n');
    Ok(s)
}
