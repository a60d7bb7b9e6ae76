//! `skald plugins list|configure`: the plugins Skald ships, their settings, on or off.

use crate::exit;
use skald_core::DataDir;
use skald_core::plugins::Plugins;
use skald_store::Store;

fn open(data_dir: &DataDir) -> Result<Store, u8> {
    Store::open(data_dir.db_path()).map_err(|e| {
        eprintln!("skald plugins: {e}");
        exit::FAILED
    })
}

pub fn list(data_dir: &DataDir, json: bool) -> u8 {
    let store = match open(data_dir) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let plugins = Plugins::default();
    let described = plugins.describe(&store);
    if json {
        println!("{}", serde_json::Value::Array(described));
        return exit::OK;
    }
    for p in described {
        println!(
            "{:<20} {:<4} {}",
            p["id"].as_str().unwrap_or(""),
            if p["enabled"] == true { "on" } else { "off" },
            p["description"].as_str().unwrap_or("")
        );
        if let Some(config) = p["config"].as_object() {
            println!(
                "{:<20}      config: {}",
                "",
                serde_json::Value::Object(config.clone())
            );
        }
    }
    exit::OK
}

pub fn configure(data_dir: &DataDir, id: &str, config: Option<&str>, enabled: Option<bool>) -> u8 {
    let store = match open(data_dir) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let config = match config.map(serde_json::from_str::<serde_json::Value>) {
        None => None,
        Some(Ok(v @ serde_json::Value::Object(_))) => Some(v),
        Some(_) => {
            eprintln!("skald plugins: --config takes a JSON object");
            return exit::USAGE;
        }
    };
    match Plugins::default().configure(&store, id, config.as_ref(), enabled) {
        Ok(text) => {
            println!("{text}");
            exit::OK
        }
        Err(e) => {
            eprintln!("skald plugins: {e}");
            exit::USAGE
        }
    }
}
