//! Work that runs without a person typing: background tasks started by agents (with their
//! notifications and deliveries into a chat) and scheduled jobs (cron).

pub mod background;
pub mod cron;

pub use background::NOTIFY_BATCH_MS;
