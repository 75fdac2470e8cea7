//! Answers stream to a terminal as the model writes them, with their Markdown rendered; a pipe gets the
//! answer as it is. The terminal is a real pseudo-terminal (util-linux `script`), the model a local mock that
//! speaks OpenAI's server-sent events.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;
use wiremock::ResponseTemplate;

/// An OpenAI streamed completion writing `pieces`.
fn streamed(pieces: &[&str]) -> ResponseTemplate {
    let mut body = String::new();
    let chunk = |delta: serde_json::Value, finish: serde_json::Value| {
        json!({"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    body.push_str(&format!(
        "data: {}\n\n",
        chunk(json!({"role": "assistant", "content": ""}), json!(null))
    ));
    for piece in pieces {
        body.push_str(&format!(
            "data: {}\n\n",
            chunk(json!({"content": piece}), json!(null))
        ));
    }
    body.push_str(&format!("data: {}\n\n", chunk(json!({}), json!("stop"))));
    body.push_str(&format!(
        "data: {}\n\ndata: [DONE]\n\n",
        json!({"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini",
               "choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 12, "total_tokens": 112}})
    ));
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

/// Runs `steward ARGS` (a shell line) on a pseudo-terminal (`script` gives it one and copies what it shows to
/// our pipe) with the model at `base`; what the terminal showed, once it exited 0.
fn on_a_terminal(args: &str, base: &str) -> String {
    let steward = env!("CARGO_BIN_EXE_steward");
    let command = format!("{steward} {args}");
    let output = isolated(
        "script",
        &["-qec", &command, "/dev/null"],
        &[("OPENAI_BASE_URL", base)],
    )
    .output()
    .unwrap();
    let shown = text(&output.stdout).replace("\r\n", "\n");
    assert_eq!(output.status.code(), Some(0), "{shown}");
    shown
}

const PIECES: &[&str] = &["Order **4", "2** is ", "`shipped`.\n", "- one\n-", " two"];
const ANSWER: &str = "Order **42** is `shipped`.\n- one\n- two";

#[tokio::test]
async fn a_terminal_gets_the_answer_streamed_and_rendered_once() {
    let server = mock_openai(vec![streamed(PIECES)]).await;
    let base = format!("{}/v1", server.uri());
    let shown = on_a_terminal("ask --no-store 'Where is order 42?' 2>/dev/null", &base);
    assert_eq!(shown, "Order 42 is `shipped`.\n• one\n• two\n");
    let bodies = bodies(&server).await;
    assert_eq!(
        bodies[0]["stream"], true,
        "the terminal run asked for a stream"
    );
}

#[tokio::test]
async fn a_pipe_gets_the_answer_as_it_is() {
    let server = mock_openai(vec![text_reply(ANSWER)]).await;
    let base = format!("{}/v1", server.uri());
    let out = steward(
        &["ask", "--no-store", "Where is order 42?"],
        &[("OPENAI_BASE_URL", &base)],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("{ANSWER}\n"));
    assert_ne!(bodies(&server).await[0]["stream"], true);
}

/// A reply that says something before it calls a tool is shown once on a terminal with `--trace`: streamed as
/// it comes, not again as the step's thought.
#[tokio::test]
async fn text_before_a_tool_call_is_shown_once_with_the_trace() {
    let chunk = |delta: serde_json::Value, finish: serde_json::Value| {
        json!({"id": "chatcmpl-t", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut body = String::new();
    for (delta, finish) in [
        (
            json!({"role": "assistant", "content": "Let me look up the date."}),
            json!(null),
        ),
        (
            json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                   "function": {"name": "current_date", "arguments": "{}"}}]}),
            json!(null),
        ),
        (json!({}), json!("tool_calls")),
    ] {
        body.push_str(&format!("data: {}\n\n", chunk(delta, finish)));
    }
    body.push_str("data: [DONE]\n\n");
    let first = ResponseTemplate::new(200).set_body_raw(body, "text/event-stream");
    let server = mock_openai(vec![first, streamed(&["It is Saturday."])]).await;
    let base = format!("{}/v1", server.uri());
    let shown = on_a_terminal("ask --no-store --trace 'What day is it?' 2>&1", &base);
    assert_eq!(
        shown.matches("Let me look up the date.").count(),
        1,
        "{shown}"
    );
    assert!(shown.contains("call current_date"), "{shown}");
    assert!(shown.contains("It is Saturday."), "{shown}");
}
