//! An OpenAI-compatible facade: `/v1/models` lists the agents the caller may run as models, and
//! `/v1/chat/completions` answers with one, so any chat front end or SDK that speaks the OpenAI API can talk
//! to a Steward agent. The earlier messages of the request are the conversation's history; the last user
//! message is the question. A run that waits for approval answers with what waits and how to decide it.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::State;
use axum::response::sse::{Event as SseEvent, Sse};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{Value, json};
use steward_core::{Message, Run};
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::state::{ApiError, Body, Settings, Shared};
use crate::turns::{self, Home};
use crate::wire::ServerEvent;

/// `POST /v1/chat/completions` (the fields Steward reads; others are ignored).
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct ChatRequest {
    /// The agent's name.
    model: String,
    /// The conversation: `system`, `user` and `assistant` messages, the last one the user's question.
    #[schema(value_type = Vec<Object>)]
    messages: Vec<Value>,
    /// Stream `chat.completion.chunk` events.
    #[serde(default)]
    stream: bool,
    /// Sampling temperature.
    #[serde(default)]
    temperature: Option<f32>,
    /// Most tokens in one reply of the model.
    #[serde(default)]
    max_tokens: Option<u32>,
    /// Same as `max_tokens` (newer clients).
    #[serde(default)]
    max_completion_tokens: Option<u32>,
}

/// A message's text: a string, or the text parts of an array.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// An error as OpenAI's API answers one: `{"error": {"message", "type", "param", "code"}}`, with the status
/// and headers (`Retry-After`) of the [`ApiError`].
fn openai_error(e: ApiError) -> Response {
    e.log();
    let kind = match &e {
        ApiError::BadRequest(_)
        | ApiError::NotFound(_)
        | ApiError::Unprocessable(_)
        | ApiError::PayloadTooLarge(_)
        | ApiError::UnsupportedMediaType(_) => "invalid_request_error",
        ApiError::Unauthorized(_) => "authentication_error",
        ApiError::Forbidden(_) => "permission_error",
        ApiError::TooManyRequests { .. } | ApiError::Unavailable { .. } => "rate_limit_error",
        _ => "api_error",
    };
    let body =
        json!({"error": {"message": e.message(), "type": kind, "param": null, "code": null}});
    (e.status(), e.headers(), Json(body)).into_response()
}

/// The agents the caller may run, as models.
#[utoipa::path(get, path = "/v1/models", tag = "openai", responses((status = 200, description = "Agents as models")))]
pub(crate) async fn models(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
) -> Json<Value> {
    let app = &shared.app;
    let data: Vec<Value> = app
        .agent_names()
        .filter(|name| app.may_run(&caller.principal, name).is_ok())
        .map(|name| json!({"id": name, "object": "model", "created": 0, "owned_by": "steward"}))
        .collect();
    Json(json!({"object": "list", "data": data}))
}

/// Answers the last user message with the agent named by `model`.
#[utoipa::path(post, path = "/v1/chat/completions", tag = "openai", request_body = ChatRequest,
    responses((status = 200, description = "A chat.completion, or chat.completion.chunk events when streaming")))]
pub(crate) async fn chat_completions(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Body(request): Body<ChatRequest>,
) -> Response {
    match answer(shared, caller, request).await {
        Ok(response) => response,
        Err(e) => openai_error(e),
    }
}

