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

/// What a LaTeX build is doing, as its worker reports it: a first build makes the format
/// file (seconds, once per bundle), then XeTeX passes, BibTeX, and the PDF.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "stage", rename_all = "snake_case")]
pub enum LatexStage {
    /// Making the LaTeX format file from the bundle (the first build only).
    Format,
    /// XeTeX's pass `pass` (1-based) over the document.
    Tex { pass: u32 },
    /// BibTeX on the bibliography the document names.
    Bibtex,
    /// xdvipdfmx writing the PDF.
    Pdf,
}

impl LatexStage {
    /// What the build is doing, for a person.
    pub fn describe(&self) -> String {
        match self {
            LatexStage::Format => {
                "making the LaTeX format file (the first build with this bundle; it takes a while)"
                    .to_string()
            }
            LatexStage::Tex { pass } => format!("running XeTeX (pass {pass})"),
            LatexStage::Bibtex => "running BibTeX".to_string(),
            LatexStage::Pdf => "writing the PDF".to_string(),
        }
    }
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
