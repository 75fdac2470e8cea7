//! The chat-completions request body, serialised straight from the request: typed structs that borrow from
//! it, with no `serde_json::Value` tree built and dropped per call.

use serde::{Serialize, Serializer};
use serde_json::Value;
use steward_core::{Message, ModelRequest, ResponseFormat, ToolCall, ToolChoice, ToolSpec};

use super::wire::{Dialect, FormatLevel};

/// The body of one request; its fields serialise in the order servers have always been sent.
#[derive(Serialize)]
pub(crate) struct Body<'a> {
    model: &'a str,
    messages: Messages<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Tools<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Choice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<Format<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    /// As an `f64`, the number the body has always carried for an `f32` temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    stop: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
}

impl<'a> Body<'a> {
    /// The body for `request`; `schemas` are the tools' parameter schemas, rendered for the dialect.
    pub(crate) fn new(
        model: &'a str,
        request: &'a ModelRequest,
        schemas: &'a [Value],
        dialect: Dialect,
        stream: bool,
    ) -> Self {
        let has_tools = !request.tools.is_empty();
        let max = request.max_output_tokens;
        Self {
            model,
            messages: Messages {
                messages: &request.messages,
                assistant_content: dialect.assistant_content,
            },
            tools: has_tools.then_some(Tools {
                specs: &request.tools,
                schemas,
                strict: dialect.strict_tools,
            }),
            tool_choice: has_tools.then(|| match &request.tool_choice {
                ToolChoice::Required => Choice::Mode("required"),
                ToolChoice::None => Choice::Mode("none"),
                ToolChoice::Tool(name) => Choice::Named {
                    kind: "function",
                    function: Name { name },
                },
                _ => Choice::Mode("auto"),
            }),
            response_format: request.response_format.as_ref().and_then(|f| match f {
                ResponseFormat::JsonSchema {
                    name,
                    schema,
                    strict,
                } => match dialect.format {
                    FormatLevel::JsonSchema => Some(Format {
                        kind: "json_schema",
                        json_schema: Some(JsonSchema {
                            name,
                            schema,
                            strict: *strict,
                        }),
                        schema: None,
                    }),
                    FormatLevel::JsonObjectSchema => Some(Format {
                        kind: "json_object",
                        json_schema: None,
                        schema: Some(schema),
                    }),
                    FormatLevel::JsonObject => Some(Format::json_object()),
                    FormatLevel::Text => None,
                },
                _ => (dialect.format != FormatLevel::Text).then(Format::json_object),
            }),
            max_completion_tokens: max.filter(|_| dialect.max_completion_tokens),
            max_tokens: max.filter(|_| !dialect.max_completion_tokens),
            temperature: request.temperature.map(f64::from),
            stop: &request.stop,
            stream: stream.then_some(true),
            stream_options: stream.then_some(StreamOptions {
                include_usage: true,
            }),
        }
    }
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Choice<'a> {
    Mode(&'static str),
    Named {
        #[serde(rename = "type")]
        kind: &'static str,
        function: Name<'a>,
    },
}

#[derive(Serialize)]
struct Name<'a> {
    name: &'a str,
}

#[derive(Serialize)]
struct Format<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    json_schema: Option<JsonSchema<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    schema: Option<&'a Value>,
}

impl Format<'_> {
    fn json_object() -> Self {
        Self {
            kind: "json_object",
            json_schema: None,
            schema: None,
        }
    }
}

#[derive(Serialize)]
struct JsonSchema<'a> {
    name: &'a str,
    schema: &'a Value,
    strict: bool,
}

/// The tools, each with its rendered schema.
struct Tools<'a> {
    specs: &'a [ToolSpec],
    schemas: &'a [Value],
    strict: bool,
}

impl Serialize for Tools<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(
            self.specs
                .iter()
                .zip(self.schemas)
                .map(|(spec, schema)| Tool {
                    kind: "function",
                    function: Function {
                        name: &spec.name,
                        description: &spec.description,
                        parameters: schema,
                        strict: self.strict.then_some(true),
                    },
                }),
        )
    }
}

#[derive(Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
}

/// The conversation.
struct Messages<'a> {
    messages: &'a [Message],
    /// Tool-calling assistant messages carry `"content": ""`.
    assistant_content: bool,
}

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(
            self.messages
                .iter()
                .map(|m| WireMessage::of(m, self.assistant_content)),
        )
    }
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum WireMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: &'a str,
    },
    Assistant {
        /// Never null beside tool calls (several local servers reject null): empty, or omitted for a server
        /// that refuses the empty text.
        #[serde(skip_serializing_if = "Option::is_none")]
        content: Option<&'a str>,
        #[serde(skip_serializing_if = "Calls::is_empty")]
        tool_calls: Calls<'a>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

impl<'a> WireMessage<'a> {
    fn of(m: &'a Message, assistant_content: bool) -> Self {
        match m {
            Message::System { content } => Self::System { content },
            Message::User { content } => Self::User { content },
            Message::Assistant {
                content,
                tool_calls,
            } => Self::Assistant {
                content: match content {
                    Some(text) => Some(text),
                    None if tool_calls.is_empty() || assistant_content => Some(""),
                    None => None,
                },
                tool_calls: Calls(tool_calls),
            },
            Message::Tool {
                call_id, content, ..
            } => Self::Tool {
                tool_call_id: call_id,
                content,
            },
            _ => Self::User {
                content: m.text().unwrap_or_default(),
            },
        }
    }
}

/// The tool calls of an assistant message.
struct Calls<'a>(&'a [ToolCall]);

impl Calls<'_> {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Calls<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|c| Call {
            id: &c.id,
            kind: "function",
            function: CallFunction {
                name: &c.name,
                arguments: &c.arguments,
            },
        }))
    }
}

#[derive(Serialize)]
struct Call<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: CallFunction<'a>,
}

#[derive(Serialize)]
struct CallFunction<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[cfg(test)]
#[path = "body_tests.rs"]
mod tests;
