//! Images shown to a model (docs/images.md): `skald exec --image` and `read_file` of an
//! image, against scripted servers of each provider protocol that look at the image parts
//! they are sent.

use crate::common::{SkaldCmd, bare};
use serde_json::{Value, json};
use skald_testkit::{ScriptedServer, answer, tool_call};
use std::path::Path;

/// A 1×1 PNG.
const PNG_B64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn png() -> Vec<u8> {
    base64_decode(PNG_B64)
}

fn base64_decode(s: &str) -> Vec<u8> {
    const ABC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in s.bytes().filter(|c| *c != b'=') {
        acc = (acc << 6) | ABC.iter().position(|a| *a == c).unwrap() as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

struct Folders {
    data: tempfile::TempDir,
    work: tempfile::TempDir,
}

fn folders() -> Folders {
    let f = Folders {
        data: tempfile::tempdir().unwrap(),
        work: tempfile::tempdir().unwrap(),
    };
    std::fs::write(f.work.path().join("shot.png"), png()).unwrap();
    f
}

fn exec(
    cmd: SkaldCmd,
    work: &Path,
    extra: &[&str],
    prompt: &str,
) -> (std::process::Output, Vec<Value>) {
    let (out, events) = cmd.exec_json(work, extra, prompt);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (out, events)
}

fn bodies(server: &ScriptedServer) -> Vec<Value> {
    server.recorded().into_iter().map(|r| r.body).collect()
}

#[test]
fn an_image_reaches_an_openai_compatible_model_as_an_image_url_part() {
    let f = folders();
    let server = ScriptedServer::new(vec![answer("A single pixel.")]);
    let shot = f.work.path().join("shot.png");
    let (_, events) = exec(
        SkaldCmd::new(f.data.path()).against(&server),
        f.work.path(),
        &["--image", shot.to_str().unwrap()],
        "What is in this picture?",
    );
    let user = events.iter().find(|e| e["type"] == "user_message").unwrap();
    assert_eq!(user["images"][0]["media_type"], "image/png");
    assert_eq!(user["images"][0]["name"], "shot.png");
    assert_eq!(
        (
            user["images"][0]["width"].as_u64(),
            user["images"][0]["height"].as_u64()
        ),
        (Some(1), Some(1))
    );
    let body = &bodies(&server)[0];
    let asked = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap();
    assert_eq!(
        asked["content"],
        json!([{"type": "text", "text": "What is in this picture?"},
               {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG_B64}")}}])
    );
    // The chat keeps it: the next turn of the same session sends it again.
    let session = events[0]["session_id"].as_i64().unwrap().to_string();
    let server2 = ScriptedServer::new(vec![answer("Still one pixel.")]);
    exec(
        SkaldCmd::new(f.data.path()).against(&server2),
        f.work.path(),
        &["--session", &session],
        "And now?",
    );
    let again = bodies(&server2)[0]["messages"].to_string();
    assert!(
        again.contains(&format!("data:image/png;base64,{PNG_B64}")),
        "{again}"
    );
}

/// A model nothing says is blind, behind an OpenAI-compatible server that cannot take
/// images (llama.cpp's without a projector): its refusal makes Skald ask again without the
/// image, say so, and send that model no images from then on.
#[test]
fn a_model_whose_server_refuses_images_is_asked_again_without_them() {
    let f = folders();
    let server = ScriptedServer::new(vec![
        (
            400,
            "application/json",
            r#"{"error": {"code": 400, "message": "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj", "type": "invalid_request_error"}}"#.to_string(),
        ),
        answer("I cannot see it."),
    ]);
    let shot = f.work.path().join("shot.png");
    let (_, events) = exec(
        SkaldCmd::new(f.data.path()).against(&server),
        f.work.path(),
        &["--image", shot.to_str().unwrap()],
        "What is in this picture?",
    );
    let told = events
        .iter()
        .find(|e| e["type"] == "llm_failed")
        .unwrap_or_else(|| panic!("{events:?}"));
    assert!(
        told["message"]
            .as_str()
            .unwrap()
            .contains("refused the images")
            && told["retrying"] == true,
        "{told}"
    );
    assert_eq!(events.last().unwrap()["text"], "I cannot see it.");
    let sent = bodies(&server);
    assert_eq!(sent.len(), 2);
    assert!(sent[0].to_string().contains("image_url"));
    let again = sent[1]["messages"].to_string();
    assert!(
        !again.contains("image_url") && !again.contains(PNG_B64),
        "{again}"
    );
    assert!(again.contains("cannot see images"), "{again}");
    // Other refusals are not read as one about images: a 400 about something else moves
    // on as any failure does.
    let f = folders();
    let server = ScriptedServer::new(vec![(
        400,
        "application/json",
        r#"{"error": {"message": "max_tokens is too large"}}"#.to_string(),
    )]);
    let (out, events) = SkaldCmd::new(f.data.path()).against(&server).exec_json(
        f.work.path(),
        &["--image", shot.to_str().unwrap()],
        "What is in this picture?",
    );
    assert_eq!(out.status.code(), Some(1), "{events:?}");
    assert_eq!(server.recorded().len(), 1);
}

#[test]
fn an_image_reaches_anthropic_and_ollama_in_their_own_forms() {
    // Anthropic: a base64 image block before the text.
    let f = folders();
    let sse = crate::common::anthropic_sse;
    let anthropic = ScriptedServer::new(vec![(
        200,
        "text/event-stream",
        sse(&[
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 20}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "A pixel."}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}}),
            json!({"type": "message_stop"}),
        ]),
    )]);
    let shot = f.work.path().join("shot.png");
    exec(
        SkaldCmd::new(f.data.path())
            .env("ANTHROPIC_BASE_URL", anthropic.origin())
            .env("ANTHROPIC_API_KEY", "ant-key")
            .env("SKALD_MODEL", "anthropic/claude-test"),
        f.work.path(),
        &["--image", shot.to_str().unwrap()],
        "What is this?",
    );
    let body = &bodies(&anthropic)[0];
    assert_eq!(
        body["messages"][0]["content"],
        json!([{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}},
               {"type": "text", "text": "What is this?"}])
    );

    // Ollama: the message's `images`, for a model known to see.
    let f = folders();
    let ndjson = |lines: &[Value]| -> String { lines.iter().map(|l| format!("{l}\n")).collect() };
    let ollama = ScriptedServer::new(vec![(
        200,
        "application/x-ndjson",
        ndjson(&[
            json!({"message": {"role": "assistant", "content": "A pixel."}, "done": false}),
            json!({"message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop"}),
        ]),
    )]);
    let host = ollama.host();
    let shot = f.work.path().join("shot.png");
    exec(
        SkaldCmd::new(f.data.path())
            .env("OLLAMA_HOST", &host)
            .env("SKALD_MODEL", "ollama/llava:7b"),
        f.work.path(),
        &["--image", shot.to_str().unwrap()],
        "What is this?",
    );
    let body = &bodies(&ollama)[0];
    let user = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap();
    assert_eq!(user["content"], "What is this?");
    assert_eq!(user["images"], json!([PNG_B64]));
}

