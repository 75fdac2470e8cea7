//! The typed body against the `serde_json::Value` body it replaced: the same bytes on every shape of request.

use serde_json::{Value, json};
use steward_core::{
    Message, ModelRequest, ResponseFormat, SchemaStyle, ToolCall, ToolChoice, ToolSpec,
};

use super::{Body, DEFAULT_MAX_TOKENS};

/// The body as it was built before, a `Value` tree (kept here as the reference).
fn old_body(model: &str, request: &ModelRequest, stream: bool) -> Value {
    let system: Vec<&str> = request
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::System { content } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    let mut body = json!({
        "model": model,
        "max_tokens": request.max_output_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        "messages": old_messages(&request.messages),
    });
    if !system.is_empty() {
        body["system"] = json!(system.join("\n\n"));
    }
    if !request.tools.is_empty() {
        body["tools"] = Value::Array(
            request
                .tools
                .iter()
                .map(|t| {
                    json!({
                        "name": t.name,
                        "description": t.description,
                        "input_schema": t.model_parameters(steward_core::SchemaStyle::Standard),
                    })
                })
                .collect(),
        );
        body["tool_choice"] = match &request.tool_choice {
            ToolChoice::Required => json!({"type": "any"}),
            ToolChoice::None => json!({"type": "none"}),
            ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
            _ => json!({"type": "auto"}),
        };
    }
    if let Some(t) = request.temperature {
        body["temperature"] = json!(t);
    }
    if !request.stop.is_empty() {
        body["stop_sequences"] = json!(request.stop);
    }
    if stream {
        body["stream"] = json!(true);
    }
    body
}

/// Messages as content blocks, with consecutive messages of one role merged (the API wants roles to
/// alternate, and all results of one assistant turn in one user message).
fn old_messages(messages: &[Message]) -> Vec<Value> {
    let mut out: Vec<(String, Vec<Value>)> = Vec::new();
    for m in messages {
        let (role, blocks) = match m {
            Message::System { .. } => continue,
            Message::User { content } => ("user", text_block(content)),
            Message::Assistant {
                content,
                tool_calls,
            } => {
                let mut blocks = content.as_deref().map(text_block).unwrap_or_default();
                for call in tool_calls {
                    let input = match serde_json::from_str::<Value>(&call.arguments) {
                        Ok(v @ Value::Object(_)) => v,
                        // The API insists on an object; keep what the model sent, visibly.
                        _ => json!({ "_unparsed_arguments": call.arguments }),
                    };
                    blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
                }
                ("assistant", blocks)
            }
            Message::Tool {
                call_id,
                content,
                is_error,
                ..
            } => {
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": content});
                if *is_error {
                    block["is_error"] = json!(true);
                }
                ("user", vec![block])
            }
            _ => continue,
        };
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some((last, existing)) if last == role => existing.extend(blocks),
            _ => out.push((role.to_owned(), blocks)),
        }
    }
    out.into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

fn text_block(text: &str) -> Vec<Value> {
    if text.is_empty() {
        Vec::new()
    } else {
        vec![json!({"type": "text", "text": text})]
    }
}

fn tools() -> Vec<ToolSpec> {
    let mut lenient = ToolSpec::new(
        "describe",
        "Describes \"tables\" — with quotes, a dash and é.",
        json!({"title": "D", "type": "object", "properties": {"tables": {"type": "array", "items": {"type": "string"}}}, "required": ["tables"]}),
    );
    lenient.lenient = true;
    vec![
        ToolSpec::new(
            "query",
            "Runs one read-only SQL statement.",
            json!({"$schema": "x", "type": "object", "properties": {"sql": {"type": "string"}}, "required": ["sql"]}),
        ),
        lenient,
    ]
}

fn conversation() -> Vec<Message> {
    vec![
        Message::system("You are careful."),
        Message::user("How many rows? \u{1F600} \"quoted\""),
        Message::system("Second instructions."),
        Message::user(""),
        Message::user("Go on."),
        Message::Assistant {
            content: Some("Let me look.".into()),
            tool_calls: vec![
                ToolCall::new("toolu_1", "query", r#"{ "sql" : "SELECT 1" }"#),
                ToolCall::new("toolu_2", "describe", "not json"),
                ToolCall::new("toolu_3", "describe", "[1, 2]"),
            ],
        },
        Message::Tool {
            call_id: "toolu_1".into(),
            name: "query".into(),
            content: "1 row".into(),
            is_error: false,
        },
        Message::Tool {
            call_id: "toolu_2".into(),
            name: "describe".into(),
            content: "bad arguments".into(),
            is_error: true,
        },
        Message::Assistant {
            content: None,
            tool_calls: Vec::new(),
        },
        Message::assistant(""),
        Message::assistant("One row."),
    ]
}

fn requests() -> Vec<ModelRequest> {
    let mut out: Vec<ModelRequest> = [
        ToolChoice::Auto,
        ToolChoice::Required,
        ToolChoice::None,
        ToolChoice::Tool("query".into()),
    ]
    .into_iter()
    .map(|c| ModelRequest::new(conversation(), tools().into()).tool_choice(c))
    .collect();
    out.push(ModelRequest::new(
        vec![Message::user("hi")],
        Vec::new().into(),
    ));
    let mut full = ModelRequest::new(conversation(), tools().into())
        .temperature(0.7)
        .max_output_tokens(123);
    full.stop = vec!["STOP".into()];
    full.response_format = Some(ResponseFormat::JsonObject);
    out.push(full);
    out
}

#[test]
fn the_typed_body_is_byte_for_byte_the_old_one() {
    for request in requests() {
        let schemas: Vec<Value> = request
            .tools
            .iter()
            .map(|t| t.model_parameters(SchemaStyle::Standard))
            .collect();
        for stream in [false, true] {
            let new =
                serde_json::to_string(&Body::new("claude", &request, &schemas, stream)).unwrap();
            let old = serde_json::to_string(&old_body("claude", &request, stream)).unwrap();
            assert_eq!(new, old);
        }
    }
}

#[test]
fn turns_merge_and_system_prompts_join() {
    let request = ModelRequest::new(conversation(), tools().into());
    let body = serde_json::to_value(Body::new("claude", &request, &[], false)).unwrap();
    assert_eq!(body["system"], "You are careful.\n\nSecond instructions.");
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
    let calls = &body["messages"][1]["content"];
    assert_eq!(calls[1]["input"], json!({"sql": "SELECT 1"}));
    assert_eq!(
        calls[2]["input"],
        json!({"_unparsed_arguments": "not json"})
    );
    assert_eq!(calls[3]["input"], json!({"_unparsed_arguments": "[1, 2]"}));
    assert_eq!(body["messages"][2]["content"][1]["is_error"], true);
    assert!(body["messages"][2]["content"][0].get("is_error").is_none());
}
