//! `skald checkpoints list|diff|changes|revert|restore`: what the agents of a session
//! changed in its folder, taking back any hunk of it, and going back to before any of it
//! (docs/checkpoints.md).

use crate::cmd_worktrees::esc;
use crate::exit;
use crate::fail::{Fail, finish};
use clap::Subcommand;
use serde_json::json;
use skald_api::ToolDescriptionLength;
use skald_api::checkpoint::{CheckpointInfo, CheckpointKind};
use skald_core::checkpoints::Checkpoints;
use skald_core::worktrees::{revert, review};
use skald_core::{DataDir, builtin_registry};
use skald_store::Store;

#[derive(Debug, Subcommand)]
pub enum CheckpointsCommand {
    /// A session's checkpoints, oldest first: each step that changed its folder
    List {
        /// The session (see `skald sessions list`, or `session_id` in `skald exec --json`)
        session: i64,
        #[arg(long)]
        json: bool,
    },
    /// The diff of what one step changed
    Diff {
        id: i64,
        /// Only these files (relative to the folder); repeatable
        #[arg(long, value_name = "PATH")]
        path: Vec<String>,
        /// Only the list of files, with lines added and removed
        #[arg(long)]
        stat: bool,
    },
    /// What a session changed in its folder, from before its first change to after its
    /// last, file by file and hunk by hunk (each hunk numbered for `revert --hunk`)
    Changes {
        session: i64,
        #[arg(long)]
        json: bool,
    },
    /// Takes back a session's changes (all, or the hunks named), merged with what changed
    /// in the folder since; with a clash nothing is written. Itself a checkpoint, undone
    /// with `restore`
    Revert {
        session: i64,
        /// Only these hunks: `PATH:1,3` (numbers from `changes`), or `PATH` for all of a
        /// file's; repeatable. Without it, every change
        #[arg(long, value_name = "PATH[:N,…]")]
        hunk: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// Brings the folder back to before a step; the restore is itself a checkpoint, so
    /// it can be undone the same way
    Restore {
        id: i64,
        /// Also rewind the conversation: a new session with the messages before that call
        /// (the original keeps them all)
        #[arg(long)]
        rewind: bool,
        #[arg(long)]
        json: bool,
    },
}

pub async fn dispatch(env: &crate::Env, command: CheckpointsCommand) -> u8 {
    finish(
        "skald checkpoints",
        run(&env.data_dir, &env.config, command).await,
    )
}

async fn run(
    data_dir: &DataDir,
    config: &skald_core::Config,
    command: CheckpointsCommand,
) -> Result<u8, Fail> {
    let store = Store::open(data_dir.db_path()).map_err(Fail::failed)?;
    let checkpoints = Checkpoints::new(config.checkpoints.settings(data_dir.root()));
    if !checkpoints.enabled() {
        return Err(Fail::usage(
            "checkpoints are turned off in config.toml ([checkpoints] enabled = false)",
        ));
    }
    match command {
        CheckpointsCommand::List { session, json } => {
            store.get_session(session).map_err(not_found)?;
            let rows = store.checkpoints(session).map_err(Fail::failed)?;
            for problem in checkpoints.recover(&rows).await {
                eprintln!("skald checkpoints: {problem}");
            }
            if json {
                return print_json(&json!(rows));
            }
            if rows.is_empty() {
                println!("Session {session} has changed no files yet.");
                return Ok(exit::OK);
            }
            let calls = store.list_tool_calls(session).map_err(Fail::failed)?;
            let registry = builtin_registry().ok();
            for row in &rows {
                let what = match (&row.kind, &row.tool_call_id) {
                    (CheckpointKind::Restore, _) => match row.restored_to {
                        Some(to) => format!("restore to before #{to}"),
                        None => "restore".to_string(),
                    },
                    (CheckpointKind::Call, Some(id)) => calls
                        .iter()
                        .find(|c| &c.tool_call_id == id)
                        .map(|c| {
                            registry
                                .as_ref()
                                .map(|r| {
                                    r.describe_call(&c.name, &c.args, ToolDescriptionLength::Short)
                                })
                                .unwrap_or_else(|| c.name.clone())
                        })
                        .unwrap_or_else(|| id.clone()),
                    (CheckpointKind::Call, None) => "tool call".to_string(),
                };
                // The labels, paths and notes are the agent's: no terminal controls.
                println!("#{:<5} {}", row.id, esc(&what));
                println!("       {}", esc(&summary(row)));
            }
            Ok(exit::OK)
        }
        CheckpointsCommand::Diff { id, path, stat } => {
            let row = store
                .checkpoint(id)
                .map_err(Fail::failed)?
                .ok_or_else(|| Fail::usage(format!("there is no checkpoint {id}")))?;
            if stat {
                for f in &row.changes.files {
                    println!(
                        "{:>6} {:>6}  {}",
                        format!("+{}", f.added),
                        format!("-{}", f.removed),
                        esc(&f.path)
                    );
                }
                if row.changes.total > row.changes.files.len() {
                    println!("… and {} more", row.changes.total - row.changes.files.len());
                }
                return Ok(exit::OK);
            }
            let text = checkpoints
                .diff(&store, id, path, usize::MAX)
                .await
                .map_err(Fail::failed)?;
            // Each line kept, none of its controls.
            print!("{}", skald_api::escape_controls(&text));
            Ok(exit::OK)
        }
        CheckpointsCommand::Changes { session, json } => {
            store.get_session(session).map_err(not_found)?;
            let place = review::Place {
                data_dir,
                limits: checkpoints.settings.limits,
            };
            let (files, _) = revert::chat_changes(&store, &place, session).map_err(usage)?;
            if json {
                return print_json(&json!(files));
            }
            for f in &files {
                crate::cmd_worktrees::print_file(f);
            }
            Ok(exit::OK)
        }
        CheckpointsCommand::Revert {
            session,
            hunk,
            json,
        } => {
            store.get_session(session).map_err(not_found)?;
            // Its next change would land between the review and the revert.
            if skald_core::worktrees::held_live(&store, session) {
                return Err(Fail::usage(format!(
                    "session {session} is running; take changes back once it has answered"
                )));
            }
            let place = review::Place {
                data_dir,
                limits: checkpoints.settings.limits,
            };
            let choice = if hunk.is_empty() {
                review::Choice::All
            } else {
                review::Choice::Files(crate::cmd_worktrees::parse_hunks(&hunk))
            };
            let report = revert::revert(&store, &place, session, &choice, None).map_err(usage)?;
            if json {
                print_json(&json!(report))?;
            } else if !report.conflicts.is_empty() {
                println!(
                    "Not taken back: {} file(s) changed since in the same place. Nothing was \
                     written.",
                    report.conflicts.len()
                );
                for c in &report.conflicts {
                    println!("  {}", esc(&c.path));
                }
            } else if report.written.is_empty() {
                println!("Nothing to take back: the folder already is that way.");
            } else {
                println!("Took back: {}", esc(&report.written.join(", ")));
                if let Some(id) = report.checkpoint_id {
                    println!("Undo: skald checkpoints restore {id}");
                }
            }
            Ok(if report.conflicts.is_empty() {
                exit::OK
            } else {
                exit::FAILED
            })
        }
        CheckpointsCommand::Restore { id, rewind, json } => {
            if store.checkpoint(id).map_err(Fail::failed)?.is_none() {
                return Err(Fail::usage(format!("there is no checkpoint {id}")));
            }
            let (done, fork) = checkpoints
                .restore_and_rewind(&store, id, rewind)
                .await
                .map_err(Fail::failed)?;
            if let Err(e) = &fork {
                eprintln!(
                    "skald checkpoints: restored (undo: skald checkpoints restore {})",
                    done.id
                );
                return Err(Fail::failed(e));
            }
            let fork = fork.unwrap_or_default();
            if json {
                let mut v = json!(done);
                if let Some(f) = &fork {
                    v["fork_session_id"] = json!(f.id);
                }
                return print_json(&v);
            }
            println!(
                "Restored the folder to before checkpoint #{id}: {}",
                esc(&done.changes.summary())
            );
            if !done.note.is_empty() {
                println!("{}", esc(&done.note));
            }
            println!(
                "To undo this restore: skald checkpoints restore {}",
                done.id
            );
            if let Some(f) = fork {
                println!(
                    "The conversation is rewound in session {} (skald exec --session {} …); \
                     session {} keeps every message.",
                    f.id, f.id, done.session_id
                );
            }
            Ok(exit::OK)
        }
    }
}

fn summary(row: &CheckpointInfo) -> String {
    let mut s = if row.changes.is_empty() {
        String::new()
    } else {
        row.changes.summary()
    };
    if !row.note.is_empty() {
        if !s.is_empty() {
            s.push_str(" — ");
        }
        s.push_str(&row.note);
    }
    s
}

/// A review refused (a bad choice, a stale review) is the caller's mistake.
fn usage(e: review::ReviewError) -> Fail {
    match e {
        review::ReviewError::Invalid(m) => Fail::usage(m),
        e => Fail::failed(e),
    }
}

fn not_found(e: skald_store::StoreError) -> Fail {
    match e {
        skald_store::StoreError::NotFound { .. } => Fail::usage(e),
        _ => Fail::failed(e),
    }
}

fn print_json(v: &serde_json::Value) -> Result<u8, Fail> {
    let text = serde_json::to_string_pretty(v).map_err(Fail::failed)?;
    println!("{text}");
    Ok(exit::OK)
}
