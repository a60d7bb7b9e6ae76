//! register_mcp: store an MCP server and, in a run with an engine, connect to it now and
//! say how that went.

use super::{Call, Cooperative, ToolCx, outcome, store_err};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use skald_api::tool_args;
use skald_api::{ExecutionOutcome, Tool, ToolCategory, ToolError, ToolExecution, tool_names as tn};

pub struct RegisterMcp;

// The schema and the check of a call's arguments; the registration itself is read by
// `mcp::record_from_args`, which `skald mcp add` shares.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Args {
    /// Short id: letters, digits, - and _.
    name: String,
    transport: Option<Transport>,
    command: Option<String>,
    args: Option<Vec<String>>,
    env: Option<std::collections::BTreeMap<String, String>>,
    url: Option<String>,
    api_key: Option<String>,
    description: Option<String>,
    friendly_name: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Transport {
    Stdio,
    Http,
}

impl RegisterMcp {
    pub const NAME: &'static str = tn::REGISTER_MCP;
}

impl<'a> Tool<ToolCx<'a>> for RegisterMcp {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Register an MCP server and connect to it now; says whether it is ready and which \
         tools it has. stdio: `command` + `args` (+ `env`); http: `url` (+ `api_key` as a \
         reference like ${env:NAME}, never the token itself)."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Config
    }

    /// The wait for the server watches the turn's stop token and says it was stopped.
    fn run<'s>(&'s self, cx: &'s ToolCx<'a>, args: Value) -> Box<dyn ToolExecution + 's> {
        Box::new(Cooperative::new(async move {
            match cx.call() {
                Ok(call) => outcome(register(call, &args).await),
                Err(e) => ExecutionOutcome::Failed(e.to_string()),
            }
        }))
    }
}

async fn register(call: &Call<'_>, args: &Value) -> Result<String, ToolError> {
    tool_args::parse::<Args>(args.clone())?;
    let rec = crate::mcp::record_from_args(args).map_err(ToolError::Failed)?;
    let rec = call.store.upsert_mcp_server(&rec).map_err(store_err)?;
    let Some(engine) = call.engine else {
        return Ok(format!(
            "Registered MCP server `{}`; it connects when Skald next starts.",
            rec.name
        ));
    };
    engine.mcp.start(&rec);
    let status = tokio::select! {
        _ = call.cancel.cancelled() => {
            return Err(ToolError::failed("stopped before the server was ready"));
        }
        s = engine.mcp.manager.wait_ready(&rec.name, engine.mcp.connect_timeout) => s,
    };
    let name = &rec.name;
    Ok(match status {
        Some(skald_mcp::Status::Ready { .. }) => {
            let tools: Vec<String> = engine
                .mcp
                .manager
                .tools(name)
                .into_iter()
                .map(|t| t.name)
                .collect();
            format!(
                "Registered `{name}`: ready with {} tools ({}). Activate it with activate_tools \
                 {{\"groups\": [\"{name}\"]}} to use them.",
                tools.len(),
                tools.join(", ")
            )
        }
        Some(skald_mcp::Status::Failed { error, log_tail }) => format!(
            "Registered `{name}`, but it failed to start: {error}{}",
            if log_tail.is_empty() {
                String::new()
            } else {
                format!("\nIts last output:\n{log_tail}")
            }
        ),
        Some(s @ skald_mcp::Status::NeedsLogin { .. }) => format!(
            "Registered `{name}` ({}): the user signs in with `skald mcp login {name}` (or \
             Sign in in Settings).",
            s.describe()
        ),
        _ => format!("Registered `{name}`; it is still connecting."),
    })
}
