//! One model answer: the request to the current model or its fallbacks, read as it
//! streams and stored before it is shown.

use super::conversation::conversation;
use super::offer;
use super::{Emit, TurnEnv, TurnError};
use crate::models::candidates;
use futures::StreamExt;
use skald_api::CancellationToken;
use skald_api::events::{Event, TurnOutcome};
use skald_llm::{Request, ToolCall, ToolChoice, ToolSpec, Usage};
use skald_store::{MessageStatus, NewMessage, RequestStatus, Role};

/// One model answer for the next round: the stored message's id, its text and its tool
/// calls — or how the turn ends if no model could answer. Failures before an answer
/// starts move on to the next fallback model (at most `MAX_FALLBACKS`); a stream cut
/// mid-answer keeps what arrived (marked interrupted) and asks again, so the model can
/// continue from it.
pub(super) async fn answer(
    env: &TurnEnv<'_>,
    session_id: i64,
    tools: &[ToolSpec],
    tool_choice: ToolChoice,
    cancel: &CancellationToken,
    emit: Emit<'_>,
) -> Result<Result<(i64, String, Vec<ToolCall>), TurnOutcome>, TurnError> {
    let store = env.store;
    let models = env.models.current();
    let candidates = candidates(&models, env.health);
    let current = conversation(env, session_id)?;
    // The first attempt sends the context just built, unless a summary replaced part of
    // it; later attempts rebuild it, since a cut answer has been added to the history.
    let mut prepared =
        if crate::turn::compact::compact_if_needed(env, session_id, &current, tools, cancel, emit)
            .await?
        {
            None
        } else {
            Some(current)
        };
    let max_attempts = candidates.len() + 2;
    let (mut idx, mut attempts) = (0, 0);
    while let Some(model) = candidates.get(idx).copied() {
        if attempts == max_attempts {
            break;
        }
        attempts += 1;
        let label = model.label();
        let mut messages = match prepared.take() {
            Some(m) => m,
            None => conversation(env, session_id)?,
        };
        // A model that cannot see is told where an image was; one that can is sent the
        // newest within what its provider takes, fitted off the async threads
        // (docs/images.md).
        if !env.models.sees_images(model) {
            skald_llm::vision::without_images(
                &mut messages,
                &format!("the model answering ({label}) cannot see images"),
            );
        } else if messages.iter().any(|m| !m.images.is_empty()) {
            let budget = skald_llm::vision::budget_for(model.provider.kind);
            messages = tokio::task::spawn_blocking(move || {
                skald_llm::vision::keep_within(&mut messages, budget);
                messages
            })
            .await
            .map_err(|e| {
                TurnError::Store(skald_store::StoreError::Corrupt(format!(
                    "preparing the conversation's images stopped: {e}"
                )))
            })?;
        }
        // Where the provider searches by itself and the person chose its search, its own
        // search is offered instead of Skald's web_search (docs/web.md, "Search").
        let native_search = model.provider.kind.searches_by_itself()
            && env.engine.is_some_and(|e| e.web().uses_provider_search())
            // A rule that denies web_search outright turns the provider's off too.
            && !crate::approval::hidden_tools(
                env.store,
                &env.cfg.run,
                [skald_api::tool_names::WEB_SEARCH],
            )
            .iter()
            .any(|t| t == skald_api::tool_names::WEB_SEARCH);
        let mut offered = offer::fit_to_model(model, tools, env.registry);
        if native_search {
            offered.retain(|t| t.name != skald_api::tool_names::WEB_SEARCH);
        }
        let request = Request {
            model: model.model.clone(),
            messages,
            tools: offered,
            web_search: native_search,
            tool_choice,
            max_tokens: None,
            temperature: None,
            // Only to a model that takes one: a fallback may not.
            effort: env
                .cfg
                .effort
                .filter(|_| skald_llm::effort::takes_effort(model.provider.kind, &model.model)),
        };
        let started_at = skald_store::now_ms();
        let price = env.models.price_of(model);
        let record = |status: RequestStatus, usage: Option<Usage>, error: Option<&str>| {
            crate::usage::record_call(
                store, session_id, model, price, status, usage, error, started_at,
            )
        };
        let next = candidates.get(idx + 1).copied();
        let move_on = |e: &skald_llm::LlmError| {
            emit(Event::LlmFailed {
                message: e.to_string(),
                retrying: next.is_some(),
            });
            if let Some(to) = next {
                emit(Event::ModelFallback {
                    from: label.clone(),
                    to: to.label(),
                    reason: e.to_string(),
                });
            }
        };
        let started = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Ok(Err(TurnOutcome::Cancelled)),
            r = model.provider.stream(&request) => r,
        };
        let stream = match started {
            Ok(s) => s,
            // A model nothing said was blind (an unknown model behind an OpenAI-compatible
            // server) refused the images: asked again without them, and not sent any more.
            Err(e) if refused_images(&e, &request) && env.models.sees_images(model) => {
                record(RequestStatus::Failed, None, Some(&e.to_string()))?;
                env.models.refused_images(model);
                emit(Event::LlmFailed {
                    message: format!(
                        "{label} refused the images ({e}); asking again without them, and \
                         sending it none from now on (say it sees in config.toml \
                         [models.vision] if that is wrong)"
                    ),
                    retrying: true,
                });
                continue;
            }
            Err(e) => {
                record(RequestStatus::Failed, None, Some(&e.to_string()))?;
                env.health.failed(&label);
                move_on(&e);
                idx += 1;
                continue;
            }
        };
        match read_stream(env, session_id, &model.provider.name, stream, cancel, emit).await? {
            Streamed::Complete {
                message_id,
                text,
                calls,
                usage,
            } => {
                record(RequestStatus::Ok, usage, None)?;
                env.health.succeeded(&label);
                return Ok(Ok((message_id, text, calls)));
            }
            Streamed::Cancelled { usage } => {
                record(RequestStatus::Cancelled, usage, None)?;
                return Ok(Err(TurnOutcome::Cancelled));
            }
            Streamed::Failed { error: e, usage } => {
                record(RequestStatus::Failed, usage, Some(&e.to_string()))?;
                env.health.failed(&label);
                if e.is_retryable() && attempts < max_attempts {
                    // The same model again: it sees its cut answer and can continue.
                    emit(Event::LlmFailed {
                        message: e.to_string(),
                        retrying: true,
                    });
                } else {
                    move_on(&e);
                    idx += 1;
                }
            }
        }
    }
    Ok(Err(TurnOutcome::Failed))
}

