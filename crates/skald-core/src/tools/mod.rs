//! Every tool a model can be offered, in one list (docs/tools.md, "Catalogue").
//! The file and shell tools come from `skald-tools`; the tools that act on the session —
//! its scratchpad, the Inbox, sub-agents, Skald's own configuration — are here, one file
//! each, named after the tool. All of them implement the one `Tool` trait and sit in the
//! `ToolRegistry`, so their category, label, target path, schema and visibility are read
//! from the same place, and the turn runs every one of them through `drive_execution`.
//!
//! A tool that needs the turn gets it from the `ToolCx` the driver passes to `run`: the
//! session, the agent's frame, the engine, the stop token and where events go.

mod delegate;

pub use set_secret::HIDDEN_VALUE;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::Value;
use skald_api::{ExecutionOutcome, StateCell, ToolError, ToolExecution, ToolExecutionState};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

pub use crate::engine::tool_context::{Call, DynTool, ToolCx, ToolOrigin};

/// The tools that act on the session, in the order they are offered after the file tools:
/// besides its own file, the one line a new engine tool adds.
macro_rules! engine_tools {
    ($callback:ident) => {
        $callback! {
            execute_task::ExecuteTask,
            execute_subtask::ExecuteSubtask,
            update_scratchpad::UpdateScratchpad,
            ask_user_clarification::AskUserClarification,
            write_todos::WriteTodos,
            activate_tools::ActivateTools,
            notify::Notify,
            read_agent_result::ReadAgentResult,
            read_notification::ReadNotification,
            list_items::ListItems,
            register_mcp::RegisterMcp,
            delete_mcp::DeleteMcp,
            read_mcp_resource::ReadMcpResource,
            search_mcp_tools::SearchMcpTools,
            set_secret::SetSecret,
            list_secrets::ListSecrets,
            configure_plugin::ConfigurePlugin,
            image_generate_providers_list::ImageGenerateProvidersList,
            delete_cron_job::DeleteCronJob,
            toggle_item::ToggleItem,
            show_file_to_user::ShowFileToUser,
            image_generate::ImageGenerate,
            exit_plan_mode::ExitPlanMode,
        }
    };
}

macro_rules! declare_engine_tools {
    ($($module:ident :: $tool:ident),* $(,)?) => {
        $(mod $module;)*

        const ENGINE_NAMES: &[&str] = &[$($module::$tool::NAME),*];

        fn engine_tools() -> Vec<Arc<DynTool>> {
            vec![$(Arc::new($module::$tool)),*]
        }
    };
}

macro_rules! declare_file_tools {
    ($($module:ident :: $tool:ident),* $(,)?) => {
        fn file_tools() -> Vec<Arc<DynTool>> {
            vec![$(Arc::new(skald_tools::$tool)),*]
        }
    };
}

engine_tools!(declare_engine_tools);
skald_tools::file_tools!(declare_file_tools);

// One name, one tool: a second tool under a name already taken fails the build.
const _: () = assert!(
    !skald_api::kind::has_duplicate(&[
        skald_tools::NAMES,
        ENGINE_NAMES,
        &[skald_tools::Restart::NAME]
    ]),
    "two tools have one name"
);

/// Every tool Skald ships, each with its kind, in the order they are offered. `restart` is
/// not here: only a carrier that can restart the program registers it (skald-tools
/// `Restart`).
pub fn all() -> Vec<(Arc<DynTool>, ToolOrigin)> {
    file_tools()
        .into_iter()
        .map(|t| (t, ToolOrigin::Files))
        .chain(engine_tools().into_iter().map(|t| (t, ToolOrigin::Engine)))
        .collect()
}

/// The tool called `name` among every tool Skald ships, for what it declares about itself
/// where no registry is at hand (an editor's view of a call, a hook's matcher).
pub fn named(name: &str) -> Option<Arc<DynTool>> {
    all().into_iter().map(|(t, _)| t).find(|t| t.name() == name)
}

