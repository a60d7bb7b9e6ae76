//! `skald tool NAME --args JSON [--cwd DIR]`: run one tool through the registry and
//! `drive_execution`, as a turn would. Ctrl-C is /stop.

use crate::exit;
use serde_json::Value;
use skald_api::{CancellationToken, ExecutionOutcome};
use skald_core::approval::{self, RunContext};
use skald_core::{builtin_registry, direct};
use skald_store::RuleAction;
use std::io::{Read, Write};
use std::path::Path;

pub async fn run(
    data_dir: &skald_core::DataDir,
    config: &skald_core::Config,
    name: &str,
    args: &str,
    cwd: Option<&Path>,
    approve: bool,
) -> u8 {
    let registry = match builtin_registry() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("skald: {e}");
            return exit::FAILED;
        }
    };
    let args = match parse_args(args) {
        Ok(v) => v,
        Err(msg) => {
            eprintln!("skald tool: {msg}");
            return exit::USAGE;
        }
    };
    let cwd = match cwd {
        Some(dir) => dir.to_path_buf(),
        None => match std::env::current_dir() {
            Ok(dir) => dir,
            Err(e) => {
                eprintln!("skald tool: cannot read the current directory: {e}; pass --cwd");
                return exit::USAGE;
            }
        },
    };
    let scope = match direct::prepare(&registry, name, &args, &cwd) {
        Ok(scope) => scope,
        Err(e) => {
            eprintln!("skald tool: {e}");
            return exit::USAGE;
        }
    };

    // The same gate as an agent's call: a deny always stops it; a call that needs
    // approval runs only with --approve, the user's explicit yes.
    let store = match skald_store::Store::open(data_dir.db_path()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("skald tool: {e}");
            return exit::FAILED;
        }
    };
    let withheld = skald_core::withheld::Withheld::for_data_dir(data_dir, config);
    let ctx = RunContext {
        group: "default".to_string(),
        agent_id: "user".to_string(),
        working_dir: scope.working_dir().to_path_buf(),
        protected: withheld.folders(),
        hidden_env: withheld.env(),
        ..RunContext::default()
    };
    let decision = approval::check(&store, &ctx, name, &args);
    match decision.action {
        RuleAction::Deny => {
            eprintln!("skald tool: denied by {}", decision.reason);
            return exit::REJECTED;
        }
        RuleAction::Require if !approve => {
            eprintln!(
                "skald tool: `{name}` needs approval ({}); pass --approve to run it",
                decision.reason
            );
            return exit::REJECTED;
        }
        RuleAction::Require | RuleAction::Allow => {}
    }

    let scope = scope
        .with_excluded(approval::denied_paths(&store, &ctx, name))
        .with_hidden_env(ctx.hidden_env.clone());
    let cancel = CancellationToken::new();
    tokio::spawn(stop_on_ctrl_c(cancel.clone()));
    tracing::info!(tool = name, cwd = %scope.working_dir().display(), "skald tool: running");
    let Some(outcome) = direct::run(&registry, name, args, scope, &cancel).await else {
        eprintln!("skald tool: unknown tool `{name}`");
        return exit::USAGE;
    };
    match outcome {
        ExecutionOutcome::Completed(text) => {
            let mut out = std::io::stdout().lock();
            let newline = if text.ends_with('\n') { "" } else { "\n" };
            // A closed pipe (`skald tool … | head`) is not the tool's failure.
            let _ = write!(out, "{text}{newline}").and_then(|_| out.flush());
            exit::OK
        }
        ExecutionOutcome::Failed(msg) => {
            eprintln!("error: {msg}");
            exit::FAILED
        }
        ExecutionOutcome::Cancelled => {
            eprintln!("cancelled");
            exit::CANCELLED
        }
    }
}

fn parse_args(raw: &str) -> Result<Value, String> {
    let text = if raw == "-" {
        let mut buf = String::new();
        std::io::stdin()
            .read_to_string(&mut buf)
            .map_err(|e| format!("cannot read arguments from stdin: {e}"))?;
        buf
    } else {
        raw.to_string()
    };
    serde_json::from_str(&text).map_err(|e| format!("--args is not valid JSON: {e}"))
}

/// The first Ctrl-C stops the tool (its `stop()`); a second one leaves at once.
async fn stop_on_ctrl_c(cancel: CancellationToken) {
    if tokio::signal::ctrl_c().await.is_err() {
        return;
    }
    tracing::info!("skald tool: Ctrl-C, stopping");
    cancel.cancel();
    if tokio::signal::ctrl_c().await.is_ok() {
        std::process::exit(i32::from(exit::CANCELLED));
    }
}
