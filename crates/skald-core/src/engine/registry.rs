//! `ToolRegistry`: every tool a model can be offered, by name (docs/tools.md,
//! "Registry and catalog (`skald-core`)").

use crate::engine::tool_context::{DynTool, ToolCx, ToolOrigin};
use serde_json::Value;
use skald_api::{
    Audience, Tool, ToolCategory, ToolDescriptionLength, ToolExecution, tool_names as tn,
};
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RegistryError {
    #[error(
        "tool `{0}` declares both sub_agents_only and root_agent_only, so no agent could ever \
         see it; pick one"
    )]
    ContradictoryVisibility(String),
    #[error("a tool named `{0}` is already registered")]
    Duplicate(String),
    #[error("tool name `{0}` is invalid: use 1-64 characters from a-z, A-Z, 0-9, `_` and `-`")]
    InvalidName(String),
}

struct Entry {
    tool: Arc<DynTool>,
    kind: ToolOrigin,
}

/// Tools keyed by name: the file and shell tools and the engine's own (`crate::tools`).
/// Built once at start and then shared read-only; MCP tools are added per turn by their
/// servers, not stored here.
///
/// A `BTreeMap` keeps every listing in name order, so the tool array sent to a model is
/// byte-identical between rounds (providers' prompt caches depend on that).
#[derive(Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Entry>,
}

/// The character set OpenAI and Anthropic both accept for function names.
fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl ToolRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Inserts `tool` under its name, as a tool that can also run outside a turn.
    pub fn register(
        &mut self,
        tool: impl for<'a> Tool<ToolCx<'a>> + 'static,
    ) -> Result<(), RegistryError> {
        self.register_arc(Arc::new(tool), ToolOrigin::Files)
    }

    pub fn register_arc(
        &mut self,
        tool: Arc<DynTool>,
        kind: ToolOrigin,
    ) -> Result<(), RegistryError> {
        let name = tool.name().to_string();
        if !valid_name(&name) {
            return Err(RegistryError::InvalidName(name));
        }
        if tool.sub_agents_only() && tool.root_agent_only() {
            return Err(RegistryError::ContradictoryVisibility(name));
        }
        if self.tools.contains_key(&name) {
            return Err(RegistryError::Duplicate(name));
        }
        self.tools.insert(name, Entry { tool, kind });
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&Arc<DynTool>> {
        self.tools.get(name).map(|e| &e.tool)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }

    /// Whether `name` acts on the session (and so runs only inside an agent turn).
    pub fn is_engine_tool(&self, name: &str) -> bool {
        self.tools
            .get(name)
            .is_some_and(|e| e.kind == ToolOrigin::Engine)
    }

    /// Every registered tool, in name order.
    pub fn tools(&self) -> impl Iterator<Item = &Arc<DynTool>> {
        self.tools.values().map(|e| &e.tool)
    }

    /// Every registered tool with its kind, in name order.
    pub fn entries(&self) -> impl Iterator<Item = (&Arc<DynTool>, ToolOrigin)> {
        self.tools.values().map(|e| (&e.tool, e.kind))
    }

    fn definitions(&self, keep: impl Fn(&DynTool) -> bool) -> Vec<Value> {
        self.tools()
            .filter(|t| keep(t.as_ref()))
            .map(|t| t.openai_definition())
            .collect()
    }

    /// One tool's definition, for a tool the turn offers by its own rule
    /// (`read_mcp_resource`).
    pub fn definition(&self, name: &str) -> Option<Value> {
        self.get(name).map(|t| t.openai_definition())
    }

    /// The definitions offered to `who`, in name order (docs/tools.md,
    /// "Which tools an agent is offered"): each tool decides in its `offered_to`.
    pub fn offered(&self, who: &Audience) -> Vec<Value> {
        // Plan mode is decided here, for every tool, whatever its own `offered_to` says.
        self.definitions(|t| t.offered_to(who) && (!who.plan || t.in_plan_mode()))
    }

    /// The category of a registered tool; `None` for MCP and unknown names.
    pub fn category_of(&self, name: &str) -> Option<ToolCategory> {
        self.get(name).map(|t| t.category())
    }

    /// Whether calls of `name` are checkpointed (a registered tool that can change files).
    pub fn changes_files(&self, name: &str) -> bool {
        self.get(name).is_some_and(|t| t.changes_files())
    }

    /// Starts an execution of a registered tool; `None` for names the caller owns (MCP)
    /// or that do not exist. The cancellable dispatch path.
    pub fn run<'s>(
        &'s self,
        name: &str,
        cx: &'s ToolCx<'_>,
        args: Value,
    ) -> Option<Box<dyn ToolExecution + 's>> {
        self.get(name).map(|t| t.run(cx, args))
    }

    /// A label for any tool call, registered or not, within the length's budget. The
    /// legacy `run_subtask` of old histories is labelled as a delegation; anything else
    /// unknown falls back to its name.
    pub fn describe_call(&self, name: &str, args: &Value, length: ToolDescriptionLength) -> String {
        let label = match self.get(name) {
            Some(tool) => tool.describe(args, length),
            None if name == tn::RUN_SUBTASK => delegation_label(name, args),
            None => name.to_string(),
        };
        length.fit(&label)
    }

    /// The single file a call acts on, for a clickable link in the UI.
    pub fn target_path(&self, name: &str, args: &Value) -> Option<String> {
        self.get(name).and_then(|t| t.target_path(args))
    }

    /// A call's arguments as they may be stored and shown (a secret's value hidden).
    pub fn redacted_args(&self, name: &str, args: Value) -> Value {
        match self.get(name) {
            Some(tool) => tool.redacted_args(args),
            None => args,
        }
    }
}

