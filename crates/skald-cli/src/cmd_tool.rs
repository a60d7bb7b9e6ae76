//! `skald tool NAME --args JSON [--cwd DIR]`: run one tool through the registry and
//! `drive_execution`, as a turn would. Ctrl-C is /stop.

use crate::exit;
use crate::fail::{Fail, finish};
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
    sandbox: skald_core::sandbox::SandboxSettings,
) -> u8 {
    finish(
        "skald tool",
        tool(data_dir, config, name, args, cwd, approve, sandbox).await,
    )
}

async fn tool(
    data_dir: &skald_core::DataDir,
    config: &skald_core::Config,
    name: &str,
    args: &str,
    cwd: Option<&Path>,
    approve: bool,
    sandbox: skald_core::sandbox::SandboxSettings,
) -> Result<u8, Fail> {
    // The registry is Skald's own, not this command's: its failure reads as Skald's.
    let registry = builtin_registry().map_err(|e| Fail::failed(format!("skald: {e}")).bare())?;
    let args = parse_args(args).map_err(Fail::usage)?;
    let cwd = match cwd {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir().map_err(|e| {
            Fail::usage(format!(
                "cannot read the current directory: {e}; pass --cwd"
            ))
        })?,
    };
    let scope = direct::prepare(&registry, name, &args, &cwd).map_err(Fail::usage)?;

    // The same gate as an agent's call: a deny always stops it; a call that needs
    // approval runs only with --approve, the user's explicit yes.
    let store = skald_store::Store::open(data_dir.db_path()).map_err(Fail::failed)?;
    let withheld = skald_core::withheld::Withheld::for_data_dir(data_dir, config);
    let ctx = RunContext {
        group: "default".to_string(),
        agent_id: "user".to_string(),
        working_dir: scope.working_dir().to_path_buf(),
        protected: withheld.folders(),
        hidden_env: withheld.env(),
        hidden_from_commands: withheld.from_commands(),
        sandbox,
        ..RunContext::default()
    };
    let approval::Checked { decision, path } = approval::check_call(&store, &ctx, name, &args);
    match decision.action {
        RuleAction::Deny => {
            return Err(Fail::rejected(format!("denied by {}", decision.reason)));
        }
        RuleAction::Require if !approve => {
            return Err(Fail::rejected(format!(
                "`{name}` needs approval ({}); pass --approve to run it",
                decision.reason
            )));
        }
        RuleAction::Require | RuleAction::Allow => {}
    }

    // A web tool gets the person's [web] settings, the hosts their rules name and the
    // search API's key; other tools never open the secrets.
    let secrets = matches!(
        name,
        skald_api::tool_names::WEB_FETCH | skald_api::tool_names::WEB_SEARCH
    )
    .then(|| skald_secrets::Secrets::open(data_dir.root()).ok())
    .flatten();
    let web = approval::web::web_access(&store, &ctx, name, &config.web, secrets.as_ref());
    let scope = scope
        .with_web(web)
        .with_lsp(approval::lsp_setup(
            &store,
            &ctx,
            name,
            &args,
            config.lsp.setup(),
        ))
        .with_excluded(approval::denied_paths(&store, &ctx, name))
        .with_checked_path(path)
        .with_hidden_env(ctx.hidden_env.clone())
        .with_sandbox(skald_core::sandbox::for_call(&store, &ctx, name, &args))
        .with_cache_dir(Some(data_dir.cache_dir()));
    let cancel = CancellationToken::new();
    tokio::spawn(stop_on_ctrl_c(cancel.clone()));
    tracing::info!(tool = name, cwd = %scope.working_dir().display(), "skald tool: running");
    let outcome = direct::run(&registry, name, args, scope, &cancel).await;
    // A language server the tool started ends with this command.
    skald_lsp::pool().stop_all().await;
    let Some(outcome) = outcome else {
        return Err(Fail::usage(format!("unknown tool `{name}`")));
    };
    // The tool's own failure or stop is its output, not the command's: no prefix.
    match outcome {
        ExecutionOutcome::Completed(text) => {
            let mut out = std::io::stdout().lock();
            let newline = if text.ends_with('\n') { "" } else { "\n" };
            // A closed pipe (`skald tool … | head`) is not the tool's failure.
            let _ = write!(out, "{text}{newline}").and_then(|_| out.flush());
            Ok(exit::OK)
        }
        ExecutionOutcome::Failed(msg) => Err(Fail::failed(format!("error: {msg}")).bare()),
        ExecutionOutcome::Cancelled => Err(Fail::with_code(exit::CANCELLED, "cancelled").bare()),
        ExecutionOutcome::Rejected(msg) => {
            Err(Fail::with_code(exit::REJECTED, format!("rejected: {msg}")).bare())
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
