//! What model calls cost (docs/models.md, "Cost"): recorded per call at the known price,
//! said at the end of each turn, and listed per chat.

use crate::common::{SkaldCmd, bare};
use serde_json::{Value, json};
use skald_testkit::{ScriptedServer, sse};

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
