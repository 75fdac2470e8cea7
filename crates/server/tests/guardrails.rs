//! What a web page in someone's browser must not get from a server on their machine, tested over real HTTP
//! against the server's router on a loopback socket: a foreign `Host` (DNS rebinding) is refused on every
//! route; a state change must be JSON and come from no origin, the server's own or a `server.cors` one; failed
//! sign-ins are limited per client address, never refusing valid credentials (more in tests/sign_ins.rs). The
//! browser itself runs the same attacks in crates/cli/tests/ui.rs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::Duration;

use common::*;
use jsonwebtoken::Algorithm;
use serde_json::{Value, json};

const EVIL: &str = "evil.example:8080";

fn chat() -> Value {
    json!({"model": "assistant", "messages": [{"role": "user", "content": "record an expense"}]})
}

fn mcp_initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
           "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})
}

/// What `method path` with `body` (as JSON) and `Host: host` gets: status and body.
async fn with_host(
    s: &Running,
    method: &str,
    path: &str,
    body: Option<Value>,
    host: &str,
) -> (u16, String) {
    let mut request = s
        .request(method, path)
        .header("host", host)
        .header("accept", "application/json, text/event-stream");
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    let (status, _, text) = s.send(request).await;
    (status, text)
}

/// How many runs and conversations the (open) server holds.
async fn stored(s: &Running) -> (usize, usize) {
    let (status, runs) = s.json("GET", "/api/runs", None, None).await;
    assert_eq!(status, 200, "{runs}");
    let (status, conversations) = s.json("GET", "/api/conversations", None, None).await;
    assert_eq!(status, 200, "{conversations}");
    (
        runs.as_array().unwrap().len(),
        conversations.as_array().unwrap().len(),
    )
}

