//! Properties of the Ollama `/api/chat` stream (`ollama::ndjson_lines` cutting the body into
//! lines, `ollama::Parser` reading one JSON object per line): however the network cuts a
//! valid stream into chunks (LF or CRLF line ends, blank lines, with or without a final
//! newline), however the model's thinking and text are spread over lines and its tool calls
//! over messages, the answer comes out the same; and neither random bytes nor garbage lines
//! inside a valid stream make it panic. 10,000 cases each (`PROPTEST_CASES` raises it).

use crate::props::{any_json, collect_items, split};
use crate::{FinishReason, LlmError, Response, Usage, ollama};
use futures::StreamExt;
use proptest::prelude::*;
use serde_json::{Value, json};

/// The lines of `body` as `start` hands them to the parser, the body cut into `chunk`-byte
/// network pieces on the way.
fn lines(body: &[u8], chunk: usize) -> Vec<Result<String, LlmError>> {
    let chunks: Vec<Result<bytes::Bytes, reqwest::Error>> = body
        .chunks(chunk.max(1))
        .map(|c| Ok(bytes::Bytes::copy_from_slice(c)))
        .collect();
    futures::executor::block_on(ollama::ndjson_lines(futures::stream::iter(chunks)).collect())
}

/// The answer for `body`. The line splitter fails only on a transport error or a 16 MB
/// line, neither of which these bodies have; should it fail, the error is the answer.
fn parse(body: &[u8], chunk: usize) -> Result<Response, LlmError> {
    let lines: Vec<String> = lines(body, chunk).into_iter().collect::<Result<_, _>>()?;
    collect_items(ollama::Parser::default(), lines)
}

/// A line of the stream around `message`, with the fields Ollama sends on every line.
fn chunk_line(message: Value) -> Value {
    json!({"model": "llama3.2", "created_at": "2026-11-30T00:00:00Z",
           "message": message, "done": false})
}

/// How a tool call's arguments are written: an object (what Ollama sends), a string of
/// JSON (what some versions and proxies send), or nothing (a tool without parameters).
#[derive(Debug, Clone)]
enum Args {
    Object(Value),
    Text(Value),
    Missing,
    Null,
}

#[derive(Debug, Clone)]
struct Call {
    id: Option<String>,
    name: String,
    args: Args,
}

fn call() -> impl Strategy<Value = Call> {
    let object = ("(?s).{0,30}", any::<i64>(), any::<bool>())
        .prop_map(|(path, n, flag)| json!({"path": path, "n": n, "flags": [flag]}));
    (
        prop::option::of("[a-z0-9_]{1,12}"),
        "[a-z_]{1,16}",
        prop_oneof![
            object.clone().prop_map(Args::Object),
            object.prop_map(Args::Text),
            Just(Args::Missing),
            Just(Args::Null),
        ],
    )
        .prop_map(|(id, name, args)| Call { id, name, args })
}

/// The `done_reason`s a stream may end with, and what each must become when the model
/// made no tool call and when it did.
fn done_reason() -> impl Strategy<Value = (Option<&'static str>, FinishReason, FinishReason)> {
    prop_oneof![
        Just((Some("stop"), FinishReason::Stop, FinishReason::ToolCalls)),
        Just((None, FinishReason::Stop, FinishReason::ToolCalls)),
        Just((Some("length"), FinishReason::Length, FinishReason::Length)),
        Just((
            Some("unload"),
            FinishReason::Other("unload".into()),
            FinishReason::ToolCalls
        )),
    ]
}

/// A short valid stream, for garbage to land in.
fn valid_lines() -> Vec<String> {
    vec![
        chunk_line(json!({"role": "assistant", "content": "a"})).to_string(),
        chunk_line(json!({"role": "assistant", "content": "",
            "tool_calls": [{"function": {"name": "n", "arguments": {"a": 1}}}]}))
        .to_string(),
        json!({"model": "llama3.2", "message": {"role": "assistant", "content": ""},
               "done": true, "done_reason": "stop", "prompt_eval_count": 1, "eval_count": 2})
        .to_string(),
    ]
}

