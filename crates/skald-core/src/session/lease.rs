//! Leases on chats and tasks: one process at a time runs turns in a chat or works on a
//! background task; another is told the chat is busy. A lease is renewed while the work
//! goes on and taken over at once when the process holding it is gone.

use crate::engine::{Engine, EngineError};
use skald_api::CancellationToken;
use skald_store::Store;
use std::sync::Arc;

/// How long a process's hold on a chat or a task lasts without being renewed; it is
/// renewed at a third of that while the work goes on.
pub const LEASE_MS: i64 = 60_000;

/// Whether the process named in a lease is gone (on this machine, where the data
/// directory is).
pub(crate) fn owner_is_dead(owner: &str) -> bool {
    #[cfg(unix)]
    {
        let pid = owner
            .strip_prefix("pid:")
            .and_then(|r| r.split(':').next())
            .and_then(|p| p.parse::<i32>().ok());
        if let Some(pid) = pid {
            return matches!(
                nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None),
                Err(nix::errno::Errno::ESRCH)
            );
        }
    }
    #[cfg(not(unix))]
    let _ = owner;
    false
}

/// A hold on a chat: renewed in the background, released when dropped.
pub struct SessionLease {
    store: Arc<Store>,
    session_id: i64,
    owner: String,
    renewing: CancellationToken,
}

impl Drop for SessionLease {
    fn drop(&mut self) {
        self.renewing.cancel();
        let _ = self.store.release_session(self.session_id, &self.owner);
    }
}

/// Renews a lease every third of `LEASE_MS` until `stop`.
fn renew_every(stop: CancellationToken, mut renew: impl FnMut() + Send + 'static) {
    tokio::spawn(async move {
        let every = std::time::Duration::from_millis(u64::try_from(LEASE_MS / 3).unwrap_or(20_000));
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(every) => renew(),
            }
        }
    });
}

impl Engine {
    /// Takes a chat for this process while it runs turns in it: a second process gets
    /// `Busy` instead of writing into the same conversation. A hold left by a process that
    /// is gone is taken over at once.
    pub fn hold_session(&self, session_id: i64) -> Result<SessionLease, EngineError> {
        let store = &self.store;
        let mut claimed = store.claim_session(session_id, &self.owner, LEASE_MS, None)?;
        if !claimed && let Some(holder) = store.session_holder(session_id)? {
            if owner_is_dead(&holder.owner) {
                claimed =
                    store.claim_session(session_id, &self.owner, LEASE_MS, Some(&holder.owner))?;
            }
            if !claimed {
                return Err(EngineError::Busy {
                    session_id,
                    owner: holder.owner,
                });
            }
        }
        if !claimed {
            // The holder let go between the two looks.
            store.claim_session(session_id, &self.owner, LEASE_MS, None)?;
        }
        let renewing = CancellationToken::new();
        let (s, owner) = (self.store.clone(), self.owner.clone());
        renew_every(renewing.clone(), move || {
            let _ = s.renew_session(session_id, &owner, LEASE_MS);
        });
        Ok(SessionLease {
            store: self.store.clone(),
            session_id,
            owner: self.owner.clone(),
            renewing,
        })
    }

    /// Takes a running task for this process (a new one, or one a process that is gone
    /// left running). False: another live process runs it.
    pub(crate) fn hold_task(
        &self,
        task_id: i64,
        stop: &CancellationToken,
    ) -> Result<bool, EngineError> {
        let store = &self.store;
        let mut claimed = store.claim_task(task_id, &self.owner, LEASE_MS, None)?;
        if !claimed
            && let Some(holder) = store.task_holder(task_id)?
            && owner_is_dead(&holder.owner)
        {
            claimed = store.claim_task(task_id, &self.owner, LEASE_MS, Some(&holder.owner))?;
        }
        if claimed {
            let (s, owner) = (self.store.clone(), self.owner.clone());
            renew_every(stop.clone(), move || {
                let _ = s.renew_task(task_id, &owner, LEASE_MS);
            });
        }
        Ok(claimed)
    }
}
