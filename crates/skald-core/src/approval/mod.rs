//! The approval gate (docs/approval.md, "How a decision is made"; docs/tools.md,
//! "Which tools an agent is offered"): every tool call is checked against the rules of
//! the session's permission group, then `default`'s, in priority order; the first match
//! decides, no match requires approval, and a store error requires approval too. The run
//! context's grants relax `require` to `allow` for reads and writes where the user said
//! so; they never override a `deny`.

mod bypass;
pub mod command;
mod preview;
mod propose;
pub mod web;

pub use bypass::{BypassScope, Bypasses, CategoryOf};
pub use preview::write_preview;
pub use propose::{
    ALWAYS_PRIORITY, RuleSpec, RuleSpecExt, propose_for_item, propose_rule, rule_reach, would_match,
};

use serde::Serialize;
use serde_json::Value;
use skald_api::FileAccess;
use skald_api::tool_names as tn;
use skald_base::path::{canonicalize_for_policy, path_under};
use skald_store::{Rule, RuleAction, Store};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Where people keep credentials, relative to their home folder: keys, tokens, cookies.
/// File tools reading or writing there always ask, even inside a chat's folder or a grant
/// (the desktop's default folder is the home folder), unless a rule naming such a path
/// allows it; recursive walks skip them unless they start inside one.
pub const CREDENTIAL_PATHS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".config/gcloud",
    ".config/gh",
    ".password-store",
    ".local/share/keyrings",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".vault-token",
    ".cargo/credentials",
    ".cargo/credentials.toml",
];

/// The credential paths under the user's home folder, canonical; worked out once per
/// process (every file tool call is checked against them).
pub fn credential_paths() -> &'static [PathBuf] {
    static PATHS: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    PATHS.get_or_init(|| {
        let Some(dirs) = directories::BaseDirs::new() else {
            return Vec::new();
        };
        let home = dirs.home_dir();
        CREDENTIAL_PATHS
            .iter()
            .map(|rel| canonicalize_for_policy(&home.join(rel), home))
            .collect()
    })
}

/// What no reader outside the file tools may reach either (a LaTeX build's `\input`):
/// the engine's protected folders (`Withheld::folders`) and the credential paths in the
/// home folder, canonical.
pub fn guarded_paths(protected: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = protected.to_vec();
    out.extend(credential_paths().iter().cloned());
    out
}

/// How `tool` reaches the user's files, as the tool itself declares it
/// (`Tool::file_access`). Every tool that takes a path is a skald-tools tool; a test of
/// the one list (`tools::tests`) keeps it so.
pub fn file_access(tool: &str) -> Option<FileAccess> {
    skald_tools::tool_named(tool).and_then(|t| t.file_access())
}

/// Whether `tool` asks a language server, which it starts in the chat's sandbox
/// (docs/lsp.md).
pub fn starts_language_server(tool: &str) -> bool {
    matches!(
        tool,
        tn::DIAGNOSTICS | tn::GO_TO_DEFINITION | tn::FIND_REFERENCES
    )
}

/// Whether `tool` reads the user's files: the tools the `@fs_read` group names.
pub fn reads_files(tool: &str) -> bool {
    file_access(tool).is_some_and(|a| !a.is_write())
}

/// Whether `tool` writes the user's files: the tools the `@fs_write` group names.
pub fn writes_files(tool: &str) -> bool {
    file_access(tool).is_some_and(|a| a.is_write())
}

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
    /// Folders no file tool may touch, whatever the rules, grants or bypasses say: Skald's
    /// own secrets (`<data dir>/secrets`), from the engine's `Withheld`. The seeded
    /// `secrets/*` rule is relative to a chat's folder; this holds when that folder
    /// contains the data directory (the home folder).
    pub protected: Vec<PathBuf>,
    /// Environment variables no command the run starts inherits (`Withheld::env`).
    pub hidden_env: Vec<String>,
    /// Folders no sandboxed command may read, besides `protected`: Skald's data directory
    /// (`Withheld::from_commands`).
    pub hidden_from_commands: Vec<PathBuf>,
    /// How the run's commands are confined (docs/sandbox.md).
    pub sandbox: crate::config::SandboxSettings,
    /// In plan mode (docs/agent-loop.md, "Plan mode"): the sandbox the chat acts with once
    /// its plan is approved, `sandbox` being the read-only one meanwhile.
    pub planning: Option<crate::config::SandboxSettings>,
    /// For a chat working in a worktree (docs/worktrees.md): the person's folder it is a
    /// copy of, which this run never writes — write tools are refused there whatever the
    /// rules say, and no write grant that reaches it is given to commands. Its work comes
    /// back only through review.
    pub worktree_source: Option<PathBuf>,
}

