//! The events a client sees: the runner's events turned into the API's JSON events (see docs/server-api.md),
//! sent to the client's stream as they happen and kept for the conversation's transcript.

use std::sync::Mutex;

use serde_json::{Value, json};
use steward_core::{Event, EventRecord, Observer, StreamDelta, ToolData};
use tokio::sync::mpsc;

/// The longest observation text sent to a client (the whole text stays in the run store).
const MAX_OBSERVATION_CHARS: usize = 20_000;
/// The most rows of a table sent to a client.
const MAX_TABLE_ROWS: usize = 500;

/// Forwards a run tree's events to a client and keeps them (but the streamed text pieces) for the transcript.
pub(crate) struct Forwarder {
    conversation_id: String,
    sender: mpsc::UnboundedSender<Value>,
    kept: Mutex<Vec<Value>>,
}

impl Forwarder {
    pub(crate) fn new(conversation_id: &str, sender: mpsc::UnboundedSender<Value>) -> Self {
        Self {
            conversation_id: conversation_id.to_owned(),
            sender,
            kept: Mutex::new(Vec::new()),
        }
    }

    /// Sends a last event (answer, approval or error) and keeps it.
    pub(crate) fn send(&self, event: Value) {
        if let Ok(mut kept) = self.kept.lock() {
            kept.push(event.clone());
        }
        // A client that went away stops listening; the run goes on and is saved all the same.
        let _ = self.sender.send(event);
    }

    /// The events kept so far.
    pub(crate) fn kept(&self) -> Vec<Value> {
        self.kept.lock().map(|k| k.clone()).unwrap_or_default()
    }
}

impl Observer for Forwarder {
    fn on_event(&self, _event: &Event) {}

    fn on_record(&self, record: &EventRecord) {
        let Some(mut event) = api_event(&record.event, &self.conversation_id) else {
            return;
        };
        if let (Some(parent), Some(obj)) = (&record.parent_run_id, event.as_object_mut()) {
            obj.insert("parent_run_id".into(), json!(parent));
        }
        if event["type"] == "delta" {
            let _ = self.sender.send(event);
        } else {
            self.send(event);
        }
    }
}

/// The API event of a runner event, if clients see it.
pub(crate) fn api_event(event: &Event, conversation_id: &str) -> Option<Value> {
    Some(match event {
        Event::RunStarted {
            run_id,
            agent,
            input,
        } => {
            json!({"type": "run", "run_id": run_id, "agent": agent, "conversation_id": conversation_id, "input": input})
        }
        Event::ModelRequest { run_id, step, .. } => {
            json!({"type": "step", "run_id": run_id, "step": step})
        }
        Event::ModelDelta {
            run_id,
            step,
            delta: StreamDelta::Text(text),
        } => json!({"type": "delta", "run_id": run_id, "step": step, "text": text}),
        Event::ModelResponse {
            run_id,
            step,
            content: Some(text),
            tool_calls,
            ..
        } if !tool_calls.is_empty() && !text.trim().is_empty() => {
            json!({"type": "thought", "run_id": run_id, "step": step, "text": text})
        }
        Event::ToolCall { run_id, call } => {
            let arguments = serde_json::from_str::<Value>(&call.arguments)
                .unwrap_or_else(|_| Value::String(call.arguments.clone()));
            let sql = ["sql", "query"]
                .iter()
                .find_map(|k| arguments.get(*k).and_then(Value::as_str))
                .map(str::to_owned);
            json!({"type": "tool_call", "run_id": run_id, "call_id": call.id, "tool": call.name,
                   "arguments": arguments, "sql": sql})
        }
        Event::ValidationError {
            run_id,
            call,
            rejection,
        } => json!({"type": "rejected", "run_id": run_id, "call_id": call.id, "tool": call.name,
                   "reason": rejection.observation}),
        Event::ToolDenied {
            run_id,
            call,
            reason,
        } => json!({"type": "rejected", "run_id": run_id, "call_id": call.id, "tool": call.name,
                   "reason": reason}),
        Event::ToolResult {
            run_id,
            call_id,
            tool,
            content,
            is_error,
            data,
            ..
        } => {
            let mut event = json!({"type": "observation", "run_id": run_id, "call_id": call_id,
                "tool": tool, "content": cut(content), "is_error": is_error});
            if let Some(ToolData::Table {
                columns,
                rows,
                truncated,
            }) = data
            {
                let shown = &rows[..rows.len().min(MAX_TABLE_ROWS)];
                event["table"] = json!({"columns": columns, "rows": shown,
                    "truncated": *truncated || rows.len() > shown.len()});
                if let Some(chart) = crate::chart::chart(columns, shown, None) {
                    event["chart"] = json!(chart);
                }
            }
            event
        }
        Event::ApprovalDecided {
            run_id,
            call_id,
            approval,
        } => json!({"type": "decided", "run_id": run_id, "call_id": call_id, "decision": approval}),
        Event::Finished {
            run_id,
            usage,
            steps,
            ..
        } => json!({"type": "usage", "run_id": run_id, "input_tokens": usage.input_tokens,
                   "output_tokens": usage.output_tokens, "total_tokens": usage.total(), "steps": steps}),
        _ => return None,
    })
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(MAX_OBSERVATION_CHARS) {
        Some((at, _)) => format!(
            "{}… (cut: the whole output is in the run store)",
            &text[..at]
        ),
        None => text.to_owned(),
    }
}
