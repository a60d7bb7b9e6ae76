//! "Always allow": the rule an approval proposes for a call, what it would reach, and the
//! calls of the session it would have matched.

use super::{RunContext, call_path, command, file_access, rule_matches};
use serde_json::Value;
use skald_api::tool_names as tn;
use skald_base::path::path_under;
use skald_store::{Rule, RuleAction, Store};
use std::path::Path;

/// Where "always allow" rules go: before the seeded requires (20), after the seeded
/// `secrets/` deny (0), so they can lift an approval but never a deny.
pub const ALWAYS_PRIORITY: i64 = 15;

/// A rule as a person edits it before storing it ("always allow"): the rule editor's
/// draft, defined once with the protocol.
pub use skald_api::inbox::RuleDraft as RuleSpec;

/// What a proposed rule becomes in the store and in the gate.
pub trait RuleSpecExt {
    fn to_new_rule(&self) -> skald_store::NewRule;
    fn as_rule(&self) -> Rule;
}

impl RuleSpecExt for RuleSpec {
    fn to_new_rule(&self) -> skald_store::NewRule {
        skald_store::NewRule {
            group_name: self.group.clone(),
            tool_pattern: self.tool_pattern.clone(),
            path_pattern: self.path_pattern.clone(),
            command_pattern: self.command_pattern.clone(),
            agent_id: None,
            working_dir: self.working_dir.clone(),
            action: Some(self.action),
            priority: ALWAYS_PRIORITY,
            note: self.note.clone(),
            network: self.network,
            domain_pattern: self.domain_pattern.clone(),
        }
    }

    fn as_rule(&self) -> Rule {
        Rule {
            id: 0,
            group_name: self.group.clone(),
            tool_pattern: self.tool_pattern.clone(),
            path_pattern: self.path_pattern.clone(),
            command_pattern: self.command_pattern.clone(),
            agent_id: None,
            working_dir: self.working_dir.clone(),
            action: self.action,
            priority: ALWAYS_PRIORITY,
            note: self.note.clone(),
            network: self.network,
            domain_pattern: self.domain_pattern.clone(),
        }
    }
}

/// The rule "always allow" proposes for a call — general enough to matter, narrow enough
/// to be safe: a command's leading words (`cargo test`), a write's smallest sensible
/// folder, a fetch's host, an MCP tool itself; scoped to this working directory so it does
/// not leak into other projects.
pub fn propose_rule(ctx: &RunContext, tool: &str, args: &Value) -> RuleSpec {
    let domain_pattern = (tool == tn::WEB_FETCH)
        .then(|| super::web::proposed_domain(args))
        .flatten();
    let (tool_pattern, path_pattern, command_pattern) = if tool == tn::EXECUTE_CMD {
        let cmd = args.get("command").and_then(Value::as_str).unwrap_or("");
        (tool.to_string(), None, command::proposed_pattern(cmd))
    } else if let Some(access) = file_access(tool) {
        let group = if access.is_write() {
            "@fs_write"
        } else {
            "@fs_read"
        };
        let path = call_path(tool, args, &ctx.working_dir).map(|p| {
            let wd = super::folder(&ctx.working_dir);
            let rel = |x: &Path| x.strip_prefix(&wd).unwrap_or(x).display().to_string();
            // A tool that defaults to the working directory is one that walks a folder.
            let is_dir = access.default_path.is_some() || p.is_dir();
            match p.parent() {
                // A folder tool: that folder, never its parent.
                _ if is_dir && p != wd && path_under(&p, &wd) => format!("{}/*", rel(&p)),
                // A file in a folder inside the working directory: that folder.
                Some(dir) if dir != wd.as_path() && path_under(dir, &wd) => {
                    format!("{}/*", rel(dir))
                }
                // At the top of the working directory, or outside it: exactly that path,
                // never `/`, home, or anything above the project.
                _ => rel(&p),
            }
        });
        (group.to_string(), path, None)
    } else {
        (tool.to_string(), None, None)
    };
    RuleSpec {
        group: ctx.group.clone(),
        tool_pattern,
        path_pattern,
        command_pattern,
        working_dir: Some(super::folder(&ctx.working_dir).display().to_string()),
        action: RuleAction::Allow,
        note: "always allowed from the Inbox".to_string(),
        // A command approved with the network keeps it; folders and "no sandbox" are
        // granted once, never by a rule.
        network: tool == tn::EXECUTE_CMD
            && matches!(
                skald_tools::execute_cmd::SandboxGrant::from_args(args),
                Ok(Some(g)) if g.network && !g.unsandboxed
            ),
        domain_pattern,
    }
}

