//! Core tools that reach the model outside the registry (tools.md "Dynamically-injected
//! tools"). The engine injects them per turn; they are listed here once, with their
//! argument schemas, so they can be gated in the approval UI before first use and so
//! their labels are right in every history view.

use crate::catalog::{ToolInfo, ToolSource};
use serde_json::{Value, json};
use skald_api::{ToolCategory, tool_names as tn};

struct Synthetic {
    name: &'static str,
    category: Option<ToolCategory>,
    description: &'static str,
    parameters: fn() -> Value,
}

const SYNTHETIC: &[Synthetic] = &[
    Synthetic {
        name: tn::EXECUTE_TASK,
        category: Some(ToolCategory::Subagent),
        description: "Delegate work to a task agent: `sync` waits for its answer, `async` runs it \
                      in the background and reports back when done, `cron` schedules it.",
        parameters: || {
            json!({
                "type": "object",
                "properties": {
                    "mode": {"type": "string", "enum": ["sync", "async", "cron"]},
                    "title": {"type": "string", "description": "Short title shown to the user."},
                    "description": {"type": "string", "description": "One line on what the task does."},
                    "prompt": {"type": "string", "description": "Full instructions for the task agent."},
                    "agent_id": {"type": "string", "description": "A task agent's id."},
                    "cron": {"type": "string", "description": "Cron expression with seconds, for mode=cron."}
                },
                "required": ["mode", "title", "prompt", "agent_id"],
                "additionalProperties": false
            })
        },
    },
    Synthetic {
        name: tn::EXECUTE_SUBTASK,
        category: Some(ToolCategory::Subagent),
        description: "Run a task agent synchronously and return its final answer.",
        parameters: || {
            json!({
                "type": "object",
                "properties": {
                    "agent_id": {"type": "string"},
                    "prompt": {"type": "string"},
                    "title": {"type": "string"},
                    "description": {"type": "string"}
                },
                "required": ["agent_id", "prompt"],
                "additionalProperties": false
            })
        },
    },
    Synthetic {
        name: tn::UPDATE_SCRATCHPAD,
        category: None,
        description: "Set a key on the session's shared scratchpad, seen by every agent of the \
                      session. An empty value removes the key.",
        parameters: || {
            json!({
                "type": "object",
                "properties": {"key": {"type": "string"}, "value": {"type": "string"}},
                "required": ["key", "value"],
                "additionalProperties": false
            })
        },
    },
    Synthetic {
        name: tn::ASK_USER_CLARIFICATION,
        category: None,
        description: "Ask the user a question and wait for the answer.",
        parameters: || {
            json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "question": {"type": "string"},
                    "suggested_answers": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["question"],
                "additionalProperties": false
            })
        },
    },
    Synthetic {
        name: tn::WRITE_TODOS,
        category: None,
        description: "Replace your private todo list; send the whole list with statuses each time.",
        parameters: || {
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
        },
    },
    Synthetic {
        name: tn::ACTIVATE_TOOLS,
        category: Some(ToolCategory::Config),
        description: "Bring tool groups into your tool list from the next step: MCP server names, \
                      or `config` for Skald's configuration tools.",
        parameters: || {
            json!({
                "type": "object",
                "properties": {"groups": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
                "required": ["groups"],
                "additionalProperties": false
            })
        },
    },
    Synthetic {
        name: tn::NOTIFY,
        category: None,
        description: "Send a notification to the user's home chat.",
        parameters: || {
            json!({
                "type": "object",
                "properties": {
                    "source": {"type": "string"},
                    "event_type": {"type": "string"},
                    "summary": {"type": "string"},
                    "event_time": {"type": "string", "description": "RFC 3339 time of the event."},
                    "refs": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["source", "event_type", "summary"],
                "additionalProperties": false
            })
        },
    },
    Synthetic {
        name: tn::READ_AGENT_RESULT,
        category: Some(ToolCategory::Introspection),
        description: "Check on a background task started with execute_task mode=async. Its result \
                      arrives by itself as a task_completed message when it ends; this only says \
                      whether it is still running.",
        parameters: || {
            json!({
                "type": "object",
                "properties": {"task_id": {"type": "integer"}},
                "required": ["task_id"],
                "additionalProperties": false
            })
        },
    },
    Synthetic {
        name: tn::READ_NOTIFICATION,
        category: Some(ToolCategory::Introspection),
        description: "Read the latest notifications background agents sent to this chat.",
        parameters: || {
            json!({
                "type": "object",
                "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 100}},
                "additionalProperties": false
            })
        },
    },
    Synthetic {
        name: tn::LIST_ITEMS,
        category: Some(ToolCategory::Introspection),
        description: "List what is configured: `agents` (id, name, description, instructions), \
                      `cron` (scheduled jobs), `mcp` (MCP servers) or `plugins`.",
        parameters: || {
            json!({
                "type": "object",
                "properties": {"type": {"type": "string", "enum": ["mcp", "plugins", "cron", "agents"]}},
                "required": ["type"],
                "additionalProperties": false
            })
        },
    },
    Synthetic {
        name: tn::REGISTER_MCP,
        category: Some(ToolCategory::Config),
        description: "Register an MCP server and connect to it now; says whether it is ready and \
                      which tools it has. stdio: `command` + `args` (+ `env`); http: `url` (+ \
                      `api_key` as a reference like ${env:NAME}, never the token itself).",
        parameters: || {
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "Short id: letters, digits, - and _."},
                    "transport": {"type": "string", "enum": ["stdio", "http"]},
                    "command": {"type": "string"},
                    "args": {"type": "array", "items": {"type": "string"}},
                    "env": {"type": "object", "additionalProperties": {"type": "string"}},
                    "url": {"type": "string"},
                    "api_key": {"type": "string"},
                    "description": {"type": "string"},
                    "friendly_name": {"type": "string"}
                },
                "required": ["name"],
                "additionalProperties": false
            })
        },
    },
    Synthetic {
        name: tn::DELETE_MCP,
        category: Some(ToolCategory::Config),
        description: "Unregister an MCP server and disconnect it.",
        parameters: || {
            json!({
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
                "additionalProperties": false
            })
        },
    },
    Synthetic {
        name: tn::SET_SECRET,
        category: Some(ToolCategory::Config),
        description: "Store a secret (a token, a password) under a name; an empty value deletes \
                      it. Refer to it as ${secret:NAME} in an MCP server's env or api_key. The \
                      value is never shown again, to you or in logs.",
        parameters: || {
            json!({
                "type": "object",
                "properties": {
                    "key": {"type": "string", "description": "Letters, digits, _ - and ."},
                    "value": {"type": "string"}
                },
                "required": ["key", "value"],
                "additionalProperties": false
            })
        },
    },
    Synthetic {
        name: tn::LIST_SECRETS,
        category: Some(ToolCategory::Config),
        description: "List the names of stored secrets (never their values); `pattern` filters \
                      by a substring or a `prefix*`.",
        parameters: || {
            json!({
                "type": "object",
                "properties": {"pattern": {"type": "string"}},
                "additionalProperties": false
            })
        },
    },
    Synthetic {
        name: tn::CONFIGURE_PLUGIN,
        category: Some(ToolCategory::Config),
        description: "Configure a plugin (see list_items type=plugins for each one's schema) and \
                      turn it on or off; the configuration is checked before it is applied.",
        parameters: || {
            json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "config": {"type": "object"},
                    "enabled": {"type": "boolean"}
                },
                "required": ["id"],
                "additionalProperties": false
            })
        },
    },
    Synthetic {
        name: tn::IMAGE_GENERATE_PROVIDERS_LIST,
        category: Some(ToolCategory::Introspection),
        description: "List the image-generation providers image_generate can use.",
        parameters: || json!({"type": "object", "properties": {}, "additionalProperties": false}),
    },
    Synthetic {
        name: tn::DELETE_CRON_JOB,
        category: Some(ToolCategory::Config),
        description: "Delete a scheduled job and its runs' records (see list_items type=cron).",
        parameters: || {
            json!({
                "type": "object",
                "properties": {"job_id": {"type": "integer"}},
                "required": ["job_id"],
                "additionalProperties": false
            })
        },
    },
    Synthetic {
        name: tn::TOGGLE_ITEM,
        category: Some(ToolCategory::Config),
        description: "Turn an MCP server, a plugin or a scheduled job on or off.",
        parameters: || {
            json!({
                "type": "object",
                "properties": {
                    "kind": {"type": "string", "enum": ["mcp", "plugin", "cron"]},
                    "id": {"type": ["string", "integer"], "description": "The server's or plugin's name, or the job's id."},
                    "enabled": {"type": "boolean"}
                },
                "required": ["kind", "id", "enabled"],
                "additionalProperties": false
            })
        },
    },
    Synthetic {
        name: tn::SHOW_FILE_TO_USER,
        category: None,
        description: "Open a file in the user's viewer: Markdown, code, text, images, SVG, PDF, \
                      HTML, and LaTeX. For LaTeX pass the .tex source, never a built .pdf: only \
                      the source is compiled, cached and watched for changes.",
        parameters: || {
            json!({
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
                "additionalProperties": false
            })
        },
    },
    Synthetic {
        name: tn::IMAGE_GENERATE,
        category: Some(ToolCategory::Config),
        description: "Generate an image with a configured provider; returns its path and URL.",
        parameters: || {
            json!({
                "type": "object",
                "properties": {
                    "provider_id": {"type": "string"},
                    "prompt": {"type": "string"},
                    "extra_params": {"type": "object"}
                },
                "required": ["provider_id", "prompt"],
                "additionalProperties": false
            })
        },
    },
];

