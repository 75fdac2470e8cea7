//! The events a client sees: the runner's events turned into the API's events ([`ServerEvent`], the typed
//! wire contract of docs/server-api.md), sent to the client's stream as they happen and kept for the
//! conversation's transcript.

use std::sync::Mutex;

use steward_core::{Event, EventRecord, Observer, StreamDelta, ToolData};
use tokio::sync::mpsc;

use crate::wire::{ServerEvent, Table, parse_arguments, sql_of};

/// The longest observation text sent to a client (the whole text stays in the run store).
const MAX_OBSERVATION_CHARS: usize = 20_000;
/// The most rows of a table sent to a client.
const MAX_TABLE_ROWS: usize = 500;

/// Forwards a run tree's events to a client and keeps them (but the streamed text pieces) for the transcript.
pub(crate) struct Forwarder {
    conversation_id: String,
    sender: mpsc::UnboundedSender<ServerEvent>,
    kept: Mutex<Vec<ServerEvent>>,
}

impl Forwarder {
    /// Resolves once the client reading the events went away (its receiver was dropped).
    pub(crate) async fn client_gone(&self) {
        self.sender.closed().await;
    }

    pub(crate) fn new(conversation_id: &str, sender: mpsc::UnboundedSender<ServerEvent>) -> Self {
        Self {
            conversation_id: conversation_id.to_owned(),
            sender,
            kept: Mutex::new(Vec::new()),
        }
    }

    /// Sends an event and keeps it (a last event: answer, approval or error).
    pub(crate) fn send(&self, event: ServerEvent) {
        if let Ok(mut kept) = self.kept.lock() {
            kept.push(event.clone());
        }
        // A client that went away stops listening; the run goes on and is saved all the same.
        let _ = self.sender.send(event);
    }

    /// The events kept so far.
    pub(crate) fn kept(&self) -> Vec<ServerEvent> {
        self.kept.lock().map(|k| k.clone()).unwrap_or_default()
    }
}

impl Observer for Forwarder {
    fn on_event(&self, _event: &Event) {}

    fn on_record(&self, record: &EventRecord) {
        let Some(event) = api_event(&record.event, &self.conversation_id) else {
            return;
        };
        let event = event.with_parent(record.parent_run_id.clone());
        if let ServerEvent::Delta { .. } = event {
            let _ = self.sender.send(event);
        } else {
            self.send(event);
        }
    }
}

