//! Model clients behind one streaming interface. Every provider turns a `Request` into a
//! stream of `Event`s — text and reasoning deltas as they arrive, tool calls once their
//! arguments are complete, usage, and the finish reason — so the agent loop never knows
//! which wire format it talks to.
//!
//! Providers: OpenAI chat completions and every server that speaks it (OpenRouter,
//! LM Studio, vLLM, llama.cpp's server), Anthropic Messages, and Ollama's `/api/chat`.
//! Requests are retried with backoff and jitter on 408/429/5xx and connection errors,
//! honouring `Retry-After`, before any event has been emitted; 401/403/404/422 are final.

pub mod anthropic;
pub mod config;
pub mod effort;
pub mod error;
pub mod images;
pub mod local;
pub mod ollama;
pub mod openai;
pub mod prices;
#[cfg(test)]
mod props;
#[cfg(test)]
mod props_anthropic;
#[cfg(test)]
mod props_ollama;
pub mod provider;
pub mod ratelimit;
pub mod retry;
pub mod types;
pub mod vision;

pub use config::{CustomProvider, ModelChoice, choose, from_env, resolve};
pub use error::LlmError;
pub use provider::{Provider, ProviderKind, Timeouts};
pub use types::{
    Event, EventStream, FinishReason, Message, Request, Response, Role, ToolCall, ToolChoice,
    ToolSpec, Usage, collect,
};
