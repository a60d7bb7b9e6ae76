//! Ollama's native `/api/chat`, streamed as one JSON object per line.

use crate::provider::{Provider, WireParser, drive};
use crate::{Event, EventStream, FinishReason, LlmError, Message, Request, Role, ToolCall, Usage};
use bytes::{Buf, BytesMut};
use futures::StreamExt;
use serde_json::{Value, json};

const PROVIDER: &str = "ollama";
/// A line longer than this is not a chunk of a chat stream.
const MAX_LINE: usize = 16 * 1024 * 1024;

pub(crate) async fn start(p: &Provider, req: &Request) -> Result<EventStream, LlmError> {
    let url = format!("{}/api/chat", p.base_url);
    let resp = p.post(&url, &body(req), &[]).await?;
    let lines = ndjson_lines(resp.bytes_stream());
    Ok(drive(PROVIDER, p.timeouts.idle, lines, Parser::default()))
}

fn message_json(m: &Message) -> Value {
    match m.role {
        Role::System => json!({"role": "system", "content": m.content}),
        Role::User => {
            let mut v = json!({"role": "user", "content": m.content});
            let (images, notes) = images_b64(&m.images);
            if !images.is_empty() {
                v["images"] = json!(images);
            }
            if !notes.is_empty() {
                v["content"] = json!(format!("{}\n\n{}", m.content, notes.join("\n")));
            }
            v
        }
        Role::Tool => json!({"role": "tool", "content": m.content}),
        Role::Assistant => {
            let mut v = json!({"role": "assistant", "content": m.content});
            if !m.tool_calls.is_empty() {
                v["tool_calls"] = m
                    .tool_calls
                    .iter()
                    .map(|c| {
                        let args: Value = serde_json::from_str(&c.arguments)
                            .ok()
                            .filter(Value::is_object)
                            .unwrap_or_else(|| json!({}));
                        json!({"function": {"name": c.name, "arguments": args}})
                    })
                    .collect();
            }
            v
        }
    }
}

/// The messages as `/api/chat` takes them; the images of tool results follow the run of
/// tool messages they belong to, in a user message that says whose they are (a user
/// message's images are the ones every vision model reads).
fn messages_json(messages: &[Message]) -> Vec<Value> {
    crate::vision::tool_images_as_user(messages)
        .iter()
        .map(|m| message_json(m))
        .collect()
}

/// Images as Ollama takes them (bare base64), fitted to its limits; and a line for each
/// that could not be.
fn images_b64(images: &[crate::vision::ImagePart]) -> (Vec<String>, Vec<String>) {
    let (mut shown, mut notes) = (Vec::new(), Vec::new());
    for img in images {
        match crate::vision::shown(img, crate::vision::OLLAMA_LIMITS) {
            crate::vision::Shown::Image(f) => shown.push(f.base64.clone()),
            crate::vision::Shown::Note(note) => notes.push(note),
        }
    }
    (shown, notes)
}

pub(crate) fn body(req: &Request) -> Value {
    let mut body = json!({
        "model": req.model,
        "messages": messages_json(&req.messages),
        "stream": true,
    });
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.parameters}})
            })
            .collect();
    }
    if let Some(e) = req.effort {
        body["think"] = crate::effort::ollama_think(&req.model, e);
    }
    let mut options = serde_json::Map::new();
    if let Some(n) = req.max_tokens {
        options.insert("num_predict".into(), json!(n));
    }
    if let Some(t) = req.temperature {
        options.insert("temperature".into(), json!(t));
    }
    if !options.is_empty() {
        body["options"] = Value::Object(options);
    }
    body
}