/// An argument that takes any JSON object. Its schema is `{"type": "object"}`, as the
/// definitions offered always said: a derived `Map` would add `additionalProperties`, and
/// `schema_with` on an optional field would make it required.
#[derive(serde::Deserialize)]
#[serde(transparent)]
pub(crate) struct AnyObject(pub serde_json::Map<String, Value>);

impl schemars::JsonSchema for AnyObject {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AnyObject".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "object"})
    }
}

/// A store error as the model reads it.
pub(crate) fn store_err(e: skald_store::StoreError) -> ToolError {
    ToolError::failed(e.to_string())
}

/// The execution of a tool that watches the turn's stop token itself and winds down on
/// its own — closing the Inbox item it waits on, ending the sub-agent it runs — so its
/// stored state stays true. `stop` leaves it to do so (within `STOP_GRACE`, after which
/// the driver drops it) instead of dropping the work mid-way as `SimpleExecution` does.
pub(crate) struct Cooperative<'a> {
    work: tokio::sync::Mutex<Option<BoxFuture<'a, ExecutionOutcome>>>,
    state: StateCell,
    outcome: OnceLock<ExecutionOutcome>,
}

impl<'a> Cooperative<'a> {
    pub(crate) fn new(work: impl Future<Output = ExecutionOutcome> + Send + 'a) -> Self {
        Cooperative {
            work: tokio::sync::Mutex::new(Some(Box::pin(work))),
            state: StateCell::default(),
            outcome: OnceLock::new(),
        }
    }

    fn finish(&self, outcome: ExecutionOutcome) -> ExecutionOutcome {
        let stored = self.outcome.get_or_init(|| outcome).clone();
        self.state.advance(stored.state());
        stored
    }
}

impl ToolExecution for Cooperative<'_> {
    fn state(&self) -> ToolExecutionState {
        self.state.get()
    }

    fn wait<'b>(&'b self) -> Pin<Box<dyn Future<Output = ExecutionOutcome> + Send + 'b>> {
        Box::pin(async move {
            let mut slot = self.work.lock().await;
            if let Some(done) = self.outcome.get() {
                return done.clone();
            }
            let Some(work) = slot.take() else {
                // An earlier wait was dropped mid-flight and took the work with it.
                return self.finish(ExecutionOutcome::Cancelled);
            };
            self.state.advance(ToolExecutionState::Running);
            // A panicking tool is a failed call, not a crash of the engine.
            let outcome = match std::panic::AssertUnwindSafe(work).catch_unwind().await {
                Ok(outcome) => outcome,
                Err(_) => ExecutionOutcome::Failed("the tool crashed".to_string()),
            };
            self.finish(outcome)
        })
    }
}

