//! `skald exec` on a local model: SmolLM2-135M-Instruct run in-process by llama.cpp, no
//! key and no network (`scripts/setup.sh --test` puts the GGUF file in tests/models/).

#![cfg(feature = "local")]

use crate::common::{events, ok, skald, spawn_json, wait_for};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub(crate) const MODEL: &str = "SmolLM2-135M-Instruct.Q4_1";

pub(crate) fn models_dir() -> PathBuf {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/models"));
    assert!(
        dir.join(format!("{MODEL}.gguf")).is_file(),
        "the test model is missing: run `bash scripts/setup.sh --test`"
    );
    dir
}

/// `skald` with no provider at all: no key, no base URL, no model named anywhere (none
/// of those reach any test's `skald`), and no models folder but the data folder's.
fn offline(data: &Path) -> std::process::Command {
    let mut c = skald(data, None);
    c.env_remove("SKALD_MODELS_DIR");
    c
}

/// A data folder whose models folder holds the test model.
/// One generating test at a time: llama.cpp's threads wait by spinning, so three models
/// reading a 3.8k-token prompt at once on a 2-core machine took over a minute each to
/// their first token (and 25 s alone); one after another the whole file takes two minutes.
static ONE_MODEL_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub(crate) fn one_model_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_MODEL_AT_A_TIME
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

fn data_with_model() -> tempfile::TempDir {
    let data = tempfile::tempdir().unwrap();
    ok(&offline(data.path())
        .args(["models", "add", "--name", "smol"])
        .arg(models_dir().join(format!("{MODEL}.gguf")))
        .output()
        .unwrap());
    data
}

#[test]
fn with_no_key_the_local_model_streams_an_answer() {
    let _one = one_model_at_a_time();
    let data = data_with_model();
    let work = tempfile::tempdir().unwrap();
    // No --model: with nothing configured, the local model is the default.
    let out = offline(data.path())
        .current_dir(work.path())
        .args(["exec", "--json", "Say hello in five words."])
        .output()
        .unwrap();
    let ev = events(&ok(&out));
    let deltas = ev.iter().filter(|e| e["type"] == "token_delta").count();
    assert!(deltas > 1, "streamed: {ev:?}");
    let done = ev.last().unwrap();
    assert_eq!(done["type"], "done");
    assert_eq!(done["outcome"], "final");
    assert!(!done["text"].as_str().unwrap().trim().is_empty());
    // And by name.
    let out = offline(data.path())
        .current_dir(work.path())
        .args(["exec", "--model", "local/smol", "Say hi."])
        .output()
        .unwrap();
    assert!(!ok(&out).trim().is_empty());
}

#[test]
fn a_forced_tool_call_is_valid_and_runs_a_real_tool() {
    let _one = one_model_at_a_time();
    let data = data_with_model();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), "hello\n").unwrap();
    let out = offline(data.path())
        .current_dir(work.path())
        .args([
            "exec",
            "--json",
            "--model",
            "local/smol",
            "--tool-choice",
            "required",
            "--approve",
            "never",
            "--max-rounds",
            "2",
            "List the files in this folder.",
        ])
        .output()
        .unwrap();
    let ev = events(&String::from_utf8_lossy(&out.stdout));
    let start = ev
        .iter()
        .find(|e| e["type"] == "tool_start")
        .unwrap_or_else(|| panic!("no tool call: {ev:?}"));
    // The call's arguments are a JSON object, checked against the tool's schema before
    // it ran; whatever tool the model chose, it got an answer (a result, or a refusal of
    // what needs approval), not an argument error.
    assert!(start["arguments"].is_object(), "{start}");
    // A model this small is sent only the tools it can use (docs/models.md, "Small
    // models"), and its grammar allows no other name.
    let small_model_tools = [
        "read_file",
        "list_files",
        "grep_files",
        "search_file",
        "edit_file",
        "write_file",
        "execute_cmd",
        "ask_user_clarification",
    ];
    assert!(
        small_model_tools.contains(&start["name"].as_str().unwrap()),
        "{start}"
    );
    let id = start["tool_call_id"].as_str().unwrap();
    let outcome = ev
        .iter()
        .find(|e| {
            e["tool_call_id"] == id
                && ["tool_done", "tool_error", "tool_rejected"]
                    .contains(&e["type"].as_str().unwrap())
        })
        .unwrap_or_else(|| panic!("the call never ended: {ev:?}"));
    let text = outcome.to_string();
    assert!(!text.contains("invalid argument"), "{text}");
    assert_eq!(ev.last().unwrap()["type"], "done");
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_a_local_generation() {
    let _one = one_model_at_a_time();
    let data = data_with_model();
    let work = tempfile::tempdir().unwrap();
    let mut cmd = offline(data.path());
    cmd.current_dir(work.path()).args([
        "exec",
        "--json",
        "--model",
        "local/smol",
        "Write a very long story about a lighthouse keeper and the sea, in many chapters.",
    ]);
    let (mut child, rx) = spawn_json(cmd);
    wait_for(&rx, |e: &Value| e["type"] == "token_delta");
    let asked = Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let ev = wait_for(&rx, |e: &Value| e["type"] == "done");
    assert_eq!(ev.last().unwrap()["outcome"], "cancelled");
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(asked.elapsed() < Duration::from_secs(30), "still running");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(130));
    eprintln!("stopped in {:?}", asked.elapsed());
}

