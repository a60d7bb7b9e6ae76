//! The grammar that keeps a local model's tool call well formed: one
//! `<tool_call>{"name": <a tool>, "arguments": <its arguments>}</tool_call>`, the arguments
//! valid against the tool's JSON schema. llama.cpp turns the schema into GBNF; a schema it
//! cannot convert falls back to "any JSON object" for that request's arguments.

use crate::ToolSpec;
use serde_json::{Value, json};

fn calls_schema(tools: &[ToolSpec], exact: bool) -> Value {
    let one = |t: &ToolSpec| {
        let args = if exact {
            t.parameters.clone()
        } else {
            json!({"type": "object"})
        };
        json!({
            "type": "object",
            "properties": {"name": {"const": t.name}, "arguments": args},
            "required": ["name", "arguments"],
            "additionalProperties": false
        })
    };
    json!({"anyOf": tools.iter().map(one).collect::<Vec<_>>()})
}

/// GBNF with `root` = one tagged call. Starts with the tag, so it also serves as a lazy
/// grammar triggered by `<tool_call>`.
pub fn tool_call(tools: &[ToolSpec]) -> Result<String, String> {
    let body = llama_cpp_2::json_schema_to_grammar(&calls_schema(tools, true).to_string())
        .or_else(|e| {
            tracing::debug!("tool schemas not convertible ({e}); constraining to JSON objects");
            llama_cpp_2::json_schema_to_grammar(&calls_schema(tools, false).to_string())
        })
        .map_err(|e| format!("cannot build the tool-call grammar: {e}"))?;
    let mut out =
        String::from("root ::= \"<tool_call>\" [ \\t\\n]* call [ \\t\\n]* \"</tool_call>\"\n");
    for line in body.lines() {
        match line.strip_prefix("root ::=") {
            Some(rest) => {
                out.push_str("call ::=");
                out.push_str(rest);
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    Ok(out)
}
