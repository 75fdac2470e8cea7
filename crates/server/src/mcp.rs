//! The MCP server: the configured tools, `ask_database` and the schema as resources, over stdio and streamable HTTP.

use std::sync::Arc;

/// The `/mcp` route, when the MCP server is built in.
pub(crate) fn router(
    _shared: Arc<crate::state::Shared>,
) -> Option<axum::Router<Arc<crate::state::Shared>>> {
    None
}
