//! OIDC bearer tokens: signed with the test-only keys of `tests/keys/` and verified by
//! [`steward_server::auth::jwt::JwtVerifier`] against a JWKS file or a JWKS served over HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use steward_app::config::Source;
use steward_app::{Config, OidcDef, PrincipalDef, RoleDef};
use steward_server::auth::jwt::{AuthError, JwtVerifier};

const ISSUER: &str = "https://login.example.test/";
const AUDIENCE: &str = "steward";

fn keys_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/keys")
}

fn read_key(name: &str) -> Vec<u8> {
    std::fs::read(keys_dir().join(name)).unwrap()
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A config as if read from `tests/keys/steward.yaml`: roles `support` and `viewer`, principal `alice`.
fn config() -> Config {
    let mut config = Config::default();
    config.roles.insert("support".into(), RoleDef::default());
    config.roles.insert("viewer".into(), RoleDef::default());
    config.principals.insert(
        "alice".into(),
        PrincipalDef {
            role: "viewer".into(),
            attributes: BTreeMap::from([
                ("region".into(), json!("eu")),
                ("customer_id".into(), json!(1)),
            ]),
        },
    );
    config.source = Some(Source {
        path: keys_dir().join("steward.yaml"),
        text: String::new(),
    });
    config
}

fn oidc(jwks: &str) -> OidcDef {
    OidcDef {
        jwks: jwks.into(),
        issuer: Some(ISSUER.into()),
        audience: Some(AUDIENCE.into()),
        principal_claim: None,
        role_claim: Some("steward_role".into()),
        role: None,
        claims: BTreeMap::from([("customer_id".into(), "customer_id".into())]),
    }
}

/// The JWKS file, named relative to the config's directory.
async fn verifier() -> JwtVerifier {
    JwtVerifier::load(&oidc("jwks.json"), &config())
        .await
        .unwrap()
}

/// Standard claims for `sub`, valid for an hour.
fn claims(sub: &str) -> Value {
    json!({
        "sub": sub,
        "iss": ISSUER,
        "aud": AUDIENCE,
        "iat": now(),
        "exp": now() + 3600,
    })
}

fn with(mut claims: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        if v.is_null() {
            claims.as_object_mut().unwrap().remove(k);
        } else {
            claims[k] = v.clone();
        }
    }
    claims
}

fn sign(alg: Algorithm, pem: &str, kid: Option<&str>, claims: &Value) -> String {
    let key = match alg {
        Algorithm::ES256 => EncodingKey::from_ec_pem(&read_key(pem)).unwrap(),
        _ => EncodingKey::from_rsa_pem(&read_key(pem)).unwrap(),
    };
    let mut header = Header::new(alg);
    header.kid = kid.map(str::to_owned);
    jsonwebtoken::encode(&header, claims, &key).unwrap()
}

fn rsa(claims: &Value) -> String {
    sign(Algorithm::RS256, "rsa.pem", Some("rsa-test"), claims)
}

/// Verifies, expecting a refusal with `status`; returns the message, after checking it does not contain the
/// token.
async fn refused(verifier: &JwtVerifier, token: &str, status: u16) -> String {
    let error = match verifier.verify(token).await {
        Ok(p) => panic!("accepted a token that should be refused, as {p:?}"),
        Err(e) => e,
    };
    let message = error.to_string();
    assert_eq!(error.status(), status, "{message}");
    assert!(
        token.is_empty() || !message.contains(token),
        "the error echoes the token: {message}"
    );
    for part in token.split('.').filter(|p| p.len() > 8) {
        assert!(
            !message.contains(part),
            "the error echoes part of the token: {message}"
        );
    }
    message
}

/// The server shares one verifier between requests (axum needs `Send` futures).
#[test]
fn the_verifier_and_its_futures_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>(_: &T) {}
    send_sync::<JwtVerifier>();
    send_sync::<AuthError>();
    let config = config();
    let oidc = oidc("jwks.json");
    let load = JwtVerifier::load(&oidc, &config);
    send(&load);
    let verifier = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(load)
        .unwrap();
    send(&verifier.verify("a.b.c"));
}

#[tokio::test]
async fn rs256_token_maps_claims_to_a_principal() {
    let verifier = verifier().await;
    let token = rsa(&with(
        claims("carol"),
        json!({"steward_role": "support", "customer_id": 42}),
    ));
    let principal = verifier.verify(&token).await.unwrap();
    assert_eq!(principal.name, "carol");
    assert_eq!(principal.role.as_deref(), Some("support"));
    assert_eq!(
        principal.attributes,
        BTreeMap::from([("customer_id".to_owned(), json!(42))])
    );
    // `Bearer` already stripped, but stray spaces are tolerated.
    assert!(verifier.verify(&format!(" {token} ")).await.is_ok());
}

