//! find_references: every place the symbol at a place in a file is used, as the language
//! server of the file's language says (docs/lsp.md).

use crate::fs::{label, path_arg};
use crate::lsp::symbol_at;
use serde_json::Value;
use skald_api::tool_args;
use skald_api::{
    BoxToolFuture, FileAccess, Tool, ToolCategory, ToolDescriptionLength, ToolKind, ToolScope,
    tool_names as tn,
};

/// Places listed at most.
const MAX_LISTED: usize = 200;

pub struct FindReferences;

impl FindReferences {
    pub const NAME: &'static str = tn::FIND_REFERENCES;
}

impl<Cx: ?Sized + Sync> Tool<Cx> for FindReferences {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Every place a function, type or variable is used, its definition included, as the \
         language server of the file's language knows them (not text matches: a name \
         shadowed elsewhere is not listed). Give the file, the line and the symbol as written \
         there."
    }

    fn parameters_schema(&self) -> Value {
        // The same place as go_to_definition's.
        tool_args::schema_for::<crate::go_to_definition::Args>()
    }

    fn describe(&self, args: &Value, length: ToolDescriptionLength) -> String {
        match args.get("symbol").and_then(Value::as_str) {
            Some(s) => length.fit(&format!("References to `{s}`")),
            None => label("References in", path_arg(args).as_deref(), length),
        }
    }

    fn target_path(&self, args: &Value) -> Option<String> {
        path_arg(args)
    }

    fn execute_async<'a>(&'a self, _cx: &'a Cx, args: Value) -> BoxToolFuture<'a> {
        Box::pin(async move {
            let args: crate::go_to_definition::Args = tool_args::parse(args)?;
            let scope = ToolScope::current();
            let at = symbol_at(&scope, &args).await?;
            let found = at
                .server
                .references(&at.target.opened, at.position, true)
                .await
                .map_err(crate::lsp::lsp_error)?;
            if found.is_empty() {
                return Ok(format!(
                    "The {} language server knows no references to {} at {}:{}.",
                    at.server.language, at.what, at.shown, args.line
                ));
            }
            Ok(format!(
                "{} place{} use {}:\n{}",
                found.len(),
                if found.len() == 1 { "" } else { "s" },
                at.what,
                crate::lsp::locations(&scope, &found, MAX_LISTED)
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
