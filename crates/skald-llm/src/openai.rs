//! OpenAI chat completions, streamed: the protocol of OpenAI and of most servers that run
//! models (OpenRouter, LM Studio, vLLM, llama.cpp's server, Ollama's /v1).

use crate::provider::{
    Provider, ProviderKind, WireParser, drive, led_by_limits, sse_items, stated_limits,
};
use crate::{Event, EventStream, FinishReason, LlmError, Message, Request, Role, ToolCall, Usage};
use serde_json::{Value, json};
use std::collections::BTreeMap;

const PROVIDER: &str = "openai";

pub(crate) async fn start(p: &Provider, req: &Request) -> Result<EventStream, LlmError> {
    let url = format!("{}/chat/completions", p.base_url);
    let mut headers = Vec::new();
    if let Some(key) = p.api_key() {
        headers.push(("authorization", format!("Bearer {key}")));
    }
    let resp = p.post(&url, &body(req), &headers).await?;
    let limits = stated_limits(ProviderKind::OpenAi, &resp);
    let stream = drive(
        PROVIDER,
        p.timeouts.idle,
        sse_items(PROVIDER, resp),
        Parser::default(),
    );
    Ok(led_by_limits(limits, stream))
}

pub(crate) fn message_json(m: &Message) -> Value {
    match m.role {
        Role::System => json!({"role": "system", "content": m.content}),
        Role::User if !m.images.is_empty() => {
            let mut parts = Vec::new();
            if !m.content.trim().is_empty() {
                parts.push(json!({"type": "text", "text": m.content}));
            }
            parts.extend(image_parts(&m.images));
            json!({"role": "user", "content": parts})
        }
        Role::User => json!({"role": "user", "content": m.content}),
        Role::Tool => json!({
            "role": "tool",
            "tool_call_id": m.tool_call_id.clone().unwrap_or_default(),
            "content": m.content,
        }),
        Role::Assistant => {
            let mut v = json!({"role": "assistant", "content": m.content});
            if !m.tool_calls.is_empty() {
                v["tool_calls"] = m
                    .tool_calls
                    .iter()
                    .map(|c| {
                        json!({"id": c.id, "type": "function",
                               "function": {"name": c.name, "arguments": c.arguments}})
                    })
                    .collect();
            }
            v
        }
    }
}

/// The messages as chat completions take them. A tool message holds text only, so the
/// images of tool results follow the run of tool messages they belong to, in a user message
/// that says whose they are.
pub(crate) fn messages_json(messages: &[Message]) -> Vec<Value> {
    crate::vision::tool_images_as_user(messages)
        .iter()
        .map(|m| message_json(m))
        .collect()
}

/// `image_url` parts (data URLs) of images fitted to OpenAI's limits.
fn image_parts(images: &[crate::vision::ImagePart]) -> Vec<Value> {
    images
        .iter()
        .map(
            |img| match crate::vision::shown(img, crate::vision::OPENAI_LIMITS) {
                crate::vision::Shown::Image(f) => {
                    json!({"type": "image_url", "image_url": {"url": f.data_url()}})
                }
                crate::vision::Shown::Note(note) => json!({"type": "text", "text": note}),
            },
        )
        .collect()
}

pub(crate) fn body(req: &Request) -> Value {
    let mut body = json!({
        "model": req.model,
        "messages": messages_json(&req.messages),
        "stream": true,
        "stream_options": {"include_usage": true},
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
        if req.tool_choice == crate::ToolChoice::Required {
            body["tool_choice"] = json!("required");
        }
    }
    if let Some(n) = req.max_tokens {
        body["max_tokens"] = json!(n);
    }
    if let Some(t) = req.temperature {
        body["temperature"] = json!(t);
    }
    if let Some(e) = req.effort {
        body["reasoning_effort"] = json!(e.as_str());
    }
    body
}

#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Assembles the chunks of one streamed answer.
#[derive(Default)]
pub(crate) struct Parser {
    calls: BTreeMap<u64, PartialCall>,
    finish: Option<FinishReason>,
    calls_emitted: bool,
    done: bool,
}

fn finish_reason(s: &str) -> FinishReason {
    match s {
        "stop" | "end_turn" | "eos" => FinishReason::Stop,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "length" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_string()),
    }
}

