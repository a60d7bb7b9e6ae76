//! Where the engine's events go: each carrier hands the engine one sink and receives every
//! event of the sessions it drives there, with the session's id.

use skald_api::events::Event;
use std::sync::Arc;

/// Where the events of sessions the engine drives go, with their session id.
pub type Sink = Arc<dyn Fn(i64, Event) + Send + Sync>;
