//! OpenTelemetry traces of a run, as a user turns them on (`OTEL_EXPORTER_OTLP_ENDPOINT`), received by a local
//! OTLP/HTTP collector over real HTTP: GenAI spans for the agent, each model call and each tool call.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::HashMap;

use common::*;
use serde_json::Value;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

async fn collector() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/traces"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    server
}

/// Every span the collector received.
async fn spans(collector: &MockServer) -> Vec<Value> {
    let mut spans = Vec::new();
    for request in collector.received_requests().await.unwrap() {
        assert_eq!(
            request.headers.get("content-type").unwrap(),
            "application/json"
        );
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        for resource in body["resourceSpans"].as_array().unwrap() {
            let service = &resource["resource"]["attributes"][0];
            assert_eq!(service["key"], "service.name");
            assert_eq!(service["value"]["stringValue"], "steward");
            for scope in resource["scopeSpans"].as_array().unwrap() {
                spans.extend(scope["spans"].as_array().unwrap().iter().cloned());
            }
        }
    }
    spans
}

fn attributes(span: &Value) -> HashMap<String, Value> {
    span["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["key"].as_str().unwrap().to_owned(), a["value"].clone()))
        .collect()
}

fn string(span: &Value, key: &str) -> String {
    attributes(span)[key]["stringValue"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_run_is_traced_with_genai_spans_for_the_agent_its_model_calls_and_its_tools() {
    let model = mock_openai(vec![
        tool_reply("call_calc", "calculator", r#"{"expression": "5 * 1.2"}"#),
        tool_reply("call_bad", "calculator", r#"{"expression": "1 +"}"#),
        tool_reply(
            "call_inv",
            "calculator",
            r#"{"expr": "secret_argument_4242"}"#,
        ),
        text_reply("5 * 1.2 = 6."),
    ])
    .await;
    let collector = collector().await;
    let out = steward(
        &["ask", "What is 5 * 1.2?"],
        &[
            ("OPENAI_BASE_URL", &format!("{}/v1", model.uri())),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.uri()),
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let spans = spans(&collector).await;
    let named = |prefix: &str| -> Vec<&Value> {
        spans
            .iter()
            .filter(|s| s["name"].as_str().unwrap().starts_with(prefix))
            .collect()
    };
    let agents = named("invoke_agent ");
    assert_eq!(agents.len(), 1, "{spans:#?}");
    let agent = agents[0];
    assert_eq!(string(agent, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(string(agent, "steward.surface"), "cli");
    assert_eq!(string(agent, "steward.outcome"), "answered");
    assert_eq!(agent["status"]["code"], 0);
    assert!(agent.get("parentSpanId").is_none());

    let chats = named("chat ");
    assert_eq!(chats.len(), 4, "{spans:#?}");
    for chat in &chats {
        assert_eq!(chat["parentSpanId"], agent["spanId"]);
        assert_eq!(chat["traceId"], agent["traceId"]);
        assert_eq!(chat["kind"], 3);
        assert_eq!(string(chat, "gen_ai.operation.name"), "chat");
        assert_eq!(chat["name"], "chat gpt-4o-mini");
        assert_eq!(string(chat, "gen_ai.request.model"), "gpt-4o-mini");
        assert_eq!(string(chat, "gen_ai.provider.name"), "openai");
        let attributes = attributes(chat);
        assert!(attributes.contains_key("gen_ai.usage.input_tokens"));
        assert!(attributes.contains_key("gen_ai.response.finish_reasons"));
    }
    let tools = named("execute_tool ");
    assert_eq!(tools.len(), 3, "{spans:#?}");
    let by_call: HashMap<String, &Value> = tools
        .iter()
        .map(|t| (string(t, "gen_ai.tool.call.id"), *t))
        .collect();
    let good = by_call["call_calc"];
    assert_eq!(good["name"], "execute_tool calculator");
    assert_eq!(string(good, "gen_ai.tool.name"), "calculator");
    assert_eq!(good["parentSpanId"], agent["spanId"]);
    assert_eq!(good["status"]["code"], 0);
    // A call the tool fails is an error span, and one whose arguments do not fit the schema (refused before it
    // runs: no `tool_call` event) too; their status says which, never the tool's or the arguments' text.
    let bad = by_call["call_bad"];
    assert_eq!(bad["status"]["code"], 2, "{bad:#}");
    assert_eq!(bad["status"]["message"], "tool_error", "{bad:#}");
    let invalid = by_call["call_inv"];
    assert_eq!(invalid["status"]["code"], 2, "{invalid:#}");
    assert_eq!(invalid["status"]["message"], "invalid_arguments");
    assert_eq!(string(invalid, "steward.decision"), "invalid");
    assert_eq!(invalid["parentSpanId"], agent["spanId"]);
    let all = serde_json::to_string(&spans).unwrap();
    for secret in [
        "secret_argument_4242",
        "1 +",
        "What is 5 * 1.2",
        "5 * 1.2 = 6.",
    ] {
        assert!(!all.contains(secret), "{secret} reached the collector");
    }
    let mut ids: Vec<&str> = spans
        .iter()
        .map(|s| s["spanId"].as_str().unwrap())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), spans.len(), "span ids are unique");
    for span in &spans {
        let start: u128 = span["startTimeUnixNano"].as_str().unwrap().parse().unwrap();
        let end: u128 = span["endTimeUnixNano"].as_str().unwrap().parse().unwrap();
        assert!(start > 0 && end >= start, "{span:#}");
        assert_eq!(span["traceId"].as_str().unwrap().len(), 32);
        assert_eq!(span["spanId"].as_str().unwrap().len(), 16);
    }
}

#[tokio::test]
async fn a_collector_that_is_down_costs_the_run_nothing() {
    let model = mock_openai(vec![text_reply("Hello!")]).await;
    let out = steward(
        &["ask", "Hi"],
        &[
            ("OPENAI_BASE_URL", &format!("{}/v1", model.uri())),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9"),
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Hello!\n");
}

#[test]
fn a_protocol_steward_does_not_speak_is_refused_with_what_to_do() {
    let out = steward(
        &["ask", "Hi"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ],
        "",
    );
    let stderr = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("OTEL_EXPORTER_OTLP_PROTOCOL") && stderr.contains("4318"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_tool_called_directly_is_traced_too() {
    let collector = collector().await;
    let out = steward(
        &["tools", "call", "calculator", r#"{"expression": "1 + 1"}"#],
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.uri())],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let spans = spans(&collector).await;
    assert_eq!(spans.len(), 1, "{spans:#?}");
    let span = &spans[0];
    assert_eq!(span["name"], "execute_tool calculator");
    assert_eq!(string(span, "gen_ai.tool.name"), "calculator");
    assert_eq!(string(span, "steward.surface"), "cli");
    assert_eq!(span["status"]["code"], 0);
    assert!(span.get("parentSpanId").is_none());
}
