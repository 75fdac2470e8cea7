//! OpenAI-compatible local servers over real HTTP, each with its known quirks: Ollama, vLLM, llama.cpp's
//! server and servers that ignore `stream: true`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;
use steward_core::{FinishReason, Model};
use steward_llm::{OpenAiConfig, OpenAiModel};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn ollama(server: &MockServer) -> OpenAiModel {
    OpenAiModel::new(OpenAiConfig::ollama(
        "qwen2.5:7b",
        Some(format!("{}/v1", server.uri())),
    ))
    .unwrap()
}

fn compatible(server: &MockServer, model: &str) -> OpenAiModel {
    OpenAiModel::new(OpenAiConfig::compatible(
        model,
        format!("{}/v1", server.uri()),
        None,
    ))
    .unwrap()
}

#[tokio::test]
async fn ollama_tool_calls_without_auth_and_with_max_tokens() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(json_reply("ollama_tool_calls.json"))
        .mount(&server)
        .await;
    let m = ollama(&server);
    assert_eq!(m.name(), "ollama:qwen2.5:7b");
    let mut req = request();
    req.max_output_tokens = Some(256);
    let reply = m.complete(&req).await.unwrap();
    assert_eq!(reply.tool_calls[0].name, "current_date");
    assert_eq!(reply.content, None, "an empty content is no content");
    let requests = server.received_requests().await.unwrap();
    assert!(requests[0].headers.get("authorization").is_none());
    let body = body_of(&server, 0).await;
    assert_eq!(
        body["max_tokens"], 256,
        "local servers get max_tokens, not max_completion_tokens"
    );
}

#[tokio::test]
async fn ollama_stream_with_whole_call_in_one_delta_and_stop_reason() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(sse_reply("ollama_stream_tool_calls.sse"))
        .mount(&server)
        .await;
    let deltas = Deltas::default();
    let reply = ollama(&server)
        .stream(&request(), &deltas.sink())
        .await
        .unwrap();
    assert_eq!(reply.tool_calls.len(), 1);
    assert_eq!(args(&reply.tool_calls[0]), json!({"expression": "5 * 1.2"}));
    assert_eq!(
        reply.finish_reason,
        FinishReason::ToolCalls,
        "`stop` with tool calls means tool calls"
    );
    assert_eq!(reply.usage.total(), 234);
}

#[tokio::test]
async fn vllm_tool_call_printed_in_content_becomes_a_tool_call() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json_reply("vllm_tool_call_in_content.json"))
        .mount(&server)
        .await;
    let reply = compatible(&server, "Qwen/Qwen2.5-7B-Instruct")
        .complete(&request())
        .await
        .unwrap();
    assert_eq!(reply.content, None);
    assert_eq!(reply.tool_calls.len(), 1);
    assert_eq!(reply.tool_calls[0].name, "calculator");
    assert_eq!(args(&reply.tool_calls[0]), json!({"expression": "47^0.23"}));
    assert!(
        !reply.tool_calls[0].id.is_empty(),
        "a missing id is synthesised"
    );
    assert_eq!(reply.extra["tool_calls_from_text"], true);
}

#[tokio::test]
async fn llamacpp_missing_ids_object_arguments_and_empty_finish_reason() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json_reply("llamacpp_missing_ids.json"))
        .mount(&server)
        .await;
    let reply = compatible(&server, "local")
        .complete(&request())
        .await
        .unwrap();
    assert_eq!(reply.tool_calls.len(), 2);
    assert!(reply.tool_calls.iter().all(|c| c.id.starts_with("call_")));
    assert_ne!(reply.tool_calls[0].id, reply.tool_calls[1].id);
    assert_eq!(
        args(&reply.tool_calls[0]),
        json!({}),
        "arguments sent as an object"
    );
    assert_eq!(args(&reply.tool_calls[1]), json!({"expression": "2+2"}));
    assert_eq!(reply.finish_reason, FinishReason::ToolCalls);
    assert_eq!(reply.extra["finish_reason"], "");
}

#[tokio::test]
async fn llamacpp_stream_with_every_call_at_index_zero_and_eos() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(sse_reply("llamacpp_stream_index0.sse"))
        .mount(&server)
        .await;
    let reply = compatible(&server, "local")
        .stream(&request(), &|_| {})
        .await
        .unwrap();
    let calls: Vec<_> = reply
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), args(c)))
        .collect();
    assert_eq!(
        calls,
        [
            ("call_one", "current_date", json!({})),
            ("call_two", "calculator", json!({"expression": "2+2"})),
        ]
    );
    assert_eq!(
        reply.finish_reason,
        FinishReason::ToolCalls,
        "`eos` after tool calls"
    );
    assert_eq!(reply.usage.total(), 211);
}

#[tokio::test]
async fn a_server_that_ignores_stream_true_still_works() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json_reply("openai_text.json"))
        .mount(&server)
        .await;
    let deltas = Deltas::default();
    let reply = compatible(&server, "local")
        .stream(&request(), &deltas.sink())
        .await
        .unwrap();
    assert_eq!(
        reply.content.as_deref(),
        Some("Today is Saturday, 21 November 2026.")
    );
    assert_eq!(deltas.text(), "Today is Saturday, 21 November 2026.");
}

#[tokio::test]
async fn plain_json_answers_are_not_mistaken_for_tool_calls() {
    let server = MockServer::start().await;
    let body = json!({"choices": [{"message": {"role": "assistant", "content": "{\"name\": \"Ada\", \"total\": 3}"}, "finish_reason": "stop"}]});
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(&server)
        .await;
    let reply = compatible(&server, "local")
        .complete(&request())
        .await
        .unwrap();
    assert!(reply.tool_calls.is_empty());
    assert_eq!(
        reply.content.as_deref(),
        Some("{\"name\": \"Ada\", \"total\": 3}")
    );
}

#[tokio::test]
async fn vllm_stream_with_a_tool_call_printed_in_content() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(sse_reply("vllm_stream_tool_call_in_content.sse"))
        .mount(&server)
        .await;
    let reply = compatible(&server, "Qwen/Qwen2.5-7B-Instruct")
        .stream(&request(), &|_| {})
        .await
        .unwrap();
    assert_eq!(reply.content, None);
    assert_eq!(reply.tool_calls.len(), 1);
    assert_eq!(args(&reply.tool_calls[0]), json!({"expression": "2+2"}));
    assert_eq!(reply.finish_reason, FinishReason::ToolCalls);
    assert_eq!(reply.usage.total(), 330);
}
