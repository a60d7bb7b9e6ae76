//! Running one registry tool directly, outside any agent turn (`skald tool`). The same
//! path a turn takes — validation, `run`, `drive_execution` inside the run's `ToolScope` —
//! minus the model.

use crate::args::{ArgsError, validate_args};
use crate::engine::registry::ToolRegistry;
use crate::tools::ToolCx;
use serde_json::Value;
use skald_api::{CancellationToken, ExecutionOutcome, ToolScope, drive_execution};
use std::path::{Path, PathBuf};

/// Why a direct run could not start. Each is the caller's mistake, not the tool's.
#[derive(Debug, thiserror::Error)]
pub enum DirectRunError {
    #[error("unknown tool `{name}`{}; `skald tools` lists them", suggestion(.close))]
    Unknown { name: String, close: Vec<String> },
    #[error("`{0}` is provided by the engine inside agent turns and cannot be run on its own")]
    AgentOnly(String),
    #[error("arguments must be a JSON object, not {0}")]
    NotAnObject(&'static str),
    #[error("{0}")]
    InvalidArgs(#[from] ArgsError),
    #[error("working directory {path}: {reason}")]
    BadWorkingDir { path: PathBuf, reason: String },
}

fn suggestion(close: &[String]) -> String {
    match close {
        [] => String::new(),
        names => format!(" (did you mean {}?)", names.join(", ")),
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Checks everything that can be checked before the tool starts.
pub fn prepare(
    registry: &ToolRegistry,
    name: &str,
    args: &Value,
    working_dir: &Path,
) -> Result<ToolScope, DirectRunError> {
    if registry.is_engine_tool(name) {
        return Err(DirectRunError::AgentOnly(name.to_string()));
    }
    let Some(tool) = registry.get(name) else {
        return Err(DirectRunError::Unknown {
            name: name.to_string(),
            close: close_names(registry, name),
        });
    };
    if !args.is_object() {
        return Err(DirectRunError::NotAnObject(json_kind(args)));
    }
    validate_args(&tool.parameters_schema(), args)?;
    let dir = std::fs::canonicalize(working_dir).map_err(|e| DirectRunError::BadWorkingDir {
        path: working_dir.to_path_buf(),
        reason: e.to_string(),
    })?;
    if !dir.is_dir() {
        return Err(DirectRunError::BadWorkingDir {
            path: working_dir.to_path_buf(),
            reason: "not a directory".to_string(),
        });
    }
    Ok(ToolScope::new(dir))
}

/// Runs a prepared call to its outcome; `cancel` stops it.
pub async fn run(
    registry: &ToolRegistry,
    name: &str,
    args: Value,
    scope: ToolScope,
    cancel: &CancellationToken,
) -> Option<ExecutionOutcome> {
    let cx = ToolCx::outside_turn();
    let exec = registry.run(name, &cx, args)?;
    Some(scope.run(drive_execution(exec.as_ref(), cancel)).await)
}

/// Registered names that look like a typo of `name`: same prefix or one small edit away.
fn close_names(registry: &ToolRegistry, name: &str) -> Vec<String> {
    registry
        .tools()
        .map(|t| t.name().to_string())
        .filter(|n| !registry.is_engine_tool(n))
        .filter(|n| edit_distance(n, name) <= 2 || (name.len() >= 4 && n.starts_with(name)))
        .take(3)
        .collect()
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use skald_api::{Tool, ToolCategory, ToolResult, tool_names as tn};

    struct Upper;
    impl<'a> Tool<ToolCx<'a>> for Upper {
        fn name(&self) -> &str {
            "upper"
        }
        fn description(&self) -> &str {
            "Upper-cases `text`."
        }
        fn parameters_schema(&self) -> Value {
            json!({"type": "object", "properties": {"text": {"type": "string"}},
                   "required": ["text"], "additionalProperties": false})
        }
        fn execute(&self, _cx: &ToolCx<'a>, args: Value) -> ToolResult {
            let dir = ToolScope::current();
            Ok(format!(
                "{} in {}",
                args["text"].as_str().unwrap_or("").to_uppercase(),
                dir.working_dir().display()
            ))
        }
        fn category(&self) -> ToolCategory {
            ToolCategory::Introspection
        }
    }

    fn registry() -> ToolRegistry {
        let mut r = ToolRegistry::new();
        r.register(Upper).unwrap();
        for (tool, kind) in crate::tools::all() {
            if kind == crate::tools::ToolOrigin::Engine {
                r.register_arc(tool, kind).unwrap();
            }
        }
        r
    }

    #[tokio::test]
    async fn runs_inside_the_given_working_dir() {
        let r = registry();
        let tmp = tempfile::tempdir().unwrap();
        let args = json!({"text": "hi"});
        let scope = prepare(&r, "upper", &args, tmp.path()).unwrap();
        let out = run(&r, "upper", args, scope, &CancellationToken::new())
            .await
            .unwrap();
        let dir = std::fs::canonicalize(tmp.path()).unwrap();
        assert_eq!(
            out,
            ExecutionOutcome::Completed(format!("HI in {}", dir.display()))
        );
    }

    #[test]
    fn refusals_say_why() {
        let r = registry();
        let here = Path::new(".");
        let e = prepare(&r, "uper", &json!({}), here).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown tool `uper` (did you mean upper?); `skald tools` lists them"
        );
        let e = prepare(&r, tn::WRITE_TODOS, &json!({}), here).unwrap_err();
        assert!(matches!(e, DirectRunError::AgentOnly(_)));
        let e = prepare(&r, "upper", &json!([1]), here).unwrap_err();
        assert_eq!(
            e.to_string(),
            "arguments must be a JSON object, not an array"
        );
        let e = prepare(&r, "upper", &json!({"text": 1}), here).unwrap_err();
        assert!(e.to_string().starts_with("argument `text`"), "{e}");
        let e = prepare(
            &r,
            "upper",
            &json!({"text": "a"}),
            Path::new("/no/such/dir"),
        )
        .unwrap_err();
        assert!(matches!(e, DirectRunError::BadWorkingDir { .. }));
    }

    #[test]
    fn edit_distance_basics() {
        assert_eq!(edit_distance("read_file", "read_file"), 0);
        assert_eq!(edit_distance("read_file", "read_fil"), 1);
        assert_eq!(edit_distance("grep", "greps"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
