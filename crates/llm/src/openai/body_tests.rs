//! The typed body against the `serde_json::Value` body it replaced: the same bytes on every shape of request.

use serde_json::{Map, Value, json};
use steward_core::{
    Message, ModelRequest, ResponseFormat, SchemaStyle, ToolCall, ToolChoice, ToolSpec,
};

use super::Body;
use crate::openai::wire::{Dialect, FormatLevel};

/// The body as it was built before, a `Value` tree (kept here as the reference).
fn old_body(model: &str, request: &ModelRequest, dialect: Dialect, stream: bool) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert(
        "messages".into(),
        Value::Array(request.messages.iter().map(old_message).collect()),
    );
    if !request.tools.is_empty() {
        body.insert(
            "tools".into(),
            Value::Array(request.tools.iter().map(|t| old_tool(t, dialect)).collect()),
        );
        let choice = match &request.tool_choice {
            ToolChoice::Required => json!("required"),
            ToolChoice::None => json!("none"),
            ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
            _ => json!("auto"),
        };
        body.insert("tool_choice".into(), choice);
    }
    if let Some(format) = &request.response_format {
        let format = match format {
            ResponseFormat::JsonSchema {
                name,
                schema,
                strict,
            } => {
                json!({"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": strict}})
            }
            _ => json!({"type": "json_object"}),
        };
        body.insert("response_format".into(), format);
    }
    if let Some(max) = request.max_output_tokens {
        let key = if dialect.max_completion_tokens {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body.insert(key.into(), json!(max));
    }
    if let Some(t) = request.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if !request.stop.is_empty() {
        body.insert("stop".into(), json!(request.stop));
    }
    if stream {
        body.insert("stream".into(), json!(true));
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Value::Object(body)
}

fn old_tool(spec: &ToolSpec, dialect: Dialect) -> Value {
    let style = if dialect.strict_tools {
        SchemaStyle::Strict
    } else {
        SchemaStyle::Standard
    };
    let mut function = json!({
        "name": spec.name,
        "description": spec.description,
        "parameters": spec.model_parameters(style),
    });
    if dialect.strict_tools {
        function["strict"] = json!(true);
    }
    json!({"type": "function", "function": function})
}

fn old_message(m: &Message) -> Value {
    match m {
        Message::System { content } => json!({"role": "system", "content": content}),
        Message::User { content } => json!({"role": "user", "content": content}),
        Message::Assistant {
            content,
            tool_calls,
        } => {
            let mut out = json!({"role": "assistant"});
            match content {
                Some(text) => out["content"] = json!(text),
                None if tool_calls.is_empty() => out["content"] = json!(""),
                None => {}
            }
            if !tool_calls.is_empty() {
                out["tool_calls"] = Value::Array(
                    tool_calls
                        .iter()
                        .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                        .collect(),
                );
            }
            out
        }
        Message::Tool {
            call_id, content, ..
        } => json!({"role": "tool", "tool_call_id": call_id, "content": content}),
        _ => json!({"role": "user", "content": m.text().unwrap_or_default()}),
    }
}

fn tools() -> Vec<ToolSpec> {
    let query = ToolSpec::new(
        "query",
        "Runs one read-only SQL statement.",
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Query",
            "type": "object",
            "properties": {
                "sql": {"type": "string", "description": "The statement."},
                "limit": {"type": ["integer", "null"], "format": "uint32", "minimum": 1, "default": 100},
                "kind": {"oneOf": [{"const": "a"}, {"const": "b"}]},
                "tags": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}}
            },
            "required": ["sql"],
            "additionalProperties": false
        }),
    );
    let mut lenient = ToolSpec::new(
        "describe",
        "Describes \"tables\" — with quotes, a dash and é.",
        json!({"type": "object", "properties": {"tables": {"type": "array", "items": {"type": "string"}}}, "required": ["tables"]}),
    );
    lenient.lenient = true;
    let bare = ToolSpec::new("now", "", json!({}));
    vec![query, lenient, bare]
}

