//! The Skald engine, in parts whose arrows point one way (docs/architecture.md, checked by
//! scripts/module_cycles.py): `engine/` (the shared parts, the registry, and the context
//! turns and tools run in) at the bottom of the engine proper; `turn/` (the agent loop)
//! on it; `tools/` (every tool, one list), `session/` (the session manager, leases,
//! resume) and `tasks/` (background tasks, deliveries, cron) on top. Below them: the
//! approval gate, checkpoints, the Inbox, MCP servers, plugins, agents and skills, models, the data
//! directory and `config.toml`, logging and `doctor`.

pub mod agents;
pub mod approval;
pub mod args;
pub mod board;
pub mod catalog;
pub mod checkpoints;
pub mod config;
pub mod direct;
pub mod discovery;
pub mod doctor;
pub mod engine;
pub mod hooks;
pub mod images;
pub mod inbox;
pub mod instructions;
pub mod limits;
pub mod logging;
pub mod mcp;
pub mod models;
pub mod paths;
pub mod plugins;
pub mod prewarm;
pub mod process;
pub mod sandbox;
pub mod session;
pub mod sink;
pub mod slots;
pub mod tasks;
pub mod tools;
pub mod turn;
pub mod usage;
pub mod withheld;
pub mod worktrees;

pub use args::{ArgsError, validate_args};
pub use catalog::{AllTools, McpToolSource, ToolCatalog, ToolInfo, ToolSource};
pub use config::{Config, ConfigError};
pub use engine::registry::{self, RegistryError, ToolRegistry};
pub use paths::{DataDir, DataDirError};

/// The registry with every tool Skald ships registered (`tools::all`).
pub fn builtin_registry() -> Result<ToolRegistry, RegistryError> {
    let mut registry = ToolRegistry::new();
    for (tool, kind) in tools::all() {
        registry.register_arc(tool, kind)?;
    }
    Ok(registry)
}

pub(crate) use skald_base::lock;
