//! An OpenAI-compatible facade: `/v1/models` lists the agents the caller may run as models, and
//! `/v1/chat/completions` answers with one, so any chat front end or SDK that speaks the OpenAI API can talk
//! to a Steward agent. The earlier messages of the request are the conversation's history; the last user
//! message is the question. A run that waits for approval answers with what waits and how to decide it.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
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
use crate::wire::{RunOutcome, ServerEvent};

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
    /// With `stream`: `{"include_usage": true}` ends the stream with a chunk that carries the usage.
    #[serde(default)]
    stream_options: Option<StreamOptions>,
}

/// `stream_options` of a chat completion request.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub(crate) struct StreamOptions {
    /// Send a last chunk with `usage` (and no choices) before `[DONE]`; every other chunk has `"usage": null`.
    #[serde(default)]
    include_usage: bool,
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

/// OpenAI's `type` of an error with this status.
fn error_type(status: StatusCode) -> &'static str {
    match status.as_u16() {
        401 => "authentication_error",
        403 => "permission_error",
        429 | 503 => "rate_limit_error",
        400..=499 => "invalid_request_error",
        _ => "api_error",
    }
}

/// OpenAI's error object: `{"error": {"message", "type", "param", "code"}}`.
fn error_object(
    status: StatusCode,
    message: &str,
    param: Option<&str>,
    code: Option<&str>,
) -> Value {
    json!({"error": {"message": message, "type": error_type(status), "param": param, "code": code}})
}

/// An error as OpenAI's API answers one, with the status and headers (`Retry-After`) of the [`ApiError`].
fn openai_error(e: ApiError) -> Response {
    e.log();
    let body = error_object(e.status(), e.message(), None, None);
    (e.status(), e.headers(), Json(body)).into_response()
}

/// The answer for a model (agent) the caller cannot use: 404 `model_not_found`, as OpenAI says it, with the
/// models the caller may use.
fn no_such_model(shared: &Shared, caller: &Caller, model: &str) -> Response {
    let app = &shared.app;
    let yours: Vec<&str> = app.agents_for(&caller.principal).collect();
    let message = format!(
        "The model `{model}` does not exist or you do not have access to it. Models you may use: {} \
         (GET /v1/models lists them).",
        if yours.is_empty() {
            "none".to_owned()
        } else {
            yours.join(", ")
        }
    );
    let body = error_object(
        StatusCode::NOT_FOUND,
        &message,
        Some("model"),
        Some("model_not_found"),
    );
    (StatusCode::NOT_FOUND, Json(body)).into_response()
}

/// Every error of a path under `/v1` in OpenAI's shape, whoever made it (the guardrails, authentication, the
/// body's extractor, the rate limit, a route that does not exist): SDKs read `error.message` and `error.type`.
/// Error bodies that already have that shape pass as they are; other paths are not touched.
///
/// Errors of `/mcp` made before the MCP server saw the request (the guardrails, authentication, the rate limit,
/// a body over the limit) get JSON-RPC's shape the same way: `{"jsonrpc", "id": null, "error": {"code",
/// "message"}}`, `-32600` for a refused request, `-32603` for a server fault.
pub(crate) async fn error_objects(request: axum::extract::Request, next: Next) -> Response {
    let path = request.uri().path();
    let v1 = path.starts_with("/v1/");
    let mcp = path == "/mcp" || path.starts_with("/mcp/");
    let response = next.run(request).await;
    if !v1 && !mcp {
        return response;
    }
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, ERROR_BODY_LIMIT)
        .await
        .unwrap_or_default();
    let value: Option<Value> = serde_json::from_slice(&bytes).ok();
    let shaped = if mcp {
        value.as_ref().is_some_and(|v| v.get("jsonrpc").is_some())
    } else {
        value
            .as_ref()
            .and_then(|v| v.get("error"))
            .is_some_and(Value::is_object)
    };
    if shaped {
        return Response::from_parts(parts, axum::body::Body::from(bytes));
    }
    let message = match value
        .as_ref()
        .and_then(|v| v.get("error"))
        .and_then(Value::as_str)
    {
        Some(text) => text.to_owned(),
        None => match String::from_utf8_lossy(&bytes).trim() {
            "" => status.canonical_reason().unwrap_or("error").to_owned(),
            text => text.to_owned(),
        },
    };
    let body = if mcp {
        let code = if status.is_server_error() {
            -32603
        } else {
            -32600
        };
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}})
            .to_string()
    } else {
        error_object(status, &message, None, None).to_string()
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    Response::from_parts(parts, axum::body::Body::from(body))
}

