//! Temporary bypasses: "approve all of this kind for a while", per session.

use serde::Serialize;
use skald_api::ToolCategory;
use skald_api::tool_names as tn;

/// Who knows a tool's category: the registry. Named here so the gate does not depend on
/// the registry (which holds the tools, which use the gate).
pub trait CategoryOf {
    fn category_of(&self, tool: &str) -> Option<ToolCategory>;
}

/// What a temporary bypass covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(tag = "scope", content = "value", rename_all = "snake_case")]
pub enum BypassScope {
    All,
    /// A tool category: filesystem, shell, config, …
    Category(String),
    /// One MCP server's tools.
    McpServer(String),
}

/// Temporary bypasses per session: calls they cover that need approval run without asking
/// until they expire. They never override a deny.
/// A bypass's scope and when it ends (`None`: with the session in this process).
type Bypass = (BypassScope, Option<std::time::Instant>);

#[derive(Default)]
pub struct Bypasses {
    entries: std::sync::Mutex<std::collections::HashMap<i64, Vec<Bypass>>>,
}

impl Bypasses {
    /// `for_` None lasts as long as the session runs in this process.
    pub fn grant(&self, session_id: i64, scope: BypassScope, for_: Option<std::time::Duration>) {
        let until = for_.map(|d| std::time::Instant::now() + d);
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(session_id)
            .or_default()
            .push((scope, until));
    }

    pub fn covers(&self, session_id: i64, tool: &str, registry: &impl CategoryOf) -> bool {
        let now = std::time::Instant::now();
        let category = registry.category_of(tool).map(|c| c.as_str().to_string());
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&session_id)
            .is_some_and(|list| {
                list.iter().any(|(scope, until)| {
                    until.is_none_or(|u| now < u)
                        && match scope {
                            BypassScope::All => true,
                            BypassScope::Category(c) => category.as_deref() == Some(c.as_str()),
                            BypassScope::McpServer(s) => {
                                tool.starts_with(&format!("{}{s}__", tn::MCP_PREFIX))
                            }
                        }
                })
            })
    }
}
