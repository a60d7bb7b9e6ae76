//! The tools a turn offers its agent each round.

use super::{TurnEnv, TurnError};
use crate::approval;
use skald_api::{Audience, tool_names as tn};
use skald_llm::ToolSpec;

/// What the offered tools depend on besides the registry and the rules (fixed during a
/// turn): the agent's grants, the MCP servers' state, whether image generation is on.
pub(super) fn tools_key_now(
    env: &TurnEnv<'_>,
    session_id: i64,
) -> Result<(Vec<String>, u64, bool), TurnError> {
    Ok((
        env.store.granted_groups(session_id, env.frame.stack_id)?,
        env.engine.map_or(0, |e| e.mcp.manager.generation()),
        env.engine
            .is_some_and(|e| e.plugins.images.provider().is_some()),
    ))
}

/// The tools offered this round, less those the group denies outright (tools.md "Tool
/// Visibility Filtering"); every offered name is recorded for the approval UI.
pub(super) fn turn_tools(env: &TurnEnv<'_>, session_id: i64) -> Result<Vec<ToolSpec>, TurnError> {
    let granted = env.store.granted_groups(session_id, env.frame.stack_id)?;
    let config = granted.iter().any(|g| g == tn::CONFIG_GROUP);
    let mut tools = offered_tools(env, config);
    if let Some(engine) = env.engine {
        tools.extend(engine.mcp.offered(&granted));
    }
    let hidden = approval::hidden_tools(
        env.store,
        &env.cfg.run,
        tools.iter().map(|t| t.name.as_str()),
    );
    tools.retain(|t| !hidden.contains(&t.name));
    crate::discovery::observe(
        env.store,
        tools.iter().map(|t| {
            let source = if t.name.starts_with(crate::mcp::PREFIX) {
                "mcp"
            } else {
                "builtin"
            };
            (t.name.as_str(), source)
        }),
    );
    Ok(tools)
}

/// The tools a frame is offered (tools.md "Tool Visibility Filtering"): each registered
/// tool says whether it is for this agent — its depth, whether anyone is watching, whether
/// it activated the `config` group.
pub(super) fn offered_tools(env: &TurnEnv<'_>, config: bool) -> Vec<ToolSpec> {
    let system = env.library.is_some_and(|l| {
        l.get(&env.cfg.run.agent_id)
            .is_ok_and(|a| a.meta.kind == crate::agents::AgentKind::System)
    });
    let who = Audience {
        depth: env.frame.depth,
        background: env.cfg.background,
        system,
        config,
        images: env
            .engine
            .is_some_and(|e| e.plugins.images.provider().is_some()),
        delegation: env.library.is_some(),
    };
    env.registry
        .offered(&who)
        .iter()
        .filter_map(ToolSpec::from_openai)
        .collect()
}
