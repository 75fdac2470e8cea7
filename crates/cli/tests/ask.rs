//! `steward ask` as a user runs it, against a local OpenAI-compatible mock over real HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::Value;

const DATE: &str = "2026-11-21 (Saturday), 09:30 UTC+01:00";

fn three_steps() -> Vec<wiremock::ResponseTemplate> {
    vec![
        tool_reply("call_date", "current_date", "{}"),
        tool_reply("call_calc", "calculator", r#"{"expression": "5 * 1.2"}"#),
        text_reply("Today is Saturday 21 November 2026; 5 * 1.2 = 6."),
    ]
}

#[tokio::test]
async fn ask_prints_the_answer_and_traces_every_step() {
    let server = mock_openai(three_steps()).await;
    let base = format!("{}/v1", server.uri());
    let out = steward(
        &["ask", "--trace", "What's the date, and what is 5 * 1.2?"],
        &[("OPENAI_BASE_URL", &base)],
        "",
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        stdout, "Today is Saturday 21 November 2026; 5 * 1.2 = 6.\n",
        "only the answer on stdout"
    );
    for expected in [
        "step 1 · openai:gpt-4o-mini",
        "call current_date {}",
        &format!("result current_date: {DATE}"),
        "step 2 · openai:gpt-4o-mini",
        "call calculator {\"expression\": \"5 * 1.2\"}",
        "result calculator: 5 * 1.2 = 6",
        "step 3 · openai:gpt-4o-mini",
        "answered · 3 steps · 555 tokens (500 in, 55 out) · $0.0001",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in:\n{stderr}"
        );
    }
    // The tool results went back to the model.
    let bodies = bodies(&server).await;
    assert_eq!(bodies.len(), 3);
    let last = bodies[2]["messages"].as_array().unwrap();
    assert_eq!(last[last.len() - 1]["content"], "5 * 1.2 = 6");
    assert_eq!(last[3]["content"], DATE);
    assert_eq!(bodies[0]["tools"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn ask_json_prints_answer_outcome_steps_usage_and_transcript() {
    let server = mock_openai(three_steps()).await;
    let base = format!("{}/v1", server.uri());
    let out = steward(
        &["ask", "--json", "What's the date?"],
        &[("OPENAI_BASE_URL", &base)],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        json["answer"],
        "Today is Saturday 21 November 2026; 5 * 1.2 = 6."
    );
    assert_eq!(json["outcome"], "answered");
    assert_eq!(json["steps"], 3);
    assert_eq!(json["usage"]["total_tokens"], 555);
    assert!(json["usage"]["cost_usd"].as_f64().unwrap() > 0.0);
    let messages = json["transcript"]["messages"].as_array().unwrap();
    let roles: Vec<_> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant"
        ]
    );
    assert_eq!(json["transcript"]["outcome"]["outcome"], "answered");
    assert!(
        text(&out.stderr).is_empty(),
        "no trace without --trace: {}",
        text(&out.stderr)
    );
}

#[tokio::test]
async fn the_question_can_come_from_stdin() {
    let server = mock_openai(vec![text_reply("Hello!")]).await;
    let base = format!("{}/v1", server.uri());
    let out = steward(&["ask", "-"], &[("OPENAI_BASE_URL", &base)], "Say hello\n");
    assert_eq!(text(&out.stdout), "Hello!\n");
    assert_eq!(
        bodies(&server).await[0]["messages"][1]["content"],
        "Say hello"
    );
}

#[test]
fn no_model_configured_explains_how_to_configure_one() {
    let out = steward(&["ask", "hello"], &[], "");
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("error: no model is configured."),
        "{stderr}"
    );
    for needle in [
        "--model SPEC",
        "STEWARD_MODEL",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "AZURE_OPENAI_ENDPOINT",
        "ollama:",
        "Ollama",
    ] {
        assert!(stderr.contains(needle), "{needle} missing: {stderr}");
    }
    assert!(out.stdout.is_empty());
}

#[test]
fn a_bad_model_spec_is_a_usage_error() {
    let out = steward(
        &["ask", "--model", "openai-compatible:llama3", "hello"],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(
            "invalid model `openai-compatible:llama3`: write it as openai-compatible:<model>@<base-url>"
        ),
        "{}",
        text(&out.stderr)
    );
    // A bare model name is OpenAI's here, which needs its key.
    let out = steward(&["ask", "--model", "gpt-4o", "hello"], &[], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("model `openai:gpt-4o` needs OPENAI_API_KEY"),
        "{}",
        text(&out.stderr)
    );
}

