//! Tools the engine itself answers (tools.md "Not in ToolRegistry"): they act on the
//! session, not on the user's files, so they live here instead of in `skald-tools`.
//! Their names and schemas are defined once in `synthetic`.

use crate::synthetic;
use serde_json::Value;
use skald_api::tool_names as tn;
use skald_llm::ToolSpec;
use skald_store::Store;

/// Every engine tool answered here or by the turn (`ask_user_clarification`, which owns
/// the Inbox wait).
const ENGINE_TOOLS: &[&str] = &[
    tn::UPDATE_SCRATCHPAD,
    tn::ASK_USER_CLARIFICATION,
    tn::WRITE_TODOS,
    tn::LIST_ITEMS,
    tn::NOTIFY,
    tn::READ_AGENT_RESULT,
    tn::READ_NOTIFICATION,
    tn::ACTIVATE_TOOLS,
    tn::DELETE_CRON_JOB,
    tn::TOGGLE_ITEM,
    tn::REGISTER_MCP,
    tn::DELETE_MCP,
    tn::SET_SECRET,
    tn::LIST_SECRETS,
    tn::CONFIGURE_PLUGIN,
    tn::IMAGE_GENERATE,
    tn::IMAGE_GENERATE_PROVIDERS_LIST,
    tn::SHOW_FILE_TO_USER,
];

/// What a `set_secret` value is stored and shown as: the value itself is used once, for
/// the call, and kept nowhere else.
pub const HIDDEN_VALUE: &str = "[hidden: secret values are not kept]";

/// A call's arguments as they may be stored and shown: `set_secret`'s value hidden.
pub fn shown_args(name: &str, mut args: Value) -> Value {
    if name == tn::SET_SECRET
        && let Some(v) = args.get_mut("value")
        && !v.as_str().is_some_and(str::is_empty)
    {
        *v = Value::String(HIDDEN_VALUE.to_string());
    }
    args
}

/// Who is being offered tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offer {
    /// The root agent of its session (depth 0).
    pub root: bool,
    /// A background session: a task or a cron run.
    pub background: bool,
    /// A system agent (never asks the user).
    pub system: bool,
    /// The agent activated the `config` group: Skald's configuration tools are offered.
    pub config: bool,
    /// An image provider is running (the image-generation plugin is on).
    pub images: bool,
}

/// Whether `name` is offered to `who` (tools.md "Not in ToolRegistry"): `notify` only to
/// background agents, `read_agent_result` and `read_notification` only to the root of an
/// interactive chat, where results and notifications arrive; no questions from system
/// agents.
fn offered_to(name: &str, who: Offer) -> bool {
    match name {
        tn::NOTIFY => who.background,
        // Someone is looking at a chat; nobody at a background session.
        tn::SHOW_FILE_TO_USER => !who.background,
        tn::READ_AGENT_RESULT | tn::READ_NOTIFICATION => who.root && !who.background,
        tn::ASK_USER_CLARIFICATION => !who.system,
        // Config tools only after activate_tools(["config"]) (tools.md "Lazy config tool
        // group"); the approval rules still apply to them.
        tn::DELETE_CRON_JOB
        | tn::TOGGLE_ITEM
        | tn::REGISTER_MCP
        | tn::DELETE_MCP
        | tn::SET_SECRET
        | tn::LIST_SECRETS
        | tn::CONFIGURE_PLUGIN => who.config,
        // Provider tools stay on while their plugin runs (tools.md "Lazy config tool group").
        tn::IMAGE_GENERATE | tn::IMAGE_GENERATE_PROVIDERS_LIST => who.images,
        _ => true,
    }
}

/// Definitions of the engine tools offered to `who`.
pub fn offered(who: Offer) -> Vec<ToolSpec> {
    synthetic::synthetic_tools()
        .into_iter()
        .filter(|t| ENGINE_TOOLS.contains(&t.name.as_str()) && offered_to(&t.name, who))
        .map(|t| ToolSpec {
            name: t.name,
            description: t.description,
            parameters: t.parameters,
        })
        .collect()
}

