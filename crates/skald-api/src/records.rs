//! The states and kinds the store keeps and the protocol carries, defined once: the store
//! writes them as these strings and reads them back with `parse`; the UI gets them as
//! TypeScript string unions generated from here.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// An enum that is stored and sent as a snake_case string: `as_str` writes it, `parse`
/// reads it back (None for a string no version of Skald wrote).
macro_rules! wire_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            pub fn parse(s: &str) -> Option<$name> {
                match s {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        /// Compares with the stored string, as readers of the JSON do.
        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

wire_enum! {
    /// Who drives a session.
    SessionKind {
        /// A chat a person types into.
        Interactive = "interactive",
        /// A background task or a cron run.
        Background = "background",
    }
}

wire_enum! {
    /// How a chat's agent works (docs/agent-loop.md, "Plan mode").
    ChatMode {
        /// It reads, changes files and runs commands, as the rules allow.
        Act = "act",
        /// It reads, searches and asks, and changes nothing, until the person approves
        /// its plan.
        Plan = "plan",
    }
}

wire_enum! {
    /// Who wrote a message.
    Role {
        System = "system",
        User = "user",
        Assistant = "assistant",
        Tool = "tool",
    }
}

wire_enum! {
    /// How far a message got.
    MessageStatus {
        /// Being written as the model streams it.
        Streaming = "streaming",
        Complete = "complete",
        /// The process stopped while it streamed; what arrived is kept.
        Interrupted = "interrupted",
    }
}

wire_enum! {
    /// Where a background task stands.
    TaskStatus {
        Running = "running",
        Done = "done",
        Failed = "failed",
        Cancelled = "cancelled",
    }
}

wire_enum! {
    /// What an Inbox item asks for.
    InboxKind {
        /// A tool call waits for a yes or no.
        Approval = "approval",
        /// An agent asks the user a question.
        Question = "question",
        /// An MCP server asks for a form to be filled in.
        Elicitation = "elicitation",
    }
}

wire_enum! {
    /// Where an Inbox item stands.
    InboxStatus {
        Pending = "pending",
        Approved = "approved",
        Rejected = "rejected",
        Answered = "answered",
        /// The waiting call was stopped before anyone answered.
        Cancelled = "cancelled",
    }
}

wire_enum! {
    /// What an approval rule does with the calls it matches.
    RuleAction {
        Allow = "allow",
        /// Ask a person first.
        Require = "require",
        Deny = "deny",
    }
}

wire_enum! {
    /// What a schedule does with the runs it missed while Skald was not running.
    MissedPolicy {
        /// Missed occurrences run once, together, at the next start.
        Once = "once",
        /// Missed occurrences are dropped.
        Skip = "skip",
    }
}

wire_enum! {
    /// Where an item of an agent's todo list stands (`write_todos`).
    TodoStatus {
        Pending = "pending",
        InProgress = "in_progress",
        Completed = "completed",
    }
}

/// One item of an agent's todo list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct TodoItem {
    pub content: String,
    pub status: TodoStatus,
}

/// The arguments of `write_todos`: the whole list, each time. The UI reads a call's
/// arguments as this to show the checklist above the composer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct WriteTodosArgs {
    pub todos: Vec<TodoItem>,
}

/// Where an MCP server stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum McpStatus {
    Connecting,
    Ready {
        tools: usize,
    },
    Failed {
        error: String,
        log_tail: String,
    },
    Disabled,
    /// Registered and turned on, but this process has not started it (yet).
    NotStarted,
    /// The server asks for an OAuth login (`skald mcp login NAME`): never done, `expired`
    /// (its tokens were refused and could not be refreshed), or for more access than was
    /// granted (`scope`, what the server asked for).
    NeedsLogin {
        expired: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        scope: Option<String>,
    },
}

impl McpStatus {
    /// One line for people and agents.
    pub fn describe(&self) -> String {
        match self {
            McpStatus::Connecting => "connecting".to_string(),
            McpStatus::Ready { tools } => format!("ready, {tools} tools"),
            McpStatus::Failed { error, .. } => format!("failed: {error}"),
            McpStatus::Disabled => "disabled".to_string(),
            McpStatus::NotStarted => "not started".to_string(),
            McpStatus::NeedsLogin { expired, scope } => match (expired, scope) {
                (_, Some(scope)) => format!("needs login for more access ({scope})"),
                (true, None) => "login expired".to_string(),
                (false, None) => "needs login".to_string(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_reads_back_what_it_writes_and_serde_agrees() {
        for k in SessionKind::ALL {
            assert_eq!(SessionKind::parse(k.as_str()), Some(*k));
            assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
        }
        for s in InboxStatus::ALL {
            assert_eq!(InboxStatus::parse(s.as_str()), Some(*s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        for a in RuleAction::ALL {
            assert_eq!(RuleAction::parse(a.as_str()), Some(*a));
        }
        assert_eq!(MissedPolicy::parse("sometimes"), None);
        assert_eq!(
            serde_json::to_value(McpStatus::NotStarted).unwrap(),
            serde_json::json!({"state": "not_started"})
        );
    }
}