impl Parser {
    /// The assembled tool calls, once: at the finish reason or at the end of the stream.
    fn take_calls(&mut self) -> Vec<Event> {
        if self.calls_emitted {
            return Vec::new();
        }
        self.calls_emitted = true;
        std::mem::take(&mut self.calls)
            .into_iter()
            .filter(|(_, c)| !c.name.is_empty())
            .map(|(index, c)| Event::ToolCall {
                call: ToolCall {
                    // Some local servers send no id; the loop needs one to pair results.
                    id: if c.id.is_empty() {
                        format!("call_{index}_{:08x}", fastrand::u32(..))
                    } else {
                        c.id
                    },
                    name: c.name,
                    arguments: if c.arguments.trim().is_empty() {
                        "{}".to_string()
                    } else {
                        c.arguments
                    },
                },
            })
            .collect()
    }

    fn chunk(&mut self, chunk: &Value) -> Result<Vec<Event>, LlmError> {
        let mut out = Vec::new();
        if let Some(err) = chunk.get("error") {
            let message = err
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| err.to_string());
            let status = err
                .get("code")
                .and_then(Value::as_u64)
                .and_then(|c| u16::try_from(c).ok())
                .unwrap_or(502);
            return Err(LlmError::Status {
                provider: PROVIDER,
                status,
                message,
                retry_after: None,
            });
        }
        if let Some(choice) = chunk.get("choices").and_then(|c| c.get(0)) {
            let delta = choice.get("delta").unwrap_or(&Value::Null);
            if let Some(text) = delta.get("content").and_then(Value::as_str)
                && !text.is_empty()
            {
                out.push(Event::Text {
                    delta: text.to_string(),
                });
            }
            // DeepSeek, vLLM and OpenRouter stream visible reasoning under these names.
            for key in ["reasoning_content", "reasoning"] {
                if let Some(r) = delta.get(key).and_then(Value::as_str)
                    && !r.is_empty()
                {
                    out.push(Event::Reasoning {
                        delta: r.to_string(),
                    });
                }
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for (pos, c) in calls.iter().enumerate() {
                    let index = c.get("index").and_then(Value::as_u64).unwrap_or(pos as u64);
                    let f = c.get("function").unwrap_or(&Value::Null);
                    self.merge(
                        index,
                        c.get("id").and_then(Value::as_str),
                        f.get("name").and_then(Value::as_str),
                        f.get("arguments"),
                    );
                }
            }
            // The legacy single `function_call` of older servers.
            if let Some(f) = delta.get("function_call") {
                self.merge(
                    0,
                    None,
                    f.get("name").and_then(Value::as_str),
                    f.get("arguments"),
                );
            }
            // Some servers send `""` on every chunk; only a real reason ends the calls.
            if let Some(reason) = choice
                .get("finish_reason")
                .and_then(Value::as_str)
                .filter(|r| !r.is_empty())
            {
                self.finish = Some(finish_reason(reason));
                out.extend(self.take_calls());
            }
        }
        if let Some(u) = chunk.get("usage").filter(|u| !u.is_null()) {
            out.push(Event::Usage {
                usage: Usage {
                    input_tokens: u.get("prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
                    output_tokens: u
                        .get("completion_tokens")
                        .and_then(Value::as_u64)
                        .unwrap_or(0),
                    cached_input_tokens: u
                        .pointer("/prompt_tokens_details/cached_tokens")
                        .and_then(Value::as_u64)
                        .unwrap_or(0),
                },
            });
        }
        Ok(out)
    }

    /// Adds one chunk of a tool call. Servers that repeat the id and name on every chunk
    /// must not get them doubled; arguments may come as text pieces or (some servers) as a
    /// whole JSON object.
    fn merge(&mut self, index: u64, id: Option<&str>, name: Option<&str>, args: Option<&Value>) {
        let call = self.calls.entry(index).or_default();
        if let Some(id) = id.filter(|s| !s.is_empty())
            && call.id.is_empty()
        {
            call.id = id.to_string();
        }
        // Servers that stream the name in pieces get them joined; servers that repeat
        // the whole name on every chunk get it once.
        if let Some(name) = name.filter(|s| !s.is_empty())
            && call.name != name
            && !call.name.ends_with(name)
        {
            call.name.push_str(name);
        }
        match args {
            Some(Value::String(piece)) => call.arguments.push_str(piece),
            Some(obj @ Value::Object(_)) => call.arguments = obj.to_string(),
            _ => {}
        }
    }
}

impl WireParser for Parser {
    type Item = eventsource_stream::Event;

