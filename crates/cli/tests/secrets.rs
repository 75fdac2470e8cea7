//! Passwords and keys never reach the terminal, `--json` output or a recording: not from a base URL's userinfo
//! or query string (`openai-compatible:m@https://user:pass@host/v1?api-key=…`), not from a provider's error text
//! (even when the key sits across the point where that text is cut), not from retry notices.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::Value;
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const PASS: &str = "hunter2-pass-Q7w";
const URL_KEY: &str = "urlkey-Z9x8-c7v6";
const API_KEY: &str = "sk-envkey-0123456789abcdef";

/// Fails when `text` holds `secret` or its first half.
fn assert_hidden(text: &str, secret: &str) {
    let half = &secret[..secret.len() / 2];
    assert!(
        !text.contains(half),
        "{half:?} (of {secret:?}) shows in:\n{text}"
    );
}

fn assert_no_secrets(text: &str) {
    for secret in [PASS, URL_KEY, API_KEY] {
        assert_hidden(text, secret);
    }
}

/// `openai-compatible:gpt-4o-mini@http://steward:PASS@host/v1?api-key=URL_KEY`.
fn spec(server: &MockServer) -> String {
    format!(
        "openai-compatible:gpt-4o-mini@http://steward:{PASS}@{}/v1?api-key={URL_KEY}",
        server.address()
    )
}

fn shown_spec(server: &MockServer) -> String {
    format!(
        "openai-compatible:gpt-4o-mini@http://steward:***@{}/v1?api-key=***",
        server.address()
    )
}

#[tokio::test]
async fn json_trace_and_recording_show_the_model_without_its_credentials() {
    let server = mock_openai(vec![
        tool_reply("call_date", "current_date", "{}"),
        text_reply("It is Saturday."),
    ])
    .await;
    let file = format!(
        "{}/secrets-recording-{}.jsonl",
        env!("CARGO_TARGET_TMPDIR"),
        std::process::id()
    );
    let spec = spec(&server);
    let out = steward(
        &[
            "ask",
            "--json",
            "--trace",
            "--record",
            &file,
            "--model",
            &spec,
            "What day is it?",
        ],
        &[("STEWARD_API_KEY", API_KEY)],
        "",
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let json: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["model"], shown_spec(&server));
    assert!(
        stderr.contains(&format!("step 1 · {}", shown_spec(&server))),
        "{stderr}"
    );
    // The key in the query string reached the server, where it belongs.
    let requests = server.received_requests().await.unwrap();
    assert_eq!(
        requests[0].url.query(),
        Some(&*format!("api-key={URL_KEY}"))
    );
    let recording = std::fs::read_to_string(&file).unwrap();
    for shown in [&stdout, &stderr, &recording] {
        assert_no_secrets(shown);
    }

    // The recording plays back, and names its model without the credentials as well.
    let replay = format!("replay:{file}");
    let out = steward(
        &["ask", "--json", "--model", &replay, "What day is it?"],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        json["model"]
            .as_str()
            .unwrap()
            .ends_with(&format!("({})", shown_spec(&server))),
        "{json}"
    );
    let _ = std::fs::remove_file(&file);

    // STEWARD_MODEL and chat's banner.
    let out = steward(&["chat"], &[("STEWARD_MODEL", &spec)], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains(&shown_spec(&server)));
    assert_no_secrets(&text(&out.stderr));
}

#[tokio::test]
async fn provider_errors_that_echo_credentials_or_cut_a_key_show_neither() {
    let server = MockServer::start().await;
    // The error text puts the key `offset` characters in (the offset is the question), then the whole URL with
    // its credentials; error texts are cut at 600 characters.
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(query_param("api-key", URL_KEY))
        .respond_with(|request: &Request| {
            let body: Value = serde_json::from_slice(&request.body).unwrap();
            let messages = body["messages"].as_array().unwrap();
            let question = messages.last().unwrap()["content"].as_str().unwrap();
            let offset: usize = question.parse().unwrap();
            let url = request
                .url
                .to_string()
                .replace("http://", &format!("http://steward:{PASS}@"));
            let message = format!(
                "{}{API_KEY} is not valid for {url}; {url}",
                "x".repeat(offset)
            );
            ResponseTemplate::new(401)
                .set_body_json(serde_json::json!({"error": {"message": message}}))
        })
        .mount(&server)
        .await;
    let spec = spec(&server);
    let n = API_KEY.len();
    for offset in [0, 600 - n - 1, 600 - n + 1, 600 - n / 2, 599, 600] {
        let question = offset.to_string();
        let out = steward(
            &["ask", "--json", "--trace", "--model", &spec, &question],
            &[("STEWARD_API_KEY", API_KEY)],
            "",
        );
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(3), "{stderr}");
        assert!(stdout.contains("HTTP 401"), "{stdout}");
        assert!(stderr.contains("HTTP 401"), "{stderr}");
        if offset == 0 {
            assert!(
                stderr.contains("[redacted] is not valid for http://steward:***@"),
                "{stderr}"
            );
        }
        for shown in [&stdout, &stderr] {
            assert_no_secrets(shown);
            // Not even the key's first four characters, wherever the cut fell.
            assert!(!shown.contains(&API_KEY[..4]), "offset {offset}: {shown}");
        }
    }
}

#[test]
fn retry_notices_and_the_final_error_of_an_unreachable_server_hide_credentials() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let spec =
        format!("openai-compatible:m@http://steward:{PASS}@127.0.0.1:{port}/v1?api-key={URL_KEY}");
    let out = steward(
        &["ask", "--model", &spec, "hi"],
        &[("STEWARD_API_KEY", API_KEY)],
        "",
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("retrying openai-compatible"), "{stderr}");
    // reqwest sends the userinfo as basic auth and leaves it out of its errors; the query key is masked.
    assert!(
        stderr.contains("/v1/chat/completions?api-key=***): "),
        "{stderr}"
    );
    assert_no_secrets(&stderr);
}

#[test]
fn a_spec_that_cannot_be_used_is_quoted_without_its_credentials() {
    let spec = format!("openai-compatible:@https://steward:{PASS}@gpu.lan/v1?api-key={URL_KEY}");
    let out = steward(&["ask", "--model", &spec, "hi"], &[], "");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "invalid model `openai-compatible:@https://steward:***@gpu.lan/v1?api-key=***`"
        ),
        "{stderr}"
    );
    assert_no_secrets(&stderr);
    // The same spec from STEWARD_MODEL, in `steward demo`'s explanation of why chat does not start.
    let db = format!("{}/demo.sqlite", scratch_dir("secrets-demo"));
    let out = steward(&["demo", "--db", &db], &[("STEWARD_MODEL", &spec)], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("The model could not be set up"), "{stdout}");
    assert_no_secrets(&stdout);
    assert_no_secrets(&text(&out.stderr));
}
