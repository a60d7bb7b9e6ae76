//! Which models a turn uses: the chosen one and its fallbacks, from the command line, the
//! environment and `config.toml`, and how healthy each has been in this process.

use crate::config::Config;
use skald_llm::{CustomProvider, LlmError, ModelChoice, ProviderKind};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Fallbacks used at most per round (docs/models.md, "Fallbacks and health").
pub const MAX_FALLBACKS: usize = 3;

/// The providers declared in config.toml.
pub fn custom_providers(config: &Config) -> Result<Vec<CustomProvider>, LlmError> {
    config
        .providers
        .iter()
        .map(|(name, p)| {
            let kind = ProviderKind::parse(&p.kind).ok_or_else(|| {
                LlmError::Config(format!(
                    "config.toml: providers.{name}.kind must be openai, anthropic, ollama or local, not `{}`",
                    p.kind
                ))
            })?;
            Ok(CustomProvider {
                name: name.clone(),
                kind,
                base_url: p.base_url.clone(),
                api_key_env: p.api_key_env.clone(),
            })
        })
        .collect()
}

/// The variables holding the keys of the providers the user declared in config.toml.
/// They are secrets too: an engine withholds them from commands and MCP servers
/// (`Withheld::hide_env`), whichever model is chosen.
pub fn key_envs(config: &Config) -> Vec<String> {
    config
        .providers
        .values()
        .filter_map(|p| p.api_key_env.clone())
        .collect()
}

/// The local models in `dir` (`<name>.gguf`), by name.
pub fn local_models(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let stem = name.strip_suffix(".gguf")?.to_string();
            e.path().is_file().then_some(stem)
        })
        .collect();
    names.sort();
    names
}

/// The model to use first, then its fallbacks (`models.fallbacks` in config.toml, then
/// `SKALD_FALLBACK_MODELS`, comma-separated), without duplicates. `local/<name>` models
/// are looked up in `models_dir`; when nothing names a model and a local one is there, it
/// is the one.
pub fn choose_models(
    config: &Config,
    flag: Option<&str>,
    models_dir: &Path,
    env: impl Fn(&str) -> Option<String> + Copy,
) -> Result<Vec<ModelChoice>, LlmError> {
    let dir = models_dir.display().to_string();
    // The caller resolved the folder (`DataDir::models_dir` reads SKALD_MODELS_DIR).
    let env = |k: &str| match k {
        skald_llm::local::MODELS_DIR_ENV => Some(dir.clone()),
        _ => env(k),
    };
    let env = &env;
    let custom = custom_providers(config)?;
    let named = flag.is_some()
        || env("SKALD_MODEL").is_some_and(|v| !v.trim().is_empty())
        || config.models.default.is_some();
    let local_default = match named {
        false => env(skald_llm::local::MODELS_DIR_ENV)
            .and_then(|d| local_models(Path::new(&d)).into_iter().next())
            .map(|name| format!("local/{name}")),
        true => None,
    };
    let default = config
        .models
        .default
        .as_deref()
        .or(local_default.as_deref());
    let first = skald_llm::choose(flag, default, &custom, env)?;
    let mut labels = vec![first.label()];
    let mut out = vec![first];
    let from_env = env("SKALD_FALLBACK_MODELS").unwrap_or_default();
    let specs = config
        .models
        .fallbacks
        .iter()
        .map(String::as_str)
        .chain(from_env.split(',').map(str::trim).filter(|s| !s.is_empty()));
    for spec in specs {
        let m = skald_llm::resolve(spec, &custom, env)?;
        if !labels.contains(&m.label()) {
            labels.push(m.label());
            out.push(m);
        }
    }
    Ok(out)
}

/// Consecutive failures after which a model is "degraded" (still tried) and "down" (skipped
/// while another model is available, for `DOWN_FOR`).
const DEGRADED_AFTER: u32 = 2;
const DOWN_AFTER: u32 = 4;
const DOWN_FOR: Duration = Duration::from_secs(300);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Health {
    Ok,
    Degraded,
    Down,
}

/// Per-model failure counts for this process.
#[derive(Default)]
pub struct ModelHealth {
    state: Mutex<HashMap<String, (u32, Option<Instant>)>>,
}

