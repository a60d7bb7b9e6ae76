//! go_to_definition: where the symbol at a place in a file is defined, as the language
//! server of the file's language says (docs/lsp.md).

use crate::fs::{label, path_arg};
use crate::lsp::symbol_at;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use skald_api::tool_args;
use skald_api::{
    BoxToolFuture, FileAccess, Tool, ToolCategory, ToolDescriptionLength, ToolKind, ToolScope,
    tool_names as tn,
};

pub struct GoToDefinition;

impl GoToDefinition {
    pub const NAME: &'static str = tn::GO_TO_DEFINITION;
}

// The arguments' doc comments are the descriptions the model reads.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    /// The file the symbol is used in.
    pub path: String,
    /// The line it is on (1-based).
    #[schemars(range(min = 1))]
    pub line: u32,
    /// The symbol as written on that line (its first whole-word occurrence is used).
    pub symbol: Option<String>,
    /// Or its column (1-based, in characters), when the symbol appears twice on the line.
    #[schemars(range(min = 1))]
    pub column: Option<u32>,
}

impl<Cx: ?Sized + Sync> Tool<Cx> for GoToDefinition {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Where a function, type, variable or import is defined, as the language server of \
         the file's language knows it (across files and into libraries). Give the file, the \
         line and the symbol as written there."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn describe(&self, args: &Value, length: ToolDescriptionLength) -> String {
        let symbol = args.get("symbol").and_then(Value::as_str);
        match symbol {
            Some(s) => length.fit(&format!("Definition of `{s}`")),
            None => label("Definition in", path_arg(args).as_deref(), length),
        }
    }

    fn target_path(&self, args: &Value) -> Option<String> {
        path_arg(args)
    }

    fn execute_async<'a>(&'a self, _cx: &'a Cx, args: Value) -> BoxToolFuture<'a> {
        Box::pin(async move {
            let args: Args = tool_args::parse(args)?;
            let scope = ToolScope::current();
            let at = symbol_at(&scope, &args).await?;
            let found = at
                .server
                .definition(&at.target.opened, at.position)
                .await
                .map_err(crate::lsp::lsp_error)?;
            if found.is_empty() {
                return Ok(format!(
                    "The {} language server knows no definition of {} at {}:{}.",
                    at.server.language,
                    at.what,
                    at.shown,
                    args.line
                ));
            }
            Ok(format!(
                "{} is defined at:\n{}",
                at.what,
                crate::lsp::locations(&scope, &found, 20)
            ))
        })
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Filesystem
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Search
    }

    fn file_access(&self) -> Option<FileAccess> {
        Some(FileAccess::reads(None))
    }
}
