//! `skald worktrees list|diff|apply|commit|merge|discard`: the worktrees agents work in,
//! what they changed, and bringing it into your folder (docs/worktrees.md).

use crate::exit;
use crate::fail::{Fail, finish};
use clap::Subcommand;
use skald_api::worktree::{ApplyReport, FileReview, MergeOutcome, MergeReport, WorktreeInfo};
use skald_core::DataDir;
use skald_core::worktrees::review;
use skald_store::Store;
use std::collections::BTreeMap;

#[derive(Debug, Subcommand)]
pub enum WorktreesCommand {
    /// Every worktree not discarded, newest first: its name, chat, kind and folders
    List {
        #[arg(long)]
        json: bool,
    },
    /// What a worktree's agent changed since it started, file by file and hunk by hunk
    /// (each hunk numbered for `apply --hunk`)
    Diff {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Brings a worktree's changes into the folder it copies, merged with what you changed
    /// there meanwhile; when a file clashes nothing is written and the clash is shown.
    /// The apply is a checkpoint of the chat, undone with `skald checkpoints restore ID`
    Apply {
        name: String,
        /// Only these hunks: `PATH:1,3` (numbers from `diff`), or `PATH` for all of a
        /// file's; repeatable. Without it, every change
        #[arg(long, value_name = "PATH[:N,…]")]
        hunk: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// Commits what the agent changed in a git worktree on its branch skald/NAME
    Commit {
        name: String,
        /// The commit message [default: one saying whose work it is]
        #[arg(short, long)]
        message: Option<String>,
    },
    /// Merges a git worktree's branch into the branch checked out in your repository (a
    /// fast-forward or a merge commit; `git reset --keep ORIG_HEAD` undoes it). Refused
    /// while the agent has work not committed; with a clash nothing is written
    Merge {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Offers to discard the worktrees unused for a while (`[worktrees] clean_after_days`,
    /// or --older-than): lists them with the space they take and asks; with --yes it
    /// does not ask, and without a terminal to ask on it only lists them
    Clean {
        /// Days unused [default: config.toml's clean_after_days, 14]
        #[arg(long, value_name = "DAYS")]
        older_than: Option<u32>,
        /// Discard them without asking
        #[arg(long)]
        yes: bool,
    },
    /// Removes a worktree: its folder, and for a git worktree its branch (what it changed
    /// is gone; the folder it copied is not touched)
    Discard {
        /// Its name (see `skald worktrees list`)
        name: String,
    },
}

pub fn dispatch(env: &crate::Env, command: WorktreesCommand) -> u8 {
    finish("skald worktrees", run(&env.data_dir, &env.config, command))
}

fn run(
    data_dir: &DataDir,
    config: &skald_core::Config,
    command: WorktreesCommand,
) -> Result<u8, Fail> {
    let store = Store::open(data_dir.db_path()).map_err(Fail::failed)?;
    let place = review::Place {
        data_dir,
        limits: config.checkpoints.settings(data_dir.root()).limits,
    };
    match command {
        WorktreesCommand::Diff { name, json } => {
            let w = active(&store, &name)?;
            let (files, _) = review::review(&place, &w).map_err(Fail::failed)?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&files).map_err(Fail::failed)?
                );
                return Ok(exit::OK);
            }
            if files.is_empty() {
                println!("Worktree {name} changed nothing.");
            }
            for f in &files {
                print_file(f);
            }
            Ok(exit::OK)
        }
        WorktreesCommand::Apply { name, hunk, json } => {
            let w = active(&store, &name)?;
            let choice = if hunk.is_empty() {
                review::Choice::All
            } else {
                review::Choice::Files(parse_hunks(&hunk))
            };
            let report = review::apply(&store, &place, &w, &choice, None).map_err(|e| match e {
                review::ReviewError::Invalid(m) => Fail::usage(m),
                e => Fail::failed(e),
            })?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&report).map_err(Fail::failed)?
                );
            } else {
                print_report(&name, &w.source, &report);
            }
            Ok(if report.conflicts.is_empty() {
                exit::OK
            } else {
                exit::FAILED
            })
        }
        WorktreesCommand::Commit { name, message } => {
            let w = active(&store, &name)?;
            refuse_in_use(&store, &w, "commit once it has answered")?;
            let commit =
                skald_core::worktrees::commit(&place, &w, message.as_deref().unwrap_or(""), None)
                    .map_err(|e| Fail::usage(e.to_string()))?;
            println!(
                "Committed {} on {}.",
                &commit[..commit.len().min(12)],
                w.branch.as_deref().unwrap_or("its branch")
            );
            Ok(exit::OK)
        }
        WorktreesCommand::Merge { name, json } => {
            let w = active(&store, &name)?;
            let report =
                skald_core::worktrees::merge(&place, &w).map_err(|e| Fail::usage(e.to_string()))?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&report).map_err(Fail::failed)?
                );
            } else {
                print_merge(&w, &report);
            }
            Ok(if report.conflicts.is_empty() {
                exit::OK
            } else {
                exit::FAILED
            })
        }
        WorktreesCommand::Clean { older_than, yes } => {
            let days = older_than.unwrap_or(config.worktrees.clean_after_days);
            if days == 0 {
                return Err(Fail::usage(
                    "clean_after_days is 0 (never); give --older-than DAYS",
                ));
            }
            let all = skald_core::worktrees::described(&store).map_err(Fail::failed)?;
            let old = skald_core::worktrees::old(&store, all, days, skald_store::now_ms());
            if old.is_empty() {
                println!("No worktree has gone unused for {days} days.");
                return Ok(exit::OK);
            }
            let total: u64 = old.iter().filter_map(|w| w.disk_bytes).sum();
            println!("Unused for {days} days or more ({} in all):", size(total));
            for w in &old {
                println!(
                    "  {}  {}  {}",
                    w.name,
                    size(w.disk_bytes.unwrap_or(0)),
                    idle(w)
                );
            }
            if !yes {
                use std::io::IsTerminal;
                if !std::io::stdin().is_terminal() {
                    println!("Nothing removed: `skald worktrees clean --yes` discards them.");
                    return Ok(exit::OK);
                }
                print!(
                    "Discard them (what their agents changed and did not apply is lost)? [y/N] "
                );
                use std::io::Write;
                let _ = std::io::stdout().flush();
                let mut answer = String::new();
                std::io::stdin()
                    .read_line(&mut answer)
                    .map_err(Fail::failed)?;
                if !matches!(answer.trim(), "y" | "Y" | "yes") {
                    println!("Nothing removed.");
                    return Ok(exit::OK);
                }
            }
            let mut freed = 0;
            for w in &old {
                // Looked at again: a chat may have started working in it since.
                if skald_core::worktrees::in_use(&store, w).map_err(Fail::failed)? {
                    println!("Kept {}: a chat is working in it now.", w.name);
                    continue;
                }
                skald_core::worktrees::discard(&store, w).map_err(Fail::failed)?;
                freed += w.disk_bytes.unwrap_or(0);
                println!("Discarded {}.", w.name);
            }
            println!("Freed {}.", size(freed));
            Ok(exit::OK)
        }
        WorktreesCommand::List { json } => {
            let all = skald_core::worktrees::described(&store).map_err(Fail::failed)?;
            let stray =
                skald_core::worktrees::unrecorded(&store, data_dir).map_err(Fail::failed)?;
            if json {
                let out = serde_json::to_string_pretty(&all).map_err(Fail::failed)?;
                println!("{out}");
                return Ok(exit::OK);
            }
            if all.is_empty() && stray.is_empty() {
                println!("No worktrees.");
            }
            for w in &all {
                let chat = w
                    .session_id
                    .map_or_else(|| "no chat".to_string(), |id| format!("chat {id}"));
                let how = match (&w.branch, w.kind) {
                    (Some(b), _) => format!("git, branch {b}"),
                    (None, k) => k.as_str().to_string(),
                };
                let gone = if std::path::Path::new(&w.root).exists() {
                    ""
                } else {
                    " [its folder is gone]"
                };
                println!(
                    "{}  {chat}  {how}  {}, {}\n    {} -> {}{gone}",
                    w.name,
                    size(w.disk_bytes.unwrap_or(0)),
                    idle(w),
                    w.source,
                    w.working_dir
                );
            }
            for folder in &stray {
                let name = folder.file_name().unwrap_or_default().to_string_lossy();
                println!(
                    "{name}  not recorded: made by a run that stopped before its chat was \
                     (`skald worktrees discard {name}` removes it)\n    {}",
                    folder.display()
                );
            }
            Ok(exit::OK)
        }
        WorktreesCommand::Discard { name } => {
            if store.find_worktree(&name).map_err(Fail::failed)?.is_none()
                && let Some(folder) =
                    skald_core::worktrees::discard_unrecorded(&store, data_dir, &name)
                        .map_err(|e| Fail::usage(e.to_string()))?
            {
                println!(
                    "Removed {} (not recorded; a git branch skald/{name} may remain in its \
                     repository).",
                    folder.display()
                );
                return Ok(exit::OK);
            }
            let w = active(&store, &name)?;
            refuse_in_use(&store, &w, "stop it before discarding the worktree")?;
            skald_core::worktrees::discard(&store, &w).map_err(Fail::failed)?;
            println!("Discarded {name} ({}).", w.root);
            Ok(exit::OK)
        }
    }
}

