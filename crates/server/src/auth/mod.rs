//! Who is calling: API tokens from the config (stored as their SHA-256) and OIDC bearer tokens ([`jwt`]),
//! each mapped to a principal and role. Without any configured, a server bound to a loopback address lets
//! every caller act as the config's default principal (the machine's own user); any other address refuses to
//! start without them.

mod claims;
pub mod jwt;

use sha2::{Digest, Sha256};
use steward_app::{Config, resolve_principal};
use steward_core::Principal;

use crate::ServerError;

/// The authenticated caller of a request: axum handlers and the MCP server find it in the request's
/// extensions.
#[derive(Clone, Debug)]
pub struct Caller {
    /// Who it is, with role and attributes (row filters read them).
    pub principal: Principal,
    /// Whether the caller's role administers the server (`admin: true`).
    pub admin: bool,
}

/// A refused request: 401 (who are you?) or 403 (not allowed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// 401 or 403.
    pub status: u16,
    /// What to do about it.
    pub message: String,
}

/// How callers are admitted.
pub struct Auth {
    tokens: Vec<([u8; 32], Caller)>,
    jwt: Option<jwt::JwtVerifier>,
    /// Who callers are when no credentials are configured (loopback only).
    open: Option<Caller>,
}

/// The SHA-256 of an API token, in hex, as `server.tokens[].sha256` holds it.
pub fn token_hash(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<[u8; 32]> {
    let text = text.trim();
    if text.len() != 64 || !text.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// Whether `principal`'s role administers the server; the machine's own user without a role does.
pub fn is_admin(config: &Config, principal: &Principal) -> bool {
    match &principal.role {
        Some(role) => config.roles.get(role).is_some_and(|r| r.admin),
        None => principal.name.is_empty(),
    }
}

impl Auth {
    /// Reads the config's `server.tokens` and `server.oidc` (and checks `server.hosts` and
    /// `server.trusted_proxies`, so that `steward config check` reports a malformed entry). `loopback` says
    /// whether the server listens only on a loopback address: without credentials configured it must.
    pub async fn from_config(config: &Config, loopback: bool) -> Result<Self, ServerError> {
        crate::guardrails::configured_hosts(config)?;
        crate::guardrails::proxies::configured_proxies(config)?;
        let server = config.server.clone().unwrap_or_default();
        let mut tokens = Vec::new();
        for (i, def) in server.tokens.iter().enumerate() {
            let at = config.locate(&["server", "tokens"]);
            let Some(hash) = unhex(&def.sha256) else {
                return Err(ServerError::Config(format!(
                    "{at}: token {} (`{}`): `sha256` must be 64 hex digits, the SHA-256 of the token \
                     (`steward serve token {}` makes a token and prints its hash)",
                    i + 1,
                    def.name,
                    def.name
                )));
            };
            let principal = match (&def.principal, &def.role) {
                (Some(name), _) => resolve_principal(config, Some(name), def.role.as_deref())
                    .map_err(|e| ServerError::Config(format!("{at}: token `{}`: {e}", def.name)))?,
                (None, Some(role)) => {
                    if !config.roles.contains_key(role) {
                        return Err(ServerError::Config(format!(
                            "{at}: token `{}`: there is no role named `{role}` in `roles`",
                            def.name
                        )));
                    }
                    // Its own namespace: a token named like an OIDC subject is not that person.
                    let mut p = Principal::named(format!("token:{}", def.name));
                    p.role = Some(role.clone());
                    p
                }
                (None, None) => {
                    return Err(ServerError::Config(format!(
                        "{at}: token `{}` needs a `principal` (from `principals`) or a `role`",
                        def.name
                    )));
                }
            };
            let admin = is_admin(config, &principal);
            tokens.push((hash, Caller { principal, admin }));
        }
        let jwt = match &server.oidc {
            Some(oidc) => Some(jwt::JwtVerifier::load(oidc, config).await.map_err(|e| {
                ServerError::Config(format!("{}: {e}", config.locate(&["server", "oidc"])))
            })?),
            None => None,
        };
        let open = if tokens.is_empty() && jwt.is_none() {
            if !loopback {
                return Err(ServerError::Config(
                    "listening beyond this machine needs authentication: add API tokens (`steward serve token NAME`) \
                     or `oidc` under `server:` in steward.yaml, or bind 127.0.0.1"
                        .to_owned(),
                ));
            }
            let principal = resolve_principal(config, None, None)?;
            let admin = is_admin(config, &principal);
            Some(Caller { principal, admin })
        } else {
            None
        };
        Ok(Self { tokens, jwt, open })
    }

    /// Whether callers must present credentials.
    pub fn required(&self) -> bool {
        self.open.is_none()
    }

    /// The caller of a request with this `Authorization` header (or `None`), or why it is refused.
    pub async fn authenticate(
        &self,
        header: Option<&str>,
        config: &Config,
    ) -> Result<Caller, Refusal> {
        let unauthorized = |message: &str| Refusal {
            status: 401,
            message: message.to_owned(),
        };
        let Some(header) = header else {
            return match &self.open {
                Some(caller) => Ok(caller.clone()),
                None => Err(unauthorized(
                    "sign in: send `Authorization: Bearer TOKEN` (an API token or an OIDC token)",
                )),
            };
        };
        let Some(token) = header
            .strip_prefix("Bearer ")
            .or_else(|| header.strip_prefix("bearer "))
            .map(str::trim)
            .filter(|t| !t.is_empty())
        else {
            return Err(unauthorized(
                "the Authorization header must be `Bearer TOKEN`",
            ));
        };
        if let Some(caller) = &self.open {
            // No credentials configured: a token is not needed and not checked.
            return Ok(caller.clone());
        }
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        // Every entry is compared in full, so the time taken says nothing about which bytes matched.
        let mut found = None;
        for (hash, caller) in &self.tokens {
            let same = hash
                .iter()
                .zip(digest.iter())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0;
            if same {
                found = Some(caller.clone());
            }
        }
        if let Some(caller) = found {
            return Ok(caller);
        }
        match &self.jwt {
            Some(verifier) if token.matches('.').count() == 2 => {
                match verifier.verify(token).await {
                    Ok(principal) => {
                        let admin = is_admin(config, &principal);
                        Ok(Caller { principal, admin })
                    }
                    Err(e) => Err(Refusal {
                        status: e.status(),
                        message: e.to_string(),
                    }),
                }
            }
            _ => Err(unauthorized("the token is not valid")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_round_trip_through_hex() {
        let hash = token_hash("secret");
        assert_eq!(hash.len(), 64);
        assert_eq!(unhex(&hash).map(|h| hex(&h)), Some(hash));
        assert_eq!(unhex("zz"), None);
    }
}
