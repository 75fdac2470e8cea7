//! The errors of steward-llm.

use steward_core::ModelError;

/// What can go wrong when choosing and setting up a model (calls themselves fail with [`ModelError`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No model was configured; the text says how to configure one.
    #[error("{0}")]
    NoModel(String),
    /// A model spec that cannot be read.
    #[error("invalid model `{spec}`: {reason}")]
    BadSpec {
        /// The spec as given.
        spec: String,
        /// What is wrong and what would be right.
        reason: String,
    },
    /// A setting the chosen model needs is missing.
    #[error("model `{spec}` needs {what}")]
    Missing {
        /// The spec.
        spec: String,
        /// The variable or flag to set.
        what: String,
    },
    /// A recording could not be written or read.
    #[error("{0}")]
    Recording(String),
    /// The provider could not be set up.
    #[error(transparent)]
    Model(#[from] ModelError),
}