#[tokio::test]
async fn es256_token_is_accepted() {
    let verifier = verifier().await;
    let token = sign(
        Algorithm::ES256,
        "ec.pem",
        Some("ec-test"),
        &with(
            claims("dave"),
            json!({"steward_role": "viewer", "customer_id": "C-7"}),
        ),
    );
    let principal = verifier.verify(&token).await.unwrap();
    assert_eq!(principal.name, "dave");
    assert_eq!(principal.role.as_deref(), Some("viewer"));
    assert_eq!(principal.attributes["customer_id"], json!("C-7"));
}

#[tokio::test]
async fn a_sub_named_like_a_configured_principal_is_not_that_principal_without_principal_claim() {
    // No `principal_claim`: a token whose `sub` is `alice` is its own principal, not the configured alice.
    let verifier = verifier().await;
    // Without a role claim or a fallback role it has no role at all (alice's `viewer` is not lent to it).
    let message = refused(&verifier, &rsa(&claims("alice")), 403).await;
    assert!(message.contains("no role"), "{message}");
    assert!(message.contains("principal_claim"), "{message}");
    // With a role claim: that role, and only the token's own attributes, under a name that is not alice's.
    let principal = verifier
        .verify(&rsa(&with(
            claims("alice"),
            json!({"steward_role": "support", "customer_id": 99}),
        )))
        .await
        .unwrap();
    assert_eq!(principal.name, "oidc:alice");
    assert_eq!(principal.role.as_deref(), Some("support"));
    assert_eq!(
        principal.attributes,
        BTreeMap::from([("customer_id".to_owned(), json!(99))])
    );
    // With a fallback role: that role, not alice's, and none of her attributes.
    let mut fallback = oidc("jwks.json");
    fallback.role = Some("support".into());
    let verifier = JwtVerifier::load(&fallback, &config()).await.unwrap();
    let principal = verifier.verify(&rsa(&claims("alice"))).await.unwrap();
    assert_eq!(principal.name, "oidc:alice");
    assert_eq!(principal.role.as_deref(), Some("support"));
    assert!(principal.attributes.is_empty(), "{principal:?}");
    // Subjects that look like an API token's principal or such a name are kept apart too.
    let principal = verifier
        .verify(&rsa(&claims("token:reporting")))
        .await
        .unwrap();
    assert_eq!(principal.name, "oidc:token:reporting");
    let principal = verifier.verify(&rsa(&claims("bob"))).await.unwrap();
    assert_eq!(principal.name, "bob");
}

#[tokio::test]
async fn with_principal_claim_a_configured_principal_brings_its_role_and_attributes_under_the_claims()
 {
    let mut mapped = oidc("jwks.json");
    mapped.principal_claim = Some("sub".into());
    let verifier = JwtVerifier::load(&mapped, &config()).await.unwrap();
    // No role claim: alice's role from `principals`; her attributes, with the token's customer_id on top.
    let principal = verifier
        .verify(&rsa(&with(claims("alice"), json!({"customer_id": 99}))))
        .await
        .unwrap();
    assert_eq!(principal.name, "alice");
    assert_eq!(principal.role.as_deref(), Some("viewer"));
    assert_eq!(principal.attributes["region"], json!("eu"));
    assert_eq!(principal.attributes["customer_id"], json!(99));
    // The role claim wins over the principal's role.
    let principal = verifier
        .verify(&rsa(&with(
            claims("alice"),
            json!({"steward_role": "support"}),
        )))
        .await
        .unwrap();
    assert_eq!(principal.role.as_deref(), Some("support"));
    assert_eq!(principal.attributes["customer_id"], json!(1));
}

#[tokio::test]
async fn principal_claim_and_fallback_role_are_configurable() {
    let mut oidc = oidc("jwks.json");
    oidc.principal_claim = Some("email".into());
    oidc.role = Some("viewer".into());
    let verifier = JwtVerifier::load(&oidc, &config()).await.unwrap();
    let principal = verifier
        .verify(&rsa(&with(
            claims("ignored"),
            json!({"email": "erin@example.test"}),
        )))
        .await
        .unwrap();
    assert_eq!(principal.name, "erin@example.test");
    assert_eq!(principal.role.as_deref(), Some("viewer"));
    let message = refused(&verifier, &rsa(&claims("frank")), 401).await;
    assert!(message.contains("`email`"), "{message}");
}

