//! The body execute_task and execute_subtask share: a task agent run inline on a child
//! frame — same session, same stop token, the parent's run context — whose final answer
//! is the delegating call's result; and their label.

use super::{Call, ToolCx};
use crate::approval::RunContext;
use crate::turn::{Frame, MAX_DEPTH, TurnConfig, TurnEnv, TurnError, run_turn};
use serde_json::Value;
use skald_api::events::{Event, TurnOutcome};
use skald_api::{ExecutionOutcome, tool_names as tn};

/// The schema both tools share past their own fields.
fn arg(args: &Value, key: &str) -> String {
    args.get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_string()
}

/// Runs a task agent for `args` and gives the delegating call's outcome. `name` is the
/// tool the model called: execute_task belongs to the root of an interactive chat,
/// execute_subtask to everyone else.
pub(super) async fn run(cx: &ToolCx<'_>, name: &str, args: &Value) -> ExecutionOutcome {
    let call = match cx.call() {
        Ok(call) => call,
        Err(e) => return ExecutionOutcome::Failed(e.to_string()),
    };
    let Some(env) = call.turn else {
        return ExecutionOutcome::Failed("delegation is not available here".into());
    };
    match delegate(env, call, name, args).await {
        Ok(outcome) => outcome,
        Err(e) => cx.fatal(e),
    }
}

async fn delegate(
    env: &TurnEnv<'_>,
    call: &Call<'_>,
    name: &str,
    args: &Value,
) -> Result<ExecutionOutcome, TurnError> {
    let failed = |m: String| Ok(ExecutionOutcome::Failed(m));
    let Some(library) = env.library else {
        return failed("delegation is not available here".into());
    };
    let chat_root = env.frame.depth == 0 && !env.cfg.background;
    if name == tn::EXECUTE_TASK && !chat_root {
        return failed("execute_task is for the root agent of a chat; use execute_subtask".into());
    }
    if name == tn::EXECUTE_SUBTASK && chat_root {
        return failed("execute_subtask is for task agents; use execute_task".into());
    }
    let depth = env.frame.depth + 1;
    if depth > MAX_DEPTH {
        return failed(format!("delegation goes at most {MAX_DEPTH} levels deep"));
    }
    if name == tn::EXECUTE_TASK
        && let Some(later) = later(env, call, args)
    {
        return Ok(later);
    }
    let agent_id = arg(args, "agent_id");
    let agent = match library.get(&agent_id) {
        Ok(a) => a,
        Err(e) => return failed(e.to_string()),
    };
    if agent.meta.kind != crate::agents::AgentKind::Task {
        return failed(format!("`{agent_id}` is not a task agent"));
    }
    if agent_id == env.cfg.run.agent_id {
        return failed("an agent cannot delegate to itself".into());
    }
    // A sub-agent starts with no servers active (its grants are its own frame's).
    let mcp_list = match env.engine {
        Some(engine) => engine.mcp.prompt_list(env.store, &[]),
        None => env.mcp_list.to_string(),
    };
    let system_prompt = match library.system_prompt(&agent_id, &mcp_list) {
        // The folder's AGENTS.md files and skills hold for the sub-agent too.
        Ok(p) if env.cfg.instructions.text.is_empty() => p,
        Ok(p) => format!("{p}\n\n{}", env.cfg.instructions.text.trim()),
        Err(e) => return failed(e.to_string()),
    };
    let stack_id = env.store.create_stack_frame(
        call.session_id,
        env.frame.stack_id,
        call.call_id,
        &agent_id,
        depth,
    )?;
    let emit = call.emit;
    emit(Event::AgentStart {
        stack_id,
        agent_id: agent_id.clone(),
        depth,
    });
    let child_cfg = TurnConfig {
        system_prompt,
        run: RunContext {
            agent_id: agent_id.clone(),
            ..env.cfg.run.clone()
        },
        ..env.cfg.clone()
    };
    let child = TurnEnv {
        cfg: &child_cfg,
        frame: Frame {
            stack_id: Some(stack_id),
            depth,
        },
        queued: None,
        ..*env
    };
    // The child's own turn events stand inside agent_start/agent_done; its `done` is the
    // delegating call's result, not the end of the user's turn.
    let answer: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());
    let child_emit = |e: Event| match e {
        Event::Done { text, .. } => *crate::lock(&answer) = text,
        Event::TurnRunning { .. } | Event::UserMessage { .. } | Event::Context { .. } => {}
        other => emit(other),
    };
    let prompt = arg(args, "prompt");
    let outcome = run_turn(
        &child,
        call.session_id,
        Some(&crate::turn::Prompt::from(prompt)),
        call.cancel,
        &child_emit,
    )
    .await?;
    emit(Event::AgentDone {
        stack_id,
        agent_id: agent_id.clone(),
        outcome,
    });
    let answer = answer.into_inner().unwrap_or_else(|p| p.into_inner());
    Ok(match outcome {
        TurnOutcome::Final => ExecutionOutcome::Completed(answer),
        TurnOutcome::Cancelled => ExecutionOutcome::Cancelled,
        TurnOutcome::Exhausted => ExecutionOutcome::Failed(format!(
            "{agent_id} reached its round limit without an answer"
        )),
        TurnOutcome::Failed => {
            ExecutionOutcome::Failed(format!("{agent_id} could not reach a model"))
        }
    })
}

