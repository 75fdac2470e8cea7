//! The Messages API request body, serialised straight from the request: typed structs that borrow from it.
//! Only a tool call's arguments are parsed (the API wants them as an object, not as the text the model sent).

use std::borrow::Cow;

use serde::{Serialize, Serializer};
use serde_json::Value;
use steward_core::{Message, ModelRequest, ToolChoice, ToolSpec};

/// `max_tokens` is required by the API; this is used when the request sets none.
const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The body of one request; its fields serialise in the order the API has always been sent.
#[derive(Serialize)]
pub(super) struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    messages: Vec<Turn<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Tools<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Choice<'a>>,
    /// As an `f64`, the number the body has always carried for an `f32` temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    stop_sequences: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<bool>,
}

impl<'a> Body<'a> {
    /// The body for `request`; `schemas` are the tools' parameter schemas, rendered in the standard style.
    pub(super) fn new(
        model: &'a str,
        request: &'a ModelRequest,
        schemas: &'a [Value],
        stream: bool,
    ) -> Self {
        let mut system: Option<Cow<'a, str>> = None;
        for m in &request.messages {
            if let Message::System { content } = m {
                system = Some(match system {
                    None => Cow::Borrowed(content),
                    Some(before) => Cow::Owned(format!("{before}\n\n{content}")),
                });
            }
        }
        let has_tools = !request.tools.is_empty();
        Self {
            model,
            max_tokens: request.max_output_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            messages: turns(&request.messages),
            system,
            tools: has_tools.then_some(Tools {
                specs: &request.tools,
                schemas,
            }),
            tool_choice: has_tools.then(|| match &request.tool_choice {
                ToolChoice::Required => Choice::of("any"),
                ToolChoice::None => Choice::of("none"),
                ToolChoice::Tool(name) => Choice {
                    kind: "tool",
                    name: Some(name),
                },
                _ => Choice::of("auto"),
            }),
            temperature: request.temperature.map(f64::from),
            stop_sequences: &request.stop,
            stream: stream.then_some(true),
        }
    }
}

#[derive(Serialize)]
struct Choice<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
}

impl Choice<'_> {
    fn of(kind: &'static str) -> Self {
        Self { kind, name: None }
    }
}

/// The tools, each with its rendered schema.
struct Tools<'a> {
    specs: &'a [ToolSpec],
    schemas: &'a [Value],
}

impl Serialize for Tools<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(
            self.specs
                .iter()
                .zip(self.schemas)
                .map(|(spec, schema)| Tool {
                    name: &spec.name,
                    description: &spec.description,
                    input_schema: schema,
                }),
        )
    }
}

#[derive(Serialize)]
struct Tool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
}

/// Consecutive messages of one role, merged into one turn.
#[derive(Serialize)]
struct Turn<'a> {
    role: &'static str,
    content: Vec<Block<'a>>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Text {
        text: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Input<'a>,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: &'a str,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

/// A tool call's arguments: the object the model sent, or its text kept visibly when it is not one.
#[derive(Serialize)]
#[serde(untagged)]
enum Input<'a> {
    Object(Value),
    Unparsed { _unparsed_arguments: &'a str },
}

/// Messages as content blocks, with consecutive messages of one role merged (the API wants roles to
/// alternate, and all results of one assistant turn in one user message).
fn turns(messages: &[Message]) -> Vec<Turn<'_>> {
    let mut out: Vec<Turn<'_>> = Vec::new();
    for m in messages {
        let (role, blocks): (&'static str, Vec<Block<'_>>) = match m {
            Message::User { content } => ("user", text(content).into_iter().collect()),
            Message::Assistant {
                content,
                tool_calls,
            } => {
                let mut blocks: Vec<Block<'_>> =
                    content.as_deref().and_then(text).into_iter().collect();
                blocks.extend(tool_calls.iter().map(|call| Block::ToolUse {
                    id: &call.id,
                    name: &call.name,
                    input: match serde_json::from_str::<Value>(&call.arguments) {
                        Ok(v @ Value::Object(_)) => Input::Object(v),
                        _ => Input::Unparsed {
                            _unparsed_arguments: &call.arguments,
                        },
                    },
                }));
                ("assistant", blocks)
            }
            Message::Tool {
                call_id,
                content,
                is_error,
                ..
            } => (
                "user",
                vec![Block::ToolResult {
                    tool_use_id: call_id,
                    content,
                    is_error: *is_error,
                }],
            ),
            _ => continue,
        };
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => out.push(Turn {
                role,
                content: blocks,
            }),
        }
    }
    out
}

/// A text block; none for empty text.
fn text(text: &str) -> Option<Block<'_>> {
    (!text.is_empty()).then_some(Block::Text { text })
}

#[cfg(test)]
#[path = "body_tests.rs"]
mod tests;
