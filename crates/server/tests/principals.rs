//! Which principal an OIDC token is, over real HTTP: only `server.oidc.principal_claim` maps a token to a
//! configured principal (its role, attributes and conversations). Without it, a token whose `sub` is a
//! configured principal's name is its own principal: the role its claims give, never that principal's, and
//! none of that principal's conversations. (The attributes are checked on the verifier in tests/jwt.rs.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use jsonwebtoken::Algorithm;
use serde_json::{Value, json};

fn token(claims: Value) -> String {
    jwt("rsa-test", "rsa.pem", Algorithm::RS256, claims)
}

/// Claims for `sub` without a role claim.
fn roleless(sub: &str) -> Value {
    let mut claims = claims(sub, "");
    claims.as_object_mut().unwrap().remove("role");
    claims
}

/// `/api/me` of `token`: principal, role and the agents it may run.
async fn me(s: &Running, token: &str) -> (u16, Value) {
    s.json("GET", "/api/me", Some(token), None).await
}

/// A conversation ada makes with her API token.
async fn adas_conversation(s: &Running) -> String {
    let (status, created) = s
        .json(
            "POST",
            "/api/conversations",
            Some(ADA),
            Some(json!({"title": "ada's books"})),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    created["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_token_whose_sub_is_a_configured_principal_is_not_that_principal_without_principal_claim()
{
    // ada is configured as a clerk (customer 7) and has an API token.
    let s = start("").await;
    let id = adas_conversation(&s).await;

    // sub `ada`, role claim `viewer`: a viewer of its own, not the clerk ada.
    let viewer = token(claims("ada", "viewer"));
    let (status, body) = me(&s, &viewer).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["role"], "viewer");
    assert_ne!(body["principal"], "ada", "{body}");
    assert_eq!(
        body["agents"],
        json!([{"name": "helper", "description": "Helps with sums.", "starters": []}])
    );
    // None of ada's conversations.
    assert_eq!(
        s.json("GET", "/api/conversations", Some(&viewer), None)
            .await
            .1,
        json!([])
    );
    assert_eq!(
        s.json(
            "GET",
            &format!("/api/conversations/{id}"),
            Some(&viewer),
            None
        )
        .await
        .0,
        404
    );
    let (status, _) = s
        .json(
            "POST",
            &format!("/api/conversations/{id}/messages"),
            Some(&viewer),
            Some(json!({"content": "hi"})),
        )
        .await;
    assert_eq!(status, 404);

    // sub `ada` without a role claim: no role at all (ada's clerk role is not lent to it).
    let (status, body) = me(&s, &token(roleless("ada"))).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("principal_claim"),
        "{body}"
    );
}

#[tokio::test]
async fn with_principal_claim_the_claim_picks_the_configured_principal() {
    let s = start("    principal_claim: sub").await;
    let id = adas_conversation(&s).await;
    // No role claim: ada's role from `principals`, and ada's conversations.
    let ada = token(roleless("ada"));
    let (status, body) = me(&s, &ada).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["principal"], "ada");
    assert_eq!(body["role"], "clerk");
    let (status, mine) = s.json("GET", "/api/conversations", Some(&ada), None).await;
    assert_eq!(status, 200);
    assert_eq!(mine[0]["id"], id.as_str(), "{mine}");
    // A subject that names no configured principal is still its own, with its claim's role.
    let (status, body) = me(&s, &token(claims("carol", "viewer"))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["principal"], "carol");
    assert_eq!(body["role"], "viewer");
}
