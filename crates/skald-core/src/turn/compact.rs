//! Keeping a long conversation inside the model's context window: when the context nears
//! the window, the older turns are summarised by the model into `chat_summaries` and the
//! summary replaces them in what the model is sent. The turns stay in the store; nothing
//! is deleted.

use crate::turn::{Emit, TurnEnv, TurnError};
use skald_api::CancellationToken;
use skald_api::events::Event;
use skald_llm::{Message, Request};
use skald_store::{Role, Store};

/// Compaction keeps at most this share of the window as recent turns, verbatim; it starts
/// when the context passes `TurnConfig::compact_at` percent of the window.
const KEEP_RECENT: f64 = 0.4;

const SUMMARY_PROMPT: &str = "You are summarising the earlier part of a conversation between a \
    user and an AI assistant that works on the user's files, so that the assistant can carry \
    on without it. Write a compact summary: the user's goals and preferences, decisions \
    made, files read or changed (with paths), commands run and their results, facts \
    learned, and what was still open. Keep names, paths and numbers exact. Do not add \
    anything that is not in the conversation. End with a line that starts \"Left out:\" and \
    names what the summary does not keep (long tool outputs, file contents, code read), so \
    the assistant knows to read them again if it needs them.";

/// Rough token count: four characters a token is the usual rule of thumb for English and
/// code, and only the order of magnitude matters here.
pub fn estimate_tokens(messages: &[Message]) -> usize {
    messages
        .iter()
        .map(|m| {
            m.content.len()
                + m.tool_calls
                    .iter()
                    .map(|c| c.name.len() + c.arguments.len())
                    .sum::<usize>()
                + 16
                + m.images.len() * IMAGE_TOKENS * 4
        })
        .sum::<usize>()
        / 4
}

/// Rough tokens of the tool definitions a request offers: their names, descriptions and
/// schemas, four characters a token. The meter (`context_usage`) and the threshold count
/// them alike.
pub fn tool_tokens(tools: &[skald_llm::ToolSpec]) -> usize {
    tools
        .iter()
        .map(|t| (t.name.len() + t.description.len() + t.parameters.to_string().len()) / 4)
        .sum()
}

/// What an image costs in context, roughly: a model reads a large one as 1,100 to 1,600
/// tokens (OpenAI's high detail, Anthropic's 1568-pixel cap), whatever its file's size.
const IMAGE_TOKENS: usize = 1_600;

/// The id of the last message to fold into a summary: the turns before the most recent
/// user message that keeps the rest within `keep` tokens. Cutting at a user message never
/// separates a tool call from its result.
fn cut_point(
    store: &Store,
    session_id: i64,
    covered: i64,
    keep: usize,
) -> Result<Option<i64>, TurnError> {
    let messages: Vec<_> = store
        .list_messages(session_id)?
        .into_iter()
        .filter(|m| m.id > covered)
        .collect();
    let mut tail = 0usize;
    let mut cut = None;
    for (i, m) in messages.iter().enumerate().rev() {
        tail += m.content.len() / 4 + 16;
        if m.role == Role::User && i > 0 {
            if tail > keep {
                break;
            }
            cut = Some(messages[i - 1].id);
        }
    }
    Ok(cut)
}

/// Summarises older turns if the conversation passed the chat's threshold. Returns
/// whether it did.
pub async fn compact_if_needed(
    env: &TurnEnv<'_>,
    session_id: i64,
    context: &[Message],
    tools: &[skald_llm::ToolSpec],
    cancel: &CancellationToken,
    emit: Emit<'_>,
) -> Result<bool, TurnError> {
    let window = env.cfg.context_window.max(1);
    // What the request holds, tool definitions included: what the meter shows.
    let estimate = estimate_tokens(context) + tool_tokens(tools);
    let at = env.cfg.compact_at;
    if at == 0 || (estimate as f64) < window as f64 * f64::from(at) / 100.0 {
        return Ok(false);
    }
    compact(env, session_id, estimate, "auto", cancel, emit).await
}

/// Summarises older turns now, whatever the threshold ("compact now"). Returns whether
/// there was anything to fold in and a summary came back.
pub async fn compact_now(
    env: &TurnEnv<'_>,
    session_id: i64,
    cancel: &CancellationToken,
    emit: Emit<'_>,
) -> Result<bool, TurnError> {
    let context = super::conversation::conversation(env, session_id)?;
    let tools = super::offer::turn_tools(env, session_id)?;
    let estimate = estimate_tokens(&context) + tool_tokens(&tools);
    compact(env, session_id, estimate, "manual", cancel, emit).await
}

