//! read_mcp_resource: the resources an activated MCP server offers — listed without a
//! `uri`, read with one (docs/mcp.md "Resources"). Offered by the turn only while the
//! agent has activated a server that has resources, so chats without any do not carry
//! its definition.

use super::{Call, Cooperative, ToolCx, outcome};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use skald_api::tool_args;
use skald_api::{
    Audience, ExecutionOutcome, Tool, ToolCategory, ToolError, ToolExecution, tool_names as tn,
};

pub struct ReadMcpResource;

impl ReadMcpResource {
    pub const NAME: &'static str = tn::READ_MCP_RESOURCE;
}

// The arguments' doc comments are the descriptions the model reads.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// The server's name
    server: String,
    /// The resource's URI, from the list
    uri: Option<String>,
}

/// Most resources one listing shows.
const LISTED: usize = 200;

impl<'a> Tool<ToolCx<'a>> for ReadMcpResource {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Read a resource of an MCP server you activated (a file, a record, a page it \
         exposes). Without `uri`, lists the server's resources with their URIs."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Introspection
    }

    /// Not in the static list: `turn_tools` adds it when an activated server has resources.
    fn offered_to(&self, _who: &Audience) -> bool {
        false
    }

    fn run<'s>(&'s self, cx: &'s ToolCx<'a>, args: Value) -> Box<dyn ToolExecution + 's> {
        Box::new(Cooperative::new(async move {
            match cx.call() {
                Ok(call) => outcome(read(call, args).await),
                Err(e) => ExecutionOutcome::Failed(e.to_string()),
            }
        }))
    }
}

async fn read(call: &Call<'_>, args: Value) -> Result<String, ToolError> {
    let args: Args = tool_args::parse(args)?;
    let server = args.server.as_str();
    let uri = args.uri.as_deref().unwrap_or("");
    let engine = call
        .engine
        .ok_or_else(|| ToolError::failed("MCP servers are not available in this run"))?;
    // Only a server this agent activated: the others' resources are not its to read.
    let granted = call
        .store
        .granted_groups(call.session_id, call.stack_id)
        .map_err(super::store_err)?;
    if !granted.iter().any(|g| g == server) {
        return Err(ToolError::failed(format!(
            "activate `{server}` first (activate_tools {{\"groups\": [\"{server}\"]}})"
        )));
    }
    let mcp = &engine.mcp;
    if uri.is_empty() {
        let list = mcp.manager.resources(server);
        if list.is_empty() {
            return Ok(format!("`{server}` offers no resources (or is not ready)."));
        }
        // A server may list thousands: the first ones, and how many more there are.
        let mut lines: Vec<String> = list
            .iter()
            .take(LISTED)
            .map(|r| {
                let mut line = format!("- {} — {}", r.uri, r.title.as_deref().unwrap_or(&r.name));
                if let Some(m) = &r.mime_type {
                    line.push_str(&format!(" ({m})"));
                }
                if !r.description.is_empty() {
                    line.push_str(&format!(": {}", r.description));
                }
                line
            })
            .collect();
        if list.len() > LISTED {
            lines.push(format!("… and {} more", list.len() - LISTED));
        }
        return Ok(format!("Resources of `{server}`:\n{}", lines.join("\n")));
    }
    let text = mcp
        .manager
        .read_resource(server, uri, call.cancel)
        .await
        .map_err(|e| ToolError::failed(e.to_string()))?;
    mcp.read(server, uri).await;
    Ok(text)
}
