//! Skald's language-server client (docs/lsp.md): which server speaks for a language
//! (`languages`), one running server spoken to over stdio with async-lsp's client main
//! loop (`server`), and the servers of this process kept per folder, started on demand,
//! stopped when idle and started again after a crash (`pool`). The tools that use them —
//! `diagnostics`, `go_to_definition`, `find_references`, and the diagnostics an edit's
//! result carries — are in skald-tools; lsp-types and async-lsp are used only here.

mod framing;
pub mod languages;
pub mod pool;
pub mod server;
pub mod text;

pub use languages::{LANGUAGES, Language, language_of};
pub use lsp_types::{Diagnostic, DiagnosticSeverity, Location, NumberOrString, Position};
pub use pool::{Launch, Pool, pool};
pub use server::Server;

/// Why a language server could not answer, in words the model and the person can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LspError {
    #[error(
        "no language server for {language} was found on PATH ({tried}); install one ({install}) \
         or name it in config.toml [lsp.{language}] command"
    )]
    NotFound {
        language: &'static str,
        tried: String,
        install: &'static str,
    },
    #[error("the {language} language server ({program}) could not start: {reason}")]
    Start {
        language: &'static str,
        program: String,
        reason: String,
    },
    #[error("the {language} language server stopped: {reason}")]
    Stopped {
        language: &'static str,
        reason: String,
    },
    #[error("the {language} language server did not answer within {secs} s")]
    TimedOut { language: &'static str, secs: u64 },
    #[error("the {language} language server refused: {message}")]
    Refused {
        language: &'static str,
        message: String,
    },
    #[error("{0}")]
    Path(String),
}

#[cfg(test)]
mod pyright_tests;