impl RunContext {
    /// This run in plan mode: its commands confined read-only, with no network.
    pub fn plan(mut self) -> RunContext {
        if self.planning.is_none() {
            self.planning = Some(self.sandbox);
            self.sandbox.mode = skald_api::SandboxMode::ReadOnly;
            self.sandbox.network = false;
        }
        self
    }

    /// This run acting: its own sandbox back.
    pub fn act(mut self) -> RunContext {
        if let Some(acting) = self.planning.take() {
            self.sandbox = acting;
        }
        self
    }

    /// Whether the run is in plan mode.
    pub fn is_planning(&self) -> bool {
        self.planning.is_some()
    }

    /// The run context a session runs with: its stored one (group, grants), or the
    /// `default` group with no grants; plus the folders skills live in, always readable.
    /// Returns it with the stored extra prompt lines.
    /// `sandbox` is what config.toml (or the run) says; the chat's own setting, when it has
    /// one, wins over it.
    pub fn for_session(
        store: &Store,
        session: &skald_store::Session,
        skill_dirs: Vec<PathBuf>,
        withheld: &crate::withheld::Withheld,
        sandbox: crate::config::SandboxSettings,
    ) -> Result<(RunContext, String), skald_store::StoreError> {
        let stored = session
            .run_context_id
            .map(|id| store.get_run_context(id))
            .transpose()?;
        // No working directory means no working-directory grant: an empty path would
        // canonicalise to `/` and grant every read on the machine.
        let working_dir = session
            .working_dir
            .as_deref()
            .map(PathBuf::from)
            .or_else(|| std::env::current_dir().ok())
            .ok_or_else(|| {
                skald_store::StoreError::Invalid(format!(
                    "session {} has no working directory and none can be found",
                    session.id
                ))
            })?;
        // Every way of making a chat stores its folder canonical. Resolving it now to
        // another place means a part of it was replaced by a link since (a command can
        // do that where the folder's parent is writable to it): the chat does not follow.
        if let Ok(now) = std::fs::canonicalize(&working_dir)
            && now != skald_base::path::normalize_lexically(&working_dir)
        {
            return Err(skald_store::StoreError::Invalid(format!(
                "the chat's folder {} now leads to {}: a part of its path was replaced by a \
                 link or moved since the chat was made, and Skald does not follow it; start a \
                 chat in the folder you mean",
                working_dir.display(),
                now.display()
            )));
        }
        let sandbox = match &stored {
            Some(rc) => sandbox.with_chat(rc.sandbox_mode, rc.sandbox_network),
            None => sandbox,
        };
        let (group, extra, reads, writes) = match stored {
            Some(rc) => (
                rc.permission_group,
                rc.extra_prompt,
                rc.allow_fs_reads,
                rc.allow_fs_writes,
            ),
            None => ("default".to_string(), String::new(), Vec::new(), Vec::new()),
        };
        let mut allow_fs_reads: Vec<PathBuf> = reads.into_iter().map(PathBuf::from).collect();
        // The skill folders are in Skald's data directory, which no command can write:
        // resolved once here, like a stored grant was when it was given.
        allow_fs_reads.extend(
            skill_dirs
                .iter()
                .map(|d| canonicalize_for_policy(d, Path::new("/"))),
        );
        // By the folder, not the session: the worktree chat's tasks, cron runs, forks and
        // rewinds work in it too and keep out of the person's folder alike.
        let worktree_source = worktree_source(store, session.id, &working_dir)?;
        Ok((
            RunContext {
                group,
                agent_id: session.agent_id.clone(),
                working_dir,
                allow_fs_reads,
                allow_fs_writes: writes.into_iter().map(PathBuf::from).collect(),
                protected: withheld.folders(),
                hidden_env: withheld.env(),
                hidden_from_commands: withheld.from_commands(),
                sandbox,
                planning: None,
                worktree_source,
            }
            .in_mode(session.mode),
            extra,
        ))
    }

