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

impl ModelChoice {
    /// `provider/model`, as the user would write it.
    pub fn label(&self) -> String {
        format!("{}/{}", self.provider.name, self.model)
    }
}

/// A provider declared in `config.toml`, e.g. OpenRouter or a local LM Studio, used by
/// model names that start with its `name/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomProvider {
    pub name: String,
    pub kind: ProviderKind,
    pub base_url: String,
    /// The environment variable holding its key (keys never live in config files).
    pub api_key_env: Option<String>,
}

/// Seconds to wait for a model's response headers (a cold model may take a while to load).
pub const TIMEOUT_ENV: &str = "SKALD_MODEL_TIMEOUT_SECS";
/// Seconds a streaming answer may go without its next chunk.
pub const IDLE_ENV: &str = "SKALD_MODEL_IDLE_SECS";

/// The defaults, with `SKALD_MODEL_TIMEOUT_SECS` and `SKALD_MODEL_IDLE_SECS` applied.
fn timeouts(get: impl Fn(&str) -> Option<String>) -> Result<Timeouts, LlmError> {
    let mut t = Timeouts::default();
    for (var, slot) in [(TIMEOUT_ENV, &mut t.first_byte), (IDLE_ENV, &mut t.idle)] {
        if let Some(v) = get(var) {
            match v.trim().parse::<u64>() {
                Ok(secs @ 1..=3600) => *slot = std::time::Duration::from_secs(secs),
                _ => {
                    return Err(LlmError::Config(format!(
                        "{var} must be a whole number of seconds from 1 to 3600, not `{v}`"
                    )));
                }
            }
        }
    }
    Ok(t)
}

const NO_MODEL: &str = "no model chosen: set SKALD_MODEL (e.g. openai/gpt-4.1-mini, \
     anthropic/claude-sonnet-4-5, ollama/llama3.2), pass --model, set models.default in \
     config.toml, or get a local model (`skald models pull smollm2-135m`)";

/// Picks provider and model from `--model`, else `SKALD_MODEL`. `env` looks a variable up
/// (the process environment in production, a map in tests).
pub fn from_env(
    model: Option<&str>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<ModelChoice, LlmError> {
    choose(model, None, &[], env)
}

/// `model` (a flag) wins over `SKALD_MODEL`, which wins over `default` (config.toml).
pub fn choose(
    model: Option<&str>,
    default: Option<&str>,
    custom: &[CustomProvider],
    env: impl Fn(&str) -> Option<String>,
) -> Result<ModelChoice, LlmError> {
    let spec = model
        .map(str::to_string)
        .or_else(|| env("SKALD_MODEL").filter(|v| !v.trim().is_empty()))
        .or_else(|| default.map(str::to_string))
        .ok_or_else(|| LlmError::Config(NO_MODEL.to_string()))?;
    resolve(&spec, custom, env)
}

/// Resolves one `provider/model` (or bare model) name.
pub fn resolve(
    spec: &str,
    custom: &[CustomProvider],
    env: impl Fn(&str) -> Option<String>,
) -> Result<ModelChoice, LlmError> {
    let get = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    let spec = spec.trim();
    if let Some((prefix, name)) = spec.split_once('/')
        && let Some(c) = custom.iter().find(|c| c.name == prefix)
    {
        if name.is_empty() {
            return Err(LlmError::Config(format!("`{spec}` names no model")));
        }
        let key = c.api_key_env.as_deref().and_then(&get);
        let provider = Provider::new(&c.name, c.kind, &c.base_url, key, timeouts(get)?)?;
        return Ok(ModelChoice {
            provider,
            model: name.to_string(),
        });
    }
    // Only known prefixes name a provider: OpenRouter's model names contain `/` too.
    let (kind, name) = match spec.split_once('/') {
        Some(("openai", m)) => (Some(ProviderKind::OpenAi), m.to_string()),
        Some(("anthropic", m)) => (Some(ProviderKind::Anthropic), m.to_string()),
        Some(("ollama", m)) => (Some(ProviderKind::Ollama), m.to_string()),
        Some(("local", m)) => (Some(ProviderKind::Local), m.to_string()),
        _ => (None, spec.to_string()),
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
        ProviderKind::Local => {
            let dir = get(crate::local::MODELS_DIR_ENV);
            if dir.is_none() && !std::path::Path::new(&name).is_absolute() {
                return Err(LlmError::Config(format!(
                    "`{spec}`: no models folder is known ({} is not set)",
                    crate::local::MODELS_DIR_ENV
                )));
            }
            (dir.unwrap_or_default(), None)
        }
    };
    let provider = Provider::new(kind.label(), kind, url, key, timeouts(get)?)?;
    Ok(ModelChoice {
        provider,
        model: name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_come_from_the_environment_and_bad_values_are_named() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let c = resolve(
            "openai/m",
            &[],
            vars(&[
                ("OPENAI_API_KEY", "k"),
                (TIMEOUT_ENV, "7"),
                (IDLE_ENV, " 9 "),
            ]),
        )
        .unwrap();
        assert_eq!(
            c.provider.timeouts.first_byte,
            std::time::Duration::from_secs(7)
        );
        assert_eq!(c.provider.timeouts.idle, std::time::Duration::from_secs(9));
        for bad in ["0", "-1", "soon", "3601"] {
            let pairs: &'static [(&'static str, &'static str)] =
                Box::leak(vec![("OPENAI_API_KEY", "k"), (TIMEOUT_ENV, bad)].into_boxed_slice());
            let err = resolve("openai/m", &[], vars(pairs))
                .unwrap_err()
                .to_string();
            assert!(err.contains(TIMEOUT_ENV) && err.contains(bad), "{err}");
        }
    }
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
    fn custom_providers_and_config_defaults() {
        let custom = [CustomProvider {
            name: "openrouter".into(),
            kind: ProviderKind::OpenAi,
            base_url: "https://openrouter.ai/api/v1".into(),
            api_key_env: Some("OPENROUTER_API_KEY".into()),
        }];
        let c = choose(
            None,
            Some("openrouter/meta-llama/llama-3-70b"),
            &custom,
            env(&[("OPENROUTER_API_KEY", "or-key")]),
        )
        .unwrap();
        assert_eq!(c.provider.name, "openrouter");
        assert_eq!(c.model, "meta-llama/llama-3-70b");
        assert_eq!(c.label(), "openrouter/meta-llama/llama-3-70b");
        assert!(format!("{:?}", c.provider).contains("<redacted>"));
        // SKALD_MODEL beats the config default.
        let c = choose(
            None,
            Some("openrouter/x"),
            &custom,
            env(&[("SKALD_MODEL", "ollama/m")]),
        )
        .unwrap();
        assert_eq!(c.label(), "ollama/m");
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
