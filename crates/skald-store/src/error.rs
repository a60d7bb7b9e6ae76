use std::path::PathBuf;

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the database {path}: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("cannot create {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("cannot migrate the database: {0}")]
    Migration(String),
    #[error(
        "the database is at schema version {found}, newer than this Skald knows ({known}); \
         run a newer Skald or point --data-dir elsewhere"
    )]
    TooNew { found: usize, known: usize },
    #[error("the database failed its integrity check: {0}")]
    Corrupt(String),
    #[error("tool call {id} is already final ({status}); its outcome cannot change")]
    AlreadyFinal { id: String, status: String },
    #[error("{what} {id} does not exist")]
    NotFound { what: &'static str, id: String },
    #[error("stored value is invalid: {0}")]
    Invalid(String),
}