    /// This run in `mode`.
    pub fn in_mode(self, mode: skald_api::records::ChatMode) -> RunContext {
        match mode {
            skald_api::records::ChatMode::Plan => self.plan(),
            skald_api::records::ChatMode::Act => self.act(),
        }
    }
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
        "@fs_read" => reads_files(tool),
        "@fs_write" => writes_files(tool),
        "@fs_any" => file_access(tool).is_some(),
        "@web" => skald_tools::tool_named(tool)
            .is_some_and(|t| t.category() == skald_api::ToolCategory::Web),
        p => match p.strip_suffix('*') {
            Some(prefix) => tool.starts_with(prefix),
            None => p == tool,
        },
    }
}

/// The file or folder a call acts on, canonical, if it acts on one.
fn call_path(tool: &str, args: &Value, working_dir: &Path) -> Option<PathBuf> {
    let access = file_access(tool);
    let arg = access.map_or("path", |a| a.path_arg);
    let raw = match args.get(arg).and_then(Value::as_str) {
        Some(p) => p,
        // The recursive tools default to the working directory.
        None => access.and_then(|a| a.default_path)?,
    };
    Some(canonicalize_for_policy(Path::new(raw), working_dir))
}

/// What a rule's path pattern names, canonical: `dir/*` is the folder and everything under
/// it (`true`), anything else one exact path. Relative patterns are relative to the
/// working directory. Worked out once per rule and call: a process swapping the folder for
/// a link must not have one look see the folder and the next the link's target.
fn pattern_target(pattern: &str, working_dir: &Path) -> (PathBuf, bool) {
    match pattern.strip_suffix("/*") {
        Some(dir) => (canonicalize_for_policy(Path::new(dir), working_dir), true),
        None => (
            canonicalize_for_policy(Path::new(pattern), working_dir),
            false,
        ),
    }
}

/// Whether `path` is what a pattern names (see `pattern_target`).
fn path_matches(target: &(PathBuf, bool), path: &Path) -> bool {
    match target {
        (dir, true) => path_under(path, dir),
        (exact, false) => path == exact,
    }
}

/// Whether an allow rule's relative path pattern stays in the working directory once
/// symlinks are followed. A cloned repository's `data -> /` must not turn the seeded
/// `data/*` allow into "write anywhere": such a rule then matches nothing, and the call
/// asks. (Deny rules keep following the link: they may cover more, never less.)
fn allow_pattern_stays_inside(pattern: &str, target: &Path, working_dir: &Path) -> bool {
    let written = pattern.strip_suffix("/*").unwrap_or(pattern);
    Path::new(written).is_absolute() || path_under(target, &folder(working_dir))
}

/// The chat's folder as the gate judges calls against it: the path stored when the chat
/// was made (canonical then, `RunContext::for_session` checks it still is), never resolved
/// again. A chat's folder that a command renames away and replaces with a link (possible
/// when the folder's parent is writable to it, a grant) must not move the chat to where
/// the link points: the paths there are then outside, and ask.
pub fn folder(working_dir: &Path) -> PathBuf {
    if working_dir.is_absolute() {
        skald_base::path::normalize_lexically(working_dir)
    } else {
        canonicalize_for_policy(working_dir, Path::new("/"))
    }
}

/// The name every `secrets/` folder has: compared as the file system compares names.
pub fn is_secrets_name(name: &std::ffi::OsStr) -> bool {
    if cfg!(any(target_os = "macos", windows)) {
        name.eq_ignore_ascii_case("secrets")
    } else {
        name == "secrets"
    }
}

