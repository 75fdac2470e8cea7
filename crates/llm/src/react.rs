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

use async_trait::async_trait;
use serde_json::{Value, json};
use steward_core::{
    Capabilities, FINAL_ANSWER, Message, Model, ModelError, ModelRequest, ModelResponse,
    ResponseFormat, SchemaStyle, ToolCall, ToolSpec, Usage,
};

use crate::http::cut;
use crate::quirks::{new_call_id, strip_fences};

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
        let mut messages = vec![Message::system(system_prompt(
            &instructions.join("\n\n"),
            &tools,
            self.style,
        ))];
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
        inner.max_output_tokens = request.max_output_tokens;
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
}

#[async_trait]
impl<M: Model> Model for ReactModel<M> {
    fn name(&self) -> &str {
        &self.name
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            native_tools: true,
            strict_schemas: false,
            json_schema_output: false,
            parallel_tool_calls: false,
        }
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

/// What one ReAct reply means.
#[derive(Clone, Debug, PartialEq)]
enum ReactStep {
    Action { thought: String, call: ToolCall },
    Final { thought: String, answer: String },
}

impl ReactStep {
    fn into_response(self) -> ModelResponse {
        match self {
            Self::Action { thought, call } => {
                let mut r = ModelResponse::tool_calls(vec![call]);
                r.content = (!thought.is_empty()).then_some(thought);
                r
            }
            Self::Final { thought, answer } => {
                let mut r = ModelResponse::text(answer);
                if !thought.is_empty() {
                    r.extra.insert("thought".into(), json!(thought));
                }
                r
            }
        }
    }
}

fn system_prompt(instructions: &str, tools: &[&ToolSpec], style: ReactStyle) -> String {
    let mut out = String::new();
    if !instructions.is_empty() {
        out.push_str(instructions);
        out.push_str("\n\n");
    }
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

/// Parses a JSON-style reply, tolerating prose and code fences around the object.
fn parse_json_reply(raw: &str) -> Result<ReactStep, String> {
    let value = extract_json_object(raw)?;
    let thought = value
        .get("thought")
        .map(|t| t.as_str().map_or_else(|| t.to_string(), str::to_owned))
        .unwrap_or_default();
    for key in ["final_answer", "answer", "final"] {
        if let Some(answer) = value.get(key).filter(|v| !v.is_null()) {
            let answer = answer
                .as_str()
                .map_or_else(|| answer.to_string(), str::to_owned);
            return Ok(ReactStep::Final { thought, answer });
        }
    }
    let action = value
        .get("action")
        .filter(|v| !v.is_null())
        .unwrap_or(&value);
    let (name, arguments) = match action {
        Value::String(name) => (
            name.clone(),
            value
                .get("action_input")
                .or_else(|| value.get("arguments"))
                .cloned(),
        ),
        Value::Object(map) => match map
            .get("name")
            .or_else(|| map.get("tool"))
            .and_then(Value::as_str)
        {
            Some(name) => (
                name.to_owned(),
                ["arguments", "args", "input", "parameters", "action_input"]
                    .iter()
                    .find_map(|k| map.get(*k))
                    .cloned(),
            ),
            None => return Err("the object has neither `action` nor `final_answer`".to_owned()),
        },
        _ => return Err("`action` must be an object with `name` and `arguments`".to_owned()),
    };
    let arguments = match arguments {
        None | Some(Value::Null) => "{}".to_owned(),
        Some(Value::String(s)) => s,
        Some(v) => v.to_string(),
    };
    Ok(ReactStep::Action {
        thought,
        call: ToolCall::new(new_call_id(), name, arguments),
    })
}

/// The first balanced JSON object in a text (inside code fences or prose), parsed.
fn extract_json_object(raw: &str) -> Result<Value, String> {
    let text = strip_fences(raw);
    if let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(text) {
        return Ok(v);
    }
    let mut last_error = "the reply contains no JSON object".to_owned();
    let mut from = 0;
    while let Some(offset) = text[from..].find('{') {
        let start = from + offset;
        match balanced_end(&text[start..]) {
            Some(len) => {
                let candidate = &text[start..start + len];
                match serde_json::from_str::<Value>(candidate)
                    .or_else(|_| serde_json::from_str::<Value>(&drop_trailing_commas(candidate)))
                {
                    Ok(v @ Value::Object(_)) => return Ok(v),
                    Ok(_) => {}
                    Err(e) => last_error = format!("the JSON object is invalid: {e}"),
                }
            }
            None => {
                last_error = "the JSON object is not closed".to_owned();
                break;
            }
        }
        from = start + 1;
    }
    Err(last_error)
}

/// The length of the JSON object starting at `text[0] == '{'`, respecting strings.
fn balanced_end(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => depth += 1,
            '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

fn drop_trailing_commas(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    let mut in_string = false;
    let mut escaped = false;
    for (i, &c) in chars.iter().enumerate() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else if c == ',' {
            let next = chars[i + 1..].iter().find(|n| !n.is_whitespace());
            if matches!(next, Some('}') | Some(']')) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// Parses a text-style reply.
fn parse_text_reply(raw: &str) -> Result<ReactStep, String> {
    let text = raw.split("Observation:").next().unwrap_or(raw);
    let field = |label: &str| -> Option<&str> {
        let start = text.find(label)? + label.len();
        let rest = &text[start..];
        let end = [
            "\nThought:",
            "\nAction:",
            "\nAction Input:",
            "\nFinal Answer:",
        ]
        .iter()
        .filter_map(|m| rest.find(m))
        .min()
        .unwrap_or(rest.len());
        Some(rest[..end].trim())
    };
    let thought = field("Thought:").unwrap_or("").to_owned();
    if let Some(answer) = text
        .find("Final Answer:")
        .map(|i| text[i + "Final Answer:".len()..].trim())
    {
        return Ok(ReactStep::Final {
            thought,
            answer: answer.to_owned(),
        });
    }
    match (field("Action:"), field("Action Input:")) {
        (Some(name), input) => {
            let name =
                name.trim_matches(|c: char| c == '`' || c == '[' || c == ']' || c.is_whitespace());
            if name.is_empty() {
                return Err("`Action:` names no tool".to_owned());
            }
            let input = input.map(strip_fences).unwrap_or("{}");
            let arguments = match extract_json_object(input) {
                Ok(v) => v.to_string(),
                Err(_) => input.to_owned(),
            };
            Ok(ReactStep::Action {
                thought,
                call: ToolCall::new(new_call_id(), name, arguments),
            })
        }
        (None, _) if !text.contains("Action") && !text.trim().is_empty() => Ok(ReactStep::Final {
            thought: String::new(),
            answer: text.trim().to_owned(),
        }),
        (None, _) => Err("the reply has neither `Action:` nor `Final Answer:`".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn action(step: &ReactStep) -> (&str, Value) {
        match step {
            ReactStep::Action { call, .. } => (
                call.name.as_str(),
                serde_json::from_str(&call.arguments).unwrap(),
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn json_replies_in_every_wrapping() {
        for raw in [
            r#"{"thought": "need the date", "action": {"name": "current_date", "arguments": {}}}"#,
            "```json\n{\"thought\": \"need the date\", \"action\": {\"name\": \"current_date\", \"arguments\": {}}}\n```",
            "My apologies for the confusion. Here is the corrected response:\n{\"thought\": \"need the date\", \"action\": {\"name\": \"current_date\", \"arguments\": {},}}\nLet me know!",
            r#"{"thought": "need the date", "action": "current_date", "action_input": {}}"#,
            r#"{"name": "current_date", "arguments": {}}"#,
        ] {
            let step = parse_json_reply(raw).unwrap_or_else(|e| panic!("{raw}: {e}"));
            assert_eq!(action(&step), ("current_date", json!({})), "{raw}");
        }
        let step =
            parse_json_reply(r#"Sure! {"thought": "done", "final_answer": "It is {Saturday}."}"#)
                .unwrap();
        assert_eq!(
            step,
            ReactStep::Final {
                thought: "done".into(),
                answer: "It is {Saturday}.".into()
            }
        );
    }

    #[test]
    fn hopeless_json_replies_say_why() {
        assert_eq!(
            parse_json_reply("I think it is Saturday.").unwrap_err(),
            "the reply contains no JSON object"
        );
        assert_eq!(
            parse_json_reply(r#"{"thought": "x""#).unwrap_err(),
            "the JSON object is not closed"
        );
        assert!(
            parse_json_reply(r#"{"thought": "x"}"#)
                .unwrap_err()
                .contains("neither `action` nor `final_answer`")
        );
    }

    #[test]
    fn text_replies() {
        let step = parse_text_reply(
            "Thought: I need the date\nAction: current_date\nAction Input: {}\nObservation: x",
        )
        .unwrap();
        assert_eq!(action(&step), ("current_date", json!({})));
        let step = parse_text_reply("Thought: math\nAction: `calculator`\nAction Input: ```json\n{\"expression\": \"2+2\"}\n```").unwrap();
        assert_eq!(action(&step), ("calculator", json!({"expression": "2+2"})));
        let step = parse_text_reply("Thought: done\nFinal Answer: 4").unwrap();
        assert_eq!(
            step,
            ReactStep::Final {
                thought: "done".into(),
                answer: "4".into()
            }
        );
        assert!(parse_text_reply("Thought: hmm\nAction Input: {}").is_err());
    }
}
