//! The failed sign-in limit over real HTTP, on every surface that needs credentials (`/api`, `/v1`, `/mcp`):
//! valid credentials are never refused for anyone's failures; credentials that do not verify get 429 with
//! `Retry-After` once their address or the identity they claim has too many failures. Behind a proxy listed in
//! `server.trusted_proxies` (here the test client's own 127.0.0.1), the client is the address the proxy
//! forwarded in `X-Forwarded-For` or `Forwarded`; from any other peer those headers are ignored.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::net::IpAddr;
use std::time::Duration;

use common::*;
use jsonwebtoken::Algorithm;
use serde_json::{Value, json};

/// A client whose requests come from `ip` (a loopback address: 127.0.0.1, 127.0.0.2, ...).
fn from(ip: [u8; 4]) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(IpAddr::from(ip))
        .build()
        .unwrap()
}

fn mcp_initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
           "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})
}

/// The surfaces that need credentials, by name: `/api`, `/v1`, `/mcp`.
const SURFACES: [&str; 3] = ["api", "v1", "mcp"];

/// A request to `surface` from `client` with `authorization` (if any) and `headers`: status, `Retry-After`,
/// body.
async fn on(
    s: &Running,
    client: &reqwest::Client,
    surface: &str,
    authorization: Option<&str>,
    headers: &[(&str, &[u8])],
) -> (u16, Option<String>, String) {
    let mut request = match surface {
        "api" => client.get(format!("{}/api/me", s.base)),
        "v1" => client.get(format!("{}/v1/models", s.base)),
        "mcp" => client
            .post(format!("{}/mcp", s.base))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(mcp_initialize().to_string()),
        other => panic!("{other}"),
    };
    if let Some(authorization) = authorization {
        request = request.header("authorization", authorization);
    }
    for (name, value) in headers {
        request = request.header(
            *name,
            reqwest::header::HeaderValue::from_bytes(value).unwrap(),
        );
    }
    s.send(request).await
}

/// `/api/me` from `client` with `authorization` and `headers`: the status.
async fn me(
    s: &Running,
    client: &reqwest::Client,
    authorization: &str,
    headers: &[(&str, &[u8])],
) -> u16 {
    on(s, client, "api", Some(authorization), headers).await.0
}

/// Asserts a 429 with a `Retry-After` of 1 to `most` seconds whose message names `limit` ("address" or
/// "identity").
fn assert_refused(answer: &(u16, Option<String>, String), most: u64, limit: &str) {
    let (status, retry_after, text) = answer;
    assert_eq!(*status, 429, "{text}");
    let wait: u64 = retry_after
        .as_deref()
        .expect("Retry-After")
        .parse()
        .unwrap();
    assert!((1..=most).contains(&wait), "{wait}");
    assert!(text.contains("failed sign-ins"), "{text}");
    assert!(text.contains(limit), "{text}");
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// An OIDC token for `sub` signed by the key of the test JWKS (valid) or by a key it does not have (forged).
fn oidc(sub: &str, valid: bool) -> String {
    let pem = if valid { "rsa.pem" } else { "rotated.pem" };
    bearer(&jwt(
        "rsa-test",
        pem,
        Algorithm::RS256,
        claims(sub, "clerk"),
    ))
}

#[tokio::test]
async fn valid_credentials_pass_after_many_failures_from_their_address_on_every_surface() {
    // The default limit: 10 a minute.
    let s = start("").await;
    let a = from([127, 0, 0, 1]);
    // Twelve different wrong tokens, spread over the three surfaces: ten are 401, then 429.
    for i in 0..12 {
        let surface = SURFACES[i % 3];
        let answer = on(&s, &a, surface, Some(&bearer(&format!("guess-{i}"))), &[]).await;
        if i < 10 {
            assert_eq!(answer.0, 401, "{surface} {i}: {}", answer.2);
        } else {
            assert_refused(&answer, 60, "address");
        }
    }
    // A wrong token on any surface is 429 now; so is a forged OIDC token (it does not verify).
    for surface in SURFACES {
        assert_refused(
            &on(&s, &a, surface, Some(&bearer("guess-again")), &[]).await,
            60,
            "address",
        );
    }
    assert_refused(
        &on(&s, &a, "api", Some(&oidc("carol", false)), &[]).await,
        60,
        "address",
    );
    // Valid credentials from the same address: an API token and an OIDC token, on every surface.
    for token in [bearer(ADA), bearer(VIC), oidc("carol", true)] {
        for surface in SURFACES {
            let (status, _, text) = on(&s, &a, surface, Some(&token), &[]).await;
            assert_eq!(status, 200, "{surface}: {text}");
        }
    }
    // A request without credentials is no guess: 401, which says how to sign in.
    let (status, retry_after, text) = on(&s, &a, "api", None, &[]).await;
    assert_eq!((status, retry_after), (401, None), "{text}");
    // /v1's 429 is in OpenAI's error shape.
    let (_, _, text) = on(&s, &a, "v1", Some(&bearer("guess")), &[]).await;
    let body: Value = serde_json::from_str(&text).unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("failed sign-ins"),
        "{body}"
    );
}

