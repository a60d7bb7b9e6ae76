//! One live tool invocation and its lifecycle (docs/tools.md,
//! "The contract (`skald-api`)").

use crate::tool::BoxToolFuture;
use futures::FutureExt;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long `drive_execution` lets an execution wind down after `stop()` before it drops
/// the wait, which aborts the work anyway. Long enough for a bespoke stop to reach a
/// remote server, short enough that /stop never appears to hang.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// The live state of an execution, richer than its stored status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum ToolExecutionState {
    /// Created, not yet started.
    Pending = 0,
    /// Blocked on a human approval or answer.
    AwaitingApproval = 1,
    /// Actively executing.
    Running = 2,
    /// Finished OK.
    Completed = 3,
    /// Tool or runtime error.
    Failed = 4,
    /// Stopped by /stop — not an error.
    Cancelled = 5,
    /// Denied by policy or by the user — not an error.
    Rejected = 6,
}

impl ToolExecutionState {
    pub const ALL: [ToolExecutionState; 7] = [
        ToolExecutionState::Pending,
        ToolExecutionState::AwaitingApproval,
        ToolExecutionState::Running,
        ToolExecutionState::Completed,
        ToolExecutionState::Failed,
        ToolExecutionState::Cancelled,
        ToolExecutionState::Rejected,
    ];

    /// The status stored in `chat_llm_tools` for this state.
    pub fn stored_status(self) -> ToolCallStatus {
        match self {
            ToolExecutionState::Pending | ToolExecutionState::Running => ToolCallStatus::Running,
            ToolExecutionState::AwaitingApproval => ToolCallStatus::Pending,
            ToolExecutionState::Completed => ToolCallStatus::Done,
            ToolExecutionState::Failed => ToolCallStatus::Failed,
            ToolExecutionState::Cancelled => ToolCallStatus::Cancelled,
            ToolExecutionState::Rejected => ToolCallStatus::Rejected,
        }
    }

    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            ToolExecutionState::Completed
                | ToolExecutionState::Failed
                | ToolExecutionState::Cancelled
                | ToolExecutionState::Rejected
        )
    }

    /// Whether the lifecycle allows moving from `self` to `next`. Terminal states are
    /// final; approval can only happen before the work starts, and a running call is
    /// rejected only by the person's answer to it (`ExecutionOutcome::Rejected`).
    pub fn can_transition_to(self, next: ToolExecutionState) -> bool {
        use ToolExecutionState::*;
        match self {
            Pending => matches!(next, AwaitingApproval | Running | Rejected | Cancelled),
            AwaitingApproval => matches!(next, Running | Rejected | Cancelled),
            Running => matches!(next, Completed | Failed | Cancelled | Rejected),
            Completed | Failed | Cancelled | Rejected => false,
        }
    }

    fn from_u8(v: u8) -> ToolExecutionState {
        match v {
            0 => ToolExecutionState::Pending,
            1 => ToolExecutionState::AwaitingApproval,
            2 => ToolExecutionState::Running,
            3 => ToolExecutionState::Completed,
            4 => ToolExecutionState::Failed,
            5 => ToolExecutionState::Cancelled,
            _ => ToolExecutionState::Rejected,
        }
    }
}

/// The status string persisted for a tool call. `Interrupted` has no live state: it marks a
/// call that was running when the process died and that is reported rather than re-run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    Running,
    Pending,
    Done,
    Failed,
    Cancelled,
    Rejected,
    Interrupted,
}

impl ToolCallStatus {
    pub const ALL: [ToolCallStatus; 7] = [
        ToolCallStatus::Running,
        ToolCallStatus::Pending,
        ToolCallStatus::Done,
        ToolCallStatus::Failed,
        ToolCallStatus::Cancelled,
        ToolCallStatus::Rejected,
        ToolCallStatus::Interrupted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ToolCallStatus::Running => "running",
            ToolCallStatus::Pending => "pending",
            ToolCallStatus::Done => "done",
            ToolCallStatus::Failed => "failed",
            ToolCallStatus::Cancelled => "cancelled",
            ToolCallStatus::Rejected => "rejected",
            ToolCallStatus::Interrupted => "interrupted",
        }
    }

    pub fn parse(s: &str) -> Option<ToolCallStatus> {
        ToolCallStatus::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// Unfinished calls are the ones a resume after restart must look at.
    pub fn is_unfinished(self) -> bool {
        matches!(self, ToolCallStatus::Running | ToolCallStatus::Pending)
    }
}

