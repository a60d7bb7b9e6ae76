//! show_file_to_user: open a file in the user's viewer (every kind the viewer shows,
//! LaTeX compiled from its source). Offered where someone is looking: not in background
//! sessions.

use super::ToolCx;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use skald_api::events::Event;
use skald_api::tool_args;
use skald_api::{
    Audience, Tool, ToolCategory, ToolDescriptionLength, ToolError, ToolResult, ToolScope,
    tool_names as tn,
};

pub struct ShowFileToUser;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
}

impl ShowFileToUser {
    pub const NAME: &'static str = tn::SHOW_FILE_TO_USER;
}

impl<'a> Tool<ToolCx<'a>> for ShowFileToUser {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Open a file in the user's viewer: Markdown, code, text, images, SVG, PDF, HTML, and \
         LaTeX. For LaTeX pass the .tex source, never a built .pdf: only the source is \
         compiled, cached and watched for changes."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn describe(&self, args: &Value, _length: ToolDescriptionLength) -> String {
        match args
            .get("path")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            Some(path) => format!("{} `{path}`", tn::SHOW_FILE_TO_USER),
            None => tn::SHOW_FILE_TO_USER.to_string(),
        }
    }

    fn target_path(&self, args: &Value) -> Option<String> {
        args.get("path").and_then(Value::as_str).map(str::to_string)
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Session
    }

    /// It changes nothing in the chat's folder or Skald's settings.
    fn in_plan_mode(&self) -> bool {
        true
    }

    fn offered_to(&self, who: &Audience) -> bool {
        !who.background
    }

    fn execute(&self, cx: &ToolCx<'a>, args: Value) -> ToolResult {
        let call = cx.call()?;
        let scope = ToolScope::current();
        let dir = scope.working_dir();
        let args: Args = tool_args::parse(args)?;
        let raw = args.path.trim();
        let path = skald_base::path::resolve_in(raw, dir);
        if !path.is_file() {
            return Err(ToolError::failed(format!("there is no file at `{raw}`")));
        }
        let shown = skald_base::path::relativize_for_display(&path, dir);
        (call.emit)(Event::OpenFile {
            path: shown.clone(),
        });
        let hint = if path.extension().is_some_and(|e| e == "pdf")
            && path.with_extension("tex").is_file()
        {
            " It is a built PDF: show the .tex source instead to have it compiled and kept up \
             to date as its inputs change."
        } else {
            ""
        };
        Ok(format!("Opened `{shown}` in the user's viewer.{hint}"))
    }
}
