//! What model calls cost over a turn, a chat and a day (docs/models.md, "Cost"): each call
//! is recorded with its cost at the price known then (`turn::answer`); this reads it back.

use skald_api::events::Event;
use skald_store::{Store, StoreError};

/// Records one model call of `session_id` with its tokens and what it cost at `price` (the
/// price known now: what the call cost when it was made). Every call is recorded — a
/// turn's answers, summaries of older turns, MCP sampling — so a chat's cost, today's and
/// the daily budget count them all.
#[allow(clippy::too_many_arguments)]
pub fn record_call(
    store: &Store,
    session_id: i64,
    model: &skald_llm::ModelChoice,
    price: Option<skald_llm::prices::Price>,
    status: skald_store::RequestStatus,
    usage: Option<skald_llm::Usage>,
    error: Option<&str>,
    started_at: i64,
) -> Result<i64, StoreError> {
    let usage = usage.unwrap_or_default();
    store.record_llm_request(&skald_store::NewLlmRequest {
        cost_usd: price.map(|p| p.cost(&usage)),
        session_id: Some(session_id),
        provider: &model.provider.name,
        model: &model.model,
        status,
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        error,
        started_at,
    })
}

/// Unix milliseconds of today's midnight, local time: where "today" starts for a day's
/// cost.
pub fn start_of_today() -> i64 {
    use chrono::{Local, TimeZone};
    let now = Local::now();
    now.date_naive()
        .and_hms_opt(0, 0, 0)
        .and_then(|midnight| Local.from_local_datetime(&midnight).earliest())
        .map_or_else(|| now.timestamp_millis(), |m| m.timestamp_millis())
}

/// The `turn_usage` event of a turn of `session_id` that started at `since` (Unix ms).
pub fn turn_usage(store: &Store, session_id: i64, since: i64) -> Result<Event, StoreError> {
    let turn = store.session_usage_since(session_id, since)?;
    let chat = store.session_usage(session_id)?;
    let today = store.usage_since(start_of_today())?;
    Ok(Event::TurnUsage {
        session_id,
        requests: turn.requests,
        input_tokens: turn.input_tokens,
        output_tokens: turn.output_tokens,
        cost_usd: turn.cost_usd,
        unpriced: turn.unpriced,
        chat_cost_usd: chat.cost_usd,
        today_cost_usd: today.cost_usd,
    })
}
