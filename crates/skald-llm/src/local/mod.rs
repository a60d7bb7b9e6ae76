//! The `local` provider: GGUF models run inside Skald's own process by llama.cpp, through
//! the `llama-cpp-2` binding (the only module that touches it is `engine`). Tokens stream
//! through the same `Event`s as the HTTP providers; a dropped stream (/stop) ends the
//! generation between two tokens. Models stay loaded between turns and are unloaded after
//! an idle time. Without the `local` cargo feature the provider exists but says that this
//! build has no local models.
//!
//! Names: `local/<name>` is `<name>.gguf` in the models folder (`SKALD_MODELS_DIR`, which
//! the engine points at `<data dir>/models`), or an absolute path to a `.gguf` file.

pub mod calls;
#[cfg(feature = "local")]
mod engine;
pub mod files;
#[cfg(feature = "local")]
mod grammar;
pub mod prompt;
pub mod pull;
#[cfg(feature = "local")]
mod saved;

use crate::{EventStream, LlmError, ModelChoice, Provider, ProviderKind, Request};
use std::path::PathBuf;

/// Where local models live unless a name is a path.
pub const MODELS_DIR_ENV: &str = "SKALD_MODELS_DIR";

/// Whether this build can run local models.
pub const AVAILABLE: bool = cfg!(feature = "local");

/// The model file a `local/<name>` refers to: `provider.base_url` is the models folder.
pub fn model_path(provider: &Provider, name: &str) -> PathBuf {
    let as_path = PathBuf::from(name);
    if as_path.is_absolute() {
        return as_path;
    }
    let file = if name.ends_with(".gguf") {
        name.to_string()
    } else {
        format!("{name}.gguf")
    };
    PathBuf::from(&provider.base_url).join(file)
}

/// Below this size on disk a model has at most about 1.5 billion parameters at the 4 to 8
/// bits per weight of the usual quantisations (SmolLM2-135M is 98 MB, Llama 3.2 1B in
/// Q4_K_M 0.8 GB; the recommended 3B and 4B models are 2 GB and more).
pub const SMALL_MODEL_BYTES: u64 = 1 << 30;

/// Whether `choice` is a local model small enough to be given only the tools it can use
/// (docs/models.md, "Small models"). Its file is looked at, not loaded: a model that is
/// not there is not small, and its chat fails as it would anyway.
pub fn is_small(choice: &ModelChoice) -> bool {
    choice.provider.kind == ProviderKind::Local
        && std::fs::metadata(model_path(&choice.provider, &choice.model))
            .is_ok_and(|m| m.is_file() && m.len() < SMALL_MODEL_BYTES)
}

/// Local generations running now: each ends when its answer is complete or its stream is
/// dropped (a stop).
pub fn active() -> usize {
    #[cfg(feature = "local")]
    return engine::active();
    #[cfg(not(feature = "local"))]
    0
}

/// How many times a prompt's shared beginning was loaded from its saved state instead of
/// read again, in this process (for `skald doctor`-style reports, tests and benchmarks).
pub fn prompt_states_loaded() -> u64 {
    #[cfg(feature = "local")]
    return engine::states_loaded();
    #[cfg(not(feature = "local"))]
    0
}

/// Stops the local models' workers before the process exits, waiting at most `limit`:
/// a worker still decoding while the process tears llama.cpp down would crash it.
pub fn shutdown(limit: std::time::Duration) {
    #[cfg(feature = "local")]
    engine::shutdown(limit);
    #[cfg(not(feature = "local"))]
    let _ = limit;
}

#[cfg(feature = "local")]
pub(crate) async fn start(provider: &Provider, req: &Request) -> Result<EventStream, LlmError> {
    engine::start(model_path(provider, &req.model), &provider.base_url, req).await
}

#[cfg(not(feature = "local"))]
pub(crate) async fn start(_provider: &Provider, _req: &Request) -> Result<EventStream, LlmError> {
    Err(LlmError::Config(
        "this build of Skald cannot run local models (it was built without the `local` \
         feature); use a provider, or a build with it"
            .into(),
    ))
}
