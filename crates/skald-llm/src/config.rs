//! Finding the model to use from the environment variables people already have set:
//! `OPENAI_API_KEY` + `OPENAI_BASE_URL` (any OpenAI-compatible server), `ANTHROPIC_API_KEY`
//! (+ `ANTHROPIC_BASE_URL`), `OLLAMA_HOST`, and `SKALD_MODEL` to pick the model as
//! `provider/model` or a bare model name.

use crate::provider::Timeouts;
use crate::{LlmError, Provider, ProviderKind};

pub const DEFAULT_OPENAI_URL: &str = "https://api.openai.com/v1";
pub const DEFAULT_ANTHROPIC_URL: &str = "https://api.anthropic.com";
pub const DEFAULT_OLLAMA_URL: &str = "http://127.0.0.1:11434";

/// A provider and the model to ask.
#[derive(Debug, Clone)]
pub struct ModelChoice {
    pub provider: Provider,
    pub model: String,
}

/// Picks provider and model. `model` (e.g. `--model`) wins over `SKALD_MODEL`. `env`
/// looks a variable up (the process environment in production, a map in tests).
pub fn from_env(
    model: Option<&str>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<ModelChoice, LlmError> {
    let get = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    let spec = model
        .map(str::to_string)
        .or_else(|| get("SKALD_MODEL"))
        .ok_or_else(|| {
            LlmError::Config(
                "no model chosen: set SKALD_MODEL (e.g. openai/gpt-4.1-mini, anthropic/claude-sonnet-4-5, \
                 ollama/llama3.2) or pass --model"
                    .to_string(),
            )
        })?;
    // Only known prefixes name a provider: OpenRouter's model names contain `/` too.
    let (kind, name) = match spec.split_once('/') {
        Some(("openai", m)) => (Some(ProviderKind::OpenAi), m.to_string()),
        Some(("anthropic", m)) => (Some(ProviderKind::Anthropic), m.to_string()),
        Some(("ollama", m)) => (Some(ProviderKind::Ollama), m.to_string()),
        _ => (None, spec.clone()),
    };
    let kind = match kind {
        Some(k) => k,
        None if get("OPENAI_API_KEY").is_some() || get("OPENAI_BASE_URL").is_some() => {
            ProviderKind::OpenAi
        }
        None if get("ANTHROPIC_API_KEY").is_some() => ProviderKind::Anthropic,
        None if get("OLLAMA_HOST").is_some() => ProviderKind::Ollama,
        None => {
            return Err(LlmError::Config(format!(
                "no provider for model `{spec}`: set OPENAI_API_KEY (and OPENAI_BASE_URL for \
                 another OpenAI-compatible server), ANTHROPIC_API_KEY or OLLAMA_HOST"
            )));
        }
    };
    if name.is_empty() {
        return Err(LlmError::Config(format!("`{spec}` names no model")));
    }
    let (url, key) = match kind {
        ProviderKind::OpenAi => (
            get("OPENAI_BASE_URL").unwrap_or_else(|| DEFAULT_OPENAI_URL.to_string()),
            get("OPENAI_API_KEY"),
        ),
        ProviderKind::Anthropic => (
            get("ANTHROPIC_BASE_URL").unwrap_or_else(|| DEFAULT_ANTHROPIC_URL.to_string()),
            get("ANTHROPIC_API_KEY"),
        ),
        ProviderKind::Ollama => {
            // OLLAMA_HOST is often `host:port` without a scheme.
            let host = get("OLLAMA_HOST").unwrap_or_else(|| DEFAULT_OLLAMA_URL.to_string());
            let url = if host.contains("://") {
                host
            } else {
                format!("http://{host}")
            };
            (url, None)
        }
    };
    let provider = Provider::new(kind.label(), kind, url, key, Timeouts::default())?;
    Ok(ModelChoice {
        provider,
        model: name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn prefixes_and_bare_names() {
        let c = from_env(
            None,
            env(&[
                ("SKALD_MODEL", "anthropic/claude-x"),
                ("ANTHROPIC_API_KEY", "k"),
            ]),
        )
        .unwrap();
        assert_eq!(c.provider.kind, ProviderKind::Anthropic);
        assert_eq!(c.model, "claude-x");
        assert_eq!(c.provider.base_url, DEFAULT_ANTHROPIC_URL);

        let c = from_env(
            None,
            env(&[
                ("SKALD_MODEL", "meta-llama/llama-3-70b"),
                ("OPENAI_API_KEY", "k"),
                ("OPENAI_BASE_URL", "https://openrouter.ai/api/v1"),
            ]),
        )
        .unwrap();
        assert_eq!(c.provider.kind, ProviderKind::OpenAi);
        assert_eq!(
            c.model, "meta-llama/llama-3-70b",
            "OpenRouter names keep their slash"
        );
        assert_eq!(c.provider.base_url, "https://openrouter.ai/api/v1");

        let c = from_env(
            Some("ollama/llama3.2"),
            env(&[("OLLAMA_HOST", "10.0.0.5:11434")]),
        )
        .unwrap();
        assert_eq!(c.provider.base_url, "http://10.0.0.5:11434");
    }

    #[test]
    fn the_flag_wins_over_the_variable() {
        let c = from_env(
            Some("m2"),
            env(&[("SKALD_MODEL", "m1"), ("OPENAI_API_KEY", "k")]),
        )
        .unwrap();
        assert_eq!(c.model, "m2");
    }

    #[test]
    fn missing_configuration_is_explained() {
        let e = from_env(None, env(&[])).unwrap_err();
        assert!(e.to_string().contains("SKALD_MODEL"), "{e}");
        let e = from_env(Some("gpt-x"), env(&[])).unwrap_err();
        assert!(e.to_string().contains("OPENAI_API_KEY"), "{e}");
        let e = from_env(Some("openai/"), env(&[])).unwrap_err();
        assert!(e.to_string().contains("names no model"), "{e}");
    }
}
