//! What the settings and tasks screens list: rules, background tasks, schedules and
//! plugins, as the UI reads them. Rules, tasks and schedules are also what the store keeps
//! (`skald_store::{Rule, Task, ScheduledJob}` are these types), so a field is added once.

use crate::records::{MissedPolicy, RuleAction, TaskStatus};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

/// A stored approval rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct RuleInfo {
    pub id: i64,
    pub group_name: String,
    pub tool_pattern: String,
    pub path_pattern: Option<String>,
    pub command_pattern: Option<String>,
    pub agent_id: Option<String>,
    pub working_dir: Option<String>,
    pub action: RuleAction,
    /// Higher first.
    pub priority: i64,
    pub note: String,
    /// An allow rule for commands: what it allows runs in the sandbox with the network.
    #[serde(default)]
    pub network: bool,
    /// For the web tools: the host it is about (`docs.rs`, `*.python.org`,
    /// `localhost:3000`; docs/web.md).
    #[serde(default)]
    pub domain_pattern: Option<String>,
}

/// A background task an agent started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct TaskInfo {
    pub id: i64,
    /// The chat that started it, where its result is delivered.
    pub parent_session_id: i64,
    pub parent_tool_call_id: Option<String>,
    /// The background session it works in.
    pub session_id: Option<i64>,
    pub agent_id: String,
    pub title: String,
    pub description: String,
    pub prompt: String,
    pub status: TaskStatus,
    pub result: Option<String>,
    pub created_at: i64,
    pub finished_at: Option<i64>,
}

/// A scheduled job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct CronJobInfo {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub agent_id: String,
    pub prompt: String,
    /// 5 fields, or 6 with seconds first.
    pub cron: String,
    /// An IANA zone, e.g. Europe/Berlin.
    pub timezone: String,
    pub missed_policy: MissedPolicy,
    pub enabled: bool,
    /// The chat its notifications go to.
    pub home_session_id: Option<i64>,
    pub run_context_id: Option<i64>,
    pub working_dir: Option<String>,
    /// Each run works in a worktree of its own (docs/worktrees.md).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>", optional)]
    pub worktree: bool,
    /// Milliseconds since the epoch; absent when it will not run again.
    pub next_run_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A plugin Skald ships, on or off.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct PluginInfo {
    pub id: String,
    pub name: String,
    pub description: String,
    pub enabled: bool,
    pub running: bool,
    /// The user's configuration; it fits `config_schema` (user data, like tool arguments).
    pub config: Option<Value>,
    /// The JSON Schema the configuration is checked against.
    pub config_schema: Value,
    /// The tools it offers agents while it runs.
    pub tools: Vec<String>,
}
