//! write_todos: the agent's private todo list. Stateless (docs/tasks.md, "Todo lists"): the
//! agent sends the whole list each time, and the list lives only in its own tool results.

use super::ToolCx;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use skald_api::tool_args;
use skald_api::{Tool, ToolCategory, ToolResult, tool_names as tn};

pub struct WriteTodos;

// The same list as skald-api's `WriteTodosArgs` (which the UI reads a call's arguments
// as), here with the schema the model is offered.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    todos: Vec<Todo>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Todo {
    content: String,
    status: Status,
}

#[derive(Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Status {
    Pending,
    InProgress,
    Completed,
}

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
        tool_args::schema_for::<Args>()
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
        let args: Args = tool_args::parse(args)?;
        Ok(format_todos(&args.todos))
    }
}

/// The checklist `write_todos` answers with.
fn format_todos(todos: &[Todo]) -> String {
    if todos.is_empty() {
        return "Todo list cleared.".to_string();
    }
    let done = todos
        .iter()
        .filter(|t| t.status == Status::Completed)
        .count();
    let mut out = format!("Todo list ({} items, {done} done):\n", todos.len());
    for t in todos {
        let mark = match t.status {
            Status::Completed => "[x]",
            Status::InProgress => "[~]",
            Status::Pending => "[ ]",
        };
        out.push_str(&format!("- {mark} {}\n", t.content));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn format_todos(args: &Value) -> String {
        super::format_todos(&tool_args::parse::<Args>(args.clone()).unwrap().todos)
    }

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
