//! Who is calling: API tokens from the config (stored hashed) and OIDC bearer tokens ([`jwt`]), mapped to a
//! principal and role.

pub mod jwt;

use steward_core::Principal;

/// The authenticated caller of a request: axum handlers and the MCP server find it in the request's
/// extensions.
#[derive(Clone, Debug)]
pub struct Caller {
    /// Who it is, with role and attributes (row filters read them).
    pub principal: Principal,
    /// Whether the caller's role administers the server (`admin: true`).
    pub admin: bool,
}