/// The `secrets/` folder `path` (canonical) is in, at any depth: below the working
/// directory when the path is inside it (a chat may work in a folder that is itself under
/// one), else anywhere in the path. File tools, the viewer and the file route never
/// touch these, whatever the rules say (docs/security.md promises every such folder).
pub fn secrets_folder_of(path: &Path, working_dir: &Path) -> Option<PathBuf> {
    let wd = folder(working_dir);
    let (base, rest) = match path.strip_prefix(&wd) {
        Ok(rest) => (wd.clone(), rest),
        Err(_) => (PathBuf::new(), path),
    };
    let mut at = base;
    for c in rest.components() {
        at.push(c);
        if is_secrets_name(c.as_os_str()) {
            return Some(at);
        }
    }
    None
}

/// Whether a rule is about this tool in this run, whatever the call's arguments.
fn rule_applies(rule: &Rule, ctx: &RunContext, tool: &str) -> bool {
    rule_for_tool_and_agent(rule, ctx, tool) && in_rule_dir(rule, &folder(&ctx.working_dir))
}

fn rule_for_tool_and_agent(rule: &Rule, ctx: &RunContext, tool: &str) -> bool {
    tool_matches(&rule.tool_pattern, tool)
        && rule.agent_id.as_ref().is_none_or(|a| a == &ctx.agent_id)
}

/// Whether `dir` (canonical) is inside the rule's folder (a rule without one covers every
/// folder).
fn in_rule_dir(rule: &Rule, dir: &Path) -> bool {
    rule.working_dir
        .as_ref()
        .is_none_or(|rd| path_under(dir, &canonicalize_for_policy(Path::new(rd), Path::new("/"))))
}

fn rule_matches(rule: &Rule, ctx: &RunContext, tool: &str, args: &Value) -> bool {
    let path = call_path(tool, args, &ctx.working_dir);
    rule_matches_at(rule, ctx, tool, args, path.as_deref())
}

/// `rule_matches` for a call whose canonical path (`call_path`) is already worked out.
fn rule_matches_at(
    rule: &Rule,
    ctx: &RunContext,
    tool: &str,
    args: &Value,
    path: Option<&Path>,
) -> bool {
    if !rule_for_tool_and_agent(rule, ctx, tool) {
        return false;
    }
    let wd = folder(&ctx.working_dir);
    let here = in_rule_dir(rule, &wd);
    // A command can run in another folder (`workdir`). An allow scoped to a folder must
    // cover both the session's folder and that one; a deny or require scoped to a folder
    // applies when either is inside it.
    let there = match args.get("workdir").and_then(Value::as_str) {
        Some(w) if tool == tn::EXECUTE_CMD => {
            in_rule_dir(rule, &canonicalize_for_policy(Path::new(w), &wd))
        }
        _ => here,
    };
    let in_scope = if rule.action == RuleAction::Allow {
        here && there
    } else {
        here || there
    };
    if !in_scope {
        return false;
    }
    if let Some(pattern) = &rule.path_pattern {
        let target = pattern_target(pattern, &ctx.working_dir);
        if rule.action == RuleAction::Allow
            && !allow_pattern_stays_inside(pattern, &target.0, &ctx.working_dir)
        {
            return false;
        }
        match path {
            Some(path) if path_matches(&target, path) => {}
            _ => return false,
        }
    }
    if let Some(pattern) = &rule.domain_pattern
        && !web::domain_matches(pattern, tool, args)
    {
        return false;
    }
    if let Some(pattern) = &rule.command_pattern {
        let command = args.get("command").and_then(Value::as_str);
        match command {
            // An allow must vouch for the whole line; a deny or require applies when the
            // command might run what it names.
            Some(c)
                if tool == tn::EXECUTE_CMD
                    && if rule.action == RuleAction::Allow {
                        command::pattern_matches(pattern, c)
                    } else {
                        command::pattern_hits(pattern, c)
                    } => {}
            _ => return false,
        }
    }
    true
}

/// Whether the run context grants this call without asking.
fn granted(ctx: &RunContext, tool: &str, path: Option<&Path>) -> Option<&'static str> {
    let path = path?;
    // A grant is the folder as it was when it was given: stored canonical (`skald exec
    // --allow-write` canonicalises it; the skill folders are when the run starts), and
    // never resolved again here, so a folder inside the chat's folder that a process swaps
    // for a link afterwards does not carry the grant to wherever the link points.
    let under = |dirs: &[PathBuf]| dirs.iter().any(|d| d.is_absolute() && path_under(path, d));
    if reads_files(tool) {
        let wd = folder(&ctx.working_dir);
        if path_under(path, &wd) || under(&ctx.allow_fs_reads) || under(&ctx.allow_fs_writes) {
            return Some("a read inside the working directory or a read grant");
        }
    }
    if writes_files(tool) && under(&ctx.allow_fs_writes) {
        return Some("a write inside a write grant");
    }
    None
}

