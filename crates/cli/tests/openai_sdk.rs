//! `/v1` as the official OpenAI Python SDK meets it (`crates/server/tests/openai/client.py`, pinned in a venv
//! the test makes): models listed and retrieved, a completion plain and streamed with and without
//! `stream_options.include_usage`, the same text each way, and every error as OpenAI's error object. The model
//! behind the agent is a local mock that streams OpenAI's server-sent events, text before a tool call included.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

#[path = "../../server/tests/mcp/python.rs"]
mod python;

use common::*;
use serde_json::{Value, json};
use wiremock::ResponseTemplate;

/// An OpenAI streamed completion: `text` in two pieces, then a call of `tool` when given, then the usage.
fn streamed(text: &str, tool: Option<(&str, Value)>) -> ResponseTemplate {
    let chunk = |delta: Value, finish: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "chatcmpl-m", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    let (head, tail) = text.split_at(text.len() / 2);
    let mut body = chunk(json!({"role": "assistant", "content": head}), Value::Null);
    body.push_str(&chunk(json!({"content": tail}), Value::Null));
    let finish = match tool {
        Some((name, arguments)) => {
            body.push_str(&chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                    "function": {"name": name, "arguments": arguments.to_string()}}]}),
                Value::Null,
            ));
            "tool_calls"
        }
        None => "stop",
    };
    body.push_str(&chunk(json!({}), json!(finish)));
    body.push_str(&format!(
        "data: {}\n\ndata: [DONE]\n\n",
        json!({"id": "chatcmpl-m", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini",
               "choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 12, "total_tokens": 112}})
    ));
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

fn run_client(python: &std::path::Path, base: &str) -> Value {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/tests/openai/client.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .args([base, "analyst", "How many orders are there?"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_openai_sdk_gets_one_answer_either_way_and_openai_errors() {
    let Some(python) = python::openai_python() else {
        return;
    };
    let (dir, db) = demo_in("openai-sdk");
    let config = format!("{dir}/steward.yaml");
    std::fs::write(&config, format!("databases:\n  shop: sqlite://{db}\n")).unwrap();
    let count = json!({"sql": "SELECT count(*) AS n FROM orders"});
    let turn = || {
        [
            streamed("Let me count them.", Some(("run_sql", count.clone()))),
            streamed("There are some orders.", None),
        ]
    };
    let model = mock_openai(turn().into_iter().chain(turn()).chain(turn()).collect()).await;
    let data = scratch_dir("openai-sdk-data");
    let server = serve(
        &config,
        &format!("sqlite://{data}/store.sqlite"),
        &format!("{}/v1", model.uri()),
        &data,
    );
    let before = chrono::Utc::now().timestamp() - 600;
    let out = tokio::task::spawn_blocking({
        let base = server.base.clone();
        move || run_client(&python, &base)
    })
    .await
    .unwrap();

    // Models: the agents, with a real creation time; one retrieved, a missing one a 404 with OpenAI's code.
    let models = out["models"].as_array().unwrap();
    assert!(models.iter().any(|m| m["id"] == "analyst"), "{models:?}");
    for m in models {
        assert_eq!(
            (m["object"].as_str(), m["owned_by"].as_str()),
            (Some("model"), Some("steward"))
        );
        assert!(m["created"].as_i64().unwrap() > before, "{m}");
    }
    assert_eq!(out["retrieved"]["id"], "analyst");
    let missing = &out["missing_model"];
    assert_eq!(missing["status"], 404, "{missing}");
    assert_eq!(missing["class"], "NotFoundError");
    assert_eq!(missing["code"], "model_not_found");
    assert_eq!(missing["type"], "invalid_request_error");
    assert!(
        missing["message"]
            .as_str()
            .unwrap()
            .contains("`no-such-agent`"),
        "{missing}"
    );

    // One answer, whichever way it is asked for: the text before the tool call, a blank line, the answer.
    let expected = "Let me count them.\n\nThere are some orders.";
    let plain = &out["plain"];
    assert_eq!(
        plain["choices"][0]["message"]["content"], expected,
        "{plain}"
    );
    assert_eq!(plain["choices"][0]["finish_reason"], "stop");
    assert_eq!(plain["object"], "chat.completion");
    assert!(
        plain["usage"]["total_tokens"].as_i64().unwrap() > 0,
        "{plain}"
    );
    let with_usage = &out["stream_usage"];
    assert_eq!(with_usage["content"], expected, "{with_usage}");
    assert_eq!(
        with_usage["finish"].as_array().unwrap().last().unwrap(),
        "stop"
    );
    assert!(
        with_usage["usage_before_last"]
            .as_array()
            .unwrap()
            .iter()
            .all(Value::is_null),
        "{with_usage}"
    );
    let last = &with_usage["last"];
    assert_eq!(last["choices"], json!([]), "{last}");
    assert_eq!(
        last["usage"], plain["usage"],
        "the same turn costs the same: {last}"
    );
    assert_eq!(
        with_usage["ids"].as_array().unwrap().len(),
        1,
        "{with_usage}"
    );
    assert!(with_usage["created"][0].as_i64().unwrap() > before);
    let stream = &out["stream"];
    assert_eq!(stream["content"], expected, "{stream}");
    assert_eq!(
        stream["usage"],
        json!([]),
        "no usage unless asked: {stream}"
    );
    assert_eq!(stream["empty_choices"], 0, "{stream}");

    // Errors through the SDK: its classes, OpenAI's fields.
    let unknown = &out["unknown_model"];
    assert_eq!(
        (unknown["status"].as_i64(), unknown["code"].as_str()),
        (Some(404), Some("model_not_found")),
        "{unknown}"
    );
    assert_eq!(unknown["param"], "model");
    let bad_role = &out["bad_role"];
    assert_eq!(bad_role["class"], "BadRequestError", "{bad_role}");
    assert_eq!(bad_role["type"], "invalid_request_error");
    assert!(
        bad_role["message"].as_str().unwrap().contains("wizard"),
        "{bad_role}"
    );
    assert_eq!(out["no_question"]["status"], 400, "{}", out["no_question"]);

    // Errors over plain HTTP: every one a JSON error object with a message, never a bare status or text.
    for (name, status) in [
        ("malformed", 400),
        ("no_content_type", 415),
        ("wrong_shape", 422),
        ("no_route", 404),
        ("wrong_method", 405),
    ] {
        let answer = &out[name];
        assert_eq!(answer["status"], status, "{name}: {answer}");
        assert_eq!(
            answer["content_type"], "application/json",
            "{name}: {answer}"
        );
        let error = &answer["body"]["error"];
        assert!(error.is_object(), "{name}: {answer}");
        assert!(
            !error["message"].as_str().unwrap().is_empty(),
            "{name}: {answer}"
        );
        assert_eq!(error["type"], "invalid_request_error", "{name}: {answer}");
        assert!(
            error.get("param").is_some() && error.get("code").is_some(),
            "{name}: {answer}"
        );
    }
    assert!(
        out["no_content_type"]["body"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("application/json"),
        "{}",
        out["no_content_type"]
    );
    // Said without wording about Rust types: which field, and what was wrong with it.
    let wrong = out["wrong_shape"]["body"]["error"]["message"]
        .as_str()
        .unwrap();
    assert!(
        wrong.starts_with(
            "the body does not have the expected fields: model: invalid type: integer `5`"
        ),
        "{wrong}"
    );
    assert!(!wrong.contains("target type"), "{wrong}");
    let malformed = out["malformed"]["body"]["error"]["message"]
        .as_str()
        .unwrap();
    assert!(
        malformed.starts_with("the body is not valid JSON"),
        "{malformed}"
    );
    drop(server);
}