#[tokio::test]
async fn a_provider_error_exits_3_with_the_providers_text() {
    let server = mock_openai(vec![wiremock::ResponseTemplate::new(404).set_body_raw(
        r#"{"error": {"message": "The model `gpt-9` does not exist or you do not have access to it.", "type": "invalid_request_error", "code": "model_not_found"}}"#,
        "application/json",
    )])
    .await;
    let base = format!("{}/v1", server.uri());
    let out = steward(
        &["ask", "--model", "openai:gpt-9", "hi"],
        &[
            ("OPENAI_BASE_URL", &base),
            ("OPENAI_API_KEY", "sk-hidden-1"),
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(3));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("error: the model failed: openai: HTTP 404: The model `gpt-9` does not exist or you do not have access to it. (invalid_request_error) Check the model or deployment name and the base URL."),
        "{stderr}"
    );
    assert!(!stderr.contains("sk-hidden-1"));
}

#[tokio::test]
async fn hitting_the_step_limit_exits_1() {
    let server = mock_openai(vec![tool_reply("c", "current_date", "{}")]).await;
    let base = format!("{}/v1", server.uri());
    let out = steward(
        &["ask", "--max-steps", "2", "loop"],
        &[("OPENAI_BASE_URL", &base)],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("stopped after the limit of 2 steps"),
        "{}",
        text(&out.stderr)
    );
}

#[tokio::test]
async fn a_recorded_run_replays_and_a_changed_one_fails_with_the_diff() {
    let server = mock_openai(three_steps()).await;
    let base = format!("{}/v1", server.uri());
    let file = format!(
        "{}/ask-recording-{}.jsonl",
        env!("CARGO_TARGET_TMPDIR"),
        std::process::id()
    );
    let out = steward(
        &["ask", "--record", &file, "What's the date?"],
        &[("OPENAI_BASE_URL", &base)],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let replay = format!("replay:{file}");
    let out = steward(&["ask", "--model", &replay, "What's the date?"], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "Today is Saturday 21 November 2026; 5 * 1.2 = 6.\n"
    );

    let out = steward(&["ask", "--model", &replay, "What's the time?"], &[], "");
    assert_eq!(out.status.code(), Some(3));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("model call 1 of 3 differs from the recording"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "messages[1].content: recorded \"What's the date?\", now \"What's the time?\""
        ),
        "{stderr}"
    );
}

#[tokio::test]
async fn react_json_mode_works_with_a_model_without_tool_calling() {
    let server = mock_openai(vec![
        text_reply("{\"thought\": \"I need the date\", \"action\": {\"name\": \"current_date\", \"arguments\": {}}}"),
        text_reply("Here you go: {\"thought\": \"done\", \"final_answer\": \"It is Saturday.\"}"),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let spec = format!("openai-compatible:llama3@{base}");
    let out = steward(
        &[
            "ask",
            "--trace",
            "--mode",
            "react-json",
            "--model",
            &spec,
            "What day is it?",
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "It is Saturday.\n");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("thought I need the date"), "{stderr}");
    assert!(stderr.contains("call current_date {}"), "{stderr}");
    assert!(bodies(&server).await[0].get("tools").is_none());
}

/// The trace people read says a failed call in their words; the model is still told its own.
#[tokio::test]
async fn the_trace_says_a_failed_call_to_the_person() {
    let config = misconfigured_tool(
        "ask-failed-trace",
        "agents:\n  clerk:\n    description: Orders.\n    instructions: Answer about orders.\n    \
         tools: [orders_of]\n",
    );
    let server = mock_openai(vec![
        tool_reply("call_1", "orders_of", r#"{"customer": "a"}"#),
        text_reply("The orders cannot be read right now."),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let out = steward(
        &[
            "ask",
            "-c",
            &config,
            "--agent",
            "clerk",
            "--trace",
            "Orders of a?",
        ],
        &[("OPENAI_BASE_URL", &base)],
        "",
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(
            "failed orders_of: The database refused this tool's statement, so nothing was read: the tool's SQL \
             does not fit the database"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("tell the user"), "{stderr}");
    let bodies = bodies(&server).await;
    let told = bodies[1]["messages"].as_array().unwrap().last().unwrap()["content"].clone();
    assert!(
        told.as_str()
            .unwrap()
            .contains("tell the user the tool is misconfigured"),
        "{told}"
    );
}
