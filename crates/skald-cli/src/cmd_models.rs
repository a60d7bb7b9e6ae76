//! `skald models`: the local models (GGUF files run in-process): list, add a file, pull a
//! recommended one, remove.

use clap::Subcommand;
use std::path::PathBuf;

use crate::exit;
use crate::fail::{Fail, finish};
use skald_core::DataDir;
use skald_llm::local::pull;
use std::path::Path;

fn size(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

pub fn list(data_dir: &DataDir, json: bool) -> u8 {
    let dir = data_dir.models_dir();
    let names = skald_core::models::local_models(&dir);
    let installed: Vec<serde_json::Value> = names
        .iter()
        .map(|n| {
            let path = dir.join(format!("{n}.gguf"));
            let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
            serde_json::json!({"name": n, "model": format!("local/{n}"), "path": path, "bytes": bytes})
        })
        .collect();
    let available: Vec<serde_json::Value> = pull::recommended()
        .into_iter()
        .filter(|r| !names.iter().any(|n| n == r.name))
        .map(|r| serde_json::json!({"name": r.name, "description": r.description, "bytes": r.size}))
        .collect();
    if json {
        let v = serde_json::json!({
            "folder": dir,
            "local_models": skald_llm::local::AVAILABLE,
            "installed": installed,
            "available": available,
        });
        println!("{v}");
        return exit::OK;
    }
    if !skald_llm::local::AVAILABLE {
        println!("(this build cannot run local models: it was built without the `local` feature)");
    }
    if installed.is_empty() {
        println!("No local models in {}.", dir.display());
    } else {
        println!("Local models in {}:", dir.display());
        for m in &installed {
            println!(
                "  {:<28} {:>10}  use as --model {}",
                m["name"].as_str().unwrap_or(""),
                size(m["bytes"].as_u64().unwrap_or(0)),
                m["model"].as_str().unwrap_or("")
            );
        }
    }
    if !available.is_empty() {
        println!("Recommended (skald models pull NAME):");
        for r in &available {
            println!(
                "  {:<28} {}",
                r["name"].as_str().unwrap_or(""),
                r["description"].as_str().unwrap_or("")
            );
        }
    }
    println!("Any GGUF file on Hugging Face: skald models pull hf:OWNER/REPO/FILE.gguf");
    exit::OK
}

pub fn add(data_dir: &DataDir, file: &Path, name: Option<&str>) -> Result<u8, Fail> {
    skald_llm::local::files::check_gguf(file).map_err(Fail::usage)?;
    let stem = file
        .file_name()
        .map(|n| n.to_string_lossy().trim_end_matches(".gguf").to_string())
        .unwrap_or_default();
    let name = name.map_or(stem, str::to_string);
    if !pull::valid_name(&name) {
        return Err(Fail::usage(format!(
            "`{name}` cannot be a model name (letters, digits, `-`, `_`, `.`)"
        )));
    }
    let dir = data_dir.models_dir();
    let dest = dir.join(format!("{name}.gguf"));
    if dest.exists() {
        return Err(Fail::usage(format!(
            "a model named `{name}` is there already; remove it first or pass --name"
        )));
    }
    // Copied under a hidden name first: a model is never seen half-written.
    let tmp = dir.join(format!(".{name}.adding"));
    let copied = std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::copy(file, &tmp))
        .and_then(|_| std::fs::rename(&tmp, &dest));
    if let Err(e) = copied {
        let _ = std::fs::remove_file(&tmp);
        return Err(Fail::failed(format!(
            "cannot copy into {}: {e}",
            dir.display()
        )));
    }
    println!(
        "Added `{name}`; use it with --model local/{name}. `skald models prepare {name}` \
         reads a new chat's prompt once, so that chats start answering sooner."
    );
    Ok(exit::OK)
}

pub fn rm(data_dir: &DataDir, name: &str) -> Result<u8, Fail> {
    if !pull::valid_name(name) {
        return Err(Fail::usage(format!("no model named `{name}`")));
    }
    let path = data_dir.models_dir().join(format!("{name}.gguf"));
    match std::fs::remove_file(&path) {
        Ok(()) => {
            println!("Removed `{name}`.");
            Ok(exit::OK)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Fail::usage(format!(
            "no model named `{name}` (see `skald models list`)"
        ))),
        Err(e) => Err(Fail::failed(e)),
    }
}

/// `skald models pull SPEC [--name NAME]`: a recommended model by its name, a hub file
/// (`hf:OWNER/REPO/FILE.gguf`) or an HTTPS URL, then prepared for chats.
pub async fn pull(env: &crate::Env, spec: &str, name: Option<&str>) -> Result<u8, Fail> {
    let wanted = pull::Wanted::parse(spec, name).map_err(Fail::usage)?;
    let label = wanted.name.clone();
    let progress = crate::progress::line(move |done, total, pct| {
        if total == 0 {
            // A server that does not say how large the file is.
            format!("pulling {label}: {}", size(done))
        } else {
            format!(
                "pulling {label}: {} of {} ({pct}%)",
                size(done),
                size(total)
            )
        }
    });
    let result = pull::fetch(
        &wanted,
        &env.data_dir.models_dir(),
        &pull::HubAccess::from_env(),
        &|done, total| progress.report(done, total),
    )
    .await;
    progress.end();
    let pulled = result.map_err(Fail::failed)?;
    if !pulled.checked {
        eprintln!(
            "skald models pull: the server publishes no checksum for this file, so only its \
             size and format were checked; its SHA-256 is {}",
            pulled.sha256
        );
    }
    let name = &wanted.name;
    // A model pulled is one to chat with: its first chat should not spend half a minute
    // reading the agent's prompt. Failing here leaves the model installed and usable.
    if skald_llm::local::AVAILABLE {
        match prepare(env, Some(name)).await {
            Ok(code) if code == exit::OK => {}
            Ok(_) => eprintln!(
                "skald models pull: not prepared; the first chat reads the agent's prompt itself"
            ),
            Err(e) => eprintln!(
                "skald models pull: could not prepare `{name}` for chats ({e}); the first \
                 chat reads the agent's prompt itself"
            ),
        }
    }
    println!(
        "`{name}` is ready ({}); use it with --model local/{name}",
        pulled.path.display()
    );
    Ok(exit::OK)
}

