//! Unit tests of `execution`.

use super::*;
use crate::tool::ToolError;
use ToolExecutionState::*;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

#[test]
fn every_state_maps_to_its_stored_status() {
    let expected = [
        (Pending, "running"),
        (AwaitingApproval, "pending"),
        (Running, "running"),
        (Completed, "done"),
        (Failed, "failed"),
        (Cancelled, "cancelled"),
        (Rejected, "rejected"),
    ];
    for (state, status) in expected {
        assert_eq!(state.stored_status().as_str(), status, "{state:?}");
    }
}

#[test]
fn stored_statuses_round_trip() {
    for st in ToolCallStatus::ALL {
        assert_eq!(ToolCallStatus::parse(st.as_str()), Some(st));
    }
    assert_eq!(ToolCallStatus::parse("bogus"), None);
    assert!(ToolCallStatus::Running.is_unfinished());
    assert!(ToolCallStatus::Pending.is_unfinished());
    assert!(!ToolCallStatus::Interrupted.is_unfinished());
}

#[test]
fn transition_table_is_exactly_the_lifecycle() {
    let allowed = [
        (Pending, AwaitingApproval),
        (Pending, Running),
        (Pending, Rejected),
        (Pending, Cancelled),
        (AwaitingApproval, Running),
        (AwaitingApproval, Rejected),
        (AwaitingApproval, Cancelled),
        (Running, Completed),
        (Running, Failed),
        (Running, Cancelled),
        // The person's no to what a running call asked them (issue #48: a declined
        // clarification is rejected, not failed).
        (Running, Rejected),
    ];
    for from in ToolExecutionState::ALL {
        for to in ToolExecutionState::ALL {
            assert_eq!(
                from.can_transition_to(to),
                allowed.contains(&(from, to)),
                "{from:?} -> {to:?}"
            );
        }
    }
    for s in ToolExecutionState::ALL {
        assert_eq!(
            s.is_terminal(),
            matches!(s, Completed | Failed | Cancelled | Rejected)
        );
    }
}

#[test]
fn state_cell_refuses_illegal_moves() {
    let cell = StateCell::default();
    assert_eq!(cell.get(), Pending);
    assert!(!cell.advance(Completed));
    assert!(cell.advance(AwaitingApproval));
    assert!(cell.advance(Running));
    assert!(cell.advance(Cancelled));
    assert!(!cell.advance(Completed), "a late completion must not win");
    assert_eq!(cell.get(), Cancelled);
}

#[test]
fn outcomes_map_to_terminal_states() {
    assert_eq!(ExecutionOutcome::Completed("x".into()).state(), Completed);
    assert_eq!(ExecutionOutcome::Failed("x".into()).state(), Failed);
    assert_eq!(ExecutionOutcome::Cancelled.state(), Cancelled);
}

