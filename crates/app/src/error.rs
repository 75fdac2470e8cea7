//! What can go wrong assembling Steward.

use steward_sql::SqlErrorKind;

/// An error building the app, an agent or a tool.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AppError {
    /// The configuration is wrong; the message names the place.
    #[error("{0}")]
    Config(String),
    /// No tool has that name.
    #[error("there is no tool named `{name}`{}", suggest(suggestion))]
    UnknownTool {
        /// The name asked for.
        name: String,
        /// The closest existing name.
        suggestion: Option<String>,
    },
    /// No agent has that name.
    #[error("there is no agent named `{name}`; the agents are: {known}")]
    UnknownAgent {
        /// The name asked for.
        name: String,
        /// The agents there are.
        known: String,
    },
    /// A tool needs something the app does not have.
    #[error("the tool `{name}` needs {needs}")]
    ToolNeeds {
        /// The tool.
        name: String,
        /// What it needs.
        needs: &'static str,
    },
    /// A configured database could not be reached (the URL is well formed; the server did not answer or
    /// refused the connection); the message names the place.
    #[error("{0}")]
    Unreachable(String),
    /// A tool needs a database and there is none.
    #[error(
        "no database: run `steward demo` to create the demo database, or pass --db URL, or configure `databases` in steward.yaml"
    )]
    NoDatabase,
    /// A database could not be used.
    #[error(transparent)]
    Sql(#[from] steward_sql::SqlError),
    /// A model could not be set up.
    #[error(transparent)]
    Model(#[from] steward_llm::Error),
    /// A tool or agent could not be put together.
    #[error(transparent)]
    Core(#[from] steward_core::Error),
    /// A declarative tool is wrong.
    #[error("{0}")]
    Tool(String),
    /// What was asked is not valid (a wrong name, a value out of range); the message says what to give.
    #[error("{0}")]
    Invalid(String),
    /// The principal may not do this; the message says what it may do.
    #[error("{0}")]
    Forbidden(String),
    /// The thing asked for does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The thing asked for is in a state that does not allow it (decided, resumed, taken by someone else).
    #[error("{0}")]
    Conflict(String),
    /// The run store failed.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

/// What kind of failure an [`AppError`] is, for a surface to answer with (an HTTP status, an exit code).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The request or the config is wrong: fix it and try again.
    Invalid,
    /// Not allowed for this principal.
    Forbidden,
    /// No such thing.
    NotFound,
    /// The state does not allow it now.
    Conflict,
    /// Something Steward depends on failed (a database, a model, the store): try again later.
    Unavailable,
}

impl AppError {
    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Config(_)
            | Self::UnknownTool { .. }
            | Self::UnknownAgent { .. }
            | Self::ToolNeeds { .. }
            | Self::NoDatabase
            | Self::Tool(_)
            | Self::Invalid(_) => ErrorKind::Invalid,
            Self::Forbidden(_) => ErrorKind::Forbidden,
            Self::NotFound(_) => ErrorKind::NotFound,
            Self::Conflict(_) => ErrorKind::Conflict,
            Self::Store(
                crate::store::StoreError::NotFound(_) | crate::store::StoreError::NoChangeSet(_),
            ) => ErrorKind::NotFound,
            Self::Sql(e) => match e.kind() {
                SqlErrorKind::Refused => ErrorKind::Forbidden,
                SqlErrorKind::Constraint => ErrorKind::Conflict,
                SqlErrorKind::BadUrl
                | SqlErrorKind::Query
                | SqlErrorKind::Invalid
                | SqlErrorKind::Limits => ErrorKind::Invalid,
                _ => ErrorKind::Unavailable,
            },
            Self::Model(_) | Self::Core(_) | Self::Store(_) | Self::Unreachable(_) => {
                ErrorKind::Unavailable
            }
        }
    }

    /// Whether a database could not be reached (as opposed to a config that is wrong): `config check
    /// --offline` then checks the file alone.
    pub fn is_unreachable(&self) -> bool {
        match self {
            Self::Unreachable(_) => true,
            Self::Sql(e) => matches!(e.kind(), SqlErrorKind::Connect | SqlErrorKind::Unavailable),
            _ => false,
        }
    }
}

fn suggest(suggestion: &Option<String>) -> String {
    suggestion
        .as_ref()
        .map(|s| format!("; did you mean `{s}`?"))
        .unwrap_or_default()
}

/// The closest of `names` to `name`, when it is close enough to be a typo.
pub fn closest<'a>(name: &str, names: impl Iterator<Item = &'a str>) -> Option<String> {
    names
        .map(|n| (strsim::damerau_levenshtein(name, n), n))
        .filter(|(d, n)| *d <= 2.max(n.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n.to_owned())
}
