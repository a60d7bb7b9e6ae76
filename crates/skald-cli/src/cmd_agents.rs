//! `skald agents list`: the board of agents — every chat and background run, across
//! folders, with what it is doing, what it used and what it changed (docs/board.md).

use crate::exit;
use crate::fail::{Fail, finish};
use clap::Subcommand;
use skald_api::board::BoardAgent;
use skald_api::escape_controls_inline;
use skald_core::DataDir;
use skald_core::checkpoints::Checkpoints;
use skald_store::Store;

#[derive(Debug, Subcommand)]
pub enum AgentsCommand {
    /// Every agent, the most recently active first: its state (queued, working, waiting,
    /// done, failed, stopped, interrupted, idle), time, tokens, cost, files changed, where
    /// it works and its last message
    List {
        /// At most this many
        #[arg(long, default_value_t = skald_core::board::DEFAULT_LIMIT)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
}

pub async fn dispatch(env: &crate::Env, command: AgentsCommand) -> u8 {
    let result = match command {
        AgentsCommand::List { limit, json } => list(&env.data_dir, &env.config, limit, json).await,
    };
    finish("skald agents", result)
}

async fn list(
    data_dir: &DataDir,
    config: &skald_core::Config,
    limit: usize,
    json: bool,
) -> Result<u8, Fail> {
    let store = Store::open(data_dir.db_path()).map_err(Fail::failed)?;
    let checkpoints = Checkpoints::new(config.checkpoints.settings(data_dir.root()));
    let agents = skald_core::board::agents(&store, &checkpoints, limit)
        .await
        .map_err(Fail::failed)?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&agents).map_err(Fail::failed)?
        );
        return Ok(exit::OK);
    }
    if agents.is_empty() {
        println!("No agents yet: `skald exec \"…\"` starts one.");
        return Ok(exit::OK);
    }
    println!(
        "{:>5}  {:<11}  {:>7}  {:>7}  {:>9}  {:<14}  WHERE — LAST MESSAGE",
        "ID", "STATE", "TIME", "TOKENS", "COST", "FILES"
    );
    for a in &agents {
        println!("{}", row(a));
    }
    Ok(exit::OK)
}

/// One agent's line. Titles, folders and messages come from the model and the folder:
/// they never carry terminal controls.
fn row(a: &BoardAgent) -> String {
    let state = if a.waiting > 0 {
        format!("waiting({})", a.waiting)
    } else {
        a.state.as_str().to_string()
    };
    let files = if a.changes.files == 0 {
        "-".to_string()
    } else {
        format!(
            "{} +{} −{}",
            a.changes.files, a.changes.added, a.changes.removed
        )
    };
    let place = match (&a.worktree, &a.source, &a.folder) {
        (Some(w), Some(src), _) => format!("{src} (worktree {w})"),
        (_, _, Some(f)) => f.clone(),
        _ => String::new(),
    };
    let last = a
        .last_message
        .as_deref()
        .map(|m| m.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    let title = if a.title.is_empty() {
        String::new()
    } else {
        format!("{}: ", a.title)
    };
    format!(
        "{:>5}  {:<11}  {:>7}  {:>7}  {:>9}  {:<14}  {} — {}{}",
        a.session_id,
        state,
        duration(a.active_ms),
        tokens(a.input_tokens + a.output_tokens),
        cost(a),
        files,
        escape_controls_inline(&place),
        escape_controls_inline(&title),
        escape_controls_inline(&cut(&last, 80)),
    )
}

fn cut(s: &str, chars: usize) -> String {
    match s.char_indices().nth(chars) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// "45s", "3m12s", "2h05m".
fn duration(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// "812", "41.2k", "1.3M".
fn tokens(n: u64) -> String {
    match n {
        0..1000 => n.to_string(),
        1000..1_000_000 => format!("{:.1}k", n as f64 / 1000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

fn cost(a: &BoardAgent) -> String {
    let more = if a.unpriced > 0 { "+" } else { "" };
    if a.cost_usd == 0.0 && a.unpriced > 0 {
        "?".to_string()
    } else {
        format!("${:.4}{more}", a.cost_usd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_tokens_read_as_a_person_reads_them() {
        assert_eq!(duration(45_000), "45s");
        assert_eq!(duration(192_000), "3m12s");
        assert_eq!(duration(7_500_000), "2h05m");
        assert_eq!(tokens(812), "812");
        assert_eq!(tokens(41_234), "41.2k");
        assert_eq!(tokens(1_300_000), "1.3M");
        assert_eq!(cut("abcdef", 3), "abc…");
    }
}