#[tokio::test]
async fn expired_and_not_yet_valid_tokens_are_401() {
    let verifier = verifier().await;
    let expired = rsa(&with(
        claims("carol"),
        json!({"steward_role": "support", "exp": now() - 3600}),
    ));
    let message = refused(&verifier, &expired, 401).await;
    assert!(message.contains("expired"), "{message}");
    let no_exp = rsa(&with(
        claims("carol"),
        json!({"steward_role": "support", "exp": null}),
    ));
    let message = refused(&verifier, &no_exp, 401).await;
    assert!(message.contains("`exp`"), "{message}");
    let early = rsa(&with(
        claims("carol"),
        json!({"steward_role": "support", "nbf": now() + 3600}),
    ));
    let message = refused(&verifier, &early, 401).await;
    assert!(message.contains("nbf"), "{message}");
    // Within the 60 s of clock skew.
    let skewed = rsa(&with(
        claims("carol"),
        json!({"steward_role": "support", "exp": now() - 20, "nbf": now() + 20}),
    ));
    assert!(verifier.verify(&skewed).await.is_ok());
}

#[tokio::test]
async fn wrong_or_missing_issuer_and_audience_are_401() {
    let verifier = verifier().await;
    let base = with(claims("carol"), json!({"steward_role": "support"}));
    let message = refused(
        &verifier,
        &rsa(&with(base.clone(), json!({"iss": "https://evil.test/"}))),
        401,
    )
    .await;
    assert!(message.contains("issuer"), "{message}");
    refused(
        &verifier,
        &rsa(&with(base.clone(), json!({"iss": null}))),
        401,
    )
    .await;
    let message = refused(
        &verifier,
        &rsa(&with(base.clone(), json!({"aud": "another-app"}))),
        401,
    )
    .await;
    assert!(message.contains("audience"), "{message}");
    refused(
        &verifier,
        &rsa(&with(base.clone(), json!({"aud": null}))),
        401,
    )
    .await;
    // A list of audiences that includes ours is fine.
    let listed = rsa(&with(base, json!({"aud": ["another-app", AUDIENCE]})));
    assert!(verifier.verify(&listed).await.is_ok());
}

#[tokio::test]
async fn without_configured_issuer_and_audience_any_are_accepted() {
    let mut oidc = oidc("jwks.json");
    oidc.issuer = None;
    oidc.audience = None;
    let verifier = JwtVerifier::load(&oidc, &config()).await.unwrap();
    let token = rsa(&with(
        claims("carol"),
        json!({"steward_role": "support", "iss": "https://other.test/", "aud": "x"}),
    ));
    assert!(verifier.verify(&token).await.is_ok());
}

#[tokio::test]
async fn a_signature_by_another_key_is_401() {
    let verifier = verifier().await;
    let token = sign(
        Algorithm::RS256,
        "rotated.pem",
        Some("rsa-test"),
        &with(claims("carol"), json!({"steward_role": "support"})),
    );
    let message = refused(&verifier, &token, 401).await;
    assert!(message.contains("signature"), "{message}");
}

#[tokio::test]
async fn a_tampered_payload_is_401() {
    let verifier = verifier().await;
    let genuine = rsa(&with(claims("carol"), json!({"steward_role": "viewer"})));
    let other = rsa(&with(claims("mallory"), json!({"steward_role": "support"})));
    let [header, _, signature] = genuine.split('.').collect::<Vec<_>>()[..] else {
        panic!("not a JWT")
    };
    let payload = other.split('.').nth(1).unwrap();
    let tampered = format!("{header}.{payload}.{signature}");
    let message = refused(&verifier, &tampered, 401).await;
    assert!(message.contains("signature"), "{message}");
    refused(&verifier, "not-a-jwt", 401).await;
    refused(&verifier, "", 401).await;
}

#[tokio::test]
async fn alg_none_and_hmac_tokens_are_401() {
    let verifier = verifier().await;
    let genuine = rsa(&with(claims("carol"), json!({"steward_role": "support"})));
    let payload = genuine.split('.').nth(1).unwrap();
    // {"alg":"none","typ":"JWT","kid":"rsa-test"}
    let none_header = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIiwia2lkIjoicnNhLXRlc3QifQ";
    refused(&verifier, &format!("{none_header}.{payload}."), 401).await;
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some("rsa-test".into());
    let hmac = jsonwebtoken::encode(
        &header,
        &with(claims("carol"), json!({"steward_role": "support"})),
        &EncodingKey::from_secret(b"a shared secret"),
    )
    .unwrap();
    let message = refused(&verifier, &hmac, 401).await;
    assert!(message.contains("HS256"), "{message}");
}

