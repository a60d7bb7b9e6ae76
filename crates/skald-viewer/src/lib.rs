//! The file viewer's engine (docs/viewer.md, "Kinds"): what kind a file is and how it is
//! shown safely. The desktop app and `skald serve` draw what this produces; `skald view`
//! prints it.
//!
//! - Markdown is rendered with `pulldown-cmark` and sanitised with `ammonia`; relative links
//!   and images point at the viewer's policy-checked file route.
//! - Text and code are read in pages, so a 2 GB log is never read whole.
//! - HTML is never rendered in the app's own origin: the UI puts it in a sandboxed iframe
//!   (`sandbox="allow-scripts"`, no same-origin) under a CSP that blocks the network.
//! - SVG is shown as an image (an `<img>` never runs its scripts), never inlined.

mod kind;
pub mod latex;
mod markdown;
mod text;
mod watch;

pub use kind::{Kind, detect};
pub use latex::{Build, BundleChoice, LatexEngine, LatexError, TexError, WorkerCommand};
pub use markdown::{FileRoute, render_markdown};
pub use text::{PAGE_BYTES, Page, read_page};
pub use watch::{FileWatcher, WatchError};

use std::path::Path;

/// The sandbox attribute the UI's iframe for an HTML preview must carry: scripts may run,
/// but never with the app's origin, forms, popups or top navigation.
pub const HTML_SANDBOX: &str = "allow-scripts";

/// The Content-Security-Policy an HTML preview is served with: nothing is fetched from the
/// network; the document's own inline styles, scripts and images (data:) work.
pub const HTML_CSP: &str = "default-src 'none'; script-src 'unsafe-inline'; \
     style-src 'unsafe-inline'; img-src data: blob:; font-src data:; media-src data: blob:; \
     connect-src 'none'; frame-src 'none'; form-action 'none'; base-uri 'none'";

/// Files larger than this are not rendered (Markdown, HTML); text is paged instead.
pub const RENDER_LIMIT: u64 = 8 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is {size} bytes, too large to render (the limit is {limit}); view it as text")]
    TooLarge { path: String, size: u64, limit: u64 },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ViewError + '_ {
    move |source| ViewError::Io {
        path: path.display().to_string(),
        source,
    }
}

pub use skald_api::view::View;

/// The view of `path` (relative paths in Markdown resolved against its folder; the file
/// route built with `route`).
pub fn view(path: &Path, route: &FileRoute) -> Result<(Kind, View), ViewError> {
    let meta = std::fs::metadata(path).map_err(io_err(path))?;
    let kind = detect(path)?;
    let page = |p: &Path| read_page(p, 0, text::PAGE_BYTES);
    let v = match &kind {
        Kind::Markdown => {
            if meta.len() > RENDER_LIMIT {
                return Err(ViewError::TooLarge {
                    path: path.display().to_string(),
                    size: meta.len(),
                    limit: RENDER_LIMIT,
                });
            }
            let src = std::fs::read(path).map_err(io_err(path))?;
            let dir = path.parent().unwrap_or(Path::new(""));
            View::Markdown {
                html: render_markdown(&String::from_utf8_lossy(&src), dir, route),
            }
        }
        Kind::Code { language } => View::Text {
            language: Some(language.clone()),
            page: page(path)?,
        },
        Kind::Text => View::Text {
            language: None,
            page: page(path)?,
        },
        Kind::Image { mime } | Kind::Svg { mime } | Kind::Pdf { mime } => View::Media {
            mime: mime.clone(),
            url: route.url(path),
        },
        Kind::Html => View::Html {
            url: route.url(path),
            sandbox: HTML_SANDBOX.into(),
            csp: HTML_CSP.into(),
            source: page(path)?,
        },
        Kind::Latex => View::Latex {
            source: page(path)?,
        },
        Kind::Binary => View::None {
            reason: "a binary file Skald has no preview for".into(),
        },
    };
    Ok((kind, v))
}