/// A line of the fields the parser reads, each of any shape; `message` may be well-formed
/// around a `tool_calls` of any shape, to reach the tool-call code.
fn junk_line() -> impl Strategy<Value = String> {
    (
        prop::collection::btree_map(
            prop::sample::select(vec![
                "message",
                "done",
                "done_reason",
                "error",
                "prompt_eval_count",
                "eval_count",
            ]),
            any_json(),
            0..4,
        ),
        prop::option::of((
            any_json(),
            any_json(),
            prop::collection::vec((any_json(), any_json(), any_json()), 0..3),
        )),
    )
        .prop_map(|(fields, message)| {
            let mut v: serde_json::Map<String, Value> = fields
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
            if let Some((content, thinking, calls)) = message {
                let calls: Vec<Value> = calls
                    .into_iter()
                    .map(|(id, name, arguments)| {
                        json!({"id": id, "function": {"name": name, "arguments": arguments}})
                    })
                    .collect();
                v.insert(
                    "message".into(),
                    json!({"content": content, "thinking": thinking, "tool_calls": calls}),
                );
            }
            Value::Object(v).to_string()
        })
}

proptest! {
    #![proptest_config(skald_testkit::property_config())]

    #[test]
    fn any_cut_and_any_lines_give_the_same_answer(
        text in "(?s).{0,80}",
        text_cuts in prop::collection::vec(any::<u16>(), 0..6),
        thinking in "(?s).{0,60}",
        thinking_cuts in prop::collection::vec(any::<u16>(), 0..6),
        order in prop::collection::vec(any::<bool>(), 1..8),
        calls in prop::collection::vec(call(), 0..4),
        calls_per_line in 1usize..=3,
        (reason, finish_plain, finish_with_calls) in done_reason(),
        counts in prop::option::of((any::<u32>(), any::<u32>())),
        text_in_done in any::<bool>(),
        blank in prop::collection::vec(0u8..4, 1..8),
        chunk in 1usize..=64,
        crlf in any::<bool>(),
        final_newline in any::<bool>(),
    ) {
        let mut lines: Vec<Value> = Vec::new();
        let mut text_pieces = split(&text, &text_cuts);
        // The last piece of text may come on the `done` line itself.
        let last_text = if text_in_done { text_pieces.pop() } else { None };
        // Thinking and text lines, interleaved as `order` says.
        let mut t = split(&thinking, &thinking_cuts).into_iter().peekable();
        let mut x = text_pieces.into_iter().peekable();
        let mut bits = order.iter().cycle();
        loop {
            let take_thinking = match (t.peek(), x.peek()) {
                (None, None) => break,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some(_), Some(_)) => bits.next().copied().unwrap_or(true),
            };
            lines.push(chunk_line(if take_thinking {
                json!({"role": "assistant", "content": "", "thinking": t.next()})
            } else {
                json!({"role": "assistant", "content": x.next()})
            }));
        }
        // Tool calls, each whole, a few per line.
        for group in calls.chunks(calls_per_line) {
            let wire: Vec<Value> = group
                .iter()
                .map(|c| {
                    let mut f = json!({"name": c.name});
                    match &c.args {
                        Args::Object(v) => f["arguments"] = v.clone(),
                        Args::Text(v) => f["arguments"] = json!(v.to_string()),
                        Args::Missing => {}
                        Args::Null => f["arguments"] = Value::Null,
                    }
                    let mut call = json!({"function": f});
                    if let Some(id) = &c.id {
                        call["id"] = json!(id);
                    }
                    call
                })
                .collect();
            lines.push(chunk_line(json!({"role": "assistant", "content": "", "tool_calls": wire})));
        }
        let mut done = json!({"model": "llama3.2", "created_at": "2026-11-30T00:00:01Z",
            "message": {"role": "assistant", "content": last_text.unwrap_or_default()},
            "done": true, "total_duration": 123_456});
        if let Some(r) = reason {
            done["done_reason"] = json!(r);
        }
        if let Some((p, e)) = counts {
            done["prompt_eval_count"] = json!(p);
            done["eval_count"] = json!(e);
        }
        lines.push(done);

        let eol = if crlf { "\r\n" } else { "\n" };
        let mut body = String::new();
        for (i, line) in lines.iter().enumerate() {
            // Blank (or whitespace-only) lines between objects are skipped.
            match blank[i % blank.len()] {
                1 => body.push_str(eol),
                2 => body.push_str(&format!("  {eol}")),
                _ => {}
            }
            body.push_str(&line.to_string());
            if i + 1 < lines.len() || final_newline {
                body.push_str(eol);
            }
        }
        let r = parse(body.as_bytes(), chunk).unwrap();

        prop_assert_eq!(&r.text, &text);
        prop_assert_eq!(&r.reasoning, &thinking);
        prop_assert_eq!(r.tool_calls.len(), calls.len());
        let mut ids = std::collections::HashSet::new();
        for (i, (got, want)) in r.tool_calls.iter().zip(&calls).enumerate() {
            prop_assert_eq!(&got.name, &want.name);
            match &want.id {
                Some(id) => prop_assert_eq!(&got.id, id),
                // Ollama names no calls; the parser numbers them, so that the results sent
                // back can tell them apart.
                None => {
                    prop_assert!(got.id.starts_with(&format!("call_{i}_")), "{}", got.id);
                    prop_assert!(ids.insert(got.id.clone()), "two calls share the id {}", got.id);
                }
            }
            let args: Value = serde_json::from_str(&got.arguments).unwrap();
            let expected = match &want.args {
                Args::Object(v) | Args::Text(v) => v.clone(),
                Args::Missing | Args::Null => json!({}),
            };
            prop_assert_eq!(args, expected);
        }
        let (p, e) = counts.unwrap_or((0, 0));
        prop_assert_eq!(r.usage, Some(Usage { input_tokens: p.into(), output_tokens: e.into(), cached_input_tokens: 0 }));
        let finish = if calls.is_empty() { finish_plain } else { finish_with_calls };
        prop_assert_eq!(r.finish, Some(finish));
    }

    #[test]
    fn no_bytes_make_the_parser_panic(body in prop::collection::vec(any::<u8>(), 0..400), chunk in 1usize..32) {
        // An error is a fine answer to garbage; a panic is not.
        let _ = parse(&body, chunk);
    }

    #[test]
    fn garbage_inside_a_valid_stream_is_an_error_or_ignored_never_a_panic(
        junk in "(?s).{0,60}",
        raw in any::<bool>(),
        at in any::<u16>(),
        chunk in 1usize..32,
    ) {
        // Either a line of junk between objects, or junk spliced into the stream's text
        // wherever it lands.
        let mut lines = valid_lines();
        let body = if raw {
            let mut body = lines.join("\n");
            let bounds: Vec<usize> = body.char_indices().map(|(i, _)| i).collect();
            body.insert_str(bounds[usize::from(at) % bounds.len()], &junk);
            body
        } else {
            lines.insert(1, junk);
            lines.join("\n")
        };
        let _ = parse(body.as_bytes(), chunk);
    }

    #[test]
    fn objects_of_any_shape_never_make_the_parser_panic(
        junk in prop::collection::vec(junk_line(), 1..5),
        chunk in 1usize..64,
    ) {
        let mut lines = valid_lines();
        let done = lines.pop().unwrap_or_default();
        lines.extend(junk);
        lines.push(done);
        // Whatever the junk did, a stream that did not fail must still be a whole answer.
        if let Ok(r) = parse(lines.join("\n").as_bytes(), chunk) {
            prop_assert!(r.finish.is_some());
            prop_assert!(r.usage.is_some());
        }
    }
}

/// The stream the garbage properties spoil is itself valid (else they would test nothing
/// but the error path).
#[test]
fn the_stream_garbage_lands_in_is_valid() {
    let r = parse(valid_lines().join("\n").as_bytes(), 5).unwrap();
    assert_eq!(r.text, "a");
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.tool_calls[0].arguments, "{\"a\":1}");
    assert_eq!(r.finish, Some(FinishReason::ToolCalls));
}
