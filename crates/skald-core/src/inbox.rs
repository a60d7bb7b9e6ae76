//! The Agent Inbox, engine side: one place where every agent's wait for a person is
//! created, waited on and answered — approvals, clarification questions and MCP
//! elicitations. Items live in the store, so an answer given after a
//! restart, or from another process (`skald inbox answer`), reaches the waiting call.

use crate::approval::{BypassScope, Bypasses, RuleSpec, RuleSpecExt};
use serde::{Deserialize, Serialize};
use skald_api::CancellationToken;
use skald_api::events::Event;
use skald_api::inbox::{InboxEntry, InboxRequest, QuestionRequest};
use skald_store::{InboxItem, InboxStatus, NewInboxItem, Store, StoreError};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

/// A stored item as the protocol carries it. A payload no version of Skald wrote in that
/// shape is still shown, as a question quoting it: it can be rejected, never lost.
pub fn entry(item: InboxItem, session_title: String) -> InboxEntry {
    let raw = item.payload.to_string();
    let request = InboxRequest::from_stored(item.kind, item.payload).unwrap_or_else(|e| {
        tracing::warn!(inbox_id = item.id, "{e}");
        InboxRequest::Question(QuestionRequest {
            question: format!("{e}. It was: {raw}"),
            suggested_answers: Vec::new(),
            title: None,
        })
    });
    InboxEntry {
        id: item.id,
        session_id: item.session_id,
        session_title,
        tool_call_id: item.tool_call_id,
        agent_id: item.agent_id,
        depth: item.depth,
        title: item.title,
        request,
        created_at: item.created_at,
    }
}

/// How often a waiting call looks at the store, for answers given by another process.
const POLL: Duration = Duration::from_millis(250);

/// What an answer did.
#[derive(Debug, Clone)]
pub struct Answered {
    pub item: InboxItem,
    /// The rule an "always allow" stored.
    pub rule_id: Option<i64>,
}

/// A person's answer to an approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Answer {
    Approve,
    Reject {
        #[serde(default)]
        note: String,
    },
    /// Approve, and let the session's calls in `scope` run without asking for `minutes`
    /// (or, with none, as long as the session runs).
    ApproveWithBypass {
        scope: BypassScope,
        #[serde(default)]
        minutes: Option<u64>,
    },
    /// Approve, and store `rule` (usually `propose_rule`'s, as the person edited it) so
    /// such calls never ask again in this project.
    AlwaysAllow {
        rule: RuleSpec,
    },
    /// The answer to a question.
    Text {
        text: String,
    },
}

/// How a wait ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Approved,
    /// A question's answer.
    Answered(String),
    Rejected(String),
    /// The waiting call was stopped.
    Cancelled,
}

#[derive(Default)]
pub struct Inbox {
    waiters: Mutex<HashMap<i64, Arc<Notify>>>,
    /// Bypasses granted from answers, consulted before asking.
    pub bypasses: Bypasses,
}

impl Inbox {
    pub fn new() -> Arc<Inbox> {
        Arc::new(Inbox::default())
    }

    fn waiter(&self, id: i64) -> Arc<Notify> {
        self.waiters
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(id)
            .or_default()
            .clone()
    }

    /// Stores a new item and announces it.
    pub fn request(
        &self,
        store: &Store,
        new: &NewInboxItem,
        emit: &(dyn Fn(Event) + Send + Sync),
    ) -> Result<InboxItem, StoreError> {
        let item = store.add_inbox_item(new)?;
        let title = store
            .get_session(item.session_id)
            .map(|s| s.title)
            .unwrap_or_default();
        emit(Event::InboxRequested {
            item: entry(item.clone(), title),
        });
        Ok(item)
    }

    /// Waits until the item is answered (here, from another process, or before a
    /// restart) or `cancel` fires, which resolves it as cancelled.
    pub async fn wait(
        &self,
        store: &Store,
        id: i64,
        cancel: &CancellationToken,
    ) -> Result<Outcome, StoreError> {
        let notify = self.waiter(id);
        let outcome = loop {
            let item = store.get_inbox_item(id)?;
            match item.status {
                InboxStatus::Approved => break Outcome::Approved,
                InboxStatus::Answered => break Outcome::Answered(item.answer.unwrap_or_default()),
                InboxStatus::Rejected => break Outcome::Rejected(item.answer.unwrap_or_default()),
                InboxStatus::Cancelled => break Outcome::Cancelled,
                InboxStatus::Pending => {}
            }
            tokio::select! {
                biased;
                _ = cancel.cancelled() => {
                    // Resolve it so the Inbox does not keep asking about a stopped call; if
                    // someone answered in the meantime, their answer stands.
                    let _ = store.resolve_inbox_item(id, InboxStatus::Cancelled, None);
                    break Outcome::Cancelled;
                }
                _ = notify.notified() => {}
                _ = tokio::time::sleep(POLL) => {}
            }
        };
        self.waiters
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
        Ok(outcome)
    }

    /// Records a person's answer and wakes the waiting call — in this process, or in
    /// another one through the store. The one way every carrier answers (the UI, `skald
    /// inbox answer`). Returns the item as answered and the rule "always allow" stored.
    pub fn answer(
        &self,
        store: &Store,
        id: i64,
        answer: &Answer,
        emit: &(dyn Fn(Event) + Send + Sync),
    ) -> Result<Answered, StoreError> {
        // An approval takes approve/reject answers, a question a text or a rejection.
        let kind = store.get_inbox_item(id)?.kind;
        let fits = match answer {
            Answer::Text { .. } => kind != skald_store::InboxKind::Approval,
            Answer::Reject { .. } => true,
            _ => kind == skald_store::InboxKind::Approval,
        };
        if !fits {
            return Err(StoreError::Invalid(format!(
                "inbox item {id} is {}: that answer does not fit it",
                match kind {
                    skald_store::InboxKind::Question => "a question (answer it with text)",
                    skald_store::InboxKind::Elicitation => {
                        "a form from an MCP server (answer with its fields as JSON, or reject it)"
                    }
                    _ => "an approval (approve or reject it)",
                }
            )));
        }
        let mut rule_id = None;
        let item = match answer {
            Answer::Approve => store.resolve_inbox_item(id, InboxStatus::Approved, None)?,
            Answer::Reject { note } => {
                store.resolve_inbox_item(id, InboxStatus::Rejected, Some(note))?
            }
            Answer::ApproveWithBypass { scope, minutes } => {
                let item = store.resolve_inbox_item(id, InboxStatus::Approved, None)?;
                self.bypasses.grant(
                    item.session_id,
                    scope.clone(),
                    minutes.map(|m| Duration::from_secs(m.saturating_mul(60))),
                );
                item
            }
            Answer::Text { text } => {
                store.resolve_inbox_item(id, InboxStatus::Answered, Some(text))?
            }
            Answer::AlwaysAllow { rule } => {
                if rule.action == skald_store::RuleAction::Deny {
                    // "Always allow" never writes a deny; that is `skald rules add`'s job.
                    return Err(StoreError::Invalid(
                        "an always-allow rule must allow".into(),
                    ));
                }
                let item = store.resolve_inbox_item(id, InboxStatus::Approved, None)?;
                rule_id = Some(store.add_rule(&rule.to_new_rule())?);
                item
            }
        };
        self.waiter(id).notify_one();
        emit(Event::InboxResolved {
            id,
            session_id: item.session_id,
            status: item.status,
        });
        Ok(Answered { item, rule_id })
    }
}
