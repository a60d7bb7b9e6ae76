//! The local provider against a real model: SmolLM2-135M-Instruct (GGUF, Q4_1), which
//! `scripts/setup.sh --test` puts in tests/models/. Built only with the `local` feature.

#![cfg(feature = "local")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use futures::StreamExt;
use serde_json::{Value, json};
use skald_llm::{
    Event, FinishReason, LlmError, Message, Provider, ProviderKind, Request, Timeouts, ToolChoice,
    ToolSpec, collect,
};
use std::path::PathBuf;
use std::time::{Duration, Instant};

const MODEL: &str = "SmolLM2-135M-Instruct.Q4_1";

fn models_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/models"))
}

fn provider(dir: &std::path::Path) -> Provider {
    Provider::new(
        "local",
        ProviderKind::Local,
        dir.display().to_string(),
        None,
        Timeouts::default(),
    )
    .unwrap()
}

fn request(text: &str) -> Request {
    Request {
        model: MODEL.into(),
        messages: vec![Message::system("You are brief."), Message::user(text)],
        tools: vec![],
        tool_choice: ToolChoice::Auto,
        max_tokens: Some(24),
        temperature: None,
        effort: None,
        web_search: false,
    }
}

fn list_files() -> ToolSpec {
    ToolSpec {
        name: "list_files".into(),
        description: "List the files in a folder".into(),
        parameters: json!({
            "type": "object",
            "properties": {"path": {"type": "string", "description": "The folder"}},
            "required": ["path"],
            "additionalProperties": false
        }),
    }
}