impl fmt::Display for ToolCallStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What `ToolExecution::wait` resolves to: only the three terminal outcomes of running.
/// Approval outcomes (Rejected) belong to the session driver, not to the execution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", content = "result", rename_all = "snake_case")]
pub enum ExecutionOutcome {
    Completed(String),
    Failed(String),
    Cancelled,
    /// The person said no to what the call asked of them (a question declined, or no one
    /// there to answer it): stored as `rejected`, like a call the person did not approve,
    /// with why for the model.
    Rejected(String),
}

impl ExecutionOutcome {
    pub fn state(&self) -> ToolExecutionState {
        match self {
            ExecutionOutcome::Completed(_) => ToolExecutionState::Completed,
            ExecutionOutcome::Failed(_) => ToolExecutionState::Failed,
            ExecutionOutcome::Cancelled => ToolExecutionState::Cancelled,
            ExecutionOutcome::Rejected(_) => ToolExecutionState::Rejected,
        }
    }
}

/// A single in-flight invocation, produced by `Tool::run`. It owns its state and its stop;
/// it never touches the store or the UI (the session driver mirrors it there).
pub trait ToolExecution: Send + Sync {
    fn state(&self) -> ToolExecutionState;

    /// Runs (or joins) the invocation to its outcome. Calling it again after it resolved
    /// returns the same outcome.
    fn wait<'a>(&'a self) -> Pin<Box<dyn Future<Output = ExecutionOutcome> + Send + 'a>>;

    /// Asks the invocation to stop; `wait` then resolves to `Cancelled` promptly.
    fn stop<'a>(&'a self) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(async {})
    }
}

/// A lock-free lifecycle cell that only accepts the transitions the lifecycle allows, so
/// a late completion can never overwrite a cancellation (or the reverse). Shared by
/// `SimpleExecution` and any bespoke execution.
#[derive(Debug)]
pub struct StateCell(AtomicU8);

impl StateCell {
    pub fn new(initial: ToolExecutionState) -> Self {
        StateCell(AtomicU8::new(initial as u8))
    }

    pub fn get(&self) -> ToolExecutionState {
        ToolExecutionState::from_u8(self.0.load(Ordering::Acquire))
    }

    /// Moves to `next` if the lifecycle allows it; returns whether it did.
    pub fn advance(&self, next: ToolExecutionState) -> bool {
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |cur| {
                ToolExecutionState::from_u8(cur)
                    .can_transition_to(next)
                    .then_some(next as u8)
            })
            .is_ok()
    }
}

impl Default for StateCell {
    fn default() -> Self {
        StateCell::new(ToolExecutionState::Pending)
    }
}

/// The default execution: a work future raced against a stop token. Stopping — or
/// dropping the `wait` future — drops the work future, which aborts its in-flight I/O
/// (a child spawned with `kill_on_drop` dies with it). No per-tool code is needed for a
/// responsive /stop.
pub struct SimpleExecution<'a> {
    work: tokio::sync::Mutex<Option<BoxToolFuture<'a>>>,
    state: StateCell,
    outcome: OnceLock<ExecutionOutcome>,
    stop: CancellationToken,
}

impl<'a> SimpleExecution<'a> {
    pub fn new(work: BoxToolFuture<'a>) -> Self {
        SimpleExecution {
            work: tokio::sync::Mutex::new(Some(work)),
            state: StateCell::default(),
            outcome: OnceLock::new(),
            stop: CancellationToken::new(),
        }
    }

