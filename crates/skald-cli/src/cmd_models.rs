//! `skald models`: the local models (GGUF files run in-process): list, add a file, pull a
//! recommended one, remove.

use clap::Subcommand;
use std::path::PathBuf;

use crate::exit;
use crate::fail::{Fail, finish};
use skald_core::DataDir;
use skald_llm::local::pull;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

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
    exit::OK
}

/// A model name as a file name: no folders, nothing hidden.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

pub fn add(data_dir: &DataDir, file: &Path, name: Option<&str>) -> Result<u8, Fail> {
    skald_llm::local::files::check_gguf(file).map_err(Fail::usage)?;
    let stem = file
        .file_name()
        .map(|n| n.to_string_lossy().trim_end_matches(".gguf").to_string())
        .unwrap_or_default();
    let name = name.map_or(stem, str::to_string);
    if !valid_name(&name) {
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
    println!("Added `{name}`; use it with --model local/{name}");
    Ok(exit::OK)
}

pub fn rm(data_dir: &DataDir, name: &str) -> Result<u8, Fail> {
    if !valid_name(name) {
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

pub async fn pull(data_dir: &DataDir, name: &str) -> Result<u8, Fail> {
    let Some(model) = pull::find(name) else {
        let names: Vec<&str> = pull::recommended().iter().map(|r| r.name).collect();
        return Err(Fail::usage(format!(
            "`{name}` is not a model Skald knows; it knows {}. For another GGUF file, \
             download it and run `skald models add FILE`",
            names.join(", ")
        )));
    };
    let tty = std::io::stderr().is_terminal();
    let last = Mutex::new((Instant::now(), 0u64));
    let progress = |done: u64, total: u64| {
        let mut last = last.lock().unwrap_or_else(|p| p.into_inner());
        let pct = done.saturating_mul(100) / total.max(1);
        // A terminal gets a live line; a log gets one line per tenth.
        let due = if tty {
            last.0.elapsed() >= Duration::from_millis(100) || done == total
        } else {
            pct / 10 != last.1 / 10 || done == total
        };
        if !due {
            return;
        }
        *last = (Instant::now(), pct);
        let line = format!(
            "pulling {}: {} of {} ({pct}%)",
            model.name,
            size(done),
            size(total)
        );
        let mut err = std::io::stderr().lock();
        let _ = if tty {
            write!(err, "\r{line}\x1b[K")
        } else {
            writeln!(err, "{line}")
        };
        let _ = err.flush();
    };
    let result = pull::pull(&model, &data_dir.models_dir(), &progress).await;
    if tty {
        eprintln!();
    }
    let path = result.map_err(Fail::failed)?;
    println!(
        "`{}` is ready ({}); use it with --model local/{}",
        model.name,
        path.display(),
        model.name
    );
    Ok(exit::OK)
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
    /// Download a recommended model (resumable, checksum verified)
    Pull { name: String },
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
        ModelsCommand::Pull { name } => {
            finish("skald models pull", pull(&env.data_dir, &name).await)
        }
        ModelsCommand::Rm { name } => finish("skald models rm", rm(&env.data_dir, &name)),
    }
}
