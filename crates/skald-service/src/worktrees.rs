//! The worktrees of the chats (docs/worktrees.md): made for a new chat, listed, reviewed,
//! applied and discarded from the UI.

use crate::{Service, ServiceError, invalid};
use skald_api::protocol::Reply;
use skald_api::worktree::{FileChoice, WorktreeInfo, WorktreeStatus};
use skald_core::worktrees::{self, revert, review};

impl Service {
    fn checkpoint_limits(&self) -> skald_checkpoint::Limits {
        crate::lock(&self.config)
            .checkpoints
            .settings(self.data_dir.root())
            .limits
    }

    /// Runs `work` with the store and where the shadow repositories are, off the async
    /// threads: reading every changed file of a large worktree takes a while.
    async fn reviewing<T: Send + 'static>(
        &self,
        work: impl FnOnce(&skald_store::Store, &review::Place<'_>) -> Result<T, review::ReviewError>
        + Send
        + 'static,
    ) -> Result<T, ServiceError> {
        let (store, data_dir, limits) = (
            self.store.clone(),
            self.data_dir.clone(),
            self.checkpoint_limits(),
        );
        tokio::task::spawn_blocking(move || {
            let place = review::Place {
                data_dir: &data_dir,
                limits,
            };
            work(&store, &place)
        })
        .await
        .map_err(|e| invalid(format!("the review stopped: {e}")))?
        .map_err(review_error)
    }

    /// Makes a worktree of `source` (canonical) for a new chat of the default group, off
    /// the async threads (a copy of a large folder takes a while).
    pub(crate) async fn make_worktree(
        &self,
        source: std::path::PathBuf,
        name: &str,
    ) -> Result<worktrees::Made, ServiceError> {
        let name = Some(name.trim().to_string()).filter(|n| !n.is_empty());
        let (store, data_dir, limits) = (
            self.store.clone(),
            self.data_dir.clone(),
            self.checkpoint_limits(),
        );
        tokio::task::spawn_blocking(move || {
            worktrees::make(
                &store,
                &data_dir,
                &source,
                name.as_deref(),
                "default",
                limits,
            )
        })
        .await
        .map_err(|e| invalid(format!("making the worktree stopped: {e}")))?
        .map_err(|e| match e {
            worktrees::WorktreesError::Store(e) => e.into(),
            e => invalid(e.to_string()),
        })
    }

    fn active_worktree(&self, name: &str) -> Result<WorktreeInfo, ServiceError> {
        self.store
            .find_worktree(name)?
            .filter(|w| w.status == WorktreeStatus::Active)
            .ok_or_else(|| invalid(format!("there is no worktree named {name}")))
    }

    /// Every worktree with its disk use and when it was last used (a walk of each:
    /// off the async threads).
    pub(crate) async fn list_worktrees(&self) -> Result<Reply, ServiceError> {
        let store = self.store.clone();
        let worktrees = tokio::task::spawn_blocking(move || worktrees::described(&store))
            .await
            .map_err(|e| invalid(format!("listing the worktrees stopped: {e}")))??;
        Ok(Reply::ListWorktrees {
            worktrees,
            clean_after_days: skald_base::lock(&self.config).worktrees.clean_after_days,
        })
    }

    /// The board of agents (docs/board.md).
    pub(crate) async fn board(&self, limit: Option<u32>) -> Result<Reply, ServiceError> {
        let limit = limit.map_or(skald_core::board::DEFAULT_LIMIT, |l| {
            usize::try_from(l).unwrap_or(usize::MAX)
        });
        let engine = self.sessions.engine();
        Ok(Reply::Board {
            agents: skald_core::board::agents(&self.store, &engine.checkpoints, limit).await?,
        })
    }

    pub(crate) async fn worktree_diff(&self, name: &str) -> Result<Reply, ServiceError> {
        let w = self.active_worktree(name)?;
        let (files, snapshot) = self
            .reviewing(move |_, place| review::review(place, &w))
            .await?;
        Ok(Reply::WorktreeDiff { files, snapshot })
    }

    pub(crate) async fn apply_worktree(
        &self,
        name: &str,
        files: Option<Vec<FileChoice>>,
        snapshot: Option<String>,
    ) -> Result<Reply, ServiceError> {
        let w = self.active_worktree(name)?;
        let choice = choice_of(files);
        let report = self
            .reviewing(move |store, place| {
                review::apply(store, place, &w, &choice, snapshot.as_deref())
            })
            .await?;
        Ok(Reply::ApplyWorktree { report })
    }

