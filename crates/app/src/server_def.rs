//! The `server:` section of `steward.yaml`: who may call `steward serve` (API tokens, OIDC bearer tokens),
//! the names it answers to, CORS and the server's limits.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How `steward serve` admits callers and what it allows them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerDef {
    /// The address to listen on (`--bind` wins; default 127.0.0.1:8080).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bind: Option<String>,
    /// The names the server is reached by, as the `Host` header gives them: host names or addresses, each
    /// optionally with a port (`steward.example.com`, `10.0.0.5:8080`, `[::1]`); an entry without a port
    /// matches any port. `localhost`, `127.0.0.1`, `[::1]` and the address the server listens on are always
    /// accepted. A request for any other name gets 421 (against DNS rebinding: a page on another site whose
    /// name was made to point at this machine). Unset, a server listening on all interfaces (`0.0.0.0`, `::`)
    /// with credentials configured accepts any name; one without credentials only the names above.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// API tokens, stored as their SHA-256 (`steward serve token NAME` makes one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tokens: Vec<TokenDef>,
    /// OIDC / JWT bearer tokens, verified against a JWKS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oidc: Option<OidcDef>,
    /// Origins allowed to call the API from a browser besides the server's own (CORS is off when empty); a
    /// request whose `Origin` is neither gets 403.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cors: Vec<String>,
    /// The reverse proxies in front of the server: IP addresses and CIDR ranges (`10.0.0.7`, `10.0.0.0/8`,
    /// `fd00::/8`). A request whose TCP peer is one of them is taken to come from the address its
    /// `X-Forwarded-For` (the right-most entry that is not itself a listed proxy) or, without that header,
    /// its `Forwarded: for=` names; the failed sign-in limit and the logs use that address. From any other
    /// peer those headers are ignored. Empty (the default): the peer is the client.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trusted_proxies: Vec<String>,
    /// Request, rate and run limits.
    #[serde(default)]
    pub limits: ServerLimits,
}

/// One API token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenDef {
    /// A name for the token (shown in logs, never the token).
    pub name: String,
    /// The token's SHA-256, in hex.
    pub sha256: String,
    /// The principal the token acts as, by name from `principals`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
    /// The role, when the token has no principal (a principal brings its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
}

/// OIDC / JWT bearer tokens.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OidcDef {
    /// The JWKS: a file path or an `https://` (or `http://`) URL.
    pub jwks: String,
    /// The required `iss` claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// The required `aud` claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<String>,
    /// The claim whose value picks a configured principal from `principals` (with its role and attributes;
    /// the token's `claims` on top). A value that names none is a principal of that name with the token's
    /// role. Unset (the default), no token is ever mapped to a configured principal: a token is its own
    /// principal, named by its `sub` (`oidc:SUB` when that is also the name of a configured principal or
    /// starts with `token:` or `oidc:`), with its role from `role_claim` or `role` and attributes only from
    /// `claims` — never those of a configured principal that happens to share its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal_claim: Option<String>,
    /// The claim that names the role (a name from `roles`); without it, the role of the configured principal
    /// that `principal_claim` picked, else `role`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role_claim: Option<String>,
    /// The role of a token whose claims name none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Claims copied into the principal's attributes (for row filters' `{principal.NAME}`), claim → attribute.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub claims: BTreeMap<String, String>,
}

/// The server's limits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerLimits {
    /// The largest request body, in bytes.
    #[serde(default = "default_body_bytes")]
    pub body_bytes: usize,
    /// Requests per minute for each principal.
    #[serde(default = "default_requests_per_minute")]
    pub requests_per_minute: u32,
    /// Runs in flight at once on this server.
    #[serde(default = "default_concurrent_runs")]
    pub concurrent_runs: usize,
    /// Most seconds one run may take.
    #[serde(default = "default_run_seconds")]
    pub run_seconds: u64,
    /// Seconds a turn in flight is leased to its server without renewal (renewed every third of it); a turn
    /// whose server stopped is marked failed once its lease ran out.
    #[serde(default = "default_lease_seconds")]
    pub lease_seconds: u64,
    /// Hours a call may wait for a person's approval: past them, the server denies it as expired (nobody
    /// decided it) and its run goes on, the model told so. Unset: a call waits until someone decides it (or
    /// `steward approvals expire` denies it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_hours: Option<u32>,
}

impl Default for ServerLimits {
    fn default() -> Self {
        Self {
            body_bytes: default_body_bytes(),
            requests_per_minute: default_requests_per_minute(),
            concurrent_runs: default_concurrent_runs(),
            run_seconds: default_run_seconds(),
            lease_seconds: default_lease_seconds(),
            approval_hours: None,
        }
    }
}

fn default_body_bytes() -> usize {
    1024 * 1024
}

fn default_requests_per_minute() -> u32 {
    600
}

fn default_concurrent_runs() -> usize {
    2048
}

fn default_run_seconds() -> u64 {
    600
}

fn default_lease_seconds() -> u64 {
    30
}
