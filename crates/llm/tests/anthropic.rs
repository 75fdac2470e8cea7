//! Anthropic's Messages API over real HTTP: tool_use blocks, merged tool_result turns, streaming.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;
use steward_core::{FinishReason, Message, Model, ToolCall};
use steward_llm::{AnthropicConfig, AnthropicModel, Secret};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer};

fn model(server: &MockServer) -> AnthropicModel {
    AnthropicModel::new(AnthropicConfig::new(
        "claude-sonnet-4-5",
        Secret::new("sk-ant-test"),
        Some(server.uri()),
    ))
    .unwrap()
}

#[tokio::test]
async fn tool_use_reply_and_the_request_in_anthropic_form() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", "sk-ant-test"))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(json_reply("anthropic_tool_use.json"))
        .expect(1)
        .mount(&server)
        .await;
    let mut req = request();
    // Two results for two calls, then a new user message: all must land in one user turn.
    req.messages = vec![
        Message::system("You are careful."),
        Message::user("Track a $5 coffee, 20% tax."),
        Message::assistant_calls(
            None,
            vec![
                ToolCall::new("toolu_1", "current_date", "{}"),
                ToolCall::new("toolu_2", "calculator", r#"{"expression":"5*1.2"}"#),
            ],
        ),
        Message::tool("toolu_1", "current_date", "2026-11-21", false),
        Message::tool("toolu_2", "calculator", "Division by zero.", true),
        Message::user("Go on."),
    ];
    let m = model(&server);
    assert_eq!(m.name(), "anthropic:claude-sonnet-4-5");
    let reply = m.complete(&req).await.unwrap();
    assert_eq!(
        reply.content.as_deref(),
        Some("I'll check today's date and compute the gross amount.")
    );
    assert_eq!(reply.finish_reason, FinishReason::ToolCalls);
    assert_eq!(reply.tool_calls[1].id, "toolu_01B7ZbwdqnS3v8k3pY4kQm2");
    assert_eq!(args(&reply.tool_calls[1]), json!({"expression": "5 * 1.2"}));
    assert_eq!(
        (reply.usage.input_tokens, reply.usage.output_tokens),
        (512, 96)
    );

    let body = body_of(&server, 0).await;
    assert_eq!(body["system"], "You are careful.");
    assert_eq!(body["max_tokens"], 4096);
    assert_eq!(
        body["tools"][1]["input_schema"]["required"],
        json!(["expression"])
    );
    assert_eq!(body["tool_choice"], json!({"type": "auto"}));
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "Track a $5 coffee, 20% tax."}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "current_date", "input": {}},
                {"type": "tool_use", "id": "toolu_2", "name": "calculator", "input": {"expression": "5*1.2"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "2026-11-21"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "Division by zero.", "is_error": true},
                {"type": "text", "text": "Go on."}
            ]}
        ])
    );
}

#[tokio::test]
async fn streamed_text_and_tool_input_are_reassembled() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(sse_reply("anthropic_stream.sse"))
        .mount(&server)
        .await;
    let deltas = Deltas::default();
    let reply = model(&server)
        .stream(&request(), &deltas.sink())
        .await
        .unwrap();
    assert_eq!(reply.content.as_deref(), Some("Let me work that out."));
    assert_eq!(deltas.text(), "Let me work that out.");
    assert_eq!(deltas.tools_started(), ["calculator"]);
    assert_eq!(reply.tool_calls.len(), 1);
    assert_eq!(reply.tool_calls[0].id, "toolu_01T1x1fJ34qAmk2tNTrN7Up6");
    assert_eq!(args(&reply.tool_calls[0]), json!({"expression": "47^0.23"}));
    assert_eq!(reply.finish_reason, FinishReason::ToolCalls);
    assert_eq!(
        (reply.usage.input_tokens, reply.usage.output_tokens),
        (472, 89)
    );
    assert_eq!(body_of(&server, 0).await["stream"], true);
}

#[tokio::test]
async fn an_error_event_in_the_stream_is_reported() {
    let server = MockServer::start().await;
    let body = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":3}}}\n\n\
                event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    Mock::given(method("POST"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_raw(body, "text/event-stream"))
        .mount(&server)
        .await;
    let err = model(&server)
        .stream(&request(), &|_| {})
        .await
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("anthropic: unexpected response:"), "{err}");
    assert!(err.contains("Overloaded (overloaded_error)"), "{err}");
}
