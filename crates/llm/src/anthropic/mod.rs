//! Anthropic's Messages API: system prompt, `tool_use` / `tool_result` blocks, stop reasons and streaming.

mod body;

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};
use steward_core::redact::{redact_url, url_secrets};
use steward_core::{
    Capabilities, Model, ModelError, ModelRequest, ModelResponse, SchemaStyle, StreamDelta,
    ToolCall, Usage,
};

use crate::http::{Http, HttpOptions, Secret, cut, provider_message};
use crate::quirks::{finish_reason, new_call_id};
use crate::schemas::SchemaCache;
use crate::sse::SseParser;

/// The API version sent in `anthropic-version`.
const API_VERSION: &str = "2023-06-01";

/// Settings of an Anthropic model.
#[derive(Clone)]
pub struct AnthropicConfig {
    /// The model name, like `claude-sonnet-4-5`.
    pub model: String,
    /// The API key.
    pub key: Secret,
    /// The base URL (default `https://api.anthropic.com`).
    pub base_url: String,
    /// Timeouts, retries.
    pub http: HttpOptions,
}

impl std::fmt::Debug for AnthropicConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnthropicConfig")
            .field("model", &self.model)
            .field("key", &self.key)
            .field("base_url", &redact_url(&self.base_url))
            .field("http", &self.http)
            .finish()
    }
}

impl AnthropicConfig {
    /// A model on api.anthropic.com (or `base_url`).
    pub fn new(model: impl Into<String>, key: Secret, base_url: Option<String>) -> Self {
        Self {
            model: model.into(),
            key,
            base_url: base_url.unwrap_or_else(|| "https://api.anthropic.com".to_owned()),
            http: HttpOptions::default(),
        }
    }
}

/// A model behind Anthropic's Messages API.
pub struct AnthropicModel {
    name: String,
    model: String,
    url: String,
    headers: HeaderMap,
    schemas: SchemaCache,
    http: Http,
}

impl std::fmt::Debug for AnthropicModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnthropicModel")
            .field("name", &self.name)
            .field("url", &redact_url(&self.url))
            .finish_non_exhaustive()
    }
}

impl AnthropicModel {
    /// A model with these settings.
    pub fn new(config: AnthropicConfig) -> Result<Self, ModelError> {
        let mut headers = HeaderMap::new();
        let mut key =
            HeaderValue::from_str(config.key.expose()).map_err(|_| ModelError::Transport {
                provider: "anthropic".to_owned(),
                message: "the API key contains characters that cannot go in an HTTP header"
                    .to_owned(),
            })?;
        key.set_sensitive(true);
        headers.insert(HeaderName::from_static("x-api-key"), key);
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        );
        // A query string in the base URL (for a gateway that takes a key there) stays at the end.
        let url = match config.base_url.split_once('?') {
            Some((base, query)) => format!("{}/v1/messages?{query}", base.trim_end_matches('/')),
            None => format!("{}/v1/messages", config.base_url.trim_end_matches('/')),
        };
        // Credentials in the URL itself (`https://user:pass@host?key=…`) are secrets too.
        let mut secrets = vec![config.key];
        secrets.extend(url_secrets(&url).into_iter().map(Secret::new));
        Ok(Self {
            name: format!("anthropic:{}", config.model),
            url,
            model: config.model,
            headers,
            schemas: SchemaCache::new(SchemaStyle::Standard),
            http: Http::new("anthropic", config.http, secrets)?,
        })
    }
}

#[async_trait]
impl Model for AnthropicModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::new()
            .native_tools(true)
            .strict_schemas(false)
            .json_schema_output(false)
            .parallel_tool_calls(true)
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let schemas = self.schemas.rendered(&request.tools);
        let body = body::Body::new(&self.model, request, &schemas, false);
        let response = self.http.post(&self.url, &self.headers, &body).await?;
        let bytes = self.http.body(response).await?;
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
            self.http.invalid(format!(
                "the body is not a message ({e}): {}",
                self.http.quote(&String::from_utf8_lossy(&bytes), 300)
            ))
        })?;
        response_from(&value).map_err(|m| self.http.invalid(m))
    }

    async fn stream(
        &self,
        request: &ModelRequest,
        on_delta: &(dyn Fn(StreamDelta) + Send + Sync),
    ) -> Result<ModelResponse, ModelError> {
        let schemas = self.schemas.rendered(&request.tools);
        let body = body::Body::new(&self.model, request, &schemas, true);
        let mut response = self.http.post(&self.url, &self.headers, &body).await?;
        let mut parser = SseParser::default();
        let mut acc = StreamState::default();
        loop {
            let (events, end) = match self.http.chunk(&mut response).await? {
                Some(bytes) => (parser.feed(&bytes), false),
                None => (parser.finish().into_iter().collect(), true),
            };
            for event in events {
                let data: Value = serde_json::from_str(&event.data).map_err(|e| {
                    self.http.invalid(format!(
                        "a stream event is not JSON ({e}): {}",
                        self.http.quote(&event.data, 300)
                    ))
                })?;
                if acc
                    .push(&data, on_delta)
                    .map_err(|m| self.http.invalid(m))?
                {
                    return acc.finish().map_err(|m| self.http.invalid(m));
                }
            }
            if end {
                return Err(ModelError::Transport {
                    provider: "anthropic".to_owned(),
                    message: "the stream ended before the reply was complete (no message_stop)"
                        .to_owned(),
                });
            }
        }
    }
}

fn usage(value: &Value) -> Usage {
    let n = |k: &str| value.get(k).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input_tokens: n("input_tokens")
            + n("cache_creation_input_tokens")
            + n("cache_read_input_tokens"),
        output_tokens: n("output_tokens"),
    }
}

