//! `skald doctor`: report on the parts Skald relies on.

use crate::{Env, exit};
use skald_core::doctor::{self, CheckStatus};

pub async fn run(env: &Env, json: bool) -> u8 {
    let checks = doctor::run(&env.data_dir).await;
    if json {
        match serde_json::to_string_pretty(&checks) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                eprintln!("skald: {e}");
                return exit::FAILED;
            }
        }
    } else {
        let width = checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
        for c in &checks {
            let mark = match c.status {
                CheckStatus::Ok => "ok     ",
                CheckStatus::Missing => "missing",
                CheckStatus::Error => "ERROR  ",
            };
            println!("{mark}  {:<width$}  {}", c.name, c.detail);
            if let Some(hint) = &c.hint {
                println!("         {:<width$}  → {hint}", "");
            }
        }
    }
    if checks.iter().any(|c| c.status == CheckStatus::Error) {
        exit::FAILED
    } else {
        exit::OK
    }
}
