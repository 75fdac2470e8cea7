use super::*;

fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.append(
            axum::http::HeaderName::from_bytes(name.as_bytes())
                .unwrap_or_else(|_| panic!("{name}")),
            value.parse().unwrap_or_else(|_| panic!("{value}")),
        );
    }
    map
}

fn status(
    guardrails: &Guardrails,
    method: Method,
    uri: &str,
    pairs: &[(&str, &str)],
) -> Option<u16> {
    let uri: Uri = uri.parse().unwrap_or_else(|_| panic!("{uri}"));
    guardrails
        .admit(&method, &uri, &headers(pairs))
        .err()
        .map(|e| e.status().as_u16())
}

fn loopback() -> Guardrails {
    Guardrails::new(&[], &[], "127.0.0.1:8080".parse().ok(), false)
}

#[test]
fn loopback_names_and_configured_hosts_pass_others_are_421() {
    let g = loopback();
    for host in [
        "127.0.0.1:8080",
        "localhost:8080",
        "localhost",
        "[::1]:8080",
        "127.0.0.1",
    ] {
        assert_eq!(
            status(&g, Method::GET, "/", &[("host", host)]),
            None,
            "{host}"
        );
    }
    for host in [
        "evil.example:8080",
        "evil.example",
        "localhost.evil.example",
        "127.0.0.2:8080",
        "x@127.0.0.1",
    ] {
        assert_eq!(
            status(&g, Method::GET, "/api/me", &[("host", host)]),
            Some(421),
            "{host}"
        );
    }
    assert_eq!(status(&g, Method::GET, "/", &[]), Some(421));
    // HTTP/2's authority (or an absolute-form target) is checked too.
    assert_eq!(
        status(
            &g,
            Method::GET,
            "http://evil.example/api/me",
            &[("host", "127.0.0.1:8080")]
        ),
        Some(421)
    );
    assert_eq!(status(&g, Method::GET, "http://localhost:8080/", &[]), None);

    let configured = [HostName::parse("steward.example.com").unwrap_or_else(|| panic!("parse"))];
    let g = Guardrails::new(&configured, &[], "10.0.0.5:8080".parse().ok(), true);
    for host in [
        "steward.example.com",
        "Steward.Example.Com:443",
        "10.0.0.5:8080",
        "localhost:8080",
    ] {
        assert_eq!(
            status(&g, Method::GET, "/", &[("host", host)]),
            None,
            "{host}"
        );
    }
    assert_eq!(
        status(&g, Method::GET, "/", &[("host", "evil.example")]),
        Some(421)
    );
}

#[test]
fn all_interfaces_admit_any_host_only_with_credentials() {
    let any: SocketAddr = "0.0.0.0:8080".parse().unwrap_or_else(|_| panic!("addr"));
    let open = Guardrails::new(&[], &[], Some(any), true);
    assert_eq!(
        status(&open, Method::GET, "/", &[("host", "steward.example.com")]),
        None
    );
    let closed = Guardrails::new(&[], &[], Some(any), false);
    assert_eq!(
        status(
            &closed,
            Method::GET,
            "/",
            &[("host", "steward.example.com")]
        ),
        Some(421)
    );
    assert_eq!(
        status(&closed, Method::GET, "/", &[("host", "localhost:8080")]),
        None
    );
    // With `server.hosts` set, only those (and the loopback names).
    let configured =
        [HostName::parse("steward.example.com:443").unwrap_or_else(|| panic!("parse"))];
    let listed = Guardrails::new(&configured, &[], Some(any), true);
    assert_eq!(
        status(
            &listed,
            Method::GET,
            "/",
            &[("host", "steward.example.com:443")]
        ),
        None
    );
    assert_eq!(
        status(&listed, Method::GET, "/", &[("host", "other.example.com")]),
        Some(421)
    );
}

#[test]
fn state_changes_need_json_and_a_bodiless_delete_needs_no_type() {
    let g = loopback();
    let host = ("host", "127.0.0.1:8080");
    for (method, content_type) in [
        (Method::POST, "text/plain"),
        (Method::POST, "application/x-www-form-urlencoded"),
        (Method::POST, "multipart/form-data; boundary=x"),
        (Method::PUT, "text/plain;charset=UTF-8"),
        (Method::PATCH, "application/jsonx"),
        (Method::DELETE, "text/plain"),
    ] {
        assert_eq!(
            status(
                &g,
                method.clone(),
                "/api/conversations",
                &[host, ("content-type", content_type)]
            ),
            Some(415),
            "{method} {content_type}"
        );
    }
    assert_eq!(
        status(&g, Method::POST, "/api/conversations", &[host]),
        Some(415)
    );
    assert_eq!(
        status(
            &g,
            Method::POST,
            "/api/conversations",
            &[host, ("content-type", "Application/JSON; charset=utf-8")]
        ),
        None
    );
    assert_eq!(
        status(&g, Method::DELETE, "/api/conversations/x", &[host]),
        None
    );
    assert_eq!(
        status(
            &g,
            Method::DELETE,
            "/api/conversations/x",
            &[host, ("content-length", "3")]
        ),
        Some(415)
    );
    assert_eq!(
        status(
            &g,
            Method::GET,
            "/api/me",
            &[host, ("content-type", "text/plain")]
        ),
        None
    );
}

#[test]
fn origins_must_be_the_servers_own_or_listed() {
    let g = Guardrails::new(
        &[],
        &["https://app.example.test".to_owned()],
        "127.0.0.1:8080".parse().ok(),
        false,
    );
    let host = ("host", "127.0.0.1:8080");
    let json = ("content-type", "application/json");
    let post = |origin: &[(&'static str, &'static str)]| {
        let mut pairs = vec![host, json];
        pairs.extend_from_slice(origin);
        status(&g, Method::POST, "/api/conversations", &pairs)
    };
    assert_eq!(post(&[]), None);
    assert_eq!(post(&[("origin", "http://127.0.0.1:8080")]), None);
    assert_eq!(post(&[("origin", "https://app.example.test")]), None);
    assert_eq!(post(&[("origin", "http://127.0.0.1:3000")]), Some(403));
    assert_eq!(post(&[("origin", "http://localhost:8080")]), Some(403));
    assert_eq!(post(&[("origin", "https://evil.example")]), Some(403));
    assert_eq!(post(&[("origin", "null")]), Some(403));
    assert_eq!(
        post(&[("origin", "null"), ("sec-fetch-site", "same-origin")]),
        None
    );
    assert_eq!(post(&[("sec-fetch-site", "cross-site")]), Some(403));
    assert_eq!(post(&[("sec-fetch-site", "same-site")]), Some(403));
    assert_eq!(post(&[("sec-fetch-site", "same-origin")]), None);
    // A link followed from another site still opens the page.
    assert_eq!(
        status(
            &g,
            Method::GET,
            "/",
            &[host, ("sec-fetch-site", "cross-site")]
        ),
        None
    );
    // A cross-origin read is refused as well, unless listed.
    assert_eq!(
        status(
            &g,
            Method::GET,
            "/api/me",
            &[host, ("origin", "https://evil.example")]
        ),
        Some(403)
    );
}
