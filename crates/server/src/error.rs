//! What can stop a server from starting or serving.

/// An error building a [`Server`](crate::Server) or serving with it (the API's answers are not errors of this
/// kind: a request that fails is answered with a status and `{"error": …}`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// The config's `server:` section cannot be used (tokens, OIDC, hosts); the message names the place and
    /// what to write instead.
    #[error("{0}")]
    Config(String),
    /// The app cannot be served as it is (the default principal does not resolve).
    #[error(transparent)]
    App(#[from] steward_app::AppError),
    /// The app has no run store, which a server needs: conversations, approvals and runs are kept there.
    #[error("a server needs a run store: build its app with one (AppOptions::store)")]
    NoStore,
    /// Listening or serving failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The MCP session over standard input and output could not start or stopped with an error.
    #[error("{0}")]
    Mcp(String),
}