impl ModelHealth {
    pub fn health(&self, label: &str) -> Health {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match state.get(label) {
            Some((n, Some(since))) if *n >= DOWN_AFTER && since.elapsed() < DOWN_FOR => {
                Health::Down
            }
            Some((n, _)) if *n >= DEGRADED_AFTER => Health::Degraded,
            _ => Health::Ok,
        }
    }

    pub fn failed(&self, label: &str) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let entry = state.entry(label.to_string()).or_insert((0, None));
        entry.0 += 1;
        if entry.0 >= DOWN_AFTER {
            entry.1 = Some(Instant::now());
        }
    }

    pub fn succeeded(&self, label: &str) {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(label);
    }
}

/// The models to try, in order: the chosen one and its fallbacks, without those that are
/// down — unless every one is, since trying them beats giving up without a call.
pub(crate) fn candidates<'m>(
    models: &'m [ModelChoice],
    health: &ModelHealth,
) -> Vec<&'m ModelChoice> {
    let usable: Vec<&ModelChoice> = models
        .iter()
        .filter(|m| health.health(&m.label()) != Health::Down)
        .collect();
    if usable.is_empty() {
        models.iter().collect()
    } else {
        usable
    }
    .into_iter()
    .take(1 + MAX_FALLBACKS)
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn fallbacks_come_from_config_then_env_without_duplicates() {
        let mut cfg = Config::default();
        cfg.models.default = Some("openai/a".into());
        cfg.models.fallbacks = vec!["ollama/b".into(), "openai/a".into()];
        let vars: HashMap<&str, &str> = [("SKALD_FALLBACK_MODELS", "ollama/c, ollama/b")].into();
        let env = |k: &str| vars.get(k).map(|v| v.to_string());
        let labels: Vec<String> = choose_models(&cfg, None, Path::new("/nonexistent"), env)
            .unwrap()
            .iter()
            .map(ModelChoice::label)
            .collect();
        assert_eq!(labels, ["openai/a", "ollama/b", "ollama/c"]);
    }

    #[test]
    fn a_refusal_of_images_is_learned_by_every_list_unless_the_user_says_it_sees() {
        let choice = |model: &str| ModelChoice {
            provider: skald_llm::Provider::new(
                "openai",
                skald_llm::ProviderKind::OpenAi,
                "http://127.0.0.1:1",
                None,
                skald_llm::Timeouts::default(),
            )
            .unwrap(),
            model: model.into(),
        };
        let (a, b) = (choice("some-model"), choice("other-model"));
        let engine = ModelList::new(vec![a.clone()]);
        let chat = ModelList::new(vec![a.clone()]).learning_with(&engine);
        assert!(engine.sees_images(&a) && chat.sees_images(&a));
        chat.refused_images(&a);
        assert!(!engine.sees_images(&a) && !chat.sees_images(&a));
        assert!(engine.sees_images(&b));
        // What config.toml says wins over what was learned.
        engine.set_vision([("openai/some-model".to_string(), true)].into());
        assert!(engine.sees_images(&a));
    }

    #[test]
    fn with_nothing_named_a_local_model_is_the_default() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = Config::default();
        let none = |_: &str| None;
        assert!(choose_models(&cfg, None, dir.path(), none).is_err());
        std::fs::write(dir.path().join("b.gguf"), b"GGUF").unwrap();
        std::fs::write(dir.path().join("a.gguf"), b"GGUF").unwrap();
        std::fs::write(dir.path().join("notes.txt"), b"").unwrap();
        assert_eq!(local_models(dir.path()), ["a", "b"]);
        let first = &choose_models(&cfg, None, dir.path(), none).unwrap()[0];
        assert_eq!(first.label(), "local/a");
        assert_eq!(first.provider.base_url, dir.path().display().to_string());
        // Anything named wins over it.
        let vars = |k: &str| (k == "SKALD_MODEL").then(|| "ollama/llama3.2".to_string());
        let first = &choose_models(&cfg, None, dir.path(), vars).unwrap()[0];
        assert_eq!(first.label(), "ollama/llama3.2");
    }

    #[test]
    fn a_bad_provider_kind_is_named() {
        let mut cfg = Config::default();
        cfg.providers.insert(
            "x".into(),
            crate::config::ProviderConfig {
                kind: "grpc".into(),
                base_url: "u".into(),
                api_key_env: None,
            },
        );
        let err = custom_providers(&cfg).unwrap_err();
        assert!(err.to_string().contains("providers.x.kind"), "{err}");
    }

    #[test]
    fn health_degrades_then_goes_down_and_recovers() {
        let h = ModelHealth::default();
        assert_eq!(h.health("m"), Health::Ok);
        h.failed("m");
        h.failed("m");
        assert_eq!(h.health("m"), Health::Degraded);
        h.failed("m");
        h.failed("m");
        assert_eq!(h.health("m"), Health::Down);
        h.succeeded("m");
        assert_eq!(h.health("m"), Health::Ok);
    }
}

