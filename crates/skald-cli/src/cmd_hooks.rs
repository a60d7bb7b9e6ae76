//! `skald hooks list|approve`: the hooks that run in a folder — the person's
//! (config.toml `[hooks]`) and the project's `.skald/hooks.json` — and approving a
//! project's file with the content the person read, named by its hash (docs/hooks.md).

use crate::exit;
use crate::fail::{Fail, finish};
use clap::Subcommand;
use serde_json::json;
use skald_core::hooks::{HookEvent, HooksConfig, files_sha256, project_files, project_hooks_file};
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
    /// Lets the project's `.skald/hooks.json` run with the content you read: `--sha` is the
    /// sha256 `skald hooks list` showed with it (it is code from the repository). A file
    /// changed since is not approved; a change later needs approving again
    Approve {
        #[arg(long)]
        cwd: Option<PathBuf>,
        /// The sha256 of the content you read, as `skald hooks list` shows it (all 64 hex
        /// digits)
        #[arg(long)]
        sha: Option<String>,
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
                            "NOT approved, they do not run (read the file, then `skald hooks approve --sha`)"
                        }
                    );
                    if let Some(c) = project_config {
                        print_config(&c);
                    }
                    // What approving lets run is every file under `.skald/` as it is (a
                    // hook's script with the hooks file), not the summary above: each shown
                    // whole, with the hash of exactly what is shown (read once), which
                    // `approve --sha` must name.
                    let root = skald_core::instructions::project_root(&dir);
                    if let Some(files) = project_files(&root) {
                        let sha = files_sha256(&files);
                        println!(
                            "\n  Approving covers every file under {}/ (a hook's script runs \
                             with it).\n  content (sha256 {sha}):",
                            skald_core::hooks::PROJECT_FOLDER
                        );
                        for f in &files {
                            println!(
                                "\n  {}/{}:",
                                skald_core::hooks::PROJECT_FOLDER,
                                skald_api::escape_controls_inline(&f.rel)
                            );
                            let text = String::from_utf8_lossy(&f.bytes);
                            for line in skald_api::escape_controls(&text).split('\n') {
                                println!("  │ {line}");
                            }
                        }
                        if !p.approved {
                            println!("\n  To let them run: skald hooks approve --sha {sha}");
                        }
                    }
                }
            }
            Ok(exit::OK)
        }
        HooksCommand::Approve { cwd, sha } => {
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
            // The hash of what the person read, never of whatever the file holds by the time
            // this runs: a file changed in between is not approved.
            let Some(sha) = sha.map(|s| s.trim().to_ascii_lowercase()) else {
                return Err(Fail::usage(format!(
                    "name the content you approve: `skald hooks approve --sha <sha256>`, with the \
                     hash `skald hooks list` shows beside the file's content (now {})",
                    p.sha256
                )));
            };
            if sha != p.sha256 {
                return Err(Fail::usage(format!(
                    "{}'s content does not have sha256 {sha}: it has {} now (changed since \
                     it was read?). Read it again with `skald hooks list`; nothing was approved",
                    p.path, p.sha256
                )));
            }
            store.approve_hooks(&p.path, &sha).map_err(Fail::failed)?;
            println!(
                "Approved {} ({} hooks, sha256 {}; covering {}). They run from the next turn; \
                 a change to any file under .skald/ needs approving again.",
                p.path,
                p.hooks,
                &p.sha256[..12],
                p.files.join(", ")
            );
            Ok(exit::OK)
        }
    }
}

/// The project's hooks, to show what approving lets run.
fn project_config(dir: &std::path::Path) -> Option<HooksConfig> {
    #[derive(serde::Deserialize)]
    struct File {
        #[serde(default)]
        hooks: HooksConfig,
    }
    serde_json::from_slice::<File>(&project_bytes(dir)?)
        .ok()
        .map(|f| f.hooks)
}

/// The project's hooks file's content.
fn project_bytes(dir: &std::path::Path) -> Option<Vec<u8>> {
    let root = skald_core::instructions::project_root(dir);
    std::fs::read(project_hooks_file(&root)?).ok()
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
