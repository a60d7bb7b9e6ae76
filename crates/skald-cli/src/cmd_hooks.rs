//! `skald hooks list|approve`: the hooks that run in a folder — the person's
//! (config.toml `[hooks]`) and the project's `.skald/hooks.json` — and approving a
//! project's file as it is now (docs/hooks.md).

use crate::exit;
use crate::fail::{Fail, finish};
use clap::Subcommand;
use serde_json::json;
use skald_core::hooks::{HookEvent, HooksConfig, project_hooks_file};
use skald_store::Store;
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum HooksCommand {
    /// The hooks that run for chats in a folder, and whether the project's may run
    List {
        /// The folder (default: the current one)
        #[arg(long)]
        cwd: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Lets the project's `.skald/hooks.json` run, as its content is now (it is code from
    /// the repository: read it first). A changed file needs approving again
    Approve {
        #[arg(long)]
        cwd: Option<PathBuf>,
    },
}

pub async fn dispatch(env: &crate::Env, command: HooksCommand) -> u8 {
    finish("skald hooks", run(env, command))
}

fn folder(cwd: Option<PathBuf>) -> Result<PathBuf, Fail> {
    let dir = match cwd {
        Some(d) => d,
        None => std::env::current_dir().map_err(Fail::failed)?,
    };
    std::fs::canonicalize(&dir)
        .map_err(|e| Fail::usage(format!("cannot use the folder {}: {e}", dir.display())))
}

fn run(env: &crate::Env, command: HooksCommand) -> Result<u8, Fail> {
    let store = Store::open(env.data_dir.db_path()).map_err(Fail::failed)?;
    match command {
        HooksCommand::List { cwd, json } => {
            let dir = folder(cwd)?;
            let active = skald_core::hooks::Active::for_folder(&env.config.hooks, &store, &dir);
            let project = active.project.clone();
            let project_config = project_config(&dir);
            if json {
                let out = json!({
                    "user": env.config.hooks,
                    "project": project,
                    "project_hooks": project_config,
                });
                println!(
                    "{}",
                    serde_json::to_string_pretty(&out).map_err(Fail::failed)?
                );
                return Ok(exit::OK);
            }
            println!("Your hooks (config.toml [hooks]):");
            print_config(&env.config.hooks);
            match project {
                None => println!("\nThe project has no {}.", skald_core::hooks::PROJECT_FILE),
                Some(p) => {
                    println!(
                        "\nThe project's hooks ({}): {}",
                        p.path,
                        if p.approved {
                            "approved, they run"
                        } else {
                            "NOT approved, they do not run (read the file, then `skald hooks approve`)"
                        }
                    );
                    if let Some(c) = project_config {
                        print_config(&c);
                    }
                }
            }
            Ok(exit::OK)
        }
        HooksCommand::Approve { cwd } => {
            let dir = folder(cwd)?;
            let active = skald_core::hooks::Active::for_folder(&env.config.hooks, &store, &dir);
            let Some(p) = active.project else {
                return Err(Fail::usage(format!(
                    "{} has no {} (looked in its project root {})",
                    dir.display(),
                    skald_core::hooks::PROJECT_FILE,
                    active.project_dir.display()
                )));
            };
            store
                .approve_hooks(&p.path, &p.sha256)
                .map_err(Fail::failed)?;
            println!(
                "Approved {} ({} hooks, sha256 {}). They run from the next turn; a change to \
                 the file needs approving again.",
                p.path,
                p.hooks,
                &p.sha256[..12]
            );
            Ok(exit::OK)
        }
    }
}

/// The project's hooks, to show what approving lets run.
fn project_config(dir: &std::path::Path) -> Option<HooksConfig> {
    let root = skald_core::instructions::project_root(dir);
    let path = project_hooks_file(&root)?;
    #[derive(serde::Deserialize)]
    struct File {
        #[serde(default)]
        hooks: HooksConfig,
    }
    let text = std::fs::read(path).ok()?;
    serde_json::from_slice::<File>(&text).ok().map(|f| f.hooks)
}

fn print_config(config: &HooksConfig) {
    if config.is_empty() {
        println!("  none");
        return;
    }
    for (event, groups) in &config.0 {
        let fired = HookEvent::parse(event).is_some();
        for g in groups {
            for h in &g.hooks {
                let matcher = if g.matcher.is_empty() {
                    "*"
                } else {
                    &g.matcher
                };
                let note = match (fired, h.kind.as_str()) {
                    (false, _) => " (Skald does not fire this event)",
                    (true, "command") => "",
                    (true, _) => " (not a command hook: not run)",
                };
                println!("  {event} [{matcher}] {}{note}", h.command);
            }
        }
    }
}
