//! `skald plugins list|configure`: the plugins Skald ships, their settings, on or off.

use clap::Subcommand;
use skald_service::records::Records;

use crate::exit;
use crate::fail::{Fail, finish};
use skald_core::DataDir;
use skald_core::plugins::Plugins;
use skald_store::Store;

fn open(data_dir: &DataDir) -> Result<Store, Fail> {
    Store::open(data_dir.db_path()).map_err(Fail::failed)
}

pub fn list(data_dir: &DataDir, json: bool) -> Result<u8, Fail> {
    let store = open(data_dir)?;
    let plugins = Plugins::default();
    let described = Records::new(&store).plugins(&plugins);
    if json {
        println!("{}", serde_json::json!(described));
        return Ok(exit::OK);
    }
    for p in described {
        println!(
            "{:<20} {:<4} {}",
            p.id,
            if p.enabled { "on" } else { "off" },
            p.description
        );
        if let Some(config) = p.config.as_ref().filter(|c| c.is_object()) {
            println!("{:<20}      config: {}", "", config);
        }
    }
    Ok(exit::OK)
}

pub fn configure(
    data_dir: &DataDir,
    id: &str,
    config: Option<&str>,
    enabled: Option<bool>,
) -> Result<u8, Fail> {
    let store = open(data_dir)?;
    let config = match config.map(serde_json::from_str::<serde_json::Value>) {
        None => None,
        Some(Ok(v @ serde_json::Value::Object(_))) => Some(v),
        Some(_) => return Err(Fail::usage("--config takes a JSON object")),
    };
    // Every refusal here is about the plugin or settings the user named.
    let text = Records::new(&store)
        .configure_plugin(&Plugins::default(), id, config.as_ref(), enabled)
        .map_err(Fail::usage)?;
    println!("{text}");
    Ok(exit::OK)
}

#[derive(Debug, Subcommand)]
pub enum PluginsCommand {
    /// Every plugin, on or off, with its configuration
    List {
        #[arg(long)]
        json: bool,
    },
    /// Set a plugin's configuration (checked against its schema) and turn it on or off
    #[command(
        after_help = "Example:\n  printf %s \"$OPENAI_API_KEY\" | skald secrets set OPENAI_IMAGES\n  \
                      skald plugins configure image-generation --enable \\\n    \
                      --config '{\"api_key\": \"${secret:OPENAI_IMAGES}\", \"model\": \"gpt-image-1\"}'"
    )]
    Configure {
        id: String,
        /// The configuration, a JSON object (kept as it is when omitted)
        #[arg(long, value_name = "JSON")]
        config: Option<String>,
        #[arg(long, conflicts_with = "disable")]
        enable: bool,
        #[arg(long)]
        disable: bool,
    },
}

/// Runs one `plugins` subcommand; its exit code.
pub async fn dispatch(env: &crate::Env, command: PluginsCommand) -> u8 {
    let result = match command {
        PluginsCommand::List { json } => list(&env.data_dir, json),
        PluginsCommand::Configure {
            id,
            config,
            enable,
            disable,
        } => configure(
            &env.data_dir,
            &id,
            config.as_deref(),
            if enable {
                Some(true)
            } else if disable {
                Some(false)
            } else {
                None
            },
        ),
    };
    finish("skald plugins", result)
}
