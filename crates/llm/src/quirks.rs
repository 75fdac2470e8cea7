//! What real servers get wrong, handled in one place: finish reasons nobody documented, tool-call arguments as
//! objects instead of strings, missing ids, and tool calls printed as text in the reply instead of sent as
//! tool calls (Hermes/Qwen `<tool_call>` tags, Mistral `[TOOL_CALLS]`, Llama `<|python_tag|>`, bare JSON).

use serde_json::Value;
use steward_core::{FinishReason, ToolCall, ToolSpec};

/// Maps a provider's finish reason, including odd ones (`eos`, empty), to ours.
pub(crate) fn finish_reason(raw: Option<&str>, has_tool_calls: bool) -> FinishReason {
    match raw.map(str::trim).unwrap_or("") {
        "tool_calls" | "function_call" | "tool_use" => FinishReason::ToolCalls,
        "length" | "max_tokens" | "model_length" => FinishReason::Length,
        "content_filter" | "refusal" | "safety" => FinishReason::ContentFilter,
        "stop" | "eos" | "end_turn" | "stop_sequence" | "" | "null" => {
            if has_tool_calls {
                FinishReason::ToolCalls
            } else {
                FinishReason::Stop
            }
        }
        other => FinishReason::Other(other.to_owned()),
    }
}

/// Tool-call arguments as text: strings stay as they are, objects (sent by some servers) become JSON.
pub(crate) fn arguments_text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// A fresh tool-call id for servers that send none.
pub(crate) fn new_call_id() -> String {
    format!("call_{:012x}", fastrand::u64(..) & 0xffff_ffff_ffff)
}

/// Tool calls a model printed as text. Only calls to tools that were offered count, so ordinary JSON answers
/// are left alone. Returns the text left over (if any) and the calls.
pub(crate) fn tool_calls_in_text(
    text: &str,
    tools: &[ToolSpec],
) -> Option<(Option<String>, Vec<ToolCall>)> {
    if tools.is_empty() {
        return None;
    }
    let trimmed = text.trim();
    // Hermes / Qwen: one or more <tool_call>{…}</tool_call> blocks, maybe with text around.
    if trimmed.contains("<tool_call>") {
        let mut calls = Vec::new();
        let mut rest = String::new();
        let mut remaining = trimmed;
        while let Some(start) = remaining.find("<tool_call>") {
            rest.push_str(&remaining[..start]);
            let after = &remaining[start + "<tool_call>".len()..];
            let (inner, next) = match after.find("</tool_call>") {
                Some(end) => (&after[..end], &after[end + "</tool_call>".len()..]),
                None => (after, ""),
            };
            calls.extend(calls_from_json(inner.trim(), tools)?);
            remaining = next;
        }
        rest.push_str(remaining);
        return finish(rest, calls);
    }
    for prefix in [
        "[TOOL_CALLS]",
        "<|python_tag|>",
        "<tool_calls>",
        "functools",
    ] {
        if let Some(after) = trimmed.strip_prefix(prefix) {
            let after = after.trim().trim_end_matches("</tool_calls>");
            return finish(String::new(), calls_from_json(after, tools)?);
        }
    }
    let body = strip_fences(trimmed);
    if body.starts_with('{') || body.starts_with('[') {
        return finish(String::new(), calls_from_json(body, tools)?);
    }
    None
}

fn finish(rest: String, calls: Vec<ToolCall>) -> Option<(Option<String>, Vec<ToolCall>)> {
    if calls.is_empty() {
        return None;
    }
    let rest = rest.trim();
    Some(((!rest.is_empty()).then(|| rest.to_owned()), calls))
}

/// Removes a Markdown code fence around a text.
pub(crate) fn strip_fences(text: &str) -> &str {
    let t = text.trim();
    let Some(inner) = t.strip_prefix("```") else {
        return t;
    };
    let inner = inner.trim_end();
    let inner = inner.strip_suffix("```").unwrap_or(inner);
    // Drop a language tag on the first line (```json).
    match inner.split_once('\n') {
        Some((first, rest)) if !first.trim_start().starts_with(['{', '[']) => rest.trim(),
        _ => inner.trim(),
    }
}

fn calls_from_json(text: &str, tools: &[ToolSpec]) -> Option<Vec<ToolCall>> {
    let value: Value = serde_json::from_str(text).ok()?;
    let items = match &value {
        Value::Array(items) => items.clone(),
        Value::Object(map) => match map.get("tool_calls") {
            Some(Value::Array(items)) => items.clone(),
            Some(_) => return None,
            None => vec![value.clone()],
        },
        _ => return None,
    };
    let mut calls = Vec::with_capacity(items.len());
    for item in items {
        let item = item.get("function").cloned().unwrap_or(item);
        let name = item.get("name")?.as_str()?;
        if !tools.iter().any(|t| t.name == name) {
            return None;
        }
        let args = item
            .get("arguments")
            .or_else(|| item.get("parameters"))
            .or_else(|| item.get("input"));
        let args = match args {
            Some(Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => "{}".to_owned(),
        };
        let id = item
            .get("id")
            .and_then(Value::as_str)
            .map_or_else(new_call_id, str::to_owned);
        calls.push(ToolCall::new(id, name, args));
    }
    Some(calls)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools() -> Vec<ToolSpec> {
        vec![ToolSpec::new("get_weather", "", json!({"type": "object"}))]
    }

    #[test]
    fn hermes_tags_with_text_around() {
        let (rest, calls) = tool_calls_in_text(
            "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
            &tools(),
        )
        .unwrap();
        assert_eq!(rest.as_deref(), Some("Let me check."));
        assert_eq!(calls[0].name, "get_weather");
        assert_eq!(calls[0].arguments, r#"{"city":"Paris"}"#);
        assert!(calls[0].id.starts_with("call_"));
    }

    #[test]
    fn mistral_python_tag_and_bare_json() {
        for text in [
            r#"[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Oslo"}}]"#,
            r#"<|python_tag|>{"name": "get_weather", "parameters": {"city": "Oslo"}}"#,
            "```json\n{\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Oslo\\\"}\"}\n```",
            r#"{"tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]}"#,
        ] {
            let (rest, calls) =
                tool_calls_in_text(text, &tools()).unwrap_or_else(|| panic!("{text}"));
            assert!(rest.is_none());
            assert_eq!(calls.len(), 1);
            let args: Value = serde_json::from_str(&calls[0].arguments).unwrap();
            assert_eq!(args, json!({"city": "Oslo"}), "{text}");
        }
    }

    #[test]
    fn ordinary_json_and_unknown_tools_are_left_alone() {
        assert!(tool_calls_in_text(r#"{"name": "Ada", "age": 36}"#, &tools()).is_none());
        assert!(tool_calls_in_text(r#"{"name": "rm_rf", "arguments": {}}"#, &tools()).is_none());
        assert!(tool_calls_in_text("The weather is fine.", &tools()).is_none());
        assert!(tool_calls_in_text(r#"{"name": "get_weather"}"#, &[]).is_none());
    }

    #[test]
    fn odd_finish_reasons() {
        assert_eq!(finish_reason(Some("eos"), false), FinishReason::Stop);
        assert_eq!(finish_reason(Some(""), true), FinishReason::ToolCalls);
        assert_eq!(finish_reason(None, false), FinishReason::Stop);
        assert_eq!(
            finish_reason(Some("abort"), false),
            FinishReason::Other("abort".into())
        );
    }
}
