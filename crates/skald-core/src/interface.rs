//! Tools the engine itself answers (tools.md "Not in ToolRegistry"): they act on the
//! session, not on the user's files, so they live here instead of in `skald-tools`.
//! Their names and schemas are defined once in `synthetic`.

use crate::synthetic;
use serde_json::Value;
use skald_api::tool_names as tn;
use skald_llm::ToolSpec;
use skald_store::Store;

/// The engine tools every agent is offered (delegation is offered by depth, in `turn`).
/// `ask_user_clarification` is answered by the turn, which owns the Inbox wait.
const OFFERED: &[&str] = &[
    tn::UPDATE_SCRATCHPAD,
    tn::ASK_USER_CLARIFICATION,
    tn::WRITE_TODOS,
];

/// Definitions of the engine tools offered to agents.
pub fn offered() -> Vec<ToolSpec> {
    synthetic::synthetic_tools()
        .into_iter()
        .filter(|t| OFFERED.contains(&t.name.as_str()))
        .map(|t| ToolSpec {
            name: t.name,
            description: t.description,
            parameters: t.parameters,
        })
        .collect()
}

/// The argument schema of an engine tool, if `name` is one.
pub fn schema(name: &str) -> Option<Value> {
    OFFERED.contains(&name).then(|| {
        synthetic::synthetic_tools()
            .into_iter()
            .find(|t| t.name == name)
            .map(|t| t.parameters)
    })?
}

/// Runs an engine tool whose arguments were validated against its schema.
pub fn run(store: &Store, session_id: i64, name: &str, args: &Value) -> Result<String, String> {
    let text = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or("");
    match name {
        tn::UPDATE_SCRATCHPAD => {
            let key = text("key").trim();
            if key.is_empty() {
                return Err("invalid argument `key`: must not be empty".into());
            }
            let value = text("value");
            store
                .set_scratchpad(session_id, key, value)
                .map_err(|e| e.to_string())?;
            Ok(if value.is_empty() {
                format!("Removed `{key}` from the scratchpad.")
            } else {
                format!("Scratchpad `{key}` set; every agent of this session sees it.")
            })
        }
        tn::WRITE_TODOS => Ok(format_todos(args)),
        other => Err(format!("`{other}` is not an engine tool")),
    }
}

/// The checklist `write_todos` answers with. Stateless: the list lives only in the
/// calling agent's own tool results, as tools.md says.
fn format_todos(args: &Value) -> String {
    let todos = args
        .get("todos")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if todos.is_empty() {
        return "Todo list cleared.".to_string();
    }
    let done = todos.iter().filter(|t| t["status"] == "completed").count();
    let mut out = format!("Todo list ({} items, {done} done):\n", todos.len());
    for t in &todos {
        let mark = match t["status"].as_str() {
            Some("completed") => "[x]",
            Some("in_progress") => "[~]",
            _ => "[ ]",
        };
        out.push_str(&format!(
            "- {mark} {}\n",
            t["content"].as_str().unwrap_or("")
        ));
    }
    out
}

/// The scratchpad as the agents read it, or nothing when it is empty.
pub fn scratchpad_message(
    store: &Store,
    session_id: i64,
) -> Result<Option<String>, skald_store::StoreError> {
    let entries = store.scratchpad(session_id)?;
    if entries.is_empty() {
        return Ok(None);
    }
    let mut out = "Session scratchpad — notes shared by every agent of this session \
                   (update with update_scratchpad):\n"
        .to_string();
    for (k, v) in entries {
        out.push_str(&format!("- {k}: {v}\n"));
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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

    #[test]
    fn scratchpad_round_trip() {
        let store = Store::open_in_memory().unwrap();
        let s = store
            .create_session(&skald_store::NewSession::default())
            .unwrap();
        assert_eq!(scratchpad_message(&store, s.id).unwrap(), None);
        run(
            &store,
            s.id,
            tn::UPDATE_SCRATCHPAD,
            &json!({"key": "goal", "value": "ship"}),
        )
        .unwrap();
        let msg = scratchpad_message(&store, s.id).unwrap().unwrap();
        assert!(msg.ends_with("- goal: ship\n"), "{msg}");
        assert!(
            run(
                &store,
                s.id,
                tn::UPDATE_SCRATCHPAD,
                &json!({"key": " ", "value": "x"})
            )
            .is_err()
        );
        assert!(schema(tn::WRITE_TODOS).is_some());
        assert!(schema(tn::READ_FILE).is_none());
        let names: Vec<String> = offered().into_iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            [
                tn::UPDATE_SCRATCHPAD,
                tn::ASK_USER_CLARIFICATION,
                tn::WRITE_TODOS
            ]
        );
    }
}