/// Whether `e` is a provider refusing the images `request` carried: an error status whose
/// message speaks of images (llama.cpp's server without a projector, vLLM's "not a
/// multimodal model", OpenAI's "image_url is only supported by certain models",
/// OpenRouter's "no endpoints found that support image input").
fn refused_images(e: &skald_llm::LlmError, request: &Request) -> bool {
    let skald_llm::LlmError::Status {
        status, message, ..
    } = e
    else {
        return false;
    };
    let message = message.to_ascii_lowercase();
    *status >= 400
        && *status != 401
        && *status != 403
        && *status != 429
        && request.messages.iter().any(|m| !m.images.is_empty())
        && ["image", "vision", "multimodal", "mmproj"]
            .iter()
            .any(|w| message.contains(w))
}

/// How one streamed answer ended.
enum Streamed {
    Complete {
        message_id: i64,
        text: String,
        calls: Vec<ToolCall>,
        usage: Option<Usage>,
    },
    Failed {
        error: skald_llm::LlmError,
        usage: Option<Usage>,
    },
    Cancelled {
        usage: Option<Usage>,
    },
}

/// Reads one answer as it streams. It is stored before each piece is shown: a crash never
/// loses text the user has seen. A cut or stopped answer stays, marked interrupted.
async fn read_stream(
    env: &TurnEnv<'_>,
    session_id: i64,
    provider: &str,
    mut stream: skald_llm::EventStream,
    cancel: &CancellationToken,
    emit: Emit<'_>,
) -> Result<Streamed, TurnError> {
    let store = env.store;
    let msg = store.append_message(&NewMessage {
        status: MessageStatus::Streaming,
        stack_id: env.frame.stack_id,
        ..NewMessage::new(session_id, Role::Assistant, "")
    })?;
    let (mut text, mut reasoning) = (String::new(), String::new());
    let mut calls: Vec<ToolCall> = Vec::new();
    let mut replay = Vec::new();
    let mut usage = None;
    let failure = loop {
        let next_event = tokio::select! {
            biased;
            _ = cancel.cancelled() => {
                store.update_message(msg.id, &text, some(&reasoning), MessageStatus::Interrupted)?;
                return Ok(Streamed::Cancelled { usage });
            }
            n = stream.next() => n,
        };
        match next_event {
            None => break None,
            Some(Err(e)) => break Some(e),
            Some(Ok(skald_llm::Event::Text { delta })) => {
                text.push_str(&delta);
                store.update_message(msg.id, &text, some(&reasoning), MessageStatus::Streaming)?;
                emit(Event::TokenDelta { text: delta });
            }
            Some(Ok(skald_llm::Event::Reasoning { delta })) => {
                reasoning.push_str(&delta);
                store.update_message(msg.id, &text, some(&reasoning), MessageStatus::Streaming)?;
                emit(Event::Thinking { text: delta });
            }
            Some(Ok(skald_llm::Event::ToolCall { call })) => calls.push(call),
            Some(Ok(skald_llm::Event::Replay { block })) => replay.push(block),
            Some(Ok(skald_llm::Event::Usage { usage: u })) => usage = Some(u),
            Some(Ok(skald_llm::Event::Finish { .. })) => {}
            Some(Ok(skald_llm::Event::Reading { done, total })) => {
                emit(Event::PromptProgress { read: done, total });
            }
            Some(Ok(skald_llm::Event::RateLimits { limits })) => {
                let limits =
                    crate::limits::rate_limit_info(provider, &limits, skald_store::now_ms());
                if let Some(engine) = env.engine {
                    engine.limits.saw(&limits);
                }
                emit(Event::RateLimits { session_id, limits });
            }
        }
    };
    let status = match failure {
        None => MessageStatus::Complete,
        Some(_) => MessageStatus::Interrupted,
    };
    store.update_message(msg.id, &text, some(&reasoning), status)?;
    // Kept only from a whole answer: a signature covers the thinking as it ended.
    if failure.is_none() && !replay.is_empty() {
        store.set_message_replay(msg.id, &replay)?;
    }
    Ok(match failure {
        None => Streamed::Complete {
            message_id: msg.id,
            text,
            calls,
            usage,
        },
        Some(error) => Streamed::Failed { error, usage },
    })
}

fn some(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}
