//! activate_tools: bring tool groups into the agent's list from its next step — MCP
//! servers by name, or `config` for Skald's configuration tools (docs/tools.md,
//! "Which tools an agent is offered"; docs/mcp.md, "Lazy tools: `activate_tools`"). For a
//! server still connecting it waits, bounded by the server's connect timeout, so the agent
//! learns whether its tools will be there.

use super::{Call, Cooperative, ToolCx, outcome, store_err};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use skald_api::tool_args;
use skald_api::{
    Audience, ExecutionOutcome, Tool, ToolCategory, ToolError, ToolExecution, tool_names as tn,
};

pub struct ActivateTools;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    #[schemars(length(min = 1))]
    groups: Vec<String>,
}

impl ActivateTools {
    pub const NAME: &'static str = tn::ACTIVATE_TOOLS;
}

impl<'a> Tool<ToolCx<'a>> for ActivateTools {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Bring tool groups into your tool list from the next step: MCP server names, or \
         `config` for Skald's configuration tools."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Config
    }

    /// It changes nothing in the chat's folder or Skald's settings.
    fn in_plan_mode(&self) -> bool {
        true
    }

    /// The way into the lazy groups is always there.
    fn offered_to(&self, _who: &Audience) -> bool {
        true
    }

    /// The wait for servers watches the turn's stop token and says it was stopped.
    fn run<'s>(&'s self, cx: &'s ToolCx<'a>, args: Value) -> Box<dyn ToolExecution + 's> {
        Box::new(Cooperative::new(async move {
            match cx.call() {
                Ok(call) => outcome(activate(call, args).await),
                Err(e) => ExecutionOutcome::Failed(e.to_string()),
            }
        }))
    }
}

async fn activate(call: &Call<'_>, args: Value) -> Result<String, ToolError> {
    let args: Args = tool_args::parse(args)?;
    let groups: Vec<&str> = args.groups.iter().map(String::as_str).collect();
    grant(call, &groups)?;
    let Some(engine) = call.engine else {
        return Ok("Activated; the tools are in your list from your next step.".to_string());
    };
    // Servers still connecting are waited for together, and a /stop ends the wait.
    let waits = futures::future::join_all(groups.iter().map(|g| async move {
        if *g == tn::CONFIG_GROUP {
            None
        } else {
            engine
                .mcp
                .manager
                .wait_ready(g, engine.mcp.connect_timeout)
                .await
        }
    }));
    let statuses = tokio::select! {
        _ = call.cancel.cancelled() => {
            return Err(ToolError::failed("stopped while waiting for the servers"));
        }
        s = waits => s,
    };
    // The chat's folders are the servers' roots from now on (once they are connected,
    // so the change reaches them).
    for g in groups.iter().filter(|g| **g != tn::CONFIG_GROUP) {
        engine.mcp.used_by(g, call.session_id);
    }
    let lines: Vec<String> = groups
        .into_iter()
        .zip(statuses)
        .map(|(g, status)| line(g, status))
        .collect();
    Ok(lines.join("\n"))
}

/// What the agent is told about one group.
fn line(g: &str, status: Option<skald_mcp::Status>) -> String {
    if g == tn::CONFIG_GROUP {
        return "config: Skald's configuration tools are in your list from your next step"
            .to_string();
    }
    match status {
        Some(skald_mcp::Status::Ready { tools }) => {
            format!("{g}: ready; its {tools} tools are in your list from your next step")
        }
        Some(skald_mcp::Status::Failed { error, .. }) => {
            format!("{g}: failed ({error}); its tools arrive if it recovers — Skald keeps retrying")
        }
        Some(skald_mcp::Status::Connecting) => {
            format!("{g}: still connecting; its tools arrive when it is ready")
        }
        Some(s @ skald_mcp::Status::NeedsLogin { .. }) => format!(
            "{g}: {}; the user signs in with `skald mcp login {g}` (or Sign in in Settings), \
             and its tools arrive then",
            s.describe()
        ),
        Some(skald_mcp::Status::Disabled | skald_mcp::Status::NotStarted) | None => {
            format!("{g}: turned off; the user can turn it on")
        }
    }
}

/// Grants the groups, each checked first: `config` and the registered MCP servers (a
/// turned-off server cannot be activated).
fn grant(call: &Call<'_>, groups: &[&str]) -> Result<(), ToolError> {
    for g in groups {
        if *g == tn::CONFIG_GROUP {
            continue;
        }
        match call.store.find_mcp_server(g).map_err(store_err)? {
            Some(s) if s.enabled => {}
            Some(_) => {
                return Err(ToolError::failed(format!(
                    "MCP server `{g}` is turned off; the user can turn it on"
                )));
            }
            None => {
                let servers: Vec<String> = call
                    .store
                    .list_mcp_servers()
                    .map_err(store_err)?
                    .into_iter()
                    .map(|s| s.name)
                    .collect();
                return Err(ToolError::failed(format!(
                    "unknown tool group `{g}`: the groups are `config` (Skald's configuration \
                     tools){}",
                    if servers.is_empty() {
                        "; no MCP servers are configured".to_string()
                    } else {
                        format!(" and the MCP servers {}", servers.join(", "))
                    }
                )));
            }
        }
    }
    for g in groups {
        call.store
            .grant_group(call.session_id, call.stack_id, g)
            .map_err(store_err)?;
    }
    Ok(())
}
