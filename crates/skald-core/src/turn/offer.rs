//! The tools a turn offers its agent each round.

use super::{TurnEnv, TurnError};
use crate::approval;
use crate::engine::registry::ToolRegistry;
use skald_api::{Audience, tool_names as tn};
use skald_llm::ToolSpec;

/// What decides the tools offered: when it moves, they are built again.
pub(super) type ToolsKey = (Vec<String>, u64, bool, bool);

/// What the offered tools depend on besides the registry and the rules (fixed during a
/// turn): the agent's grants, the MCP servers' state, whether image generation is on,
/// whether the chat plans.
pub(super) fn tools_key_now(env: &TurnEnv<'_>, session_id: i64) -> Result<ToolsKey, TurnError> {
    Ok((
        env.store.granted_groups(session_id, env.frame.stack_id)?,
        // Both only grow, so their sum moves whenever either does.
        env.engine.map_or(0, |e| {
            e.mcp.manager.generation().wrapping_add(e.mcp.loads())
        }),
        env.engine
            .is_some_and(|e| e.plugins.images.provider().is_some()),
        env.cfg.run.is_planning(),
    ))
}

/// The tools offered this round, less those the group denies outright (docs/tools.md,
/// "Which tools an agent is offered"); every offered name is recorded for the approval UI.
pub(super) fn turn_tools(env: &TurnEnv<'_>, session_id: i64) -> Result<Vec<ToolSpec>, TurnError> {
    let granted = env.store.granted_groups(session_id, env.frame.stack_id)?;
    let config = granted.iter().any(|g| g == tn::CONFIG_GROUP);
    let mut tools = offered_tools(env, config);
    let planning = env.cfg.run.is_planning();
    // In plan mode commands run only in the read-only sandbox: none where it cannot.
    if planning && !env.cfg.run.sandbox.confines() {
        tools.retain(|t| t.name != tn::EXECUTE_CMD);
    }
    // An MCP server's tools may change anything: none in plan mode.
    if let Some(engine) = env.engine.filter(|_| !planning) {
        // Too many definitions for the context: a search over them instead (docs/mcp.md
        // "Many tools").
        let percent = engine.settings.mcp.tool_search_percent;
        let budget = (percent > 0).then(|| env.cfg.context_window * usize::from(percent) / 100);
        let (mcp_tools, search) =
            engine
                .mcp
                .offered_within(&granted, session_id, env.frame.stack_id, budget);
        tools.extend(mcp_tools);
        if search
            && let Some(spec) = env
                .registry
                .definition(tn::SEARCH_MCP_TOOLS)
                .as_ref()
                .and_then(ToolSpec::from_openai)
        {
            tools.push(spec);
        }
        if engine.mcp.has_resources(&granted)
            && let Some(spec) = env
                .registry
                .definition(tn::READ_MCP_RESOURCE)
                .as_ref()
                .and_then(ToolSpec::from_openai)
        {
            tools.push(spec);
        }
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

/// The tools a frame is offered (docs/tools.md, "Which tools an agent is offered"): each
/// registered tool says whether it is for this agent — its depth, whether anyone is
/// watching, whether it activated the `config` group.
pub(super) fn offered_tools(env: &TurnEnv<'_>, config: bool) -> Vec<ToolSpec> {
    env.registry
        .offered(&audience(env, config))
        .iter()
        .filter_map(ToolSpec::from_openai)
        .collect()
}

/// Who this frame's agent is, for the tools to say whether they are for it.
pub(super) fn audience(env: &TurnEnv<'_>, config: bool) -> Audience {
    let system = env.library.is_some_and(|l| {
        l.get(&env.cfg.run.agent_id)
            .is_ok_and(|a| a.meta.kind == crate::agents::AgentKind::System)
    });
    Audience {
        depth: env.frame.depth,
        background: env.cfg.background,
        system,
        config,
        images: env
            .engine
            .is_some_and(|e| e.plugins.images.provider().is_some()),
        delegation: env.library.is_some(),
        plan: env.cfg.run.is_planning(),
        web_search: env
            .engine
            .is_some_and(|e| matches!(e.web().search_api(), Ok(Some(_)))),
    }
}

/// The offered `tools` that `model` is sent: all of them, or for a small local model only
/// those it can use — the tools that say so themselves (`Tool::for_small_models`; see
/// docs/models.md, "Small models"): reading, searching and changing files, a command, and
/// a question to the person. A model of a billion parameters or less picks among two
/// dozen tools poorly, and every schema costs it context and reading time. The turn and
/// `Engine::prepare_chat` both send what this gives, so a prepared beginning matches a
/// chat's.
pub fn fit_to_model(
    model: &skald_llm::ModelChoice,
    tools: &[ToolSpec],
    registry: &ToolRegistry,
) -> Vec<ToolSpec> {
    if skald_llm::local::is_small(model) {
        tools
            .iter()
            .filter(|t| registry.get(&t.name).is_some_and(|t| t.for_small_models()))
            .cloned()
            .collect()
    } else {
        tools.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skald_llm::{ModelChoice, Provider, ProviderKind, Timeouts};

    fn choice(kind: ProviderKind, dir: &std::path::Path, name: &str) -> ModelChoice {
        ModelChoice {
            provider: Provider::new(
                "p",
                kind,
                dir.display().to_string(),
                None,
                Timeouts::default(),
            )
            .unwrap(),
            model: name.to_string(),
        }
    }

    #[test]
    fn only_small_local_models_are_given_fewer_tools() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tiny.gguf"), b"GGUF\x03\x00\x00\x00").unwrap();
        // Sparse: the size is what counts, not the bytes.
        std::fs::File::create(dir.path().join("big.gguf"))
            .unwrap()
            .set_len(skald_llm::local::SMALL_MODEL_BYTES)
            .unwrap();
        let spec = |name: &str| ToolSpec {
            name: name.to_string(),
            description: String::new(),
            parameters: serde_json::json!({"type": "object"}),
        };
        let all: Vec<ToolSpec> = [
            tn::READ_FILE,
            tn::EXECUTE_TASK,
            tn::EDIT_FILE,
            tn::WRITE_TODOS,
            "mcp__github__search",
        ]
        .iter()
        .map(|n| spec(n))
        .collect();
        let mut registry = ToolRegistry::new();
        for (tool, kind) in crate::tools::all() {
            registry.register_arc(tool, kind).unwrap();
        }
        let names = |v: Vec<ToolSpec>| v.into_iter().map(|t| t.name).collect::<Vec<_>>();
        let small = choice(ProviderKind::Local, dir.path(), "tiny");
        assert_eq!(
            names(fit_to_model(&small, &all, &registry)),
            [tn::READ_FILE, tn::EDIT_FILE]
        );
        // At the threshold, a model missing, or any other provider: everything offered.
        for other in [
            choice(ProviderKind::Local, dir.path(), "big"),
            choice(ProviderKind::Local, dir.path(), "missing"),
            choice(ProviderKind::OpenAi, dir.path(), "tiny"),
        ] {
            assert_eq!(
                fit_to_model(&other, &all, &registry).len(),
                all.len(),
                "{other:?}"
            );
        }
        // A name that is a path to the small file is the same model.
        let by_path = choice(
            ProviderKind::Local,
            dir.path(),
            &dir.path().join("tiny.gguf").display().to_string(),
        );
        assert_eq!(fit_to_model(&by_path, &all, &registry).len(), 2);
    }
}
