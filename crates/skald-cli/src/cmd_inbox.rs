//! `skald inbox list|answer`: what agents wait on you for, and your answer. Answers are
//! written to the store, where the waiting call — in this or any other Skald process —
//! picks them up.

use clap::Subcommand;

use crate::exit;
use skald_api::escape_controls_inline;
use skald_core::DataDir;
use skald_core::approval;
use skald_store::{InboxStatus, Store, StoreError};

/// Stores the rule "always allow" proposes for the item's call, and says what it covers.
/// Called only after this process approved the item, so a lost race stores no rule.
fn store_always_rule(store: &Store, id: i64) -> Result<(), u8> {
    let fail = |e: &dyn std::fmt::Display, code| {
        eprintln!("skald inbox: {e}");
        code
    };
    let (spec, matched) = approval::propose_for_item(store, id).map_err(|e| match e {
        StoreError::NotFound { .. } => fail(&e, exit::USAGE),
        _ => fail(&e, exit::FAILED),
    })?;
    let rule_id = store
        .add_rule(&spec.to_new_rule())
        .map_err(|e| fail(&e, exit::FAILED))?;
    let what = match (&spec.command_pattern, &spec.path_pattern) {
        (Some(c), _) => format!("{} `{c}`", spec.tool_pattern),
        (None, Some(p)) => format!("{} on {p}", spec.tool_pattern),
        (None, None) => spec.tool_pattern.clone(),
    };
    println!(
        "added rule {rule_id}: always allow {what} in {} (it covers {} call(s) of this session so far)\n{}",
        spec.working_dir.as_deref().unwrap_or("any folder"),
        matched.len(),
        approval::rule_reach(&spec)
    );
    Ok(())
}

fn open(data_dir: &DataDir) -> Result<Store, u8> {
    Store::open(data_dir.db_path()).map_err(|e| {
        eprintln!("skald inbox: {e}");
        exit::FAILED
    })
}

pub fn list(data_dir: &DataDir, json: bool) -> u8 {
    let store = match open(data_dir) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let items = match store.pending_inbox() {
        Ok(i) => i,
        Err(e) => {
            eprintln!("skald inbox: {e}");
            return exit::FAILED;
        }
    };
    if json {
        return match serde_json::to_string_pretty(&items) {
            Ok(t) => {
                println!("{t}");
                exit::OK
            }
            Err(e) => {
                eprintln!("skald inbox: {e}");
                exit::FAILED
            }
        };
    }
    if items.is_empty() {
        println!("Nothing is waiting for you.");
    }
    for it in items {
        let why = escape_controls_inline(it.payload["reason"].as_str().unwrap_or(""));
        println!(
            "{:>4}  session {:<4} {:<10} {}{}",
            it.id,
            it.session_id,
            escape_controls_inline(&it.agent_id),
            escape_controls_inline(&it.title),
            if why.is_empty() {
                String::new()
            } else {
                format!("  ({why})")
            }
        );
        // The full arguments, line by line with controls escaped: the title is cut.
        let args = it.payload.get("arguments").unwrap_or(&it.payload);
        for line in crate::shown::argument_lines(args, "      ") {
            println!("{line}");
        }
    }
    exit::OK
}

/// Answers a question with text, or an MCP server's form with its fields as JSON.
pub fn answer_text(data_dir: &DataDir, id: i64, text: &str) -> u8 {
    let store = match open(data_dir) {
        Ok(s) => s,
        Err(c) => return c,
    };
    match store.get_inbox_item(id) {
        Ok(it) if it.kind == skald_store::InboxKind::Approval => {
            eprintln!("skald inbox: item {id} is an approval: answer approve or reject");
            return exit::USAGE;
        }
        Ok(_) => {}
        Err(e) => {
            eprintln!("skald inbox: {e}");
            return exit::USAGE;
        }
    }
    match store.resolve_inbox_item(id, InboxStatus::Answered, Some(text)) {
        Ok(it) => {
            println!("answered item {id}: {}", it.title);
            exit::OK
        }
        Err(e) => {
            eprintln!("skald inbox: {e}");
            exit::USAGE
        }
    }
}

pub fn answer(data_dir: &DataDir, id: i64, approve: bool, note: Option<&str>, always: bool) -> u8 {
    let store = match open(data_dir) {
        Ok(s) => s,
        Err(c) => return c,
    };
    match store.get_inbox_item(id) {
        Ok(it) if it.kind == skald_store::InboxKind::Question => {
            eprintln!("skald inbox: item {id} is a question: answer it with --text");
            return exit::USAGE;
        }
        Ok(it) if it.kind == skald_store::InboxKind::Elicitation && approve => {
            eprintln!(
                "skald inbox: item {id} is a form from an MCP server: fill it in with --text '{{\"field\": \"value\"}}', or reject it"
            );
            return exit::USAGE;
        }
        Ok(_) => {}
        Err(e @ StoreError::NotFound { .. }) => {
            eprintln!("skald inbox: {e}");
            return exit::USAGE;
        }
        Err(e) => {
            eprintln!("skald inbox: {e}");
            return exit::FAILED;
        }
    }
    if always && !approve {
        eprintln!("skald inbox: --always goes with approve");
        return exit::USAGE;
    }
    let (status, note) = if approve {
        (InboxStatus::Approved, None)
    } else {
        (InboxStatus::Rejected, Some(note.unwrap_or("")))
    };
    match store.resolve_inbox_item(id, status, note) {
        Ok(it) => {
            println!(
                "{} item {id}: {}",
                if approve { "approved" } else { "rejected" },
                it.title
            );
            if always && let Err(code) = store_always_rule(&store, id) {
                eprintln!("skald inbox: item {id} was approved, but no rule was stored");
                return code;
            }
            exit::OK
        }
        Err(e @ (StoreError::NotFound { .. } | StoreError::AlreadyFinal { .. })) => {
            eprintln!("skald inbox: {e}");
            exit::USAGE
        }
        Err(e) => {
            eprintln!("skald inbox: {e}");
            exit::FAILED
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum InboxCommand {
    /// Everything waiting, oldest first
    List {
        #[arg(long)]
        json: bool,
    },
    /// Answer an item: the waiting call goes on, in whichever Skald process waits for it
    #[command(after_help = "Examples:\n  skald inbox answer 7 approve\n  \
                            skald inbox answer 8 reject --note \"not on Fridays\"\n  \
                            skald inbox answer 9 --text \"Use the staging database\"")]
    Answer {
        id: i64,
        /// approve or reject (for an approval)
        #[arg(value_parser = ["approve", "reject"], required_unless_present = "text")]
        decision: Option<String>,
        /// The answer to a question
        #[arg(long, conflicts_with = "decision")]
        text: Option<String>,
        /// Why, for a rejection: the agent reads it
        #[arg(long)]
        note: Option<String>,
        /// With approve: also store the rule such calls would need, generalised (a
        /// command's leading words, a write's folder) and scoped to the session's folder
        #[arg(long)]
        always: bool,
    },
}

/// Runs one `inbox` subcommand; its exit code.
pub async fn dispatch(env: &crate::Env, command: InboxCommand) -> u8 {
    match command {
        InboxCommand::List { json } => list(&env.data_dir, json),
        InboxCommand::Answer {
            id,
            decision,
            text,
            note,
            always,
        } => match text {
            Some(text) => answer_text(&env.data_dir, id, &text),
            None => answer(
                &env.data_dir,
                id,
                decision.as_deref() == Some("approve"),
                note.as_deref(),
                always,
            ),
        },
    }
}
