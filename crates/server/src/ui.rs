//! The web UI: static files built into the binary.
//!
//! Plain HTML, CSS and JavaScript from `crates/server/ui/`, compiled in with `include_str!` so the binary serves
//! the UI offline, with no CDN and no build step. Every answer carries a strict Content-Security-Policy: the page
//! runs only its own script, loads only its own style sheet, and talks only to its own origin; charts arrive as
//! SVG text and are shown as `data:` images, where no script runs.

use axum::Router;
use axum::http::HeaderValue;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS,
    X_FRAME_OPTIONS,
};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// The policy of every UI answer: the page's own files only, `data:` images for charts, nothing inline.
pub(crate) const CONTENT_SECURITY: &str = "default-src 'self'; img-src 'self' data:; style-src 'self'; \
     script-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; \
     frame-ancestors 'none'";

const INDEX_HTML: &str = include_str!("../ui/index.html");
const APP_JS: &str = include_str!("../ui/app.js");
const APP_CSS: &str = include_str!("../ui/app.css");
const FAVICON_SVG: &str = include_str!("../ui/favicon.svg");

/// The UI's routes: `/` (the page), `/ui/app.js`, `/ui/app.css` and `/ui/favicon.svg`.
pub(crate) fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route(
            "/",
            get(|| async { asset("text/html; charset=utf-8", INDEX_HTML) }),
        )
        .route(
            "/ui/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }),
        )
        .route(
            "/ui/app.css",
            get(|| async { asset("text/css; charset=utf-8", APP_CSS) }),
        )
        .route(
            "/ui/favicon.svg",
            get(|| async { asset("image/svg+xml", FAVICON_SVG) }),
        )
}

/// One static file with its content type and the UI's headers. `no-cache` makes the browser revalidate, so a
/// new binary's UI shows at the next load.
fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            (
                CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(CONTENT_SECURITY),
            ),
            (X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
            (X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
            (REFERRER_POLICY, HeaderValue::from_static("no-referrer")),
        ],
        body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;

    /// Serves the UI router on a free port and fetches `path` over a plain socket: status line and headers
    /// (lower-cased names), and the body.
    async fn fetch(path: &'static str) -> (String, String) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let address = listener.local_addr().expect("address");
        let server = tokio::spawn(async move { axum::serve(listener, router::<()>()).await });
        let answer = tokio::task::spawn_blocking(move || {
            let mut stream = std::net::TcpStream::connect(address).expect("connect");
            let request =
                format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
            stream.write_all(request.as_bytes()).expect("write");
            let mut answer = String::new();
            stream.read_to_string(&mut answer).expect("read");
            answer
        })
        .await
        .expect("the client");
        server.abort();
        let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
        (head.to_ascii_lowercase(), body.to_string())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn serves_each_file_with_its_type_and_a_strict_policy() {
        for (path, content_type, starts) in [
            ("/", "text/html; charset=utf-8", "<!doctype html>"),
            (
                "/ui/app.js",
                "text/javascript; charset=utf-8",
                "// Steward's web UI",
            ),
            (
                "/ui/app.css",
                "text/css; charset=utf-8",
                "/* Steward's web UI",
            ),
            ("/ui/favicon.svg", "image/svg+xml", "<svg"),
        ] {
            let (head, body) = fetch(path).await;
            assert!(head.starts_with("http/1.1 200"), "{path}: {head}");
            assert!(
                head.contains(&format!("content-type: {content_type}\r\n")),
                "{path}: {head}"
            );
            assert!(
                head.contains("cache-control: no-cache\r\n"),
                "{path}: {head}"
            );
            assert!(
                head.contains("x-content-type-options: nosniff\r\n"),
                "{path}: {head}"
            );
            let policy = format!(
                "content-security-policy: {}\r\n",
                CONTENT_SECURITY.to_ascii_lowercase()
            );
            assert!(head.contains(&policy), "{path}: {head}");
            assert!(
                body.starts_with(starts),
                "{path}: {}",
                body.get(..80).unwrap_or(&body)
            );
        }
        let (head, _) = fetch("/ui/missing.js").await;
        assert!(head.starts_with("http/1.1 404"), "{head}");
    }

    #[test]
    fn the_policy_allows_only_the_pages_own_files() {
        for directive in [
            "default-src 'self'",
            "img-src 'self' data:",
            "style-src 'self'",
            "script-src 'self'",
            "connect-src 'self'",
        ] {
            assert!(
                CONTENT_SECURITY.split("; ").any(|d| d == directive),
                "{directive}"
            );
        }
        assert!(!CONTENT_SECURITY.contains("unsafe"));
    }

    /// What the policy would block, or what would open the page to injected markup, is not in the files.
    #[test]
    fn the_files_need_nothing_the_policy_forbids() {
        let html = INDEX_HTML.to_ascii_lowercase();
        assert_eq!(html.matches("<script").count(), 1, "one script, the app's");
        assert!(html.contains(r#"<script src="/ui/app.js" defer></script>"#));
        assert!(html.contains(r#"<link rel="stylesheet" href="/ui/app.css">"#));
        for forbidden in [
            " style=",
            " onclick=",
            " onload=",
            "javascript:",
            "http://",
            "https://",
            "<style",
        ] {
            assert!(!html.contains(forbidden), "{forbidden} in index.html");
        }
        for forbidden in [
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "eval(",
            "new Function",
            "setAttribute('style'",
            "http://",
            "https://",
        ] {
            // The SVG namespace is a name, not a place anything is loaded from.
            let js = APP_JS.replace("'http://www.w3.org/2000/svg'", "SVG namespace");
            assert!(!js.contains(forbidden), "{forbidden} in app.js");
        }
        for forbidden in ["@import", "url(http", "url(//"] {
            assert!(!APP_CSS.contains(forbidden), "{forbidden} in app.css");
        }
        assert!(!FAVICON_SVG.contains("<script"));
    }
}