async fn answer(
    shared: Arc<Shared>,
    caller: Caller,
    request: ChatRequest,
) -> Result<Response, ApiError> {
    let mut history = Vec::new();
    let mut question = None;
    for (i, message) in request.messages.iter().enumerate() {
        let role = message.get("role").and_then(Value::as_str).unwrap_or("");
        let text = text_of(message.get("content").unwrap_or(&Value::Null));
        let last = i + 1 == request.messages.len();
        match role {
            "user" if last => question = Some(text),
            "user" => history.push(Message::user(text)),
            "assistant" => history.push(Message::assistant(text)),
            "system" | "developer" => history.push(Message::system(text)),
            "tool" => {}
            other => {
                return Err(ApiError::bad(format!(
                    "messages[{i}].role `{other}` is not one of system, user, assistant"
                )));
            }
        }
    }
    let Some(question) = question.filter(|q| !q.trim().is_empty()) else {
        return Err(ApiError::bad(
            "the last message must be the user's question (role `user`, with text)",
        ));
    };
    let settings = Settings {
        temperature: request.temperature,
        max_tokens: request.max_completion_tokens.or(request.max_tokens),
        ..Settings::default()
    };
    settings.check()?;
    // The client sends the conversation's earlier answers back with each request, and they may carry what earlier
    // turns read (a task title, a row): this turn's writes are held for review as if it had read it itself. (A
    // conversation of the API keeps that on the server, where it is known.)
    let tainted_by = history
        .iter()
        .any(|m| matches!(m, Message::Assistant { .. }))
        .then(|| EARLIER_ANSWERS.to_owned());
    let (mut turn, mut events) = turns::assemble(
        &shared,
        &caller.principal,
        &request.model,
        &settings,
        &question,
        &Home::Detached,
        tainted_by,
    )
    .await?;
    let run = turn.start(&history, &question, Run::generate_id());
    let id = format!("chatcmpl-{}", run.id());
    let model = request.model.clone();
    turns::spawn(shared.clone(), turn, run, Home::Detached);
    let created = chrono::Utc::now().timestamp();
    if !request.stream {
        let mut usage = json!({"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0});
        let mut text = None;
        let mut note = None;
        while let Some(event) = events.recv().await {
            if let ServerEvent::Changes { change_set, .. } = &event {
                note = Some(change_set.note());
            }
            if let ServerEvent::Usage {
                parent_run_id: None,
                input_tokens,
                output_tokens,
                total_tokens,
                ..
            } = &event
            {
                usage = json!({"prompt_tokens": input_tokens, "completion_tokens": output_tokens,
                               "total_tokens": total_tokens});
            }
            if let Some(t) = final_text(&event) {
                text = Some(t);
            }
        }
        let mut text = text.unwrap_or_else(|| "the run ended without an answer".to_owned());
        if let Some(note) = note {
            text = format!("{text}\n\n{note}");
        }
        return Ok(Json(json!({
            "id": id, "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": usage,
        }))
        .into_response());
    }
    let chunk = move |delta: Value, finish: Option<&str>| {
        json!({"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        .to_string()
    };
    let stream = async_stream(events, chunk);
    Ok(Sse::new(stream).into_response())
}

/// What a `/v1` turn with earlier answers in its messages counts as having read.
const EARLIER_ANSWERS: &str = "the earlier answers the client sent";

/// The text a last event gives the client: the answer, what waits for approval, or what went wrong.
fn final_text(event: &ServerEvent) -> Option<String> {
    match event {
        ServerEvent::Answer { content, .. } => Some(content.clone()),
        ServerEvent::Error { message, .. } => Some(format!("The run failed: {message}")),
        ServerEvent::Approval { approvals, .. } => {
            let calls: Vec<String> = approvals
                .iter()
                .map(|a| {
                    format!(
                        "- {} {} (approval {}): {} — decide with POST /api/approvals/{}",
                        a.tool, a.arguments, a.id, a.reason, a.id
                    )
                })
                .collect();
            Some(format!("This waits for approval:\n{}", calls.join("\n")))
        }
        _ => None,
    }
}

/// The streamed answer: the role, the top run's text as the model writes it, then whatever of the final
/// text was not streamed (a failure, an approval note, the change set saved), the finish reason and `[DONE]`.
fn async_stream(
    events: turns::Events,
    chunk: impl Fn(Value, Option<&str>) -> String + Send + 'static,
) -> impl futures_util::Stream<Item = Result<SseEvent, Infallible>> {
    struct State<F> {
        events: turns::Events,
        chunk: F,
        started: bool,
        /// The current step's streamed text of the top run.
        step_text: String,
        /// What the client is told after the answer: the change set the run saved.
        note: Option<String>,
        done: u8,
    }
    let state = State {
        events,
        chunk,
        started: false,
        step_text: String::new(),
        note: None,
        done: 0,
    };
    futures_util::stream::unfold(state, |mut s| async move {
        loop {
            if !s.started {
                s.started = true;
                let data = (s.chunk)(json!({"role": "assistant", "content": ""}), None);
                return Some((Ok(SseEvent::default().data(data)), s));
            }
            if s.done == 1 {
                s.done = 2;
                return Some((Ok(SseEvent::default().data("[DONE]")), s));
            }
            if s.done == 2 {
                return None;
            }
            let Some(event) = s.events.recv().await else {
                s.done = 1;
                let data = (s.chunk)(json!({}), Some("stop"));
                return Some((Ok(SseEvent::default().data(data)), s));
            };
            let top = event.parent_run_id().is_none();
            match &event {
                ServerEvent::Step { .. } if top => s.step_text.clear(),
                ServerEvent::Changes { change_set, .. } => s.note = Some(change_set.note()),
                ServerEvent::Delta { text, .. } if top => {
                    s.step_text.push_str(text);
                    let data = (s.chunk)(json!({"content": text}), None);
                    return Some((Ok(SseEvent::default().data(data)), s));
                }
                ServerEvent::Thought { .. } | ServerEvent::ToolCall { .. }
                    if top && !s.step_text.is_empty() =>
                {
                    // Text the model wrote before calling tools was streamed; end it with a blank line.
                    s.step_text.clear();
                    let data = (s.chunk)(json!({"content": "\n\n"}), None);
                    return Some((Ok(SseEvent::default().data(data)), s));
                }
                _ => {
                    if let Some(text) = final_text(&event) {
                        let answer = matches!(event, ServerEvent::Answer { .. });
                        let mut rest = match text.strip_prefix(s.step_text.as_str()) {
                            Some(rest) if answer => rest.to_owned(),
                            _ => text,
                        };
                        if let Some(note) = s.note.take() {
                            rest = format!("{rest}\n\n{note}");
                        }
                        s.step_text.clear();
                        if !rest.is_empty() {
                            let data = (s.chunk)(json!({"content": rest}), None);
                            return Some((Ok(SseEvent::default().data(data)), s));
                        }
                    }
                }
            }
        }
    })
}