#[test]
fn read_file_of_an_image_shows_it_to_the_model_with_the_result() {
    let f = folders();
    let server = ScriptedServer::new(vec![
        tool_call("c1", "read_file", r#"{"path": "shot.png"}"#),
        answer("It is one pixel."),
    ]);
    let (_, events) = exec(
        SkaldCmd::new(f.data.path()).against(&server),
        f.work.path(),
        &[],
        "Look at shot.png",
    );
    let done = events.iter().find(|e| e["type"] == "tool_done").unwrap();
    assert!(
        done["result"]
            .as_str()
            .unwrap()
            .ends_with("shot.png is a PNG image (70 bytes); it is shown to you with this result."),
        "{done}"
    );
    assert_eq!(done["images"][0]["name"], "shot.png");
    let second = bodies(&server)[1]["messages"].as_array().unwrap().clone();
    let tool = second.iter().position(|m| m["role"] == "tool").unwrap();
    assert_eq!(second[tool]["tool_call_id"], "c1");
    // A tool message carries text only: the image follows it in a user message.
    assert_eq!(second[tool + 1]["role"], "user");
    assert_eq!(
        second[tool + 1]["content"],
        json!([{"type": "text", "text": "The image of tool call c1:"},
               {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG_B64}")}}])
    );
}

#[test]
fn a_model_that_cannot_see_is_told_an_image_was_there_and_the_user_warned() {
    let f = folders();
    std::fs::write(
        f.data.path().join("config.toml"),
        "[models.vision]\n\"openai/scripted-*\" = false\n",
    )
    .unwrap();
    let server = ScriptedServer::new(vec![
        tool_call("c1", "read_file", r#"{"path": "shot.png"}"#),
        answer("I cannot see it."),
    ]);
    let shot = f.work.path().join("shot.png");
    let (out, events) = exec(
        SkaldCmd::new(f.data.path()).against(&server),
        f.work.path(),
        &["--image", shot.to_str().unwrap()],
        "What is this?",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("openai/scripted-model cannot see images"),
        "{stderr}"
    );
    let requests = bodies(&server);
    let first = requests[0]["messages"].to_string();
    assert!(
        !first.contains("image_url") && !first.contains(PNG_B64),
        "{first}"
    );
    assert!(
        first.contains("What is this?\\n\\n[1 image attached here; the model answering (openai/scripted-model) cannot see images]"),
        "{first}"
    );
    // read_file describes the image instead of showing it.
    let done = events.iter().find(|e| e["type"] == "tool_done").unwrap();
    assert!(
        done["result"]
            .as_str()
            .unwrap()
            .contains("not shown: images reach the model only in a chat whose model can see them"),
        "{done}"
    );
    assert!(done.get("images").is_none(), "{done}");
}

#[test]
fn a_file_that_is_no_image_is_refused_before_a_chat_is_made() {
    let f = folders();
    let notes = f.work.path().join("notes.png");
    std::fs::write(&notes, "just text").unwrap();
    let server = ScriptedServer::new(vec![answer("unused")]);
    let out = SkaldCmd::new(f.data.path())
        .against(&server)
        .cmd()
        .args(["exec", "--image"])
        .arg(&notes)
        .arg("What is this?")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("notes.png: not a PNG, JPEG, WebP or GIF image"),
        "{stderr}"
    );
    let missing = f.work.path().join("missing.png");
    let out = SkaldCmd::new(f.data.path())
        .against(&server)
        .cmd()
        .args(["exec", "--image"])
        .arg(&missing)
        .arg("What is this?")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.png"));
    // A device or a pipe is refused at once, not read for ever.
    let out = SkaldCmd::new(f.data.path())
        .against(&server)
        .cmd()
        .args(["exec", "--image", "/dev/zero", "What is this?"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("/dev/zero: not a regular file"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(server.recorded().is_empty());
    let list = bare(f.data.path())
        .args(["sessions", "list", "--json"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&list.stdout).trim(), "[]");
}