/// Splits a byte stream into lines.
pub(crate) fn ndjson_lines<S>(
    bytes: S,
) -> impl futures::Stream<Item = Result<String, LlmError>> + Send + Unpin + 'static
where
    S: futures::Stream<Item = Result<bytes::Bytes, reqwest::Error>> + Send + Unpin + 'static,
{
    struct St<S> {
        bytes: S,
        buf: BytesMut,
        ended: bool,
    }
    futures::stream::unfold(
        St {
            bytes,
            buf: BytesMut::new(),
            ended: false,
        },
        |mut st| async move {
            loop {
                if let Some(pos) = st.buf.iter().position(|&b| b == b'\n') {
                    let line = st.buf.split_to(pos + 1);
                    let text = String::from_utf8_lossy(&line[..pos]).trim().to_string();
                    if text.is_empty() {
                        continue;
                    }
                    return Some((Ok(text), st));
                }
                if st.ended {
                    if st.buf.is_empty() {
                        return None;
                    }
                    let text = String::from_utf8_lossy(&st.buf).trim().to_string();
                    st.buf.advance(st.buf.len());
                    if text.is_empty() {
                        return None;
                    }
                    return Some((Ok(text), st));
                }
                if st.buf.len() > MAX_LINE {
                    st.ended = true;
                    st.buf.clear();
                    return Some((
                        Err(LlmError::Protocol {
                            provider: PROVIDER,
                            message: "a line exceeds 16 MB".into(),
                        }),
                        st,
                    ));
                }
                match st.bytes.next().await {
                    Some(Ok(chunk)) => st.buf.extend_from_slice(&chunk),
                    Some(Err(e)) => {
                        st.ended = true;
                        st.buf.clear();
                        return Some((
                            Err(LlmError::Connect {
                                provider: PROVIDER,
                                message: e.to_string(),
                            }),
                            st,
                        ));
                    }
                    None => st.ended = true,
                }
            }
        },
    )
    .boxed()
}

#[derive(Default)]
pub(crate) struct Parser {
    calls: usize,
    saw_calls: bool,
    done: bool,
    finish: Option<FinishReason>,
}

impl WireParser for Parser {
    type Item = String;

