//! The approval gate (reference.md "Approval gate", tools.md "Tool Visibility Filtering",
//! "Read auto-allow & secrets/ deny"): every tool call is checked against the rules of
//! the session's permission group, then `default`'s, in priority order; the first match
//! decides, no match requires approval, and a store error requires approval too. The run
//! context's grants relax `require` to `allow` for reads and writes where the user said
//! so; they never override a `deny`.

pub mod command;

use crate::registry::ToolRegistry;
use serde::Serialize;
use serde_json::Value;
use skald_api::tool_names as tn;
use skald_store::{Rule, RuleAction, Store};
use skald_tools::fs::{canonicalize_for_policy, path_under};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The tools the `@fs_read` group names.
pub const FS_READ: &[&str] = &[
    tn::READ_FILE,
    tn::LIST_FILES,
    tn::SEARCH_FILE,
    tn::GREP_FILES,
    tn::GET_AST_OUTLINE,
];
/// The tools the `@fs_write` group names.
pub const FS_WRITE: &[&str] = &[
    tn::WRITE_FILE,
    tn::EDIT_FILE,
    tn::INSERT_AT_LINE,
    tn::REPLACE_LINES,
];

/// The run context's part in a decision.
#[derive(Debug, Clone, Default)]
pub struct RunContext {
    /// The permission group whose rules come first.
    pub group: String,
    pub agent_id: String,
    pub working_dir: PathBuf,
    /// Folders whose files may be read without asking (besides the working directory,
    /// its `docs/` and `skills/`).
    pub allow_fs_reads: Vec<PathBuf>,
    /// Folders whose files may be written without asking.
    pub allow_fs_writes: Vec<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub action: RuleAction,
    /// The rule that decided, if one did.
    pub rule_id: Option<i64>,
    /// Why, in words a person can check.
    pub reason: String,
}

fn tool_matches(pattern: &str, tool: &str) -> bool {
    match pattern {
        "*" => true,
        "@fs_read" => FS_READ.contains(&tool),
        "@fs_write" => FS_WRITE.contains(&tool),
        "@fs_any" => FS_READ.contains(&tool) || FS_WRITE.contains(&tool),
        p => match p.strip_suffix('*') {
            Some(prefix) => tool.starts_with(prefix),
            None => p == tool,
        },
    }
}

/// The file or folder a call acts on, canonical, if it acts on one.
fn call_path(tool: &str, args: &Value, working_dir: &Path) -> Option<PathBuf> {
    let raw = match args.get("path").and_then(Value::as_str) {
        Some(p) => p,
        // The recursive tools default to the working directory.
        None if matches!(tool, tn::LIST_FILES | tn::GREP_FILES) => ".",
        None => return None,
    };
    Some(canonicalize_for_policy(Path::new(raw), working_dir))
}

/// Whether `path` is what `pattern` names: `dir/*` is the folder and everything under it,
/// anything else one exact path. Relative patterns are relative to the working directory.
fn path_matches(pattern: &str, path: &Path, working_dir: &Path) -> bool {
    match pattern.strip_suffix("/*") {
        Some(dir) => path_under(path, &canonicalize_for_policy(Path::new(dir), working_dir)),
        None => path == canonicalize_for_policy(Path::new(pattern), working_dir),
    }
}

fn rule_matches(rule: &Rule, ctx: &RunContext, tool: &str, args: &Value) -> bool {
    if !tool_matches(&rule.tool_pattern, tool) {
        return false;
    }
    if let Some(agent) = &rule.agent_id
        && agent != &ctx.agent_id
    {
        return false;
    }
    if let Some(dir) = &rule.working_dir {
        let here = canonicalize_for_policy(&ctx.working_dir, Path::new("/"));
        if !path_under(
            &here,
            &canonicalize_for_policy(Path::new(dir), Path::new("/")),
        ) {
            return false;
        }
    }
    if let Some(pattern) = &rule.path_pattern {
        match call_path(tool, args, &ctx.working_dir) {
            Some(path) if path_matches(pattern, &path, &ctx.working_dir) => {}
            _ => return false,
        }
    }
    if let Some(pattern) = &rule.command_pattern {
        let command = args.get("command").and_then(Value::as_str);
        match command {
            Some(c) if tool == tn::EXECUTE_CMD && command::pattern_matches(pattern, c) => {}
            _ => return false,
        }
    }
    true
}