#[tokio::test]
async fn a_real_model_streams_an_answer_and_is_kept_loaded() {
    let p = provider(&models_dir());
    let mut stream = p.stream(&request("Say hello.")).await.unwrap();
    let mut texts = 0;
    let mut answer = String::new();
    let mut finish = None;
    let mut usage = None;
    while let Some(e) = stream.next().await {
        match e.unwrap() {
            Event::Text { delta } => {
                texts += 1;
                answer.push_str(&delta);
            }
            Event::Finish { reason } => finish = Some(reason),
            Event::Usage { usage: u } => usage = Some(u),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(texts > 1, "streamed in pieces: {answer:?}");
    assert!(!answer.trim().is_empty());
    assert!(matches!(
        finish,
        Some(FinishReason::Stop | FinishReason::Length)
    ));
    let usage = usage.unwrap();
    assert!(usage.input_tokens > 5 && usage.output_tokens > 0 && usage.output_tokens <= 24);
    // The second call finds the model loaded.
    let r = collect(p.stream(&request("Say bye.")).await.unwrap())
        .await
        .unwrap();
    assert!(!r.text.is_empty());
}

#[tokio::test]
async fn a_required_tool_call_is_valid_json_for_the_tools_schema() {
    let p = provider(&models_dir());
    let mut req = request("What files are in the folder /tmp?");
    req.tools = vec![list_files()];
    req.tool_choice = ToolChoice::Required;
    req.max_tokens = Some(96);
    let r = collect(p.stream(&req).await.unwrap()).await.unwrap();
    assert_eq!(r.finish, Some(FinishReason::ToolCalls), "{r:?}");
    assert_eq!(r.tool_calls.len(), 1, "{r:?}");
    let call = &r.tool_calls[0];
    assert_eq!(call.name, "list_files");
    let args: Value = serde_json::from_str(&call.arguments).unwrap();
    assert!(args["path"].is_string(), "{args}");
    assert_eq!(args.as_object().unwrap().len(), 1, "{args}");
    assert!(
        r.text.trim().is_empty(),
        "no text around a forced call: {:?}",
        r.text
    );
}

#[tokio::test]
async fn dropping_the_stream_stops_the_generation() {
    let p = provider(&models_dir());
    let mut req = request("Write a very long story about a lighthouse keeper.");
    req.max_tokens = Some(4000);
    let mut stream = p.stream(&req).await.unwrap();
    // Running: the first words arrive.
    let first = stream.next().await.unwrap().unwrap();
    assert!(matches!(first, Event::Text { .. }), "{first:?}");
    assert!(skald_llm::local::active() >= 1);
    let stopped = Instant::now();
    drop(stream);
    // The generation ends between two tokens; the wait is only a guard against a hang
    // (the stop latency is measured by the benchmark, not asserted here).
    while skald_llm::local::active() > 0 {
        assert!(
            stopped.elapsed() < Duration::from_secs(30),
            "still generating"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    eprintln!("stopped after {:?}", stopped.elapsed());
}

#[tokio::test]
async fn missing_and_damaged_model_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = provider(dir.path());
    let err = p.stream(&request("hi")).await.err().unwrap();
    assert!(
        matches!(&err, LlmError::Config(m) if m.contains("no model file")),
        "{err}"
    );
    // A GGUF header with nothing sensible after it: llama.cpp refuses it, Skald says so.
    let mut bytes = b"GGUF\x03\x00\x00\x00".to_vec();
    bytes.extend(std::iter::repeat_n(0xAB, 4096));
    std::fs::write(dir.path().join(format!("{MODEL}.gguf")), &bytes).unwrap();
    let err = p.stream(&request("hi")).await.err().unwrap();
    assert!(
        matches!(&err, LlmError::Local(m) if m.contains("cannot load")),
        "{err}"
    );
    // A truncated copy of the real model.
    let real = std::fs::read(models_dir().join(format!("{MODEL}.gguf"))).unwrap();
    std::fs::write(
        dir.path().join(format!("{MODEL}.gguf")),
        &real[..real.len() / 3],
    )
    .unwrap();
    let err = p.stream(&request("hi")).await.err().unwrap();
    assert!(
        matches!(&err, LlmError::Local(m) if m.contains("cannot load")),
        "{err}"
    );
}

/// An agent-sized system prompt: long enough (over a batch of 512 tokens) to be saved and
/// to be read with progress.
fn long_chat(user: &str) -> Request {
    let rules = (1..=60)
        .map(|i| format!("Rule {i}: answer in plain words, and name the file you mean."))
        .collect::<Vec<_>>()
        .join("\n");
    Request {
        messages: vec![Message::system(rules), Message::user(user)],
        max_tokens: Some(12),
        temperature: Some(0.0),
        ..request(user)
    }
}

/// The answer's text, and the prompt progress events seen before it.
async fn answer_of(p: &Provider, req: &Request) -> (String, Vec<(u64, u64)>) {
    let mut stream = p.stream(req).await.unwrap();
    let (mut text, mut reading) = (String::new(), Vec::new());
    while let Some(e) = stream.next().await {
        match e.unwrap() {
            Event::Text { delta } => text.push_str(&delta),
            Event::Reading { done, total } => {
                assert!(text.is_empty(), "progress comes before the answer");
                reading.push((done, total));
            }
            _ => {}
        }
    }
    (text, reading)
}

#[tokio::test]
async fn a_new_chat_loads_the_saved_state_of_the_shared_prompt_and_answers_the_same() {
    // Links to the one test model under other names: each name has its own worker (so
    // an empty context, as in a new process), and all share the saved states.
    let dir = tempfile::tempdir().unwrap();
    let real = models_dir().join(format!("{MODEL}.gguf"));
    for name in ["first", "second", "third", "fourth"] {
        std::os::unix::fs::symlink(&real, dir.path().join(format!("{name}.gguf"))).unwrap();
    }
    let p = provider(dir.path());
    let chat = |model: &str| Request {
        model: model.into(),
        ..long_chat("Which rule is first?")
    };
    let states = || -> Vec<PathBuf> {
        std::fs::read_dir(dir.path().join(".prompt-cache"))
            .map(|d| {
                d.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "kv"))
                    .collect()
            })
            .unwrap_or_default()
    };

    // Read with progress, and its shared beginning saved.
    let (read, progress) = answer_of(&p, &chat("first")).await;
    assert!(!read.trim().is_empty());
    assert!(progress.len() >= 2, "{progress:?}");
    let total = progress[0].1;
    assert!(
        progress
            .windows(2)
            .all(|w| w[0].0 <= w[1].0 && w[1].1 == total)
    );
    assert_eq!(progress.last(), Some(&(total, total)));
    let saved = states();
    assert_eq!(saved.len(), 1, "{saved:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&saved[0]).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "the state holds the prompt: owner only");
    }

    // Another worker loads it instead of reading: the same answer, no long read.
    let before = skald_llm::local::prompt_states_loaded();
    let (loaded, progress) = answer_of(&p, &chat("second")).await;
    assert_eq!(skald_llm::local::prompt_states_loaded(), before + 1);
    assert_eq!(
        loaded, read,
        "a loaded state answers as the read prompt did"
    );
    assert!(progress.is_empty(), "{progress:?}");

    // A damaged state is dropped, the prompt read again and the state saved anew.
    std::fs::write(&saved[0], b"ggsq and then nothing that makes sense").unwrap();
    let before = skald_llm::local::prompt_states_loaded();
    let (again, progress) = answer_of(&p, &chat("third")).await;
    assert_eq!(skald_llm::local::prompt_states_loaded(), before);
    assert_eq!(again, read);
    assert!(!progress.is_empty());
    let resaved = states();
    assert_eq!(resaved, saved);
    let whole = std::fs::read(&resaved[0]).unwrap();
    assert!(whole.len() > 1024);

    // So is one cut short (a disk that filled up under another program's write).
    std::fs::write(&saved[0], &whole[..whole.len() / 2]).unwrap();
    let before = skald_llm::local::prompt_states_loaded();
    let (again, _) = answer_of(&p, &chat("fourth")).await;
    assert_eq!(skald_llm::local::prompt_states_loaded(), before);
    assert_eq!(again, read);
    assert_eq!(std::fs::read(&saved[0]).unwrap().len(), whole.len());
}
