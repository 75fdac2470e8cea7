//! The errors of steward-sql: what kind of failure it was (for callers that act on it), one line that says
//! what to do (for people and models), and the driver's error it came from, when there was one.

use std::fmt;

/// What kind of failure a [`SqlError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SqlErrorKind {
    /// The URL is not one Steward can use.
    BadUrl,
    /// The database could not be reached or opened.
    Connect,
    /// The guard refused the statement.
    Refused,
    /// The database rejected the statement: syntax, unknown names, permissions, a write in a read-only
    /// transaction.
    Query,
    /// The database rejected a value: numeric overflow, out of range, an invalid byte sequence, a bad date.
    Invalid,
    /// The database could not be used: the connection was lost, the server is shutting down or out of
    /// resources, no connection came free in time.
    Unavailable,
    /// The row cap, byte cap or time limit asked for is out of range.
    Limits,
    /// The statement ran longer than its time limit.
    Timeout,
    /// A write broke a unique or foreign-key constraint.
    Constraint,
    /// Reading the catalog failed.
    Catalog,
}

/// What can go wrong with a database: a [`kind`](SqlError::kind), a one-line [`message`](SqlError::message)
/// with no secrets (already enriched for the model where the engine rejected a statement), and the driver's
/// error as its [`source`](std::error::Error::source) when one caused it.
#[derive(Debug)]
pub struct SqlError {
    kind: SqlErrorKind,
    message: String,
    timeout_ms: u64,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl SqlError {
    /// An error of `kind` that says `message`.
    pub fn new(kind: SqlErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            timeout_ms: 0,
            source: None,
        }
    }

    /// The same error, caused by `source` (the driver's error).
    #[must_use]
    pub fn caused_by(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }

    /// The URL is not one Steward can use.
    pub fn bad_url(message: impl Into<String>) -> Self {
        Self::new(SqlErrorKind::BadUrl, message)
    }

    /// The database could not be reached or opened.
    pub fn connect(message: impl Into<String>) -> Self {
        Self::new(SqlErrorKind::Connect, message)
    }

    /// The guard refused the statement, for the reason given.
    pub fn refused(why: impl Into<String>) -> Self {
        Self::new(SqlErrorKind::Refused, why)
    }

    /// The database rejected the statement.
    pub fn query(message: impl Into<String>) -> Self {
        Self::new(SqlErrorKind::Query, message)
    }

    /// The database rejected a value.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(SqlErrorKind::Invalid, message)
    }

    /// The database could not be used.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(SqlErrorKind::Unavailable, message)
    }

    /// A limit asked for is out of range.
    pub fn limits(message: impl Into<String>) -> Self {
        Self::new(SqlErrorKind::Limits, message)
    }

    /// The statement was stopped after its time limit of `ms` milliseconds.
    pub fn timeout(ms: u64) -> Self {
        Self {
            timeout_ms: ms,
            ..Self::new(
                SqlErrorKind::Timeout,
                format!(
                    "the query was stopped after {ms} ms (time limit); make it cheaper, e.g. filter earlier or \
                     aggregate"
                ),
            )
        }
    }

    /// A write broke a constraint.
    pub fn constraint(message: impl Into<String>) -> Self {
        Self::new(SqlErrorKind::Constraint, message)
    }

    /// Reading the catalog failed.
    pub fn catalog(message: impl Into<String>) -> Self {
        Self::new(SqlErrorKind::Catalog, message)
    }

    /// The same error saying `message` instead (the kind and the cause stay).
    #[must_use]
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
    }

    /// What kind of failure it is.
    pub fn kind(&self) -> SqlErrorKind {
        self.kind
    }

    /// The message without the kind's prefix (`refused: `, `the database is unavailable: `, …).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The time limit that stopped the statement, for [`SqlErrorKind::Timeout`].
    pub fn timeout_ms(&self) -> Option<u64> {
        (self.kind == SqlErrorKind::Timeout).then_some(self.timeout_ms)
    }

    /// True for an error of `kind`.
    pub fn is(&self, kind: SqlErrorKind) -> bool {
        self.kind == kind
    }
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            SqlErrorKind::Refused => write!(f, "refused: {}", self.message),
            SqlErrorKind::Unavailable => write!(f, "the database is unavailable: {}", self.message),
            SqlErrorKind::Catalog => write!(f, "could not read the schema: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for SqlError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn an_error_keeps_its_kind_message_and_cause() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset by peer");
        let e = SqlError::unavailable("the connection was lost").caused_by(io);
        assert_eq!(e.kind(), SqlErrorKind::Unavailable);
        assert_eq!(e.message(), "the connection was lost");
        assert_eq!(
            e.to_string(),
            "the database is unavailable: the connection was lost"
        );
        assert_eq!(
            e.source().map(ToString::to_string).as_deref(),
            Some("reset by peer")
        );
        let t = SqlError::timeout(300);
        assert_eq!(t.timeout_ms(), Some(300));
        assert!(
            t.to_string()
                .starts_with("the query was stopped after 300 ms")
        );
        assert_eq!(SqlError::query("x").timeout_ms(), None);
        assert_eq!(SqlError::refused("no").to_string(), "refused: no");
    }
}
