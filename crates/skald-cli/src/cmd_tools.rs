//! `skald tools`: the catalog.

use crate::exit;
use crate::fail::{Fail, finish};
use skald_core::{ToolCatalog, ToolInfo, builtin_registry};
use std::sync::Arc;

pub fn run(data_dir: &skald_core::DataDir, json: bool) -> u8 {
    finish("skald", list(data_dir, json))
}

fn list(data_dir: &skald_core::DataDir, json: bool) -> Result<u8, Fail> {
    let registry = builtin_registry().map_err(Fail::failed)?;
    // Tools offered to a model before (MCP, plugins) are listed too, so rules can name them.
    let known = skald_store::Store::open(data_dir.db_path())
        .and_then(|s| s.list_known_tools())
        .unwrap_or_default();
    let all = ToolCatalog::new(Arc::new(registry))
        .with_known(known)
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