/// The most of an error body [`error_objects`] reads (Steward's own are a line).
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// A path under `/v1` that Steward does not serve.
pub(crate) async fn no_route(uri: axum::http::Uri) -> Response {
    let message = format!(
        "Steward serves /v1/models, /v1/models/{{model}} and /v1/chat/completions, not {}",
        uri.path()
    );
    let body = error_object(StatusCode::NOT_FOUND, &message, None, Some("unknown_url"));
    (StatusCode::NOT_FOUND, Json(body)).into_response()
}

/// A model object: an agent, `created` when this server started.
fn model_object(name: &str, created: i64) -> Value {
    json!({"id": name, "object": "model", "created": created, "owned_by": "steward"})
}

/// The agents the caller may run, as models.
#[utoipa::path(get, path = "/v1/models", tag = "openai", responses((status = 200, description = "Agents as models")))]
pub(crate) async fn models(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
) -> Json<Value> {
    let app = &shared.app;
    let data: Vec<Value> = app
        .agents_for(&caller.principal)
        .map(|name| model_object(name, shared.started))
        .collect();
    Json(json!({"object": "list", "data": data}))
}

/// One agent the caller may run, as a model; 404 `model_not_found` otherwise.
#[utoipa::path(get, path = "/v1/models/{model}", tag = "openai",
    params(("model" = String, Path, description = "The agent's name")),
    responses((status = 200, description = "The agent as a model"),
              (status = 404, description = "No such agent, or not the caller's to use")))]
pub(crate) async fn model(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    axum::extract::Path(model): axum::extract::Path<String>,
) -> Response {
    let app = &shared.app;
    if app.agent_names().any(|name| name == model) && app.may_run(&caller.principal, &model).is_ok()
    {
        Json(model_object(&model, shared.started)).into_response()
    } else {
        no_such_model(&shared, &caller, &model)
    }
}

/// Answers the last user message with the agent named by `model`.
#[utoipa::path(post, path = "/v1/chat/completions", tag = "openai", request_body = ChatRequest,
    responses((status = 200, description = "A chat.completion, or chat.completion.chunk events when streaming")))]
