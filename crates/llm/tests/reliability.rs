//! Retries, timeouts and broken replies over real HTTP: what is retried, what is not, and what the error says.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use steward_core::{Model, ModelError};
use steward_llm::{
    AnthropicConfig, AnthropicModel, OpenAiConfig, OpenAiModel, RetryNotice, Secret, Timeouts,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn openai(base: String, notices: &Arc<Mutex<Vec<RetryNotice>>>) -> OpenAiModel {
    let mut config = OpenAiConfig::openai(
        "gpt-4o-mini",
        Some(Secret::new("sk-secret-XYZ")),
        Some(base),
    );
    config.http = fast_http(notices);
    OpenAiModel::new(config).unwrap()
}

async fn served(server: &MockServer) -> usize {
    server.received_requests().await.unwrap().len()
}

#[tokio::test]
async fn rate_limited_with_retry_after_then_success() {
    let server = MockServer::start().await;
    let limited = ResponseTemplate::new(429)
        .insert_header("retry-after", "1")
        .set_body_raw(
            r#"{"error": {"message": "Rate limit reached for gpt-4o-mini", "type": "requests", "param": null, "code": "rate_limit_exceeded"}}"#,
            "application/json",
        );
    Mock::given(method("POST"))
        .respond_with(Sequence::new([limited, json_reply("openai_text.json")]))
        .mount(&server)
        .await;
    let notices = Arc::new(Mutex::new(Vec::new()));
    let reply = openai(server.uri(), &notices)
        .complete(&request())
        .await
        .unwrap();
    assert_eq!(
        reply.content.as_deref(),
        Some("Today is Saturday, 21 November 2026.")
    );
    assert_eq!(served(&server).await, 2);
    let notices = notices.lock().unwrap();
    assert_eq!(notices.len(), 1);
    assert_eq!(
        notices[0].delay,
        Duration::from_secs(1),
        "Retry-After is honoured"
    );
    assert_eq!(notices[0].attempt, 1);
    assert!(
        notices[0]
            .reason
            .contains("HTTP 429: Rate limit reached for gpt-4o-mini (requests)"),
        "{}",
        notices[0].reason
    );
}

#[tokio::test]
async fn server_errors_twice_then_success() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Sequence::new([
            ResponseTemplate::new(500).set_body_string("upstream exploded"),
            ResponseTemplate::new(503).set_body_string(""),
            json_reply("openai_text.json"),
        ]))
        .mount(&server)
        .await;
    let notices = Arc::new(Mutex::new(Vec::new()));
    openai(server.uri(), &notices)
        .complete(&request())
        .await
        .unwrap();
    assert_eq!(served(&server).await, 3);
    let notices = notices.lock().unwrap();
    assert_eq!(
        notices.iter().map(|n| n.attempt).collect::<Vec<_>>(),
        [1, 2]
    );
    assert!(
        notices.iter().all(|n| n.delay <= Duration::from_millis(50)),
        "backoff within the policy"
    );
    assert!(notices[0].reason.contains("HTTP 500: upstream exploded"));
}

#[tokio::test]
async fn persistent_overload_gives_up_after_the_retry_limit() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(529)
                .set_body_raw(fixture("anthropic_overloaded.json"), "application/json"),
        )
        .mount(&server)
        .await;
    let notices = Arc::new(Mutex::new(Vec::new()));
    let mut config =
        AnthropicConfig::new("claude-sonnet-4-5", Secret::new("k"), Some(server.uri()));
    config.http = fast_http(&notices);
    let err = AnthropicModel::new(config)
        .unwrap()
        .complete(&request())
        .await
        .unwrap_err();
    assert_eq!(served(&server).await, 4, "one attempt and three retries");
    assert_eq!(
        err,
        ModelError::Status {
            provider: "anthropic".into(),
            status: 529,
            message: "Overloaded (overloaded_error)".into()
        }
    );
}

#[tokio::test]
async fn client_errors_are_not_retried_and_keys_never_show() {
    let server = MockServer::start().await;
    // OpenAI echoes part of a wrong key; a proxy might echo all of it.
    let body = r#"{"error": {"message": "Incorrect API key provided: sk-secret-XYZ. You can find your API key at https://platform.openai.com/account/api-keys.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}"#;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_raw(body, "application/json"))
        .mount(&server)
        .await;
    let notices = Arc::new(Mutex::new(Vec::new()));
    let err = openai(server.uri(), &notices)
        .complete(&request())
        .await
        .unwrap_err();
    assert_eq!(served(&server).await, 1);
    let text = err.to_string();
    assert!(
        text.starts_with("openai: HTTP 401: Incorrect API key provided: [redacted]."),
        "{text}"
    );
    assert!(text.ends_with("Check the API key."), "{text}");
    assert!(!text.contains("sk-secret-XYZ"));
    assert!(!format!("{err:?}").contains("sk-secret-XYZ"));
}

