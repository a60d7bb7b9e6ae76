//! `skald tools`: the catalog.

use crate::exit;
use crate::fail::{Fail, finish};
use skald_core::{McpToolSource, ToolCatalog, ToolInfo, builtin_registry};
use std::sync::Arc;

pub async fn run(data_dir: &skald_core::DataDir, config: &skald_core::Config, json: bool) -> u8 {
    finish("skald", list(data_dir, config, json).await)
}

/// The tools of the servers that connected when `skald tools` started them.
struct Connected(Vec<ToolInfo>);

impl McpToolSource for Connected {
    fn mcp_tools(&self) -> Vec<ToolInfo> {
        self.0.clone()
    }
}

async fn list(
    data_dir: &skald_core::DataDir,
    config: &skald_core::Config,
    json: bool,
) -> Result<u8, Fail> {
    let registry = builtin_registry().map_err(Fail::failed)?;
    let store = skald_store::Store::open(data_dir.db_path()).ok();
    // Tools offered to a model before (MCP, plugins) are listed too, so rules can name them.
    let known = store
        .as_ref()
        .and_then(|s| s.list_known_tools().ok())
        .unwrap_or_default();
    // The servers that are on are started once, as `skald mcp list` does, so their tools
    // are listed as models see them; one that does not connect leaves what was seen of it.
    let servers: Vec<_> = store
        .as_ref()
        .and_then(|s| s.list_mcp_servers().ok())
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.enabled)
        .collect();
    let probes = crate::cmd_mcp::probe_all(data_dir, config, &servers).await;
    let mut connected: Vec<ToolInfo> = probes
        .into_iter()
        .zip(&servers)
        .filter(|((status, _), _)| matches!(status, skald_core::mcp::Status::Ready { .. }))
        .flat_map(|((_, tools), server)| tools.into_iter().map(move |t| (&server.name, t)))
        .map(|(server, t)| ToolInfo {
            name: skald_core::mcp::tool_name(server, &t.name),
            description: t.description,
            category: None,
            parameters: t.input_schema,
            source: skald_core::ToolSource::Mcp,
            sub_agents_only: false,
            root_agent_only: false,
        })
        .collect();
    connected.sort_by(|a, b| a.name.cmp(&b.name));
    let all = ToolCatalog::new(Arc::new(registry))
        .with_known(known)
        .with_mcp(Arc::new(Connected(connected)))
        .list_all();
    let tools: Vec<&ToolInfo> = all.built_in.iter().chain(all.mcp.iter()).collect();
    if json {
        let text = serde_json::to_string_pretty(&tools).map_err(Fail::failed)?;
        println!("{text}");
        return Ok(exit::OK);
    }
    let width = tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
    for t in &tools {
        let category = t.category.map(|c| c.as_str()).unwrap_or("-");
        let source = match t.source {
            skald_core::ToolSource::Builtin => "",
            skald_core::ToolSource::Synthetic => " (agent-only)",
            skald_core::ToolSource::Mcp => " (mcp)",
            skald_core::ToolSource::Known => " (seen before)",
        };
        println!(
            "{:<width$}  {:<13}  {}{}",
            t.name,
            category,
            first_sentence(&t.description),
            source
        );
    }
    Ok(exit::OK)
}

/// The first sentence of a description, for a one-line listing.
fn first_sentence(text: &str) -> &str {
    let line = text.lines().next().unwrap_or("");
    match line.find(". ") {
        Some(i) => &line[..=i],
        None => line,
    }
}