    /// Records the outcome once; a second, racing outcome is ignored and the first returned.
    fn finish(&self, outcome: ExecutionOutcome) -> ExecutionOutcome {
        let stored = self.outcome.get_or_init(|| outcome).clone();
        // From Pending a cancellation is legal; Completed/Failed need Running first, which
        // `wait` guarantees.
        self.state.advance(stored.state());
        stored
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("panic")
}

/// Marks the execution cancelled if `wait` is dropped while the work is in flight: the
/// work future is dropped with it, so it did not complete.
struct CancelOnDrop<'e, 'a> {
    exec: &'e SimpleExecution<'a>,
    armed: bool,
}

impl Drop for CancelOnDrop<'_, '_> {
    fn drop(&mut self) {
        if self.armed {
            self.exec.finish(ExecutionOutcome::Cancelled);
        }
    }
}

impl<'a> ToolExecution for SimpleExecution<'a> {
    fn state(&self) -> ToolExecutionState {
        self.state.get()
    }

    fn wait<'b>(&'b self) -> Pin<Box<dyn Future<Output = ExecutionOutcome> + Send + 'b>> {
        Box::pin(async move {
            if let Some(done) = self.outcome.get() {
                return done.clone();
            }
            // A second concurrent `wait` queues here and then reads the first one's outcome.
            let mut slot = self.work.lock().await;
            if let Some(done) = self.outcome.get() {
                return done.clone();
            }
            let Some(work) = slot.take() else {
                // An earlier wait was dropped mid-flight and took the work with it.
                return self.finish(ExecutionOutcome::Cancelled);
            };
            if self.stop.is_cancelled() {
                drop(work);
                return self.finish(ExecutionOutcome::Cancelled);
            }
            self.state.advance(ToolExecutionState::Running);
            let mut guard = CancelOnDrop {
                exec: self,
                armed: true,
            };
            // A panicking tool is a failed call, not a stop and not a crash of the engine.
            let work = std::panic::AssertUnwindSafe(work).catch_unwind();
            let outcome = tokio::select! {
                biased;
                _ = self.stop.cancelled() => ExecutionOutcome::Cancelled,
                result = work => match result {
                    Ok(Ok(text)) => ExecutionOutcome::Completed(text),
                    Ok(Err(err)) => ExecutionOutcome::Failed(err.to_string()),
                    Err(panic) => ExecutionOutcome::Failed(format!(
                        "the tool crashed: {}",
                        panic_message(panic.as_ref())
                    )),
                },
            };
            guard.armed = false;
            self.finish(outcome)
        })
    }

    fn stop<'b>(&'b self) -> Pin<Box<dyn Future<Output = ()> + Send + 'b>> {
        Box::pin(async move {
            self.stop.cancel();
            // Not started yet: drop the work now so it never runs. If a `wait` holds the
            // lock, it observes the token instead.
            if let Ok(mut slot) = self.work.try_lock()
                && let Some(work) = slot.take()
            {
                drop(work);
                self.finish(ExecutionOutcome::Cancelled);
            }
        })
    }
}

/// Drives an execution to its outcome, calling `stop()` exactly once if `cancel` fires
/// first. Used by the live agent loop and by resume after restart alike. If the execution
/// ignores its stop for `STOP_GRACE`, the wait is dropped (aborting the work) and the
/// outcome is `Cancelled`.
pub async fn drive_execution(
    exec: &dyn ToolExecution,
    cancel: &CancellationToken,
) -> ExecutionOutcome {
    let mut wait = exec.wait();
    tokio::select! {
        biased;
        // Checked first, so an already-stopped turn never starts the work.
        _ = cancel.cancelled() => {}
        outcome = &mut wait => return outcome,
    }
    exec.stop().await;
    match tokio::time::timeout(STOP_GRACE, &mut wait).await {
        Ok(outcome) => outcome,
        Err(_) => ExecutionOutcome::Cancelled,
    }
}

#[cfg(test)]
#[path = "execution_tests.rs"]
mod tests;
