//! `skald worktrees list|discard`: the worktrees agents work in (docs/worktrees.md).

use crate::exit;
use crate::fail::{Fail, finish};
use clap::Subcommand;
use skald_core::DataDir;
use skald_store::Store;

#[derive(Debug, Subcommand)]
pub enum WorktreesCommand {
    /// Every worktree not discarded, newest first: its name, chat, kind and folders
    List {
        #[arg(long)]
        json: bool,
    },
    /// Removes a worktree: its folder, and for a git worktree its branch (what it changed
    /// is gone; the folder it copied is not touched)
    Discard {
        /// Its name (see `skald worktrees list`)
        name: String,
    },
}

pub fn dispatch(env: &crate::Env, command: WorktreesCommand) -> u8 {
    finish("skald worktrees", run(&env.data_dir, command))
}

fn run(data_dir: &DataDir, command: WorktreesCommand) -> Result<u8, Fail> {
    let store = Store::open(data_dir.db_path()).map_err(Fail::failed)?;
    match command {
        WorktreesCommand::List { json } => {
            let all = store.list_worktrees().map_err(Fail::failed)?;
            if json {
                let out = serde_json::to_string_pretty(&all).map_err(Fail::failed)?;
                println!("{out}");
                return Ok(exit::OK);
            }
            if all.is_empty() {
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
                    "{}  {chat}  {how}\n    {} -> {}{gone}",
                    w.name, w.source, w.working_dir
                );
            }
            Ok(exit::OK)
        }
        WorktreesCommand::Discard { name } => {
            let w = store
                .find_worktree(&name)
                .map_err(Fail::failed)?
                .filter(|w| w.status == skald_api::worktree::WorktreeStatus::Active)
                .ok_or_else(|| {
                    Fail::usage(format!(
                        "there is no worktree named {name} (see `skald worktrees list`)"
                    ))
                })?;
            skald_core::worktrees::discard(&store, &w).map_err(Fail::failed)?;
            println!("Discarded {name} ({}).", w.root);
            Ok(exit::OK)
        }
    }
}