#[test]
fn missing_and_damaged_models_are_clear_errors() {
    let data = tempfile::tempdir().unwrap();
    let out = offline(data.path())
        .args(["exec", "--model", "local/nowhere", "hi"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        err.contains("no model file") && err.contains("nowhere.gguf"),
        "{err}"
    );
    // A damaged file is refused by `models add`, and by a run that finds one anyway.
    let bad = data.path().join("bad.gguf");
    std::fs::write(&bad, b"definitely not a model").unwrap();
    let out = offline(data.path())
        .args(["models", "add"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a GGUF"));
    let models = data.path().join("models");
    std::fs::create_dir_all(&models).unwrap();
    let mut truncated = std::fs::read(models_dir().join(format!("{MODEL}.gguf"))).unwrap();
    truncated.truncate(truncated.len() / 4);
    std::fs::write(models.join("cut.gguf"), truncated).unwrap();
    let out = offline(data.path())
        .args(["exec", "--model", "local/cut", "hi"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        err.contains("cannot load") && err.contains("cut.gguf"),
        "{err}"
    );
}

#[test]
fn models_are_listed_added_and_removed() {
    let data = data_with_model();
    let list: Value = serde_json::from_str(&ok(&offline(data.path())
        .args(["models", "list", "--json"])
        .output()
        .unwrap()))
    .unwrap();
    assert_eq!(list["local_models"], true);
    assert_eq!(list["installed"][0]["name"], "smol");
    assert_eq!(list["installed"][0]["model"], "local/smol");
    assert_eq!(list["available"][0]["name"], "smollm2-135m");
    let out = offline(data.path())
        .args(["models", "add", "--name", "smol"])
        .arg(models_dir().join(format!("{MODEL}.gguf")))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "no overwrite");
    let out = offline(data.path())
        .args(["models", "pull", "gpt-9"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("smollm2-135m"));
    ok(&offline(data.path())
        .args(["models", "rm", "smol"])
        .output()
        .unwrap());
    let out = offline(data.path())
        .args(["models", "rm", "smol"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A state file of `.prompt-cache`, by name.
pub(crate) fn saved_states(data: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(data.join("models").join(".prompt-cache"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn a_model_pulled_from_a_hub_is_prepared_so_the_first_chat_reads_only_its_own_part() {
    let _one = one_model_at_a_time();
    let bytes = std::fs::read(models_dir().join(format!("{MODEL}.gguf"))).unwrap();
    let hub = skald_testkit::hub::Hub::new(vec![(
        "someone/SmolLM2-GGUF/SmolLM2-135M-Instruct-Q4_1.gguf",
        skald_testkit::hub::HubFile {
            bytes,
            ..Default::default()
        },
    )]);
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let out = offline(data.path())
        .current_dir(work.path())
        .env("HF_ENDPOINT", &hub.endpoint)
        .args([
            "models",
            "pull",
            "hf:someone/SmolLM2-GGUF/SmolLM2-135M-Instruct-Q4_1.gguf",
            "--name",
            "smol",
        ])
        .output()
        .unwrap();
    let stdout = ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("`smol` is ready"), "{stdout}");
    assert!(stderr.contains("pulling smol: "), "{stderr}");
    // Checked against the checksum the hub published: no warning about an unchecked file.
    assert!(!stderr.contains("publishes no checksum"), "{stderr}");
    assert!(
        stderr.contains("reading the agent's prompt… 100%")
            && stderr.contains("new chats start from the prepared prompt"),
        "{stderr}"
    );
    let states = saved_states(data.path());
    assert!(!states.is_empty(), "the prepared state is saved");
    // The first chat: the shared beginning is loaded, not read (a read of it would report
    // its progress), and no other state is saved beside the prepared one.
    let out = offline(data.path())
        .current_dir(work.path())
        .args(["exec", "--json", "--model", "local/smol", "Say hi."])
        .output()
        .unwrap();
    let ev = events(&ok(&out));
    assert_eq!(ev.last().unwrap()["outcome"], "final", "{ev:?}");
    let reading: Vec<&Value> = ev
        .iter()
        .filter(|e| e["type"] == "prompt_progress")
        .collect();
    assert!(reading.is_empty(), "the chat read the prompt: {reading:?}");
    assert_eq!(saved_states(data.path()), states);
    // Preparing again finds the state and reads nothing.
    let out = offline(data.path())
        .current_dir(work.path())
        .args(["models", "prepare", "smol"])
        .output()
        .unwrap();
    ok(&out);
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("%"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(saved_states(data.path()), states);
}

#[test]
fn only_local_models_are_prepared() {
    let data = tempfile::tempdir().unwrap();
    let out = offline(data.path())
        .env("SKALD_MODEL", "openai/gpt-4o")
        .env("OPENAI_API_KEY", "sk-test")
        .args(["models", "prepare"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is not a local model"), "{err}");
}
