//! The web UI: static files built into the binary.

/// The UI's routes.
pub(crate) fn router<S: Clone + Send + Sync + 'static>() -> axum::Router<S> {
    axum::Router::new()
}
