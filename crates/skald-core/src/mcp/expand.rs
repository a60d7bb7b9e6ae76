//! A user's message, with its MCP parts expanded before the turn stores it (docs/mcp.md
//! "Prompts" and "Resources"): a message that is `/server:prompt ARGS` becomes the
//! prompt's messages, and each `@server:uri` mention of a resource the server lists gets
//! the resource's contents attached. Only registered servers count: any other slash or
//! `@` is text.

use super::Servers;
use serde_json::{Map, Value};
use skald_api::CancellationToken;
use skald_mcp::{McpPrompt, PromptArgument};
use skald_store::Store;

/// Most resources one message attaches.
const MAX_MENTIONS: usize = 8;
/// Most bytes a prompt may expand to: it is stored and read again every round.
const PROMPT_MAX: usize = 200 * 1024;

/// The message as the model should read it, or `None` when it has no MCP part. An
/// error says what the user got wrong (an unknown prompt, a missing argument) or what
/// failed.
pub(crate) async fn expand(
    mcp: &Servers,
    store: &Store,
    text: &str,
    cancel: &CancellationToken,
) -> Result<Option<String>, String> {
    let mut out = None;
    if let Some((server, name, rest)) = invocation(text)
        && store.find_mcp_server(server).ok().flatten().is_some()
    {
        out = Some(run_prompt(mcp, server, name, rest, cancel).await?);
    }
    let body = out.as_deref().unwrap_or(text);
    // Mentions count in what the person wrote only, not in a prompt's text (a server's).
    let attached = attachments(mcp, store, text, cancel).await?;
    if attached.is_empty() {
        return Ok(out);
    }
    let mut with = body.to_string();
    for (server, uri, contents) in attached {
        with.push_str(&format!(
            "\n\n--- attached: {uri} from the MCP server {server} ---\n{contents}"
        ));
    }
    Ok(Some(with))
}

/// `/server:prompt rest` → (server, prompt, rest).
fn invocation(text: &str) -> Option<(&str, &str, &str)> {
    let body = text.trim_start().strip_prefix('/')?;
    let (head, rest) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
    let (server, name) = head.split_once(':')?;
    if server.is_empty() || name.is_empty() || super::check_server_name(server).is_err() {
        return None;
    }
    Some((server, name, rest))
}

async fn run_prompt(
    mcp: &Servers,
    server: &str,
    name: &str,
    rest: &str,
    cancel: &CancellationToken,
) -> Result<String, String> {
    let status = tokio::select! {
        _ = cancel.cancelled() => return Err("stopped".to_string()),
        s = mcp.manager.wait_ready(server, mcp.connect_timeout) => s,
    };
    if !matches!(status, Some(skald_mcp::Status::Ready { .. })) {
        let now = status.map_or_else(|| "not started".to_string(), |s| s.describe());
        return Err(format!(
            "`/{server}:{name}`: the MCP server {server} is {now}"
        ));
    }
    let prompts = mcp.manager.prompts(server);
    let Some(prompt) = prompts.iter().find(|p| p.name == name) else {
        let names: Vec<String> = prompts
            .iter()
            .map(|p| format!("/{server}:{}", p.name))
            .collect();
        return Err(if names.is_empty() {
            format!("the MCP server {server} has no prompts")
        } else {
            format!(
                "the MCP server {server} has no prompt `{name}`; it has {}",
                names.join(", ")
            )
        });
    };
    let arguments = bind(prompt, rest)?;
    let messages = mcp
        .manager
        .get_prompt(server, name, arguments, cancel)
        .await
        .map_err(|e| format!("`/{server}:{name}` failed: {e}"))?;
    // One user message is the common case: it is the message. A conversation the
    // prompt sets up is kept in order, each part marked with who says it.
    let size: usize = messages.iter().map(|m| m.text.len()).sum();
    if size > PROMPT_MAX {
        return Err(format!(
            "`/{server}:{name}` expands to {size} bytes; Skald takes at most {PROMPT_MAX}"
        ));
    }
    Ok(match messages.as_slice() {
        [only] if only.role == "user" => only.text.clone(),
        _ => messages
            .iter()
            .map(|m| format!("[{}]\n{}", m.role, m.text))
            .collect::<Vec<_>>()
            .join("\n\n"),
    })
}