/// execute_task's `async` and `cron` modes: a background task or a schedule, which need
/// the engine, since they outlive the turn. `None` for `sync`, which runs here.
fn later(env: &TurnEnv<'_>, call: &Call<'_>, args: &Value) -> Option<ExecutionOutcome> {
    let mode = arg(args, "mode");
    if mode == "sync" {
        return None;
    }
    if mode != "async" && mode != "cron" {
        return Some(ExecutionOutcome::Failed(format!(
            "unknown mode `{mode}`: use sync, async or cron"
        )));
    }
    let Some(engine) = env.engine else {
        return Some(ExecutionOutcome::Failed(format!(
            "mode `{mode}` needs work to outlive this turn, which this run cannot do; use mode \
             \"sync\""
        )));
    };
    let started = if mode == "async" {
        engine
            .start_task(call.session_id, call.call_id, &env.cfg.run, args)
            .map(|task_id| serde_json::json!({"task_id": task_id, "status": "started"}).to_string())
    } else {
        crate::tasks::cron::schedule_from_chat(engine, call.session_id, &env.cfg.run, args)
    };
    Some(match started {
        Ok(text) => ExecutionOutcome::Completed(text),
        Err(e) => ExecutionOutcome::Failed(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The label as every history view gets it, through the registry.
    fn describe(name: &str, args: &Value) -> Option<String> {
        let registry = crate::builtin_registry().unwrap();
        let label = registry.describe_call(name, args, skald_api::ToolDescriptionLength::Full);
        (label != name || registry.contains(name) || name == tn::RUN_SUBTASK).then_some(label)
    }

    #[test]
    fn sub_agent_labels() {
        let args = json!({"mode": "sync", "agent_id": "software-engineer",
                          "description": "Refactor auth module", "title": "Refactor"});
        assert_eq!(
            describe(tn::EXECUTE_TASK, &args).unwrap(),
            "execute_task ⚡ → software-engineer: Refactor auth module"
        );
        let args = json!({"mode": "async", "agent_id": "researcher", "title": "Survey"});
        assert_eq!(
            describe(tn::EXECUTE_TASK, &args).unwrap(),
            "execute_task 🚀 → researcher: Survey"
        );
        let args = json!({"mode": "cron"});
        assert_eq!(
            describe(tn::EXECUTE_TASK, &args).unwrap(),
            "execute_task 📅"
        );
        assert_eq!(
            describe(tn::EXECUTE_SUBTASK, &json!({"agent_id": "a"})).unwrap(),
            "execute_subtask → a"
        );
        assert_eq!(
            describe(tn::RUN_SUBTASK, &json!({})).unwrap(),
            "run_subtask"
        );
        assert_eq!(describe("other", &json!({})), None);
    }
}
