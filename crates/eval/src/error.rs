//! The errors of steward-eval.

use std::path::{Path, PathBuf};

/// What can go wrong while loading a data set, reading predictions or writing verdicts. Scoring itself
/// does not fail: a query that fails is part of the [`Verdict`](crate::Verdict).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file was read but its content is not what its format asks for.
    #[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// The line (1-based), when known.
        line: Option<u64>,
        /// What is wrong, naming the item or field.
        message: String,
    },
    /// The data set's format could not be told from its path or content, or is not one of ours.
    #[error("{0}")]
    Format(String),
    /// No database could be found for a question (a missing file, a name without a URL).
    #[error("{0}")]
    Database(String),
    /// A database could not be opened.
    #[error("cannot open the database for `{db}`: {source}")]
    Connect {
        /// The question's database id.
        db: String,
        /// The driver's reason.
        #[source]
        source: steward_sql::SqlError,
    },
    /// The guard benchmark could not set up its databases: a server that cannot be reached, a role that may
    /// not create databases, fixtures that failed.
    #[error("{0}")]
    Setup(String),
}

impl EvalError {
    /// An I/O error on `path`.
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_owned(),
            source,
        }
    }

    /// Malformed content in `path`, at `line` when known.
    pub(crate) fn malformed(path: &Path, line: Option<u64>, message: impl Into<String>) -> Self {
        Self::Malformed {
            path: path.to_owned(),
            line,
            message: message.into(),
        }
    }
}
