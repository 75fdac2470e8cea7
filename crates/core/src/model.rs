//! The model interface: what a run sends to a model and what it gets back.
//!
//! Providers (OpenAI, Anthropic, local servers) implement [`Model`] in steward-llm; core ships
//! [`crate::ScriptedModel`] for tests and examples.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::message::{Message, ToolCall};
use crate::spec::ToolSpec;

/// Which tools the model may or must call.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// The model must call some tool.
    Required,
    /// The model must not call tools.
    None,
    /// The model must call this tool.
    Tool(String),
}

/// One request to a model.
///
/// Made with [`ModelRequest::new`] and chained setters:
///
/// ```
/// use steward_core::{Message, ModelRequest, ToolChoice};
///
/// let request = ModelRequest::new(vec![Message::user("Hello")], Vec::new().into())
///     .tool_choice(ToolChoice::None)
///     .temperature(0.2)
///     .max_output_tokens(200);
/// assert_eq!(request.temperature, Some(0.2));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelRequest {
    /// The conversation, already trimmed to the history budget.
    pub messages: Vec<Message>,
    /// The tools the model may call.
    pub tools: Arc<[ToolSpec]>,
    /// Whether the model may or must call tools.
    #[serde(default)]
    pub tool_choice: ToolChoice,
    /// Upper bound on the tokens of the reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Constrains the reply's text (JSON mode, or a JSON Schema).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<ResponseFormat>,
    /// Sequences at which the model stops writing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
}

/// A constraint on the text of a reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ResponseFormat {
    /// Any single JSON object.
    JsonObject,
    /// A JSON value matching a schema.
    JsonSchema {
        /// A name for the schema (`^[a-zA-Z0-9_-]{1,64}$`).
        name: String,
        /// The schema.
        schema: serde_json::Value,
        /// Ask the provider to enforce the schema exactly.
        #[serde(default)]
        strict: bool,
    },
}

impl ModelRequest {
    /// A request with the given messages and tools, default settings.
    pub fn new(messages: Vec<Message>, tools: Arc<[ToolSpec]>) -> Self {
        Self {
            messages,
            tools,
            tool_choice: ToolChoice::Auto,
            max_output_tokens: None,
            temperature: None,
            response_format: None,
            stop: Vec::new(),
        }
    }

    /// The same request with another tool choice.
    pub fn tool_choice(mut self, tool_choice: ToolChoice) -> Self {
        self.tool_choice = tool_choice;
        self
    }

    /// The same request with an upper bound on the reply's tokens.
    pub fn max_output_tokens(mut self, max_output_tokens: u32) -> Self {
        self.max_output_tokens = Some(max_output_tokens);
        self
    }

    /// The same request with a sampling temperature.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// The same request with a constraint on the reply's text.
    pub fn response_format(mut self, response_format: ResponseFormat) -> Self {
        self.response_format = Some(response_format);
        self
    }

    /// The same request with sequences at which the model stops writing.
    pub fn stop(mut self, stop: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.stop = stop.into_iter().map(Into::into).collect();
        self
    }
}

/// Tokens used by one model call or a whole run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
}

impl Usage {
    /// Input plus output tokens.
    pub fn total(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// Adds another usage to this one.
    pub fn add(&mut self, other: Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
    }

    /// True when no tokens were counted.
    pub fn is_zero(&self) -> bool {
        self.total() == 0
    }
}

/// Why the model stopped.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FinishReason {
    /// A natural end of the reply.
    #[default]
    Stop,
    /// The model asked for tool calls.
    ToolCalls,
    /// The output token limit was reached.
    Length,
    /// The provider filtered the content.
    ContentFilter,
    /// Anything else the provider said, kept as it was.
    Other(String),
}

/// One model reply.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelResponse {
    /// The text part, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The tool calls, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Tokens used.
    #[serde(default)]
    pub usage: Usage,
    /// Why the model stopped.
    #[serde(default)]
    pub finish_reason: FinishReason,
    /// Provider-specific fields, kept as they came (ids, model version, reasoning text, the raw finish
    /// reason, …).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl ModelResponse {
    /// A reply with text only.
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: Some(content.into()),
            finish_reason: FinishReason::Stop,
            ..Self::default()
        }
    }

    /// A reply with tool calls only.
    pub fn tool_calls(calls: Vec<ToolCall>) -> Self {
        Self {
            tool_calls: calls,
            finish_reason: FinishReason::ToolCalls,
            ..Self::default()
        }
    }

    /// The same reply with the given usage.
    pub fn with_usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        self.usage = Usage {
            input_tokens,
            output_tokens,
        };
        self
    }

    /// The assistant message this reply adds to the conversation.
    pub fn to_message(&self) -> Message {
        Message::assistant_calls(self.content.clone(), self.tool_calls.clone())
    }
}

/// What a model can do, so that agents can choose how to talk to it.
///
/// ```
/// use steward_core::Capabilities;
///
/// let react = Capabilities::new().parallel_tool_calls(false);
/// assert!(react.native_tools && !react.parallel_tool_calls);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Capabilities {
    /// The model supports native tool calling.
    pub native_tools: bool,
    /// The provider enforces tool schemas (strict mode).
    pub strict_schemas: bool,
    /// The provider can constrain replies to a JSON schema.
    pub json_schema_output: bool,
    /// The model can return several tool calls in one reply.
    pub parallel_tool_calls: bool,
}

impl Capabilities {
    /// The defaults: native tool calling and parallel calls, no strict schemas, no JSON Schema output.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same capabilities, saying whether the model calls tools natively.
    pub fn native_tools(mut self, native_tools: bool) -> Self {
        self.native_tools = native_tools;
        self
    }

