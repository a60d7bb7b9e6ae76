//! What every tool in the engine's registry runs with: the call it runs for (`Call`: its
//! session, frame, the engine, the turn) inside a `ToolCx`, and the one tool type the
//! registry holds. File tools ignore the context; the engine's own tools read it.

use crate::agents::Library;
use crate::engine::Engine;
use crate::engine::context::{Emit, TurnEnv, TurnError};
use skald_api::{CancellationToken, ExecutionOutcome, Tool, ToolError};
use skald_store::Store;
use std::sync::{Arc, Mutex};

/// A tool as the engine's registry holds it: one that can run with any call's context.
pub type DynTool = dyn for<'a> Tool<ToolCx<'a>>;

/// Whether a tool acts on the user's files and shell (and so can also run on its own, in
/// `skald tool`) or on the session, which only an agent turn has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolOrigin {
    Files,
    Engine,
}

/// The call a tool runs for: its session and agent frame, and what the turn offers it.
#[derive(Clone, Copy)]
pub struct Call<'a> {
    pub store: &'a Store,
    pub session_id: i64,
    /// The calling agent's stack frame (`None`: the session's root agent).
    pub stack_id: Option<i64>,
    /// The agents it may delegate to and list.
    pub library: Option<&'a Library>,
    /// The engine, for work that outlives the turn (background tasks, schedules, MCP
    /// servers, secrets, plugins); without it those are refused with a clear message.
    pub engine: Option<&'a Arc<Engine>>,
    pub call_id: &'a str,
    /// The turn's stop token, for tools that wind down by themselves.
    pub cancel: &'a CancellationToken,
    pub emit: Emit<'a>,
    /// The turn the call was made in (delegation runs a turn of its own in it; a question
    /// needs its Inbox). `None` for a call run outside a turn, as unit tests do.
    pub turn: Option<&'a TurnEnv<'a>>,
}

/// What the driver passes to every tool's `run`. File tools ignore it.
pub struct ToolCx<'a> {
    call: Option<Call<'a>>,
    /// An error of the engine itself (the store failed) met while a tool ran: the turn
    /// ends with it, as it would have outside the tool.
    fatal: Mutex<Option<TurnError>>,
}

impl<'a> ToolCx<'a> {
    /// For a call inside an agent turn.
    pub fn new(call: Call<'a>) -> Self {
        ToolCx {
            call: Some(call),
            fatal: Mutex::new(None),
        }
    }

    /// For a tool run on its own (`skald tool`): file tools only.
    pub fn outside_turn() -> Self {
        ToolCx {
            call: None,
            fatal: Mutex::new(None),
        }
    }

    /// The call, for tools that act on the session.
    pub fn call(&self) -> Result<&Call<'a>, ToolError> {
        self.call
            .as_ref()
            .ok_or_else(|| ToolError::failed("this tool runs only inside an agent turn"))
    }

    /// Records an engine error for the driver and fails the call with its message.
    pub(crate) fn fatal(&self, e: TurnError) -> ExecutionOutcome {
        let message = e.to_string();
        *crate::lock(&self.fatal) = Some(e);
        ExecutionOutcome::Failed(message)
    }

    /// The engine error a tool met, if any; the turn ends with it.
    pub(crate) fn take_fatal(&self) -> Option<TurnError> {
        crate::lock(&self.fatal).take()
    }
}

impl Call<'_> {
    /// The engine, or the message a run without one answers with.
    pub(crate) fn engine_or(&self, missing: &str) -> Result<&Arc<Engine>, ToolError> {
        self.engine.ok_or_else(|| ToolError::failed(missing))
    }

    /// The user's secrets and the engine that redacts them, for the secret tools.
    pub(crate) fn secrets(&self) -> Result<(&Arc<Engine>, Arc<skald_secrets::Secrets>), ToolError> {
        const MISSING: &str = "secrets are not available in this run";
        let engine = self.engine_or(MISSING)?;
        let secrets = engine.secrets().ok_or_else(|| ToolError::failed(MISSING))?;
        Ok((engine, secrets))
    }
}
