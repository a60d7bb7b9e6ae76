//! The client side of the MCP conformance suite (`@modelcontextprotocol/conformance`):
//! the suite starts a scenario's server and runs this with its URL as the last argument
//! and the scenario's name in `MCP_CONFORMANCE_SCENARIO`. It drives Skald's own client
//! (`McpManager`) the way the scenario expects, and accepts every form with its
//! defaults. Run by `crates/skald-mcp/tests/conformance.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test driver: failing loudly is its job

use futures::future::BoxFuture;
use serde_json::{Value, json};
use skald_api::CancellationToken;
use skald_mcp::{Elicited, Host, McpManager, ServerSpec, Status, Transport};
use std::sync::Arc;
use std::time::Duration;

struct AcceptDefaults;

impl Host for AcceptDefaults {
    fn status_changed(&self, server: &str, status: &Status) {
        eprintln!("{server}: {}", status.describe());
    }
    fn elicit(
        &self,
        _server: &str,
        _message: String,
        schema: Value,
        _cancel: CancellationToken,
    ) -> BoxFuture<'static, Elicited> {
        let mut content = json!({});
        skald_mcp::apply_defaults(&mut content, &schema);
        Box::pin(async move { Elicited::Accept(content) })
    }
}

#[tokio::main]
async fn main() {
    let url = std::env::args().next_back().expect("the server URL");
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let mgr = McpManager::new(Arc::new(AcceptDefaults));
    mgr.start(ServerSpec {
        name: "conformance".into(),
        transport: Transport::Http { url, bearer: None },
        connect_timeout: Duration::from_secs(20),
        call_timeout: Duration::from_secs(20),
        log_path: None,
    });
    let status = mgr.wait_ready("conformance", Duration::from_secs(25)).await;
    if !matches!(status, Some(Status::Ready { .. })) {
        eprintln!("not ready: {status:?}");
        std::process::exit(1);
    }
    let never = CancellationToken::new();
    let no_progress = |_: skald_mcp::Progress| {};
    let call = |tool: &'static str, args: Value| {
        let mgr = mgr.clone();
        let never = never.clone();
        async move {
            let out = mgr
                .call(
                    "conformance",
                    tool,
                    args.as_object().cloned().unwrap_or_default(),
                    &never,
                    &no_progress,
                )
                .await;
            println!("{tool}: {out:?}");
            out
        }
    };
    let ok = match scenario.as_str() {
        "initialize" => true,
        "tools_call" => call("add_numbers", json!({"a": 5, "b": 3})).await.is_ok(),
        "elicitation-sep1034-client-defaults" => {
            call("test_client_elicitation_defaults", json!({}))
                .await
                .is_ok()
        }
        "sse-retry" => call("test_reconnection", json!({})).await.is_ok(),
        other => {
            eprintln!("unknown scenario `{other}`");
            false
        }
    };
    mgr.stop_all();
    std::process::exit(if ok { 0 } else { 1 });
}
