//! What model calls cost (docs/models.md, "Cost"): recorded per call at the known price,
//! said at the end of each turn, and listed per chat.

use crate::common::{SkaldCmd, anthropic_sse, bare};
use serde_json::{Value, json};
use skald_testkit::{ScriptedServer, answer, sse, with_headers};

/// An answer whose usage chunk says `input` tokens read (`cached` of them from the cache)
/// and `output` written.
fn answer_with_usage(
    text: &str,
    input: u64,
    cached: u64,
    output: u64,
) -> (u16, &'static str, String) {
    (
        200,
        "text/event-stream",
        sse(&[
            json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": input, "completion_tokens": output,
                   "prompt_tokens_details": {"cached_tokens": cached}}}),
        ]),
    )
}

fn turn_usage(events: &[Value]) -> Value {
    let i = events
        .iter()
        .position(|e| e["type"] == "turn_usage")
        .unwrap();
    // Said just before the turn ends.
    assert_eq!(events[i + 1]["type"], "done", "{events:?}");
    events[i].clone()
}

fn close(a: &Value, b: f64) -> bool {
    (a.as_f64().unwrap() - b).abs() < 1e-9
}

#[test]
fn a_turn_says_what_it_cost_at_published_or_configured_prices_and_the_chat_list_adds_up() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = ScriptedServer::new(vec![
        answer_with_usage("One.", 1000, 400, 100),
        answer_with_usage("Two.", 2000, 0, 10),
        answer_with_usage("Three.", 500, 0, 50),
    ]);
    // gpt-4.1 at its published price: 600 fresh × $2 + 400 cached × $0.50 + 100 out × $8,
    // per million.
    let (out, events) = SkaldCmd::new(data.path())
        .against(&server)
        .env("SKALD_MODEL", "openai/gpt-4.1")
        .exec_json(work.path(), &[], "One?");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first = turn_usage(&events);
    assert!(close(&first["cost_usd"], 0.0022), "{first}");
    assert_eq!(first["unpriced"], 0);
    assert_eq!(
        (
            first["input_tokens"].as_u64(),
            first["output_tokens"].as_u64()
        ),
        (Some(1000), Some(100))
    );
    let session = events[0]["session_id"].as_i64().unwrap().to_string();
    // A model with no known price is counted, not costed.
    let (_, events) = SkaldCmd::new(data.path()).against(&server).exec_json(
        work.path(),
        &["--session", &session],
        "Two?",
    );
    let second = turn_usage(&events);
    assert!(close(&second["cost_usd"], 0.0), "{second}");
    assert_eq!(second["unpriced"], 1);
    assert!(close(&second["chat_cost_usd"], 0.0022), "{second}");
    // A price config.toml gives wins: $1 in, $2 out per million.
    std::fs::write(
        data.path().join("config.toml"),
        "[models.prices]\n\"openai/scripted-*\" = { input = 1.0, output = 2.0 }\n",
    )
    .unwrap();
    let (_, events) = SkaldCmd::new(data.path()).against(&server).exec_json(
        work.path(),
        &["--session", &session],
        "Three?",
    );
    let third = turn_usage(&events);
    assert!(close(&third["cost_usd"], 0.0006), "{third}");
    assert!(close(&third["chat_cost_usd"], 0.0028), "{third}");
    assert!(close(&third["today_cost_usd"], 0.0028), "{third}");
    let listed = bare(data.path())
        .args(["sessions", "list", "--json"])
        .output()
        .unwrap();
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert!(close(&listed[0]["cost_usd"], 0.0028), "{listed}");
    assert_eq!(listed[0]["unpriced_requests"], 1);
    let text = bare(data.path())
        .args(["sessions", "list"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("$0.0028+") && text.contains("Today: $0.0028+"),
        "{text}"
    );
}