#[tokio::test]
async fn guesses_at_one_identity_are_limited_across_forwarded_addresses() {
    let s = serve(config("  trusted_proxies: [127.0.0.1]"), |server| {
        server.with_failed_sign_in_limit(4, Duration::from_secs(60))
    })
    .await;
    let proxy = from([127, 0, 0, 1]);
    let via = |i: u8| format!("198.51.100.{i}");
    // Four forged tokens for carol, each from another client behind the proxy.
    for i in 1..=4u8 {
        let xff = via(i);
        let status = me(
            &s,
            &proxy,
            &oidc("carol", false),
            &[("x-forwarded-for", xff.as_bytes())],
        )
        .await;
        assert_eq!(status, 401, "{i}");
    }
    // Carol's identity is past its limit, from a client that never failed, on every surface.
    for (i, surface) in SURFACES.iter().enumerate() {
        let xff = via(50 + i as u8);
        let answer = on(
            &s,
            &proxy,
            surface,
            Some(&oidc("carol", false)),
            &[("x-forwarded-for", xff.as_bytes())],
        )
        .await;
        assert_refused(&answer, 60, "identity");
    }
    // Another identity is not, nor are carol's valid tokens, from any client.
    let xff = via(60);
    assert_eq!(
        me(
            &s,
            &proxy,
            &oidc("dave", false),
            &[("x-forwarded-for", xff.as_bytes())]
        )
        .await,
        401
    );
    for i in [1u8, 61] {
        let xff = via(i);
        for surface in SURFACES {
            let (status, _, text) = on(
                &s,
                &proxy,
                surface,
                Some(&oidc("carol", true)),
                &[("x-forwarded-for", xff.as_bytes())],
            )
            .await;
            assert_eq!(status, 200, "{surface} from {xff}: {text}");
        }
    }
    // A credential that names nobody is its own identity: the same wrong API token from four clients.
    for i in 70..74u8 {
        let xff = via(i);
        let status = me(
            &s,
            &proxy,
            "Bearer stale-token",
            &[("x-forwarded-for", xff.as_bytes())],
        )
        .await;
        assert_eq!(status, 401, "{i}");
    }
    let xff = via(80);
    assert_refused(
        &on(
            &s,
            &proxy,
            "api",
            Some("Bearer stale-token"),
            &[("x-forwarded-for", xff.as_bytes())],
        )
        .await,
        60,
        "identity",
    );
    assert_eq!(
        me(
            &s,
            &proxy,
            "Bearer another-token",
            &[("x-forwarded-for", xff.as_bytes())]
        )
        .await,
        401
    );
    assert_eq!(
        me(
            &s,
            &proxy,
            &bearer(ADA),
            &[("x-forwarded-for", xff.as_bytes())]
        )
        .await,
        200
    );
}

