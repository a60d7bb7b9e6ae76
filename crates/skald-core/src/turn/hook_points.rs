//! Where a turn fires hooks (docs/hooks.md): as it opens (SessionStart, UserPromptSubmit),
//! when the agent would stop (Stop, SubagentStop), and for the other steps through
//! `fire_hooks`; and what the hooks add for the model.

use super::{Emit, TurnConfig, TurnEnv, TurnError};
use skald_api::events::Event;
use skald_store::{NewMessage, Role};

/// What the hooks a turn starts with left for the rest of it.
pub(super) struct Opening {
    /// What SessionStart and UserPromptSubmit hooks add, stored after the message.
    pub(super) context: Vec<String>,
    /// Whether the turn was announced as running already (before the hooks ran, since
    /// they can take seconds).
    pub(super) running: bool,
}

/// The SessionStart and UserPromptSubmit hooks of a root agent's turn. `None`: a hook
/// stopped the prompt, and the turn ends cancelled.
pub(super) async fn opening_hooks(
    env: &TurnEnv<'_>,
    session_id: i64,
    prompt: Option<&str>,
    emit: Emit<'_>,
) -> Result<Option<Opening>, TurnError> {
    let cfg = env.cfg;
    let mut opening = Opening {
        context: Vec::new(),
        running: false,
    };
    if env.frame.stack_id.is_some() || cfg.hooks.is_empty() {
        return Ok(Some(opening));
    }
    emit(Event::TurnRunning { session_id });
    opening.running = true;
    if let Some(source) = session_start(env, session_id)? {
        let v = fire_hooks(
            cfg,
            session_id,
            None,
            crate::hooks::HookEvent::SessionStart,
            Some(source.into()),
            serde_json::json!({ "source": source }),
            emit,
        )
        .await;
        opening.context.extend(v.context);
    }
    if let Some(p) = prompt {
        match prompt_hooks(cfg, session_id, p, emit).await {
            Some(context) => opening.context.extend(context),
            None => return Ok(None),
        }
    }
    Ok(Some(opening))
}

/// The Stop (or SubagentStop) hooks after an answer without tool calls: whether one asks
/// the agent to go on (run the tests first, …). At most `MAX_STOP_CONTINUES` times, so two
/// hooks cannot keep a turn going for ever.
pub(super) async fn stop_hooks(
    env: &TurnEnv<'_>,
    session_id: i64,
    stop_continues: &mut usize,
    emit: Emit<'_>,
) -> Result<bool, TurnError> {
    let cfg = env.cfg;
    if cfg.hooks.is_empty() || *stop_continues >= MAX_STOP_CONTINUES {
        return Ok(false);
    }
    let event = if env.frame.stack_id.is_none() {
        crate::hooks::HookEvent::Stop
    } else {
        crate::hooks::HookEvent::SubagentStop
    };
    let v = fire_hooks(
        cfg,
        session_id,
        None,
        event,
        None,
        serde_json::json!({ "stop_hook_active": *stop_continues > 0 }),
        emit,
    )
    .await;
    let (Some(reason), None) = (v.blocked, v.stop) else {
        return Ok(false);
    };
    *stop_continues += 1;
    env.store.append_message(&NewMessage {
        stack_id: env.frame.stack_id,
        ..NewMessage::new(
            session_id,
            Role::System,
            format!(
                "A {} hook asks you to go on before you finish: {reason}",
                event.name()
            ),
        )
    })?;
    Ok(true)
}

/// How many times Stop hooks may send an agent back to work in one turn.
const MAX_STOP_CONTINUES: usize = 3;

/// Whether this turn starts a session for SessionStart hooks: `startup` for a chat's first
/// turn, `resume` for the first this process runs in an older chat; None otherwise.
fn session_start(env: &TurnEnv<'_>, session_id: i64) -> Result<Option<&'static str>, TurnError> {
    if !env.store.has_messages(session_id)? {
        if let Some(engine) = env.engine {
            engine.started_session(session_id);
        }
        return Ok(Some("startup"));
    }
    Ok(match env.engine {
        Some(engine) if engine.started_session(session_id) => Some("resume"),
        _ => None,
    })
}

/// Fires the turn's hooks of `event` (docs/hooks.md) in its folder, about the call `call`
/// when there is one; nothing when it has none.
pub(crate) async fn fire_hooks(
    cfg: &TurnConfig,
    session_id: i64,
    call: Option<&str>,
    event: crate::hooks::HookEvent,
    subject: Option<crate::hooks::Subject<'_>>,
    input: serde_json::Value,
    emit: Emit<'_>,
) -> crate::hooks::Verdict {
    if cfg.hooks.is_empty() {
        return crate::hooks::Verdict::default();
    }
    // A project's hooks run confined as the chat's commands are (docs/hooks.md).
    let project_sandbox = if cfg.hooks.has_project_hooks() {
        match crate::sandbox::command_sandbox(&cfg.run) {
            skald_api::CommandSandbox::On { helper, policy, .. } => Some((helper, policy)),
            _ => None,
        }
    } else {
        None
    };
    let at = crate::hooks::Fire {
        session_id,
        call,
        cwd: &cfg.run.working_dir,
        hidden_env: &cfg.run.hidden_env,
        project_sandbox,
        emit,
    };
    crate::hooks::fire(&cfg.hooks, event, subject, input, &at).await
}

/// The UserPromptSubmit hooks of one message: what they add for the model, or None when
/// one blocked it — then it is not kept, and the person is told why.
pub(super) async fn prompt_hooks(
    cfg: &TurnConfig,
    session_id: i64,
    text: &str,
    emit: Emit<'_>,
) -> Option<Vec<String>> {
    let v = fire_hooks(
        cfg,
        session_id,
        None,
        crate::hooks::HookEvent::UserPromptSubmit,
        None,
        serde_json::json!({ "prompt": text }),
        emit,
    )
    .await;
    if let Some(reason) = v.blocked.or(v.stop) {
        emit(Event::Error {
            message: format!("A UserPromptSubmit hook blocked this message: {reason}"),
        });
        return None;
    }
    Some(v.context)
}

/// Stores what hooks added for the model, after the message they ran for.
pub(super) fn add_hook_context(
    env: &TurnEnv<'_>,
    session_id: i64,
    context: &[String],
) -> Result<(), TurnError> {
    if context.is_empty() {
        return Ok(());
    }
    env.store.append_message(&NewMessage {
        stack_id: env.frame.stack_id,
        ..NewMessage::new(
            session_id,
            Role::System,
            format!("Context from hooks:\n\n{}", context.join("\n\n")),
        )
    })?;
    Ok(())
}