/// The canonical files and folders the deny rules keep `tool` away from in this run. The
/// gate decides on the path a call names; a recursive tool (a listing, a grep, a folder
/// outline) gets these so it skips them inside the folder it walks. Unreadable rules
/// exclude nothing here: the gate itself then asks before anything runs.
pub fn denied_paths(store: &Store, ctx: &RunContext, tool: &str) -> Vec<PathBuf> {
    let mut out = if file_access(tool).is_some() {
        let mut p = ctx.protected.clone();
        p.extend(credential_paths().iter().cloned());
        // Skald's data directory, skipped by a walk that reaches it (a grep of the home
        // folder); a walk that starts inside its skills is not affected (`walker` only
        // skips paths below its root).
        p.extend(ctx.hidden_from_commands.iter().cloned());
        p
    } else {
        Vec::new()
    };
    let Ok(rules) = store.rules_for_group(&ctx.group) else {
        return out;
    };
    out.extend(
        rules
            .iter()
            .filter(|r| r.action == RuleAction::Deny && rule_applies(r, ctx, tool))
            .filter_map(|r| r.path_pattern.as_deref())
            .map(|p| {
                let target = p.strip_suffix("/*").unwrap_or(p);
                canonicalize_for_policy(Path::new(target), &ctx.working_dir)
            }),
    );
    out
}

/// The folder hidden from commands (Skald's data directory) that a file tool's call
/// reaches, if any. A read inside a read grant that itself lies in that folder — a skill
/// folder, which the run always may read — is not refused: `SKILL.md` says "read_file and
/// follow it".
fn data_dir_reached<'a>(ctx: &'a RunContext, tool: &str, path: Option<&Path>) -> Option<&'a Path> {
    file_access(tool)?;
    let path = path?;
    let dir = ctx
        .hidden_from_commands
        .iter()
        .find(|d| path_under(path, d))?;
    let opened = reads_files(tool)
        && ctx.allow_fs_reads.iter().any(|g| {
            let g = canonicalize_for_policy(g, &ctx.working_dir);
            path_under(&g, dir) && path_under(path, &g)
        });
    (!opened).then_some(dir.as_path())
}

/// Whether a call asks whatever lifts an ordinary "needs approval": a sandbox grant (more
/// folders, the network, no sandbox) or a file tool in a credential folder. Only the
/// person lifts these, never a hook's "allow": a project's hook may run code a sandboxed
/// command wrote.
/// `checked` is the path the decision was made on (`Checked::path`).
pub fn always_asks(tool: &str, args: &Value, checked: Option<&Path>) -> bool {
    only_the_person_approves(tool)
        || asks_beyond_sandbox(tool, args).is_some()
        || (writes_files(tool) && checked.is_some_and(runs_later))
        || (file_access(tool).is_some()
            && checked.is_some_and(|p| credential_paths().iter().any(|d| path_under(p, d))))
}

/// The person's folder a session working in `working_dir` must never write: that of the
/// worktree holding the folder (whichever session works there), or the session's own.
fn worktree_source(
    store: &Store,
    session_id: i64,
    working_dir: &Path,
) -> Result<Option<PathBuf>, skald_store::StoreError> {
    let held = match store.worktree_holding(working_dir)? {
        Some(w) => Some(w),
        None => store.worktree_of_session(session_id)?,
    };
    Ok(held.map(|w| PathBuf::from(w.source)))
}