#[tokio::test]
async fn clients_behind_a_trusted_proxy_are_counted_apart() {
    let s = serve(
        config("  trusted_proxies: [127.0.0.0/30, 10.0.0.0/8]"),
        |server| server.with_failed_sign_in_limit(3, Duration::from_secs(60)),
    )
    .await;
    let proxy = from([127, 0, 0, 1]);
    let guess = |i: u32| bearer(&format!("guess-{i}"));
    // Client 198.51.100.1 (by X-Forwarded-For) fails three times: it is refused.
    for i in 0..3 {
        assert_eq!(
            me(
                &s,
                &proxy,
                &guess(i),
                &[("x-forwarded-for", b"198.51.100.1")]
            )
            .await,
            401
        );
    }
    let refused = on(
        &s,
        &proxy,
        "api",
        Some(&guess(3)),
        &[("x-forwarded-for", b"198.51.100.1")],
    )
    .await;
    assert_refused(&refused, 60, "address");
    // Writing another address on the left does not help it: the right-most entry that is not a trusted
    // proxy is the client, and a second trusted proxy (10.0.0.9) in the chain is skipped.
    for xff in [
        &b"203.0.113.77, 198.51.100.1"[..],
        b"203.0.113.77, 198.51.100.1, 10.0.0.9",
    ] {
        assert_refused(
            &on(
                &s,
                &proxy,
                "api",
                Some(&guess(4)),
                &[("x-forwarded-for", xff)],
            )
            .await,
            60,
            "address",
        );
    }
    // The same client named by RFC 7239's Forwarded is refused too.
    assert_refused(
        &on(
            &s,
            &proxy,
            "api",
            Some(&guess(5)),
            &[("forwarded", b"for=198.51.100.1;proto=https")],
        )
        .await,
        60,
        "address",
    );
    // Another client behind the same proxy is not, nor is the proxy itself, nor a valid token of the first.
    assert_eq!(
        me(
            &s,
            &proxy,
            &guess(6),
            &[("x-forwarded-for", b"198.51.100.2")]
        )
        .await,
        401
    );
    assert_eq!(
        me(
            &s,
            &proxy,
            &guess(7),
            &[("forwarded", b"for=\"198.51.100.3:4711\"")]
        )
        .await,
        401
    );
    assert_eq!(me(&s, &proxy, &guess(8), &[]).await, 401);
    assert_eq!(
        me(
            &s,
            &proxy,
            &bearer(ADA),
            &[("x-forwarded-for", b"198.51.100.1")]
        )
        .await,
        200
    );
    // A second proxy address of the listed range (127.0.0.2) is believed as well.
    let other_proxy = from([127, 0, 0, 2]);
    assert_refused(
        &on(
            &s,
            &other_proxy,
            "v1",
            Some(&guess(9)),
            &[("x-forwarded-for", b"198.51.100.1")],
        )
        .await,
        60,
        "address",
    );
}

#[tokio::test]
async fn forwarding_headers_from_an_untrusted_peer_are_ignored() {
    // The only trusted proxy is elsewhere: the test's loopback clients are not it.
    let s = serve(config("  trusted_proxies: [192.0.2.10]"), |server| {
        server.with_failed_sign_in_limit(3, Duration::from_secs(60))
    })
    .await;
    let (a, b) = (from([127, 0, 0, 1]), from([127, 0, 0, 2]));
    // 127.0.0.1 claims to be someone else each time: it is counted as itself all the same.
    let spoofs: [(&str, &[u8]); 4] = [
        ("x-forwarded-for", b"198.51.100.1"),
        ("forwarded", b"for=198.51.100.2"),
        ("x-forwarded-for", b"198.51.100.3, 198.51.100.4"),
        ("forwarded", b"for=\"[2001:db8::1]:80\""),
    ];
    for (i, spoof) in spoofs.iter().take(3).enumerate() {
        assert_eq!(
            me(&s, &a, &bearer(&format!("guess-{i}")), &[*spoof]).await,
            401
        );
    }
    assert_refused(
        &on(&s, &a, "api", Some(&bearer("guess-3")), &[spoofs[3]]).await,
        60,
        "address",
    );
    assert_refused(
        &on(&s, &a, "mcp", Some(&bearer("guess-4")), &[]).await,
        60,
        "address",
    );
    // Nor can a peer frame another address: 127.0.0.2 naming 127.0.0.1 is still 127.0.0.2, not refused.
    assert_eq!(
        me(
            &s,
            &b,
            &bearer("guess-5"),
            &[("x-forwarded-for", b"127.0.0.1")]
        )
        .await,
        401
    );
    assert_eq!(
        me(
            &s,
            &b,
            &bearer("guess-6"),
            &[("forwarded", b"for=127.0.0.1")]
        )
        .await,
        401
    );
    // Three failures of 127.0.0.2 naming 127.0.0.3 do not count against 127.0.0.3.
    assert_eq!(
        me(
            &s,
            &b,
            &bearer("guess-7"),
            &[("x-forwarded-for", b"127.0.0.3")]
        )
        .await,
        401
    );
    let c = from([127, 0, 0, 3]);
    assert_eq!(me(&s, &c, &bearer("guess-8"), &[]).await, 401);
    assert_eq!(me(&s, &a, &bearer(ADA), &[]).await, 200);
}