/// Whether the run context grants this call without asking.
fn granted(ctx: &RunContext, tool: &str, args: &Value) -> Option<&'static str> {
    let path = call_path(tool, args, &ctx.working_dir)?;
    let under = |dirs: &[PathBuf]| {
        dirs.iter()
            .any(|d| path_under(&path, &canonicalize_for_policy(d, &ctx.working_dir)))
    };
    if FS_READ.contains(&tool) {
        let wd = canonicalize_for_policy(&ctx.working_dir, Path::new("/"));
        if path_under(&path, &wd) || under(&ctx.allow_fs_reads) || under(&ctx.allow_fs_writes) {
            return Some("a read inside the working directory or a read grant");
        }
    }
    if FS_WRITE.contains(&tool) && under(&ctx.allow_fs_writes) {
        return Some("a write inside a write grant");
    }
    None
}

/// Decides a call. Logs every decision for audit.
pub fn check(store: &Store, ctx: &RunContext, tool: &str, args: &Value) -> Decision {
    let decision = decide(store, ctx, tool, args);
    tracing::info!(
        target: "skald::approval",
        tool,
        args_digest = %digest(args),
        rule = ?decision.rule_id,
        decision = decision.action.as_str(),
        group = %ctx.group,
        "approval decision"
    );
    decision
}

fn decide(store: &Store, ctx: &RunContext, tool: &str, args: &Value) -> Decision {
    let rules = match store.rules_for_group(&ctx.group) {
        Ok(r) => r,
        Err(e) => {
            return Decision {
                action: RuleAction::Require,
                rule_id: None,
                reason: format!("the rules could not be read ({e}), so this needs approval"),
            };
        }
    };
    let first = rules.iter().find(|r| rule_matches(r, ctx, tool, args));
    if let Some(rule) = first
        && rule.action == RuleAction::Deny
    {
        return Decision {
            action: RuleAction::Deny,
            rule_id: Some(rule.id),
            reason: describe(rule),
        };
    }
    if let Some(why) = granted(ctx, tool, args) {
        return Decision {
            action: RuleAction::Allow,
            rule_id: None,
            reason: why.to_string(),
        };
    }
    match first {
        Some(rule) => Decision {
            action: rule.action,
            rule_id: Some(rule.id),
            reason: describe(rule),
        },
        None => Decision {
            action: RuleAction::Require,
            rule_id: None,
            reason: "no rule matches, so this needs approval".to_string(),
        },
    }
}

fn describe(rule: &Rule) -> String {
    let mut s = format!(
        "rule #{} ({} {}",
        rule.id,
        rule.action.as_str(),
        rule.tool_pattern
    );
    if let Some(p) = &rule.path_pattern {
        s.push_str(&format!(" on {p}"));
    }
    if let Some(c) = &rule.command_pattern {
        s.push_str(&format!(" for `{c}`"));
    }
    s.push(')');
    if !rule.note.is_empty() {
        s.push_str(&format!(": {}", rule.note));
    }
    s
}

/// A short, stable digest of the arguments for the audit log: enough to tell calls apart
/// without writing file contents or secrets into it.
fn digest(args: &Value) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    args.to_string().hash(&mut h);
    format!("{:016x}", h.finish())
}

/// Bytes of a file shown in an approval's before/after preview.
const PREVIEW_BYTES: usize = 200 * 1024;