/// The argument schema of an engine tool, if `name` is one.
pub fn schema(name: &str) -> Option<Value> {
    ENGINE_TOOLS.contains(&name).then(|| {
        synthetic::synthetic_tools()
            .into_iter()
            .find(|t| t.name == name)
            .map(|t| t.parameters)
    })?
}

/// What an engine tool runs against.
pub struct Ctx<'a> {
    pub store: &'a Store,
    pub session_id: i64,
    /// The calling agent's stack frame (`None`: the session's root agent).
    pub stack_id: Option<i64>,
    pub library: Option<&'a crate::agents::Library>,
    pub engine: Option<&'a crate::engine::Engine>,
}

/// Runs an engine tool whose arguments were validated against its schema.
pub fn run(ctx: &Ctx<'_>, name: &str, args: &Value) -> Result<String, String> {
    let (store, session_id) = (ctx.store, ctx.session_id);
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
        tn::NOTIFY => match ctx.engine {
            Some(engine) => engine.notify(session_id, args),
            None => Err("notifications cannot be sent from this run".into()),
        },
        tn::READ_AGENT_RESULT => read_agent_result(store, session_id, args),
        tn::READ_NOTIFICATION => read_notifications(store, session_id, args),
        tn::LIST_ITEMS => list_items(ctx, text("type")),
        tn::ACTIVATE_TOOLS => activate(ctx, args),
        tn::DELETE_CRON_JOB => {
            let id = args.get("job_id").and_then(Value::as_i64).unwrap_or(-1);
            let job = store.get_job(id).map_err(|e| e.to_string())?;
            store.delete_job(id).map_err(|e| e.to_string())?;
            Ok(format!("Deleted scheduled job {id} ({}).", job.name))
        }
        tn::TOGGLE_ITEM => toggle(ctx, args),
        tn::SET_SECRET => {
            let engine = ctx.engine.ok_or("secrets are not available in this run")?;
            let secrets = engine
                .secrets()
                .ok_or("secrets are not available in this run")?;
            let key = text("key").trim();
            let value = text("value");
            if value == HIDDEN_VALUE {
                return Err(
                    "the value was not kept when Skald stopped; ask the user to give it \
                            again (or to run `skald secrets set` in a terminal)"
                        .into(),
                );
            }
            let stored = secrets.set(key, value).map_err(|e| e.to_string())?;
            engine.refresh_redactor();
            Ok(match stored {
                None => format!("Secret `{key}` removed."),
                Some(_) => format!(
                    "Secret `{key}` stored. Refer to it as ${{secret:{key}}} (an MCP server's \
                     env or api_key); its value is never shown."
                ),
            })
        }
        tn::CONFIGURE_PLUGIN => {
            let engine = ctx.engine.ok_or("plugins are not available in this run")?;
            engine.plugins.configure(
                store,
                text("id").trim(),
                args.get("config"),
                args.get("enabled").and_then(Value::as_bool),
            )
        }
        tn::IMAGE_GENERATE_PROVIDERS_LIST => {
            let engine = ctx.engine.ok_or("plugins are not available in this run")?;
            let providers: Vec<Value> = engine
                .plugins
                .images
                .provider()
                .into_iter()
                .map(|p| serde_json::json!({"provider_id": p.id, "model": p.model, "size": p.size}))
                .collect();
            Ok(serde_json::json!({ "providers": providers }).to_string())
        }
        tn::LIST_SECRETS => {
            let engine = ctx.engine.ok_or("secrets are not available in this run")?;
            let secrets = engine
                .secrets()
                .ok_or("secrets are not available in this run")?;
            let names = secrets
                .list(args.get("pattern").and_then(Value::as_str))
                .map_err(|e| e.to_string())?;
            Ok(serde_json::json!({ "names": names }).to_string())
        }
        tn::DELETE_MCP => {
            let name = text("name").trim();
            store.delete_mcp_server(name).map_err(|e| e.to_string())?;
            if let Some(engine) = ctx.engine {
                engine.mcp.manager.stop(name);
            }
            Ok(format!(
                "Unregistered MCP server `{name}` and disconnected it."
            ))
        }
        other => Err(format!("`{other}` is not an engine tool")),
    }
}