#[tokio::test]
async fn malformed_forwarding_headers_fall_back_to_the_peer() {
    // Each of these, from the trusted proxy, names no client: each failure is the proxy's own.
    let malformed: Vec<Vec<(&str, &[u8])>> = vec![
        vec![("x-forwarded-for", b"garbage")],
        vec![("x-forwarded-for", b"unknown")],
        vec![("x-forwarded-for", b"198.51.100.1, garbage")],
        vec![("x-forwarded-for", b"[2001:db8::1")],
        vec![("x-forwarded-for", b"2001:db8::1]:80")],
        vec![("x-forwarded-for", b"198.51.100.1 198.51.100.2")],
        vec![("x-forwarded-for", b"")],
        vec![("x-forwarded-for", b"\xff\xfe")],
        vec![
            ("x-forwarded-for", b"198.51.100.1"),
            ("x-forwarded-for", b"_hidden"),
        ],
        vec![("forwarded", b"for=unknown")],
        vec![("forwarded", b"for=_hidden")],
        vec![("forwarded", b"for=\"_gazonk\";proto=https")],
        vec![("forwarded", b"for=\"192.0.2.1")],
        vec![("forwarded", b"for=192.0.2.1;for=192.0.2.2")],
        vec![("forwarded", b"proto=https;by=10.0.0.1")],
        vec![("forwarded", b"for=\"[::1]:80\"junk")],
        vec![
            ("forwarded", b"for=198.51.100.1"),
            ("forwarded", b"for=unknown"),
        ],
    ];
    let limit = malformed.len() as u32;
    let s = serve(config("  trusted_proxies: [127.0.0.1]"), move |server| {
        server.with_failed_sign_in_limit(limit, Duration::from_secs(60))
    })
    .await;
    let proxy = from([127, 0, 0, 1]);
    for (i, headers) in malformed.iter().enumerate() {
        let status = me(&s, &proxy, &bearer(&format!("guess-{i}")), headers).await;
        assert_eq!(status, 401, "{headers:?}");
    }
    // All of them counted against the proxy's address, which is refused now...
    assert_refused(
        &on(&s, &proxy, "api", Some(&bearer("guess-x")), &malformed[0]).await,
        60,
        "address",
    );
    assert_refused(
        &on(&s, &proxy, "api", Some(&bearer("guess-y")), &[]).await,
        60,
        "address",
    );
    // ...while a client it names properly is not, and valid credentials pass whatever the headers say.
    assert_eq!(
        me(
            &s,
            &proxy,
            &bearer("guess-z"),
            &[("x-forwarded-for", b"198.51.100.9")]
        )
        .await,
        401
    );
    for headers in &malformed {
        assert_eq!(
            me(&s, &proxy, &bearer(VIC), headers).await,
            200,
            "{headers:?}"
        );
    }
}

