//! `ToolCatalog`: one view of every tool an agent can be offered — built-in, synthetic
//! and MCP — for the approval UI, `skald tools` and labelling (docs/tools.md,
//! "Registry and catalog (`skald-core`)").

use crate::engine::registry::ToolRegistry;
use crate::tools::{DynTool, ToolOrigin};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use skald_api::{Audience, ToolCategory, ToolDescriptionLength};
use std::sync::Arc;

/// Where a tool comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolSource {
    /// A file or shell tool, which can also run on its own (`skald tool`).
    Builtin,
    /// One of the engine's own tools, which act on the session and run only inside an
    /// agent turn.
    Synthetic,
    /// Served by an MCP server.
    Mcp,
    /// Offered to a model at some point (an MCP or plugin tool not connected now), known
    /// from `known_tools` so that rules can name it.
    Known,
}

/// One tool as the catalog lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    pub description: String,
    /// `None` for MCP tools.
    pub category: Option<ToolCategory>,
    pub parameters: Value,
    pub source: ToolSource,
    pub sub_agents_only: bool,
    pub root_agent_only: bool,
}

/// Whether `tool` is offered to an agent at `depth` (0: a chat's root; 1: a task agent)
/// in any run at all: a background session or not, a system agent or not, with the
/// `config` group active or not, with images, delegation or web search or not.
fn offered_at_depth(tool: &DynTool, depth: usize) -> bool {
    (0..128u8).any(|bits| {
        let flag = |n: u8| bits & (1 << n) != 0;
        tool.offered_to(&Audience {
            depth,
            background: flag(0),
            system: flag(1),
            config: flag(2),
            images: flag(3),
            delegation: flag(4),
            plan: flag(5),
            web_search: flag(6),
        })
    })
}

/// Every tool, split the way the approval UI shows them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllTools {
    /// Every registered tool, sorted by name.
    pub built_in: Vec<ToolInfo>,
    /// MCP tools of every connected server, sorted by name.
    pub mcp: Vec<ToolInfo>,
}

/// Supplies the tools of the connected MCP servers. The MCP manager implements it; the
/// catalog only reads through it, so core does not depend on the MCP client.
pub trait McpToolSource: Send + Sync {
    fn mcp_tools(&self) -> Vec<ToolInfo>;
}

