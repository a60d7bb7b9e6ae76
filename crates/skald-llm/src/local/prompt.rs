//! A conversation as a local model reads it: plain (role, text) turns for its chat
//! template. The tools are described in the system message and calls are written in the
//! `<tool_call>` convention (see `calls`); tool results go back as the user's turn in
//! `<tool_response>` blocks, since most small models' templates know no `tool` role.

use super::calls::{CLOSE, OPEN};
use crate::{Message, Role, ToolSpec};

/// One turn for the chat template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    pub role: &'static str,
    pub content: String,
}

/// A tool as the system message describes it. Structs, not JSON maps, so that the fields
/// come in the order the prompt teaches (name first) whatever the map's ordering.
#[derive(serde::Serialize)]
struct ToolDef<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a serde_json::Value,
}

/// A call as the model wrote it, in the order the tool section shows.
#[derive(serde::Serialize)]
struct CallDef<'a> {
    name: &'a str,
    arguments: &'a serde_json::Value,
}

/// One line of JSON. Serialising these borrowed structs of strings and values cannot
/// fail; an empty object stands in if it ever did.
fn json_line<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "{}".to_string())
}

/// Said when the model's own template has no system prompt of its own and none was given.
const DEFAULT_SYSTEM: &str = "You are a helpful assistant.";

/// The system message's tool section.
pub fn tools_section(tools: &[ToolSpec]) -> String {
    let mut out = String::from(
        "\n\n# Tools\n\nYou can call tools to act for the user. Each is described by a JSON \
         object with its name, what it does and a JSON schema of its arguments:\n<tools>\n",
    );
    for t in tools {
        let def = ToolDef {
            name: &t.name,
            description: &t.description,
            parameters: &t.parameters,
        };
        out.push_str(&json_line(&def));
        out.push('\n');
    }
    out.push_str(&format!(
        "</tools>\n\nTo call a tool, answer with exactly this and nothing after it:\n\
         {OPEN}\n{{\"name\": \"<tool name>\", \"arguments\": {{<the arguments as JSON>}}}}\n{CLOSE}\n\
         The result comes back in a <tool_response> block. When no tool is needed, answer \
         in plain text."
    ));
    out
}

/// The turns of a conversation, ordered so that what every chat shares comes first: the
/// agent's instructions (the first system message), then the tools, then the other
/// system messages that open the conversation (a summary, the scratchpad). A system
/// message later in the conversation — the time and working directory at its end — joins
/// the nearest user turn: a model's context keeps the tokens of its last prompt, and a
/// note that changes every few minutes must not come before the long part that does not.
pub fn turns(messages: &[Message], tools: &[ToolSpec]) -> Vec<Turn> {
    let opening = messages
        .iter()
        .take_while(|m| m.role == Role::System)
        .count();
    let mut system = messages
        .first()
        .filter(|_| opening > 0)
        .map_or(DEFAULT_SYSTEM, |m| m.content.as_str())
        .to_string();
    if !tools.is_empty() {
        system.push_str(&tools_section(tools));
    }
    for m in messages.iter().take(opening).skip(1) {
        system.push_str("\n\n");
        system.push_str(&m.content);
    }
    let mut out = vec![Turn {
        role: "system",
        content: system,
    }];
    // Later system notes waiting for the next user turn (the last one was the model's).
    let mut notes: Vec<&str> = Vec::new();
    for m in messages.iter().skip(opening) {
        match m.role {
            Role::System => match out.last_mut() {
                Some(last) if last.role == "user" => {
                    last.content.push_str("\n\n");
                    last.content.push_str(&m.content);
                }
                _ => notes.push(&m.content),
            },
            Role::User => out.push(Turn {
                role: "user",
                content: with_notes(&mut notes, m.content.clone()),
            }),
            Role::Assistant => {
                let mut content = m.content.clone();
                for c in &m.tool_calls {
                    let args: serde_json::Value = serde_json::from_str(&c.arguments)
                        .unwrap_or_else(|_| serde_json::Value::String(c.arguments.clone()));
                    let call = json_line(&CallDef {
                        name: &c.name,
                        arguments: &args,
                    });
                    if !content.is_empty() {
                        content.push('\n');
                    }
                    content.push_str(&format!("{OPEN}\n{call}\n{CLOSE}"));
                }
                out.push(Turn {
                    role: "assistant",
                    content,
                });
            }
            Role::Tool => {
                let block = format!("<tool_response>\n{}\n</tool_response>", m.content);
                // Results of one round's calls share one turn, as they were asked together.
                match out.last_mut() {
                    Some(last)
                        if last.role == "user" && last.content.ends_with("</tool_response>") =>
                    {
                        last.content.push('\n');
                        last.content.push_str(&block);
                    }
                    _ => out.push(Turn {
                        role: "user",
                        content: with_notes(&mut notes, block),
                    }),
                }
            }
        }
    }
    if !notes.is_empty() {
        out.push(Turn {
            role: "user",
            content: notes.join("\n\n"),
        });
    }
    out
}

