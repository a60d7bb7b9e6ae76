//! Hooks (docs/hooks.md): commands the person (config.toml `[hooks]`) or a project
//! (`.skald/hooks.json`, once approved) runs at points of a turn, in the schema Claude
//! Code defined, so hooks written for it work here.
//!
//! A hook gets the event as JSON on stdin. Exit 0 goes on, with an optional JSON answer (a
//! decision, context to add); exit 2 blocks, its stderr the reason; anything else is an
//! error shown in the chat that does not break the turn. Hooks of one event run at once.
//! Their decisions go through the approval gate: a hook can deny or ask for a call the
//! rules allow, and let through a call the rules would ask about, never one they deny.

mod project;
mod run;

pub use project::{
    PROJECT_FILE, PROJECT_FOLDER, ProjectFile, content_sha256, files_sha256, project_files,
    project_hooks_file,
};
pub use run::Answer;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use skald_api::context::ContextSource;
use skald_api::hook::{HookOutcome, HookRun, ProjectHooks};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The events Skald fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    PreToolUse,
    PostToolUse,
    UserPromptSubmit,
    Stop,
    SubagentStop,
    PreCompact,
    SessionStart,
    Notification,
}

impl HookEvent {
    pub const ALL: [HookEvent; 8] = [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::UserPromptSubmit,
        HookEvent::Stop,
        HookEvent::SubagentStop,
        HookEvent::PreCompact,
        HookEvent::SessionStart,
        HookEvent::Notification,
    ];

    pub fn name(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::Notification => "Notification",
        }
    }

    pub fn parse(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.name() == name)
    }
}

/// Hooks by event name, as config.toml's `[hooks]` and a project's `hooks` key hold them.
/// Names Skald does not fire are kept (and listed as such), so a configuration copied
/// from another tool loads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct HooksConfig(pub BTreeMap<String, Vec<MatcherGroup>>);

/// Hooks run when `matcher` matches: a tool's name (PreToolUse, PostToolUse), the trigger
/// (PreCompact: `manual`, `auto`) or the source (SessionStart: `startup`, `resume`). Empty
/// or `*` matches everything; otherwise a regular expression over the whole name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatcherGroup {
    #[serde(default)]
    pub matcher: String,
    pub hooks: Vec<HookSpec>,
}

/// One hook. Only `command` hooks run; others (http, prompt, agent) are listed as not
/// supported. Fields Skald does not use are ignored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookSpec {
    #[serde(rename = "type", default = "command_kind")]
    pub kind: String,
    #[serde(default)]
    pub command: String,
    /// Seconds; 60 when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
}

fn command_kind() -> String {
    "command".to_string()
}

impl HooksConfig {
    pub fn is_empty(&self) -> bool {
        self.0
            .values()
            .all(|g| g.iter().all(|m| m.hooks.is_empty()))
    }

    /// How many hooks it holds.
    pub fn count(&self) -> usize {
        self.0
            .values()
            .map(|g| g.iter().map(|m| m.hooks.len()).sum::<usize>())
            .sum()
    }
}

/// What a hook's matcher is matched against: a tool call's tool, or an event's source
/// (`startup`, `auto`).
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    pub name: &'a str,
    /// The name Claude Code gives the same tool (`Tool::hook_alias`: `Bash`, `Edit`), so
    /// a matcher written for it (`Bash`, `Edit|Write`) matches the same calls here.
    pub alias: Option<&'a str>,
}

impl<'a> From<&'a str> for Subject<'a> {
    fn from(name: &'a str) -> Self {
        Subject { name, alias: None }
    }
}

fn matches(matcher: &str, subject: Option<Subject<'_>>) -> bool {
    let m = matcher.trim();
    if m.is_empty() || m == "*" {
        return true;
    }
    let Some(Subject { name, alias }) = subject else {
        return false;
    };
    let Ok(re) = regex::Regex::new(&format!("^(?:{m})$")) else {
        // Not a regular expression: the name itself.
        return m == name || alias == Some(m);
    };
    re.is_match(name) || alias.is_some_and(|a| re.is_match(a))
}

/// A call's arguments as hooks see them: as shown (secrets masked), with `file_path`
/// beside `path`, the name Claude Code's file tools use.
pub fn tool_input(mut shown: Value) -> Value {
    if let Some(o) = shown.as_object_mut()
        && let Some(p) = o.get("path").cloned()
        && !o.contains_key("file_path")
    {
        o.insert("file_path".to_string(), p);
    }
    shown
}

