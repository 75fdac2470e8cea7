//! The errors of steward-sql.

/// What can go wrong with a database.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SqlError {
    /// The URL is not one Steward can use.
    #[error("{0}")]
    BadUrl(String),
    /// The database could not be reached or opened (one line, no secrets).
    #[error("{0}")]
    Connect(String),
    /// The guard refused the statement.
    #[error("refused: {0}")]
    Refused(String),
    /// The database rejected the statement: syntax, unknown names, permissions, a write in a read-only
    /// transaction (already enriched for the model).
    #[error("{0}")]
    Query(String),
    /// The database rejected a value: numeric overflow, out of range, an invalid byte sequence, a bad date.
    #[error("{0}")]
    Invalid(String),
    /// The database could not be used: the connection was lost, the server is shutting down or out of
    /// resources, no connection came free in time.
    #[error("the database is unavailable: {0}")]
    Unavailable(String),
    /// The row cap, byte cap or time limit asked for is out of range.
    #[error("{0}")]
    Limits(String),
    /// The statement ran longer than its time limit.
    #[error(
        "the query was stopped after {0} ms (time limit); make it cheaper, e.g. filter earlier or aggregate"
    )]
    Timeout(u64),
    /// A write broke a unique or foreign-key constraint.
    #[error("{0}")]
    Constraint(String),
    /// Reading the catalog failed.
    #[error("could not read the schema: {0}")]
    Catalog(String),
}