/// The language-server setup a call gets: for a write tool, whether it may start the
/// file's server to check what it wrote — only where the gate would let `diagnostics` on
/// that file run unasked (docs/lsp.md, "After an edit").
pub fn lsp_setup(
    store: &Store,
    ctx: &RunContext,
    tool: &str,
    args: &Value,
    mut setup: skald_api::LspSetup,
) -> skald_api::LspSetup {
    setup.edits_may_start = writes_files(tool)
        && ctx.sandbox.runs_unasked()
        && args.get("path").and_then(Value::as_str).is_some_and(|p| {
            check_call(
                store,
                ctx,
                tn::DIAGNOSTICS,
                &serde_json::json!({ "path": p }),
            )
            .decision
            .action
                == RuleAction::Allow
        });
    setup
}

/// `always_asks` in this run: also a language server the sandbox does not confine, which
/// would run the project's code as the person — a hook's allow or a bypass must not lift
/// that ask, as they do not lift an unsandboxed command's.
pub fn always_asks_in(ctx: &RunContext, tool: &str, args: &Value, checked: Option<&Path>) -> bool {
    always_asks(tool, args, checked)
        || (starts_language_server(tool) && !ctx.sandbox.runs_unasked())
}

/// What git or Skald reads and acts on later, so a write there can run code when the
/// person next uses them: a `.git` (folder or a worktree's file) and what is in it
/// (hooks, config, a worktree's or a submodule's repository), a project's `.skald` (its
/// hooks). Commands have them read-only (`sandbox::run_later`); write tools always ask.
pub fn runs_later(path: &Path) -> bool {
    path.components()
        .any(|c| matches!(c, std::path::Component::Normal(n) if n == ".git" || n == ".skald"))
}

/// A call no rule, bypass or hook approves, whatever it says: a plan (`exit_plan_mode`),
/// which ends plan mode — its card is the person's to answer (docs/agent-loop.md, "Plan
/// mode"). Only `--approve all`, the person's own word for a whole run, lets it through.
pub fn only_the_person_approves(tool: &str) -> bool {
    tool == skald_api::tool_names::EXIT_PLAN_MODE
}

/// A decision and the canonical path it was made on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub decision: Decision,
    /// The file or folder the call acts on, canonical (links resolved), as every part of
    /// the decision saw it: worked out once, so a process swapping a link cannot show one
    /// check one path and the next another. The file tools then open exactly this path,
    /// refusing a link on it (`ToolScope::with_checked_path`).
    pub path: Option<PathBuf>,
}

/// Decides a call. Logs every decision for audit.
pub fn check(store: &Store, ctx: &RunContext, tool: &str, args: &Value) -> Decision {
    check_call(store, ctx, tool, args).decision
}

/// `check`, with the path the decision was made on.
pub fn check_call(store: &Store, ctx: &RunContext, tool: &str, args: &Value) -> Checked {
    let path = call_path(tool, args, &ctx.working_dir);
    let decision = decide_at(store, ctx, tool, args, path.as_deref());
    tracing::info!(
        target: "skald::approval",
        tool,
        args_digest = %digest(args),
        rule = ?decision.rule_id,
        decision = decision.action.as_str(),
        group = %ctx.group,
        "approval decision"
    );
    Checked { decision, path }
}

fn decide(store: &Store, ctx: &RunContext, tool: &str, args: &Value) -> Decision {
    let path = call_path(tool, args, &ctx.working_dir);
    decide_at(store, ctx, tool, args, path.as_deref())
}

