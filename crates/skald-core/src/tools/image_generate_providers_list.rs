//! image_generate_providers_list: the image providers image_generate can use. Offered, like
//! image_generate, while the image-generation plugin runs.

use super::ToolCx;
use serde_json::{Value, json};
use skald_api::{Audience, Tool, ToolCategory, ToolResult, tool_names as tn};

pub struct ImageGenerateProvidersList;

impl ImageGenerateProvidersList {
    pub const NAME: &'static str = tn::IMAGE_GENERATE_PROVIDERS_LIST;
}

impl<'a> Tool<ToolCx<'a>> for ImageGenerateProvidersList {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "List the image-generation providers image_generate can use."
    }

    fn parameters_schema(&self) -> Value {
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Introspection
    }

    /// It changes nothing in the chat's folder or Skald's settings.
    fn in_plan_mode(&self) -> bool {
        true
    }

    fn offered_to(&self, who: &Audience) -> bool {
        who.images
    }

    fn execute(&self, cx: &ToolCx<'a>, _args: Value) -> ToolResult {
        let engine = cx
            .call()?
            .engine_or("plugins are not available in this run")?;
        let providers: Vec<Value> = engine
            .plugins
            .images
            .provider()
            .into_iter()
            .map(|p| json!({"provider_id": p.id, "model": p.model, "size": p.size}))
            .collect();
        Ok(json!({ "providers": providers }).to_string())
    }
}