/// OpenAI's and Anthropic's rate-limit headers, as the scripted servers send them back.
#[test]
fn the_rate_limits_a_provider_states_are_said_with_each_call() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = ScriptedServer::new(vec![with_headers(
        &[
            ("x-ratelimit-limit-requests", "500"),
            ("x-ratelimit-remaining-requests", "499"),
            ("x-ratelimit-reset-requests", "120ms"),
            ("x-ratelimit-limit-tokens", "30000"),
            ("x-ratelimit-remaining-tokens", "28500"),
            ("x-ratelimit-reset-tokens", "6m0s"),
        ],
        answer_with_usage("Fine.", 1500, 0, 2),
    )]);
    let before = now_ms();
    let (out, events) =
        SkaldCmd::new(data.path())
            .against(&server)
            .exec_json(work.path(), &[], "Hi?");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = events
        .iter()
        .find(|e| e["type"] == "rate_limits")
        .unwrap_or_else(|| panic!("{events:?}"));
    let limits = &said["limits"];
    assert_eq!(limits["provider"], "openai");
    assert_eq!(limits["requests"]["limit"], 500);
    assert_eq!(limits["requests"]["remaining"], 499);
    assert_eq!(limits["tokens"]["remaining"], 28500);
    // "6m0s" from when the answer came.
    let resets = limits["tokens"]["resets_at"].as_i64().unwrap();
    assert!(
        resets >= before + 360_000 && resets <= now_ms() + 360_000,
        "{limits}"
    );

    let server = ScriptedServer::new(vec![with_headers(
        &[
            ("anthropic-ratelimit-requests-limit", "50"),
            ("anthropic-ratelimit-requests-remaining", "0"),
            ("anthropic-ratelimit-requests-reset", "2026-12-07T16:00:30Z"),
        ],
        (
            200,
            "text/event-stream",
            anthropic_sse(&[
                json!({"type": "message_start", "message": {"usage": {"input_tokens": 20}}}),
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi."}}),
                json!({"type": "content_block_stop", "index": 0}),
                json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
                json!({"type": "message_stop"}),
            ]),
        ),
    )]);
    let (out, events) = SkaldCmd::new(data.path())
        .env("ANTHROPIC_BASE_URL", server.origin())
        .env("ANTHROPIC_API_KEY", "ant-key")
        .env("SKALD_MODEL", "anthropic/claude-sonnet-4-5")
        .exec_json(work.path(), &[], "Hi?");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = events.iter().find(|e| e["type"] == "rate_limits").unwrap();
    let limits = &said["limits"];
    assert_eq!(limits["provider"], "anthropic");
    assert_eq!(limits["requests"]["remaining"], 0);
    assert_eq!(limits["requests"]["resets_at"], 1_796_659_230_000i64);
    assert!(limits.get("tokens").is_none(), "{limits}");
}

/// Past the daily budget, a run no one can answer stops before the model is called, and
/// says why; within it, it runs.
#[test]
fn past_the_daily_budget_exec_stops_before_calling_the_model() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = ScriptedServer::new(vec![
        answer_with_usage("One.", 1000, 0, 100),
        answer_with_usage("Two.", 1000, 0, 100),
    ]);
    // $10 a million tokens read, $100,000 a million written: the first turn costs $0.01
    // + $10, while what a request reads stays far under the $5 budget.
    std::fs::write(
        data.path().join("config.toml"),
        "[budget]\ndaily_usd = 5\n[models.prices]\n\"openai/scripted-*\" = { input = 10.0, output = 100000.0 }\n",
    )
    .unwrap();
    let (out, _) = SkaldCmd::new(data.path())
        .against(&server)
        .exec_json(work.path(), &[], "One?");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (out, events) =
        SkaldCmd::new(data.path())
            .against(&server)
            .exec_json(work.path(), &[], "Two?");
    assert_eq!(out.status.code(), Some(1), "{events:?}");
    let error = events.iter().find(|e| e["type"] == "error").unwrap();
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("$10.01 of the $5.00 daily budget")
            && message.contains("[budget] daily_usd"),
        "{message}"
    );
    assert_eq!(server.recorded().len(), 1, "the model was not called again");
    assert_eq!(events.last().unwrap()["outcome"], "failed", "{events:?}");
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn recorded_requests(data: &std::path::Path) -> (u64, f64) {
    let store = skald_store::Store::open(data.join("skald.db")).unwrap();
    let u = store.usage_since(0).unwrap();
    (u.requests, u.cost_usd)
}

