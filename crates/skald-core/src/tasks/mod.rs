//! Work that runs without a person typing: background tasks started by agents (with their
//! notifications and deliveries into a chat) and scheduled jobs (cron).

pub mod background;
pub mod cron;

pub use background::NOTIFY_BATCH_MS;

use crate::engine::Engine;
use std::path::Path;

impl Engine {
    /// A worktree of `source` for a background task or a scheduled run (docs/worktrees.md,
    /// "Background tasks and scheduled jobs"), what group `group`'s deny rules leave
    /// out not copied. Needs the engine's data directory, where worktrees live beside.
    pub(crate) fn background_worktree(
        &self,
        source: &Path,
        group: &str,
    ) -> Result<crate::worktrees::Made, String> {
        let Some(root) = &self.settings.checkpoints.data_dir else {
            return Err("a worktree needs Skald's data directory, which this run has not".into());
        };
        let source = std::fs::canonicalize(source)
            .map_err(|e| format!("cannot resolve {}: {e}", source.display()))?;
        crate::worktrees::make(
            &self.store,
            &crate::DataDir::at(root),
            &source,
            None,
            group,
            self.settings.checkpoints.limits,
        )
        .map_err(|e| e.to_string())
    }
}
