//! What the file viewer shows, as data: the kinds of file it tells apart, a page of text,
//! a LaTeX error, and the view of a file. `skald-viewer` produces these; the protocol
//! carries them to the UI.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    Markdown,
    Code {
        language: String,
    },
    Text,
    Image {
        mime: String,
    },
    Svg {
        mime: String,
    },
    Pdf {
        mime: String,
    },
    Html,
    Latex,
    /// Nothing to preview.
    Binary,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Page {
    /// Where the page starts and how many bytes it covers.
    pub offset: u64,
    pub len: u64,
    /// The file's size.
    pub total: u64,
    pub text: String,
    /// Where the next page starts, if there is more.
    pub next_offset: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct TexError {
    pub file: String,
    pub line: Option<u32>,
    pub message: String,
}

impl std::fmt::Display for TexError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// What the viewer shows for a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "view", rename_all = "snake_case")]
pub enum View {
    /// Sanitised HTML of a Markdown file.
    Markdown { html: String },
    /// The first page of a text or code file (`language` for the highlighter).
    Text {
        language: Option<String>,
        page: Page,
    },
    /// Shown by the UI from the file route: images, SVG (as an image), PDF.
    Media { mime: String, url: String },
    /// An HTML document for a sandboxed iframe, with its source.
    Html {
        url: String,
        sandbox: String,
        csp: String,
        source: Page,
    },
    /// LaTeX source; the compiled PDF comes from the LaTeX engine.
    Latex { source: Page },
    /// Nothing to preview.
    None { reason: String },
}