/// The catalog's MCP tools (`ToolCatalog::list_all`): those of every ready server, under
/// the names models see.
impl McpToolSource for crate::mcp::Servers {
    fn mcp_tools(&self) -> Vec<ToolInfo> {
        let mut out = Vec::new();
        for (server, status) in self.manager.statuses() {
            if !matches!(status, skald_mcp::Status::Ready { .. }) {
                continue;
            }
            for t in self.manager.tools(&server) {
                out.push(ToolInfo {
                    name: crate::mcp::tool_name(&server, &t.name),
                    description: t.description,
                    category: None,
                    parameters: t.input_schema,
                    source: ToolSource::Mcp,
                    sub_agents_only: false,
                    root_agent_only: false,
                });
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }
}

pub struct ToolCatalog {
    registry: Arc<ToolRegistry>,
    mcp: Option<Arc<dyn McpToolSource>>,
    known: Vec<skald_store::KnownTool>,
}

impl ToolCatalog {
    pub fn new(registry: Arc<ToolRegistry>) -> Self {
        ToolCatalog {
            registry,
            mcp: None,
            known: Vec::new(),
        }
    }

    /// Adds the tools recorded in `known_tools`; those not otherwise listed appear in
    /// `mcp` with source `known`.
    pub fn with_known(mut self, known: Vec<skald_store::KnownTool>) -> Self {
        self.known = known;
        self
    }

    pub fn with_mcp(mut self, mcp: Arc<dyn McpToolSource>) -> Self {
        self.mcp = Some(mcp);
        self
    }

    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// Every tool the catalog knows. A tool's `root_agent_only` and `sub_agents_only` say
    /// what its own `offered_to` decides: offered at the root and never below it, or the
    /// other way round, whoever else is asking. A tool the turn offers by a rule of its own
    /// (`read_mcp_resource`, `search_mcp_tools`) is neither.
    pub fn list_all(&self) -> AllTools {
        let built_in: Vec<ToolInfo> = self
            .registry
            .entries()
            .map(|(t, kind)| {
                (
                    t,
                    kind,
                    offered_at_depth(t.as_ref(), 0),
                    offered_at_depth(t.as_ref(), 1),
                )
            })
            .map(|(t, kind, root, sub)| ToolInfo {
                name: t.name().to_string(),
                description: t.description().to_string(),
                category: Some(t.category()),
                parameters: t.parameters_schema(),
                source: match kind {
                    ToolOrigin::Files => ToolSource::Builtin,
                    ToolOrigin::Engine => ToolSource::Synthetic,
                },
                sub_agents_only: !root && sub,
                root_agent_only: root && !sub,
            })
            .collect();
        let mut mcp = self.mcp.as_ref().map(|m| m.mcp_tools()).unwrap_or_default();
        for k in &self.known {
            let listed = built_in.iter().chain(mcp.iter()).any(|t| t.name == k.name);
            if !listed {
                mcp.push(ToolInfo {
                    name: k.name.clone(),
                    description: format!("Seen before ({}); not connected now.", k.source),
                    category: None,
                    parameters: serde_json::json!({"type": "object"}),
                    source: ToolSource::Known,
                    sub_agents_only: false,
                    root_agent_only: false,
                });
            }
        }
        mcp.sort_by(|a, b| a.name.cmp(&b.name));
        AllTools { built_in, mcp }
    }

    pub fn describe_call(&self, name: &str, args: &Value, length: ToolDescriptionLength) -> String {
        self.registry.describe_call(name, args, length)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use skald_api::{Tool, tool_names as tn};

    struct Reader;
    impl<'a> Tool<crate::tools::ToolCx<'a>> for Reader {
        fn name(&self) -> &str {
            "read_file"
        }
        fn description(&self) -> &str {
            "Read a file."
        }
        fn parameters_schema(&self) -> Value {
            json!({"type": "object"})
        }
        fn category(&self) -> ToolCategory {
            ToolCategory::Filesystem
        }
    }

    struct FakeServer;
    impl McpToolSource for FakeServer {
        fn mcp_tools(&self) -> Vec<ToolInfo> {
            ["mcp__time__now", "mcp__fs__read"]
                .into_iter()
                .map(|n| ToolInfo {
                    name: n.into(),
                    description: String::new(),
                    category: None,
                    parameters: json!({"type": "object"}),
                    source: ToolSource::Mcp,
                    sub_agents_only: false,
                    root_agent_only: false,
                })
                .collect()
        }
    }

    #[test]
    fn lists_registry_synthetic_and_mcp_tools() {
        let mut reg = ToolRegistry::new();
        reg.register(Reader).unwrap();
        for (tool, kind) in crate::tools::all() {
            if kind == ToolOrigin::Engine {
                reg.register_arc(tool, kind).unwrap();
            }
        }
        let catalog = ToolCatalog::new(Arc::new(reg)).with_mcp(Arc::new(FakeServer));
        let all = catalog.list_all();
        let names: Vec<&str> = all.built_in.iter().map(|t| t.name.as_str()).collect();
        assert!(names.contains(&"read_file"));
        for synthetic in [tn::EXECUTE_TASK, tn::SHOW_FILE_TO_USER, tn::IMAGE_GENERATE] {
            assert!(names.contains(&synthetic), "{synthetic}");
        }
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        let mcp: Vec<&str> = all.mcp.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(mcp, ["mcp__fs__read", "mcp__time__now"]);

        // A tool seen before but not connected now is listed as known; a connected one once.
        let with_known = ToolCatalog::new(catalog.registry().clone())
            .with_mcp(Arc::new(FakeServer))
            .with_known(vec![
                skald_store::KnownTool {
                    name: "mcp__old__gone".into(),
                    source: "mcp".into(),
                    first_seen: 0,
                    last_seen: 0,
                },
                skald_store::KnownTool {
                    name: "mcp__time__now".into(),
                    source: "mcp".into(),
                    first_seen: 0,
                    last_seen: 0,
                },
            ])
            .list_all();
        let names: Vec<(&str, ToolSource)> = with_known
            .mcp
            .iter()
            .map(|t| (t.name.as_str(), t.source))
            .collect();
        assert_eq!(
            names,
            [
                ("mcp__fs__read", ToolSource::Mcp),
                ("mcp__old__gone", ToolSource::Known),
                ("mcp__time__now", ToolSource::Mcp)
            ]
        );

        // Serialises for the UI as-is.
        let json = serde_json::to_value(&all).unwrap();
        assert!(json["built_in"][0]["source"].is_string());
        assert!(json["mcp"].is_array());
        assert_eq!(
            catalog.describe_call(
                tn::SHOW_FILE_TO_USER,
                &json!({"path": "a"}),
                ToolDescriptionLength::Short
            ),
            "show_file_to_user `a`"
        );
    }
}