fn conversation() -> Vec<Message> {
    vec![
        Message::system("You answer questions.\nBe brief."),
        Message::user("How many rows? \u{1F600} \"quoted\" \\ back\tslash"),
        Message::Assistant {
            content: None,
            tool_calls: vec![
                ToolCall::new("call_1", "query", r#"{"sql": "SELECT 1"}"#),
                ToolCall::new("", "describe", "not json at all"),
            ],
        },
        Message::Tool {
            call_id: "call_1".into(),
            name: "query".into(),
            content: "1 row".into(),
            is_error: false,
        },
        Message::Tool {
            call_id: String::new(),
            name: "describe".into(),
            content: "error: bad arguments".into(),
            is_error: true,
        },
        Message::Assistant {
            content: Some("Looking again.".into()),
            tool_calls: vec![ToolCall::new("call_3", "now", "{}")],
        },
        Message::Assistant {
            content: None,
            tool_calls: Vec::new(),
        },
        Message::assistant("There is one row."),
        Message::user(""),
    ]
}

fn requests() -> Vec<ModelRequest> {
    let mut out = Vec::new();
    for choice in [
        ToolChoice::Auto,
        ToolChoice::Required,
        ToolChoice::None,
        ToolChoice::Tool("query".into()),
    ] {
        out.push(ModelRequest::new(conversation(), tools().into()).tool_choice(choice));
    }
    // No tools: no tool choice either, whatever the request says.
    out.push(
        ModelRequest::new(vec![Message::user("hi")], Vec::new().into())
            .tool_choice(ToolChoice::Required),
    );
    let mut full = ModelRequest::new(conversation(), tools().into())
        .temperature(0.2)
        .max_output_tokens(300);
    full.stop = vec!["Observation:".into(), "\n\n".into()];
    full.response_format = Some(ResponseFormat::JsonObject);
    out.push(full.clone());
    for strict in [false, true] {
        let mut r = full.clone();
        r.response_format = Some(ResponseFormat::JsonSchema {
            name: "react_step".into(),
            schema: json!({"type": "object", "properties": {"thought": {"type": "string"}}, "required": ["thought"]}),
            strict,
        });
        out.push(r);
    }
    let mut odd = ModelRequest::new(vec![Message::user("x")], tools().into()).temperature(1.7);
    odd.temperature = Some(f32::NAN);
    out.push(odd);
    out
}

#[test]
fn the_typed_body_is_byte_for_byte_the_old_one() {
    let mut checked = 0;
    for request in requests() {
        for max_completion_tokens in [false, true] {
            for strict_tools in [false, true] {
                let dialect = Dialect {
                    max_completion_tokens,
                    strict_tools,
                    assistant_content: false,
                    format: FormatLevel::JsonSchema,
                };
                let style = if strict_tools {
                    SchemaStyle::Strict
                } else {
                    SchemaStyle::Standard
                };
                let schemas: Vec<Value> = request
                    .tools
                    .iter()
                    .map(|t| t.model_parameters(style))
                    .collect();
                for stream in [false, true] {
                    let new = serde_json::to_string(&Body::new(
                        "gpt-4o-mini",
                        &request,
                        &schemas,
                        dialect,
                        stream,
                    ))
                    .unwrap();
                    let old =
                        serde_json::to_string(&old_body("gpt-4o-mini", &request, dialect, stream))
                            .unwrap();
                    assert_eq!(new, old, "{dialect:?}, stream {stream}");
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, requests().len() * 8);
}

#[test]
fn the_body_has_the_fields_servers_expect() {
    let mut request = ModelRequest::new(conversation(), tools().into()).max_output_tokens(50);
    request.temperature = Some(0.5);
    let dialect = Dialect {
        max_completion_tokens: false,
        strict_tools: true,
        assistant_content: false,
        format: FormatLevel::JsonSchema,
    };
    let schemas: Vec<Value> = request
        .tools
        .iter()
        .map(|t| t.model_parameters(SchemaStyle::Strict))
        .collect();
    let body = serde_json::to_value(Body::new("m", &request, &schemas, dialect, true)).unwrap();
    assert_eq!(body["max_tokens"], 50);
    assert!(body.get("max_completion_tokens").is_none());
    assert_eq!(body["temperature"], 0.5);
    assert_eq!(body["tool_choice"], "auto");
    assert_eq!(body["tools"][0]["function"]["strict"], true);
    assert_eq!(
        body["tools"][0]["function"]["parameters"]["additionalProperties"],
        false
    );
    assert_eq!(body["stream_options"]["include_usage"], true);
    let assistant = &body["messages"][2];
    assert!(assistant.get("content").is_none(), "{assistant}");
    assert_eq!(
        assistant["tool_calls"][1]["function"]["arguments"],
        "not json at all"
    );
    assert_eq!(body["messages"][6]["content"], "");
    assert_eq!(body["messages"][4]["role"], "tool");
    assert!(body["messages"][4].get("is_error").is_none());
}

#[test]
fn learned_forms_of_content_and_response_format() {
    let mut request = ModelRequest::new(conversation(), tools().into());
    request.response_format = Some(ResponseFormat::JsonSchema {
        name: "step".into(),
        schema: json!({"type": "object"}),
        strict: true,
    });
    let schemas: Vec<Value> = request
        .tools
        .iter()
        .map(|t| t.model_parameters(SchemaStyle::Standard))
        .collect();
    let body = |assistant_content, format| {
        let dialect = Dialect {
            max_completion_tokens: false,
            strict_tools: false,
            assistant_content,
            format,
        };
        serde_json::to_value(Body::new("m", &request, &schemas, dialect, false)).unwrap()
    };
    let with = body(true, FormatLevel::JsonSchema);
    assert_eq!(with["messages"][2]["content"], "", "{with}");
    assert_eq!(with["response_format"]["type"], "json_schema");
    let object = body(true, FormatLevel::JsonObjectSchema);
    assert_eq!(object["response_format"]["type"], "json_object");
    assert_eq!(object["response_format"]["schema"]["type"], "object");
    let plain = body(false, FormatLevel::JsonObject);
    assert!(plain["messages"][2].get("content").is_none(), "{plain}");
    assert!(plain["response_format"].get("schema").is_none());
    let text = body(false, FormatLevel::Text);
    assert!(text.get("response_format").is_none(), "{text}");
}