fn decide_at(
    store: &Store,
    ctx: &RunContext,
    tool: &str,
    args: &Value,
    path: Option<&Path>,
) -> Decision {
    if only_the_person_approves(tool) {
        return Decision {
            action: RuleAction::Require,
            rule_id: None,
            reason: "a plan is approved by you, never by a rule".to_string(),
        };
    }
    let is_file_tool = file_access(tool).is_some();
    if is_file_tool
        && let Some(path) = path
        && let Some(dir) = ctx.protected.iter().find(|d| path_under(path, d))
    {
        return Decision {
            action: RuleAction::Deny,
            rule_id: None,
            reason: format!(
                "{} holds Skald's secrets; file tools never touch it",
                dir.display()
            ),
        };
    }
    if writes_files(tool)
        && let (Some(path), Some(source)) = (path, &ctx.worktree_source)
        // (A worktree may lie inside the folder it copies, if that holds Skald's: the
        // home folder.)
        && path_under(path, source)
        && !path_under(path, &folder(&ctx.working_dir))
    {
        return Decision {
            action: RuleAction::Deny,
            rule_id: None,
            reason: format!(
                "this chat works in its own worktree; {} is the folder it copies, which it \
                 never writes (its changes reach it only when you review and apply them)",
                source.display()
            ),
        };
    }
    if writes_files(tool)
        && let Some(path) = path
        && runs_later(path)
    {
        return Decision {
            action: if ctx.worktree_source.is_some() {
                RuleAction::Deny
            } else {
                RuleAction::Require
            },
            rule_id: None,
            reason: format!(
                "{} is read by git or Skald, which can run what it says later (hooks, \
                 configuration){}",
                path.display(),
                if ctx.worktree_source.is_some() {
                    "; in a worktree it is not the agent's to write"
                } else {
                    ": a write there always asks you"
                }
            ),
        };
    }
    if let Some(dir) = data_dir_reached(ctx, tool, path) {
        return Decision {
            action: RuleAction::Deny,
            rule_id: None,
            reason: format!(
                "{} is Skald's data directory (every chat's history, the logs, the \
                 settings); file tools do not reach it, as commands do not (only its skill \
                 folders are read)",
                dir.display()
            ),
        };
    }
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
    // A deny anywhere in the list wins (docs/approval.md, "How a decision is made"),
    // whatever allow or require comes before it; then the first match decides.
    let first = rules
        .iter()
        .find(|r| rule_matches_at(r, ctx, tool, args, path));
    if let Some(rule) = rules
        .iter()
        .find(|r| r.action == RuleAction::Deny && rule_matches_at(r, ctx, tool, args, path))
    {
        return Decision {
            action: RuleAction::Deny,
            rule_id: Some(rule.id),
            reason: describe(rule),
        };
    }
    if is_file_tool
        && let Some(path) = path
        && let Some(dir) = secrets_folder_of(path, &ctx.working_dir)
    {
        return Decision {
            action: RuleAction::Deny,
            rule_id: None,
            reason: format!(
                "{} is a secrets/ folder; file tools never touch one, at any depth",
                dir.display()
            ),
        };
    }
    if is_file_tool
        && let Some(path) = path
        && let Some(dir) = credential_paths().iter().find(|d| path_under(path, d))
    {
        // Only a rule that names a path in there lifts this: the seeded read rules and the
        // working-directory grant were not written with keys in mind.
        let names_it = first.filter(|r| r.action == RuleAction::Allow).filter(|r| {
            r.path_pattern.as_deref().is_some_and(|p| {
                let target = p.strip_suffix("/*").unwrap_or(p);
                path_under(
                    &canonicalize_for_policy(Path::new(target), &ctx.working_dir),
                    dir,
                )
            })
        });
        return match names_it {
            Some(rule) => Decision {
                action: RuleAction::Allow,
                rule_id: Some(rule.id),
                reason: describe(rule),
            },
            None => Decision {
                action: RuleAction::Require,
                rule_id: None,
                reason: format!(
                    "{} holds credentials (keys, tokens), so this always asks",
                    dir.display()
                ),
            },
        };
    }
    if let Some(more) = asks_beyond_sandbox(tool, args)
        && !network_rule_covers(first, args)
    {
        return Decision {
            action: RuleAction::Require,
            rule_id: None,
            reason: format!("it asks to {more}, beyond the sandbox"),
        };
    }
    // A language server runs the project's own code (rust-analyzer its build scripts and
    // macros, tsserver the plugins a tsconfig names): without the sandbox around it, a
    // read of the folder is not a read, and asks — unless a rule allows that very tool.
    if starts_language_server(tool) && !ctx.sandbox.runs_unasked() {
        return match first.filter(|r| r.action == RuleAction::Allow && r.tool_pattern == tool) {
            Some(rule) => Decision {
                action: RuleAction::Allow,
                rule_id: Some(rule.id),
                reason: describe(rule),
            },
            None => Decision {
                action: RuleAction::Require,
                rule_id: None,
                reason: if ctx.sandbox.confines() {
                    "a language server can run the project's code (build scripts, plugins), \
                     and every command asks here ([sandbox] ask = \"always\")"
                } else {
                    "a language server can run the project's code (build scripts, plugins), \
                     and the command sandbox is not on, so this asks"
                }
                .to_string(),
            },
        };
    }
    if let Some(why) = granted(ctx, tool, path) {
        return Decision {
            action: RuleAction::Allow,
            rule_id: None,
            reason: why.to_string(),
        };
    }
    // In the sandbox a command no rule names runs without asking: the rules that ask for
    // every command (the seeded `require execute_cmd`, the catch-all) were written for
    // commands that run as the user. A rule naming the command still decides.
    let sandboxed = tool == tn::EXECUTE_CMD && ctx.sandbox.runs_unasked();
    let in_the_sandbox = || Decision {
        action: RuleAction::Allow,
        rule_id: None,
        reason: format!(
            "no rule names this command, so it runs in the sandbox ({}, network {})",
            ctx.sandbox.mode,
            if ctx.sandbox.network { "on" } else { "off" }
        ),
    };
    match first {
        Some(rule)
            if sandboxed
                && rule.action == RuleAction::Require
                && rule.command_pattern.is_none() =>
        {
            in_the_sandbox()
        }
        Some(rule) => Decision {
            action: rule.action,
            rule_id: Some(rule.id),
            reason: describe(rule),
        },
        None if sandboxed => in_the_sandbox(),
        None => Decision {
            action: RuleAction::Require,
            rule_id: None,
            reason: "no rule matches, so this needs approval".to_string(),
        },
    }
}

