//! update_scratchpad: set a key on the session's shared scratchpad, which every agent of
//! the session reads in its prompt.

use super::{ToolCx, store_err};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use skald_api::tool_args;
use skald_api::{Tool, ToolCategory, ToolError, ToolResult, tool_names as tn};

pub struct UpdateScratchpad;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    key: String,
    value: String,
}

impl UpdateScratchpad {
    pub const NAME: &'static str = tn::UPDATE_SCRATCHPAD;
}

impl<'a> Tool<ToolCx<'a>> for UpdateScratchpad {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Set a key on the session's shared scratchpad, seen by every agent of the session. An \
         empty value removes the key."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Session
    }

    /// It changes nothing in the chat's folder or Skald's settings.
    fn in_plan_mode(&self) -> bool {
        true
    }

    fn execute(&self, cx: &ToolCx<'a>, args: Value) -> ToolResult {
        let call = cx.call()?;
        let args: Args = tool_args::parse(args)?;
        let key = args.key.trim();
        if key.is_empty() {
            return Err(ToolError::invalid("key", "must not be empty"));
        }
        let value = args.value.as_str();
        call.store
            .set_scratchpad(call.session_id, key, value)
            .map_err(store_err)?;
        Ok(if value.is_empty() {
            format!("Removed `{key}` from the scratchpad.")
        } else {
            format!("Scratchpad `{key}` set; every agent of this session sees it.")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_support::{call, run};
    use crate::turn::scratchpad_message;
    use serde_json::json;
    use skald_api::CancellationToken;
    use skald_store::Store;

    #[test]
    fn scratchpad_round_trip() {
        let store = Store::open_in_memory().unwrap();
        let s = store
            .create_session(&skald_store::NewSession::default())
            .unwrap();
        assert_eq!(scratchpad_message(&store, s.id).unwrap(), None);
        let cancel = CancellationToken::new();
        let ctx = call(&store, s.id, &cancel, &|_| {});
        run(
            ctx,
            tn::UPDATE_SCRATCHPAD,
            &json!({"key": "goal", "value": "ship"}),
        )
        .unwrap();
        let msg = scratchpad_message(&store, s.id).unwrap().unwrap();
        assert!(msg.ends_with("- goal: ship\n"), "{msg}");
        assert!(
            run(
                ctx,
                tn::UPDATE_SCRATCHPAD,
                &json!({"key": " ", "value": "x"})
            )
            .is_err()
        );
    }
}
