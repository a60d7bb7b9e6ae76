//! Plugins (docs/plugins.md): optional parts with a configuration
//! of their own, checked against their schema, that add tools while they run. They are
//! compiled in and turned on by the user (`configure_plugin`, `toggle_item {kind:
//! "plugin"}`, `skald plugins`). The one shipped so far is the image generator.

use crate::lock;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// An optional part of Skald.
pub trait Plugin: Send + Sync {
    fn id(&self) -> &'static str;
    fn name(&self) -> &'static str;
    fn description(&self) -> &'static str;
    /// JSON Schema of its configuration.
    fn config_schema(&self) -> Value;
    /// Applies a configuration that passed the schema (at start, and on every change);
    /// an error says what is wrong with it, and the plugin stays stopped.
    fn start(&self, config: &Value) -> Result<(), String>;
    fn stop(&self);
    fn running(&self) -> bool;
    /// The tools it adds while running.
    fn tools(&self) -> &'static [&'static str];
}

/// The image generator's settings, once started.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageProvider {
    pub id: String,
    pub base_url: String,
    /// A reference (`${secret:NAME}` or `${env:NAME}`), resolved at each call.
    pub api_key: Option<String>,
    pub model: String,
    pub size: Option<String>,
    pub timeout: Duration,
}

/// Generates images through an OpenAI-compatible images API.
#[derive(Default)]
pub struct ImageGenerator {
    active: Mutex<Option<ImageProvider>>,
}

pub const IMAGE_PLUGIN: &str = "image-generation";

impl ImageGenerator {
    pub fn provider(&self) -> Option<ImageProvider> {
        lock(&self.active).clone()
    }
}

impl Plugin for ImageGenerator {
    fn id(&self) -> &'static str {
        IMAGE_PLUGIN
    }

    fn name(&self) -> &'static str {
        "Image generation"
    }

    fn description(&self) -> &'static str {
        "Lets agents create images (image_generate) with an OpenAI-compatible images API: \
         OpenAI, or a compatible server."
    }

    fn config_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "provider_id": {"type": "string", "default": "openai", "description": "The id agents name it by."},
                "base_url": {"type": "string", "default": "https://api.openai.com/v1"},
                "api_key": {"type": "string", "description": "A reference: ${secret:NAME} or ${env:NAME}."},
                "model": {"type": "string", "default": "gpt-image-1"},
                "size": {"type": "string", "description": "e.g. 1024x1024"},
                "timeout_secs": {"type": "integer", "minimum": 5, "maximum": 600, "default": 120}
            },
            "additionalProperties": false
        })
    }

    fn start(&self, config: &Value) -> Result<(), String> {
        let text = |k: &str, default: &str| {
            config
                .get(k)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .unwrap_or(default)
                .to_string()
        };
        let base_url = text("base_url", "https://api.openai.com/v1");
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(format!("base_url `{base_url}` is not an http(s) URL"));
        }
        let api_key = config
            .get("api_key")
            .and_then(Value::as_str)
            .filter(|k| !k.is_empty())
            .map(str::to_string);
        if let Some(k) = &api_key
            && !((k.starts_with("${secret:") || k.starts_with("${env:")) && k.ends_with('}'))
        {
            return Err(
                "api_key must be a reference (${secret:NAME} or ${env:NAME}), never the key".into(),
            );
        }
        let size = config
            .get("size")
            .and_then(Value::as_str)
            .map(str::to_string);
        *lock(&self.active) = Some(ImageProvider {
            id: text("provider_id", "openai"),
            base_url,
            api_key,
            model: text("model", "gpt-image-1"),
            size,
            timeout: Duration::from_secs(
                config
                    .get("timeout_secs")
                    .and_then(Value::as_u64)
                    .unwrap_or(120),
            ),
        });
        Ok(())
    }

    fn stop(&self) {
        *lock(&self.active) = None;
    }

    fn running(&self) -> bool {
        lock(&self.active).is_some()
    }

    fn tools(&self) -> &'static [&'static str] {
        &[
            skald_api::tool_names::IMAGE_GENERATE,
            skald_api::tool_names::IMAGE_GENERATE_PROVIDERS_LIST,
        ]
    }
}

/// Every plugin Skald ships, and their state.
pub struct Plugins {
    pub images: Arc<ImageGenerator>,
}

impl Default for Plugins {
    fn default() -> Self {
        Plugins {
            images: Arc::new(ImageGenerator::default()),
        }
    }
}

impl Plugins {
    pub fn all(&self) -> Vec<Arc<dyn Plugin>> {
        vec![self.images.clone() as Arc<dyn Plugin>]
    }

    pub fn get(&self, id: &str) -> Option<Arc<dyn Plugin>> {
        self.all().into_iter().find(|p| p.id() == id)
    }

