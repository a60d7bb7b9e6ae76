//! The board of agents (docs/board.md): every chat and background run with what it is
//! doing, what its model calls used and what it changed. Read from the store alone, so any
//! process shows the same board — the app, `skald serve`, `skald agents list` — whichever
//! process runs the agents.

use crate::checkpoints::Checkpoints;
use crate::session::lease::owner_is_dead;
use skald_api::board::{AgentState, BoardAgent, ChangeTally};
use skald_api::events::TurnOutcome;
use skald_store::{AgentRow, Store, StoreError, TurnState};

/// How many agents the board shows unless asked for another number.
pub const DEFAULT_LIMIT: usize = 100;
/// The most of an agent's last answer the board carries.
const LAST_MESSAGE_CHARS: usize = 300;

/// The `limit` most recently active agents, newest first.
pub async fn agents(
    store: &Store,
    checkpoints: &Checkpoints,
    limit: usize,
) -> Result<Vec<BoardAgent>, StoreError> {
    let rows = store.agent_rows(limit)?;
    let now = skald_store::now_ms();
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let worktree = store.worktree_of_session(row.session.id)?;
        let held = match row.turn {
            Some(TurnState::Running | TurnState::Queued) => store
                .session_holder(row.session.id)?
                .is_some_and(|h| !owner_is_dead(&h.owner)),
            _ => false,
        };
        let changes = checkpoints
            .tally(store, row.session.id, worktree.as_ref())
            .await;
        out.push(info(row, worktree, held, changes, now));
    }
    Ok(out)
}

/// What the board says of a chat whose turn, as stored, is `row.turn`, and which a live
/// process holds (`held`) or not.
pub fn state_of(row: &AgentRow, held: bool) -> AgentState {
    match row.turn {
        // What a person can do something about comes first.
        _ if row.waiting > 0 => AgentState::Waiting,
        Some(TurnState::Queued) if held => AgentState::Queued,
        Some(TurnState::Running) if held => AgentState::Working,
        Some(TurnState::Queued | TurnState::Running) => AgentState::Interrupted,
        Some(TurnState::Ended(TurnOutcome::Final)) => AgentState::Done,
        Some(TurnState::Ended(TurnOutcome::Failed | TurnOutcome::Exhausted)) => AgentState::Failed,
        Some(TurnState::Ended(TurnOutcome::Cancelled)) => AgentState::Stopped,
        None => AgentState::Idle,
    }
}

fn info(
    row: AgentRow,
    worktree: Option<skald_api::worktree::WorktreeInfo>,
    held: bool,
    changes: ChangeTally,
    now: i64,
) -> BoardAgent {
    let state = state_of(&row, held);
    let running_for = match (row.turn, row.turn_started_at) {
        (Some(TurnState::Running), Some(started)) if held => now.saturating_sub(started),
        _ => 0,
    };
    let active_ms = u64::try_from(row.active_ms.saturating_add(running_for)).unwrap_or(0);
    let last_message = row.last_message.map(|m| {
        let m = m.trim();
        match m.char_indices().nth(LAST_MESSAGE_CHARS) {
            Some((cut, _)) => format!("{}…", &m[..cut]),
            None => m.to_string(),
        }
    });
    let s = row.session;
    BoardAgent {
        session_id: s.id,
        title: s.title,
        agent_id: s.agent_id,
        kind: s.kind,
        state,
        folder: s.working_dir,
        worktree: worktree.as_ref().map(|w| w.name.clone()),
        source: worktree.map(|w| w.source),
        model: s.model,
        created_at: s.created_at,
        updated_at: s.updated_at,
        turn_started_at: row.turn_started_at,
        active_ms,
        input_tokens: row.usage.input_tokens,
        output_tokens: row.usage.output_tokens,
        cost_usd: row.usage.cost_usd,
        unpriced: row.usage.unpriced,
        changes,
        waiting: row.waiting,
        last_message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skald_store::{NewSession, SessionUsage};

    fn row(turn: Option<TurnState>, waiting: u64) -> AgentRow {
        let store = Store::open_in_memory().unwrap();
        let session = store.create_session(&NewSession::default()).unwrap();
        AgentRow {
            session,
            turn,
            turn_started_at: None,
            turn_ended_at: None,
            active_ms: 0,
            usage: SessionUsage::default(),
            waiting,
            last_message: None,
        }
    }

    #[test]
    fn a_turn_no_live_process_holds_was_interrupted() {
        use AgentState::*;
        let cases = [
            (Some(TurnState::Running), true, 0, Working),
            (Some(TurnState::Running), false, 0, Interrupted),
            (Some(TurnState::Queued), true, 0, Queued),
            (Some(TurnState::Queued), false, 0, Interrupted),
            (Some(TurnState::Running), true, 2, Waiting),
            (Some(TurnState::Ended(TurnOutcome::Final)), false, 0, Done),
            (
                Some(TurnState::Ended(TurnOutcome::Exhausted)),
                false,
                0,
                Failed,
            ),
            (
                Some(TurnState::Ended(TurnOutcome::Failed)),
                false,
                0,
                Failed,
            ),
            (
                Some(TurnState::Ended(TurnOutcome::Cancelled)),
                false,
                0,
                Stopped,
            ),
            (None, false, 0, Idle),
        ];
        for (turn, held, waiting, want) in cases {
            assert_eq!(state_of(&row(turn, waiting), held), want, "{turn:?} {held}");
        }
    }
}
