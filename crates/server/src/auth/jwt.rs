//! OIDC / JWT bearer tokens verified against a JWKS.
//!
//! ```yaml
//! server:
//!   oidc:
//!     jwks: https://login.example.com/.well-known/jwks.json   # or a file, relative to steward.yaml
//!     issuer: https://login.example.com/
//!     audience: steward
//!     role_claim: steward_role        # else the role of the principal `principal_claim` picked, else `role`
//!     role: viewer
//!     claims: {customer_id: customer_id}
//!     # principal_claim: sub          # only then does a token take a configured principal's role and attributes
//! ```
//!
//! A token is accepted when its signature checks out against a key of the JWKS (chosen by `kid`), it has not
//! expired (`exp` is required; `nbf` is honoured; 60 s of clock skew are allowed) and, when configured, its
//! `iss` and `aud` match. Only public-key algorithms are accepted (RS256/384/512, PS256/384/512, ES256/384,
//! EdDSA): `alg: none` and HMAC tokens are refused, since a JWKS of public keys cannot vouch for them.
//!
//! Which principal a token stands for is decided in `claims.rs`: a configured principal only through an
//! explicit `principal_claim`, else the token's own principal named by its `sub`.
//!
//! A JWKS read from a URL is fetched again when a token names a key it does not have (the identity
//! provider rotated its keys), at most once a minute.

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use steward_app::{Config, OidcDef};
use steward_core::Principal;

use super::claims::ClaimMapping;

/// Clock skew allowed on `exp` and `nbf`, in seconds.
const LEEWAY_SECONDS: u64 = 60;
/// The default least time between two fetches of a JWKS URL.
const DEFAULT_REFETCH_INTERVAL: Duration = Duration::from_secs(60);
/// The largest JWKS accepted, in bytes.
const MAX_JWKS_BYTES: usize = 1024 * 1024;
/// How long fetching a JWKS URL may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(15);

/// Why a bearer token was refused. The messages say what to fix and never contain the token.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The token cannot be trusted: malformed, badly signed, expired, not yet valid, for another issuer or
    /// audience, or signed by a key the JWKS does not have (HTTP 401).
    #[error("bearer token rejected: {0}")]
    Unauthenticated(String),
    /// The token is valid but its caller may not use the server: it names no role, or a role the
    /// configuration does not define (HTTP 403).
    #[error("bearer token accepted, but access is refused: {0}")]
    Forbidden(String),
    /// The JWKS could not be read or holds no usable key (a configuration problem found by
    /// [`JwtVerifier::load`]).
    #[error("the OIDC JWKS {source_name}: {message}")]
    Jwks {
        /// The file or URL, as configured in `server.oidc.jwks`.
        source_name: String,
        /// What went wrong and what to fix.
        message: String,
    },
}

impl AuthError {
    /// The HTTP status for a request refused with this error: 403 for [`AuthError::Forbidden`], else 401.
    pub fn status(&self) -> u16 {
        match self {
            Self::Forbidden(_) => 403,
            Self::Unauthenticated(_) | Self::Jwks { .. } => 401,
        }
    }
}

fn unauthenticated(message: impl Into<String>) -> AuthError {
    AuthError::Unauthenticated(message.into())
}

/// Where the JWKS comes from.
#[derive(Debug)]
enum JwksSource {
    /// A file (read once, at load).
    File(PathBuf),
    /// A URL, fetched at load and again on an unknown `kid`.
    Url {
        url: String,
        client: reqwest::Client,
    },
}

impl JwksSource {
    fn name(&self) -> String {
        match self {
            Self::File(path) => format!("file `{}`", path.display()),
            Self::Url { url, .. } => format!("URL `{url}`"),
        }
    }

    fn error(&self, message: impl Into<String>) -> AuthError {
        AuthError::Jwks {
            source_name: self.name(),
            message: message.into(),
        }
    }

    /// Reads or fetches the set and keeps its usable keys; the error names the file or URL.
    async fn load(&self) -> Result<Keys, AuthError> {
        self.load_keys().await.map_err(|m| self.error(m))
    }

    /// Reads or fetches the set and keeps its usable keys; the error does not name the file or URL.
    async fn load_keys(&self) -> Result<Keys, String> {
        let bytes = match self {
            // Read once, at load (a small file): no need for tokio's `fs`.
            Self::File(path) => std::fs::read(path).map_err(|e| {
                format!(
                    "cannot be read ({e}); fix `server.oidc.jwks` in steward.yaml (a relative path is relative \
                     to the config file's directory) or use the identity provider's https:// JWKS URL"
                )
            })?,
            Self::Url { url, client } => fetch(client, url).await?,
        };
        Keys::parse(&bytes)
    }
}

