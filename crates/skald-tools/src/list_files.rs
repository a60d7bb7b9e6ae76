//! list_files: the tree under a directory, as JSON.

use crate::fs::{self, Flow, Kind};
use crate::run_blocking;
use serde::{Deserialize, Serialize};
use schemars::JsonSchema;
use skald_api::tool_args;
use serde_json::Value;
use skald_api::{ToolKind, FileAccess, 
    BoxToolFuture, Tool, ToolCategory, ToolDescriptionLength, ToolError, tool_names as tn,
};

pub struct ListFiles;

// The arguments' doc comments are the descriptions the model reads.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// Directory to list; default `.`.
    path: Option<String>,
    /// Levels to descend (default 3).
    #[schemars(range(min = 1, max = 20))]
    depth: Option<u64>,
    /// List directories only (default false).
    dirs_only: Option<bool>,
}

impl ListFiles {
    pub const NAME: &'static str = tn::LIST_FILES;
}

/// Entries listed at most; a larger tree is cut with `truncated: true`.
const MAX_ENTRIES: usize = 2000;

#[derive(Serialize)]
struct Listed {
    path: String,
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
}

#[derive(Serialize)]
struct Listing {
    root: String,
    entries: Vec<Listed>,
    truncated: bool,
}

impl<Cx: ?Sized + Sync> Tool<Cx> for ListFiles {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "List files and directories under `path` (default the working directory) down to \
         `depth` levels (default 3), as JSON with paths relative to `path`. Respects \
         .gitignore; skips .git, node_modules, target and secrets. `dirs_only` lists \
         directories only. Use this instead of ls/find."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn describe(&self, args: &Value, length: ToolDescriptionLength) -> String {
        fs::label(
            Tool::<Cx>::name(self),
            args.get("path").and_then(Value::as_str),
            length,
        )
    }

    fn execute_async<'a>(&'a self, _cx: &'a Cx, args: Value) -> BoxToolFuture<'a> {
        run_blocking(move |scope, stop| {
            let args: Args = tool_args::parse(args)?;
            // Walked from the canonical folder the gate checked, not from the argument
            // resolved again.
            let target = fs::target(scope, args.path.as_deref().unwrap_or("."));
            let root = target.opened.clone();
            let depth = fs::in_range("depth", args.depth, 1, 20)?.unwrap_or(3) as usize;
            let dirs_only = args.dirs_only.unwrap_or(false);
            let meta = fs::metadata(&target, "list")?;
            if !meta.is_dir() {
                return Err(ToolError::failed(format!(
                    "{} is a file, not a directory; use read_file",
                    target.shown.display()
                )));
            }
            let mut entries = Vec::new();
            let mut truncated = false;
            let mut stopped = false;
            fs::walker(&root, scope.excluded())
                .max_depth(Some(depth))
                .run(|entry| {
                    if stop.is_stopped() {
                        stopped = true;
                        return Flow::Quit;
                    }
                    if entry.depth() == 0 {
                        return Flow::Continue;
                    }
                    let kind = match entry.kind() {
                        Kind::Dir => "dir",
                        Kind::Symlink => "symlink",
                        Kind::File | Kind::Other => "file",
                    };
                    if dirs_only && kind != "dir" {
                        return Flow::Continue;
                    }
                    if entries.len() == MAX_ENTRIES {
                        truncated = true;
                        return Flow::Quit;
                    }
                    let size = (kind == "file")
                        .then(|| entry.metadata().ok().map(|m| m.len()))
                        .flatten();
                    entries.push(Listed {
                        path: fs::slash_relative(entry.path(), &root),
                        kind,
                        size,
                    });
                    Flow::Continue
                })
                .map_err(|e| {
                    ToolError::failed(format!(
                        "cannot list {}: {}",
                        target.shown.display(),
                        skald_base::io_reason(&e)
                    ))
                })?;
            if stopped {
                return Err(ToolError::failed("listing stopped"));
            }
            let listing = Listing {
                root: fs::relativize_for_display(&target.shown, scope.working_dir()),
                entries,
                truncated,
            };
            serde_json::to_string_pretty(&listing)
                .map_err(|e| ToolError::failed(format!("cannot encode the listing: {e}")))
        })
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Filesystem
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    fn file_access(&self) -> Option<FileAccess> {
        Some(FileAccess::reads(Some(".")))
    }

    fn for_small_models(&self) -> bool {
        true
    }

    fn hook_alias(&self) -> Option<&'static str> {
        Some("LS")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use crate::test_support::{err, ok};

    fn paths(out: &str) -> Vec<String> {
        let v: Value = serde_json::from_str(out).unwrap();
        v["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                format!(
                    "{}:{}",
                    e["type"].as_str().unwrap(),
                    e["path"].as_str().unwrap()
                )
            })
            .collect()
    }

    #[tokio::test]
    async fn lists_sorted_within_depth_skipping_noise() {
        let d = tempfile::tempdir().unwrap();
        for p in [
            "src/a/b/c/deep.rs",
            "src/main.rs",
            "target/x",
            "node_modules/y",
            "secrets/k",
            ".git/HEAD",
            "gen/out.txt",
        ] {
            let path = d.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        std::fs::write(d.path().join(".gitignore"), "gen/\n").unwrap();
        let out = ok(&ListFiles, d.path(), json!({})).await;
        assert_eq!(
            paths(&out),
            [".gitignore", "src", "src/a", "src/a/b", "src/main.rs"].map(|p| if p.contains('.') {
                format!("file:{p}")
            } else {
                format!("dir:{p}")
            })
        );
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["root"], ".");
        assert_eq!(v["truncated"], false);
        assert_eq!(v["entries"][0]["size"], 5);

        let out = ok(
            &ListFiles,
            d.path(),
            json!({"path": "src", "depth": 10, "dirs_only": true}),
        )
        .await;
        assert_eq!(paths(&out), ["dir:a", "dir:a/b", "dir:a/b/c"]);
    }

    #[tokio::test]
    async fn errors() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("f.txt"), "x").unwrap();
        let e = err(&ListFiles, d.path(), json!({"path": "f.txt"})).await;
        assert!(e.contains("is a file"), "{e}");
        let e = err(&ListFiles, d.path(), json!({"path": "missing"})).await;
        assert!(e.contains("no such file"), "{e}");
    }
}