#[tokio::test]
async fn an_alg_that_does_not_suit_the_key_is_401() {
    let verifier = verifier().await;
    // An EC signature under the RSA key's kid.
    let token = sign(
        Algorithm::ES256,
        "ec.pem",
        Some("rsa-test"),
        &with(claims("carol"), json!({"steward_role": "support"})),
    );
    let message = refused(&verifier, &token, 401).await;
    assert!(message.contains("ES256"), "{message}");
}

#[tokio::test]
async fn unknown_or_missing_kid_is_401() {
    let verifier = verifier().await;
    let body = with(claims("carol"), json!({"steward_role": "support"}));
    let message = refused(
        &verifier,
        &sign(Algorithm::RS256, "rsa.pem", Some("nope"), &body),
        401,
    )
    .await;
    assert!(message.contains("`nope`"), "{message}");
    // No kid, two keys: which one is unknown.
    let message = refused(
        &verifier,
        &sign(Algorithm::RS256, "rsa.pem", None, &body),
        401,
    )
    .await;
    assert!(message.contains("no key"), "{message}");
}

#[tokio::test]
async fn no_kid_with_a_single_key_set_uses_that_key() {
    let mut jwks: Value =
        serde_json::from_slice(&std::fs::read(keys_dir().join("jwks.json")).unwrap()).unwrap();
    jwks["keys"]
        .as_array_mut()
        .unwrap()
        .retain(|k| k["kid"] == "rsa-test");
    let path = std::env::temp_dir().join(format!("steward-jwt-single-{}.json", std::process::id()));
    std::fs::write(&path, jwks.to_string()).unwrap();
    let loaded = JwtVerifier::load(&oidc(path.to_str().unwrap()), &config()).await;
    std::fs::remove_file(&path).unwrap();
    let verifier = loaded.unwrap();
    let body = with(claims("carol"), json!({"steward_role": "support"}));
    assert!(
        verifier
            .verify(&sign(Algorithm::RS256, "rsa.pem", None, &body))
            .await
            .is_ok()
    );
    // Still checked against that key.
    refused(
        &verifier,
        &sign(Algorithm::RS256, "rotated.pem", None, &body),
        401,
    )
    .await;
}

#[tokio::test]
async fn a_valid_token_without_a_known_role_is_403() {
    let verifier = verifier().await;
    // No role claim, not a configured principal, no fallback role.
    let message = refused(&verifier, &rsa(&claims("zoe")), 403).await;
    assert!(message.contains("no role"), "{message}");
    let message = refused(
        &verifier,
        &rsa(&with(claims("zoe"), json!({"steward_role": "admin"}))),
        403,
    )
    .await;
    assert!(message.contains("`admin`"), "{message}");
    assert!(message.contains("support, viewer"), "{message}");
    // A fallback role that the config does not define is refused too.
    let mut oidc = oidc("jwks.json");
    oidc.role = Some("ghost".into());
    let verifier = JwtVerifier::load(&oidc, &config()).await.unwrap();
    let message = refused(&verifier, &rsa(&claims("zoe")), 403).await;
    assert!(message.contains("`ghost`"), "{message}");
}

#[tokio::test]
async fn a_single_role_in_a_list_is_accepted_several_are_not() {
    let verifier = verifier().await;
    let principal = verifier
        .verify(&rsa(&with(
            claims("zoe"),
            json!({"steward_role": ["support"]}),
        )))
        .await
        .unwrap();
    assert_eq!(principal.role.as_deref(), Some("support"));
    refused(
        &verifier,
        &rsa(&with(
            claims("zoe"),
            json!({"steward_role": ["support", "viewer"]}),
        )),
        403,
    )
    .await;
}

#[tokio::test]
async fn a_missing_or_invalid_jwks_file_is_a_clear_load_error() {
    let error = JwtVerifier::load(&oidc("missing.json"), &config())
        .await
        .unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, AuthError::Jwks { .. }), "{message}");
    assert!(
        message.contains(&keys_dir().join("missing.json").display().to_string()),
        "{message}"
    );
    assert!(message.contains("server.oidc.jwks"), "{message}");
    // A PEM is not a JWKS.
    let message = JwtVerifier::load(&oidc("ec.pem"), &config())
        .await
        .unwrap_err()
        .to_string();
    assert!(message.contains("not JSON"), "{message}");
}

