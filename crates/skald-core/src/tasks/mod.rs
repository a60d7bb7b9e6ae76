//! Work that runs without a person typing: background tasks started by agents (with their
//! notifications and deliveries into a chat) and scheduled jobs (cron).

pub mod background;
pub mod cron;

pub use background::NOTIFY_BATCH_MS;

use crate::engine::Engine;
use std::path::Path;

/// The most worktrees of one folder before background work may make another.
const MAX_AGENT_WORKTREES: usize = 8;

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
        // Agents ask for these unasked: a bound keeps them from filling the disk.
        let of_folder = self
            .store
            .list_worktrees()
            .map_err(|e| e.to_string())?
            .into_iter()
            .filter(|w| Path::new(&w.source) == source)
            .count();
        if of_folder >= MAX_AGENT_WORKTREES {
            return Err(format!(
                "{} has {of_folder} worktrees already; the person applies or discards some \
                 (skald worktrees list) before an agent makes another",
                source.display()
            ));
        }
        let make = || {
            crate::worktrees::make(
                &self.store,
                &crate::DataDir::at(root),
                &source,
                None,
                group,
                self.settings.checkpoints.limits,
            )
            .map_err(|e| e.to_string())
        };
        // A copy of a large folder takes a while: off the runtime's own threads where
        // the runtime can lend one.
        match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
            Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(make),
            _ => make(),
        }
    }
}