/// What a proposed rule would allow besides the call it came from, in words a person
/// can check before saying "always": a command rule vouches for every command that starts
/// with its words, a path rule for every file under its folder.
pub fn rule_reach(spec: &RuleSpec) -> String {
    let place = match &spec.working_dir {
        Some(d) => format!("in {d} and every folder below it"),
        None => "in every folder".to_string(),
    };
    let what = match (&spec.command_pattern, &spec.path_pattern) {
        _ if spec.domain_pattern.is_some() => super::web::domain_reach(
            &spec.tool_pattern,
            spec.domain_pattern.as_deref().unwrap_or(""),
        ),
        (Some(c), _) => format!(
            "every command that starts with `{c}`, whatever arguments follow (for \
             example `{c} --help` or `{c} <other files>`), on its own or chained with \
             other commands this rule or another allows — never with a redirection, a \
             substitution or a command no rule allows"
        ),
        (None, Some(p)) => match p.strip_suffix("/*") {
            Some(dir) => format!(
                "{} on any file in {dir}/ and its subfolders, new files included",
                spec.tool_pattern
            ),
            None => format!("{} on {p}", spec.tool_pattern),
        },
        (None, None) if spec.tool_pattern == tn::EXECUTE_CMD => {
            "every shell command, whatever it runs".to_string()
        }
        (None, None) => format!("every call of {}, with any arguments", spec.tool_pattern),
    };
    let network = if spec.network {
        " Those commands run in the sandbox with the network."
    } else {
        ""
    };
    format!("Also allows {what}, {place}. A deny rule still wins.{network}")
}

/// The rule "always allow" proposes for the call an Inbox item asks about, in its
/// session's run context, with the session's earlier calls it would have matched. The one
/// proposal every carrier shows and stores (the UI, `skald inbox answer --always`).
pub fn propose_for_item(
    store: &Store,
    inbox_id: i64,
) -> Result<(RuleSpec, Vec<skald_store::ToolCallRecord>), skald_store::StoreError> {
    let item = store.get_inbox_item(inbox_id)?;
    let session = store.get_session(item.session_id)?;
    let (ctx, _) = RunContext::for_session(
        store,
        &session,
        Vec::new(),
        &Default::default(),
        Default::default(),
    )?;
    // Only the group and folder shape a proposal; the withheld lists do not.
    let Ok(skald_api::inbox::InboxRequest::Approval(request)) =
        skald_api::inbox::InboxRequest::from_stored(item.kind, item.payload)
    else {
        return Err(skald_store::StoreError::Invalid(format!(
            "inbox item {inbox_id} is not a call waiting for approval: no rule to propose"
        )));
    };
    let spec = propose_rule(&ctx, &request.tool, &request.arguments);
    let matched = would_match(store, item.session_id, &ctx, &spec)?;
    Ok((spec, matched))
}

/// The session's earlier calls a proposed rule would have matched, so the person sees
/// what "always" would have meant before saying yes.
pub fn would_match(
    store: &Store,
    session_id: i64,
    ctx: &RunContext,
    spec: &RuleSpec,
) -> Result<Vec<skald_store::ToolCallRecord>, skald_store::StoreError> {
    let rule = spec.as_rule();
    Ok(store
        .list_tool_calls(session_id)?
        .into_iter()
        .filter(|c| rule_matches(&rule, ctx, &c.name, &c.args))
        .collect())
}
