//! `skald rules list|add|rm`: the approval rules.

use clap::Subcommand;

use crate::exit;
use crate::fail::{Fail, finish};
use skald_core::DataDir;
use skald_service::records::Records;
use skald_store::{NewRule, RuleAction, Store};

fn open(data_dir: &DataDir) -> Result<Store, Fail> {
    Store::open(data_dir.db_path()).map_err(Fail::failed)
}

pub fn list(data_dir: &DataDir, json: bool) -> Result<u8, Fail> {
    let store = open(data_dir)?;
    let rules = Records::new(&store).rules().map_err(Fail::failed)?;
    if json {
        let text = serde_json::to_string_pretty(&rules).map_err(Fail::failed)?;
        println!("{text}");
        return Ok(exit::OK);
    }
    println!(
        "{:>4}  {:<10} {:>5}  {:<8} {:<22} conditions",
        "id", "group", "prio", "action", "tool"
    );
    for r in rules {
        let mut cond = Vec::new();
        if let Some(p) = &r.path_pattern {
            cond.push(format!("path {p}"));
        }
        if let Some(c) = &r.command_pattern {
            cond.push(format!("command `{c}`"));
        }
        if let Some(d) = &r.domain_pattern {
            cond.push(format!("host {d}"));
        }
        if let Some(a) = &r.agent_id {
            cond.push(format!("agent {a}"));
        }
        if let Some(d) = &r.working_dir {
            cond.push(format!("in {d}"));
        }
        if r.network {
            cond.push("with the network".to_string());
        }
        if !r.note.is_empty() {
            cond.push(format!("— {}", r.note));
        }
        println!(
            "{:>4}  {:<10} {:>5}  {:<8} {:<22} {}",
            r.id,
            r.group_name,
            r.priority,
            r.action.as_str(),
            r.tool_pattern,
            cond.join(", ")
        );
    }
    Ok(exit::OK)
}

pub struct AddArgs {
    pub group: String,
    pub tool: String,
    pub action: String,
    pub path: Option<String>,
    pub command: Option<String>,
    pub agent: Option<String>,
    pub working_dir: Option<String>,
    pub priority: i64,
    pub note: String,
    pub network: bool,
    pub domain: Option<String>,
}

pub fn add(data_dir: &DataDir, a: AddArgs) -> Result<u8, Fail> {
    let Some(action) = RuleAction::parse(&a.action) else {
        return Err(Fail::usage("--action must be allow, require or deny"));
    };
    if a.command.is_some() && a.tool != skald_api::tool_names::EXECUTE_CMD {
        return Err(Fail::usage("--command only applies to --tool execute_cmd"));
    }
    if a.network && (a.tool != skald_api::tool_names::EXECUTE_CMD || action != RuleAction::Allow) {
        return Err(Fail::usage(
            "--network gives commands the network: it goes with --tool execute_cmd --action allow",
        ));
    }
    if let Some(d) = &a.domain {
        if a.tool != skald_api::tool_names::WEB_FETCH {
            return Err(Fail::usage("--domain only applies to --tool web_fetch"));
        }
        skald_web::hosts::check_pattern(d).map_err(|e| Fail::usage(format!("--domain {e}")))?;
    }
    // A working directory scope is stored canonical, as the gate compares it.
    let working_dir = match a.working_dir {
        Some(d) => match std::fs::canonicalize(&d) {
            Ok(p) => Some(p.display().to_string()),
            Err(e) => return Err(Fail::usage(format!("--working-dir {d}: {e}"))),
        },
        None => None,
    };
    let store = open(data_dir)?;
    let id = store
        .add_rule(&NewRule {
            group_name: a.group,
            tool_pattern: a.tool,
            path_pattern: a.path,
            command_pattern: a.command,
            agent_id: a.agent,
            working_dir,
            action: Some(action),
            priority: a.priority,
            note: a.note,
            network: a.network,
            domain_pattern: a.domain,
        })
        .map_err(Fail::failed)?;
    println!("added rule {id}");
    Ok(exit::OK)
}

pub fn rm(data_dir: &DataDir, id: i64) -> Result<u8, Fail> {
    let store = open(data_dir)?;
    Records::new(&store).remove_rule(id)?;
    println!("removed rule {id}");
    Ok(exit::OK)
}

// A command line is parsed once: its largest variant's size costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum RulesCommand {
    /// Every rule, by group, priority and id (the order the gate tries them in)
    List {
        #[arg(long)]
        json: bool,
    },
    /// Add a rule
    #[command(
        after_help = "Examples:\n  skald rules add --tool execute_cmd --command \"cargo test\" --action allow\n  \
                            skald rules add --tool @fs_write --path \"notes/*\" --action allow\n  \
                            skald rules add --tool execute_cmd --action deny --agent researcher\n  \
                            skald rules add --tool web_fetch --domain docs.rs --action allow"
    )]
    Add {
        /// Tool pattern: a name, `prefix*`, `*`, `@fs_read`, `@fs_write`, `@fs_any`, `mcp__server__*`
        #[arg(long)]
        tool: String,
        /// allow, require or deny
        #[arg(long)]
        action: String,
        /// A path, or `dir/*` for a subtree (relative to the session's working directory)
        #[arg(long)]
        path: Option<String>,
        /// For execute_cmd: the leading words every part of the command must start with
        #[arg(long)]
        command: Option<String>,
        /// Only for this agent
        #[arg(long)]
        agent: Option<String>,
        /// Only in this working directory and below
        #[arg(long)]
        working_dir: Option<String>,
        /// The permission group
        #[arg(long, default_value = "default")]
        group: String,
        /// Lower numbers are tried first. The default (15) comes before the seeded rules
        /// that ask (20) and the catch-all (1000), so an allow takes effect as written; a
        /// deny anywhere still wins over any allow
        #[arg(long, default_value_t = skald_core::approval::ALWAYS_PRIORITY)]
        priority: i64,
        /// Why the rule exists
        #[arg(long, default_value = "")]
        note: String,
        /// With --tool execute_cmd --action allow: the commands it allows run in the
        /// sandbox with the network (docs/sandbox.md)
        #[arg(long)]
        network: bool,
        /// For web_fetch: the host the rule is about — `docs.rs`, `*.python.org` (hosts
        /// below it), either with `:port`. A host named without `*` may also be fetched at
        /// a local or private address (docs/web.md)
        #[arg(long)]
        domain: Option<String>,
    },
    /// Remove a rule
    Rm { id: i64 },
}

/// Runs one `rules` subcommand; its exit code.
pub async fn dispatch(env: &crate::Env, command: RulesCommand) -> u8 {
    let result = match command {
        RulesCommand::List { json } => list(&env.data_dir, json),
        RulesCommand::Add {
            tool,
            action,
            path,
            command,
            agent,
            working_dir,
            group,
            priority,
            note,
            network,
            domain,
        } => add(
            &env.data_dir,
            AddArgs {
                group,
                tool,
                action,
                path,
                command,
                agent,
                working_dir,
                priority,
                note,
                network,
                domain,
            },
        ),
        RulesCommand::Rm { id } => rm(&env.data_dir, id),
    };
    finish("skald rules", result)
}
