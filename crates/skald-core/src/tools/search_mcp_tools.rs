//! search_mcp_tools: when the activated MCP servers' tool definitions would take more
//! than `[mcp] tool_search_percent` of the context window, the agent gets this search
//! instead of every definition (docs/mcp.md "Many tools"). What it finds is in the
//! agent's tool list from its next step, for the rest of the session.

use super::{Call, ToolCx};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use skald_api::tool_args;
use skald_api::{Audience, Tool, ToolCategory, ToolError, ToolResult, tool_names as tn};

pub struct SearchMcpTools;

impl SearchMcpTools {
    pub const NAME: &'static str = tn::SEARCH_MCP_TOOLS;
}

// The arguments' doc comments are the descriptions the model reads.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// What the tool should do, in a few words
    query: String,
    /// Only this server's tools
    server: Option<String>,
}

/// Most tools one search returns.
const FOUND: usize = 8;

impl<'a> Tool<ToolCx<'a>> for SearchMcpTools {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Search the tools of the MCP servers you activated (there are too many to list \
         them all). The tools found are in your list from your next step."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Introspection
    }

    /// Not in the static list: `turn_tools` offers it when the definitions are too many.
    fn offered_to(&self, _who: &Audience) -> bool {
        false
    }

    fn execute(&self, cx: &ToolCx<'a>, args: Value) -> ToolResult {
        let call = cx.call()?;
        search(call, &tool_args::parse(args)?)
    }
}

fn search(call: &Call<'_>, args: &Args) -> ToolResult {
    let engine = call
        .engine
        .ok_or_else(|| ToolError::failed("MCP servers are not available in this run"))?;
    let granted = call
        .store
        .granted_groups(call.session_id, call.stack_id)
        .map_err(super::store_err)?;
    let only = args.server.as_deref().unwrap_or("");
    let servers: Vec<String> = granted
        .into_iter()
        .filter(|g| only.is_empty() || g == only)
        .collect();
    let tools = engine.mcp.offered(&servers);
    let query = args.query.as_str();
    let found = rank(query, &tools);
    if found.is_empty() {
        return Ok(format!(
            "No tool of {} matches `{query}`; try other words.",
            if only.is_empty() {
                "the activated servers".to_string()
            } else {
                format!("`{only}`")
            }
        ));
    }
    let names: Vec<String> = found.iter().map(|t| t.name.clone()).collect();
    engine
        .mcp
        .load_tools(call.session_id, call.stack_id, &names);
    let list: Vec<Value> = found
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "parameters": t.parameters}))
        .collect();
    Ok(json!({
        "tools": list,
        "note": "These tools are in your list from your next step."
    })
    .to_string())
}

/// The tools that best match the query's words: a word in a tool's name counts three
/// times what it does in its description; ties keep the servers' order.
fn rank<'t>(query: &str, tools: &'t [skald_llm::ToolSpec]) -> Vec<&'t skald_llm::ToolSpec> {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 1)
        .take(20)
        .map(str::to_lowercase)
        .collect();
    let mut scored: Vec<(usize, usize, &skald_llm::ToolSpec)> = tools
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let name = t.name.to_lowercase();
            let description = t.description.to_lowercase();
            let score = words
                .iter()
                .map(|w| {
                    3 * usize::from(name.contains(w.as_str()))
                        + description.matches(w.as_str()).count()
                })
                .sum();
            (score, i, t)
        })
        .filter(|(score, _, _)| *score > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().take(FOUND).map(|(_, _, t)| t).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, description: &str) -> skald_llm::ToolSpec {
        skald_llm::ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters: json!({"type": "object"}),
        }
    }

    #[test]
    fn names_weigh_more_than_descriptions_and_nothing_matches_nothing() {
        let tools = vec![
            spec("mcp__gh__list_issues", "List the issues of a repository"),
            spec("mcp__gh__create_issue", "Open an issue"),
            spec(
                "mcp__gh__get_file",
                "Read a file; issue numbers are not files",
            ),
        ];
        let found: Vec<&str> = rank("create issue", &tools)
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(
            found,
            [
                "mcp__gh__create_issue",
                "mcp__gh__list_issues",
                "mcp__gh__get_file"
            ]
        );
        assert!(rank("weather", &tools).is_empty());
        assert!(rank("", &tools).is_empty());
    }
}
