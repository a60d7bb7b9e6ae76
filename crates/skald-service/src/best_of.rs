//! Best of N (docs/worktrees.md, "Best of N"): one prompt to 2–4 agents at once, each a
//! new chat in a worktree of its own of one folder, each with its own model. Their
//! worktrees share a trial name, so the app shows their diffs side by side; the person
//! applies the one they pick (`apply_worktree`) and discards the others.

use crate::{Service, ServiceError, invalid};
use skald_api::protocol::{Reply, SessionInfo};

/// How many agents one trial may have.
const AGENTS: std::ops::RangeInclusive<usize> = 2..=4;
/// Each agent's letter: its worktree is `<trial>-a`, `-b`, …
const LETTERS: [char; 4] = ['a', 'b', 'c', 'd'];

impl Service {
    pub(crate) async fn best_of(
        &self,
        text: String,
        models: Vec<Option<String>>,
        working_dir: Option<String>,
        title: Option<String>,
    ) -> Result<Reply, ServiceError> {
        if !AGENTS.contains(&models.len()) {
            return Err(invalid(format!(
                "best of N gives one prompt to 2 to 4 agents, not {}",
                models.len()
            )));
        }
        if text.trim().is_empty() {
            return Err(invalid("the message is empty"));
        }
        if self.sessions.engine().models().is_empty() {
            return Err(invalid(
                "no model can be used; configure a provider in Settings",
            ));
        }
        // Every model checked before anything is made.
        let models: Vec<Option<String>> = models
            .into_iter()
            .map(|m| m.map(|m| m.trim().to_string()).filter(|m| !m.is_empty()))
            .collect();
        for spec in models.iter().flatten() {
            self.usable_model(spec)?;
        }
        let folder = match &working_dir {
            Some(d) => {
                std::fs::canonicalize(d).map_err(|e| invalid(format!("working folder {d}: {e}")))?
            }
            None => self.policy.root().to_path_buf(),
        };
        let trial = self.free_trial(&folder)?;
        let title = title
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| first_words(&text));
        let mut made: Vec<SessionInfo> = Vec::new();
        for (model, letter) in models.iter().zip(LETTERS) {
            let name = format!("{trial}-{letter}");
            let shown = model.as_deref().unwrap_or("configured model");
            let step = async {
                let Reply::CreateSession { session } = self
                    .create_session(
                        Some(format!(
                            "{title} ({}: {shown})",
                            letter.to_ascii_uppercase()
                        )),
                        Some(folder.display().to_string()),
                        None,
                        Some(name.clone()),
                    )
                    .await?
                else {
                    return Err(invalid("a chat could not be made"));
                };
                self.store.set_worktree_trial(&name, &trial)?;
                if model.is_some() {
                    self.set_session_model(session.id, model.clone(), None)?;
                }
                Ok(session)
            }
            .await;
            match step {
                Ok(s) => made.push(s),
                Err(e) => {
                    // Nothing half made: the chats and worktrees of this trial go.
                    for s in &made {
                        let _ = self.undo_chat(s.id).await;
                    }
                    return Err(e);
                }
            }
        }
        let mut sessions = Vec::with_capacity(made.len());
        for s in made {
            self.send_message(s.id, text.clone(), Vec::new())?;
            sessions.push(self.session_info(self.store.get_session(s.id)?));
        }
        Ok(Reply::BestOf { trial, sessions })
    }

    /// The first `<folder>-try<N>` no worktree has had.
    fn free_trial(&self, folder: &std::path::Path) -> Result<String, ServiceError> {
        let base: String = folder
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '_' | '-') {
                    c
                } else {
                    '-'
                }
            })
            .take(32)
            .collect();
        let base = base.trim_matches('-');
        let base = if base.is_empty() { "work" } else { base };
        // A folder left by a run that stopped before recording its worktree takes the
        // name too.
        let place = self.data_dir.worktrees_dir();
        let mut n = 1u32;
        loop {
            let trial = format!("{base}-try{n}");
            let names_free = LETTERS.iter().all(|l| {
                let name = format!("{trial}-{l}");
                self.store.find_worktree(&name).is_ok_and(|w| w.is_none())
                    && !place.join(&name).exists()
            });
            if names_free && !self.store.trial_taken(&trial)? {
                return Ok(trial);
            }
            n += 1;
        }
    }

    /// Removes a chat made for a trial that could not be finished, with its worktree.
    async fn undo_chat(&self, session_id: i64) -> Result<(), ServiceError> {
        if let Some(w) = self.store.worktree_of_session(session_id)? {
            skald_core::worktrees::discard(&self.store, &w).map_err(|e| invalid(e.to_string()))?;
        }
        self.store.delete_session(session_id)?;
        Ok(())
    }
}

/// A title from the prompt: its first words, at most 60 characters.
fn first_words(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line,
    }
}
