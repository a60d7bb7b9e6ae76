//! Printing events of sessions other than the one a command drives (background tasks,
//! scheduled runs): with --json each event with its session, as text only what the user
//! must see or act on.

use skald_api::events::Event;
use std::io::Write;

/// `runs`: also say when a session starts and ends (`skald cron run`, where every session
/// is a run).
pub fn print(session_id: i64, event: &Event, json: bool, runs: bool) {
    let mut out = std::io::stdout().lock();
    let _ = if json {
        let v = skald_core::session::manager::SessionEvent {
            session_id,
            event: event.clone(),
        };
        match serde_json::to_string(&v) {
            Ok(line) => writeln!(out, "{line}"),
            Err(_) => Ok(()),
        }
    } else {
        match event {
            Event::ApprovalRequired {
                label, inbox_id, ..
            } => writeln!(
                out,
                "  ⏸ session {session_id} waits for approval of {label}: \
                 skald inbox answer {inbox_id} approve|reject"
            ),
            Event::AgentQuestion {
                question, inbox_id, ..
            } => writeln!(
                out,
                "  ? session {session_id} asks: {question} (skald inbox answer {inbox_id} --text ...)"
            ),
            Event::TurnRunning { .. } if runs => writeln!(out, "▶ session {session_id} running"),
            Event::TurnQueued { ahead, .. } if runs => writeln!(
                out,
                "… session {session_id} waits for a place ({ahead} ahead; [agent] at_once)"
            ),
            Event::Done { outcome, text, .. } if runs => writeln!(
                out,
                "■ session {session_id} {outcome:?}: {}",
                text.lines().next().unwrap_or("")
            ),
            _ => Ok(()),
        }
    };
    let _ = out.flush();
}