/// The prompt's arguments from what follows the command: `key=value` pairs (a value may
/// be in double quotes), or words in the arguments' order, the last taking the rest.
fn bind(prompt: &McpPrompt, rest: &str) -> Result<Map<String, Value>, String> {
    let rest = rest.trim();
    let named = |token: &str| {
        token
            .split_once('=')
            .is_some_and(|(k, _)| prompt.arguments.iter().any(|a| a.name == k))
    };
    let tokens = words(rest);
    let mut out = Map::new();
    if !tokens.is_empty() && tokens.iter().all(|t| named(t)) {
        for t in tokens {
            if let Some((k, v)) = t.split_once('=') {
                out.insert(k.to_string(), Value::String(v.to_string()));
            }
        }
    } else if !rest.is_empty() {
        let mut remaining = rest;
        for (i, arg) in prompt.arguments.iter().enumerate() {
            if remaining.is_empty() {
                break;
            }
            let value = if i + 1 == prompt.arguments.len() {
                std::mem::take(&mut remaining)
            } else {
                let (word, after) = remaining
                    .split_once(char::is_whitespace)
                    .unwrap_or((remaining, ""));
                remaining = after.trim_start();
                word
            };
            out.insert(arg.name.clone(), Value::String(value.to_string()));
        }
        if prompt.arguments.is_empty() {
            return Err(format!(
                "`/{}:{}` takes no arguments",
                prompt.server, prompt.name
            ));
        }
    }
    let missing: Vec<&PromptArgument> = prompt
        .arguments
        .iter()
        .filter(|a| a.required && !out.contains_key(&a.name))
        .collect();
    if !missing.is_empty() {
        let each: Vec<String> = missing
            .iter()
            .map(|a| {
                if a.description.is_empty() {
                    format!("`{}`", a.name)
                } else {
                    format!("`{}` ({})", a.name, a.description)
                }
            })
            .collect();
        return Err(format!(
            "`/{}:{}` needs {}: write them as key=value, or as words in order",
            prompt.server,
            prompt.name,
            each.join(", ")
        ));
    }
    Ok(out)
}

/// Whitespace-separated words; double quotes keep spaces inside one (`k="a b"`).
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in text.chars() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// The `@server:uri` mentions of listed resources, read: (server, uri, contents).
async fn attachments(
    mcp: &Servers,
    store: &Store,
    text: &str,
    cancel: &CancellationToken,
) -> Result<Vec<(String, String, String)>, String> {
    let mut wanted: Vec<(String, String)> = Vec::new();
    let mut waited: Vec<String> = Vec::new();
    for token in text.split_whitespace() {
        let Some(mention) = token.strip_prefix('@') else {
            continue;
        };
        let mention = mention.trim_end_matches(['.', ',', ';', '!', '?', ')', '"', '\'']);
        let Some((server, uri)) = mention.split_once(':') else {
            continue;
        };
        if store.find_mcp_server(server).ok().flatten().is_none() {
            continue;
        }
        // A server still connecting (the process just started) is waited for, bounded,
        // once however often it is mentioned.
        if !waited.iter().any(|w| w == server) {
            waited.push(server.to_string());
            tokio::select! {
                _ = cancel.cancelled() => return Err("stopped".to_string()),
                _ = mcp.manager.wait_ready(server, mcp.connect_timeout) => {}
            }
        }
        let listed = mcp.manager.resources(server).iter().any(|r| r.uri == uri);
        let pair = (server.to_string(), uri.to_string());
        if listed && !wanted.contains(&pair) {
            wanted.push(pair);
        }
    }
    if wanted.len() > MAX_MENTIONS {
        return Err(format!(
            "a message attaches at most {MAX_MENTIONS} resources; this one mentions {}",
            wanted.len()
        ));
    }
    let mut out = Vec::new();
    for (server, uri) in wanted {
        let contents = mcp
            .manager
            .read_resource(&server, &uri, cancel)
            .await
            .map_err(|e| format!("attaching {uri} from {server} failed: {e}"))?;
        out.push((server, uri, contents));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(args: &[(&str, bool)]) -> McpPrompt {
        McpPrompt {
            server: "docs".into(),
            name: "review".into(),
            title: None,
            description: String::new(),
            arguments: args
                .iter()
                .map(|(n, r)| PromptArgument {
                    name: n.to_string(),
                    description: format!("the {n}"),
                    required: *r,
                })
                .collect(),
        }
    }

    #[test]
    fn a_command_is_a_registered_looking_server_and_a_prompt() {
        assert_eq!(
            invocation("/docs:review a b"),
            Some(("docs", "review", "a b"))
        );
        assert_eq!(invocation("  /docs:review"), Some(("docs", "review", "")));
        assert_eq!(invocation("/stop"), None);
        assert_eq!(invocation("/usr/bin:x"), None);
        assert_eq!(invocation("see /docs:review"), None);
        assert_eq!(invocation("/:review"), None);
    }

    #[test]
    fn arguments_bind_by_name_or_in_order_and_missing_ones_are_named() {
        let p = prompt(&[("file", true), ("style", false)]);
        let m = bind(&p, r#"style="very terse" file=src/main.rs"#).unwrap();
        assert_eq!(m["file"], "src/main.rs");
        assert_eq!(m["style"], "very terse");
        let m = bind(&p, "src/main.rs be brief and kind").unwrap();
        assert_eq!(m["file"], "src/main.rs");
        assert_eq!(m["style"], "be brief and kind");
        let e = bind(&p, "").unwrap_err();
        assert!(e.contains("needs `file` (the file)"), "{e}");
        // A `=` in a word that is not an argument's name is text, bound in order.
        let m = bind(&p, "a=b").unwrap();
        assert_eq!(m["file"], "a=b");
        let none = prompt(&[]);
        assert!(bind(&none, "").unwrap().is_empty());
        assert!(bind(&none, "x").unwrap_err().contains("takes no arguments"));
    }
}
