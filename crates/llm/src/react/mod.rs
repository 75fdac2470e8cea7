//! ReAct modes for models without native tool calling.
//!
//! [`ReactModel`] wraps any [`Model`]: the tools go into the system prompt (generated from their schemas), the
//! conversation's tool calls and results are written out as text, and each reply is parsed back into a tool
//! call or a final answer — so the runner sees native tool calls either way.
//!
//! - **JSON** style: each reply is one JSON object, `{"thought": …, "action": {"name": …, "arguments": {…}}}`
//!   or `{"thought": …, "final_answer": …}`, constrained with `response_format` where the server supports
//!   JSON Schema, and otherwise parsed leniently (code fences and prose around the object are ignored).
//! - **Text** style: `Thought: / Action: / Action Input: / Observation:` with `Observation:` as a stop
//!   sequence.
//!
//! A reply that still cannot be used is sent back with the parse error, the faulty output and the expected
//! format, up to a limit; then the call fails with an error that quotes the last reply.

mod parse;

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use steward_core::{
    Capabilities, FINAL_ANSWER, Message, Model, ModelError, ModelRequest, ModelResponse,
    ResponseFormat, SchemaStyle, ToolCall, ToolReplay, ToolSpec, Usage,
};

use crate::http::cut;
use crate::schemas::ToolboxCache;
use parse::{parse_json_reply, parse_text_reply};

/// Most tokens one ReAct step may take unless the agent sets its own `max_response_tokens`.
const REACT_STEP_TOKENS: u32 = 1_024;
/// The reply format a [`ReactModel`] asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReactStyle {
    /// One JSON object per reply.
    Json,
    /// `Thought:` / `Action:` / `Action Input:` lines.
    Text,
}

/// A model driven in ReAct style (see the module docs).
#[derive(Debug)]
pub struct ReactModel<M> {
    inner: M,
    style: ReactStyle,
    max_repairs: u32,
    name: String,
    /// The tools part of the system prompt per toolbox (a run sends the same one every step, and writing it
    /// out renders every tool's schema).
    tools_prompt: ToolboxCache<Arc<str>>,
}

impl<M: Model> ReactModel<M> {
    /// Wraps `inner` in the given style, with up to 2 repair requests per step.
    pub fn new(inner: M, style: ReactStyle) -> Self {
        let suffix = match style {
            ReactStyle::Json => "react-json",
            ReactStyle::Text => "react-text",
        };
        Self {
            name: format!("{} ({suffix})", inner.name()),
            inner,
            style,
            max_repairs: 2,
            tools_prompt: ToolboxCache::new(),
        }
    }

    /// The same model with another repair limit.
    pub fn with_max_repairs(mut self, max_repairs: u32) -> Self {
        self.max_repairs = max_repairs;
        self
    }

    fn inner_request(&self, request: &ModelRequest) -> ModelRequest {
        let tools: Vec<&ToolSpec> = request
            .tools
            .iter()
            .filter(|t| t.name != FINAL_ANSWER)
            .collect();
        let instructions: Vec<&str> = request
            .messages
            .iter()
            .filter_map(|m| match m {
                Message::System { content } => Some(content.as_str()),
                _ => None,
            })
            .collect();
        let mut prompt = instructions.join("\n\n");
        if !prompt.is_empty() {
            prompt.push_str("\n\n");
        }
        prompt.push_str(&self.tools_prompt(&request.tools, &tools));
        let mut messages = vec![Message::system(prompt)];
        for m in &request.messages {
            match m {
                Message::System { .. } => {}
                Message::Assistant {
                    content,
                    tool_calls,
                } => {
                    messages.push(Message::assistant(render_turn(
                        content.as_deref(),
                        tool_calls,
                        self.style,
                    )));
                }
                Message::Tool { name, content, .. } => {
                    messages.push(Message::user(format!("Observation from {name}: {content}")));
                }
                other => messages.push(other.clone()),
            }
        }
        let mut inner = ModelRequest::new(messages, Vec::new().into());
        // One step is one short object: bounded, so that a model under a grammar that lets it write whitespace
        // or one endless string stops instead of filling its context (minutes on a CPU).
        inner.max_output_tokens = Some(request.max_output_tokens.unwrap_or(REACT_STEP_TOKENS));
        inner.temperature = request.temperature;
        match self.style {
            ReactStyle::Json => {
                if self.inner.capabilities().json_schema_output {
                    inner.response_format = Some(ResponseFormat::JsonSchema {
                        name: "react_step".to_owned(),
                        schema: reply_schema(&tools),
                        strict: false,
                    });
                }
            }
            ReactStyle::Text => inner.stop = vec!["Observation:".to_owned()],
        }
        inner
    }

    /// The tools part of the system prompt (`tools` are `all` without `final_answer`), written once per
    /// toolbox.
    fn tools_prompt(&self, all: &Arc<[ToolSpec]>, tools: &[&ToolSpec]) -> Arc<str> {
        self.tools_prompt
            .get_or_make(all, || tools_prompt(tools, self.style).into())
    }
}

#[async_trait]
impl<M: Model> Model for ReactModel<M> {
    fn name(&self) -> &str {
        &self.name
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::new()
            .native_tools(true)
            .strict_schemas(false)
            .json_schema_output(false)
            .parallel_tool_calls(false)
    }

