//! `skald secrets set|list|rm`: the user's secrets, by name. Values are read from stdin
//! (or `--value`) and never printed.

use clap::Subcommand;

use crate::exit;
use skald_core::DataDir;
use skald_secrets::{Backend, Secrets};

fn open(data_dir: &DataDir) -> Result<Secrets, u8> {
    Secrets::open(data_dir.root()).map_err(|e| {
        eprintln!("skald secrets: {e}");
        exit::FAILED
    })
}

pub fn set(data_dir: &DataDir, name: &str, value: Option<&str>) -> u8 {
    if let Err(e) = skald_secrets::check_name(name) {
        eprintln!("skald secrets: {e}");
        return exit::USAGE;
    }
    let secrets = match open(data_dir) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let value = match value {
        Some(v) => v.to_string(),
        None => {
            use std::io::IsTerminal;
            if std::io::stdin().is_terminal() {
                eprint!("value for {name} (input is not hidden; Ctrl-D when done): ");
            }
            let mut line = String::new();
            if let Err(e) = std::io::stdin().read_line(&mut line) {
                eprintln!("skald secrets: cannot read the value: {e}");
                return exit::FAILED;
            }
            line.trim_end_matches(['\n', '\r']).to_string()
        }
    };
    if value.is_empty() {
        eprintln!("skald secrets: the value is empty; use `skald secrets rm {name}` to remove it");
        return exit::USAGE;
    }
    match secrets.set(name, &value) {
        Ok(Some(Backend::Keyring)) => {
            println!("stored `{name}` in the OS keyring; refer to it as ${{secret:{name}}}");
            exit::OK
        }
        Ok(_) => {
            println!(
                "stored `{name}` in the encrypted vault (no OS keyring here); refer to it as ${{secret:{name}}}"
            );
            exit::OK
        }
        Err(e) => {
            eprintln!("skald secrets: {e}");
            exit::FAILED
        }
    }
}

pub fn list(data_dir: &DataDir, pattern: Option<&str>, json: bool) -> u8 {
    let secrets = match open(data_dir) {
        Ok(s) => s,
        Err(c) => return c,
    };
    match secrets.list(pattern) {
        Ok(names) if json => {
            println!("{}", serde_json::json!(names));
            exit::OK
        }
        Ok(names) => {
            if names.is_empty() {
                println!("No secrets. Add one with `skald secrets set NAME`.");
            }
            for n in names {
                println!("{n}");
            }
            exit::OK
        }
        Err(e) => {
            eprintln!("skald secrets: {e}");
            exit::FAILED
        }
    }
}

pub fn rm(data_dir: &DataDir, name: &str) -> u8 {
    let secrets = match open(data_dir) {
        Ok(s) => s,
        Err(c) => return c,
    };
    match secrets.delete(name) {
        Ok(true) => {
            println!("removed `{name}`");
            exit::OK
        }
        Ok(false) => {
            eprintln!("skald secrets: there is no secret `{name}`");
            exit::USAGE
        }
        Err(e) => {
            eprintln!("skald secrets: {e}");
            exit::FAILED
        }
    }
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
    match command {
        SecretsCommand::Set { name, value } => set(&env.data_dir, &name, value.as_deref()),
        SecretsCommand::List { pattern, json } => list(&env.data_dir, pattern.as_deref(), json),
        SecretsCommand::Rm { name } => rm(&env.data_dir, &name),
    }
}
