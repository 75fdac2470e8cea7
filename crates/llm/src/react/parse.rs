//! Reading ReAct replies: one JSON object (inside code fences or prose), or Thought / Action lines.

use serde_json::{Value, json};
use steward_core::{ModelResponse, ToolCall};

use crate::quirks::{new_call_id, strip_fences};

/// What one ReAct reply means.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum ReactStep {
    Action { thought: String, call: ToolCall },
    Final { thought: String, answer: String },
}

impl ReactStep {
    pub(super) fn into_response(self) -> ModelResponse {
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

/// Parses a JSON-style reply, tolerating prose and code fences around the object.
pub(super) fn parse_json_reply(raw: &str) -> Result<ReactStep, String> {
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
pub(super) fn parse_text_reply(raw: &str) -> Result<ReactStep, String> {
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