/// The summary of older turns is a model call like any: recorded with its cost, so the
/// chat's cost, today's and the daily budget count it (#49 review, finding 4).
#[test]
fn a_summary_of_older_turns_is_counted_and_the_budget_sees_it() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        data.path().join("config.toml"),
        "[agent]\ncompact_at = 50\n[budget]\ndaily_usd = 5\n[models]\ncontext_window = 2000\n\
         [models.prices]\n\"openai/scripted-*\" = { input = 10.0, output = 100000.0 }\n",
    )
    .unwrap();
    let server = ScriptedServer::new(vec![
        answer_with_usage("One.", 1000, 0, 1),
        // The summary: $10.01.
        answer_with_usage("Summary: asked twice.\nLeft out: nothing.", 1000, 0, 100),
        answer_with_usage("Two.", 1000, 0, 1),
        answer_with_usage("Three.", 1000, 0, 1),
    ]);
    let long = format!("One? {}", "Some pasted log line. ".repeat(400));
    let (out, events) =
        SkaldCmd::new(data.path())
            .against(&server)
            .exec_json(work.path(), &[], &long);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let session = events[0]["session_id"].as_i64().unwrap().to_string();
    let (out, events) = SkaldCmd::new(data.path()).against(&server).exec_json(
        work.path(),
        &["--session", &session],
        "Two?",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        events.iter().any(|e| e["type"] == "context_compacted"),
        "{events:?}"
    );
    let (requests, cost) = recorded_requests(data.path());
    assert_eq!(requests as usize, server.recorded().len());
    assert!(cost > 10.0, "{cost}");
    // Past the budget now: the next turn stops before its model call.
    let (out, _) = SkaldCmd::new(data.path()).against(&server).exec_json(
        work.path(),
        &["--session", &session],
        "Three?",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(server.recorded().len(), 3);
}

/// Tasks fanned out at once cannot all pass a budget that has room for one: a call let
/// through counts at what it may cost until its cost is recorded (finding 6).
#[test]
fn tasks_started_at_once_do_not_all_pass_the_budget() {
    const SE: &str = "senior software engineer";
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        data.path().join("config.toml"),
        "[budget]\ndaily_usd = 5\n[models.prices]\n\"openai/scripted-*\" = { input = 10.0, output = 100000.0 }\n",
    )
    .unwrap();
    let tasks: Vec<(String, String)> = (0..3)
        .map(|i| {
            (
                format!("t{i}"),
                json!({"mode": "async", "title": format!("T{i}"), "agent_id": "software-engineer", "prompt": "Go."})
                    .to_string(),
            )
        })
        .collect();
    let calls: Vec<(&str, &str, &str)> = tasks
        .iter()
        .map(|(id, a)| (id.as_str(), "execute_task", a.as_str()))
        .collect();
    let server = ScriptedServer::routed(vec![
        (
            SE,
            (0..3)
                .map(|_| skald_testkit::delayed(1500, answer_with_usage("Done.", 10, 0, 100)))
                .collect(),
        ),
        (
            "",
            vec![
                skald_testkit::tool_calls(&calls),
                answer("Started three."),
                answer("x"),
                answer("y"),
                answer("z"),
            ],
        ),
    ]);
    let (_, events) = SkaldCmd::new(data.path()).against(&server).exec_json(
        work.path(),
        &["--approve", "all"],
        "Go.",
    );
    let (_, spent) = recorded_requests(data.path());
    let task_calls = server
        .recorded()
        .iter()
        .filter(|r| r.body.to_string().contains(SE))
        .count();
    // At most one: which calls get through first is the scheduler's (the chat's own next
    // round is in flight too, reserving what it may cost).
    assert!(
        task_calls <= 1,
        "{task_calls} tasks called the model: {events:?}"
    );
    assert!(spent < 10.1, "${spent:.2} spent against a $5 budget");
}