    fn feed(&mut self, line: String) -> Result<Vec<Event>, LlmError> {
        let v: Value = serde_json::from_str(&line).map_err(|e| LlmError::Protocol {
            provider: PROVIDER,
            message: format!("a line is not JSON ({e}): {}", crate::types::preview(&line)),
        })?;
        if let Some(err) = v.get("error") {
            let message = err
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| err.to_string());
            return Err(LlmError::Status {
                provider: PROVIDER,
                status: 500,
                message,
                retry_after: None,
            });
        }
        let mut out = Vec::new();
        let msg = v.get("message").unwrap_or(&Value::Null);
        if let Some(t) = msg
            .get("thinking")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
        {
            out.push(Event::Reasoning {
                delta: t.to_string(),
            });
        }
        if let Some(t) = msg
            .get("content")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
        {
            out.push(Event::Text {
                delta: t.to_string(),
            });
        }
        // Ollama sends each tool call whole, arguments as an object.
        if let Some(calls) = msg.get("tool_calls").and_then(Value::as_array) {
            for c in calls {
                let f = c.get("function").unwrap_or(&Value::Null);
                let name = f
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                if name.is_empty() {
                    continue;
                }
                let arguments = match f.get("arguments") {
                    Some(Value::String(s)) => s.clone(),
                    Some(v) if !v.is_null() => v.to_string(),
                    _ => "{}".to_string(),
                };
                let id = c
                    .get("id")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("call_{}_{:08x}", self.calls, fastrand::u32(..)));
                self.calls += 1;
                self.saw_calls = true;
                out.push(Event::ToolCall {
                    call: ToolCall {
                        id,
                        name,
                        arguments,
                    },
                });
            }
        }
        if v.get("done").and_then(Value::as_bool) == Some(true) {
            self.done = true;
            self.finish = Some(match v.get("done_reason").and_then(Value::as_str) {
                Some("length") => FinishReason::Length,
                _ if self.saw_calls => FinishReason::ToolCalls,
                Some("stop") | None => FinishReason::Stop,
                Some(other) => FinishReason::Other(other.to_string()),
            });
            out.push(Event::Usage {
                usage: Usage {
                    input_tokens: v
                        .get("prompt_eval_count")
                        .and_then(Value::as_u64)
                        .unwrap_or(0),
                    output_tokens: v.get("eval_count").and_then(Value::as_u64).unwrap_or(0),
                    cached_input_tokens: 0,
                },
            });
        }
        Ok(out)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn finish(&mut self) -> Result<Vec<Event>, LlmError> {
        match self.finish.take() {
            Some(reason) => Ok(vec![Event::Finish { reason }]),
            None => Err(LlmError::StreamCut { provider: PROVIDER }),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::vision::tests::tiny_png;

    #[test]
    fn images_go_in_the_images_field_and_tool_images_follow_the_tool_messages() {
        let img = tiny_png();
        let b64 = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &img.data);
        let req = Request {
            model: "m".into(),
            messages: vec![
                Message::user("what is this?").with_images(vec![img.clone()]),
                Message::assistant(
                    "",
                    vec![ToolCall {
                        id: "a".into(),
                        name: "read_file".into(),
                        arguments: "{}".into(),
                    }],
                ),
                Message::tool_result("a", "an image").with_images(vec![img.clone()]),
            ],
            tools: vec![],
            tool_choice: crate::ToolChoice::Auto,
            max_tokens: None,
            temperature: None,
            effort: None,
            web_search: false,
        };
        let body = body(&req);
        let m = body["messages"].as_array().unwrap();
        assert_eq!(
            m[0],
            json!({"role": "user", "content": "what is this?", "images": [b64.clone()]})
        );
        assert_eq!(m[2], json!({"role": "tool", "content": "an image"}));
        assert_eq!(
            m[3],
            json!({"role": "user", "content": "The image of tool call a:", "images": [b64]})
        );
    }

    use super::*;

    fn run(lines: &[&str]) -> Result<Vec<Event>, LlmError> {
        let mut p = Parser::default();
        let mut out = Vec::new();
        for l in lines {
            out.extend(p.feed((*l).to_string())?);
            if p.is_done() {
                break;
            }
        }
        out.extend(p.finish()?);
        Ok(out)
    }

    #[test]
    fn text_and_tool_calls() {
        let events = run(&[
            r#"{"model":"llama3.2","created_at":"2026-11-30T00:00:00Z","message":{"role":"assistant","content":"Checking"},"done":false}"#,
            r#"{"model":"llama3.2","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"read_file","arguments":{"path":"a.rs"}}}]},"done":false}"#,
            r#"{"model":"llama3.2","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":30,"eval_count":9}"#,
        ])
        .unwrap();
        assert_eq!(
            events[0],
            Event::Text {
                delta: "Checking".into()
            }
        );
        let Event::ToolCall { call } = &events[1] else {
            panic!("{events:?}")
        };
        assert_eq!(call.name, "read_file");
        assert_eq!(call.arguments, r#"{"path":"a.rs"}"#);
        assert_eq!(
            events[2],
            Event::Usage {
                usage: Usage {
                    input_tokens: 30,
                    output_tokens: 9,
                    cached_input_tokens: 0
                }
            }
        );
        assert_eq!(
            events[3],
            Event::Finish {
                reason: FinishReason::ToolCalls
            }
        );
    }

    #[test]
    fn errors_and_cut_streams() {
        let err = run(&[r#"{"error":"model 'x' not found"}"#]).unwrap_err();
        assert!(err.to_string().contains("not found"));
        let err = run(&[r#"{"message":{"content":"par"},"done":false}"#]).unwrap_err();
        assert_eq!(err, LlmError::StreamCut { provider: "ollama" });
    }

    #[tokio::test]
    async fn lines_are_split_across_chunks() {
        let chunks: Vec<Result<bytes::Bytes, reqwest::Error>> = vec![
            Ok(bytes::Bytes::from_static(b"{\"a\":1}\n{\"b\"")),
            Ok(bytes::Bytes::from_static(b":2}\n\n{\"c\":3}")),
        ];
        let lines: Vec<String> = ndjson_lines(futures::stream::iter(chunks))
            .map(|l| l.unwrap())
            .collect()
            .await;
        assert_eq!(lines, [r#"{"a":1}"#, r#"{"b":2}"#, r#"{"c":3}"#]);
    }

    #[test]
    fn an_effort_is_sent_as_think() {
        let req = |model: &str| Request {
            model: model.into(),
            messages: vec![Message::user("hi")],
            tools: vec![],
            tool_choice: crate::ToolChoice::Auto,
            max_tokens: None,
            temperature: None,
            effort: Some(crate::effort::Effort::High),
            web_search: false,
        };
        assert_eq!(body(&req("qwen3:8b"))["think"], true);
        assert_eq!(body(&req("gpt-oss:20b"))["think"], "high");
    }
}