/// The hooks that apply to one turn: the person's, and the project's when approved.
#[derive(Debug, Clone, Default)]
pub struct Active {
    groups: Vec<(String, MatcherGroup, ContextSource)>,
    /// Where a project's hook commands run from (`$SKALD_PROJECT_DIR`).
    pub project_dir: PathBuf,
    /// The project's hooks file, approved or not.
    pub project: Option<ProjectHooks>,
}

impl Active {
    /// The person's `user` hooks, and the project's of `folder` if its file's content is
    /// approved in `store`.
    pub fn for_folder(user: &HooksConfig, store: &skald_store::Store, folder: &Path) -> Active {
        let root = crate::instructions::project_root(folder);
        let mut groups: Vec<(String, MatcherGroup, ContextSource)> = user
            .0
            .iter()
            .flat_map(|(e, gs)| {
                gs.iter()
                    .map(|g| (e.clone(), g.clone(), ContextSource::User))
            })
            .collect();
        let project = project::load(store, &root);
        let info = project.as_ref().map(|(info, _)| info.clone());
        if let Some((info, config)) = project
            && info.approved
        {
            groups.extend(config.0.into_iter().flat_map(|(e, gs)| {
                gs.into_iter()
                    .map(move |g| (e.clone(), g, ContextSource::Project))
            }));
        }
        Active {
            groups,
            project_dir: root,
            project: info,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Whether the project's `.skald/` still holds what was approved when these hooks
    /// were loaded (read again now, just before its hooks run).
    pub fn project_unchanged(&self) -> bool {
        let Some(p) = &self.project else {
            return false;
        };
        project::project_files(&self.project_dir)
            .is_some_and(|files| project::files_sha256(&files) == p.sha256)
    }

    /// Whether any of the project's (approved) hooks may run.
    pub fn has_project_hooks(&self) -> bool {
        self.groups
            .iter()
            .any(|(_, _, source)| *source == ContextSource::Project)
    }

    /// The command hooks of `event` whose matcher takes `subject`, each once.
    fn matching(
        &self,
        event: HookEvent,
        subject: Option<Subject<'_>>,
    ) -> Vec<(HookSpec, ContextSource)> {
        let mut out: Vec<(HookSpec, ContextSource)> = Vec::new();
        for (name, group, source) in &self.groups {
            if name != event.name() || !matches(&group.matcher, subject) {
                continue;
            }
            for h in &group.hooks {
                if h.kind == "command"
                    && !h.command.trim().is_empty()
                    && !out.iter().any(|(o, _)| o.command == h.command)
                {
                    out.push((h.clone(), *source));
                }
            }
        }
        out
    }
}

/// What is known of the turn a hook runs in.
pub struct Fire<'a> {
    pub session_id: i64,
    /// The tool call the event is about, if any.
    pub call: Option<&'a str>,
    pub cwd: &'a Path,
    /// Environment variables hooks never see (provider keys, Skald's own).
    pub hidden_env: &'a [String],
    /// The helper and policy a project's hooks run confined to: the chat's commands'
    /// sandbox, when it has one. A project's hooks are the repository's code, and the
    /// files they run may have been written by the chat's sandboxed commands; the person's
    /// own hooks (config.toml) run as the person.
    pub project_sandbox: Option<(PathBuf, skald_sandbox::Policy)>,
    /// Where the runs are shown (the turn's event sink; spelled out so that config,
    /// which names these types, does not depend on the turn).
    pub emit: &'a (dyn Fn(skald_api::events::Event) + Send + Sync),
}

/// What the hooks of one event said together.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    /// A hook blocked: the reasons (for the model, or the person for a prompt).
    pub blocked: Option<String>,
    /// PreToolUse: the strongest permission decision (deny over ask over allow), with
    /// its reason.
    pub permission: Option<(Permission, String)>,
    /// Context to add for the model (UserPromptSubmit, SessionStart, PostToolUse).
    pub context: Vec<String>,
    /// A hook asked the turn to stop (`"continue": false`), with its reason.
    pub stop: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Permission {
    Allow,
    Ask,
    Deny,
}

/// Runs the hooks of `event` matching `subject`, with the event's own fields in `input`.
/// Every run is shown (`hook` events); none can fail the turn.
pub async fn fire(
    active: &Active,
    event: HookEvent,
    subject: Option<Subject<'_>>,
    input: Value,
    at: &Fire<'_>,
) -> Verdict {
    let mut hooks = active.matching(event, subject);
    // The project's files were approved as they were when the turn began: one changed
    // since (by a command of this turn) runs nothing until approved again.
    if hooks.iter().any(|(_, s)| *s == ContextSource::Project) && !active.project_unchanged() {
        hooks.retain(|(_, s)| *s != ContextSource::Project);
    }
    if hooks.is_empty() {
        return Verdict::default();
    }
    let mut payload = json!({
        "session_id": at.session_id.to_string(),
        "transcript_path": "",
        "cwd": at.cwd,
        "hook_event_name": event.name(),
    });
    if let (Some(p), Value::Object(extra)) = (payload.as_object_mut(), input) {
        p.extend(extra);
    }
    let runs = hooks.iter().map(|(spec, source)| {
        run::run(
            spec,
            &payload,
            run::Place {
                cwd: at.cwd,
                project_dir: &active.project_dir,
                session_id: at.session_id,
                hidden_env: at.hidden_env,
                sandbox: match source {
                    ContextSource::Project => at.project_sandbox.as_ref(),
                    _ => None,
                },
            },
        )
    });
    let answers = futures::future::join_all(runs).await;
    let mut verdict = Verdict::default();
    for ((spec, source), (answer, took)) in hooks.iter().zip(answers) {
        let (outcome, message) = verdict.take(event, &answer);
        (at.emit)(skald_api::events::Event::Hook {
            session_id: at.session_id,
            hook: HookRun {
                event: event.name().to_string(),
                command: spec.command.clone(),
                tool_call_id: at.call.map(str::to_string),
                source: *source,
                outcome,
                message: message.chars().take(2_000).collect(),
                duration_ms: took.as_millis() as u64,
            },
        });
    }
    verdict
}

impl Verdict {
    /// Folds one hook's answer in; returns how its run is shown.
    fn take(&mut self, event: HookEvent, answer: &Answer) -> (HookOutcome, String) {
        let block = |v: &mut Verdict, reason: &str| {
            let reason = if reason.trim().is_empty() {
                "a hook blocked it (no reason given)".to_string()
            } else {
                reason.trim().to_string()
            };
            v.blocked = Some(match v.blocked.take() {
                Some(before) => format!("{before}\n{reason}"),
                None => reason.clone(),
            });
            reason
        };
        match answer {
            Answer::Blocked(stderr) => (HookOutcome::Blocked, block(self, stderr)),
            Answer::Failed(why) => (HookOutcome::Error, why.clone()),
            Answer::TimedOut(secs) => (
                HookOutcome::Timeout,
                format!("killed after {secs} s (its timeout)"),
            ),
            Answer::Plain(text) => {
                // Plain output is context only where Claude Code takes it as such.
                if matches!(event, HookEvent::UserPromptSubmit | HookEvent::SessionStart)
                    && !text.trim().is_empty()
                {
                    self.context.push(text.trim().to_string());
                }
                (HookOutcome::Ok, String::new())
            }
            Answer::Json(v) => self.take_json(event, v, block),
        }
    }

