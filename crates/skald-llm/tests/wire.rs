//! The clients against the scripted server over a real socket: timeouts and statuses.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use futures::StreamExt;
use skald_llm::provider::Timeouts;
use skald_llm::{Event, LlmError, Message, Provider, ProviderKind, Request};
use skald_testkit::ScriptedServer;
use std::time::Duration;

fn request() -> Request {
    Request {
        model: "m".into(),
        messages: vec![Message::user("hi")],
        tools: vec![],
        tool_choice: skald_llm::ToolChoice::Auto,
        max_tokens: None,
        temperature: None,
        effort: None,
        web_search: false,
    }
}

fn provider(server: &ScriptedServer, idle: Duration) -> Provider {
    Provider::new(
        "openai",
        ProviderKind::OpenAi,
        server.base_url.clone(),
        Some("k".into()),
        Timeouts {
            idle,
            ..Timeouts::default()
        },
    )
    .unwrap()
}

#[tokio::test]
async fn a_stream_that_goes_silent_times_out_after_what_arrived() {
    let body = format!(
        "data: {}\n\nHOLD",
        serde_json::json!({"choices": [{"index": 0, "delta": {"content": "par"}}]})
    );
    let server = ScriptedServer::new(vec![(200, "text/event-stream", body)]);
    let p = provider(&server, Duration::from_millis(300));
    let mut stream = p.stream(&request()).await.unwrap();
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        Event::Text {
            delta: "par".into()
        }
    );
    let err = stream.next().await.unwrap().unwrap_err();
    assert!(matches!(err, LlmError::Timeout { .. }), "{err}");
    assert!(err.is_retryable());
    assert!(
        stream.next().await.is_none(),
        "the stream ends after its error"
    );
}

#[tokio::test(start_paused = false)]
async fn rate_limits_honour_retry_after_then_succeed() {
    let ok = skald_testkit::answer("fine");
    let server = ScriptedServer::new(vec![
        (
            429,
            "application/json",
            r#"{"error": {"message": "slow down"}}"#.to_string(),
        ),
        ok,
    ]);
    // The scripted reply has no Retry-After header, so the backoff applies; a real 429
    // with one is covered by the retry unit tests.
    let p = provider(&server, Duration::from_secs(5));
    let response = skald_llm::collect(p.stream(&request()).await.unwrap())
        .await
        .unwrap();
    assert_eq!(response.text, "fine");
    assert_eq!(server.recorded().len(), 2);
}

#[tokio::test]
async fn a_server_that_accepts_and_never_answers_is_a_timeout() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Accept connections and never answer.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming() {
            held.push(s);
        }
    });
    let mut p = Provider::new(
        "openai",
        ProviderKind::OpenAi,
        format!("http://127.0.0.1:{port}/v1"),
        None,
        Timeouts {
            first_byte: Duration::from_millis(300),
            ..Timeouts::default()
        },
    )
    .unwrap();
    p.retry.attempts = 2;
    p.retry.base_delay = Duration::from_millis(10);
    let err = match p.stream(&request()).await {
        Err(e) => e,
        Ok(_) => panic!("a silent server cannot stream"),
    };
    assert!(
        matches!(
            err,
            LlmError::Timeout {
                what: "response headers",
                ..
            }
        ),
        "{err}"
    );
}
