//! write_file: create or replace a whole file, atomically.

use crate::fs::{self, label, path_arg};
use crate::run_blocking;
use crate::text::save;
use serde::Deserialize;
use schemars::JsonSchema;
use skald_api::tool_args;
use serde_json::Value;
use skald_api::{ToolKind, FileAccess, BoxToolFuture, Tool, ToolCategory, ToolDescriptionLength, tool_names as tn};

pub struct WriteFile;

// The arguments' doc comments are the descriptions the model reads.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// File path, relative to the working directory or absolute.
    path: String,
    /// The complete new content.
    content: String,
}

impl WriteFile {
    pub const NAME: &'static str = tn::WRITE_FILE;
}

impl<Cx: ?Sized + Sync> Tool<Cx> for WriteFile {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Create a file or replace its whole content. Parent directories are created. The \
         write is atomic and an existing file keeps its permissions. To change part of a \
         file, use edit_file, insert_at_line or replace_lines instead."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn describe(&self, args: &Value, length: ToolDescriptionLength) -> String {
        label(Tool::<Cx>::name(self), path_arg(args).as_deref(), length)
    }

    fn target_path(&self, args: &Value) -> Option<String> {
        path_arg(args)
    }

    fn execute_async<'a>(&'a self, _cx: &'a Cx, args: Value) -> BoxToolFuture<'a> {
        let written = crate::fs::path_arg(&args);
        crate::then_diagnostics(written, run_blocking(move |scope, _| {
            let Args { path, content } = tool_args::parse(args)?;
            let content = content.as_str();
            let target = fs::target(scope, &path);
            let path = target.shown.clone();
            let existed = save(scope, &target, content)?;
            let lines = content.lines().count();
            Ok(format!(
                "{} {} ({} bytes, {lines} lines)",
                if existed { "Replaced" } else { "Created" },
                fs::relativize_for_display(&path, scope.working_dir()),
                content.len()
            ))
        }))
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Filesystem
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    fn file_access(&self) -> Option<FileAccess> {
        Some(FileAccess::writes())
    }

    fn content_after(&self, args: &Value, _now: Option<&str>, _max_bytes: usize) -> Option<String> {
        tool_args::parse::<Args>(args.clone()).ok().map(|a| a.content)
    }

    fn for_small_models(&self) -> bool {
        true
    }

    fn hook_alias(&self) -> Option<&'static str> {
        Some("Write")
    }

    fn changes_files(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use crate::test_support::{err, ok};

    #[tokio::test]
    async fn creates_then_replaces() {
        let d = tempfile::tempdir().unwrap();
        let out = ok(
            &WriteFile,
            d.path(),
            json!({"path": "new/dir/a.txt", "content": "x\ny\n"}),
        )
        .await;
        assert_eq!(out, "Created new/dir/a.txt (4 bytes, 2 lines)");
        let out = ok(
            &WriteFile,
            d.path(),
            json!({"path": "new/dir/a.txt", "content": "z"}),
        )
        .await;
        assert_eq!(out, "Replaced new/dir/a.txt (1 bytes, 1 lines)");
        assert_eq!(
            std::fs::read_to_string(d.path().join("new/dir/a.txt")).unwrap(),
            "z"
        );
    }

    #[tokio::test]
    async fn a_directory_is_not_overwritten() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        let e = err(&WriteFile, d.path(), json!({"path": "sub", "content": "x"})).await;
        assert!(e.contains("is a directory"), "{e}");
        assert!(d.path().join("sub").is_dir());
    }
}