    fn take_json(
        &mut self,
        event: HookEvent,
        v: &Value,
        block: impl Fn(&mut Verdict, &str) -> String,
    ) -> (HookOutcome, String) {
        let text = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default();
        let specific = v.get("hookSpecificOutput").cloned().unwrap_or(Value::Null);
        let specific_text = |k: &str| {
            specific
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let mut shown = text("systemMessage").to_string();
        let mut outcome = HookOutcome::Ok;
        if v.get("continue").and_then(Value::as_bool) == Some(false) {
            let why = match text("stopReason") {
                "" => "a hook stopped the turn",
                r => r,
            };
            self.stop = Some(why.to_string());
            outcome = HookOutcome::Blocked;
            shown = why.to_string();
        }
        let context = specific_text("additionalContext");
        if !context.trim().is_empty() {
            self.context.push(context.trim().to_string());
        }
        if event == HookEvent::PreToolUse {
            // The current form first, then the older `decision: approve|block`.
            let (decision, reason) = match specific_text("permissionDecision").as_str() {
                "" => match text("decision") {
                    "approve" => (Some(Permission::Allow), text("reason").to_string()),
                    "block" => (Some(Permission::Deny), text("reason").to_string()),
                    _ => (None, String::new()),
                },
                d => (
                    match d {
                        "allow" => Some(Permission::Allow),
                        "ask" => Some(Permission::Ask),
                        "deny" => Some(Permission::Deny),
                        _ => None,
                    },
                    specific_text("permissionDecisionReason"),
                ),
            };
            if let Some(d) = decision {
                if self.permission.as_ref().is_none_or(|(p, _)| d > *p) {
                    self.permission = Some((d, reason.clone()));
                }
                if d == Permission::Deny {
                    outcome = HookOutcome::Blocked;
                }
                shown = format!(
                    "{}{}",
                    match d {
                        Permission::Allow => "allow",
                        Permission::Ask => "ask",
                        Permission::Deny => "deny",
                    },
                    if reason.is_empty() {
                        String::new()
                    } else {
                        format!(": {reason}")
                    }
                );
            }
        } else if text("decision") == "block" {
            outcome = HookOutcome::Blocked;
            shown = block(self, text("reason"));
        }
        (outcome, shown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `super::matches` with the alias the tool called `subject` declares.
    fn matches(matcher: &str, subject: Option<&str>) -> bool {
        super::matches(matcher, subject.map(tool))
    }

    /// A tool call's subject, with the alias its tool declares.
    fn tool(name: &str) -> Subject<'_> {
        Subject {
            name,
            alias: crate::tools::named(name).and_then(|t| t.hook_alias()),
        }
    }

    #[test]
    fn matchers_take_skalds_names_claudes_names_and_patterns() {
        assert!(matches("", Some("execute_cmd")));
        assert!(matches("*", None));
        assert!(matches("execute_cmd", Some("execute_cmd")));
        assert!(matches("Bash", Some("execute_cmd")));
        assert!(matches("Edit|Write", Some("replace_lines")));
        assert!(matches("write_.*", Some("write_file")));
        assert!(!matches("write", Some("write_file")), "the whole name");
        assert!(!matches("Bash", Some("read_file")));
        assert!(!matches("Bash", None));
        assert!(matches(
            "mcp__github__.*",
            Some("mcp__github__create_issue")
        ));
    }

    #[test]
    fn a_claude_settings_hooks_section_loads_unknown_events_and_fields_included() {
        let text = r#"{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
            "command": "guard.sh", "timeout": 5, "statusMessage": "checking"}]}],
            "SessionEnd": [{"hooks": [{"type": "command", "command": "bye.sh"}]}],
            "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "http", "url": "x"}]}]}"#;
        let config: HooksConfig = serde_json::from_str(text).unwrap();
        assert_eq!(config.count(), 3);
        let active = Active {
            groups: config
                .0
                .iter()
                .flat_map(|(e, gs)| {
                    gs.iter()
                        .map(|g| (e.clone(), g.clone(), ContextSource::User))
                })
                .collect(),
            ..Active::default()
        };
        let pre = active.matching(HookEvent::PreToolUse, Some(tool("execute_cmd")));
        assert_eq!(pre.len(), 1);
        assert_eq!(pre[0].0.timeout, Some(5));
        assert!(
            active
                .matching(HookEvent::PostToolUse, Some(tool("write_file")))
                .is_empty(),
            "http hooks do not run"
        );
    }

    #[test]
    fn the_strongest_decision_wins_and_blocks_add_up() {
        let mut v = Verdict::default();
        v.take(
            HookEvent::PreToolUse,
            &Answer::Json(json!({"hookSpecificOutput": {"permissionDecision": "allow"}})),
        );
        v.take(
            HookEvent::PreToolUse,
            &Answer::Json(json!({"hookSpecificOutput": {"permissionDecision": "ask",
                "permissionDecisionReason": "check it"}})),
        );
        assert_eq!(
            v.permission,
            Some((Permission::Ask, "check it".to_string()))
        );
        v.take(
            HookEvent::PreToolUse,
            &Answer::Json(json!({"decision": "block", "reason": "old form"})),
        );
        assert_eq!(
            v.permission,
            Some((Permission::Deny, "old form".to_string()))
        );
        let mut s = Verdict::default();
        s.take(HookEvent::Stop, &Answer::Blocked("run the tests".into()));
        s.take(
            HookEvent::Stop,
            &Answer::Json(json!({"decision": "block", "reason": "and lint"})),
        );
        assert_eq!(s.blocked.as_deref(), Some("run the tests\nand lint"));
        let mut u = Verdict::default();
        u.take(
            HookEvent::UserPromptSubmit,
            &Answer::Plain("branch: main\n".into()),
        );
        u.take(
            HookEvent::UserPromptSubmit,
            &Answer::Json(json!({"hookSpecificOutput": {"additionalContext": "ticket 42"}})),
        );
        assert_eq!(u.context, ["branch: main", "ticket 42"]);
        let mut p = Verdict::default();
        p.take(HookEvent::PostToolUse, &Answer::Plain("ignored".into()));
        assert!(p.context.is_empty());
        let (outcome, _) = p.take(
            HookEvent::PostToolUse,
            &Answer::Json(json!({"continue": false, "stopReason": "enough"})),
        );
        assert_eq!(
            (outcome, p.stop.as_deref()),
            (HookOutcome::Blocked, Some("enough"))
        );
    }
}
