//! The daily budget (docs/models.md, "Cost and limits"): before a round's model call, when
//! what today's calls cost plus what this request would read would pass config.toml
//! `[budget] daily_usd`, the turn asks the person in the Agent Inbox — once a turn: a "Run
//! it" holds for the rest of the chat's turn and its sub-agents. Where no one can answer
//! (`skald exec`, a scheduled task) the turn stops and says why.

use super::{Emit, TurnEnv, TurnError};
use crate::inbox::Outcome;
use skald_api::CancellationToken;
use skald_api::inbox::{InboxRequest, QuestionRequest};
use skald_store::{InboxKind, InboxStatus, NewInboxItem};

/// The Inbox item's title; a turn resumed after a restart finds its pending question by it.
pub const TITLE: &str = "Daily budget";
/// The answer that lets the turn go on.
pub const GO_ON: &str = "Run it";
const STOP: &str = "Stop";

/// What an answer may write, as far as the budget counts a call in flight: the usual
/// ceiling of one answer.
const OUTPUT_ALLOWANCE: u64 = 4096;

/// Whether the turn may make its next model call.
pub(super) enum Budget<'a> {
    /// Within the budget (holding the call's share of what is in flight until it is
    /// recorded), no budget, or the person said to go on.
    Go(Option<crate::limits::Reservation<'a>>),
    /// The person said no.
    Declined,
    /// The turn was stopped while it asked.
    Cancelled,
    /// Past the budget and no one to ask: the message says why.
    Over(String),
}

/// Checks the budget before a round's model call: what today's calls cost, what calls
/// let through meanwhile may cost, and what this one would read.
pub(super) async fn check<'e>(
    env: &TurnEnv<'e>,
    session_id: i64,
    cancel: &CancellationToken,
    emit: Emit<'_>,
) -> Result<Budget<'e>, TurnError> {
    let Some(limits) = env.engine.map(|e| &e.limits) else {
        return Ok(Budget::Go(None));
    };
    let Some(daily) = limits.daily_usd() else {
        return Ok(Budget::Go(None));
    };
    if limits.passes(session_id) {
        return Ok(Budget::Go(None));
    }
    let today = env
        .store
        .usage_since(crate::usage::start_of_today())?
        .cost_usd
        + limits.in_flight();
    let (next, at_most) = next_request_cost(env, session_id)?;
    if today + next <= daily {
        return Ok(Budget::Go(Some(limits.reserve(at_most))));
    }
    let question = format!(
        "Today's model calls have cost {} of your {} daily budget, and this turn's next \
         request would add about {}. Run it anyway?",
        usd(today),
        usd(daily),
        usd(next)
    );
    let inbox = match (env.cfg.approval, env.inbox) {
        (super::ApprovalMode::Inbox, Some(inbox)) => inbox,
        _ => {
            return Ok(Budget::Over(format!(
                "Stopped before the model call: today's calls have cost {} of the {} daily \
                 budget (config.toml [budget] daily_usd), and no one is here to let this turn \
                 pass it. Raise or remove the budget to go on.",
                usd(today),
                usd(daily)
            )));
        }
    };
    // A turn resumed after a restart waits on the question it had asked.
    let pending = env.store.pending_inbox()?.into_iter().find(|i| {
        i.session_id == session_id
            && i.kind == InboxKind::Question
            && i.tool_call_id.is_none()
            && i.title == TITLE
            && i.status == InboxStatus::Pending
    });
    let item = match pending {
        Some(item) => item,
        None => inbox.request(
            env.store,
            &NewInboxItem {
                session_id,
                kind: InboxKind::Question,
                tool_call_id: None,
                agent_id: env.cfg.run.agent_id.clone(),
                depth: i64::try_from(env.frame.depth).unwrap_or(i64::MAX),
                title: TITLE.to_string(),
                payload: InboxRequest::Question(QuestionRequest {
                    question,
                    suggested_answers: vec![GO_ON.to_string(), STOP.to_string()],
                    title: Some(TITLE.to_string()),
                })
                .payload(),
            },
            emit,
        )?,
    };
    Ok(match inbox.wait(env.store, item.id, cancel).await? {
        Outcome::Answered(text) if text.trim().eq_ignore_ascii_case(GO_ON) => {
            limits.let_pass(session_id);
            Budget::Go(None)
        }
        Outcome::Cancelled => Budget::Cancelled,
        _ => Budget::Declined,
    })
}

/// What the next request would cost to read, at the first model's price (the
/// conversation's estimated tokens as uncached input), and the most it may cost with its
/// answer (`OUTPUT_ALLOWANCE` tokens out); both 0 for a model with no known price.
fn next_request_cost(env: &TurnEnv<'_>, session_id: i64) -> Result<(f64, f64), TurnError> {
    let models = env.models.current();
    let Some(price) = crate::models::candidates(&models, env.health)
        .first()
        .and_then(|m| env.models.price_of(m))
    else {
        return Ok((0.0, 0.0));
    };
    let tokens = super::context_usage::context_parts(env, session_id)?.total();
    let read = skald_llm::Usage {
        input_tokens: tokens,
        ..Default::default()
    };
    let answered = skald_llm::Usage {
        output_tokens: OUTPUT_ALLOWANCE,
        ..read
    };
    Ok((price.cost(&read), price.cost(&answered)))
}

/// Dollars as people read them: cents, or more digits under a cent.
fn usd(v: f64) -> String {
    if v > 0.0 && v < 0.01 {
        format!("${v:.4}")
    } else {
        format!("${v:.2}")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn dollars_read_as_cents_or_fractions_of_one() {
        assert_eq!(super::usd(4.931), "$4.93");
        assert_eq!(super::usd(0.0012), "$0.0012");
        assert_eq!(super::usd(0.0), "$0.00");
    }
}
