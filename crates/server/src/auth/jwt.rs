//! OIDC / JWT bearer tokens verified against a JWKS.