/// Whether the rule that matched a command is an allow rule that gives it the network, and
/// the call's grant asks for nothing else: then the rule has already said yes.
fn network_rule_covers(first: Option<&Rule>, args: &Value) -> bool {
    first.is_some_and(|r| r.action == RuleAction::Allow && r.network)
        && matches!(
            skald_tools::execute_cmd::SandboxGrant::from_args(args),
            Ok(Some(g)) if g.only_network()
        )
}

/// Whether the rule that allows this command gives it the network (`skald rules add
/// --network`): the command then runs sandboxed with it.
pub fn rule_gives_network(store: &Store, ctx: &RunContext, tool: &str, args: &Value) -> bool {
    if tool != tn::EXECUTE_CMD {
        return false;
    }
    let decision = decide(store, ctx, tool, args);
    if decision.action != RuleAction::Allow {
        return false;
    }
    let Some(id) = decision.rule_id else {
        return false;
    };
    store
        .rules_for_group(&ctx.group)
        .is_ok_and(|rules| rules.iter().any(|r| r.id == id && r.network))
}

/// What a command call asks for beyond its sandbox (`sandbox_grant`), in words: such a
/// call always asks, whatever rule or earlier "allow for this chat" covers the command.
/// Malformed grants ask too; the tool then refuses them.
pub fn asks_beyond_sandbox(tool: &str, args: &Value) -> Option<String> {
    if tool != tn::EXECUTE_CMD {
        return None;
    }
    match skald_tools::execute_cmd::SandboxGrant::from_args(args) {
        Ok(Some(grant)) => Some(grant.describe()),
        Ok(None) => None,
        Err(e) => Some(format!("run with a grant it did not say clearly ({e})")),
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

/// Which of `names` a group's rules deny outright, whatever the arguments: they are taken
/// out of the model's tool list. Rules with a path or command pattern depend on the call
/// and never hide a tool; MCP tools are gated, never hidden (docs/tools.md,
/// "Which tools an agent is offered").
pub fn hidden_tools<'a>(
    store: &Store,
    ctx: &RunContext,
    names: impl IntoIterator<Item = &'a str>,
) -> HashSet<String> {
    let Ok(rules) = store.rules_for_group(&ctx.group) else {
        return HashSet::new();
    };
    let unconditional: Vec<&Rule> = rules
        .iter()
        .filter(|r| r.path_pattern.is_none() && r.command_pattern.is_none())
        .collect();
    names
        .into_iter()
        .filter(|name| !name.starts_with(tn::MCP_PREFIX))
        .map(str::to_string)
        .filter(|name| {
            unconditional
                .iter()
                .any(|r| r.action == RuleAction::Deny && rule_matches(r, ctx, name, &Value::Null))
        })
        .collect()
}

#[cfg(test)]
mod tests;
