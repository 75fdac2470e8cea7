//! Keys and URL credentials never show: not in errors (cut or not), retry notices, model names, `Debug`
//! output or recordings, over real HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use steward_core::{Message, Model, ModelRequest};
use steward_llm::{
    AnthropicConfig, AnthropicModel, Env, ModelSetup, OpenAiConfig, OpenAiModel, Secret, connect,
};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const KEY: &str = "sk-cutkey-0123456789abcdefXYZ";
const PASS: &str = "hunter2-pass-Q7w";
const URL_KEY: &str = "urlkey-Z9x8-c7v6";

/// Fails when `text` holds `secret` or its first half (a cut key must not leave its beginning behind).
fn assert_hidden(text: &str, secret: &str) {
    let half = &secret[..secret.len() / 2];
    assert!(
        !text.contains(half),
        "{half:?} (of {secret:?}) shows in:\n{text}"
    );
}

/// Answers 401 with a provider error whose message puts the key `offset` characters in; the offset comes in
/// the request's only message.
struct KeyAt {
    anthropic: bool,
}

impl Respond for KeyAt {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
        let content = &body["messages"][0]["content"];
        let offset: usize = content
            .as_str()
            .or_else(|| content[0]["text"].as_str())
            .unwrap()
            .parse()
            .unwrap();
        let message = format!(
            "{}{KEY} was refused; check the key and try again",
            "x".repeat(offset)
        );
        let error = if self.anthropic {
            serde_json::json!({"type": "error", "error": {"type": "authentication_error", "message": message}})
        } else {
            serde_json::json!({"error": {"message": message}})
        };
        ResponseTemplate::new(401).set_body_json(error)
    }
}

fn asking(offset: usize) -> ModelRequest {
    ModelRequest::new(vec![Message::user(offset.to_string())], tools())
}

#[tokio::test]
async fn a_key_across_the_cut_of_a_provider_error_leaves_nothing_of_itself() {
    for anthropic in [false, true] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(KeyAt { anthropic })
            .mount(&server)
            .await;
        let notices = Arc::new(Mutex::new(Vec::new()));
        let model: Box<dyn Model> = if anthropic {
            let mut config = AnthropicConfig::new("claude-x", Secret::new(KEY), Some(server.uri()));
            config.http = fast_http(&notices);
            Box::new(AnthropicModel::new(config).unwrap())
        } else {
            let mut config =
                OpenAiConfig::openai("gpt-4o-mini", Some(Secret::new(KEY)), Some(server.uri()));
            config.http = fast_http(&notices);
            Box::new(OpenAiModel::new(config).unwrap())
        };
        // Error texts are cut at 600 characters: put the key before, across and after that point.
        for offset in (600 - KEY.len() - 2)..=601 {
            let err = model.complete(&asking(offset)).await.unwrap_err();
            let (text, debug) = (err.to_string(), format!("{err:?}"));
            assert!(text.contains("HTTP 401"), "{text}");
            assert_hidden(&text, KEY);
            assert_hidden(&debug, KEY);
            // Nothing of the key at all, not even its first four characters.
            assert!(!text.contains(&KEY[..4]), "offset {offset}: {text}");
        }
    }
}

/// A server that wants `api-key` in the query and echoes the whole URL, credentials included, in its errors.
async fn echoing_server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(query_param("api-key", URL_KEY))
        .respond_with(|request: &Request| {
            let echoed = format!("no such model at {}", request.url)
                .replace("http://", &format!("http://steward:{PASS}@"));
            ResponseTemplate::new(404).set_body_json(serde_json::json!({
                "error": {"message": echoed, "type": "not_found", "url": request.url.to_string()}
            }))
        })
        .mount(&server)
        .await;
    server
}

fn base_with_credentials(server: &MockServer) -> String {
    format!(
        "http://steward:{PASS}@{}/v1?api-key={URL_KEY}",
        server.address()
    )
}

#[tokio::test]
async fn credentials_in_a_base_url_stay_out_of_names_errors_and_debug_output() {
    let server = echoing_server().await;
    let base = base_with_credentials(&server);
    let notices = Arc::new(Mutex::new(Vec::new()));
    let mut config = OpenAiConfig::compatible("llama3", &base, None);
    config.http = fast_http(&notices);
    // The key in the base URL's query string stays at the end of the request URL.
    assert_eq!(
        config.url(),
        format!(
            "http://steward:{PASS}@{}/v1/chat/completions?api-key={URL_KEY}",
            server.address()
        )
    );
    let config_debug = format!("{config:?}");
    let model = OpenAiModel::new(config).unwrap();
    assert_eq!(
        model.name(),
        format!(
            "openai-compatible:llama3@http://steward:***@{}/v1?api-key=***",
            server.address()
        )
    );
    let err = model.complete(&request()).await.unwrap_err();
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1, "the URL reached the server as written");
    let auth = requests[0].headers.get("authorization").unwrap();
    assert!(auth.to_str().unwrap().starts_with("Basic "));
    let text = err.to_string();
    assert!(
        text.contains("HTTP 404: no such model at http://steward:***@"),
        "{text}"
    );
    for shown in [
        text,
        format!("{err:?}"),
        model.name().to_owned(),
        format!("{model:?}"),
        config_debug,
    ] {
        assert_hidden(&shown, PASS);
        assert_hidden(&shown, URL_KEY);
    }
}

