//! The Agent Inbox on the wire: what an item asks for, and how a person answers it.

use crate::category::ToolCategory;
use crate::records::{InboxKind, RuleAction};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

/// An item waiting on the user, as the Inbox and the chat show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct InboxEntry {
    pub id: i64,
    pub session_id: i64,
    pub session_title: String,
    pub tool_call_id: Option<String>,
    pub agent_id: String,
    /// 0 for the chat's own agent, more for sub-agents.
    pub depth: i64,
    pub title: String,
    /// What the item asks: `kind` names it, `payload` holds it.
    #[serde(flatten)]
    pub request: InboxRequest,
    pub created_at: i64,
}

/// What an Inbox item asks, tagged with its kind. It is stored as the item's payload (the
/// kind in its own column) and sent as `{"kind": …, "payload": {…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", content = "payload", rename_all = "snake_case")]
pub enum InboxRequest {
    Approval(ApprovalRequest),
    Question(QuestionRequest),
    Elicitation(ElicitationRequest),
}

impl InboxRequest {
    pub fn kind(&self) -> InboxKind {
        match self {
            InboxRequest::Approval(_) => InboxKind::Approval,
            InboxRequest::Question(_) => InboxKind::Question,
            InboxRequest::Elicitation(_) => InboxKind::Elicitation,
        }
    }

    /// The payload alone, as the store keeps it next to the kind.
    pub fn payload(&self) -> Value {
        let v = match self {
            InboxRequest::Approval(a) => serde_json::to_value(a),
            InboxRequest::Question(q) => serde_json::to_value(q),
            InboxRequest::Elicitation(e) => serde_json::to_value(e),
        };
        // Plain data with string keys: serialising it cannot fail.
        v.unwrap_or(Value::Null)
    }

    /// Reads a stored payload back.
    pub fn from_stored(kind: InboxKind, payload: Value) -> Result<InboxRequest, String> {
        let read = match kind {
            InboxKind::Approval => serde_json::from_value(payload).map(InboxRequest::Approval),
            InboxKind::Question => serde_json::from_value(payload).map(InboxRequest::Question),
            InboxKind::Elicitation => {
                serde_json::from_value(payload).map(InboxRequest::Elicitation)
            }
        };
        read.map_err(|e| format!("a stored {kind} request cannot be read: {e}"))
    }
}

/// A tool call waiting for a yes or no. Every field but the tool reads as empty when a
/// stored item lacks it (items written by older versions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ApprovalRequest {
    pub tool: String,
    /// As shown to people (a secret's value hidden).
    #[serde(default)]
    pub arguments: Value,
    #[serde(default)]
    pub label: String,
    /// Why it asks (the rule or the default that decided).
    #[serde(default)]
    pub reason: String,
    /// For "approve all calls of this category" (MCP tools have none: their server is
    /// the scope).
    #[serde(default)]
    pub category: Option<ToolCategory>,
    /// What a write would change, for the diff; absent for calls that are not writes.
    #[serde(default)]
    pub write: Option<WritePreview>,
    /// For a shell command: the sandbox it would run in (or that it would not).
    #[serde(default)]
    pub sandbox: Option<crate::SandboxInfo>,
}

/// A file write's before and after (a unified diff is derivable from the two).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct WritePreview {
    pub path: String,
    /// The file now; absent when it does not exist or is too large to show.
    pub old: Option<String>,
    /// The file after the write; absent when it cannot be worked out cheaply.
    pub new: Option<String>,
}

/// An agent's question (`ask_user_clarification`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct QuestionRequest {
    pub question: String,
    #[serde(default)]
    pub suggested_answers: Vec<String>,
    #[serde(default)]
    #[ts(optional)]
    pub title: Option<String>,
}

/// A form an MCP server asks the user to fill in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ElicitationRequest {
    pub server: String,
    #[serde(default)]
    pub message: String,
    /// The form's JSON Schema, as the server sent it.
    #[serde(default)]
    pub schema: Value,
}
/// The answer to an Inbox item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum InboxAnswer {
    Approve,
    Reject {
        #[serde(default)]
        note: String,
    },
    /// Approve, and let the session's calls in `scope` run without asking for `minutes`
    /// (or as long as the session runs).
    ApproveWithBypass {
        scope: BypassSpec,
        #[serde(default)]
        #[ts(optional)]
        minutes: Option<u64>,
    },
    /// Approve, and store `rule` so such calls never ask again.
    AlwaysAllow {
        rule: RuleDraft,
    },
    /// The answer to a question (or an elicitation's form, as JSON text).
    Text {
        text: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "scope", content = "value", rename_all = "snake_case")]
pub enum BypassSpec {
    All,
    Category(ToolCategory),
    McpServer(String),
}

/// An approval rule as the rule editor shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct RuleDraft {
    pub group: String,
    pub tool_pattern: String,
    pub path_pattern: Option<String>,
    pub command_pattern: Option<String>,
    pub working_dir: Option<String>,
    pub action: RuleAction,
    pub note: String,
    /// For commands: what the rule allows runs in the sandbox with the network (proposed
    /// when the approved call asked for the network).
    #[serde(default)]
    pub network: bool,
    /// For the web tools: the host the rule is about (proposed from the fetched URL).
    #[serde(default)]
    pub domain_pattern: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stored_payloads_read_back_even_when_older_versions_left_fields_out() {
        let r = InboxRequest::from_stored(
            InboxKind::Approval,
            json!({"tool": "execute_cmd", "arguments": {"command": "make"}}),
        )
        .unwrap();
        let InboxRequest::Approval(a) = &r else {
            panic!("{r:?}")
        };
        assert_eq!((a.tool.as_str(), a.label.as_str()), ("execute_cmd", ""));
        assert_eq!((a.category, &a.write), (None, &None));
        // The payload alone goes back to the store; the kind travels beside it.
        assert_eq!(r.payload()["tool"], "execute_cmd");
        assert_eq!(r.kind(), InboxKind::Approval);
        let q = InboxRequest::from_stored(InboxKind::Question, json!({"question": "Which?"}));
        assert!(matches!(q, Ok(InboxRequest::Question(ref q)) if q.suggested_answers.is_empty()));
        // A question without its question is not one.
        let e = InboxRequest::from_stored(InboxKind::Question, json!({"title": "x"})).unwrap_err();
        assert!(e.contains("question"), "{e}");
    }

    #[test]
    fn an_entry_is_sent_with_its_kind_and_payload_beside_the_other_fields() {
        let entry = InboxEntry {
            id: 4,
            session_id: 2,
            session_title: "Chat".into(),
            tool_call_id: None,
            agent_id: "main".into(),
            depth: 0,
            title: "Which?".into(),
            request: InboxRequest::Question(QuestionRequest {
                question: "Which?".into(),
                suggested_answers: vec!["a".into()],
                title: None,
            }),
            created_at: 1,
        };
        let v = serde_json::to_value(&entry).unwrap();
        assert_eq!(v["kind"], "question");
        assert_eq!(v["payload"]["suggested_answers"], json!(["a"]));
        assert_eq!(serde_json::from_value::<InboxEntry>(v).unwrap(), entry);
    }
}
