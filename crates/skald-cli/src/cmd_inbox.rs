//! `skald inbox list|answer`: what agents wait on you for, and your answer. Answers are
//! written to the store, where the waiting call — in this or any other Skald process —
//! picks them up.

use crate::exit;
use skald_core::DataDir;
use skald_store::{InboxStatus, Store, StoreError};

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
        let why = it.payload["reason"].as_str().unwrap_or("");
        println!(
            "{:>4}  session {:<4} {:<10} {}{}",
            it.id,
            it.session_id,
            it.agent_id,
            it.title,
            if why.is_empty() {
                String::new()
            } else {
                format!("  ({why})")
            }
        );
    }
    exit::OK
}

pub fn answer(data_dir: &DataDir, id: i64, approve: bool, note: Option<&str>) -> u8 {
    let store = match open(data_dir) {
        Ok(s) => s,
        Err(c) => return c,
    };
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
