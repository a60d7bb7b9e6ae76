//! image_generate: one image from the running image provider, saved under the working
//! directory's `images/`, opened in the viewer; the answer is its path. Offered while the
//! image-generation plugin runs, though its category is Config (docs/tools.md,
//! "Which tools an agent is offered"). A /stop drops the request, like any tool's I/O.

use super::{AnyObject, Call, ToolCx};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use skald_api::tool_args;
use skald_api::events::Event;
use skald_api::{
    Audience, BoxToolFuture, Tool, ToolCategory, ToolError, ToolScope, tool_names as tn,
};

pub struct ImageGenerate;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    provider_id: String,
    prompt: String,
    extra_params: Option<AnyObject>,
}

impl ImageGenerate {
    pub const NAME: &'static str = tn::IMAGE_GENERATE;
}

impl<'a> Tool<ToolCx<'a>> for ImageGenerate {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Generate an image with a configured provider; returns its path and URL."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Config
    }

    fn offered_to(&self, who: &Audience) -> bool {
        who.images
    }

    fn execute_async<'s>(&'s self, cx: &'s ToolCx<'a>, args: Value) -> BoxToolFuture<'s> {
        Box::pin(async move {
            let call = cx.call()?;
            let args: Args = tool_args::parse(args)?;
            generate(call, args).await.map_err(ToolError::Failed)
        })
    }
}

async fn generate(call: &Call<'_>, args: Args) -> Result<String, String> {
    let engine = call
        .engine
        .ok_or("image generation is not available in this run")?;
    let provider = engine
        .plugins
        .images
        .provider()
        .ok_or("no image provider is on; the user can configure the image-generation plugin")?;
    let wanted = args.provider_id.as_str();
    if !wanted.is_empty() && wanted != provider.id {
        return Err(format!(
            "no image provider `{wanted}`; the one available is `{}`",
            provider.id
        ));
    }
    let prompt = args.prompt.trim();
    if prompt.is_empty() {
        return Err("invalid argument `prompt`: must not be empty".into());
    }
    let key = provider
        .api_key
        .as_deref()
        .map(|k| crate::mcp::resolve(k, engine.secrets().as_deref()))
        .transpose()?;
    let extra = args.extra_params.map(|e| e.0).unwrap_or_default();
    let image = skald_llm::images::generate_image(&skald_llm::images::ImageRequest {
        base_url: &provider.base_url,
        api_key: key.as_deref(),
        model: &provider.model,
        prompt,
        size: provider.size.as_deref(),
        extra,
        timeout: provider.timeout,
    })
    .await
    .map_err(|e| e.to_string())?;
    let dir = ToolScope::current().working_dir().join("images");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let stamp = skald_store::now_ms();
    let slug = slug(prompt);
    let name = format!(
        "{}-{stamp}.{}",
        if slug.is_empty() { "image" } else { &slug },
        image.extension
    );
    let path = dir.join(&name);
    skald_base::atomic::write_atomic(&path, &image.bytes)
        .map_err(|e| format!("cannot save {}: {e}", path.display()))?;
    let relative = format!("images/{name}");
    (call.emit)(Event::OpenFile {
        path: relative.clone(),
    });
    let mut out = json!({
        "path": relative,
        "url": format!("file://{}", path.display()),
    });
    if let Some(revised) = image.revised_prompt {
        out["revised_prompt"] = Value::String(revised);
    }
    Ok(out.to_string())
}

/// The file name's stem: the prompt's first six words, lower-case ASCII, dash-joined.
fn slug(prompt: &str) -> String {
    prompt
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect::<String>()
        .split('-')
        .filter(|p| !p.is_empty())
        .take(6)
        .collect::<Vec<_>>()
        .join("-")
}