    /// The same capabilities, saying whether the provider enforces tool schemas.
    pub fn strict_schemas(mut self, strict_schemas: bool) -> Self {
        self.strict_schemas = strict_schemas;
        self
    }

    /// The same capabilities, saying whether replies can be constrained to a JSON schema.
    pub fn json_schema_output(mut self, json_schema_output: bool) -> Self {
        self.json_schema_output = json_schema_output;
        self
    }

    /// The same capabilities, saying whether one reply may hold several tool calls.
    pub fn parallel_tool_calls(mut self, parallel_tool_calls: bool) -> Self {
        self.parallel_tool_calls = parallel_tool_calls;
        self
    }
}

impl Default for Capabilities {
    fn default() -> Self {
        Self {
            native_tools: true,
            strict_schemas: false,
            json_schema_output: false,
            parallel_tool_calls: true,
        }
    }
}

/// A failed model call.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ModelError {
    /// The provider answered with an error status.
    #[error("{provider}: HTTP {status}: {message}")]
    Status {
        /// The provider's name.
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The provider's own error text.
        message: String,
    },
    /// The provider could not be reached, or the connection broke.
    #[error("{provider}: {message}")]
    Transport {
        /// The provider's name.
        provider: String,
        /// What happened.
        message: String,
    },
    /// The provider did not answer in time.
    #[error("{provider}: no reply within the {limit} time limit of {after:?}")]
    Timeout {
        /// The provider's name.
        provider: String,
        /// Which limit ran out: `connect`, `first byte` (until the reply begins), `idle` (between two pieces
        /// of a streamed reply) or `total`.
        limit: String,
        /// How long it waited.
        after: Duration,
    },
    /// The provider's answer could not be understood.
    #[error("{provider}: unexpected response: {message}")]
    InvalidResponse {
        /// The provider's name.
        provider: String,
        /// What was wrong with it.
        message: String,
    },
    /// A replayed run asked the model something other than what was recorded.
    #[error("{0}")]
    Replay(String),
    /// Anything else (for example a scripted model with no responses left).
    #[error("{0}")]
    Other(String),
}

impl ModelError {
    /// What failed, for exit codes and reports.
    pub fn cause(&self) -> FailureCause {
        match self {
            Self::Status { .. } | Self::Transport { .. } | Self::Timeout { .. } => {
                FailureCause::Provider
            }
            Self::InvalidResponse { .. } => FailureCause::Reply,
            Self::Replay(_) => FailureCause::Replay,
            Self::Other(_) => FailureCause::Other,
        }
    }
}

/// What made a run fail.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FailureCause {
    /// The provider: an HTTP error, an unreachable server, a timeout.
    Provider,
    /// The model's reply could not be used (empty, malformed, not what was asked).
    Reply,
    /// A replayed run diverged from its recording.
    Replay,
    /// A database the run depends on could not be used.
    Engine,
    /// Anything else.
    #[default]
    Other,
}

impl FailureCause {
    /// A short machine-readable name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Provider => "provider",
            Self::Reply => "reply",
            Self::Replay => "replay",
            Self::Engine => "engine",
            Self::Other => "other",
        }
    }
}

/// A language model that takes a conversation and tools and returns a reply.
#[async_trait]
pub trait Model: Send + Sync {
    /// A short name for logs and transcripts, like `openai:gpt-4o-mini`.
    fn name(&self) -> &str;

    /// What the model can do.
    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }

    /// Sends one request and waits for the whole reply.
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError>;

    /// When the model plays back a recording: what `call` returned when the run was recorded. The runner asks
    /// before it runs a tool that is not read-only, so that a replay changes nothing (the recorded result is
    /// shown to the model instead). Live models say [`ToolReplay::Live`] (the default): the tool runs.
    fn tool_replay(&self, call: &ToolCall) -> ToolReplay {
        let _ = call;
        ToolReplay::Live
    }

    /// Sends one request and reports the reply's pieces to `on_delta` as they arrive, then returns the whole
    /// reply. Models that cannot stream reply in one piece (the default).
    async fn stream(
        &self,
        request: &ModelRequest,
        on_delta: &(dyn Fn(StreamDelta) + Send + Sync),
    ) -> Result<ModelResponse, ModelError> {
        let response = self.complete(request).await?;
        if let Some(text) = &response.content {
            on_delta(StreamDelta::Text(text.clone()));
        }
        Ok(response)
    }
}

/// What a model that replays a recording knows about a tool call (see [`Model::tool_replay`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolReplay {
    /// The model is live: the tool runs.
    Live,
    /// The call's result as it was recorded.
    Recorded {
        /// What the model was shown.
        content: String,
        /// True when the call had failed.
        is_error: bool,
    },
    /// The model replays a recording that holds no result for this call: the tool must not run.
    Missing,
}

/// A piece of a reply as it streams in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum StreamDelta {
    /// More text.
    Text(String),
    /// The model started a tool call.
    ToolCallStarted {
        /// The tool's name.
        name: String,
    },
}

#[async_trait]
impl<M: Model + ?Sized> Model for std::sync::Arc<M> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn capabilities(&self) -> Capabilities {
        (**self).capabilities()
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        (**self).complete(request).await
    }

    fn tool_replay(&self, call: &ToolCall) -> ToolReplay {
        (**self).tool_replay(call)
    }

    async fn stream(
        &self,
        request: &ModelRequest,
        on_delta: &(dyn Fn(StreamDelta) + Send + Sync),
    ) -> Result<ModelResponse, ModelError> {
        (**self).stream(request, on_delta).await
    }
}