#[tokio::test]
async fn an_unreachable_server_with_credentials_in_its_url_is_reported_without_them() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let base = format!("http://steward:{PASS}@127.0.0.1:{port}/v1?api-key={URL_KEY}");
    for anthropic in [false, true] {
        let notices = Arc::new(Mutex::new(Vec::new()));
        let (err, debug) = if anthropic {
            let mut config = AnthropicConfig::new("claude-x", Secret::new(KEY), Some(base.clone()));
            config.http = fast_http(&notices);
            let model = AnthropicModel::new(config).unwrap();
            (
                model.complete(&request()).await.unwrap_err(),
                format!("{model:?}"),
            )
        } else {
            let mut config = OpenAiConfig::compatible("llama3", &base, None);
            config.http = fast_http(&notices);
            let model = OpenAiModel::new(config).unwrap();
            (
                model.complete(&request()).await.unwrap_err(),
                format!("{model:?}"),
            )
        };
        let notices = notices.lock().unwrap();
        assert_eq!(notices.len(), 3);
        let mut shown = vec![err.to_string(), format!("{err:?}"), debug];
        shown.extend(notices.iter().map(|n| n.reason.clone()));
        for text in shown {
            assert_hidden(&text, PASS);
            assert_hidden(&text, URL_KEY);
            assert_hidden(&text, KEY);
        }
    }
}

#[tokio::test]
async fn recordings_hold_no_credentials() {
    let server = echoing_server().await;
    let spec = format!(
        "openai-compatible:llama3@{}",
        base_with_credentials(&server)
    );
    let file = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("secrets-recording-{}.jsonl", std::process::id()));
    let notices = Arc::new(Mutex::new(Vec::new()));
    let model = connect(
        ModelSetup {
            spec: Some(spec),
            record: Some(file.clone()),
            http: fast_http(&notices),
            ..ModelSetup::default()
        },
        &Env::default(),
    )
    .await
    .unwrap();
    let err = model.complete(&request()).await.unwrap_err();
    assert!(err.to_string().contains("HTTP 404"), "{err}");
    let recording = std::fs::read_to_string(&file).unwrap();
    assert!(recording.contains("\"status\":404"), "{recording}");
    assert!(recording.contains("steward:***@"), "{recording}");
    assert_hidden(&recording, PASS);
    assert_hidden(&recording, URL_KEY);
    let _ = std::fs::remove_file(&file);
}

#[tokio::test]
async fn specs_and_hosts_in_setup_errors_hold_no_credentials() {
    // A spec that cannot be used is quoted back without its base URL's credentials.
    let spec = format!("openai-compatible:@https://steward:{PASS}@gpu.lan/v1?key={URL_KEY}");
    let err = connect(
        ModelSetup {
            spec: Some(spec),
            ..ModelSetup::default()
        },
        &Env::default(),
    )
    .await
    .err()
    .unwrap();
    let text = err.to_string();
    assert!(
        text.contains("https://steward:***@gpu.lan/v1?key=***"),
        "{text}"
    );
    assert_hidden(&text, PASS);
    assert_hidden(&text, URL_KEY);
    assert_hidden(&format!("{err:?}"), PASS);
    // An Ollama host with credentials that does not answer is named without them.
    let host = format!("http://steward:{PASS}@127.0.0.1:9");
    let err = connect(
        ModelSetup::default(),
        &Env::from_pairs([("OLLAMA_HOST", host.as_str())]),
    )
    .await
    .err()
    .unwrap();
    let text = err.to_string();
    assert!(text.contains("http://steward:***@127.0.0.1:9"), "{text}");
    assert_hidden(&text, PASS);
    // A parsed spec's Debug form hides them too.
    let spec = steward_llm::ModelSpec::parse(&format!(
        "openai-compatible:m@https://u:{PASS}@h/v1?api-key={URL_KEY}"
    ))
    .unwrap();
    assert_hidden(&format!("{spec:?}"), PASS);
    assert_hidden(&format!("{spec:?}"), URL_KEY);
}