#[tokio::test]
async fn a_foreign_host_is_refused_on_every_route_and_the_servers_own_names_are_not() {
    // Bound to 127.0.0.1 without credentials: every caller is the machine's user, an administrator.
    let s = serve(config_with_server("  hosts: []"), |server| server).await;
    let routes: [(&str, &str, Option<Value>); 10] = [
        ("GET", "/api/me", None),
        ("GET", "/api/runs", None),
        ("GET", "/api/conversations", None),
        ("POST", "/api/conversations", Some(json!({}))),
        ("GET", "/v1/models", None),
        ("POST", "/v1/chat/completions", Some(chat())),
        ("POST", "/mcp", Some(mcp_initialize())),
        ("GET", "/", None),
        ("GET", "/ui/app.js", None),
        ("GET", "/health", None),
    ];
    for (method, path, body) in routes.clone() {
        let (status, text) = with_host(&s, method, path, body, EVIL).await;
        assert_eq!(status, 421, "{method} {path}: {text}");
        assert!(
            text.contains("server.hosts") && text.contains("evil.example"),
            "{method} {path}: {text}"
        );
    }
    // Nothing was created by the refused requests.
    assert_eq!(stored(&s).await, (0, 0));
    // Two Host headers, the server's own first: every one is judged, not only the first.
    {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut tcp = tokio::net::TcpStream::connect(s.authority()).await.unwrap();
        tcp.write_all(
            format!(
                "GET /api/me HTTP/1.1\r\nHost: {}\r\nHost: {EVIL}\r\nConnection: close\r\n\r\n",
                s.authority()
            )
            .as_bytes(),
        )
        .await
        .unwrap();
        let mut answer = String::new();
        tcp.read_to_string(&mut answer).await.unwrap();
        let status = answer.split(' ').nth(1).unwrap_or_default().to_owned();
        assert!(status == "421" || status == "400", "{answer}");
        assert!(!answer.contains(r#""admin":true"#), "{answer}");
    }

    // The names it was reached by pass: its address (what reqwest sends), localhost and [::1] at any port.
    let port = s.port().to_owned();
    for host in [
        s.authority().to_owned(),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
        "localhost".into(),
    ] {
        let (status, text) = with_host(&s, "GET", "/api/me", None, &host).await;
        assert_eq!(status, 200, "{host}: {text}");
        assert!(text.contains(r#""admin":true"#), "{text}");
    }
    for (method, path, body) in routes {
        let (status, text) = with_host(&s, method, path, body, s.authority()).await;
        assert!(
            (200..300).contains(&status),
            "{method} {path}: {status} {text}"
        );
    }
    // The same requests with the right Host did create: the count above could have seen it.
    assert_eq!(stored(&s).await, (1, 1));

    // A name listed under `server.hosts` passes too, with or without the port; others still do not.
    let listed = serve(
        config_with_server("  hosts: [steward.example.test]"),
        |server| server,
    )
    .await;
    for host in [
        format!("steward.example.test:{}", listed.port()),
        "Steward.Example.Test".into(),
    ] {
        let (status, text) = with_host(&listed, "GET", "/api/me", None, &host).await;
        assert_eq!(status, 200, "{host}: {text}");
    }
    assert_eq!(
        with_host(&listed, "GET", "/api/me", None, EVIL).await.0,
        421
    );
    assert_eq!(
        with_host(
            &listed,
            "GET",
            "/",
            None,
            "steward.example.test.evil.example"
        )
        .await
        .0,
        421
    );
}

#[tokio::test]
async fn state_changes_must_be_json_from_the_servers_own_origin_or_a_listed_one() {
    let s = serve(
        config_with_server("  cors: [https://app.example.test]"),
        |server| server,
    )
    .await;
    // Bodies a page on any site may send without asking the browser (no CORS preflight): 415.
    for (path, content_type, body) in [
        ("/api/conversations", Some("text/plain"), "{}".to_owned()),
        (
            "/api/conversations",
            Some("text/plain;charset=UTF-8"),
            "{}".to_owned(),
        ),
        (
            "/api/conversations",
            Some("application/x-www-form-urlencoded"),
            "title=x".to_owned(),
        ),
        (
            "/api/conversations",
            Some("multipart/form-data; boundary=b"),
            "--b--".to_owned(),
        ),
        ("/api/conversations", None, "{}".to_owned()),
        (
            "/v1/chat/completions",
            Some("text/plain"),
            chat().to_string(),
        ),
        ("/mcp", Some("text/plain"), mcp_initialize().to_string()),
    ] {
        let mut request = s.request("POST", path).body(body);
        if let Some(content_type) = content_type {
            request = request.header("content-type", content_type);
        }
        let (status, _, text) = s.send(request).await;
        assert_eq!(status, 415, "{path} {content_type:?}: {text}");
        assert!(text.contains("application/json"), "{text}");
    }
    assert_eq!(stored(&s).await, (0, 0));

    // JSON from a page of another origin: 403, whether another site, another port of this machine, or a page
    // that hides its origin.
    let other_port = format!("http://127.0.0.1:{}", s.port().parse::<u16>().unwrap() ^ 1);
    for origin in [
        "http://evil.example:8080",
        other_port.as_str(),
        "null",
        "https://app.example.test:8443",
    ] {
        for (path, body) in [
            ("/api/conversations", json!({})),
            ("/v1/chat/completions", chat()),
        ] {
            let request = s
                .request("POST", path)
                .header("origin", origin)
                .header("content-type", "application/json")
                .body(body.to_string());
            let (status, _, text) = s.send(request).await;
            assert_eq!(status, 403, "{origin} {path}: {text}");
            assert!(text.contains("origin"), "{text}");
        }
    }
    assert_eq!(stored(&s).await, (0, 0));

    // No Origin (a command-line client), the server's own origin, and a listed one pass.
    let own = format!("http://{}", s.authority());
    for origin in [None, Some(own.as_str()), Some("https://app.example.test")] {
        let mut request = s
            .request("POST", "/api/conversations")
            .header("content-type", "application/json")
            .body("{}");
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        let (status, _, text) = s.send(request).await;
        assert_eq!(status, 201, "{origin:?}: {text}");
    }
    assert_eq!(stored(&s).await, (0, 3));
    // A DELETE without a body needs no content type (no page can send one across sites without a preflight).
    let (_, list) = s.json("GET", "/api/conversations", None, None).await;
    let id = list[0]["id"].as_str().unwrap();
    assert_eq!(
        s.call("DELETE", &format!("/api/conversations/{id}"), None, None)
            .await
            .0,
        204
    );
}

#[tokio::test]
async fn failed_sign_ins_are_limited_per_address_until_the_window_passes() {
    let s = serve(config(""), |server| {
        server.with_failed_sign_in_limit(4, Duration::from_secs(2))
    })
    .await;
    // Two clients of one machine, from two loopback addresses.
    let from = |ip: [u8; 4]| {
        reqwest::Client::builder()
            .local_address(std::net::IpAddr::from(ip))
            .build()
            .unwrap()
    };
    let (a, b) = (from([127, 0, 0, 1]), from([127, 0, 0, 2]));
    let me = |client: &reqwest::Client, authorization: Option<&str>| {
        let mut request = client.get(format!("{}/api/me", s.base));
        if let Some(authorization) = authorization {
            request = request.header("authorization", authorization);
        }
        s.send(request)
    };
    // Requests without credentials are not failed sign-ins (a browser's first visit).
    for _ in 0..10 {
        assert_eq!(me(&a, None).await.0, 401);
    }
    assert_eq!(me(&a, Some(&format!("Bearer {ADA}"))).await.0, 200);

    let mut expired = claims("carol", "clerk");
    expired["exp"] = json!(1_000_000);
    let expired = format!(
        "Bearer {}",
        jwt("rsa-test", "rsa.pem", Algorithm::RS256, expired)
    );
    let forged = format!(
        "Bearer {}",
        jwt(
            "rsa-test",
            "rotated.pem",
            Algorithm::RS256,
            claims("carol", "clerk")
        )
    );
    for bad in [
        "Bearer nope",
        expired.as_str(),
        forged.as_str(),
        "Basic YWRhOmFkYQ==",
    ] {
        assert_eq!(me(&a, Some(bad)).await.0, 401, "{bad}");
    }
    // Past the limit, credentials from that address that do not verify are 429 with Retry-After...
    for authorization in ["Bearer nope", "Bearer other", forged.as_str()] {
        let (status, retry_after, text) = me(&a, Some(authorization)).await;
        assert_eq!(status, 429, "{text}");
        let wait: u64 = retry_after.expect("Retry-After").parse().unwrap();
        assert!((1..=2).contains(&wait), "{wait}");
        assert!(text.contains("failed sign-ins"), "{text}");
    }
    // ...but a good token is never refused for them, and a request without credentials is told to sign in.
    assert_eq!(me(&a, Some(&format!("Bearer {ADA}"))).await.0, 200);
    assert_eq!(me(&a, None).await.0, 401);
    // Another address is not affected, and neither are routes that need no credentials.
    assert_eq!(me(&b, Some(&format!("Bearer {VIC}"))).await.0, 200);
    assert_eq!(me(&b, Some("Bearer wrong")).await.0, 401);
    assert_eq!(s.send(a.get(format!("{}/health", s.base))).await.0, 200);

    // Once the window has passed, a wrong token from the address is a plain 401 again.
    let mut status = 0;
    for _ in 0..100 {
        status = me(&a, Some("Bearer another")).await.0;
        if status == 401 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, 401, "still refused after the window");
    assert_eq!(me(&a, Some(&format!("Bearer {ADA}"))).await.0, 200);
}