/// A tiny HTTP server answering every request with the current body; counts the requests.
struct JwksServer {
    url: String,
    body: Arc<Mutex<(u16, String)>>,
    hits: Arc<AtomicUsize>,
}

impl JwksServer {
    fn start(body: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!(
            "http://{}/.well-known/jwks.json",
            listener.local_addr().unwrap()
        );
        let body = Arc::new(Mutex::new((200, body)));
        let hits = Arc::new(AtomicUsize::new(0));
        let (shared, counter) = (Arc::clone(&body), Arc::clone(&hits));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                counter.fetch_add(1, Ordering::SeqCst);
                let (status, body) = shared.lock().unwrap().clone();
                let response = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                     connection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes());
            }
        });
        Self { url, body, hits }
    }

    fn set(&self, status: u16, body: String) {
        *self.body.lock().unwrap() = (status, body);
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

fn jwks_text(name: &str) -> String {
    std::fs::read_to_string(keys_dir().join(name)).unwrap()
}

#[tokio::test]
async fn jwks_over_http_and_key_rotation() {
    let server = JwksServer::start(jwks_text("jwks.json"));
    let verifier = JwtVerifier::load(&oidc(&server.url), &config())
        .await
        .unwrap()
        .with_refetch_interval(Duration::from_secs(1));
    assert_eq!(server.hits(), 1);
    let body = with(claims("carol"), json!({"steward_role": "support"}));
    let es = sign(Algorithm::ES256, "ec.pem", Some("ec-test"), &body);
    assert!(verifier.verify(&es).await.is_ok());
    assert_eq!(server.hits(), 1, "a known kid needs no fetch");

    // The provider rotates in a new key.
    server.set(200, jwks_text("jwks-rotated.json"));
    let rotated = sign(Algorithm::RS256, "rotated.pem", Some("rsa-rotated"), &body);
    // Too soon after the last fetch: not fetched again.
    let message = refused(&verifier, &rotated, 401).await;
    assert!(message.contains("`rsa-rotated`"), "{message}");
    assert_eq!(server.hits(), 1);

    tokio::time::sleep(Duration::from_millis(1100)).await;
    let principal = verifier.verify(&rotated).await.unwrap();
    assert_eq!(principal.name, "carol");
    assert_eq!(server.hits(), 2);
    assert!(verifier.verify(&rotated).await.is_ok());
    assert_eq!(server.hits(), 2);

    // Unknown kids cannot make the server hammer the provider.
    for kid in ["x1", "x2", "x3"] {
        refused(
            &verifier,
            &sign(Algorithm::RS256, "rsa.pem", Some(kid), &body),
            401,
        )
        .await;
    }
    assert_eq!(server.hits(), 2);

    // A failed refetch keeps the keys it had and says why the new kid is unknown.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    server.set(500, "oops".into());
    let message = refused(
        &verifier,
        &sign(Algorithm::RS256, "rsa.pem", Some("x4"), &body),
        401,
    )
    .await;
    assert!(message.contains("HTTP 500"), "{message}");
    assert_eq!(server.hits(), 3);
    assert!(verifier.verify(&es).await.is_ok());
}

#[tokio::test]
async fn the_default_refetch_interval_is_a_minute() {
    let server = JwksServer::start(jwks_text("jwks.json"));
    let verifier = JwtVerifier::load(&oidc(&server.url), &config())
        .await
        .unwrap();
    server.set(200, jwks_text("jwks-rotated.json"));
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let rotated = sign(
        Algorithm::RS256,
        "rotated.pem",
        Some("rsa-rotated"),
        &with(claims("carol"), json!({"steward_role": "support"})),
    );
    refused(&verifier, &rotated, 401).await;
    assert_eq!(server.hits(), 1);
}

#[tokio::test]
async fn an_unreachable_or_failing_jwks_url_is_a_clear_load_error() {
    let server = JwksServer::start(String::new());
    server.set(404, "not found".into());
    let message = JwtVerifier::load(&oidc(&server.url), &config())
        .await
        .unwrap_err()
        .to_string();
    assert!(message.contains(&server.url), "{message}");
    assert!(message.contains("HTTP 404"), "{message}");
    server.set(
        200,
        "{\"keys\": [{\"kty\": \"oct\", \"k\": \"c2VjcmV0\"}]}".into(),
    );
    let message = JwtVerifier::load(&oidc(&server.url), &config())
        .await
        .unwrap_err()
        .to_string();
    assert!(message.contains("shared secret"), "{message}");
}