#[tokio::test]
async fn ipv6_clients_with_brackets_ports_and_quotes_are_one_client() {
    let s = serve(config("  trusted_proxies: [127.0.0.1]"), |server| {
        server.with_failed_sign_in_limit(4, Duration::from_secs(60))
    })
    .await;
    let proxy = from([127, 0, 0, 1]);
    // One /64 (2001:db8:0:1::/64), written four ways, by both headers.
    let same: [(&str, &[u8]); 4] = [
        ("x-forwarded-for", b"[2001:db8:0:1::7]:443"),
        ("forwarded", b"for=\"[2001:db8:0:1::8]:80\""),
        ("x-forwarded-for", b"2001:db8:0:1::9"),
        (
            "forwarded",
            b"For=\"[2001:db8:0:1::a]\";proto=http, for=127.0.0.1",
        ),
    ];
    for (i, header) in same.iter().enumerate() {
        assert_eq!(
            me(&s, &proxy, &bearer(&format!("guess-{i}")), &[*header]).await,
            401,
            "{header:?}"
        );
    }
    assert_refused(
        &on(
            &s,
            &proxy,
            "api",
            Some(&bearer("guess-4")),
            &[("x-forwarded-for", b"\"2001:db8:0:1::b\"")],
        )
        .await,
        60,
        "address",
    );
    // `for="[::1]:80"` is ::1, another client; so is another /64.
    assert_eq!(
        me(
            &s,
            &proxy,
            &bearer("guess-5"),
            &[("forwarded", b"for=\"[::1]:80\"")]
        )
        .await,
        401
    );
    assert_eq!(
        me(
            &s,
            &proxy,
            &bearer("guess-6"),
            &[("x-forwarded-for", b"[2001:db8:0:2::7]:443")]
        )
        .await,
        401
    );
}

#[tokio::test]
async fn a_malformed_trusted_proxy_is_a_clear_error_at_startup_and_in_config_check() {
    for (entry, says) in [
        ("10.0.0.0/33", "give 0 to 32"),
        ("10.0.0.1/8", "`10.0.0.0/8`"),
        ("proxy.internal", "not an IPv4 or IPv6 address"),
        ("fd00::/129", "give 0 to 128"),
    ] {
        let config = config(&format!("  trusted_proxies: [\"{entry}\"]"));
        // What `steward config check` runs on the server section.
        let error = steward_server::auth::Auth::from_config(&config, true)
            .await
            .err()
            .unwrap_or_else(|| panic!("{entry} accepted"))
            .to_string();
        assert!(error.contains("trusted_proxies"), "{error}");
        assert!(error.contains(entry), "{error}");
        assert!(error.contains(says), "{error}");
        assert!(error.contains("steward.yaml:"), "{error}");
        // And `steward serve`.
        let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "sign-ins-{}-{}",
            std::process::id(),
            uuid::Uuid::now_v7().simple()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let store = steward_app::store::RunStore::open(Some(&format!(
            "sqlite://{}/store.sqlite",
            dir.display()
        )))
        .await
        .unwrap();
        let app = steward_app::App::build(
            config,
            steward_app::AppOptions {
                db: None,
                demo: None,
                clock: steward_domains::common::Clock::System,
                store: Some(store),
            },
        )
        .await
        .unwrap();
        let error = steward_server::Server::new(steward_server::ServerOptions {
            app: std::sync::Arc::new(app),
            models: steward_server::ModelChoice::fixed(std::sync::Arc::new(Echo)),
            loopback: true,
        })
        .await
        .err()
        .unwrap_or_else(|| panic!("{entry} accepted"))
        .to_string();
        assert!(
            error.contains("trusted_proxies") && error.contains(entry),
            "{error}"
        );
    }
    // A misspelt key is refused by name, as every other key of `server:` is.
    let text = "server:\n  trusted_proxy: [10.0.0.1]\n";
    let error = steward_app::Config::parse(text, &keys().join("steward.yaml"))
        .err()
        .unwrap_or_else(|| panic!("accepted"))
        .to_string();
    assert!(error.contains("trusted_proxy"), "{error}");
    assert!(error.contains("trusted_proxies"), "{error}");
    // Good entries pass.
    let config = config("  trusted_proxies: [10.0.0.7, 10.0.0.0/8, \"fd00::/8\", \"::1\"]");
    assert!(
        steward_server::auth::Auth::from_config(&config, true)
            .await
            .is_ok()
    );
}