/// The static list of core-owned tools injected outside the registry.
pub fn synthetic_tools() -> Vec<ToolInfo> {
    SYNTHETIC
        .iter()
        .map(|s| ToolInfo {
            name: s.name.to_string(),
            description: s.description.to_string(),
            category: s.category,
            parameters: (s.parameters)(),
            source: ToolSource::Synthetic,
            sub_agents_only: false,
            root_agent_only: false,
        })
        .collect()
}

pub fn is_synthetic(name: &str) -> bool {
    SYNTHETIC.iter().any(|s| s.name == name)
}

/// Labels for synthetic tools, which have no `Tool::describe`. `None` when the name has no
/// special label.
pub(crate) fn describe(name: &str, args: &Value) -> Option<String> {
    let str_arg = |key: &str| {
        args.get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    match name {
        tn::SHOW_FILE_TO_USER => Some(match str_arg("path") {
            Some(path) => format!("{name} `{path}`"),
            None => name.to_string(),
        }),
        tn::EXECUTE_TASK | tn::EXECUTE_SUBTASK | tn::RUN_SUBTASK => {
            Some(describe_sub_agent_call(name, args))
        }
        _ => None,
    }
}

/// `execute_task ⚡ → software-engineer: Refactor auth module`: what is being delegated,
/// to whom, and for execute_task in which mode.
fn describe_sub_agent_call(name: &str, args: &Value) -> String {
    let get = |key: &str| {
        args.get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let mut head = name.to_string();
    if name == tn::EXECUTE_TASK {
        let mode = match get("mode") {
            Some("sync") => Some("⚡"),
            Some("async") => Some("🚀"),
            Some("cron") => Some("📅"),
            _ => None,
        };
        if let Some(icon) = mode {
            head = format!("{head} {icon}");
        }
    }
    let what = get("description").or_else(|| get("title"));
    match (get("agent_id"), what) {
        (Some(agent), Some(what)) => format!("{head} → {agent}: {what}"),
        (Some(agent), None) => format!("{head} → {agent}"),
        (None, Some(what)) => format!("{head}: {what}"),
        (None, None) => head,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::validate_args;

    #[test]
    fn sub_agent_labels() {
        let args = json!({"mode": "sync", "agent_id": "software-engineer",
                          "description": "Refactor auth module", "title": "Refactor"});
        assert_eq!(
            describe(tn::EXECUTE_TASK, &args).unwrap(),
            "execute_task ⚡ → software-engineer: Refactor auth module"
        );
        let args = json!({"mode": "async", "agent_id": "researcher", "title": "Survey"});
        assert_eq!(
            describe(tn::EXECUTE_TASK, &args).unwrap(),
            "execute_task 🚀 → researcher: Survey"
        );
        let args = json!({"mode": "cron"});
        assert_eq!(
            describe(tn::EXECUTE_TASK, &args).unwrap(),
            "execute_task 📅"
        );
        assert_eq!(
            describe(tn::EXECUTE_SUBTASK, &json!({"agent_id": "a"})).unwrap(),
            "execute_subtask → a"
        );
        assert_eq!(
            describe(tn::RUN_SUBTASK, &json!({})).unwrap(),
            "run_subtask"
        );
        assert_eq!(describe("other", &json!({})), None);
    }

    #[test]
    fn every_schema_is_a_valid_object_schema() {
        for tool in synthetic_tools() {
            assert_eq!(tool.parameters["type"], "object", "{}", tool.name);
            // An empty object fails exactly when the schema requires something.
            let requires = tool.parameters.get("required").is_some();
            assert_eq!(
                validate_args(&tool.parameters, &json!({})).is_err(),
                requires,
                "{}",
                tool.name
            );
        }
        assert!(is_synthetic(tn::WRITE_TODOS));
        assert!(!is_synthetic(tn::READ_FILE));
    }
}