    /// Starts the plugins the user turned on. One that fails to start is logged and
    /// stays off; the others go on.
    pub fn start_enabled(&self, store: &skald_store::Store) {
        for p in self.all() {
            match store.get_plugin(p.id()) {
                Ok(Some(s)) if s.enabled => {
                    if let Err(e) = p.start(&s.config) {
                        tracing::warn!(plugin = p.id(), "cannot start: {e}");
                    }
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(plugin = p.id(), "cannot read its settings: {e}"),
            }
        }
    }

    /// `configure_plugin`: checks the configuration against the plugin's schema, stores it
    /// with the on/off state, and (re)starts or stops the plugin.
    pub fn configure(
        &self,
        store: &skald_store::Store,
        id: &str,
        config: Option<&Value>,
        enabled: Option<bool>,
    ) -> Result<String, String> {
        let plugin = self.get(id).ok_or_else(|| {
            let ids: Vec<&str> = self.all().iter().map(|p| p.id()).collect();
            format!("no plugin `{id}`; the plugins are {}", ids.join(", "))
        })?;
        let stored = store.get_plugin(id).map_err(|e| e.to_string())?;
        let config = match config {
            Some(c) => c.clone(),
            None => stored
                .as_ref()
                .map_or_else(|| json!({}), |s| s.config.clone()),
        };
        crate::args::validate_args(&plugin.config_schema(), &config)
            .map_err(|e| format!("the configuration does not fit: {e}"))?;
        let enabled = enabled.unwrap_or_else(|| stored.as_ref().is_none_or(|s| s.enabled));
        if enabled {
            plugin.start(&config)?;
        } else {
            plugin.stop();
        }
        store
            .set_plugin(id, enabled, &config)
            .map_err(|e| e.to_string())?;
        Ok(if enabled {
            format!(
                "Plugin `{id}` is configured and on; it adds {}.",
                plugin.tools().join(", ")
            )
        } else {
            format!("Plugin `{id}` is configured and off.")
        })
    }

    /// `list_items {type: "plugins"}` and `skald plugins list`.
    pub fn describe(&self, store: &skald_store::Store) -> Vec<skald_api::listings::PluginInfo> {
        self.all()
            .into_iter()
            .map(|p| {
                let stored = store.get_plugin(p.id()).ok().flatten();
                skald_api::listings::PluginInfo {
                    id: p.id().to_string(),
                    name: p.name().to_string(),
                    description: p.description().to_string(),
                    enabled: stored.as_ref().is_some_and(|s| s.enabled),
                    running: p.running(),
                    config: stored.map(|s| s.config),
                    config_schema: p.config_schema(),
                    tools: p.tools().iter().map(|t| t.to_string()).collect(),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configuring_checks_starts_and_stops() {
        let store = skald_store::Store::open_in_memory().unwrap();
        let plugins = Plugins::default();
        assert!(!plugins.images.running());
        let e = plugins
            .configure(
                &store,
                IMAGE_PLUGIN,
                Some(&json!({"colour": "red"})),
                Some(true),
            )
            .unwrap_err();
        assert!(e.contains("does not fit"), "{e}");
        let e = plugins
            .configure(
                &store,
                IMAGE_PLUGIN,
                Some(&json!({"api_key": "sk-raw"})),
                Some(true),
            )
            .unwrap_err();
        assert!(e.contains("reference"), "{e}");
        assert!(
            !plugins.images.running(),
            "a refused configuration starts nothing"
        );
        plugins
            .configure(
                &store,
                IMAGE_PLUGIN,
                Some(&json!({"base_url": "http://127.0.0.1:9/v1", "api_key": "${secret:IMG}"})),
                None,
            )
            .unwrap();
        let p = plugins.images.provider().unwrap();
        assert_eq!((p.id.as_str(), p.model.as_str()), ("openai", "gpt-image-1"));
        // Turning it off keeps the configuration.
        plugins
            .configure(&store, IMAGE_PLUGIN, None, Some(false))
            .unwrap();
        assert!(!plugins.images.running());
        let again = Plugins::default();
        again.start_enabled(&store);
        assert!(!again.images.running());
        plugins
            .configure(&store, IMAGE_PLUGIN, None, Some(true))
            .unwrap();
        again.start_enabled(&store);
        assert_eq!(
            again.images.provider().unwrap().base_url,
            "http://127.0.0.1:9/v1"
        );
        assert!(
            plugins
                .configure(&store, "nope", None, None)
                .unwrap_err()
                .contains("no plugin")
        );
        let d = serde_json::to_value(plugins.describe(&store)).unwrap();
        assert_eq!(d[0]["id"], IMAGE_PLUGIN);
        assert_eq!(d[0]["enabled"], true);
    }
}