pub(crate) async fn chat_completions(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Body(request): Body<ChatRequest>,
) -> Response {
    // An agent the caller may not use is answered as one that does not exist (as OpenAI does): its name is not
    // the caller's to confirm.
    if !shared.app.agent_names().any(|name| name == request.model)
        || shared
            .app
            .may_run(&caller.principal, &request.model)
            .is_err()
    {
        return no_such_model(&shared, &caller, &request.model);
    }
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
    let (mut turn, events) = turns::assemble(
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
    let mut pieces = Pieces::new(events);
    if !request.stream {
        // The same text a stream gives, gathered: a client sees one answer whichever way it asks.
        let mut text = String::new();
        while let Some(piece) = pieces.next().await {
            text.push_str(&piece);
        }
        if text.is_empty() {
            text = "the run ended without an answer".to_owned();
        }
        if pieces.model_failed {
            return Err(ApiError::BadGateway(
                "the agent's model did not answer; the server's log has the details".to_owned(),
            ));
        }
        return Ok(Json(json!({
            "id": id, "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": pieces.usage(),
        }))
        .into_response());
    }
    // The headers wait for the model's first sign (text, or a tool call: an empty piece): a model that fails
    // before it answers at all is a 502, as for a plain answer, not a 200 stream whose text says so.
    let first = pieces.next().await;
    if pieces.model_failed {
        return Err(ApiError::BadGateway(
            "the agent's model did not answer; the server's log has the details".to_owned(),
        ));
    }
    let include_usage = request.stream_options.is_some_and(|o| o.include_usage);
    let chunk = move |choices: Value, usage: Option<Value>| {
        let mut chunk = json!({"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
                               "choices": choices});
        if include_usage {
            chunk["usage"] = usage.unwrap_or(Value::Null);
        }
        SseEvent::default().data(chunk.to_string())
    };
    let delta = |delta: Value, finish: Option<&str>| json!([{"index": 0, "delta": delta, "finish_reason": finish}]);
    let stream = futures_util::stream::unfold(
        (pieces, Stage::Role, first),
        move |(mut pieces, stage, mut first)| {
            let chunk = chunk.clone();
            async move {
                let (event, next) = match stage {
                    Stage::Role => (
                        chunk(
                            delta(json!({"role": "assistant", "content": ""}), None),
                            None,
                        ),
                        Stage::Text,
                    ),
                    Stage::Text => match loop {
                        let piece = match first.take() {
                            Some(text) => Some(text),
                            None => pieces.next().await,
                        };
                        // The empty piece of the model's first tool call carries nothing to send.
                        if piece.as_deref() != Some("") {
                            break piece;
                        }
                    } {
                        Some(text) => (
                            chunk(delta(json!({"content": text}), None), None),
                            Stage::Text,
                        ),
                        None => (chunk(delta(json!({}), Some("stop")), None), Stage::Usage),
                    },
                    Stage::Usage if include_usage => {
                        (chunk(json!([]), Some(pieces.usage())), Stage::Done)
                    }
                    Stage::Usage | Stage::Done => (SseEvent::default().data("[DONE]"), Stage::End),
                    Stage::End => return None,
                };
                Some((Ok::<_, Infallible>(event), (pieces, next, first)))
            }
        },
    );
    Ok(Sse::new(stream).into_response())
}

/// Where a stream is: the role chunk, the text, the finish (then the usage chunk when asked for), `[DONE]`.
#[derive(Clone, Copy)]
enum Stage {
    Role,
    Text,
    Usage,
    Done,
    End,
}

/// What a `/v1` turn with earlier answers in its messages counts as having read.
const EARLIER_ANSWERS: &str = "the earlier answers the client sent";

/// The text a last event gives the client: the answer, what waits for approval, or what went wrong.
fn final_text(event: &ServerEvent) -> Option<String> {
    match event {
        ServerEvent::Answer { content, .. } => Some(content.clone()),
        // A failing model's message names its endpoint: that is for the server's log, not the client.
        ServerEvent::Error {
            outcome: RunOutcome::ModelFailed,
            ..
        } => Some(
            "The run failed: the agent's model did not answer; the server's log has the details."
                .to_owned(),
        ),
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

/// The text a turn's events give an OpenAI client, in pieces: the top run's text as the model writes it (the
/// text a step writes before it calls tools too, ended by a blank line), then whatever of the final text was
/// not streamed (a failure, an approval note, the change set saved). A stream sends each piece as a chunk; a
/// plain answer joins them, so both carry the same text.
struct Pieces {
    events: turns::Events,
    /// The current step's streamed text of the top run.
    step_text: String,
    /// What the client is told after the answer: the change set the run saved.
    note: Option<String>,
    /// The top run's usage, once it came.
    usage: Option<Value>,
    /// The top run ended because its model failed.
    model_failed: bool,
    /// The top run's model has answered once (text or a tool call).
    spoke: bool,
}

impl Pieces {
    fn new(events: turns::Events) -> Self {
        Self {
            events,
            step_text: String::new(),
            note: None,
            usage: None,
            model_failed: false,
            spoke: false,
        }
    }

    /// OpenAI's `usage` of the top run (zeros when the provider sent none).
    fn usage(&self) -> Value {
        self.usage.clone().unwrap_or_else(
            || json!({"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}),
        )
    }

    /// The next piece of text; `None` once the run's events ended.
    async fn next(&mut self) -> Option<String> {
        loop {
            let event = self.events.recv().await?;
            let top = event.parent_run_id().is_none();
            if top
                && matches!(
                    event,
                    ServerEvent::Error {
                        outcome: RunOutcome::ModelFailed,
                        ..
                    }
                )
            {
                self.model_failed = true;
                // The client is told to look here: the model's own error, with its endpoint, goes to the log.
                if let ServerEvent::Error { message, .. } = &event {
                    tracing::warn!(error = %message, "a /v1 run's model failed");
                }
            }
            match &event {
                ServerEvent::Step { .. } if top => self.step_text.clear(),
                ServerEvent::Changes { change_set, .. } => self.note = Some(change_set.note()),
                ServerEvent::Usage {
                    parent_run_id: None,
                    input_tokens,
                    output_tokens,
                    total_tokens,
                    ..
                } => {
                    self.usage = Some(json!({"prompt_tokens": input_tokens,
                        "completion_tokens": output_tokens, "total_tokens": total_tokens}));
                }
                ServerEvent::Delta { text, .. } if top => {
                    self.spoke = true;
                    self.step_text.push_str(text);
                    return Some(text.clone());
                }
                ServerEvent::Thought { .. } | ServerEvent::ToolCall { .. }
                    if top && !self.step_text.is_empty() =>
                {
                    // Text the model wrote before calling tools was sent; end it with a blank line.
                    self.step_text.clear();
                    return Some("\n\n".to_owned());
                }
                ServerEvent::Thought { .. } | ServerEvent::ToolCall { .. }
                    if top && !self.spoke =>
                {
                    // The model answered (with a tool call): an empty piece says so, for the stream's headers.
                    self.spoke = true;
                    return Some(String::new());
                }
                _ => {
                    let Some(text) = final_text(&event) else {
                        continue;
                    };
                    let answer = matches!(event, ServerEvent::Answer { .. });
                    let mut rest = match text.strip_prefix(self.step_text.as_str()) {
                        Some(rest) if answer => rest.to_owned(),
                        _ => text,
                    };
                    if let Some(note) = self.note.take() {
                        rest = format!("{rest}\n\n{note}");
                    }
                    self.step_text.clear();
                    if !rest.is_empty() {
                        return Some(rest);
                    }
                }
            }
        }
    }
}