/// Refuses while a chat works in worktree `w` in a live process (any process).
fn refuse_in_use(store: &Store, w: &WorktreeInfo, then: &str) -> Result<(), Fail> {
    if skald_core::worktrees::in_use(store, w).map_err(Fail::failed)? {
        return Err(Fail::usage(format!(
            "a chat is working in worktree {}; {then}",
            w.name
        )));
    }
    Ok(())
}

/// What the agent wrote, shown on a terminal without its controls.
pub(crate) fn esc(s: &str) -> String {
    skald_api::escape_controls_inline(s)
}

/// "340 KB", "1.2 GB".
fn size(bytes: u64) -> String {
    let b = bytes as f64;
    match bytes {
        0..1024 => format!("{bytes} B"),
        1024..1_048_576 => format!("{:.0} KB", b / 1024.0),
        1_048_576..1_073_741_824 => format!("{:.1} MB", b / 1_048_576.0),
        _ => format!("{:.1} GB", b / 1_073_741_824.0),
    }
}

/// "used today", "unused for 21 days".
fn idle(w: &WorktreeInfo) -> String {
    let last = w.last_used_at.unwrap_or(w.created_at);
    let days = skald_store::now_ms().saturating_sub(last) / (24 * 3600 * 1000);
    match days {
        0 => "used today".to_string(),
        1 => "unused for 1 day".to_string(),
        n => format!("unused for {n} days"),
    }
}