/// The groups `activate_tools` knows: `config` and the registered MCP servers (a
/// turned-off server cannot be activated).
fn activate(ctx: &Ctx<'_>, args: &Value) -> Result<String, String> {
    let groups: Vec<&str> = args
        .get("groups")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for g in &groups {
        if *g == tn::CONFIG_GROUP {
            continue;
        }
        match ctx.store.find_mcp_server(g).map_err(|e| e.to_string())? {
            Some(s) if s.enabled => {}
            Some(_) => {
                return Err(format!(
                    "MCP server `{g}` is turned off; the user can turn it on"
                ));
            }
            None => {
                let servers: Vec<String> = ctx
                    .store
                    .list_mcp_servers()
                    .map_err(|e| e.to_string())?
                    .into_iter()
                    .map(|s| s.name)
                    .collect();
                return Err(format!(
                    "unknown tool group `{g}`: the groups are `config` (Skald's configuration \
                     tools){}",
                    if servers.is_empty() {
                        "; no MCP servers are configured".to_string()
                    } else {
                        format!(" and the MCP servers {}", servers.join(", "))
                    }
                ));
            }
        }
    }
    for g in &groups {
        ctx.store
            .grant_group(ctx.session_id, ctx.stack_id, g)
            .map_err(|e| e.to_string())?;
    }
    Ok(format!(
        "Activated {}; the tools are in your list from your next step.",
        groups.join(", ")
    ))
}

/// `toggle_item`: scheduled jobs can be turned on and off; MCP servers and plugins cannot
/// be configured in this version yet, so none is found.
fn toggle(ctx: &Ctx<'_>, args: &Value) -> Result<String, String> {
    let kind = args.get("kind").and_then(Value::as_str).unwrap_or("");
    let enabled = args
        .get("enabled")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let id = match &args["id"] {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    };
    match kind {
        "cron" => {
            let job_id: i64 = id
                .trim()
                .parse()
                .map_err(|_| format!("a job id is a number, not `{id}`"))?;
            let job =
                crate::cron::set_enabled(ctx.store, job_id, enabled).map_err(|e| e.to_string())?;
            Ok(if enabled {
                format!(
                    "Scheduled job {job_id} ({}) is on; next run {}.",
                    job.name,
                    job.next_run_at
                        .map_or_else(|| "never".to_string(), crate::cron::format_time)
                )
            } else {
                format!("Scheduled job {job_id} ({}) is off.", job.name)
            })
        }
        "mcp" => {
            ctx.store
                .set_mcp_enabled(&id, enabled)
                .map_err(|_| format!("no MCP server named `{id}` is registered"))?;
            if let Some(engine) = ctx.engine {
                let rec = ctx.store.get_mcp_server(&id).map_err(|e| e.to_string())?;
                engine.mcp.start(&rec);
            }
            Ok(if enabled {
                format!("MCP server `{id}` is on; it is connecting.")
            } else {
                format!("MCP server `{id}` is off and disconnected.")
            })
        }
        "plugin" => match ctx.engine {
            Some(engine) => engine
                .plugins
                .configure(ctx.store, &id, None, Some(enabled)),
            None => Err("plugins are not available in this run".into()),
        },
        other => Err(format!("unknown kind `{other}`: use mcp, plugin or cron")),
    }
}

/// A task's state. The result itself is delivered as a `task_completed` message when the
/// task ends, so a running task answers `not_ready`.
fn read_agent_result(store: &Store, session_id: i64, args: &Value) -> Result<String, String> {
    let id = args.get("task_id").and_then(Value::as_i64).unwrap_or(-1);
    let task = store
        .get_task(id)
        .ok()
        .filter(|t| t.parent_session_id == session_id)
        .ok_or_else(|| format!("this chat started no task {id}"))?;
    let v = match task.status {
        skald_store::TaskStatus::Running => serde_json::json!({
            "task_id": id,
            "status": "not_ready",
            "note": "The task is still running; its result will arrive as a task_completed \
                     message. Do not poll."
        }),
        status => serde_json::json!({
            "task_id": id,
            "status": status.as_str(),
            "note": "The task has ended; its result was delivered to this chat as a \
                     task_completed message."
        }),
    };
    Ok(v.to_string())
}

