//! write_todos: the agent's private todo list. Stateless, as tools.md says: the agent
//! sends the whole list each time, and the list lives only in its own tool results.

use super::ToolCx;
use serde_json::{Value, json};
use skald_api::records::{TodoStatus, WriteTodosArgs};
use skald_api::{Tool, ToolCategory, ToolResult, tool_names as tn};

pub struct WriteTodos;

impl WriteTodos {
    pub const NAME: &'static str = tn::WRITE_TODOS;
}

impl<'a> Tool<ToolCx<'a>> for WriteTodos {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Replace your private todo list; send the whole list with statuses each time."
    }

    fn parameters_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string"},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}
                        },
                        "required": ["content", "status"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["todos"],
            "additionalProperties": false
        })
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Session
    }

    fn kind(&self) -> skald_api::ToolKind {
        skald_api::ToolKind::Think
    }

    fn hook_alias(&self) -> Option<&'static str> {
        Some("TodoWrite")
    }

    fn execute(&self, _cx: &ToolCx<'a>, args: Value) -> ToolResult {
        Ok(format_todos(&args))
    }
}

/// The checklist `write_todos` answers with.
fn format_todos(args: &Value) -> String {
    // The schema was checked before the call ran, so the list reads.
    let todos = serde_json::from_value::<WriteTodosArgs>(args.clone())
        .map(|a| a.todos)
        .unwrap_or_default();
    if todos.is_empty() {
        return "Todo list cleared.".to_string();
    }
    let done = todos
        .iter()
        .filter(|t| t.status == TodoStatus::Completed)
        .count();
    let mut out = format!("Todo list ({} items, {done} done):\n", todos.len());
    for t in &todos {
        let mark = match t.status {
            TodoStatus::Completed => "[x]",
            TodoStatus::InProgress => "[~]",
            TodoStatus::Pending => "[ ]",
        };
        out.push_str(&format!("- {mark} {}\n", t.content));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn todos_are_a_checklist() {
        let out = format_todos(&json!({"todos": [
            {"content": "Read the code", "status": "completed"},
            {"content": "Fix the bug", "status": "in_progress"},
            {"content": "Run the tests", "status": "pending"}
        ]}));
        assert_eq!(
            out,
            "Todo list (3 items, 1 done):\n- [x] Read the code\n- [~] Fix the bug\n- [ ] Run the tests\n"
        );
        assert_eq!(format_todos(&json!({"todos": []})), "Todo list cleared.");
    }
}
