//! The reasoning effort of `skald exec --effort` (docs/models.md, "Reasoning effort"),
//! against scripted servers of each provider protocol that look at what they are sent.

use crate::common::{SkaldCmd, anthropic_sse};
use serde_json::{Value, json};
use skald_testkit::{ScriptedServer, answer};

fn bodies(server: &ScriptedServer) -> Vec<Value> {
    server.recorded().into_iter().map(|r| r.body).collect()
}

#[test]
fn an_effort_reaches_openai_and_ollama_reasoning_models_and_no_other() {
    let work = tempfile::tempdir().unwrap();
    // OpenAI: `reasoning_effort`, for a reasoning model.
    let data = tempfile::tempdir().unwrap();
    let server = ScriptedServer::new(vec![answer("Thought hard."), answer("Plain.")]);
    let (out, _) = SkaldCmd::new(data.path())
        .against(&server)
        .env("SKALD_MODEL", "openai/o3-mini")
        .exec_json(work.path(), &["--effort", "high"], "Think.");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sent = &bodies(&server)[0];
    assert_eq!(sent["model"], "o3-mini");
    assert_eq!(sent["reasoning_effort"], "high");
    // A model that takes none is not sent one (its provider would refuse the request), and
    // the person is told.
    let (out, _) = SkaldCmd::new(data.path())
        .against(&server)
        .env("SKALD_MODEL", "openai/gpt-4.1")
        .exec_json(work.path(), &["--effort", "high"], "Plain.");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("openai/gpt-4.1 takes no reasoning effort; --effort high is not sent"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(bodies(&server)[1].get("reasoning_effort").is_none());

    // Ollama: `think`.
    let ndjson = |lines: &[Value]| -> String { lines.iter().map(|l| format!("{l}\n")).collect() };
    let ollama = ScriptedServer::new(vec![(
        200,
        "application/x-ndjson",
        ndjson(&[
            json!({"message": {"role": "assistant", "content": "", "thinking": "hmm"}, "done": false}),
            json!({"message": {"role": "assistant", "content": "Done."}, "done": false}),
            json!({"message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop"}),
        ]),
    )]);
    let (out, events) = SkaldCmd::new(data.path())
        .env("OLLAMA_HOST", ollama.host())
        .env("SKALD_MODEL", "ollama/qwen3:8b")
        .exec_json(work.path(), &["--effort", "medium"], "Think.");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(bodies(&ollama)[0]["think"], true);
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "thinking" && e["text"] == "hmm")
    );
}

#[test]
fn anthropic_thinks_with_its_budget_and_gets_its_signed_thinking_back_in_a_tool_loop() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("hello.txt"), "hello\n").unwrap();
    let thinking_then_tool = anthropic_sse(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 20}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "I should read it."}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"hello.txt\"}"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}),
        json!({"type": "message_stop"}),
    ]);
    let text = anthropic_sse(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 40}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "It says hello."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 4}}),
        json!({"type": "message_stop"}),
    ]);
    let server = ScriptedServer::new(vec![
        (200, "text/event-stream", thinking_then_tool),
        (200, "text/event-stream", text),
    ]);
    let (out, events) = SkaldCmd::new(data.path())
        .env("ANTHROPIC_BASE_URL", server.origin())
        .env("ANTHROPIC_API_KEY", "ant-key")
        .env("SKALD_MODEL", "anthropic/claude-sonnet-4-5")
        .exec_json(
            work.path(),
            &["--effort", "low"],
            "What does hello.txt say?",
        );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(events.last().unwrap()["text"], "It says hello.");
    let sent = bodies(&server);
    for body in &sent {
        assert_eq!(
            body["thinking"],
            json!({"type": "enabled", "budget_tokens": 2048})
        );
        assert_eq!(body["max_tokens"], 8192 + 2048);
    }
    let answer = &sent[1]["messages"][1];
    assert_eq!(answer["role"], "assistant");
    assert_eq!(
        answer["content"][0],
        json!({"type": "thinking", "thinking": "I should read it.", "signature": "EqQBCgIYAhIM"})
    );
    assert_eq!(answer["content"][1]["type"], "tool_use");
}