fn exec_of(fut: BoxToolFuture<'static>) -> SimpleExecution<'static> {
    SimpleExecution::new(fut)
}

#[tokio::test]
async fn completed_path_goes_pending_running_completed() {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let exec = Arc::new(exec_of(Box::pin(async move {
        let _ = rx.await;
        Ok("ok".to_string())
    })));
    assert_eq!(exec.state(), Pending);
    let waiter = {
        let exec = exec.clone();
        tokio::spawn(async move { exec.wait().await })
    };
    while exec.state() != Running {
        tokio::task::yield_now().await;
    }
    tx.send(()).unwrap();
    assert_eq!(
        waiter.await.unwrap(),
        ExecutionOutcome::Completed("ok".into())
    );
    assert_eq!(exec.state(), Completed);
    // A second wait returns the same outcome without re-running.
    assert_eq!(exec.wait().await, ExecutionOutcome::Completed("ok".into()));
}

#[tokio::test]
async fn failed_path_keeps_the_message() {
    let exec = exec_of(Box::pin(async { Err(ToolError::failed("disk full")) }));
    assert_eq!(
        exec.wait().await,
        ExecutionOutcome::Failed("disk full".into())
    );
    assert_eq!(exec.state(), Failed);
}

#[tokio::test]
async fn a_panicking_tool_fails_instead_of_cancelling() {
    let exec = exec_of(Box::pin(async {
        if std::hint::black_box(true) {
            panic!("index out of bounds");
        }
        Ok(String::new())
    }));
    assert_eq!(
        exec.wait().await,
        ExecutionOutcome::Failed("the tool crashed: index out of bounds".into())
    );
    assert_eq!(exec.state(), Failed);
}

#[tokio::test]
async fn stop_before_wait_never_runs_the_work() {
    let ran = Arc::new(AtomicBool::new(false));
    let flag = ran.clone();
    let exec = exec_of(Box::pin(async move {
        flag.store(true, Ordering::SeqCst);
        Ok(String::new())
    }));
    exec.stop().await;
    assert_eq!(exec.state(), Cancelled);
    assert_eq!(exec.wait().await, ExecutionOutcome::Cancelled);
    assert!(!ran.load(Ordering::SeqCst));
}

/// Sets its flag when dropped: proves the work future (and so its I/O) was released.
struct DropFlag(Arc<AtomicBool>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn ten_second_tool_is_stopped_by_its_cancel_token_promptly() {
    let dropped = Arc::new(AtomicBool::new(false));
    let guard = DropFlag(dropped.clone());
    let exec = exec_of(Box::pin(async move {
        let _guard = guard;
        tokio::time::sleep(Duration::from_secs(10)).await;
        Ok("slept".to_string())
    }));
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let outcome = drive_execution(&exec, &cancel).await;
    assert_eq!(outcome, ExecutionOutcome::Cancelled);
    assert_eq!(exec.state(), Cancelled);
    assert!(
        dropped.load(Ordering::SeqCst),
        "work future must be dropped"
    );
    // Not a timing assertion on speed, only that it did not sleep the full 10 s.
    assert!(started.elapsed() < Duration::from_secs(9));
}

#[tokio::test]
async fn dropping_wait_aborts_the_work_and_cancels() {
    let dropped = Arc::new(AtomicBool::new(false));
    let guard = DropFlag(dropped.clone());
    let exec = exec_of(Box::pin(async move {
        let _guard = guard;
        std::future::pending::<()>().await;
        Ok(String::new())
    }));
    {
        let wait = exec.wait();
        let _ = tokio::time::timeout(Duration::from_millis(20), wait).await;
    }
    assert!(dropped.load(Ordering::SeqCst));
    assert_eq!(exec.state(), Cancelled);
    assert_eq!(exec.wait().await, ExecutionOutcome::Cancelled);
}

#[tokio::test]
async fn drive_execution_completes_when_not_cancelled() {
    let exec = exec_of(Box::pin(async { Ok("fine".to_string()) }));
    let outcome = drive_execution(&exec, &CancellationToken::new()).await;
    assert_eq!(outcome, ExecutionOutcome::Completed("fine".into()));
}

#[tokio::test]
async fn drive_execution_with_a_fired_token_never_starts_the_work() {
    let ran = Arc::new(AtomicBool::new(false));
    let flag = ran.clone();
    let exec = exec_of(Box::pin(async move {
        flag.store(true, Ordering::SeqCst);
        Ok(String::new())
    }));
    let cancel = CancellationToken::new();
    cancel.cancel();
    assert_eq!(
        drive_execution(&exec, &cancel).await,
        ExecutionOutcome::Cancelled
    );
    assert!(!ran.load(Ordering::SeqCst));
}

/// A bespoke execution that counts its stops and only finishes once stopped.
struct Counting {
    stops: AtomicU8,
    stopped: tokio::sync::Notify,
    ignore_stop: bool,
}
impl ToolExecution for Counting {
    fn state(&self) -> ToolExecutionState {
        Running
    }
    fn wait<'a>(&'a self) -> Pin<Box<dyn Future<Output = ExecutionOutcome> + Send + 'a>> {
        Box::pin(async move {
            if self.ignore_stop {
                std::future::pending::<()>().await;
            }
            self.stopped.notified().await;
            ExecutionOutcome::Cancelled
        })
    }
    fn stop<'a>(&'a self) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(async move {
            self.stops.fetch_add(1, Ordering::SeqCst);
            self.stopped.notify_one();
        })
    }
}

#[tokio::test]
async fn drive_execution_calls_stop_exactly_once() {
    let exec = Counting {
        stops: AtomicU8::new(0),
        stopped: tokio::sync::Notify::new(),
        ignore_stop: false,
    };
    let cancel = CancellationToken::new();
    cancel.cancel();
    assert_eq!(
        drive_execution(&exec, &cancel).await,
        ExecutionOutcome::Cancelled
    );
    assert_eq!(exec.stops.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn drive_execution_gives_up_on_an_execution_that_ignores_stop() {
    let exec = Counting {
        stops: AtomicU8::new(0),
        stopped: tokio::sync::Notify::new(),
        ignore_stop: true,
    };
    let cancel = CancellationToken::new();
    cancel.cancel();
    // Paused time auto-advances through the grace period.
    assert_eq!(
        drive_execution(&exec, &cancel).await,
        ExecutionOutcome::Cancelled
    );
    assert_eq!(exec.stops.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn concurrent_waits_share_one_run() {
    let runs = Arc::new(AtomicU8::new(0));
    let counter = runs.clone();
    let exec = Arc::new(exec_of(Box::pin(async move {
        counter.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(10)).await;
        Ok("once".to_string())
    })));
    let a = tokio::spawn({
        let exec = exec.clone();
        async move { exec.wait().await }
    });
    let b = tokio::spawn({
        let exec = exec.clone();
        async move { exec.wait().await }
    });
    assert_eq!(a.await.unwrap(), ExecutionOutcome::Completed("once".into()));
    assert_eq!(b.await.unwrap(), ExecutionOutcome::Completed("once".into()));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}