/// `content` after the system notes that waited for it.
fn with_notes(notes: &mut Vec<&str>, content: String) -> String {
    if notes.is_empty() {
        return content;
    }
    let mut out = notes.join("\n\n");
    notes.clear();
    out.push_str("\n\n");
    out.push_str(&content);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolCall;
    use serde_json::json;

    #[test]
    fn tools_calls_and_results_become_plain_turns() {
        let tools = vec![ToolSpec {
            name: "list_files".into(),
            description: "List a folder".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }];
        let messages = vec![
            Message::system("Be brief."),
            Message::user("What is here?"),
            Message::assistant(
                "",
                vec![
                    ToolCall {
                        id: "c1".into(),
                        name: "list_files".into(),
                        arguments: r#"{"path": "."}"#.into(),
                    },
                    ToolCall {
                        id: "c2".into(),
                        name: "list_files".into(),
                        arguments: r#"{"path": "src"}"#.into(),
                    },
                ],
            ),
            Message::tool_result("c1", "a.txt"),
            Message::tool_result("c2", "main.rs"),
        ];
        let t = turns(&messages, &tools);
        let roles: Vec<&str> = t.iter().map(|t| t.role).collect();
        assert_eq!(roles, ["system", "user", "assistant", "user"]);
        assert!(t[0].content.starts_with("Be brief.\n\n# Tools"));
        assert!(t[0].content.contains(r#""name":"list_files""#));
        assert_eq!(
            t[2].content,
            "<tool_call>\n{\"name\":\"list_files\",\"arguments\":{\"path\":\".\"}}\n</tool_call>\n\
             <tool_call>\n{\"name\":\"list_files\",\"arguments\":{\"path\":\"src\"}}\n</tool_call>"
        );
        assert_eq!(
            t[3].content,
            "<tool_response>\na.txt\n</tool_response>\n<tool_response>\nmain.rs\n</tool_response>"
        );
    }

    #[test]
    fn what_every_chat_shares_comes_first_and_the_changing_notes_last() {
        let tools = vec![ToolSpec {
            name: "read_file".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object"}),
        }];
        let chat = |tail: &str| {
            vec![
                Message::system("Be brief."),
                Message::system("Scratchpad: none"),
                Message::user("hi"),
                Message::assistant("hello", vec![]),
                Message::system("The user stopped the last turn."),
                Message::user("again"),
                Message::system(tail),
            ]
        };
        let t = turns(&chat("Current time: 10:00"), &tools);
        let roles: Vec<&str> = t.iter().map(|t| t.role).collect();
        assert_eq!(roles, ["system", "user", "assistant", "user"]);
        // Instructions, tools, then the opening notes.
        assert!(t[0].content.starts_with("Be brief.\n\n# Tools"));
        assert!(t[0].content.ends_with("\n\nScratchpad: none"));
        assert!(!t[0].content.contains("Current time"));
        // A note after the model's turn opens the next user turn; the one at the end
        // closes the last.
        assert_eq!(
            t[3].content,
            "The user stopped the last turn.\n\nagain\n\nCurrent time: 10:00"
        );
        // A later time changes only the last turn.
        let later = turns(&chat("Current time: 10:15"), &tools);
        assert_eq!(t[..3], later[..3]);
        // After tool results, the note joins their turn; with only the model's turn
        // before it, it becomes a user turn of its own.
        let mut calls = chat("now");
        calls.truncate(3);
        calls.push(Message::assistant(
            "",
            vec![ToolCall {
                id: "c1".into(),
                name: "read_file".into(),
                arguments: "{}".into(),
            }],
        ));
        calls.push(Message::tool_result("c1", "text"));
        calls.push(Message::system("now"));
        let t = turns(&calls, &tools);
        assert_eq!(
            t.last().map(|t| t.content.as_str()),
            Some("<tool_response>\ntext\n</tool_response>\n\nnow")
        );
        let t = turns(
            &[
                Message::user("hi"),
                Message::assistant("hello", vec![]),
                Message::system("now"),
            ],
            &[],
        );
        assert_eq!(t[0].content, DEFAULT_SYSTEM);
        assert_eq!((t[3].role, t[3].content.as_str()), ("user", "now"));
    }

    #[test]
    fn without_tools_or_a_system_message() {
        let t = turns(&[Message::user("hi")], &[]);
        assert_eq!(t[0].content, DEFAULT_SYSTEM);
        assert!(!t[0].content.contains("# Tools"));
    }
}