/// A tool result as an outcome.
pub(crate) fn outcome(result: Result<String, ToolError>) -> ExecutionOutcome {
    match result {
        Ok(text) => ExecutionOutcome::Completed(text),
        Err(e) => ExecutionOutcome::Failed(e.to_string()),
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;
    use crate::turn::Emit;
    use skald_api::CancellationToken;
    use skald_store::Store;

    /// Runs the tool called `name` for `call` to its outcome, as the turn would, and gives
    /// its text or its error message.
    pub fn run(call: Call<'_>, name: &str, args: &Value) -> Result<String, String> {
        let tools = all();
        let tool = &tools
            .iter()
            .find(|(t, _)| t.name() == name)
            .unwrap_or_else(|| panic!("no tool {name}"))
            .0;
        let cx = ToolCx::new(call);
        let exec = tool.run(&cx, args.clone());
        match futures::executor::block_on(exec.wait()) {
            ExecutionOutcome::Completed(text) => Ok(text),
            ExecutionOutcome::Failed(message) => Err(message),
            ExecutionOutcome::Cancelled => Err("cancelled".to_string()),
            ExecutionOutcome::Rejected(reason) => Err(reason),
        }
    }

    /// A call of the root agent of `session_id`, outside any turn.
    pub fn call<'a>(
        store: &'a Store,
        session_id: i64,
        cancel: &'a CancellationToken,
        emit: Emit<'a>,
    ) -> Call<'a> {
        Call {
            store,
            session_id,
            stack_id: None,
            library: None,
            engine: None,
            call_id: "call_1",
            cancel,
            emit,
            turn: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{call, run};
    use serde_json::{Value, json};
    use skald_api::{Audience, CancellationToken, tool_names as tn};
    use skald_store::Store;

    use super::{DynTool, all};
    use std::sync::Arc;

    /// Every tool with what it declares, `restart` included.
    fn every_tool() -> Vec<Arc<DynTool>> {
        let restart: Arc<DynTool> = Arc::new(skald_tools::Restart::new(
            skald_tools::RestartSignal::default(),
        ));
        all().into_iter().map(|(t, _)| t).chain([restart]).collect()
    }

    #[test]
    fn every_tool_is_in_the_tables_that_should_know_it() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let tools_md = std::fs::read_to_string(root.join("docs/tools.md")).unwrap();
        let hooks_md = std::fs::read_to_string(root.join("docs/hooks.md")).unwrap();
        let hooks_md = hooks_md.split_whitespace().collect::<Vec<_>>().join(" ");
        for tool in every_tool() {
            let name = tool.name();
            assert!(
                tools_md.contains(&format!("| {name} |"))
                    || tools_md.contains(&format!("`{name}`")),
                "docs/tools.md does not name {name}"
            );
            if let Some(alias) = tool.hook_alias() {
                assert!(
                    hooks_md.contains(&format!("`{alias}` ({name}"))
                        || hooks_md.contains(&format!(", {name}")),
                    "docs/hooks.md does not give {name}'s matcher name {alias}"
                );
            }
            // The approval gate looks a file tool up among skald-tools' tools
            // (`approval::file_access`): one elsewhere would pass its path rules by.
            if let Some(access) = tool.file_access() {
                assert_eq!(
                    crate::approval::file_access(name),
                    Some(access),
                    "{name} reaches files but the approval gate does not know it"
                );
            }
            if tool.content_after(&json!({}), Some(""), 1).is_some() {
                assert!(
                    tool.file_access().is_some_and(|a| a.is_write()),
                    "{name} previews a write it does not declare"
                );
            }
        }
    }

    #[test]
    fn each_tool_is_offered_to_whom_it_is_for() {
        let registry = crate::builtin_registry().unwrap();
        assert!(registry.is_engine_tool(tn::WRITE_TODOS));
        assert!(!registry.is_engine_tool(tn::READ_FILE));
        let names = |who: Audience| -> Vec<String> {
            registry
                .offered(&who)
                .iter()
                .map(|d| d["function"]["name"].as_str().unwrap().to_string())
                .collect()
        };
        let chat = names(Audience {
            depth: 0,
            background: false,
            system: false,
            config: false,
            images: false,
            delegation: false,
            plan: false,
            web_search: false,
        });
        assert!(chat.contains(&tn::READ_AGENT_RESULT.to_string()));
        assert!(chat.contains(&tn::READ_NOTIFICATION.to_string()));
        assert!(!chat.contains(&tn::NOTIFY.to_string()));
        let bg = names(Audience {
            depth: 0,
            background: true,
            system: false,
            config: false,
            images: false,
            delegation: false,
            plan: false,
            web_search: false,
        });
        assert!(bg.contains(&tn::NOTIFY.to_string()));
        assert!(!bg.contains(&tn::READ_NOTIFICATION.to_string()));
        let sub = names(Audience {
            depth: 1,
            background: false,
            system: true,
            config: true,
            images: true,
            delegation: false,
            plan: false,
            web_search: false,
        });
        assert!(!sub.contains(&tn::ASK_USER_CLARIFICATION.to_string()));
        assert!(!sub.contains(&tn::READ_AGENT_RESULT.to_string()));
        assert!(sub.contains(&tn::LIST_ITEMS.to_string()));
        assert!(sub.contains(&tn::TOGGLE_ITEM.to_string()));
        assert!(!chat.contains(&tn::DELETE_CRON_JOB.to_string()));
    }

    /// The Inbox's "approve all config calls" (a category bypass) covers the engine's
    /// configuration tools, and a bypass of another category does not: every tool has its
    /// category in the registry.
    #[test]
    fn category_bypasses_cover_the_engine_tools() {
        use crate::approval::{BypassScope, Bypasses};
        let registry = crate::builtin_registry().unwrap();
        let bypasses = Bypasses::default();
        bypasses.grant(1, BypassScope::Category("config".into()), None);
        for name in [
            tn::TOGGLE_ITEM,
            tn::SET_SECRET,
            tn::LIST_SECRETS,
            tn::REGISTER_MCP,
            tn::DELETE_MCP,
            tn::DELETE_CRON_JOB,
            tn::CONFIGURE_PLUGIN,
            tn::IMAGE_GENERATE,
            tn::ACTIVATE_TOOLS,
        ] {
            assert!(bypasses.covers(1, name, &registry), "{name}");
            assert!(
                !bypasses.covers(2, name, &registry),
                "{name}: another session"
            );
        }
        for name in [
            tn::READ_FILE,
            tn::EXECUTE_TASK,
            tn::UPDATE_SCRATCHPAD,
            tn::LIST_ITEMS,
        ] {
            assert!(!bypasses.covers(1, name, &registry), "{name}");
        }
        bypasses.grant(1, BypassScope::Category("subagent".into()), None);
        assert!(bypasses.covers(1, tn::EXECUTE_TASK, &registry));
        assert!(bypasses.covers(1, tn::EXECUTE_SUBTASK, &registry));
        bypasses.grant(1, BypassScope::Category("session".into()), None);
        assert!(bypasses.covers(1, tn::ASK_USER_CLARIFICATION, &registry));
        assert!(bypasses.covers(1, tn::SHOW_FILE_TO_USER, &registry));
    }

    #[test]
    fn every_schema_is_a_valid_object_schema() {
        let registry = crate::builtin_registry().unwrap();
        for tool in registry.tools() {
            let parameters = tool.parameters_schema();
            assert_eq!(parameters["type"], "object", "{}", tool.name());
            // An empty object fails exactly when the schema requires something.
            let requires = parameters.get("required").is_some();
            assert_eq!(
                crate::args::validate_args(&parameters, &json!({})).is_err(),
                requires,
                "{}",
                tool.name()
            );
        }
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
        let cancel = CancellationToken::new();
        let ctx = |session_id| call(&store, session_id, &cancel, &|_| {});
        let read = |session_id| {
            run(
                ctx(session_id),
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
            &run(ctx(chat.id), tn::READ_NOTIFICATION, &json!({"limit": 1})).unwrap(),
        )
        .unwrap();
        assert_eq!(notes["notifications"], json!([{"summary": "two"}]));

        let cron: Value = serde_json::from_str(
            &run(ctx(chat.id), tn::LIST_ITEMS, &json!({"type": "cron"})).unwrap(),
        )
        .unwrap();
        assert_eq!(cron["items"], json!([]));
        assert!(
            run(ctx(chat.id), tn::LIST_ITEMS, &json!({"type": "agents"}))
                .unwrap_err()
                .contains("no agents")
        );
        assert!(
            run(
                ctx(chat.id),
                tn::ACTIVATE_TOOLS,
                &json!({"groups": ["github"]})
            )
            .unwrap_err()
            .contains("unknown tool group `github`")
        );
        run(
            ctx(chat.id),
            tn::ACTIVATE_TOOLS,
            &json!({"groups": ["config"]}),
        )
        .unwrap();
        assert_eq!(store.granted_groups(chat.id, None).unwrap(), ["config"]);
        assert!(
            run(
                ctx(chat.id),
                tn::TOGGLE_ITEM,
                &json!({"kind": "mcp", "id": "github", "enabled": true})
            )
            .unwrap_err()
            .contains("no MCP server named `github`")
        );
    }
}
