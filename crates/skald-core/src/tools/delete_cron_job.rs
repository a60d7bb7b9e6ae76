//! delete_cron_job: delete a scheduled job and its runs' records. Destructive, so it is
//! its own tool rather than a mode of toggle_item.

use super::{ToolCx, store_err};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use skald_api::tool_args;
use skald_api::{Tool, ToolCategory, ToolResult, tool_names as tn};

pub struct DeleteCronJob;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    job_id: i64,
}

impl DeleteCronJob {
    pub const NAME: &'static str = tn::DELETE_CRON_JOB;
}

impl<'a> Tool<ToolCx<'a>> for DeleteCronJob {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Delete a scheduled job and its runs' records (see list_items type=cron)."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Config
    }

    fn execute(&self, cx: &ToolCx<'a>, args: Value) -> ToolResult {
        let store = cx.call()?.store;
        let id = tool_args::parse::<Args>(args)?.job_id;
        let job = store.get_job(id).map_err(store_err)?;
        store.delete_job(id).map_err(store_err)?;
        Ok(format!("Deleted scheduled job {id} ({}).", job.name))
    }
}
