//! `skald sessions list|show`: the stored conversations.

use clap::Subcommand;
use skald_api::{escape_controls, escape_controls_inline};

use crate::exit;
use crate::fail::{Fail, finish};
use serde_json::json;
use skald_api::ToolDescriptionLength;
use skald_core::{DataDir, builtin_registry};
use skald_store::Store;

fn open(data_dir: &DataDir) -> Result<Store, Fail> {
    Store::open(data_dir.db_path()).map_err(Fail::failed)
}

fn print_json(v: &serde_json::Value) -> Result<u8, Fail> {
    let text = serde_json::to_string_pretty(v).map_err(Fail::failed)?;
    println!("{text}");
    Ok(exit::OK)
}

pub fn list(data_dir: &DataDir, json_out: bool) -> Result<u8, Fail> {
    let store = open(data_dir)?;
    let sessions = store.list_sessions().map_err(Fail::failed)?;
    let mut usage = Vec::with_capacity(sessions.len());
    for s in &sessions {
        usage.push(store.session_usage(s.id).map_err(Fail::failed)?);
    }
    let today = store
        .usage_since(skald_core::usage::start_of_today())
        .map_err(Fail::failed)?;
    if json_out {
        // Each chat with what its model calls cost (docs/models.md, "Cost").
        let listed: Vec<serde_json::Value> = sessions
            .iter()
            .zip(&usage)
            .map(|(s, u)| {
                let mut v = json!(s);
                v["cost_usd"] = json!(u.cost_usd);
                v["unpriced_requests"] = json!(u.unpriced);
                v
            })
            .collect();
        return print_json(&json!(listed));
    }
    if sessions.is_empty() {
        println!("No sessions yet: `skald exec \"…\"` starts one.");
    }
    for (s, u) in sessions.iter().zip(&usage) {
        let title = if s.title.is_empty() {
            "(untitled)"
        } else {
            &s.title
        };
        println!(
            "{:>5}  {:<8}  {:>9}  {}  {}",
            s.id,
            s.agent_id,
            cost(u),
            escape_controls_inline(title),
            escape_controls_inline(s.working_dir.as_deref().unwrap_or(""))
        );
    }
    if today.requests > 0 {
        println!("Today: {}", cost(&today));
    }
    Ok(exit::OK)
}

/// A cost as a person reads it: dollars, with a `+` when some calls had no known price.
fn cost(u: &skald_store::SessionUsage) -> String {
    let more = if u.unpriced > 0 { "+" } else { "" };
    if u.cost_usd == 0.0 && u.unpriced > 0 {
        "?".to_string()
    } else {
        format!("${:.4}{more}", u.cost_usd)
    }
}

pub fn show(data_dir: &DataDir, id: i64, json_out: bool) -> Result<u8, Fail> {
    let store = open(data_dir)?;
    let loaded = store
        .get_session(id)
        .and_then(|s| Ok((s, store.list_messages(id)?, store.list_tool_calls(id)?)));
    let (session, messages, calls) = loaded.map_err(|e| match e {
        skald_store::StoreError::NotFound { .. } => Fail::usage(e),
        _ => Fail::failed(e),
    })?;
    if json_out {
        return print_json(&json!({"session": session, "messages": messages, "tool_calls": calls}));
    }
    let registry = builtin_registry().ok();
    // Titles, messages and labels come from the model, its tools and MCP servers: they
    // keep their lines, never their terminal controls.
    println!(
        "Session {} — {}",
        session.id,
        escape_controls_inline(&session.title)
    );
    for m in &messages {
        if !m.content.is_empty() {
            println!(
                "\n[{}{}]\n{}",
                m.role.as_str(),
                status_note(m.status),
                escape_controls(&m.content)
            );
        }
        for c in calls.iter().filter(|c| c.message_id == Some(m.id)) {
            let label = registry
                .as_ref()
                .map(|r| r.describe_call(&c.name, &c.args, ToolDescriptionLength::Full))
                .unwrap_or_else(|| c.name.clone());
            println!("  → {}  ({})", escape_controls_inline(&label), c.status);
        }
    }
    Ok(exit::OK)
}

fn status_note(s: skald_store::MessageStatus) -> &'static str {
    match s {
        skald_store::MessageStatus::Complete => "",
        skald_store::MessageStatus::Streaming => ", streaming",
        skald_store::MessageStatus::Interrupted => ", interrupted",
    }
}

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// Every session, most recent first
    List {
        #[arg(long)]
        json: bool,
    },
    /// One session's messages and tool calls
    Show {
        id: i64,
        #[arg(long)]
        json: bool,
    },
}

/// Runs one `sessions` subcommand; its exit code.
pub async fn dispatch(env: &crate::Env, command: SessionsCommand) -> u8 {
    let result = match command {
        SessionsCommand::List { json } => list(&env.data_dir, json),
        SessionsCommand::Show { id, json } => show(&env.data_dir, id, json),
    };
    finish("skald sessions", result)
}