    fn feed(&mut self, ev: eventsource_stream::Event) -> Result<Vec<Event>, LlmError> {
        let data = ev.data.trim();
        if data.is_empty() {
            return Ok(Vec::new());
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(Vec::new());
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| LlmError::Protocol {
            provider: PROVIDER,
            message: format!("a chunk is not JSON ({e}): {}", crate::types::preview(data)),
        })?;
        self.chunk(&chunk)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn finish(&mut self) -> Result<Vec<Event>, LlmError> {
        // `[DONE]` or at least a finish reason means the answer is whole; a stream that
        // just stops is cut.
        if !self.done && self.finish.is_none() {
            return Err(LlmError::StreamCut { provider: PROVIDER });
        }
        let mut out = self.take_calls();
        let reason = self.finish.take().unwrap_or(FinishReason::Stop);
        out.push(Event::Finish { reason });
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::vision::tests::tiny_png;

    #[test]
    fn images_go_as_image_url_parts_and_tool_images_follow_the_tool_messages() {
        let img = tiny_png();
        let b64 = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &img.data);
        let req = Request {
            model: "m".into(),
            messages: vec![
                Message::user("what is this?").with_images(vec![img.clone()]),
                Message::assistant(
                    "",
                    vec![
                        ToolCall {
                            id: "a".into(),
                            name: "read_file".into(),
                            arguments: "{}".into(),
                        },
                        ToolCall {
                            id: "b".into(),
                            name: "read_file".into(),
                            arguments: "{}".into(),
                        },
                    ],
                ),
                Message::tool_result("a", "an image").with_images(vec![img.clone()]),
                Message::tool_result("b", "text"),
                Message::user("next"),
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
        assert_eq!(m.len(), 6, "{m:#?}");
        assert_eq!(
            m[0]["content"],
            json!([{"type": "text", "text": "what is this?"},
                   {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{b64}")}}])
        );
        assert_eq!(
            m[2],
            json!({"role": "tool", "tool_call_id": "a", "content": "an image"})
        );
        assert_eq!(m[3]["role"], "tool");
        assert_eq!(m[4]["role"], "user");
        assert_eq!(
            m[4]["content"][0],
            json!({"type": "text", "text": "The image of tool call a:"})
        );
        assert_eq!(
            m[4]["content"][1]["image_url"]["url"],
            format!("data:image/png;base64,{b64}")
        );
        assert_eq!(m[5], json!({"role": "user", "content": "next"}));
    }

    use super::*;
    use crate::types::tests::run_sse;

    fn run(stream: &str) -> Result<Vec<Event>, LlmError> {
        run_sse(Parser::default(), stream)
    }

    fn text(events: &[Event]) -> String {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Text { delta } => Some(delta.as_str()),
                _ => None,
            })
            .collect()
    }

    fn calls(events: &[Event]) -> Vec<ToolCall> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::ToolCall { call } => Some(call.clone()),
                _ => None,
            })
            .collect()
    }

    /// As api.openai.com streams it: role chunk, content, finish, usage chunk, [DONE],
    /// with a keep-alive comment in between.
    #[test]
    fn text_answer_with_usage() {
        let events = run(concat!(
            "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}],\"usage\":null}\n\n",
            ": keep-alive\n\n",
            "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"},\"finish_reason\":null}],\"usage\":null}\n\n",
            "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo ✓\"},\"finish_reason\":null}],\"usage\":null}\n\n",
            "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n",
            "data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3,\"total_tokens\":15}}\n\n",
            "data: [DONE]\n\n",
        ))
        .unwrap();
        assert_eq!(text(&events), "Hello ✓");
        assert!(events.contains(&Event::Usage {
            usage: Usage {
                input_tokens: 12,
                output_tokens: 3,
                cached_input_tokens: 0
            }
        }));
        assert_eq!(
            events.last(),
            Some(&Event::Finish {
                reason: FinishReason::Stop
            })
        );
    }