/// A whole (non-streamed) message.
fn response_from(value: &Value) -> Result<ModelResponse, String> {
    if value.get("type").and_then(Value::as_str) == Some("error") {
        return Err(provider_message(value).unwrap_or_else(|| value.to_string()));
    }
    let Some(blocks) = value.get("content").and_then(Value::as_array) else {
        return Err(format!(
            "the message has no content: {}",
            cut(&value.to_string(), 300)
        ));
    };
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut extra = Map::new();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(block.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("tool_use") => calls.push(ToolCall::new(
                block
                    .get("id")
                    .and_then(Value::as_str)
                    .map_or_else(new_call_id, str::to_owned),
                block.get("name").and_then(Value::as_str).unwrap_or(""),
                block
                    .get("input")
                    .map_or_else(|| "{}".to_owned(), Value::to_string),
            )),
            Some("thinking") => {
                extra.insert(
                    "thinking".into(),
                    block.get("thinking").cloned().unwrap_or(Value::Null),
                );
            }
            _ => {}
        }
    }
    for key in ["id", "model", "stop_reason", "stop_sequence"] {
        if let Some(v) = value.get(key).filter(|v| !v.is_null()) {
            extra.insert(key.into(), v.clone());
        }
    }
    let stop = value.get("stop_reason").and_then(Value::as_str);
    Ok(ModelResponse {
        content: (!text.is_empty()).then_some(text),
        finish_reason: finish_reason(stop, !calls.is_empty()),
        tool_calls: calls,
        usage: value.get("usage").map(usage).unwrap_or_default(),
        extra,
    })
}

/// A message being streamed: its fields and its blocks by index.
#[derive(Debug, Default)]
struct StreamState {
    message: Map<String, Value>,
    blocks: Vec<Option<Map<String, Value>>>,
    partial_json: Vec<String>,
}

impl StreamState {
    /// Takes one event; returns true at `message_stop`.
    fn push(
        &mut self,
        event: &Value,
        on_delta: &(dyn Fn(StreamDelta) + Send + Sync),
    ) -> Result<bool, String> {
        let index = usize::try_from(event.get("index").and_then(Value::as_u64).unwrap_or(0))
            .unwrap_or(usize::MAX);
        match event.get("type").and_then(Value::as_str).unwrap_or("") {
            "message_start" => self.message = object(event.get("message")),
            "content_block_start" => {
                let block = object(event.get("content_block"));
                if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                    let name = block
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned();
                    on_delta(StreamDelta::ToolCallStarted { name });
                }
                if index > 1024 {
                    return Err(format!("a content block index of {index} is not plausible"));
                }
                if self.blocks.len() <= index {
                    self.blocks.resize(index + 1, None);
                    self.partial_json.resize(index + 1, String::new());
                }
                self.blocks[index] = Some(block);
            }
            "content_block_delta" => {
                let Some(Some(block)) = self.blocks.get_mut(index) else {
                    return Err(format!(
                        "a delta arrived for block {index}, which never started"
                    ));
                };
                let delta = event.get("delta");
                let piece = |key: &str| {
                    delta
                        .and_then(|d| d.get(key))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                };
                match delta.and_then(|d| d.get("type")).and_then(Value::as_str) {
                    Some("text_delta") => {
                        append(block, "text", piece("text"));
                        on_delta(StreamDelta::Text(piece("text").to_owned()));
                    }
                    Some("input_json_delta") => {
                        self.partial_json[index].push_str(piece("partial_json"))
                    }
                    Some("thinking_delta") => append(block, "thinking", piece("thinking")),
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let (Some(Some(block)), Some(json)) =
                    (self.blocks.get_mut(index), self.partial_json.get(index))
                    && block.get("type").and_then(Value::as_str) == Some("tool_use")
                {
                    let input = if json.trim().is_empty() {
                        json!({})
                    } else {
                        serde_json::from_str(json).map_err(|e| {
                            format!(
                                "the arguments of a streamed tool call are not JSON ({e}): {}",
                                cut(json, 200)
                            )
                        })?
                    };
                    block.insert("input".into(), input);
                }
            }
            "message_delta" => {
                if let Some(delta) = event.get("delta").and_then(Value::as_object) {
                    for (k, v) in delta {
                        self.message.insert(k.clone(), v.clone());
                    }
                }
                if let Some(out) = event.get("usage").and_then(|u| u.get("output_tokens")) {
                    let mut usage = object(self.message.get("usage"));
                    usage.insert("output_tokens".into(), out.clone());
                    self.message.insert("usage".into(), Value::Object(usage));
                }
            }
            "message_stop" => return Ok(true),
            "error" => {
                return Err(format!(
                    "the stream reported an error: {}",
                    provider_message(event).unwrap_or_else(|| event.to_string())
                ));
            }
            _ => {} // ping, and events added after this was written
        }
        Ok(false)
    }

    fn finish(mut self) -> Result<ModelResponse, String> {
        let blocks = self
            .blocks
            .into_iter()
            .flatten()
            .map(Value::Object)
            .collect();
        self.message.insert("content".into(), Value::Array(blocks));
        response_from(&Value::Object(self.message))
    }
}

/// A JSON object from an event field (anything else becomes an empty object).
fn object(value: Option<&Value>) -> Map<String, Value> {
    match value {
        Some(Value::Object(map)) => map.clone(),
        _ => Map::new(),
    }
}

/// Appends text to a string field of a block.
fn append(block: &mut Map<String, Value>, key: &str, piece: &str) {
    let mut text = block
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    text.push_str(piece);
    block.insert(key.to_owned(), Value::String(text));
}
