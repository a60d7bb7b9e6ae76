//! What fills a chat's context (docs/agent-loop.md, "Long conversations"): the request its
//! next round would send, estimated part by part, so a person can see how full it is and
//! why.

use super::compact::estimate_tokens;
use super::conversation::conversation;
use super::offer::turn_tools;
use super::{TurnEnv, TurnError};
use skald_llm::{Message, Role};

/// The estimated tokens of each part of the next request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContextParts {
    /// The agent's own prompt and Skald's (less what the folder's instructions add).
    pub system: u64,
    /// AGENTS.md files and skills the folder and the person give.
    pub instructions: u64,
    /// The definitions of the tools offered.
    pub tools: u64,
    /// The summary standing for compacted turns.
    pub summary: u64,
    /// The person's and the agent's messages.
    pub messages: u64,
    /// What tool calls returned.
    pub tool_results: u64,
}

impl ContextParts {
    pub fn total(&self) -> u64 {
        self.system
            + self.instructions
            + self.tools
            + self.summary
            + self.messages
            + self.tool_results
    }
}

/// The parts of the request the chat's next round would send.
pub fn context_parts(env: &TurnEnv<'_>, session_id: i64) -> Result<ContextParts, TurnError> {
    let messages = conversation(env, session_id)?;
    let tools = turn_tools(env, session_id)?;
    let tokens = |m: &Message| estimate_tokens(std::slice::from_ref(m)) as u64;
    let mut parts = ContextParts::default();
    let instructions: u64 = env
        .cfg
        .instructions
        .context
        .instructions
        .iter()
        .map(|f| f.included / 4)
        .sum();
    for (i, m) in messages.iter().enumerate() {
        let n = tokens(m);
        match m.role {
            // The first system message is the prompt, instructions included.
            Role::System if i == 0 => {
                parts.instructions = instructions.min(n);
                parts.system += n - parts.instructions;
            }
            Role::System if m.content.starts_with(super::conversation::SUMMARY_HEAD) => {
                parts.summary += n;
            }
            Role::System => parts.system += n,
            Role::Tool => parts.tool_results += n,
            Role::User | Role::Assistant => parts.messages += n,
        }
    }
    parts.tools = super::compact::tool_tokens(&tools) as u64;
    Ok(parts)
}