/// What a write would change, for the approval request: the path, the file's content now
/// and after (a unified diff is derivable from the two). `null` for calls that are not
/// writes; only the path when the new content cannot be worked out cheaply.
pub fn write_preview(tool: &str, args: &Value, working_dir: &Path) -> Value {
    if !FS_WRITE.contains(&tool) {
        return Value::Null;
    }
    let Some(raw) = args.get("path").and_then(Value::as_str) else {
        return Value::Null;
    };
    let path = skald_tools::fs::resolve_in(raw, working_dir);
    let cut = |s: String| -> String {
        match s.char_indices().nth(PREVIEW_BYTES) {
            Some((i, _)) => s[..i].to_string(),
            None => s,
        }
    };
    let old = std::fs::metadata(&path)
        .ok()
        .filter(|m| m.is_file() && m.len() <= 8 * PREVIEW_BYTES as u64)
        .and_then(|_| std::fs::read_to_string(&path).ok());
    let text = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or("");
    let new = match tool {
        tn::WRITE_FILE => Some(text("content").to_string()),
        tn::EDIT_FILE => old.as_ref().map(|o| {
            if args.get("replace_all").and_then(Value::as_bool) == Some(true) {
                o.replace(text("old"), text("new"))
            } else {
                o.replacen(text("old"), text("new"), 1)
            }
        }),
        _ => None,
    };
    serde_json::json!({
        "path": path.display().to_string(),
        "old": old.map(cut),
        "new": new.map(cut),
    })
}

