//! OpenAI chat completions over real HTTP against a local server replaying OpenAI's payloads.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;
use steward_core::{FinishReason, Model, ResponseFormat, ToolChoice};
use steward_llm::{OpenAiConfig, OpenAiModel, Secret};
use wiremock::matchers::{bearer_token, method, path};
use wiremock::{Mock, MockServer};

async fn model(server: &MockServer, strict: bool) -> OpenAiModel {
    let mut config = OpenAiConfig::openai(
        "gpt-4o-mini",
        Some(Secret::new("sk-test-123")),
        Some(format!("{}/v1", server.uri())),
    );
    config.strict_tools = strict;
    OpenAiModel::new(config).unwrap()
}

#[tokio::test]
async fn text_reply_with_usage_and_the_request_in_openai_form() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(bearer_token("sk-test-123"))
        .respond_with(json_reply("openai_text.json"))
        .expect(1)
        .mount(&server)
        .await;
    let m = model(&server, false).await;
    assert_eq!(m.name(), "openai:gpt-4o-mini");
    let reply = m.complete(&request()).await.unwrap();
    assert_eq!(
        reply.content.as_deref(),
        Some("Today is Saturday, 21 November 2026.")
    );
    assert_eq!(reply.finish_reason, FinishReason::Stop);
    assert_eq!(
        (reply.usage.input_tokens, reply.usage.output_tokens),
        (82, 11)
    );
    assert_eq!(
        reply.extra["system_fingerprint"], "fp_06737a9306",
        "unknown fields are kept"
    );

    let body = body_of(&server, 0).await;
    assert_eq!(body["model"], "gpt-4o-mini");
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "You are careful."},
            {"role": "user", "content": "What is 5 * 1.2?"},
            {"role": "assistant", "content": "Let me compute.", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "calculator", "arguments": "{\"expression\":\"5 * 1.2\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "5 * 1.2 = 6"}
        ])
    );
    assert_eq!(body["tools"][1]["function"]["name"], "calculator");
    assert_eq!(
        body["tools"][1]["function"]["parameters"]["required"],
        json!(["expression"])
    );
    assert!(body["tools"][1]["function"].get("strict").is_none());
    assert_eq!(body["tool_choice"], "auto");
    assert!(body.get("stream").is_none());
}

#[tokio::test]
async fn parallel_tool_calls() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json_reply("openai_parallel_tool_calls.json"))
        .mount(&server)
        .await;
    let reply = model(&server, false)
        .await
        .complete(&request())
        .await
        .unwrap();
    assert_eq!(reply.finish_reason, FinishReason::ToolCalls);
    assert_eq!(reply.content, None);
    let calls: Vec<_> = reply
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), args(c)))
        .collect();
    assert_eq!(
        calls,
        [
            ("call_8Ekb5TGBUG7ZW5dRIIbcOPmp", "current_date", json!({})),
            (
                "call_ZmVZW2dxmH1bXZ1XWj3XBjq0",
                "calculator",
                json!({"expression": "5 * 1.2"})
            ),
        ]
    );
}

#[tokio::test]
async fn streamed_tool_calls_are_reassembled_from_deltas() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(sse_reply("openai_stream_tool_calls.sse"))
        .mount(&server)
        .await;
    let deltas = Deltas::default();
    let reply = model(&server, false)
        .await
        .stream(&request(), &deltas.sink())
        .await
        .unwrap();
    assert_eq!(reply.tool_calls.len(), 2);
    assert_eq!(reply.tool_calls[0].id, "call_aaa111");
    assert_eq!(args(&reply.tool_calls[0]), json!({}));
    assert_eq!(reply.tool_calls[1].name, "calculator");
    assert_eq!(args(&reply.tool_calls[1]), json!({"expression": "5 * 1.2"}));
    assert_eq!(reply.finish_reason, FinishReason::ToolCalls);
    assert_eq!(reply.usage.total(), 188, "usage from the final chunk");
    assert_eq!(deltas.tools_started(), ["current_date", "calculator"]);
    let body = body_of(&server, 0).await;
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
}

#[tokio::test]
async fn streamed_text_arrives_in_pieces() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(sse_reply("openai_stream_text.sse"))
        .mount(&server)
        .await;
    let deltas = Deltas::default();
    let reply = model(&server, false)
        .await
        .stream(&request(), &deltas.sink())
        .await
        .unwrap();
    assert_eq!(reply.content.as_deref(), Some("Today is Saturday."));
    assert_eq!(deltas.text(), "Today is Saturday.");
    assert_eq!(deltas.0.lock().unwrap().len(), 2);
    assert_eq!(reply.usage.output_tokens, 5);
}

#[tokio::test]
async fn strict_tools_and_structured_output_settings_are_sent() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json_reply("openai_text.json"))
        .mount(&server)
        .await;
    let mut req = request();
    req.tool_choice = ToolChoice::Tool("calculator".into());
    req.response_format = Some(ResponseFormat::JsonSchema {
        name: "answer".into(),
        schema: json!({"type": "object", "properties": {"a": {"type": "string"}}}),
        strict: true,
    });
    req.max_output_tokens = Some(300);
    req.stop = vec!["Observation:".into()];
    model(&server, true).await.complete(&req).await.unwrap();
    let body = body_of(&server, 0).await;
    let function = &body["tools"][1]["function"];
    assert_eq!(function["strict"], true);
    assert_eq!(function["parameters"]["additionalProperties"], false);
    assert_eq!(
        body["tool_choice"],
        json!({"type": "function", "function": {"name": "calculator"}})
    );
    assert_eq!(body["response_format"]["type"], "json_schema");
    assert_eq!(body["response_format"]["json_schema"]["name"], "answer");
    assert_eq!(body["response_format"]["json_schema"]["strict"], true);
    assert_eq!(body["max_completion_tokens"], 300);
    assert_eq!(body["stop"], json!(["Observation:"]));
}
