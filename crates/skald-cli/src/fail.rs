//! Why a subcommand stopped: printed once by its group's `dispatch`, with the exit code that
//! says whose mistake it was, so the steps below it only return errors and never print them.

use crate::exit;
use std::fmt;

#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Fail {
    code: u8,
    message: String,
    /// Printed as it is, without the `skald <group>: ` prefix (a message that already carries
    /// its own context, or hint lines).
    bare: bool,
}

impl Fail {
    fn new(code: u8, message: impl fmt::Display) -> Fail {
        Fail {
            code,
            message: message.to_string(),
            bare: false,
        }
    }

    /// The invocation cannot work as given.
    pub fn usage(message: impl fmt::Display) -> Fail {
        Fail::new(exit::USAGE, message)
    }

    /// Skald could not do its part.
    pub fn failed(message: impl fmt::Display) -> Fail {
        Fail::new(exit::FAILED, message)
    }

    /// Denied by the approval rules, or needing approval that was not given.
    pub fn rejected(message: impl fmt::Display) -> Fail {
        Fail::new(exit::REJECTED, message)
    }

    /// Any other code, for the few commands whose failures have their own.
    pub fn with_code(code: u8, message: impl fmt::Display) -> Fail {
        Fail::new(code, message)
    }

    /// The same failure, printed without the group prefix.
    pub fn bare(mut self) -> Fail {
        self.bare = true;
        self
    }

    pub fn code(&self) -> u8 {
        self.code
    }

    /// Prints the failure on stderr, once, as `<prefix>: <message>` (or bare), and gives its
    /// exit code.
    pub fn report(&self, prefix: &str) -> u8 {
        // A message may carry a tool's, a provider's or an MCP server's words: their
        // lines are kept, their terminal controls escaped.
        let message = skald_api::escape_controls(&self.message);
        if self.bare {
            eprintln!("{message}");
        } else {
            eprintln!("{prefix}: {message}");
        }
        self.code()
    }
}

impl From<skald_service::ServiceError> for Fail {
    fn from(e: skald_service::ServiceError) -> Fail {
        Fail::new(exit::of(&e), e)
    }
}

/// The exit code of a subcommand's result, its failure printed once under `prefix`.
pub fn finish(prefix: &str, result: Result<u8, Fail>) -> u8 {
    match result {
        Ok(code) => code,
        Err(e) => e.report(prefix),
    }
}
