//! `skald secrets set|list|rm`: the user's secrets, by name. Values are read from stdin
//! (or `--value`) and never printed.

use clap::Subcommand;

use crate::exit;
use crate::fail::{Fail, finish};
use skald_core::DataDir;
use skald_secrets::{Backend, Secrets};

fn open(data_dir: &DataDir) -> Result<Secrets, Fail> {
    Secrets::open(data_dir.root()).map_err(Fail::failed)
}

pub fn set(data_dir: &DataDir, name: &str, value: Option<&str>) -> Result<u8, Fail> {
    skald_secrets::check_name(name).map_err(Fail::usage)?;
    let secrets = open(data_dir)?;
    let value = match value {
        Some(v) => v.to_string(),
        None => {
            use std::io::IsTerminal;
            if std::io::stdin().is_terminal() {
                eprint!("value for {name} (input is not hidden; Ctrl-D when done): ");
            }
            let mut line = String::new();
            std::io::stdin()
                .read_line(&mut line)
                .map_err(|e| Fail::failed(format!("cannot read the value: {e}")))?;
            line.trim_end_matches(['\n', '\r']).to_string()
        }
    };
    if value.is_empty() {
        return Err(Fail::usage(format!(
            "the value is empty; use `skald secrets rm {name}` to remove it"
        )));
    }
    match secrets.set(name, &value).map_err(Fail::failed)? {
        Some(Backend::Keyring) => {
            println!("stored `{name}` in the OS keyring; refer to it as ${{secret:{name}}}");
        }
        _ => {
            println!(
                "stored `{name}` in the encrypted vault (no OS keyring here); refer to it as ${{secret:{name}}}"
            );
        }
    }
    Ok(exit::OK)
}

pub fn list(data_dir: &DataDir, pattern: Option<&str>, json: bool) -> Result<u8, Fail> {
    let secrets = open(data_dir)?;
    let names = secrets.list(pattern).map_err(Fail::failed)?;
    if json {
        println!("{}", serde_json::json!(names));
        return Ok(exit::OK);
    }
    if names.is_empty() {
        println!("No secrets. Add one with `skald secrets set NAME`.");
    }
    for n in names {
        println!("{n}");
    }
    Ok(exit::OK)
}

pub fn rm(data_dir: &DataDir, name: &str) -> Result<u8, Fail> {
    let secrets = open(data_dir)?;
    if !secrets.delete(name).map_err(Fail::failed)? {
        return Err(Fail::usage(format!("there is no secret `{name}`")));
    }
    println!("removed `{name}`");
    Ok(exit::OK)
}

#[derive(Debug, Subcommand)]
pub enum SecretsCommand {
    /// Store a secret (the value is read from stdin unless --value is given)
    #[command(
        after_help = "Stored in the OS keyring, or an encrypted file in the data directory where \
                      there is none. Refer to it as ${secret:NAME} in an MCP server's env or \
                      token.\n\nExample: printf %s \"$TOKEN\" | skald secrets set GITHUB_TOKEN"
    )]
    Set {
        name: String,
        /// The value (visible in your shell history; stdin is safer)
        #[arg(long)]
        value: Option<String>,
    },
    /// Secret names (never values)
    List {
        /// A substring, or a `prefix*`
        pattern: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Remove a secret
    Rm { name: String },
}

/// Runs one `secrets` subcommand; its exit code.
pub async fn dispatch(env: &crate::Env, command: SecretsCommand) -> u8 {
    let result = match command {
        SecretsCommand::Set { name, value } => set(&env.data_dir, &name, value.as_deref()),
        SecretsCommand::List { pattern, json } => list(&env.data_dir, pattern.as_deref(), json),
        SecretsCommand::Rm { name } => rm(&env.data_dir, &name),
    };
    finish("skald secrets", result)
}