async fn compact(
    env: &TurnEnv<'_>,
    session_id: i64,
    estimate: usize,
    trigger: &str,
    cancel: &CancellationToken,
    emit: Emit<'_>,
) -> Result<bool, TurnError> {
    // Only the root conversation is summarised; a task agent's is short-lived.
    if env.frame.stack_id.is_some() {
        return Ok(false);
    }
    let window = env.cfg.context_window.max(1);
    let models = env.models.current();
    let Some(model) = models.first() else {
        return Ok(false);
    };
    let store = env.store;
    let covered = store
        .latest_summary(session_id)?
        .map(|s| s.up_to_message_id)
        .unwrap_or(0);
    let keep = (window as f64 * KEEP_RECENT) as usize;
    let Some(up_to) = cut_point(store, session_id, covered, keep)? else {
        return Ok(false);
    };
    // Said before it happens: the chat shows it, and a person sees why the turn waits.
    emit(Event::CompactionStarted {
        session_id,
        up_to_message_id: up_to,
        tokens: estimate as u64,
        window: window as u64,
    });
    super::fire_hooks(
        env.cfg,
        session_id,
        None,
        crate::hooks::HookEvent::PreCompact,
        Some(trigger.into()),
        serde_json::json!({ "trigger": trigger, "custom_instructions": "" }),
        emit,
    )
    .await;
    // The part to fold in: the previous summary, then the turns after it up to the cut,
    // as a transcript.
    let mut transcript = String::new();
    if let Some(prev) = store.latest_summary(session_id)? {
        transcript.push_str(&format!(
            "Summary of what came before:\n{}\n\n",
            prev.summary
        ));
    }
    let calls = store.list_tool_calls(session_id)?;
    for m in store.list_messages(session_id)? {
        if m.id <= covered || m.id > up_to {
            continue;
        }
        if !m.content.is_empty() {
            transcript.push_str(&format!("{}: {}\n\n", m.role.as_str(), m.content));
        }
        for c in calls.iter().filter(|c| c.message_id == Some(m.id)) {
            let result: String = c
                .result
                .as_deref()
                .unwrap_or("")
                .chars()
                .take(2000)
                .collect();
            transcript.push_str(&format!(
                "tool call {} {} -> {}: {}\n\n",
                c.name, c.args, c.status, result
            ));
        }
    }
    let request = Request {
        model: model.model.clone(),
        messages: vec![Message::system(SUMMARY_PROMPT), Message::user(transcript)],
        tools: Vec::new(),
        tool_choice: skald_llm::ToolChoice::Auto,
        max_tokens: Some(2048),
        temperature: None,
        effort: None,
        web_search: false,
    };
    let summarise = async {
        match model.provider.stream(&request).await {
            Ok(stream) => skald_llm::collect(stream).await,
            Err(e) => Err(e),
        }
    };
    // /stop must not wait for a summary nobody will use; the history is untouched.
    let started_at = skald_store::now_ms();
    let summary = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Ok(false),
        r = summarise => r,
    };
    // Counted like any model call: the chat's cost, today's, the daily budget.
    let failure = summary.as_ref().err().map(ToString::to_string);
    crate::usage::record_call(
        store,
        session_id,
        model,
        env.models.price_of(model),
        match failure {
            None => skald_store::RequestStatus::Ok,
            Some(_) => skald_store::RequestStatus::Failed,
        },
        summary.as_ref().ok().and_then(|r| r.usage),
        failure.as_deref(),
        started_at,
    )?;
    match summary {
        Ok(r) if !r.text.trim().is_empty() => {
            store.add_summary(session_id, up_to, r.text.trim())?;
            emit(Event::ContextCompacted {
                session_id,
                up_to_message_id: up_to,
            });
            Ok(true)
        }
        // Without a summary the turn goes on with the full context; the provider will say
        // if it is too long.
        Ok(_) => Ok(false),
        Err(e) => {
            emit(Event::Error {
                message: format!("could not summarise older turns: {e}"),
            });
            Ok(false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_grow_with_text() {
        let small = estimate_tokens(&[Message::user("hi")]);
        let big = estimate_tokens(&[Message::user("x".repeat(4000))]);
        assert!(big > 900 && big < 1200, "{big}");
        assert!(small < 10);
    }
}