/// `execute_task ⚡ → software-engineer: Refactor auth module`: what is being delegated,
/// to whom, and for execute_task in which mode. Also labels the legacy `run_subtask`.
pub(crate) fn delegation_label(name: &str, args: &Value) -> String {
    let get = |key: &str| {
        args.get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let mut head = name.to_string();
    if name == tn::EXECUTE_TASK {
        let mode = match get("mode") {
            Some("sync") => Some("⚡"),
            Some("async") => Some("🚀"),
            Some("cron") => Some("📅"),
            _ => None,
        };
        if let Some(icon) = mode {
            head = format!("{head} {icon}");
        }
    }
    let what = get("description").or_else(|| get("title"));
    match (get("agent_id"), what) {
        (Some(agent), Some(what)) => format!("{head} → {agent}: {what}"),
        (Some(agent), None) => format!("{head} → {agent}"),
        (None, Some(what)) => format!("{head}: {what}"),
        (None, None) => head,
    }
}

impl crate::approval::CategoryOf for ToolRegistry {
    fn category_of(&self, tool: &str) -> Option<ToolCategory> {
        ToolRegistry::category_of(self, tool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use skald_api::{ExecutionOutcome, ToolError, ToolResult};

    struct T {
        name: &'static str,
        category: ToolCategory,
        sub_only: bool,
        root_only: bool,
    }

    impl T {
        fn new(name: &'static str) -> Self {
            T {
                name,
                category: ToolCategory::Filesystem,
                sub_only: false,
                root_only: false,
            }
        }
    }

    impl<'a> Tool<ToolCx<'a>> for T {
        fn name(&self) -> &str {
            self.name
        }
        fn description(&self) -> &str {
            "test tool"
        }
        fn parameters_schema(&self) -> Value {
            json!({"type": "object"})
        }
        fn describe(&self, args: &Value, _length: ToolDescriptionLength) -> String {
            format!("{} `{}`", self.name, args["path"].as_str().unwrap_or("?"))
        }
        fn target_path(&self, args: &Value) -> Option<String> {
            args["path"].as_str().map(str::to_string)
        }
        fn execute(&self, _cx: &ToolCx<'a>, args: Value) -> ToolResult {
            match args.get("fail") {
                Some(_) => Err(ToolError::failed("asked to fail")),
                None => Ok(format!("ran {}", self.name)),
            }
        }
        fn category(&self) -> ToolCategory {
            self.category
        }
        fn sub_agents_only(&self) -> bool {
            self.sub_only
        }
        fn root_agent_only(&self) -> bool {
            self.root_only
        }
    }

    fn sample() -> ToolRegistry {
        let mut r = ToolRegistry::new();
        r.register(T::new("read_file")).unwrap();
        r.register(T {
            sub_only: true,
            ..T::new("report_back")
        })
        .unwrap();
        r.register(T {
            root_only: true,
            category: ToolCategory::Introspection,
            ..T::new("read_notification")
        })
        .unwrap();
        r.register(T {
            category: ToolCategory::Config,
            ..T::new("set_secret")
        })
        .unwrap();
        r
    }

    /// `r` with the engine's own tools too, as `builtin_registry` has them (but for the
    /// test tools named like some of them).
    fn with_engine_tools(mut r: ToolRegistry) -> ToolRegistry {
        for (tool, kind) in crate::tools::all() {
            if kind == ToolOrigin::Engine && !r.contains(tool.name()) {
                r.register_arc(tool, kind).unwrap();
            }
        }
        r
    }

    #[test]
    fn a_tool_both_root_only_and_sub_only_is_refused() {
        let mut r = ToolRegistry::new();
        let err = r
            .register(T {
                sub_only: true,
                root_only: true,
                ..T::new("invisible")
            })
            .unwrap_err();
        assert_eq!(
            err,
            RegistryError::ContradictoryVisibility("invisible".into())
        );
        assert!(err.to_string().contains("no agent could ever see it"));
        assert!(!r.contains("invisible"));
    }

    #[test]
    fn duplicates_and_bad_names_are_refused() {
        let mut r = sample();
        assert_eq!(
            r.register(T::new("read_file")).unwrap_err(),
            RegistryError::Duplicate("read_file".into())
        );
        assert!(matches!(
            r.register(T::new("has space")),
            Err(RegistryError::InvalidName(_))
        ));
        assert!(matches!(
            r.register(T::new("")),
            Err(RegistryError::InvalidName(_))
        ));
    }

    #[test]
    fn listing_and_categories() {
        let r = sample();
        let listed: Vec<String> = r.tools().map(|t| t.name().to_string()).collect();
        assert_eq!(
            listed,
            [
                "read_file",
                "read_notification",
                "report_back",
                "set_secret"
            ]
        );
        assert_eq!(r.category_of("set_secret"), Some(ToolCategory::Config));
        assert_eq!(r.category_of("mcp__x__y"), None);
    }

    #[tokio::test]
    async fn runs_a_registered_tool() {
        let r = sample();
        let cx = ToolCx::outside_turn();
        assert!(r.run("nope", &cx, json!({})).is_none());
        let exec = r.run("read_file", &cx, json!({})).unwrap();
        assert_eq!(
            exec.wait().await,
            ExecutionOutcome::Completed("ran read_file".into())
        );
    }

    #[test]
    fn describe_call_covers_registered_synthetic_and_unknown_tools() {
        let r = with_engine_tools(sample());
        let short = ToolDescriptionLength::Short;
        assert_eq!(
            r.describe_call("read_file", &json!({"path": "src/main.rs"}), short),
            "read_file `src/main.rs`"
        );
        assert_eq!(
            r.describe_call("mcp__github__search", &json!({}), short),
            "mcp__github__search"
        );
        assert_eq!(
            r.describe_call(tn::SHOW_FILE_TO_USER, &json!({"path": "paper.tex"}), short),
            "show_file_to_user `paper.tex`"
        );
        let long = "d".repeat(300);
        let label = r.describe_call("read_file", &json!({ "path": long }), short);
        assert_eq!(label.chars().count(), 60);
        let label = r.describe_call(
            "read_file",
            &json!({ "path": long }),
            ToolDescriptionLength::Full,
        );
        assert_eq!(label.chars().count(), 120);
    }

    #[test]
    fn target_path_of_registered_and_show_file() {
        let r = with_engine_tools(sample());
        assert_eq!(
            r.target_path("read_file", &json!({"path": "a.md"}))
                .as_deref(),
            Some("a.md")
        );
        assert_eq!(
            r.target_path(tn::SHOW_FILE_TO_USER, &json!({"path": "b.pdf"}))
                .as_deref(),
            Some("b.pdf")
        );
        assert_eq!(r.target_path(tn::EXECUTE_TASK, &json!({"path": "x"})), None);
        assert_eq!(r.target_path("unknown", &json!({"path": "x"})), None);
    }
}