    fn tool_replay(&self, call: &ToolCall) -> ToolReplay {
        self.inner.tool_replay(call)
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let mut inner = self.inner_request(request);
        let mut usage = Usage::default();
        let mut attempt = 0;
        loop {
            let reply = self.inner.complete(&inner).await?;
            usage.add(reply.usage);
            let raw = reply.content.clone().unwrap_or_default();
            let parsed = match self.style {
                ReactStyle::Json => parse_json_reply(&raw),
                ReactStyle::Text => parse_text_reply(&raw),
            };
            match parsed {
                Ok(step) => {
                    let mut response = step.into_response();
                    response.usage = usage;
                    response
                        .extra
                        .insert("react_attempts".into(), json!(attempt + 1));
                    return Ok(response);
                }
                Err(error) if attempt >= self.max_repairs => {
                    return Err(ModelError::InvalidResponse {
                        provider: self.inner.name().to_owned(),
                        message: format!(
                            "after {} repair request(s) the reply was still unusable ({error}); last reply: {}",
                            self.max_repairs,
                            cut(&raw, 300)
                        ),
                    });
                }
                Err(error) => {
                    attempt += 1;
                    inner.messages.push(Message::assistant(raw.clone()));
                    inner.messages.push(Message::user(repair_prompt(
                        &error, &raw, self.style, request,
                    )));
                }
            }
        }
    }
}

/// What the system prompt says after the agent's instructions: the tools and the reply format.
fn tools_prompt(tools: &[&ToolSpec], style: ReactStyle) -> String {
    let mut out = String::new();
    if tools.is_empty() {
        out.push_str("You have no tools.\n");
    } else {
        out.push_str("You have these tools:\n");
        for t in tools {
            out.push_str(&format!(
                "\n- {}: {}\n  Arguments (JSON Schema): {}\n",
                t.name,
                t.description,
                t.model_parameters(SchemaStyle::Standard)
            ));
        }
    }
    out.push('\n');
    out.push_str(&format_rules(tools, style));
    out
}

fn format_rules(tools: &[&ToolSpec], style: ReactStyle) -> String {
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    match style {
        ReactStyle::Json => "Work in steps. Reply with exactly one JSON object and no other text.\n\
             To use a tool: {\"thought\": \"<your reasoning>\", \"action\": {\"name\": \"<tool name>\", \"arguments\": {<the arguments>}}}\n\
             When you have the final answer: {\"thought\": \"<your reasoning>\", \"final_answer\": \"<the answer for the user>\"}\n\
             After each action you get the tool's result as an observation. One action per reply; never write observations yourself."
            .to_owned(),
        ReactStyle::Text => format!(
            "Work in steps, using exactly this format:\n\
             Thought: your reasoning\n\
             Action: the tool to use, one of [{}]\n\
             Action Input: the arguments as one JSON object\n\
             Observation: the tool's result (it is written for you; stop after Action Input)\n\
             ... (Thought / Action / Action Input / Observation repeat as needed)\n\
             Thought: I know the final answer\n\
             Final Answer: the answer for the user",
            names.join(", ")
        ),
    }
}

/// The JSON Schema of one JSON-style reply.
fn reply_schema(tools: &[&ToolSpec]) -> Value {
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    json!({
        "type": "object",
        "properties": {
            "thought": {"type": "string"},
            "action": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "enum": names},
                    "arguments": {"type": "object"}
                },
                "required": ["name", "arguments"]
            },
            "final_answer": {"type": "string"}
        },
        "required": ["thought"]
    })
}

/// An assistant turn of the conversation written the way the model is asked to write it.
fn render_turn(content: Option<&str>, calls: &[ToolCall], style: ReactStyle) -> String {
    let thought = content.unwrap_or("");
    let arguments = |c: &ToolCall| {
        serde_json::from_str::<Value>(&c.arguments).unwrap_or_else(|_| json!(c.arguments))
    };
    match style {
        ReactStyle::Json if calls.is_empty() => {
            json!({"thought": "", "final_answer": thought}).to_string()
        }
        ReactStyle::Json => calls
            .iter()
            .map(|c| {
                json!({"thought": thought, "action": {"name": c.name, "arguments": arguments(c)}})
                    .to_string()
            })
            .collect::<Vec<_>>()
            .join("\n"),
        ReactStyle::Text if calls.is_empty() => {
            format!("Thought: I know the final answer\nFinal Answer: {thought}")
        }
        ReactStyle::Text => calls
            .iter()
            .map(|c| {
                format!(
                    "Thought: {thought}\nAction: {}\nAction Input: {}",
                    c.name, c.arguments
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

fn repair_prompt(error: &str, raw: &str, style: ReactStyle, request: &ModelRequest) -> String {
    let tools: Vec<&ToolSpec> = request
        .tools
        .iter()
        .filter(|t| t.name != FINAL_ANSWER)
        .collect();
    let expected = match style {
        ReactStyle::Json => format!(
            "exactly one JSON object and no other text, matching this JSON Schema: {}",
            reply_schema(&tools)
        ),
        ReactStyle::Text => {
            "the Thought / Action / Action Input lines, or Thought / Final Answer".to_owned()
        }
    };
    format!(
        "Your last reply could not be used: {error}.\nYour reply was: {}\nReply again with {expected}.",
        cut(raw, 500)
    )
}