#[tokio::test]
async fn a_slow_server_times_out_with_a_clear_error() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json_reply("openai_text.json").set_delay(Duration::from_secs(10)))
        .mount(&server)
        .await;
    let notices = Arc::new(Mutex::new(Vec::new()));
    let mut config = OpenAiConfig::openai("gpt-4o-mini", None, Some(server.uri()));
    config.http = fast_http(&notices);
    config.http.timeouts = Timeouts {
        first_byte: Duration::from_millis(300),
        ..Timeouts::default()
    };
    let err = OpenAiModel::new(config)
        .unwrap()
        .complete(&request())
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ModelError::Timeout {
            provider: "openai".into(),
            limit: "first byte".into(),
            after: Duration::from_millis(300)
        }
    );
    assert_eq!(
        err.to_string(),
        "openai: no reply within the first byte time limit of 300ms"
    );
}

#[tokio::test]
async fn a_malformed_body_names_the_provider_and_quotes_it() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw("<html>Bad Gateway</html>", "text/html"),
        )
        .mount(&server)
        .await;
    let notices = Arc::new(Mutex::new(Vec::new()));
    let err = openai(server.uri(), &notices)
        .complete(&request())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("openai: unexpected response: the body is not a chat completion"),
        "{err}"
    );
    assert!(err.contains("<html>Bad Gateway</html>"), "{err}");
}

#[tokio::test]
async fn a_stream_that_ends_early_is_an_error() {
    let server = MockServer::start().await;
    let text = fixture("openai_stream_text.sse");
    let cut: String = text.lines().take(4).map(|l| format!("{l}\n")).collect();
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(cut, "text/event-stream"))
        .mount(&server)
        .await;
    let notices = Arc::new(Mutex::new(Vec::new()));
    let err = openai(server.uri(), &notices)
        .stream(&request(), &|_| {})
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("the stream ended before the reply was complete"),
        "{err}"
    );
}

