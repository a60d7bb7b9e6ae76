//! The Skald engine. From the foundation: the tool registry and the catalog that every
//! surface (model tool lists, the approval UI, `skald tools`) reads, argument validation,
//! the data directory and its `config.toml`, logging, and the `doctor` checks. The agent
//! loop, approval gate, sub-agents, inbox and cron join it in later layers.

pub mod agents;
pub mod approval;
pub mod args;
pub mod catalog;
pub mod config;
pub mod direct;
pub mod discovery;
pub mod doctor;
pub mod engine;
pub mod inbox;
pub mod logging;
pub mod mcp;
pub mod models;
pub mod paths;
pub mod plugins;
pub mod process;
pub mod session;
pub mod sink;
pub mod tasks;
pub mod tools;
pub mod turn;
pub mod withheld;

pub use args::{ArgsError, validate_args};
pub use catalog::{AllTools, McpToolSource, ToolCatalog, ToolInfo, ToolSource};
pub use config::{Config, ConfigError};
pub use engine::registry::{self, DispatchError, RegistryError, ToolRegistry};
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