/// `skald models prepare [NAME]`: reads once, with local model NAME (the default model
/// without it), what a new chat in the current folder starts with: the main agent's
/// instructions and tools. The model keeps the state they leave (docs/models.md, "The
/// first answer"), so new chats answer within seconds instead of half a minute.
pub async fn prepare(env: &crate::Env, name: Option<&str>) -> Result<u8, Fail> {
    let wanted = name.map(|n| format!("local/{n}"));
    let models = skald_core::models::choose_models(
        &env.config,
        wanted.as_deref(),
        &env.data_dir.models_dir(),
        |k| std::env::var(k).ok(),
    )
    .map_err(Fail::usage)?;
    let Some(model) = models.into_iter().next() else {
        return Err(Fail::usage("no model to prepare; name a local one"));
    };
    if model.provider.kind != skald_llm::ProviderKind::Local {
        return Err(Fail::usage(format!(
            "{} is not a local model; only local models read the prompt on this machine \
             (name one: skald models prepare NAME)",
            model.label()
        )));
    }
    let folder = std::env::current_dir().map_err(Fail::failed)?;
    let engine = engine_for_prepare(env, &model)?;
    let label = model.model.clone();
    let progress = crate::progress::line(move |_, _, pct| {
        format!("preparing {label} for new chats: reading the agent's prompt… {pct}%")
    });
    let report = |done: u64, total: u64| progress.report(done, total);
    let cancel = skald_api::CancellationToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            stop.cancel();
        }
    });
    let result = engine
        .prepare_chat(&model, MAIN_AGENT, &folder, &report, &cancel)
        .await;
    progress.end();
    match result.map_err(Fail::failed)? {
        skald_core::prewarm::Prepared::Ready => {
            eprintln!(
                "{}: new chats start from the prepared prompt",
                model.label()
            );
            Ok(exit::OK)
        }
        skald_core::prewarm::Prepared::Cancelled => Ok(exit::CANCELLED),
    }
}

/// The agent a new chat talks to.
const MAIN_AGENT: &str = "main";

/// An engine whose chats would be offered what a new chat is offered here: the same
/// settings, agents, plugins and MCP servers.
fn engine_for_prepare(
    env: &crate::Env,
    model: &skald_llm::ModelChoice,
) -> Result<std::sync::Arc<skald_core::engine::Engine>, Fail> {
    use std::sync::Arc;
    let store = Arc::new(skald_store::Store::open(env.data_dir.db_path()).map_err(Fail::failed)?);
    let registry = Arc::new(skald_core::builtin_registry().map_err(Fail::failed)?);
    let library =
        Arc::new(skald_core::agents::Library::load(env.data_dir.root()).map_err(Fail::failed)?);
    let engine = skald_core::engine::Engine::new(
        store,
        registry,
        vec![model.clone()],
        library,
        skald_core::engine::TurnSettings::from_config(
            &env.config,
            &env.data_dir,
            skald_core::turn::ApprovalMode::Never,
        ),
        Arc::new(|_, _| {}),
    );
    if let Err(e) = engine.open_secrets(env.data_dir.root()) {
        eprintln!("skald models prepare: secrets are not available: {e}");
    }
    // Plugins decide some of the tools offered (image generation).
    engine.start_plugins();
    Ok(engine)
}

#[derive(Debug, Subcommand)]
pub enum ModelsCommand {
    /// The local models here, and the recommended ones to pull
    List {
        #[arg(long)]
        json: bool,
    },
    /// Copy a GGUF file into the models folder
    Add {
        file: PathBuf,
        /// The name to use it by (`--model local/NAME`) [default: the file's name]
        #[arg(long)]
        name: Option<String>,
    },
    /// Download a model (resumable, checksum verified) and prepare it: a recommended one by
    /// its name, a Hugging Face file as hf:OWNER/REPO/FILE.gguf, or an https:// URL
    Pull {
        spec: String,
        /// The name to use it by (`--model local/NAME`) [default: the file's name]
        #[arg(long)]
        name: Option<String>,
    },
    /// Read a new chat's prompt once (the agent's instructions and tools), so that new chats
    /// in this folder start answering within seconds; `pull` does it itself
    Prepare {
        /// The local model [default: the default model]
        name: Option<String>,
    },
    /// Remove a local model
    Rm { name: String },
}

/// Runs one `models` subcommand; its exit code.
pub async fn dispatch(env: &crate::Env, command: ModelsCommand) -> u8 {
    match command {
        ModelsCommand::List { json } => list(&env.data_dir, json),
        ModelsCommand::Add { file, name } => finish(
            "skald models add",
            add(&env.data_dir, &file, name.as_deref()),
        ),
        ModelsCommand::Pull { spec, name } => {
            finish("skald models pull", pull(env, &spec, name.as_deref()).await)
        }
        ModelsCommand::Prepare { name } => {
            finish("skald models prepare", prepare(env, name.as_deref()).await)
        }
        ModelsCommand::Rm { name } => finish("skald models rm", rm(&env.data_dir, &name)),
    }
}
