//! The `Tool` trait: a catalogue entry that can start invocations (docs/tools.md,
//! "The contract (`skald-api`)").

use crate::category::ToolCategory;
use crate::execution::{SimpleExecution, ToolExecution};
use crate::kind::{FileAccess, ToolKind};
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

/// Who a tool list is being built for (docs/tools.md, "The contract (`skald-api`)"). A tool
/// answers whether it is offered to them in `Tool::offered_to`, so the rule for a tool
/// stands in its own file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Audience {
    /// 0 for the root agent of a session, 1 and more for the task agents it delegates to.
    pub depth: usize,
    /// A background session (a task or a cron run): no one is watching it.
    pub background: bool,
    /// A system agent, which never asks the user.
    pub system: bool,
    /// The agent activated the lazy `config` group.
    pub config: bool,
    /// An image provider is running (the image-generation plugin is on).
    pub images: bool,
    /// There are agents to delegate to.
    pub delegation: bool,
    /// The chat is in plan mode: only the tools that change nothing are offered
    /// (`Tool::in_plan_mode`).
    pub plan: bool,
    /// A search API is set up for web_search (docs/web.md, "Search").
    pub web_search: bool,
}

/// A tool definition. A live invocation is the `ToolExecution` that `run` returns.
///
/// `Cx` is what the driver hands each call: a tool that acts on the user's files needs
/// nothing from it (it is generic over every `Cx`; its folder comes from the `ToolScope`),
/// a tool that acts on the session (its scratchpad, the Inbox, a sub-agent) reads the turn
/// from it. The engine's registry fixes `Cx` to its own per-call context.
///
/// Sync tools implement `execute` only; async tools implement `execute_async` only. Both
/// are dispatched the same way, through `run`, so every call is cancellable.
pub trait Tool<Cx: ?Sized + Sync = ()>: Send + Sync {
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

    /// The arguments as they may be stored and shown: a tool whose arguments carry a value
    /// that must not be kept (a secret) hides it here.
    fn redacted_args(&self, args: Value) -> Value {
        args
    }

    /// Synchronous body. Runs on the executor thread when the execution is first polled,
    /// so it must be quick; anything slow belongs in `execute_async`.
    fn execute(&self, _cx: &Cx, _args: Value) -> ToolResult {
        Err(ToolError::NotImplemented(self.name().to_string()))
    }

    /// Asynchronous body. The default defers `execute` to the first poll (not to the call
    /// of `run`), so a stop before the work starts means the work never starts.
    fn execute_async<'a>(&'a self, cx: &'a Cx, args: Value) -> BoxToolFuture<'a> {
        Box::pin(async move { self.execute(cx, args) })
    }

    /// Starts one invocation. The default is a `SimpleExecution` over `execute_async`,
    /// whose stop drops the work future and so aborts its I/O. Tools that must tear down
    /// remote work, or wind down by themselves, override this with their own
    /// `ToolExecution`.
    fn run<'a>(&'a self, cx: &'a Cx, args: Value) -> Box<dyn ToolExecution + 'a> {
        Box::new(SimpleExecution::new(self.execute_async(cx, args)))
    }

    fn category(&self) -> ToolCategory;

    /// What kind of action a call is, for editors (ACP) and the UI.
    fn kind(&self) -> ToolKind {
        ToolKind::Other
    }

    /// Whether and how a call reaches the user's files. A tool that says so here is judged
    /// by the approval gate's path rules, grants and protected folders, and is named by the
    /// `@fs_read`/`@fs_write` rule groups; one that reaches files and does not say so
    /// would pass them by, so every tool that takes a path must.
    fn file_access(&self) -> Option<FileAccess> {
        None
    }

    /// What the file this call writes would hold afterwards, given what it holds `now`,
    /// for the approval request's preview. None when that cannot be worked out cheaply (or
    /// the tool does not write files); the request then shows the path alone.
    fn content_after(
        &self,
        _args: &Value,
        _now: Option<&str>,
        _max_bytes: usize,
    ) -> Option<String> {
        None
    }

    /// Whether a small local model is offered this tool (docs/models.md, "Small models").
    fn for_small_models(&self) -> bool {
        false
    }

    /// The name Claude Code gives its own tool of the same kind, which hook matchers may
    /// use instead of ours (docs/hooks.md).
    fn hook_alias(&self) -> Option<&'static str> {
        None
    }

    /// Whether the tool is offered in plan mode (docs/agent-loop.md, "Plan mode"), where
    /// the agent reads, searches and asks but changes nothing: by default the tools that
    /// only look (read, search, think, fetch) and commands, which run in the read-only
    /// sandbox there. A tool of another kind that changes nothing says so here.
    fn in_plan_mode(&self) -> bool {
        matches!(
            self.kind(),
            ToolKind::Read
                | ToolKind::Search
                | ToolKind::Think
                | ToolKind::Fetch
                | ToolKind::Execute
        )
    }

    /// Why this call, of a tool offered in plan mode, would still change something, so is
    /// refused while the chat plans (a delegation that would act later, a process
    /// stopped); `None` for a call that only looks.
    fn refused_while_planning(&self, _args: &Value) -> Option<&'static str> {
        None
    }

    /// Whether a call can change files in the chat's folder (a write tool, a command):
    /// the folder is checkpointed before and after each such call (docs/checkpoints.md).
    fn changes_files(&self) -> bool {
        false
    }

    /// Visible only to sub-agents (depth ≥ 1).
    fn sub_agents_only(&self) -> bool {
        false
    }

    /// Visible only to the root agent (depth 0).
    fn root_agent_only(&self) -> bool {
        false
    }

    /// Whether this tool is in `who`'s list. The default follows the two depth flags, and
    /// keeps Config-category tools back until the agent activates the `config` group.
    fn offered_to(&self, who: &Audience) -> bool {
        let depth_ok = if who.depth == 0 {
            !self.sub_agents_only()
        } else {
            !self.root_agent_only()
        };
        depth_ok && (self.category() != ToolCategory::Config || who.config)
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
        fn execute(&self, _cx: &(), args: Value) -> ToolResult {
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
        fn execute_async<'a>(&'a self, _cx: &'a (), _args: Value) -> BoxToolFuture<'a> {
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
        let sync = Echo.run(&(), json!({"text": "hi"}));
        assert_eq!(sync.wait().await, ExecutionOutcome::Completed("hi".into()));
        let asynchronous = AsyncOnly.run(&(), json!({}));
        assert_eq!(
            asynchronous.wait().await,
            ExecutionOutcome::Completed("async done".into())
        );
    }

    #[tokio::test]
    async fn errors_become_failed_outcomes_with_their_message() {
        let exec = Echo.run(&(), json!({}));
        assert_eq!(
            exec.wait().await,
            ExecutionOutcome::Failed("invalid argument `text`: must be a string".into())
        );
        let exec = Nothing.run(&(), json!({}));
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
            fn execute(&self, _cx: &(), _args: Value) -> ToolResult {
                CALLS.fetch_add(1, Ordering::SeqCst);
                Ok(String::new())
            }
            fn category(&self) -> ToolCategory {
                ToolCategory::Filesystem
            }
        }
        let exec = Counting.run(&(), json!({}));
        exec.stop().await;
        assert_eq!(exec.wait().await, ExecutionOutcome::Cancelled);
        assert_eq!(CALLS.load(Ordering::SeqCst), 0);
    }
}
