//! OIDC / JWT bearer tokens verified against a JWKS.
//! (Placeholder until the verifier lands: every token is refused.)

use steward_app::{Config, OidcDef};
use steward_core::Principal;

/// Why a token was refused.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The token is not valid.
    #[error("invalid bearer token: {0}")]
    Invalid(String),
}

impl AuthError {
    /// The HTTP status: 401 or 403.
    pub fn status(&self) -> u16 {
        401
    }
}

/// Verifies bearer tokens.
pub struct JwtVerifier;

impl JwtVerifier {
    /// Loads the JWKS.
    pub async fn load(_oidc: &OidcDef, _config: &Config) -> Result<Self, AuthError> {
        Ok(Self)
    }

    /// Verifies a token.
    pub async fn verify(&self, _token: &str) -> Result<Principal, AuthError> {
        Err(AuthError::Invalid("not supported yet".into()))
    }
}