    /// Two parallel tool calls, their arguments split across chunks, as OpenAI sends them.
    #[test]
    fn parallel_tool_calls_are_assembled_by_index() {
        let events = run(concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"path\\\": \"}}]},\"finish_reason\":null}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"a.rs\\\"}\"}}]},\"finish_reason\":null}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_b\",\"type\":\"function\",\"function\":{\"name\":\"list_files\",\"arguments\":\"{}\"}}]},\"finish_reason\":null}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: [DONE]\n\n",
        ))
        .unwrap();
        assert_eq!(
            calls(&events),
            vec![
                ToolCall {
                    id: "call_a".into(),
                    name: "read_file".into(),
                    arguments: "{\"path\": \"a.rs\"}".into()
                },
                ToolCall {
                    id: "call_b".into(),
                    name: "list_files".into(),
                    arguments: "{}".into()
                },
            ]
        );
        assert_eq!(
            events.last(),
            Some(&Event::Finish {
                reason: FinishReason::ToolCalls
            })
        );
    }

    /// Some servers repeat the id and name on every chunk; some send no usage at all.
    #[test]
    fn repeated_id_and_name_are_not_doubled() {
        let events = run(concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"x1\",\"function\":{\"name\":\"grep_files\",\"arguments\":\"{\\\"pattern\\\"\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"x1\",\"function\":{\"name\":\"grep_files\",\"arguments\":\": \\\"fn\\\"}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: [DONE]\n\n",
        ))
        .unwrap();
        assert_eq!(
            calls(&events),
            vec![ToolCall {
                id: "x1".into(),
                name: "grep_files".into(),
                arguments: "{\"pattern\": \"fn\"}".into()
            }]
        );
        assert!(!events.iter().any(|e| matches!(e, Event::Usage { .. })));
    }

    #[test]
    fn legacy_function_call_and_missing_id() {
        let events = run(concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"function_call\":{\"name\":\"list_files\",\"arguments\":\"{\\\"depth\\\":\"}}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"function_call\":{\"arguments\":\" 2}\"}}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"function_call\"}]}\n\n",
            "data: [DONE]\n\n",
        ))
        .unwrap();
        let c = calls(&events);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].name, "list_files");
        assert_eq!(c[0].arguments, "{\"depth\": 2}");
        assert!(c[0].id.starts_with("call_0_"));
    }

    #[test]
    fn reasoning_is_its_own_stream() {
        let events = run(concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"think\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"answer\"},\"finish_reason\":\"stop\"}]}\n\n",
            "data: [DONE]\n\n",
        ))
        .unwrap();
        assert_eq!(
            events[0],
            Event::Reasoning {
                delta: "think".into()
            }
        );
        assert_eq!(text(&events), "answer");
    }

    #[test]
    fn a_stream_that_stops_early_is_cut() {
        let err = run("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"}}]}\n\n")
            .unwrap_err();
        assert_eq!(err, LlmError::StreamCut { provider: "openai" });
        // A finish reason without [DONE] is a whole answer.
        let ok = run(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]}\n\n",
        );
        assert!(ok.is_ok());
    }

    #[test]
    fn garbage_and_in_stream_errors_are_clear() {
        let err = run("data: {not json\n\n").unwrap_err();
        assert!(matches!(err, LlmError::Protocol { .. }), "{err}");
        let err =
            run("data: {\"error\":{\"message\":\"Rate limit\",\"code\":429}}\n\n").unwrap_err();
        assert!(matches!(err, LlmError::Status { status: 429, .. }), "{err}");
        assert!(err.is_retryable());
    }

    #[test]
    fn request_body_has_tools_and_usage_option() {
        let req = Request {
            model: "gpt-x".into(),
            messages: vec![
                Message::system("sys"),
                Message::user("hi"),
                Message::assistant(
                    "",
                    vec![ToolCall {
                        id: "c1".into(),
                        name: "read_file".into(),
                        arguments: "{}".into(),
                    }],
                ),
                Message::tool_result("c1", "content"),
            ],
            tools: vec![crate::ToolSpec {
                name: "read_file".into(),
                description: "d".into(),
                parameters: json!({"type": "object"}),
            }],
            tool_choice: crate::ToolChoice::Required,
            max_tokens: None,
            temperature: None,
            effort: None,
            web_search: false,
        };
        let b = body(&req);
        assert_eq!(b["tool_choice"], "required");
        assert_eq!(b["stream"], true);
        assert_eq!(b["stream_options"]["include_usage"], true);
        assert_eq!(b["tools"][0]["function"]["name"], "read_file");
        assert_eq!(
            b["messages"][2]["tool_calls"][0]["function"]["arguments"],
            "{}"
        );
        assert_eq!(b["messages"][3]["tool_call_id"], "c1");
    }

    #[test]
    fn an_effort_is_sent_as_reasoning_effort() {
        let req = Request {
            model: "o3-mini".into(),
            messages: vec![Message::user("hi")],
            tools: vec![],
            tool_choice: crate::ToolChoice::Auto,
            max_tokens: None,
            temperature: None,
            effort: Some(crate::effort::Effort::Low),
            web_search: false,
        };
        assert_eq!(body(&req)["reasoning_effort"], "low");
        let none = Request {
            effort: None,
            web_search: false,
            ..req
        };
        assert!(body(&none).get("reasoning_effort").is_none());
    }
}
