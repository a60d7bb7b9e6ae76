//! check_process: what a background process (`execute_cmd` with `background: true`) has
//! written since the agent last looked, whether it still runs, and stopping it. Only the
//! chat's own processes are reachable (docs/processes.md).

use serde::Deserialize;
use schemars::JsonSchema;
use skald_api::tool_args;
use serde_json::Value;
use skald_api::processes::{ProcessInfo, ProcessStatus};
use skald_api::{ToolKind, 
    BoxToolFuture, Tool, ToolCategory, ToolDescriptionLength, ToolError, ToolScope,
    tool_names as tn,
};

pub struct CheckProcess;

impl CheckProcess {
    pub const NAME: &'static str = tn::CHECK_PROCESS;
}

/// Bytes of new output one check returns (the latest of it): enough for a server's start
/// banner or a test watcher's last run, small enough not to flood the context.
pub const NEW_OUTPUT_BUDGET: usize = 16 * 1024;

// The arguments' doc comments are the descriptions the model reads.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// The id execute_cmd gave.
    #[schemars(range(min = 1))]
    process_id: u32,
    /// End the process (default false).
    stop: Option<bool>,
}

impl<Cx: ?Sized + Sync> Tool<Cx> for CheckProcess {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Check on a process started with execute_cmd background=true: whether it still \
         runs (or how it ended) and the output it wrote since you last checked (at most the \
         latest 16 KB). `stop: true` ends it and everything it started."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn describe(&self, args: &Value, length: ToolDescriptionLength) -> String {
        let id = args.get("process_id").and_then(Value::as_u64).unwrap_or(0);
        let verb = if args.get("stop").and_then(Value::as_bool) == Some(true) {
            "Stop"
        } else {
            "Check"
        };
        length.fit(&format!("{verb} background process {id}"))
    }

    fn execute_async<'a>(&'a self, _cx: &'a Cx, args: Value) -> BoxToolFuture<'a> {
        Box::pin(async move {
            let args: Args = tool_args::parse(args)?;
            let scope = ToolScope::current();
            let slot = scope.processes().ok_or_else(|| {
                ToolError::failed("this run has no background processes (skald tool)")
            })?;
            let fail = |e: skald_api::processes::ProcessError| ToolError::failed(e.to_string());
            if args.stop.unwrap_or(false) {
                slot.table
                    .stop(slot.session_id, args.process_id)
                    .await
                    .map_err(fail)?;
            }
            let (info, new) = slot
                .table
                .unread(slot.session_id, args.process_id, NEW_OUTPUT_BUDGET)
                .map_err(fail)?;
            Ok(report(&info, &new))
        })
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Shell
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }

    fn hook_alias(&self) -> Option<&'static str> {
        Some("BashOutput")
    }

    /// Checking on a process only looks; stopping one changes what runs.
    fn refused_while_planning(&self, args: &Value) -> Option<&'static str> {
        (args.get("stop").and_then(Value::as_bool) == Some(true))
            .then_some("a process can be checked on but not stopped until then")
    }
}

fn report(info: &ProcessInfo, new: &str) -> String {
    let state = match info.status {
        ProcessStatus::Running => "running".to_string(),
        ProcessStatus::Exited | ProcessStatus::Stopped => {
            format!("ended: {}", info.ended.as_deref().unwrap_or("ended"))
        }
    };
    let mut out = format!(
        "[process {}: {state}]\ncommand: {}\n",
        info.id, info.command
    );
    if new.is_empty() {
        out.push_str("(no new output)\n");
    } else {
        out.push_str("--- new output ---\n");
        out.push_str(new);
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}
