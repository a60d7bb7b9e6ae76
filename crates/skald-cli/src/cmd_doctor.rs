//! `skald doctor`: report on the parts Skald relies on.

use crate::fail::{Fail, finish};
use crate::{Env, exit};
use skald_core::doctor::{self, CheckStatus};

pub async fn run(env: &Env, json: bool) -> u8 {
    finish("skald", check(env, json).await)
}

async fn check(env: &Env, json: bool) -> Result<u8, Fail> {
    let checks = doctor::run(&env.data_dir).await;
    if json {
        let text = serde_json::to_string_pretty(&checks).map_err(Fail::failed)?;
        println!("{text}");
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
    // A failed check is the report's verdict, printed above, not an error of the command.
    if checks.iter().any(|c| c.status == CheckStatus::Error) {
        Ok(exit::FAILED)
    } else {
        Ok(exit::OK)
    }
}