/// The registry tools a group's rules deny outright, whatever the arguments: they are
/// taken out of the model's tool list. Rules with a path or command pattern depend on the
/// call and never hide a tool; MCP tools are gated, never hidden (tools.md).
pub fn hidden_tools(store: &Store, ctx: &RunContext, registry: &ToolRegistry) -> HashSet<String> {
    let Ok(rules) = store.rules_for_group(&ctx.group) else {
        return HashSet::new();
    };
    let unconditional: Vec<&Rule> = rules
        .iter()
        .filter(|r| r.path_pattern.is_none() && r.command_pattern.is_none())
        .collect();
    registry
        .tools()
        .map(|t| t.name().to_string())
        .filter(|name| !name.starts_with(tn::MCP_PREFIX))
        .filter(|name| {
            unconditional
                .iter()
                .find(|r| rule_matches(r, ctx, name, &Value::Null))
                .is_some_and(|r| r.action == RuleAction::Deny)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use skald_store::NewRule;

    fn setup() -> (Store, tempfile::TempDir, RunContext) {
        let dir = tempfile::tempdir().unwrap();
        let wd = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(wd.join("secrets")).unwrap();
        std::fs::create_dir_all(wd.join("docs")).unwrap();
        let ctx = RunContext {
            group: "default".into(),
            agent_id: "main".into(),
            working_dir: wd,
            ..RunContext::default()
        };
        (Store::open_in_memory().unwrap(), dir, ctx)
    }

    fn action(store: &Store, ctx: &RunContext, tool: &str, args: Value) -> RuleAction {
        check(store, ctx, tool, &args).action
    }

    #[test]
    fn seeded_defaults() {
        let (s, _d, ctx) = setup();
        use RuleAction::*;
        let cases = [
            ("read_file", json!({"path": "src/main.rs"}), Allow),
            ("read_file", json!({"path": "/etc/passwd"}), Require),
            ("read_file", json!({"path": "secrets/key"}), Deny),
            ("read_file", json!({"path": "docs/../secrets/key"}), Deny),
            ("list_files", json!({"path": "secrets"}), Deny),
            ("grep_files", json!({"pattern": "x"}), Allow),
            (
                "write_file",
                json!({"path": "notes.md", "content": ""}),
                Require,
            ),
            (
                "write_file",
                json!({"path": "memory/notes.md", "content": ""}),
                Allow,
            ),
            ("edit_file", json!({"path": "data/x.json"}), Allow),
            (
                "write_file",
                json!({"path": "secrets/x", "content": ""}),
                Deny,
            ),
            (
                "write_file",
                json!({"path": "memory/../secrets/x", "content": ""}),
                Deny,
            ),
            ("execute_cmd", json!({"command": "ls"}), Require),
            ("write_todos", json!({}), Allow),
            ("mcp__github__create_issue", json!({}), Require),
        ];
        for (tool, args, want) in cases {
            assert_eq!(action(&s, &ctx, tool, args.clone()), want, "{tool} {args}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_into_secrets_are_denied_and_out_of_the_tree_need_approval() {
        let (s, _d, ctx) = setup();
        std::os::unix::fs::symlink(
            ctx.working_dir.join("secrets"),
            ctx.working_dir.join("innocent"),
        )
        .unwrap();
        assert_eq!(
            action(&s, &ctx, "read_file", json!({"path": "innocent/key"})),
            RuleAction::Deny
        );
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), ctx.working_dir.join("escape")).unwrap();
        assert_eq!(
            action(&s, &ctx, "read_file", json!({"path": "escape/file"})),
            RuleAction::Require
        );
    }

    #[test]
    fn group_rules_come_first_and_command_patterns_are_strict() {
        let (s, _d, mut ctx) = setup();
        ctx.group = "dev".into();
        s.add_rule(&NewRule {
            group_name: "dev".into(),
            tool_pattern: "execute_cmd".into(),
            command_pattern: Some("cargo test".into()),
            action: Some(RuleAction::Allow),
            priority: 50,
            ..NewRule::default()
        })
        .unwrap();
        assert_eq!(
            action(
                &s,
                &ctx,
                "execute_cmd",
                json!({"command": "cargo test -p x"})
            ),
            RuleAction::Allow
        );
        assert_eq!(
            action(
                &s,
                &ctx,
                "execute_cmd",
                json!({"command": "cargo test; rm -rf ~"})
            ),
            RuleAction::Require
        );
        assert_eq!(
            action(&s, &ctx, "execute_cmd", json!({"command": "cargo build"})),
            RuleAction::Require
        );
        // Another group does not see it.
        ctx.group = "other".into();
        assert_eq!(
            action(&s, &ctx, "execute_cmd", json!({"command": "cargo test"})),
            RuleAction::Require
        );
    }

    #[test]
    fn deny_beats_grants_and_rules_can_be_scoped() {
        let (s, _d, mut ctx) = setup();
        ctx.allow_fs_writes = vec![ctx.working_dir.clone()];
        assert_eq!(
            action(&s, &ctx, "write_file", json!({"path": "a.txt"})),
            RuleAction::Allow
        );
        assert_eq!(
            action(&s, &ctx, "write_file", json!({"path": "secrets/a"})),
            RuleAction::Deny
        );
        // A rule scoped to another project does not apply here.
        s.add_rule(&NewRule {
            group_name: "default".into(),
            tool_pattern: "execute_cmd".into(),
            working_dir: Some("/some/other/project".into()),
            action: Some(RuleAction::Allow),
            priority: 1,
            ..NewRule::default()
        })
        .unwrap();
        assert_eq!(
            action(&s, &ctx, "execute_cmd", json!({"command": "ls"})),
            RuleAction::Require
        );
        // An agent-specific rule applies to that agent only.
        s.add_rule(&NewRule {
            group_name: "default".into(),
            tool_pattern: "exec*".into(),
            agent_id: Some("researcher".into()),
            action: Some(RuleAction::Deny),
            priority: 1,
            ..NewRule::default()
        })
        .unwrap();
        assert_eq!(
            action(&s, &ctx, "execute_cmd", json!({"command": "ls"})),
            RuleAction::Require
        );
        ctx.agent_id = "researcher".into();
        assert_eq!(
            action(&s, &ctx, "execute_cmd", json!({"command": "ls"})),
            RuleAction::Deny
        );
    }

    #[test]
    fn unconditional_denies_hide_tools_and_path_denies_do_not() {
        let (s, _d, ctx) = setup();
        let registry = crate::builtin_registry().unwrap();
        assert!(
            hidden_tools(&s, &ctx, &registry).is_empty(),
            "secrets/* is per call"
        );
        s.add_rule(&NewRule {
            group_name: "default".into(),
            tool_pattern: "execute_cmd".into(),
            action: Some(RuleAction::Deny),
            priority: 1,
            ..NewRule::default()
        })
        .unwrap();
        let hidden = hidden_tools(&s, &ctx, &registry);
        assert_eq!(hidden.into_iter().collect::<Vec<_>>(), ["execute_cmd"]);
    }
}
