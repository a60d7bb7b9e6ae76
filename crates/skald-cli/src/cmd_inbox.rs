//! `skald inbox list|answer`: what agents wait on you for, and your answer. Answers are
//! written to the store, where the waiting call — in this or any other Skald process —
//! picks them up.

use clap::Subcommand;

use crate::exit;
use crate::fail::{Fail, finish};
use skald_api::escape_controls_inline;
use skald_api::inbox::InboxRequest;
use skald_core::DataDir;
use skald_core::approval;
use skald_core::inbox::Answer;
use skald_service::records::Records;
use skald_store::{Store, StoreError};

fn open(data_dir: &DataDir) -> Result<Store, Fail> {
    Store::open(data_dir.db_path()).map_err(Fail::failed)
}

pub fn list(data_dir: &DataDir, json: bool) -> Result<u8, Fail> {
    let store = open(data_dir)?;
    // The entries the UI's Inbox shows, with their typed requests (`--json` prints them
    // as the protocol carries them).
    let items = Records::new(&store).inbox().map_err(Fail::failed)?;
    if json {
        let text = serde_json::to_string_pretty(&items).map_err(Fail::failed)?;
        println!("{text}");
        return Ok(exit::OK);
    }
    if items.is_empty() {
        println!("Nothing is waiting for you.");
    }
    for it in items {
        let (why, args) = match &it.request {
            InboxRequest::Approval(a) => (a.reason.as_str(), Some(&a.arguments)),
            InboxRequest::Question(_) | InboxRequest::Elicitation(_) => ("", None),
        };
        let why = escape_controls_inline(why);
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
        // A question or a form shows its text or fields the same way.
        let shown = match &it.request {
            InboxRequest::Approval(_) => args.cloned().unwrap_or_default(),
            InboxRequest::Question(q) => serde_json::json!({
                "question": q.question,
                "suggested_answers": q.suggested_answers,
            }),
            InboxRequest::Elicitation(e) => serde_json::json!({
                "server": e.server,
                "message": e.message,
                "schema": e.schema,
            }),
        };
        for line in crate::approval_prompt::argument_lines(&shown, "      ") {
            println!("{line}");
        }
    }
    Ok(exit::OK)
}

/// What the person answered on the command line.
enum Given<'a> {
    Approve {
        always: bool,
    },
    Reject {
        note: &'a str,
    },
    /// A question's answer, or an MCP server's form as JSON.
    Text(&'a str),
}

/// Answers an item through the engine's one answer (`Inbox::answer`, as the UI does): the
/// kind is checked there, "always allow" proposes the rule as the UI's editor does and
/// stores it only if this answer approved the item, and the waiting call — in whichever
/// Skald process waits — picks the answer up from the store.
fn answer(data_dir: &DataDir, id: i64, given: Given<'_>) -> Result<u8, Fail> {
    let store = open(data_dir)?;
    // What the user named wrongly (no such item, one already answered) is bad usage.
    let fail = |e: StoreError| match e {
        StoreError::NotFound { .. } | StoreError::AlreadyFinal { .. } | StoreError::Invalid(_) => {
            Fail::usage(e)
        }
        _ => Fail::failed(e),
    };
    let records = Records::new(&store);
    let (answer, proposed) = match given {
        Given::Approve { always: false } => (Answer::Approve, None),
        Given::Approve { always: true } => {
            let (spec, matched) = approval::propose_for_item(&store, id).map_err(fail)?;
            (
                Answer::AlwaysAllow { rule: spec.clone() },
                Some((spec, matched.len())),
            )
        }
        Given::Reject { note } => (
            Answer::Reject {
                note: note.to_string(),
            },
            None,
        ),
        Given::Text(text) => (
            Answer::Text {
                text: text.to_string(),
            },
            None,
        ),
    };
    let done = records.answer(id, &answer)?;
    let verb = match answer {
        Answer::Text { .. } => "answered",
        Answer::Reject { .. } => "rejected",
        _ => "approved",
    };
    println!(
        "{verb} item {id}: {}",
        escape_controls_inline(&done.item.title)
    );
    if let (Some((spec, matched)), Some(rule_id)) = (proposed, done.rule_id) {
        let what = match (&spec.command_pattern, &spec.path_pattern) {
            (Some(c), _) => format!("{} `{c}`", spec.tool_pattern),
            (None, Some(p)) => format!("{} on {p}", spec.tool_pattern),
            (None, None) => spec.tool_pattern.clone(),
        };
        println!(
            "added rule {rule_id}: always allow {what} in {} (it covers {matched} call(s) of this session so far)\n{}",
            spec.working_dir.as_deref().unwrap_or("any folder"),
            approval::rule_reach(&spec)
        );
    }
    Ok(exit::OK)
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
    let result = match command {
        InboxCommand::List { json } => list(&env.data_dir, json),
        InboxCommand::Answer {
            id,
            decision,
            text,
            note,
            always,
        } => {
            let approve = decision.as_deref() == Some("approve");
            if always && (!approve || text.is_some()) {
                return Fail::usage("--always goes with approve").report("skald inbox");
            }
            let given = match (&text, approve) {
                (Some(text), _) => Given::Text(text),
                (None, true) => Given::Approve { always },
                (None, false) => Given::Reject {
                    note: note.as_deref().unwrap_or(""),
                },
            };
            answer(&env.data_dir, id, given)
        }
    };
    finish("skald inbox", result)
}
