//! `skald tasks list`: background tasks started from chats, and how each ended.

use clap::Subcommand;
use skald_api::escape_controls_inline;

use crate::exit;
use crate::fail::{Fail, finish};
use skald_core::DataDir;
use skald_service::records::Records;
use skald_store::Store;

pub fn list(data_dir: &DataDir, session: Option<i64>, json: bool) -> Result<u8, Fail> {
    let store = Store::open(data_dir.db_path()).map_err(Fail::failed)?;
    let tasks = Records::new(&store).tasks(session).map_err(Fail::failed)?;
    if json {
        println!("{}", serde_json::to_value(&tasks).unwrap_or_default());
        return Ok(exit::OK);
    }
    if tasks.is_empty() {
        println!("No background tasks.");
    }
    for t in tasks {
        println!(
            "{:>4}  {:<9} {:<18} {}  (from session {}, works in session {})",
            t.id,
            t.status.as_str(),
            t.agent_id,
            escape_controls_inline(&t.title),
            t.parent_session_id,
            t.session_id.map_or_else(|| "—".into(), |s| s.to_string())
        );
        if let Some(r) = t.result.filter(|r| !r.is_empty()) {
            println!(
                "      {}",
                escape_controls_inline(r.lines().next().unwrap_or(""))
            );
        }
    }
    Ok(exit::OK)
}

#[derive(Debug, Subcommand)]
pub enum TasksCommand {
    /// Background tasks, newest first
    List {
        /// Only those started from this session
        #[arg(long, value_name = "ID")]
        session: Option<i64>,
        #[arg(long)]
        json: bool,
    },
}

/// Runs one `tasks` subcommand; its exit code.
pub async fn dispatch(env: &crate::Env, command: TasksCommand) -> u8 {
    let result = match command {
        TasksCommand::List { session, json } => list(&env.data_dir, session, json),
    };
    finish("skald tasks", result)
}