#[tokio::test]
async fn a_connection_cut_in_the_middle_of_a_stream_is_an_error() {
    // A raw server that sends headers and half a chunked body, then drops the connection.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 65536];
        let _ = socket.read(&mut buf).await;
        let event = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n";
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{event}\r\n",
            event.len()
        );
        socket.write_all(head.as_bytes()).await.unwrap();
        socket.flush().await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        drop(socket);
    });
    let notices = Arc::new(Mutex::new(Vec::new()));
    let deltas = Deltas::default();
    let err = openai(format!("http://{addr}"), &notices)
        .stream(&request(), &deltas.sink())
        .await
        .unwrap_err();
    assert_eq!(deltas.text(), "Hel", "what arrived was passed on");
    match err {
        ModelError::Transport { provider, message } => {
            assert_eq!(provider, "openai");
            assert!(message.starts_with("the reply was cut off"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_unreachable_server_is_retried_then_reported() {
    // Nothing listens on this port: connection refused on every attempt.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let notices = Arc::new(Mutex::new(Vec::new()));
    let err = openai(format!("http://127.0.0.1:{port}/v1"), &notices)
        .complete(&request())
        .await
        .unwrap_err();
    assert_eq!(notices.lock().unwrap().len(), 3);
    let text = err.to_string();
    assert!(text.starts_with("openai: "), "{text}");
    assert!(
        text.contains("Is the server running and the base URL right?"),
        "{text}"
    );
}

fn llama_server(base: String, notices: &Arc<Mutex<Vec<RetryNotice>>>) -> OpenAiModel {
    let mut config = OpenAiConfig::compatible("smollm2", base, None);
    config.http = fast_http(notices);
    OpenAiModel::new(config).unwrap()
}

fn bodies_of(requests: &[wiremock::Request]) -> Vec<serde_json::Value> {
    requests
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

/// llama-cpp-python's server answers 500 to a `response_format` it does not take and to a message its chat
/// template cannot read: not retried (the same request fails the same way), and never as a wait.
#[tokio::test]
async fn a_500_that_is_the_requests_fault_is_not_retried() {
    for text in [
        r#"{"error": {"message": "'dict object' has no attribute 'content'", "type": "internal_server_error"}}"#,
        r#"{"detail": [{"type": "literal_error", "msg": "Input should be 'text' or 'json_object'"}]}"#,
    ] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(500).set_body_raw(text, "application/json"))
            .mount(&server)
            .await;
        let notices = Arc::new(Mutex::new(Vec::new()));
        let err = llama_server(server.uri(), &notices)
            .complete(&request())
            .await
            .unwrap_err();
        assert!(
            matches!(err, ModelError::Status { status: 500, .. }),
            "{err}"
        );
        assert_eq!(served(&server).await, 1, "{text}");
    }
    // A 500 whose text says nothing: tried again once; the same text again ends it.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500).set_body_raw("boom", "text/plain"))
        .mount(&server)
        .await;
    let notices = Arc::new(Mutex::new(Vec::new()));
    let _ = llama_server(server.uri(), &notices)
        .complete(&request())
        .await;
    assert_eq!(served(&server).await, 2);
}

/// A server that refuses `json_schema` is asked with `json_object` and the schema, learned once: the next
/// call goes straight to the form it takes. A tool-calling assistant message carries `content` for a local
/// server; one that refuses the empty text gets it without.
#[tokio::test]
async fn the_forms_a_server_takes_are_learned_once() {
    let server = MockServer::start().await;
    let refused = ResponseTemplate::new(500).set_body_raw(
        r#"{"detail": [{"loc": ["body", "response_format", "type"], "msg": "Input should be 'text' or 'json_object'"}]}"#,
        "application/json",
    );
    Mock::given(method("POST"))
        .respond_with(Sequence::new([
            refused,
            json_reply("openai_text.json"),
            json_reply("openai_text.json"),
        ]))
        .mount(&server)
        .await;
    let notices = Arc::new(Mutex::new(Vec::new()));
    let model = llama_server(server.uri(), &notices);
    let mut asked = request();
    asked.response_format = Some(steward_core::ResponseFormat::JsonSchema {
        name: "step".into(),
        schema: serde_json::json!({"type": "object", "properties": {"answer": {"type": "string"}}}),
        strict: true,
    });
    model.complete(&asked).await.unwrap();
    model.complete(&asked).await.unwrap();
    let bodies = bodies_of(&server.received_requests().await.unwrap());
    assert_eq!(bodies.len(), 3);
    assert_eq!(bodies[0]["response_format"]["type"], "json_schema");
    for body in &bodies[1..] {
        assert_eq!(body["response_format"]["type"], "json_object", "{body}");
        assert_eq!(
            body["response_format"]["schema"]["type"], "object",
            "{body}"
        );
    }
    assert!(
        notices.lock().unwrap().is_empty(),
        "not a retry: a change of form"
    );

    // content: empty beside tool calls, then (refused) left out.
    let server = MockServer::start().await;
    let refused = ResponseTemplate::new(400).set_body_raw(
        r#"{"error": {"message": "messages[2].content: empty content is not allowed beside tool_calls"}}"#,
        "application/json",
    );
    Mock::given(method("POST"))
        .respond_with(Sequence::new([refused, json_reply("openai_text.json")]))
        .mount(&server)
        .await;
    let mut calls = request();
    calls.messages.push(steward_core::Message::assistant_calls(
        None,
        vec![steward_core::ToolCall::new("c9", "calculator", "{}")],
    ));
    calls
        .messages
        .push(steward_core::Message::tool("c9", "calculator", "6", false));
    llama_server(server.uri(), &notices)
        .complete(&calls)
        .await
        .unwrap();
    let bodies = bodies_of(&server.received_requests().await.unwrap());
    let last = bodies[0]["messages"].as_array().unwrap().len() - 2;
    assert_eq!(bodies[0]["messages"][last]["content"], "", "{}", bodies[0]);
    assert!(
        bodies[1]["messages"][last].get("content").is_none(),
        "{}",
        bodies[1]
    );
}

/// A streamed reply that stops coming names the idle limit, not the total.
#[tokio::test]
async fn a_stalled_stream_names_the_idle_limit() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 65536];
        let _ = socket.read(&mut buf).await;
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
        socket.write_all(head.as_bytes()).await.unwrap();
        tokio::time::sleep(Duration::from_secs(5)).await;
    });
    let notices = Arc::new(Mutex::new(Vec::new()));
    let mut config = OpenAiConfig::compatible("smollm2", format!("http://{addr}"), None);
    config.http = fast_http(&notices);
    config.http.timeouts.idle = Duration::from_millis(300);
    let err = OpenAiModel::new(config)
        .unwrap()
        .stream(&request(), &|_| {})
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ModelError::Timeout { limit, .. } if limit == "idle"),
        "{err}"
    );
    assert!(
        err.to_string().contains("idle time limit of 300ms"),
        "{err}"
    );
}