/// The API event of a runner event, if clients see it.
pub(crate) fn api_event(event: &Event, conversation_id: &str) -> Option<ServerEvent> {
    Some(match event {
        Event::RunStarted {
            run_id,
            agent,
            input,
        } => ServerEvent::Run {
            run_id: run_id.clone(),
            parent_run_id: None,
            conversation_id: conversation_id.to_owned(),
            agent: agent.clone(),
            input: input.clone(),
        },
        Event::ModelRequest { run_id, step, .. } => ServerEvent::Step {
            run_id: run_id.clone(),
            parent_run_id: None,
            step: *step,
        },
        Event::ModelDelta {
            run_id,
            step,
            delta: StreamDelta::Text(text),
        } => ServerEvent::Delta {
            run_id: run_id.clone(),
            parent_run_id: None,
            step: *step,
            text: text.clone(),
        },
        Event::ModelResponse {
            run_id,
            step,
            content: Some(text),
            tool_calls,
            ..
        } if !tool_calls.is_empty() && !text.trim().is_empty() => ServerEvent::Thought {
            run_id: run_id.clone(),
            parent_run_id: None,
            step: *step,
            text: text.clone(),
        },
        Event::ToolCall { run_id, call } => {
            let arguments = parse_arguments(&call.arguments);
            ServerEvent::ToolCall {
                run_id: run_id.clone(),
                parent_run_id: None,
                call_id: call.id.clone(),
                tool: call.name.clone(),
                sql: sql_of(&arguments),
                arguments,
            }
        }
        Event::ValidationError {
            run_id,
            call,
            rejection,
        } => ServerEvent::Rejected {
            run_id: run_id.clone(),
            parent_run_id: None,
            call_id: call.id.clone(),
            tool: call.name.clone(),
            reason: rejection.observation.clone(),
            error: rejection.for_person(&call.name),
        },
        Event::ToolDenied {
            run_id,
            call,
            reason,
        } => ServerEvent::Rejected {
            run_id: run_id.clone(),
            parent_run_id: None,
            call_id: call.id.clone(),
            tool: call.name.clone(),
            reason: reason.clone(),
            error: format!("Not allowed: {reason}."),
        },
        Event::ToolResult {
            run_id,
            call_id,
            tool,
            content,
            is_error,
            data,
            person,
            ..
        } => {
            let (table, chart) = match data {
                Some(ToolData::Table {
                    columns,
                    rows,
                    truncated,
                    ..
                }) => {
                    let shown = &rows[..rows.len().min(MAX_TABLE_ROWS)];
                    let chart = crate::chart::chart(columns, shown, None);
                    let table = Table {
                        columns: columns.clone(),
                        rows: shown.to_vec(),
                        truncated: *truncated || rows.len() > shown.len(),
                    };
                    (Some(table), chart)
                }
                _ => (None, None),
            };
            ServerEvent::Observation {
                run_id: run_id.clone(),
                parent_run_id: None,
                call_id: call_id.clone(),
                tool: tool.clone(),
                content: cut(content),
                is_error: *is_error,
                error: is_error.then(|| cut(person.as_deref().unwrap_or(content))),
                table,
                chart,
            }
        }
        Event::ApprovalDecided {
            run_id,
            call_id,
            approval,
        } => ServerEvent::Decided {
            run_id: run_id.clone(),
            parent_run_id: None,
            call_id: call_id.clone(),
            decision: approval.clone(),
        },
        Event::Finished {
            run_id,
            usage,
            steps,
            ..
        } => ServerEvent::Usage {
            run_id: run_id.clone(),
            parent_run_id: None,
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            total_tokens: usage.total(),
            steps: *steps,
        },
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use steward_core::ToolError;

    fn observation(error: &ToolError) -> ServerEvent {
        let event = Event::ToolResult {
            run_id: "r".into(),
            call_id: "c".into(),
            tool: "orders_of".into(),
            content: error.message.clone(),
            is_error: true,
            data: None,
            diagnostic: error.diagnostic.clone(),
            person: error.person.clone(),
            duration_ms: 1,
        };
        api_event(&event, "conv").unwrap()
    }

    /// A failed call reaches the client in both voices: `content` for the model, `error` for the person, who
    /// is never told to "tell the user"; an error with one voice is said the same to both.
    #[test]
    fn a_failure_carries_the_person_s_words() {
        let error = ToolError::new("The tool broke; tell the user.").for_people("The tool broke.");
        let ServerEvent::Observation {
            content,
            error,
            is_error,
            ..
        } = observation(&error)
        else {
            unreachable!("a tool result is an observation")
        };
        assert!(is_error);
        assert_eq!(content, "The tool broke; tell the user.");
        assert_eq!(error.as_deref(), Some("The tool broke."));
        let plain = ToolError::new("No table named `x`.");
        let ServerEvent::Observation { error, .. } = observation(&plain) else {
            unreachable!("a tool result is an observation")
        };
        assert_eq!(error.as_deref(), Some("No table named `x`."));
        // The operator's diagnostic never reaches the client.
        let secret = ToolError::internal("password=hunter2 in the DSN");
        let value = serde_json::to_value(observation(&secret)).unwrap();
        assert!(!value.to_string().contains("hunter2"), "{value}");
        assert!(
            !value["error"].as_str().unwrap().contains("the user"),
            "{value}"
        );
    }
}
