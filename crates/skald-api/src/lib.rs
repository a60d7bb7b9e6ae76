//! The vocabulary every Skald crate speaks, and nothing else: the `Tool` contract of
//! docs/tools.md, "The contract (`skald-api`)" (what a tool is, how one invocation runs and
//! stops, how it is labelled), the execution states and their stored form, tool categories
//! and the names of the system tools. It does no I/O, so any layer — tools, store, engine,
//! carriers — can depend on it without pulling in a runtime of its own.

pub mod board;
pub mod category;
pub mod checkpoint;
pub mod context;
pub mod editor;
pub mod events;
pub mod execution;
pub mod hook;
pub mod images;
pub mod inbox;
pub mod kind;
pub mod label;
pub mod listings;
pub mod processes;
pub mod protocol;
pub mod records;
pub mod sandbox;
pub mod scope;
pub mod tool;
pub mod tool_args;
pub mod tool_names;
pub mod view;
pub mod visible;
pub mod worktree;

pub use category::ToolCategory;
pub use execution::{
    ExecutionOutcome, STOP_GRACE, SimpleExecution, StateCell, ToolCallStatus, ToolExecution,
    ToolExecutionState, drive_execution,
};
pub use images::ChatImage;
pub use kind::{FileAccess, FileUse, ToolKind};
pub use label::{MAX_LABEL_FULL, MAX_LABEL_SHORT, ToolDescriptionLength, truncate_label};
pub use sandbox::{CommandSandbox, SandboxInfo, SandboxMode};
pub use scope::{
    ImageSink, LspSetup, ProcessSlot, ToolImage, ToolScope, WebAccess, WebSearchSetup,
};
pub use tool::{Audience, BoxToolFuture, Tool, ToolError, ToolResult};
pub use visible::{escape_controls, escape_controls_inline};

/// Re-exported so that tools and drivers agree on one cancellation type.
pub use tokio_util::sync::CancellationToken;
