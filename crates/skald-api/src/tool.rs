//! The `Tool` trait: a catalogue entry that can start invocations (tools.md "Tool Trait").

use crate::category::ToolCategory;
use crate::execution::{SimpleExecution, ToolExecution};
use crate::label::ToolDescriptionLength;
use serde_json::{Value, json};
use std::future::Future;
use std::pin::Pin;

/// Why a tool invocation failed. The message is what the model and the user read, so each
/// variant says what went wrong in words a person can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// An argument is missing, of the wrong type or out of range. Names the field.
    #[error("invalid argument `{field}`: {reason}")]
    InvalidArgument { field: String, reason: String },
    /// The tool ran and could not do what was asked.
    #[error("{0}")]
    Failed(String),
    /// The tool implements neither `execute` nor `execute_async`: a programming error.
    #[error("tool `{0}` has no implementation")]
    NotImplemented(String),
}

impl ToolError {
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        ToolError::InvalidArgument {
            field: field.into(),
            reason: reason.into(),
        }
    }

    pub fn failed(message: impl Into<String>) -> Self {
        ToolError::Failed(message.into())
    }
}

/// What a tool returns: its result text for the model, or why it failed.
pub type ToolResult = Result<String, ToolError>;

/// The future `execute_async` returns.
pub type BoxToolFuture<'a> = Pin<Box<dyn Future<Output = ToolResult> + Send + 'a>>;

/// A tool definition. A live invocation is the `ToolExecution` that `run` returns.
///
/// Sync tools implement `execute` only; async tools implement `execute_async` only. Both
/// are dispatched the same way, through `run`, so every call is cancellable.
pub trait Tool: Send + Sync {
    fn name(&self) -> &str;

    fn description(&self) -> &str;

    /// JSON Schema of the arguments object.
    fn parameters_schema(&self) -> Value;

    /// Label for the UI and notifications, within `length.max_chars()` characters.
    fn describe(&self, _args: &Value, _length: ToolDescriptionLength) -> String {
        self.name().to_string()
    }

    /// The single file this call acts on, if any, so the UI can link to it.
    fn target_path(&self, _args: &Value) -> Option<String> {
        None
    }

    /// Synchronous body. Runs on the executor thread when the execution is first polled,
    /// so it must be quick; anything slow belongs in `execute_async`.
    fn execute(&self, _args: Value) -> ToolResult {
        Err(ToolError::NotImplemented(self.name().to_string()))
    }

    /// Asynchronous body. The default defers `execute` to the first poll (not to the call
    /// of `run`), so a stop before the work starts means the work never starts.
    fn execute_async<'a>(&'a self, args: Value) -> BoxToolFuture<'a> {
        Box::pin(async move { self.execute(args) })
    }

    /// Starts one invocation. The default is a `SimpleExecution` over `execute_async`,
    /// whose stop drops the work future and so aborts its I/O. Tools that must tear down
    /// remote work override this with their own `ToolExecution`.
    fn run<'a>(&'a self, args: Value) -> Box<dyn ToolExecution + 'a> {
        Box::new(SimpleExecution::new(self.execute_async(args)))
    }

    fn category(&self) -> ToolCategory;

    /// Visible only to sub-agents (depth ≥ 1).
    fn sub_agents_only(&self) -> bool {
        false
    }

    /// Visible only to the root agent (depth 0).
    fn root_agent_only(&self) -> bool {
        false
    }

    /// The OpenAI function-calling definition offered to the model.
    fn openai_definition(&self) -> Value {
        json!({
            "type": "function",
            "function": {
                "name": self.name(),
                "description": self.description(),
                "parameters": self.parameters_schema(),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::ExecutionOutcome;

    struct Echo;
    impl Tool for Echo {
        fn name(&self) -> &str {
            "echo"
        }
        fn description(&self) -> &str {
            "Echoes `text`."
        }
        fn parameters_schema(&self) -> Value {
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
        }
        fn execute(&self, args: Value) -> ToolResult {
            args.get("text")
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| ToolError::invalid("text", "must be a string"))
        }
        fn category(&self) -> ToolCategory {
            ToolCategory::Introspection
        }
    }

    struct AsyncOnly;
    impl Tool for AsyncOnly {
        fn name(&self) -> &str {
            "async_only"
        }
        fn description(&self) -> &str {
            "Yields, then answers."
        }
        fn parameters_schema(&self) -> Value {
            json!({"type": "object"})
        }
        fn execute_async<'a>(&'a self, _args: Value) -> BoxToolFuture<'a> {
            Box::pin(async {
                tokio::task::yield_now().await;
                Ok("async done".to_string())
            })
        }
        fn category(&self) -> ToolCategory {
            ToolCategory::Config
        }
    }

    struct Nothing;
    impl Tool for Nothing {
        fn name(&self) -> &str {
            "nothing"
        }
        fn description(&self) -> &str {
            ""
        }
        fn parameters_schema(&self) -> Value {
            json!({"type": "object"})
        }
        fn category(&self) -> ToolCategory {
            ToolCategory::Shell
        }
    }

    #[test]
    fn defaults_of_the_trait() {
        let t = Echo;
        assert_eq!(t.describe(&json!({}), ToolDescriptionLength::Short), "echo");
        assert_eq!(t.target_path(&json!({"path": "x"})), None);
        assert!(!t.sub_agents_only());
        assert!(!t.root_agent_only());
        assert_eq!(
            t.openai_definition(),
            json!({"type": "function", "function": {"name": "echo", "description": "Echoes `text`.",
                "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}})
        );
    }

    #[tokio::test]
    async fn sync_and_async_tools_dispatch_the_same_way() {
        let sync = Echo.run(json!({"text": "hi"}));
        assert_eq!(sync.wait().await, ExecutionOutcome::Completed("hi".into()));
        let asynchronous = AsyncOnly.run(json!({}));
        assert_eq!(
            asynchronous.wait().await,
            ExecutionOutcome::Completed("async done".into())
        );
    }

    #[tokio::test]
    async fn errors_become_failed_outcomes_with_their_message() {
        let exec = Echo.run(json!({}));
        assert_eq!(
            exec.wait().await,
            ExecutionOutcome::Failed("invalid argument `text`: must be a string".into())
        );
        let exec = Nothing.run(json!({}));
        assert_eq!(
            exec.wait().await,
            ExecutionOutcome::Failed("tool `nothing` has no implementation".into())
        );
    }

    #[tokio::test]
    async fn sync_body_does_not_run_before_the_first_poll() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static CALLS: AtomicUsize = AtomicUsize::new(0);
        struct Counting;
        impl Tool for Counting {
            fn name(&self) -> &str {
                "counting"
            }
            fn description(&self) -> &str {
                ""
            }
            fn parameters_schema(&self) -> Value {
                json!({"type": "object"})
            }
            fn execute(&self, _args: Value) -> ToolResult {
                CALLS.fetch_add(1, Ordering::SeqCst);
                Ok(String::new())
            }
            fn category(&self) -> ToolCategory {
                ToolCategory::Filesystem
            }
        }
        let exec = Counting.run(json!({}));
        exec.stop().await;
        assert_eq!(exec.wait().await, ExecutionOutcome::Cancelled);
        assert_eq!(CALLS.load(Ordering::SeqCst), 0);
    }
}
