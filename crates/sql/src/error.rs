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
    /// The database reported an error running a statement (already enriched for the model).
    #[error("{0}")]
    Query(String),
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
