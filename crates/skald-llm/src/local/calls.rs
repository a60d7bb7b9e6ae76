//! Tool calls in a local model's output. Models without native tool calling are asked
//! to answer `<tool_call>{"name": …, "arguments": {…}}</tool_call>` (the Hermes
//! convention, which Qwen and many fine-tunes were trained on); the splitter separates
//! those blocks from the text as tokens stream, so the user never sees the markup and a
//! half-written tag is held back until it is known to be one.

use crate::ToolCall;
use serde_json::Value;

pub const OPEN: &str = "<tool_call>";
pub const CLOSE: &str = "</tool_call>";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    Call(ToolCall),
}

#[derive(Default)]
pub struct Splitter {
    /// Text not yet given out: a possible start of `<tool_call>`, or a call's body.
    held: String,
    in_call: bool,
    calls: usize,
}

impl Splitter {
    pub fn new() -> Splitter {
        Splitter::default()
    }

    /// How many calls were given out.
    pub fn calls(&self) -> usize {
        self.calls
    }

    pub fn feed(&mut self, text: &str) -> Vec<Piece> {
        self.held.push_str(text);
        let mut out = Vec::new();
        loop {
            if self.in_call {
                let Some(end) = self.held.find(CLOSE) else {
                    return out;
                };
                let body = self.held[..end].to_string();
                self.held.drain(..end + CLOSE.len());
                self.in_call = false;
                out.push(self.call(&body));
            } else if let Some(start) = self.held.find(OPEN) {
                if start > 0 {
                    out.push(Piece::Text(self.held[..start].to_string()));
                }
                self.held.drain(..start + OPEN.len());
                self.in_call = true;
            } else {
                // Keep back the longest tail that could still become `<tool_call>`.
                let keep = (1..OPEN.len())
                    .rev()
                    .find(|&n| self.held.ends_with(&OPEN[..n]))
                    .unwrap_or(0);
                let cut = self.held.len() - keep;
                if cut > 0 {
                    out.push(Piece::Text(self.held[..cut].to_string()));
                    self.held.drain(..cut);
                }
                return out;
            }
        }
    }

    /// At the end of the output: what is still held. An unfinished call is given back
    /// as the text it was, so nothing the model wrote is lost.
    pub fn finish(&mut self) -> Vec<Piece> {
        let held = std::mem::take(&mut self.held);
        if self.in_call {
            self.in_call = false;
            vec![Piece::Text(format!("{OPEN}{held}"))]
        } else if held.is_empty() {
            Vec::new()
        } else {
            vec![Piece::Text(held)]
        }
    }

    fn call(&mut self, body: &str) -> Piece {
        match parse_call(body) {
            Some((name, arguments)) => {
                self.calls += 1;
                Piece::Call(ToolCall {
                    id: format!("call_{:016x}", fastrand::u64(..)),
                    name,
                    arguments,
                })
            }
            // Not a call after all: the model's words, as written.
            None => Piece::Text(format!("{OPEN}{body}{CLOSE}")),
        }
    }
}

/// `{"name": "x", "arguments": {…}}` → the name and the arguments' JSON text.
fn parse_call(body: &str) -> Option<(String, String)> {
    let v: Value = serde_json::from_str(body.trim()).ok()?;
    let name = v.get("name")?.as_str()?.trim().to_string();
    if name.is_empty() {
        return None;
    }
    let arguments = match v.get("arguments") {
        Some(Value::String(s)) => s.clone(),
        Some(a) => a.to_string(),
        None => "{}".to_string(),
    };
    Some((name, arguments))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[&str]) -> Vec<Piece> {
        let mut s = Splitter::new();
        let mut out: Vec<Piece> = chunks.iter().flat_map(|c| s.feed(c)).collect();
        out.extend(s.finish());
        // Adjacent text pieces joined, for comparison.
        let mut joined: Vec<Piece> = Vec::new();
        for p in out {
            match (joined.last_mut(), p) {
                (Some(Piece::Text(a)), Piece::Text(b)) => a.push_str(&b),
                (_, p) => joined.push(p),
            }
        }
        joined
    }

    fn name_args(p: &Piece) -> (String, String) {
        match p {
            Piece::Call(c) => (c.name.clone(), c.arguments.clone()),
            Piece::Text(t) => panic!("text {t:?}"),
        }
    }

    #[test]
    fn calls_are_taken_out_of_the_text_however_the_tokens_fall() {
        let out = run(&[
            "Let me look.\n<to",
            "ol_c",
            "all>\n{\"name\": \"list_files\", ",
            "\"arguments\": {\"path\": \".\"}}\n</tool",
            "_call>",
        ]);
        assert_eq!(out[0], Piece::Text("Let me look.\n".into()));
        assert_eq!(
            name_args(&out[1]),
            ("list_files".into(), r#"{"path":"."}"#.into())
        );
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn a_lone_angle_bracket_is_text_and_text_streams_without_waiting() {
        let mut s = Splitter::new();
        assert_eq!(s.feed("a < b"), vec![Piece::Text("a < b".into())]);
        assert_eq!(s.feed(" and <"), vec![Piece::Text(" and ".into())]);
        assert_eq!(s.feed("div>"), vec![Piece::Text("<div>".into())]);
        assert!(s.finish().is_empty());
    }

    #[test]
    fn broken_or_unfinished_calls_stay_as_text() {
        let out = run(&["<tool_call>{not json}</tool_call>"]);
        assert_eq!(
            out,
            vec![Piece::Text("<tool_call>{not json}</tool_call>".into())]
        );
        let out = run(&["<tool_call>{\"name\": \"x\""]);
        assert_eq!(out, vec![Piece::Text("<tool_call>{\"name\": \"x\"".into())]);
    }

    #[test]
    fn two_calls_get_their_own_ids() {
        let mut s = Splitter::new();
        let out = s.feed(
            "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>\
             <tool_call>{\"name\": \"b\", \"arguments\": \"{\\\"x\\\": 1}\"}</tool_call>",
        );
        assert_eq!(s.calls(), 2);
        let ids: Vec<&str> = out
            .iter()
            .map(|p| match p {
                Piece::Call(c) => c.id.as_str(),
                Piece::Text(_) => "",
            })
            .collect();
        assert_ne!(ids[0], ids[1]);
        assert_eq!(name_args(&out[1]), ("b".into(), r#"{"x": 1}"#.into()));
    }
}
