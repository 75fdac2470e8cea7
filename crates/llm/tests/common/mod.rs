//! Shared by the provider tests: fixtures (provider-accurate payloads), scripted HTTP responders and requests.
#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use steward_core::{Message, ModelRequest, StreamDelta, ToolCall, ToolSpec};
use steward_llm::{HttpOptions, RetryNotice, RetryPolicy, Timeouts};
use wiremock::{Request, Respond, ResponseTemplate};

pub fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub fn json_reply(name: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(fixture(name), "application/json")
}

pub fn sse_reply(name: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(fixture(name), "text/event-stream")
}

/// Plays responses in order; the last one repeats.
pub struct Sequence(Mutex<VecDeque<ResponseTemplate>>);

impl Sequence {
    pub fn new(responses: impl IntoIterator<Item = ResponseTemplate>) -> Self {
        Self(Mutex::new(responses.into_iter().collect()))
    }
}

impl Respond for Sequence {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let mut queue = self.0.lock().unwrap();
        if queue.len() > 1 {
            queue.pop_front().unwrap()
        } else {
            queue
                .front()
                .cloned()
                .unwrap_or_else(|| ResponseTemplate::new(500))
        }
    }
}

pub fn tools() -> Arc<[ToolSpec]> {
    vec![
        ToolSpec::new(
            "current_date",
            "Today's date.",
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        ),
        ToolSpec::new(
            "calculator",
            "Evaluates an arithmetic expression.",
            json!({"type": "object", "properties": {"expression": {"type": "string", "description": "The expression."}},
                   "required": ["expression"], "additionalProperties": false}),
        ),
    ]
    .into()
}

/// A request with every kind of message: instructions, a question, a tool call and its result.
pub fn request() -> ModelRequest {
    ModelRequest::new(
        vec![
            Message::system("You are careful."),
            Message::user("What is 5 * 1.2?"),
            Message::assistant_calls(
                Some("Let me compute.".into()),
                vec![ToolCall::new(
                    "call_1",
                    "calculator",
                    r#"{"expression":"5 * 1.2"}"#,
                )],
            ),
            Message::tool("call_1", "calculator", "5 * 1.2 = 6", false),
        ],
        tools(),
    )
}

/// Short delays so retry tests stay quick.
pub fn fast_http(notices: &Arc<Mutex<Vec<RetryNotice>>>) -> HttpOptions {
    let notices = notices.clone();
    HttpOptions {
        timeouts: Timeouts {
            first_byte: Duration::from_secs(5),
            ..Timeouts::default()
        },
        retry: RetryPolicy {
            max_retries: 3,
            initial_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(50),
            max_retry_after: Duration::from_secs(5),
        },
        on_retry: Some(Arc::new(move |n: &RetryNotice| {
            notices.lock().unwrap().push(n.clone())
        })),
    }
}

/// Collects streamed deltas.
#[derive(Default)]
pub struct Deltas(pub Mutex<Vec<StreamDelta>>);

impl Deltas {
    pub fn sink(&self) -> impl Fn(StreamDelta) + Send + Sync + '_ {
        move |d| self.0.lock().unwrap().push(d)
    }
    pub fn text(&self) -> String {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter_map(|d| match d {
                StreamDelta::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }
    pub fn tools_started(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter_map(|d| match d {
                StreamDelta::ToolCallStarted { name } => Some(name.clone()),
                _ => None,
            })
            .collect()
    }
}

pub async fn body_of(server: &wiremock::MockServer, index: usize) -> Value {
    let requests = server.received_requests().await.unwrap();
    serde_json::from_slice(&requests[index].body).unwrap()
}

pub fn args(call: &ToolCall) -> Value {
    serde_json::from_str(&call.arguments).unwrap()
}