/// The notifications delivered to this chat, newest first.
fn read_notifications(store: &Store, session_id: i64, args: &Value) -> Result<String, String> {
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .map_or(20, |l| l.clamp(1, 100));
    let mut notes = Vec::new();
    for call in store
        .list_tool_calls(session_id)
        .map_err(|e| e.to_string())?
        .into_iter()
        .rev()
        // Only the deliveries themselves, not the model's own earlier reads of them.
        .filter(|c| {
            c.name == skald_store::NOTIFICATION_TOOL && c.tool_call_id.starts_with("notification_")
        })
    {
        let batch: Value =
            serde_json::from_str(call.result.as_deref().unwrap_or("{}")).unwrap_or(Value::Null);
        if let Some(list) = batch["notifications"].as_array() {
            notes.extend(list.iter().rev().cloned());
        }
        if notes.len() >= usize::try_from(limit).unwrap_or(20) {
            break;
        }
    }
    notes.truncate(usize::try_from(limit).unwrap_or(20));
    Ok(serde_json::json!({ "notifications": notes }).to_string())
}

/// `list_items`: agents, scheduled jobs, MCP servers or plugins.
fn list_items(ctx: &Ctx<'_>, kind: &str) -> Result<String, String> {
    let items: Vec<Value> = match kind {
        "agents" => {
            let library = ctx.library.ok_or("no agents are loaded in this run")?;
            library
                .agents()
                .map(|a| {
                    let mut v = serde_json::json!({
                        "id": a.id,
                        "name": a.meta.name,
                        "description": a.meta.description,
                        "type": a.meta.kind,
                    });
                    if let Some(i) = &a.meta.instructions {
                        v["instructions"] = Value::String(i.clone());
                    }
                    if let Some(m) = &a.meta.model {
                        v["client"] = Value::String(m.clone());
                    }
                    v
                })
                .collect()
        }
        "cron" => ctx
            .store
            .list_jobs()
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|j| {
                serde_json::json!({
                    "id": j.id,
                    "name": j.name,
                    "description": j.description,
                    "agent_id": j.agent_id,
                    "cron": j.cron,
                    "timezone": j.timezone,
                    "enabled": j.enabled,
                    "next_run": j.next_run_at.map(crate::cron::format_time),
                })
            })
            .collect(),
        "plugins" => match ctx.engine {
            Some(engine) => engine.plugins.describe(ctx.store),
            None => Vec::new(),
        },
        "mcp" => ctx
            .store
            .list_mcp_servers()
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|r| {
                let status = ctx
                    .engine
                    .and_then(|e| e.mcp.manager.status(&r.name))
                    .map_or_else(|| "not started".to_string(), |s| s.describe());
                serde_json::json!({
                    "name": r.name,
                    "transport": r.transport,
                    "description": r.description,
                    "enabled": r.enabled,
                    "status": status,
                })
            })
            .collect(),
        other => {
            return Err(format!(
                "unknown type `{other}`: use mcp, plugins, cron or agents"
            ));
        }
    };
    Ok(serde_json::json!({ "type": kind, "items": items }).to_string())
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
        let ctx = Ctx {
            store: &store,
            session_id: s.id,
            stack_id: None,
            library: None,
            engine: None,
        };
        run(
            &ctx,
            tn::UPDATE_SCRATCHPAD,
            &json!({"key": "goal", "value": "ship"}),
        )
        .unwrap();
        let msg = scratchpad_message(&store, s.id).unwrap().unwrap();
        assert!(msg.ends_with("- goal: ship\n"), "{msg}");
        assert!(
            run(
                &ctx,
                tn::UPDATE_SCRATCHPAD,
                &json!({"key": " ", "value": "x"})
            )
            .is_err()
        );
        assert!(schema(tn::WRITE_TODOS).is_some());
        assert!(schema(tn::READ_FILE).is_none());
        let names =
            |who: Offer| -> Vec<String> { offered(who).into_iter().map(|t| t.name).collect() };
        let chat = names(Offer {
            root: true,
            background: false,
            system: false,
            config: false,
            images: false,
        });
        assert!(chat.contains(&tn::READ_AGENT_RESULT.to_string()));
        assert!(chat.contains(&tn::READ_NOTIFICATION.to_string()));
        assert!(!chat.contains(&tn::NOTIFY.to_string()));
        let bg = names(Offer {
            root: true,
            background: true,
            system: false,
            config: false,
            images: false,
        });
        assert!(bg.contains(&tn::NOTIFY.to_string()));
        assert!(!bg.contains(&tn::READ_NOTIFICATION.to_string()));
        let sub = names(Offer {
            root: false,
            background: false,
            system: true,
            config: true,
            images: true,
        });
        assert!(!sub.contains(&tn::ASK_USER_CLARIFICATION.to_string()));
        assert!(!sub.contains(&tn::READ_AGENT_RESULT.to_string()));
        assert!(sub.contains(&tn::LIST_ITEMS.to_string()));
        assert!(sub.contains(&tn::TOGGLE_ITEM.to_string()));
        assert!(!chat.contains(&tn::DELETE_CRON_JOB.to_string()));
    }

    #[test]
    fn task_state_notifications_and_lists() {
        let store = Store::open_in_memory().unwrap();
        let chat = store
            .create_session(&skald_store::NewSession::default())
            .unwrap();
        let other = store
            .create_session(&skald_store::NewSession::default())
            .unwrap();
        let task = store
            .create_task(&skald_store::NewTask {
                parent_session_id: chat.id,
                parent_tool_call_id: None,
                session_id: other.id,
                agent_id: "researcher".into(),
                title: "t".into(),
                description: String::new(),
                prompt: "p".into(),
            })
            .unwrap();
        let ctx = |session_id| Ctx {
            store: &store,
            session_id,
            stack_id: None,
            library: None,
            engine: None,
        };
        let read = |session_id| {
            run(
                &ctx(session_id),
                tn::READ_AGENT_RESULT,
                &json!({"task_id": task.id}),
            )
        };
        assert!(read(chat.id).unwrap().contains("not_ready"));
        assert!(read(other.id).unwrap_err().contains("started no task"));
        store
            .finish_task(task.id, skald_store::TaskStatus::Done, "r")
            .unwrap();
        assert!(read(chat.id).unwrap().contains("\"status\":\"done\""));

        for summary in ["one", "two"] {
            store
                .add_delivery(
                    chat.id,
                    skald_store::DeliveryKind::Notification,
                    &json!({"summary": summary}),
                    0,
                )
                .unwrap();
        }
        store.take_deliveries(chat.id).unwrap();
        let notes: Value = serde_json::from_str(
            &run(&ctx(chat.id), tn::READ_NOTIFICATION, &json!({"limit": 1})).unwrap(),
        )
        .unwrap();
        assert_eq!(notes["notifications"], json!([{"summary": "two"}]));

        let cron: Value = serde_json::from_str(
            &run(&ctx(chat.id), tn::LIST_ITEMS, &json!({"type": "cron"})).unwrap(),
        )
        .unwrap();
        assert_eq!(cron["items"], json!([]));
        assert!(
            run(&ctx(chat.id), tn::LIST_ITEMS, &json!({"type": "agents"}))
                .unwrap_err()
                .contains("no agents")
        );
        assert!(
            run(
                &ctx(chat.id),
                tn::ACTIVATE_TOOLS,
                &json!({"groups": ["github"]})
            )
            .unwrap_err()
            .contains("unknown tool group `github`")
        );
        run(
            &ctx(chat.id),
            tn::ACTIVATE_TOOLS,
            &json!({"groups": ["config"]}),
        )
        .unwrap();
        assert_eq!(store.granted_groups(chat.id, None).unwrap(), ["config"]);
        assert!(
            run(
                &ctx(chat.id),
                tn::TOGGLE_ITEM,
                &json!({"kind": "mcp", "id": "github", "enabled": true})
            )
            .unwrap_err()
            .contains("no MCP server named `github`")
        );
    }
}