    pub(crate) async fn commit_worktree(
        &self,
        name: &str,
        message: Option<String>,
        snapshot: Option<String>,
    ) -> Result<Reply, ServiceError> {
        let w = self.active_worktree(name)?;
        // Half of what a running agent is writing would be committed.
        self.refuse_while_working(&w, "commit once it has answered")?;
        let commit = self
            .worktree_step(move |_, place| {
                worktrees::commit(
                    place,
                    &w,
                    message.as_deref().unwrap_or(""),
                    snapshot.as_deref(),
                )
            })
            .await?;
        Ok(Reply::CommitWorktree { commit })
    }

    pub(crate) async fn merge_worktree(&self, name: &str) -> Result<Reply, ServiceError> {
        let w = self.active_worktree(name)?;
        let report = self
            .worktree_step(move |_, place| worktrees::merge(place, &w))
            .await?;
        Ok(Reply::MergeWorktree { report })
    }

    /// Refuses while any chat works in worktree `w` in a live process (this one or
    /// another): its agent may be writing there.
    fn refuse_while_working(&self, w: &WorktreeInfo, then: &str) -> Result<(), ServiceError> {
        let busy = worktrees::sessions_working_in(&self.store, w)?;
        let processes = &self.sessions.engine().processes;
        // A turn, in any process, or a command an agent left running in the background.
        if let Some(id) = busy.into_iter().find(|id| {
            self.sessions.is_running(*id)
                || worktrees::held_live(&self.store, *id)
                || processes
                    .list(*id)
                    .iter()
                    .any(|p| p.status == skald_api::processes::ProcessStatus::Running)
        }) {
            return Err(invalid(format!(
                "chat {id} is working in worktree {}; {then}",
                w.name
            )));
        }
        Ok(())
    }

    /// As `reviewing`, for the worktree steps whose errors are the engine's worktree errors.
    async fn worktree_step<T: Send + 'static>(
        &self,
        work: impl FnOnce(
            &skald_store::Store,
            &review::Place<'_>,
        ) -> Result<T, worktrees::WorktreesError>
        + Send
        + 'static,
    ) -> Result<T, ServiceError> {
        let (store, data_dir, limits) = (
            self.store.clone(),
            self.data_dir.clone(),
            self.checkpoint_limits(),
        );
        tokio::task::spawn_blocking(move || {
            let place = review::Place {
                data_dir: &data_dir,
                limits,
            };
            work(&store, &place)
        })
        .await
        .map_err(|e| invalid(format!("the worktree step stopped: {e}")))?
        .map_err(|e| match e {
            worktrees::WorktreesError::Store(e) => e.into(),
            e => invalid(e.to_string()),
        })
    }

    pub(crate) async fn chat_changes(&self, session_id: i64) -> Result<Reply, ServiceError> {
        self.store.get_session(session_id)?;
        let (files, snapshot) = self
            .reviewing(move |store, place| revert::chat_changes(store, place, session_id))
            .await?;
        Ok(Reply::ChatChanges { files, snapshot })
    }

    pub(crate) async fn revert_changes(
        &self,
        session_id: i64,
        files: Option<Vec<FileChoice>>,
        snapshot: Option<String>,
    ) -> Result<Reply, ServiceError> {
        self.store.get_session(session_id)?;
        // A running turn's next change would land between the review and the revert.
        // In this process or another.
        if self.sessions.is_running(session_id) || worktrees::held_live(&self.store, session_id) {
            return Err(invalid(
                "the chat is running; take changes back once it has answered".to_string(),
            ));
        }
        let choice = choice_of(files);
        let report = self
            .reviewing(move |store, place| {
                revert::revert(store, place, session_id, &choice, snapshot.as_deref())
            })
            .await?;
        Ok(Reply::RevertChanges { report })
    }

    pub(crate) fn discard_worktree(&self, name: &str) -> Result<Reply, ServiceError> {
        let w = self.active_worktree(name)?;
        self.refuse_while_working(&w, "stop it before discarding the worktree")?;
        worktrees::discard(&self.store, &w).map_err(|e| invalid(e.to_string()))?;
        Ok(Reply::DiscardWorktree)
    }
}

/// The files and hunks chosen in a review, as the engine takes them.
fn choice_of(files: Option<Vec<FileChoice>>) -> review::Choice {
    match files {
        None => review::Choice::All,
        Some(files) => review::Choice::Files(
            files
                .into_iter()
                .map(|f| {
                    let hunks = match f.hunks {
                        None => review::Hunks::All,
                        Some(h) => review::Hunks::Only(h),
                    };
                    (f.path, hunks)
                })
                .collect(),
        ),
    }
}

fn review_error(e: review::ReviewError) -> ServiceError {
    match e {
        review::ReviewError::Store(e) => e.into(),
        e => invalid(e.to_string()),
    }
}