/// The worktree named `name`, not discarded.
fn active(store: &Store, name: &str) -> Result<WorktreeInfo, Fail> {
    store
        .find_worktree(name)
        .map_err(Fail::failed)?
        .filter(|w| w.status == skald_api::worktree::WorktreeStatus::Active)
        .ok_or_else(|| {
            Fail::usage(format!(
                "there is no worktree named {name} (see `skald worktrees list`)"
            ))
        })
}

/// `--hunk PATH:1,3` and `--hunk PATH` (every hunk of the file) as a choice per file.
pub(crate) fn parse_hunks(args: &[String]) -> BTreeMap<String, review::Hunks> {
    let mut out: BTreeMap<String, review::Hunks> = BTreeMap::new();
    for a in args {
        let numbers = a.rsplit_once(':').and_then(|(p, n)| {
            let n: Option<Vec<usize>> = n.split(',').map(|x| x.trim().parse().ok()).collect();
            n.map(|n| (p, n))
        });
        match numbers {
            Some((path, n)) => match out
                .entry(path.to_string())
                .or_insert(review::Hunks::Only(Vec::new()))
            {
                review::Hunks::Only(chosen) => chosen.extend(n),
                review::Hunks::All => {}
            },
            None => {
                out.insert(a.clone(), review::Hunks::All);
            }
        }
    }
    out
}

pub(crate) fn print_file(f: &FileReview) {
    let status = match f.status {
        skald_api::checkpoint::ChangeStatus::Added => "added",
        skald_api::checkpoint::ChangeStatus::Modified => "modified",
        skald_api::checkpoint::ChangeStatus::Deleted => "deleted",
    };
    // Paths and lines are the agent's: they keep no terminal control.
    println!(
        "{} ({status}{})",
        esc(&f.path),
        if f.binary { ", binary" } else { "" }
    );
    for h in &f.hunks {
        println!("  [{}] @@ -{} +{} @@", h.index, h.old_start, h.new_start);
        for l in &h.removed {
            println!("  -{}", esc(l.trim_end_matches('\n')));
        }
        for l in &h.added {
            println!("  +{}", esc(l.trim_end_matches('\n')));
        }
    }
}

fn print_merge(w: &WorktreeInfo, r: &MergeReport) {
    let branch = w.branch.as_deref().unwrap_or("its branch");
    let short = |c: &Option<String>| {
        c.as_deref()
            .map(|c| c[..c.len().min(12)].to_string())
            .unwrap_or_default()
    };
    match r.outcome {
        MergeOutcome::UpToDate => println!("{} already has everything of {branch}.", r.into),
        MergeOutcome::FastForward => println!(
            "{} fast-forwarded to {branch} ({}). Undo: git reset --keep ORIG_HEAD",
            r.into,
            short(&r.commit)
        ),
        MergeOutcome::MergeCommit => println!(
            "Merged {branch} into {} ({}). Undo: git reset --keep ORIG_HEAD",
            r.into,
            short(&r.commit)
        ),
        MergeOutcome::Conflicts => {
            println!(
                "Not merged: {} file(s) changed both on {branch} and on {} in the same place. \
                 Nothing was written.",
                r.conflicts.len(),
                r.into
            );
            for c in &r.conflicts {
                println!("  {}", esc(c));
            }
        }
    }
}

fn print_report(name: &str, source: &str, r: &ApplyReport) {
    if !r.conflicts.is_empty() {
        println!(
            "Not applied: {} file(s) changed both in worktree {name} and in {source}, in the \
             same place. Nothing was written.",
            r.conflicts.len()
        );
        for c in &r.conflicts {
            println!("  {}", esc(&c.path));
            if let Some(m) = &c.markers {
                for l in m.lines() {
                    println!("    {}", esc(l));
                }
            }
        }
        return;
    }
    if r.written.is_empty() {
        println!("Nothing to apply: {source} already has worktree {name}'s changes.");
        return;
    }
    println!("Applied to {source}: {}", esc(&r.written.join(", ")));
    if let Some(id) = r.checkpoint_id {
        println!("Undo: skald checkpoints restore {id}");
    }
}
