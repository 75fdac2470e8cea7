//! OpenAI chat-completions wire types, lenient: every field optional, unknown fields kept, arguments accepted as
//! strings or objects, content as a string or a list of parts.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use steward_core::{ModelResponse, ToolCall, ToolSpec, Usage};

use crate::quirks::{arguments_text, finish_reason, new_call_id, tool_calls_in_text};

/// A chat completion, or one chunk of a streamed one.
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct Completion {
    #[serde(default)]
    pub(crate) choices: Vec<Choice>,
    #[serde(default)]
    pub(crate) usage: Option<WireUsage>,
    #[serde(default)]
    pub(crate) error: Option<Value>,
    #[serde(flatten)]
    pub(crate) extra: Map<String, Value>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct Choice {
    #[serde(default)]
    pub(crate) index: Option<u64>,
    #[serde(default)]
    pub(crate) message: Option<WireMessage>,
    #[serde(default)]
    pub(crate) delta: Option<WireMessage>,
    #[serde(default)]
    pub(crate) finish_reason: Option<String>,
    #[serde(flatten)]
    pub(crate) extra: Map<String, Value>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct WireMessage {
    #[serde(default)]
    pub(crate) content: Option<Value>,
    #[serde(default)]
    pub(crate) tool_calls: Option<Vec<WireToolCall>>,
    #[serde(default)]
    pub(crate) refusal: Option<String>,
    #[serde(flatten)]
    pub(crate) extra: Map<String, Value>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct WireToolCall {
    #[serde(default)]
    pub(crate) index: Option<u64>,
    #[serde(default)]
    pub(crate) id: Option<String>,
    #[serde(default)]
    pub(crate) function: Option<WireFunction>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct WireFunction {
    #[serde(default)]
    pub(crate) name: Option<String>,
    #[serde(default)]
    pub(crate) arguments: Option<Value>,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize)]
pub(crate) struct WireUsage {
    #[serde(default)]
    pub(crate) prompt_tokens: Option<u64>,
    #[serde(default)]
    pub(crate) completion_tokens: Option<u64>,
}

impl WireUsage {
    pub(crate) fn to_usage(self) -> Usage {
        Usage {
            input_tokens: self.prompt_tokens.unwrap_or(0),
            output_tokens: self.completion_tokens.unwrap_or(0),
        }
    }
}

/// The text of a `content` field: a string, or the text parts of a list.
pub(crate) fn content_text(content: Option<&Value>) -> Option<String> {
    match content? {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let text: String = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            Some(text)
        }
        _ => None,
    }
}

/// How a server wants a few request fields spelled.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dialect {
    /// `max_completion_tokens` (OpenAI, Azure) or `max_tokens` (local servers).
    pub(crate) max_completion_tokens: bool,
    /// Tools sent with `strict: true` and the strict schema rendering.
    pub(crate) strict_tools: bool,
    /// An assistant message with tool calls carries `"content": ""` (local servers' chat templates read it);
    /// else it has no `content` (a server that refuses the empty text).
    pub(crate) assistant_content: bool,
    /// How a JSON schema for the reply is sent.
    pub(crate) format: FormatLevel,
}

/// How a reply's JSON schema is asked for, from the best a server may take to nothing: learned once per server
/// from its refusals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FormatLevel {
    /// `{"type": "json_schema", "json_schema": {…}}` (OpenAI, vLLM, Ollama, llama.cpp's own server).
    JsonSchema,
    /// `{"type": "json_object", "schema": {…}}` (llama-cpp-python's server).
    JsonObjectSchema,
    /// `{"type": "json_object"}`.
    JsonObject,
    /// None: the reply is parsed leniently.
    Text,
}

impl FormatLevel {
    pub(crate) fn from_u8(n: u8) -> Self {
        match n {
            0 => Self::JsonSchema,
            1 => Self::JsonObjectSchema,
            2 => Self::JsonObject,
            _ => Self::Text,
        }
    }
}

/// Turns a whole (non-streamed) completion into a reply.
pub(crate) fn response(
    completion: Completion,
    tools: &[ToolSpec],
) -> Result<ModelResponse, String> {
    let Completion {
        choices,
        usage,
        error,
        mut extra,
    } = completion;
    if let Some(error) = error {
        return Err(crate::http::provider_message(&json!({ "error": error }))
            .unwrap_or_else(|| error.to_string()));
    }
    let Some(choice) = choices.into_iter().next() else {
        return Err("the reply has no choices".to_owned());
    };
    let message = choice.message.or(choice.delta).unwrap_or_default();
    let mut content = content_text(message.content.as_ref());
    let mut calls: Vec<ToolCall> = message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .map(|c| {
            let function = c.function.unwrap_or_default();
            ToolCall::new(
                c.id.filter(|id| !id.is_empty()).unwrap_or_else(new_call_id),
                function.name.unwrap_or_default(),
                arguments_text(function.arguments.as_ref()),
            )
        })
        .collect();
    if let Some(refusal) = message.refusal
        && content.as_deref().is_none_or(str::is_empty)
    {
        content = Some(refusal);
    }
    for (k, v) in message.extra {
        extra.insert(k, v);
    }
    Ok(assemble(
        content,
        &mut calls,
        choice.finish_reason.as_deref(),
        usage.map(WireUsage::to_usage).unwrap_or_default(),
        extra,
        tools,
    ))
}

/// Builds the reply, recovering tool calls printed as text.
pub(crate) fn assemble(
    content: Option<String>,
    calls: &mut Vec<ToolCall>,
    raw_finish: Option<&str>,
    usage: Usage,
    mut extra: Map<String, Value>,
    tools: &[ToolSpec],
) -> ModelResponse {
    let mut content = content.filter(|c| !c.is_empty());
    if calls.is_empty()
        && let Some(text) = &content
        && let Some((rest, found)) = tool_calls_in_text(text, tools)
    {
        content = rest;
        *calls = found;
        extra.insert("tool_calls_from_text".into(), json!(true));
    }
    if let Some(raw) = raw_finish {
        extra.insert("finish_reason".into(), json!(raw));
    }
    let finish_reason = finish_reason(raw_finish, !calls.is_empty());
    ModelResponse {
        content,
        tool_calls: std::mem::take(calls),
        usage,
        finish_reason,
        extra,
    }
}