/// The model to use first, then its fallbacks; replaced as a whole when the user configures
/// another provider.
#[derive(Default)]
pub struct ModelList {
    models: std::sync::Mutex<std::sync::Arc<Vec<ModelChoice>>>,
    /// `[models.vision]`: which models the user says can or cannot see images.
    vision: std::sync::Mutex<std::sync::Arc<std::collections::BTreeMap<String, bool>>>,
    /// `[models.prices]`: what the user says models cost.
    prices: std::sync::Mutex<
        std::sync::Arc<std::collections::BTreeMap<String, skald_llm::prices::Price>>,
    >,
    /// Models (`provider/model`) whose provider refused an image in this run though
    /// nothing said they cannot see; shared by the lists of chats with their own model.
    refused_images: std::sync::Arc<std::sync::Mutex<std::collections::BTreeSet<String>>>,
}

/// What config.toml says of `model` in a table keyed by `provider/model` or model name (a
/// trailing `*` matching any rest): the longest key that matches is the most specific.
pub fn user_says<'a, T>(
    model: &ModelChoice,
    said: &'a std::collections::BTreeMap<String, T>,
) -> Option<&'a T> {
    let label = model.label();
    let matches = |pattern: &str| match pattern.strip_suffix('*') {
        Some(prefix) => label.starts_with(prefix) || model.model.starts_with(prefix),
        None => label == pattern || model.model == pattern,
    };
    said.iter()
        .filter(|(p, _)| matches(p))
        .max_by_key(|(p, _)| p.len())
        .map(|(_, v)| v)
}

impl ModelList {
    pub fn new(models: Vec<ModelChoice>) -> ModelList {
        ModelList {
            models: std::sync::Mutex::new(std::sync::Arc::new(models)),
            vision: std::sync::Mutex::default(),
            prices: std::sync::Mutex::default(),
            refused_images: std::sync::Arc::default(),
        }
    }

    /// This list, knowing what `other` learned of which models refuse images (and
    /// teaching it what this one learns).
    pub fn learning_with(mut self, other: &ModelList) -> ModelList {
        self.refused_images = other.refused_images.clone();
        self
    }

    /// Remembers that `model`'s provider refused an image: from now on it is sent none,
    /// unless `[models.vision]` says it sees.
    pub fn refused_images(&self, model: &ModelChoice) {
        skald_base::lock(&self.refused_images).insert(model.label());
    }

    /// Sets what `[models.prices]` says.
    pub fn set_prices(&self, said: std::collections::BTreeMap<String, skald_llm::prices::Price>) {
        *skald_base::lock(&self.prices) = std::sync::Arc::new(said);
    }

    /// What `model` costs: what the user says, else its published price, else unknown.
    pub fn price_of(&self, model: &ModelChoice) -> Option<skald_llm::prices::Price> {
        let said = skald_base::lock(&self.prices).clone();
        user_says(model, &said)
            .copied()
            .or_else(|| skald_llm::prices::known_price(model.provider.kind, &model.model))
    }

    pub fn current(&self) -> std::sync::Arc<Vec<ModelChoice>> {
        skald_base::lock(&self.models).clone()
    }

    pub fn set(&self, models: Vec<ModelChoice>) {
        *skald_base::lock(&self.models) = std::sync::Arc::new(models);
    }

    /// Sets what `[models.vision]` says.
    pub fn set_vision(&self, said: std::collections::BTreeMap<String, bool>) {
        *skald_base::lock(&self.vision) = std::sync::Arc::new(said);
    }

    /// Whether `model` can see images (`crate::images::sees_images`), unless its provider
    /// refused one in this run and the user did not say it sees.
    pub fn sees_images(&self, model: &ModelChoice) -> bool {
        let said = skald_base::lock(&self.vision).clone();
        if user_says(model, &said).is_none()
            && skald_base::lock(&self.refused_images).contains(&model.label())
        {
            return false;
        }
        crate::images::sees_images(model, &said)
    }
}