/// GETs a JWKS URL; the error says what failed.
async fn fetch(client: &reqwest::Client, url: &str) -> Result<Vec<u8>, String> {
    let mut response = client
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| {
            format!(
                "could not be fetched ({}); check the URL in `server.oidc.jwks` and that this host can reach it",
                error_chain(&e)
            )
        })?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!(
            "answered HTTP {status}; check the URL in `server.oidc.jwks` (the identity provider's discovery \
             document names it as `jwks_uri`)"
        ));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("could not be read ({})", error_chain(&e)))?
    {
        if body.len() + chunk.len() > MAX_JWKS_BYTES {
            return Err(format!(
                "is larger than {} KiB; is this really a JWKS?",
                MAX_JWKS_BYTES / 1024
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// An error and its causes, `: `-separated (reqwest's own message hides the interesting part).
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// One public key of the set.
struct Key {
    kid: Option<String>,
    key: DecodingKey,
    /// The algorithms this key may verify.
    algorithms: Vec<Algorithm>,
}

/// The usable keys of one JWKS.
#[derive(Default)]
struct Keys {
    keys: Vec<Key>,
}

impl Keys {
    /// Parses a JWKS, keeping the public signature keys and skipping others (HMAC secrets, encryption keys,
    /// unsupported curves); fails when none is left.
    fn parse(bytes: &[u8]) -> Result<Self, String> {
        let document: Value = serde_json::from_slice(bytes)
            .map_err(|e| format!("is not JSON ({e}); it should be a JWKS: {{\"keys\": [...]}}"))?;
        let Some(entries) = document.get("keys").and_then(Value::as_array) else {
            return Err(
                "has no `keys` array; it should be a JWKS: {\"keys\": [...]} (an OIDC discovery document names \
                 its JWKS as `jwks_uri`)"
                    .to_owned(),
            );
        };
        let mut keys = Vec::new();
        let mut skipped = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            let label = entry.get("kid").and_then(Value::as_str).map_or_else(
                || format!("key #{}", index + 1),
                |kid| format!("key `{kid}`"),
            );
            match serde_json::from_value::<Jwk>(entry.clone())
                .map_err(|e| format!("not a valid JWK ({e})"))
                .and_then(|jwk| Key::from_jwk(&jwk))
            {
                Ok(key) => keys.push(key),
                Err(why) => skipped.push(format!("{label}: {why}")),
            }
        }
        if keys.is_empty() {
            return Err(format!(
                "has no public signature key steward can use (RSA, EC P-256/P-384 or Ed25519){}",
                if skipped.is_empty() {
                    String::new()
                } else {
                    format!("; skipped {}", skipped.join("; "))
                }
            ));
        }
        Ok(Self { keys })
    }

    /// The key for a token's `kid`; without one, the set's only key.
    fn find(&self, kid: Option<&str>) -> Option<&Key> {
        match kid {
            Some(kid) => self.keys.iter().find(|k| k.kid.as_deref() == Some(kid)),
            None if self.keys.len() == 1 => self.keys.first(),
            None => None,
        }
    }
}

impl Key {
    fn from_jwk(jwk: &Jwk) -> Result<Self, String> {
        if matches!(jwk.common.public_key_use, Some(ref u) if *u != PublicKeyUse::Signature) {
            return Err("not a signature key (`use` is not `sig`)".to_owned());
        }
        let family: &[Algorithm] = match &jwk.algorithm {
            AlgorithmParameters::RSA(_) => &[
                Algorithm::RS256,
                Algorithm::RS384,
                Algorithm::RS512,
                Algorithm::PS256,
                Algorithm::PS384,
                Algorithm::PS512,
            ],
            AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
                EllipticCurve::P256 => &[Algorithm::ES256],
                EllipticCurve::P384 => &[Algorithm::ES384],
                _ => return Err("an unsupported elliptic curve (use P-256 or P-384)".to_owned()),
            },
            AlgorithmParameters::OctetKeyPair(okp) => match okp.curve {
                EllipticCurve::Ed25519 => &[Algorithm::EdDSA],
                _ => return Err("an unsupported OKP curve (use Ed25519)".to_owned()),
            },
            AlgorithmParameters::OctetKey(_) => {
                return Err("a shared secret (`kty: oct`): HMAC tokens are not accepted".to_owned());
            }
            _ => return Err("an unsupported key type".to_owned()),
        };
        // A key that names its algorithm verifies only that one.
        let algorithms: Vec<Algorithm> = match jwk.common.key_algorithm {
            None => family.to_vec(),
            Some(named) => {
                let allowed: Vec<Algorithm> = family
                    .iter()
                    .copied()
                    .filter(|a| KeyAlgorithm::from(*a) == named)
                    .collect();
                if allowed.is_empty() {
                    return Err(format!("its `alg` {named} does not suit its key type"));
                }
                allowed
            }
        };
        let key =
            DecodingKey::from_jwk(jwk).map_err(|e| format!("its key material is invalid ({e})"))?;
        Ok(Self {
            kid: jwk.common.key_id.clone(),
            key,
            algorithms,
        })
    }
}

/// Verifies OIDC / JWT bearer tokens against a JWKS and maps their claims to a [`Principal`].
pub struct JwtVerifier {
    source: JwksSource,
    /// The current keys; the lock is only held to swap or clone the `Arc`, never across an `await`.
    keys: RwLock<Arc<Keys>>,
    /// When the JWKS was last fetched. The async lock also makes concurrent refetches wait for one fetch.
    fetched: tokio::sync::Mutex<Instant>,
    refetch_interval: Duration,
    issuer: Option<String>,
    audience: Option<String>,
    /// From claims to a principal.
    mapping: ClaimMapping,
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("jwks", &self.source.name())
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("principal_claim", &self.mapping.principal_claim)
            .field("role_claim", &self.mapping.role_claim)
            .finish_non_exhaustive()
    }
}

impl JwtVerifier {
    /// Reads the JWKS of `oidc` (a file, relative to the directory of `config`'s file, or an `http(s)://`
    /// URL, fetched now) and keeps what `config` says about principals and roles.
    pub async fn load(oidc: &OidcDef, config: &Config) -> Result<JwtVerifier, AuthError> {
        let jwks = oidc.jwks.trim();
        let lower = jwks.to_ascii_lowercase();
        let source = if lower.starts_with("https://") || lower.starts_with("http://") {
            // reqwest is built without a bundled crypto provider; ring is ours (as in steward-llm).
            // Installing twice is harmless.
            let _ = rustls::crypto::ring::default_provider().install_default();
            let client = reqwest::Client::builder()
                .connect_timeout(FETCH_TIMEOUT)
                .timeout(FETCH_TIMEOUT)
                .user_agent(concat!("steward/", env!("CARGO_PKG_VERSION")))
                .build()
                .map_err(|e| AuthError::Jwks {
                    source_name: format!("URL `{jwks}`"),
                    message: format!("could not set up the HTTP client ({})", error_chain(&e)),
                })?;
            JwksSource::Url {
                url: jwks.to_owned(),
                client,
            }
        } else if jwks.is_empty() {
            return Err(AuthError::Jwks {
                source_name: "(empty)".to_owned(),
                message: "`server.oidc.jwks` is empty; set it to the identity provider's JWKS URL or a file"
                    .to_owned(),
            });
        } else {
            let path = Path::new(jwks);
            let base = config
                .source
                .as_ref()
                .and_then(|s| s.path.parent())
                .filter(|_| path.is_relative());
            JwksSource::File(base.map_or_else(|| path.to_path_buf(), |dir| dir.join(path)))
        };
        let keys = source.load().await?;
        Ok(Self {
            source,
            keys: RwLock::new(Arc::new(keys)),
            fetched: tokio::sync::Mutex::new(Instant::now()),
            refetch_interval: DEFAULT_REFETCH_INTERVAL,
            issuer: oidc.issuer.clone(),
            audience: oidc.audience.clone(),
            mapping: ClaimMapping::new(oidc, config),
        })
    }

    /// Sets the least time between two fetches of a JWKS URL (60 s unless set; the fetch of
    /// [`JwtVerifier::load`] counts). Has no effect on a JWKS file.
    pub fn with_refetch_interval(mut self, interval: Duration) -> Self {
        self.refetch_interval = interval;
        self
    }

    /// Checks `token` (without `Bearer `) and returns the principal it stands for, with its role and
    /// attributes.
    pub async fn verify(&self, token: &str) -> Result<Principal, AuthError> {
        let token = token.trim();
        let header = jsonwebtoken::decode_header(token).map_err(|e| {
            unauthenticated(match e.kind() {
                jsonwebtoken::errors::ErrorKind::InvalidToken => {
                    "it is not a JWT (three base64url parts separated by dots)".to_owned()
                }
                _ => format!(
                    "its header is not valid base64url JSON or names an algorithm steward does not accept \
                     ({e}); steward accepts RS256/384/512, PS256/384/512, ES256/384 and EdDSA tokens, never \
                     `alg: none`"
                ),
            })
        })?;
        if header.alg.family() == jsonwebtoken::AlgorithmFamily::Hmac {
            return Err(unauthenticated(format!(
                "it is signed with {:?}, a shared secret, which a JWKS of public keys cannot verify; have the \
                 identity provider sign access tokens with RS256 or ES256",
                header.alg
            )));
        }
        let kid = header.kid.as_deref();
        let keys = self.keys_for(kid).await?;
        let kid_shown = kid.map(shown);
        // The messages do not name the JWKS file or URL: they go to the caller.
        let Some(key) = keys.find(kid) else {
            return Err(unauthenticated(match kid_shown {
                Some(kid) => format!(
                    "it is signed with key `{kid}`, which is not in the server's JWKS (`server.oidc.jwks`)"
                ),
                None => format!(
                    "it names no key (`kid`) and the server's JWKS has {} keys",
                    keys.keys.len()
                ),
            }));
        };
        if !key.algorithms.contains(&header.alg) {
            return Err(unauthenticated(format!(
                "its `alg` {:?} does not match its key{} (which verifies {:?})",
                header.alg,
                key.kid
                    .as_deref()
                    .map(|k| format!(" `{k}`"))
                    .unwrap_or_default(),
                key.algorithms
            )));
        }
        let claims = jsonwebtoken::decode::<Map<String, Value>>(
            token,
            &key.key,
            &self.validation(header.alg),
        )
        .map_err(|e| unauthenticated(self.explain(&e)))?
        .claims;
        self.mapping.principal(&claims)
    }

    /// The keys to find `kid` in: the current ones, or, for a URL whose set lacks `kid`, the set fetched
    /// again if the last fetch is old enough.
    async fn keys_for(&self, kid: Option<&str>) -> Result<Arc<Keys>, AuthError> {
        let current = self.current_keys();
        let (Some(kid), JwksSource::Url { .. }) = (kid, &self.source) else {
            return Ok(current);
        };
        if current.find(Some(kid)).is_some() {
            return Ok(current);
        }
        // One fetch at a time; whoever waited here sees the keys the fetch before it brought.
        let mut fetched = self.fetched.lock().await;
        let current = self.current_keys();
        if current.find(Some(kid)).is_some() || fetched.elapsed() < self.refetch_interval {
            return Ok(current);
        }
        *fetched = Instant::now();
        match self.source.load_keys().await {
            Ok(keys) => {
                let keys = Arc::new(keys);
                *self.keys.write().unwrap_or_else(PoisonError::into_inner) = Arc::clone(&keys);
                Ok(keys)
            }
            Err(e) => Err(unauthenticated(format!(
                "it is signed with key `{}`, which is not in the server's JWKS, and fetching the JWKS \
                 again failed: it {e}",
                shown(kid)
            ))),
        }
    }

    fn current_keys(&self) -> Arc<Keys> {
        Arc::clone(&self.keys.read().unwrap_or_else(PoisonError::into_inner))
    }

    fn validation(&self, alg: Algorithm) -> Validation {
        let mut validation = Validation::new(alg);
        validation.leeway = LEEWAY_SECONDS;
        validation.validate_exp = true;
        validation.validate_nbf = true;
        let mut required = vec!["exp"];
        if let Some(issuer) = &self.issuer {
            validation.set_issuer(&[issuer]);
            required.push("iss");
        }
        match &self.audience {
            Some(audience) => {
                validation.set_audience(&[audience]);
                required.push("aud");
            }
            // No audience configured: any `aud` is accepted.
            None => validation.validate_aud = false,
        }
        validation.set_required_spec_claims(&required);
        validation
    }

    /// What a failed `decode` means for the caller.
    fn explain(&self, error: &jsonwebtoken::errors::Error) -> String {
        use jsonwebtoken::errors::ErrorKind;
        match error.kind() {
            ErrorKind::InvalidSignature => {
                "its signature does not match its key; it was altered or signed by another key"
                    .to_owned()
            }
            ErrorKind::ExpiredSignature => "it has expired (`exp`); get a new token".to_owned(),
            ErrorKind::ImmatureSignature => {
                "it is not valid yet (`nbf` is in the future); check the clocks".to_owned()
            }
            ErrorKind::InvalidIssuer => format!(
                "it was issued by another issuer (`iss`), not `{}`",
                self.issuer.as_deref().unwrap_or_default()
            ),
            ErrorKind::InvalidAudience => format!(
                "it is meant for another audience (`aud`), not `{}`",
                self.audience.as_deref().unwrap_or_default()
            ),
            ErrorKind::MissingRequiredClaim(claim) => {
                format!("it has no `{claim}` claim, which is required")
            }
            ErrorKind::InvalidClaimFormat(claim) => format!("its `{claim}` claim is malformed"),
            ErrorKind::InvalidAlgorithm => "its `alg` does not match its key".to_owned(),
            _ => format!("it could not be verified ({error})"),
        }
    }
}

/// A value from the token (a `kid`) fit for a message: at most 64 characters, control characters escaped.
fn shown(text: &str) -> String {
    let mut shown: String = text.chars().take(64).flat_map(char::escape_debug).collect();
    if text.chars().count() > 64 {
        shown.push('…');
    }
    shown
}
