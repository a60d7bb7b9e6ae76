//! The file viewer's commands: a file's view, a page of a long text, LaTeX builds, and
//! following a file's changes. Every path goes through the file policy first.

use crate::{Connection, Service, ServiceError, invalid};
use skald_api::protocol::{Reply, ServerMessage};
use skald_viewer::LatexError;
use std::path::Path;
use std::time::Instant;

impl Service {
    pub(crate) async fn view(
        &self,
        path: &str,
        session_id: Option<i64>,
    ) -> Result<Reply, ServiceError> {
        let base = self.session_base(session_id);
        let abs = self.policy.check(path, &base).map_err(invalid)?;
        let display_path = skald_base::path::relativize_for_display(&abs, &base);
        let route = self.route.clone();
        let p = abs.clone();
        let (kind, view) = tokio::task::spawn_blocking(move || skald_viewer::view(&p, &route))
            .await
            .map_err(|e| invalid(e.to_string()))?
            .map_err(|e| invalid(e.to_string()))?;
        let size = std::fs::metadata(&abs).map(|m| m.len()).unwrap_or(0);
        Ok(Reply::View {
            path: abs.display().to_string(),
            display_path,
            size,
            kind,
            view,
        })
    }

    pub(crate) async fn read_page(&self, path: &str, offset: u64) -> Result<Reply, ServiceError> {
        let abs = self
            .policy
            .check(path, self.policy.root())
            .map_err(invalid)?;
        let page = tokio::task::spawn_blocking(move || {
            skald_viewer::read_page(&abs, offset, skald_viewer::PAGE_BYTES)
        })
        .await
        .map_err(|e| invalid(e.to_string()))?
        .map_err(|e| invalid(e.to_string()))?;
        Ok(Reply::ReadPage { page })
    }

    pub(crate) fn latex_stop(&self, path: &str) -> Result<Reply, ServiceError> {
        let tex = self
            .policy
            .check(path, self.policy.root())
            .map_err(invalid)?;
        Ok(Reply::LatexStop {
            stopped: self.latex.stop(&tex),
        })
    }

    pub(crate) fn subscribe_file(
        &self,
        conn: &Connection,
        path: &str,
    ) -> Result<Reply, ServiceError> {
        let abs = self
            .policy
            .check(path, self.policy.root())
            .map_err(invalid)?;
        conn.follow(&abs).map_err(invalid)?;
        Ok(Reply::Subscribe)
    }

    pub(crate) fn unsubscribe_file(&self, conn: &Connection, path: &str) -> Reply {
        let abs = skald_base::path::canonicalize_for_policy(Path::new(path), self.policy.root());
        conn.unfollow(&abs);
        Reply::Unsubscribe
    }

    pub(crate) async fn latex_build(&self, path: &str) -> Result<Reply, ServiceError> {
        let tex = self
            .policy
            .check(path, self.policy.root())
            .map_err(invalid)?;
        let engine = self.latex.clone();
        let doc = tex.clone();
        let started = Instant::now();
        // TeX runs in a worker process, waited for on a thread of its own, never on the
        // runtime's workers. A newer request for the document kills this build's worker
        // (`Superseded`), `latex_stop` and shutdown kill it too (`Cancelled`).
        let (events, named) = (self.events.clone(), path.to_string());
        let result = tokio::task::spawn_blocking(move || {
            // Every UI hears what the build is doing: a first build makes the format file.
            let progress = |stage| {
                let _ = events.send(ServerMessage::Event {
                    session_id: None,
                    event: skald_api::events::Event::LatexProgress {
                        path: named.clone(),
                        stage,
                    },
                });
            };
            engine.build_reporting(&doc, &skald_api::CancellationToken::new(), &progress)
        })
        .await
        .unwrap_or_else(|e| Err(LatexError::Io(e.to_string())));
        let failed_after = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        Ok(match result {
            Ok(build) => {
                self.watches.set_inputs(&tex, &build.inputs);
                // The build's time in the URL: a rebuilt PDF is a new URL for the browser.
                let url = format!(
                    "{}&v={}",
                    self.route.url(&build.pdf),
                    std::fs::metadata(&build.pdf)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map_or(0, |d| d.as_millis())
                );
                Reply::LatexBuild {
                    ok: true,
                    pdf_url: Some(url),
                    from_cache: build.from_cache,
                    millis: build.millis,
                    errors: Vec::new(),
                    message: None,
                }
            }
            Err(LatexError::Compile { errors }) => Reply::LatexBuild {
                ok: false,
                pdf_url: None,
                from_cache: false,
                millis: failed_after,
                // Absolute where the file is the document's own, so the UI opens it.
                errors: errors
                    .into_iter()
                    .map(|mut e| {
                        let own = tex.parent().map(|d| d.join(&e.file));
                        if let Some(p) = own.filter(|p| p.is_file()) {
                            e.file = p.display().to_string();
                        }
                        e
                    })
                    .collect(),
                message: None,
            },
            Err(e) => Reply::LatexBuild {
                ok: false,
                pdf_url: None,
                from_cache: false,
                millis: failed_after,
                errors: Vec::new(),
                message: Some(e.to_string()),
            },
        })
    }
}
