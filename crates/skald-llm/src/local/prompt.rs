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

/// Said when the model's own template has no system prompt of its own and none was given.
const DEFAULT_SYSTEM: &str = "You are a helpful assistant.";

/// The system message's tool section.
pub fn tools_section(tools: &[ToolSpec]) -> String {
    let mut out = String::from(
        "\n\n# Tools\n\nYou can call tools to act for the user. Each is described by a JSON \
         object with its name, what it does and a JSON schema of its arguments:\n<tools>\n",
    );
    for t in tools {
        let def = serde_json::json!({
            "name": t.name,
            "description": t.description,
            "parameters": t.parameters,
        });
        out.push_str(&def.to_string());
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

pub fn turns(messages: &[Message], tools: &[ToolSpec]) -> Vec<Turn> {
    let mut system: Vec<&str> = messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| m.content.as_str())
        .collect();
    if system.is_empty() {
        system.push(DEFAULT_SYSTEM);
    }
    let mut system = system.join("\n\n");
    if !tools.is_empty() {
        system.push_str(&tools_section(tools));
    }
    let mut out = vec![Turn {
        role: "system",
        content: system,
    }];
    for m in messages {
        match m.role {
            Role::System => {}
            Role::User => out.push(Turn {
                role: "user",
                content: m.content.clone(),
            }),
            Role::Assistant => {
                let mut content = m.content.clone();
                for c in &m.tool_calls {
                    let args: serde_json::Value = serde_json::from_str(&c.arguments)
                        .unwrap_or_else(|_| serde_json::Value::String(c.arguments.clone()));
                    let call = serde_json::json!({"name": c.name, "arguments": args});
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
                        content: block,
                    }),
                }
            }
        }
    }
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
            "<tool_call>\n{\"arguments\":{\"path\":\".\"},\"name\":\"list_files\"}\n</tool_call>\n\
             <tool_call>\n{\"arguments\":{\"path\":\"src\"},\"name\":\"list_files\"}\n</tool_call>"
        );
        assert_eq!(
            t[3].content,
            "<tool_response>\na.txt\n</tool_response>\n<tool_response>\nmain.rs\n</tool_response>"
        );
    }

    #[test]
    fn without_tools_or_a_system_message() {
        let t = turns(&[Message::user("hi")], &[]);
        assert_eq!(t[0].content, DEFAULT_SYSTEM);
        assert!(!t[0].content.contains("# Tools"));
    }
}
