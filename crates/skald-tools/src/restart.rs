//! restart: ask the app that runs the engine (the desktop app, `skald serve`) to start
//! its binary again. The tool only records the request; the carrier that registered it
//! restarts once the turns have ended, so the answer that follows is saved first and no
//! conversation is cut off. One-shot runs (`skald exec`) do not register it: there is
//! nothing to restart.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use skald_api::tool_args;
use skald_api::{Tool, ToolCategory, ToolDescriptionLength, ToolResult, tool_names as tn};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::Notify;

/// Shared between the tool and its carrier: set by an approved `restart`, awaited by the
/// carrier.
#[derive(Clone, Default)]
pub struct RestartSignal(Arc<Inner>);

#[derive(Default)]
struct Inner {
    requested: AtomicBool,
    notify: Notify,
}

impl RestartSignal {
    pub fn request(&self) {
        self.0.requested.store(true, Ordering::SeqCst);
        self.0.notify.notify_waiters();
    }

    pub fn is_requested(&self) -> bool {
        self.0.requested.load(Ordering::SeqCst)
    }

    /// Returns once a restart has been asked for (at once if it already was).
    pub async fn requested(&self) {
        loop {
            // Registered before the flag is read, so a request in between is not missed.
            let notified = self.0.notify.notified();
            if self.is_requested() {
                return;
            }
            notified.await;
        }
    }
}

pub struct Restart {
    signal: RestartSignal,
}

// The arguments' doc comments are the descriptions the model reads; the reason is shown
// in the approval request (`describe`), which reads the call as sent.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Args {
    /// Why Skald should restart, shown to the user when they approve.
    reason: Option<String>,
}

impl Restart {
    pub const NAME: &'static str = tn::RESTART;
}

impl Restart {
    pub fn new(signal: RestartSignal) -> Self {
        Self { signal }
    }
}

impl<Cx: ?Sized + Sync> Tool<Cx> for Restart {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Restart Skald: the same program starts again with the same settings, for instance \
         after its configuration, plugins or agent files changed. Every conversation is \
         kept. The restart happens when the running turns have ended, so finish your answer \
         after calling it; it needs the user's approval."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn describe(&self, args: &Value, length: ToolDescriptionLength) -> String {
        let reason = args.get("reason").and_then(Value::as_str).unwrap_or("");
        let reason = crate::fs::one_line(reason);
        if reason.is_empty() {
            "Restart Skald".to_string()
        } else {
            length.fit(&format!("Restart Skald: {reason}"))
        }
    }

    fn execute(&self, _cx: &Cx, args: Value) -> ToolResult {
        tool_args::parse::<Args>(args)?;
        self.signal.request();
        Ok(
            "Skald will restart as soon as the running turns have ended; every conversation \
            is kept. Finish your answer now."
                .into(),
        )
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Shell
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Not in `skald tools --json` (only a carrier that can restart registers it), so its
    /// derived schema is checked here against the one written by hand before.
    #[test]
    fn the_derived_schema_is_the_one_written_before() {
        let schema = Tool::<()>::parameters_schema(&Restart::new(RestartSignal::default()));
        assert_eq!(
            schema.to_string(),
            json!({
                "type": "object",
                "properties": {
                    "reason": {
                        "type": "string",
                        "description": "Why Skald should restart, shown to the user when they approve."
                    }
                },
                "additionalProperties": false
            })
            .to_string()
        );
    }

    #[tokio::test]
    async fn an_approved_call_wakes_the_carrier() {
        let signal = RestartSignal::default();
        let waiter = tokio::spawn({
            let s = signal.clone();
            async move { s.requested().await }
        });
        let tool = Restart::new(signal.clone());
        assert!(!signal.is_requested());
        let out = tool.execute(&(), json!({"reason": "new plugin"})).unwrap();
        assert!(out.contains("restart"), "{out}");
        tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
            .await
            .expect("the carrier is woken")
            .unwrap();
        // A carrier that looks after the request still sees it.
        signal.requested().await;
        assert_eq!(
            Tool::<()>::describe(
                &tool,
                &json!({"reason": "new plugin"}),
                ToolDescriptionLength::Short
            ),
            "Restart Skald: new plugin"
        );
    }
}
