//! The typed wire contract of the API's run events: what the event stream of `POST
//! /api/conversations/{id}/messages` and `POST /api/approvals/{id}` sends, and what a conversation keeps as
//! the `events` of each answer (`GET /api/conversations/{id}`).
//!
//! Every event is one JSON object whose `"type"` names its kind (the SSE `event:` line carries the same name),
//! with `run_id` and, for a sub-agent's run, `parent_run_id`. `/openapi.json` describes each kind under
//! `components.schemas.ServerEvent`; docs/server-api.md lists them.
//!
//! ```
//! use steward_server::wire::{RunOutcome, ServerEvent};
//!
//! let event: ServerEvent = serde_json::from_str(
//!     r#"{"type": "answer", "run_id": "r1", "outcome": "answered", "content": "42"}"#,
//! )?;
//! assert!(event.is_last());
//! assert!(matches!(event, ServerEvent::Answer { outcome: RunOutcome::Answered, .. }));
//! # Ok::<(), serde_json::Error>(())
//! ```

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use steward_core::Approval;
use utoipa::ToSchema;

use crate::chart::Chart;

/// One event of a run, as clients receive it: streamed as server-sent events (`event: TYPE`, `data: JSON`)
/// and kept as a conversation's answer's `events` (all but `delta`).
///
/// A turn's stream ends with exactly one of `answer`, `approval` or `error` for the top run (no
/// `parent_run_id`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ServerEvent {
    /// A run began: the first event of a turn, and of each sub-agent's run.
    Run {
        /// The run.
        run_id: String,
        /// The run that started this one (a sub-agent's run).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_run_id: Option<String>,
        /// The conversation (empty for a run of the OpenAI-compatible facade).
        conversation_id: String,
        /// The agent running it.
        agent: String,
        /// The question it answers.
        input: String,
    },
    /// A model call begins.
    Step {
        /// The run.
        run_id: String,
        /// The run that started this one (a sub-agent's run).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_run_id: Option<String>,
        /// The step number (1 for the first model call).
        step: u32,
    },
    /// A piece of the model's text, as it streams (streamed only; not kept in the conversation).
    Delta {
        /// The run.
        run_id: String,
        /// The run that started this one (a sub-agent's run).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_run_id: Option<String>,
        /// The step it belongs to.
        step: u32,
        /// The piece of text.
        text: String,
    },
    /// The model's text that came with tool calls (it replaces the step's `delta`s).
    Thought {
        /// The run.
        run_id: String,
        /// The run that started this one (a sub-agent's run).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_run_id: Option<String>,
        /// The step it belongs to.
        step: u32,
        /// The text.
        text: String,
    },
    /// A tool call passed validation and policy and runs now.
    ToolCall {
        /// The run.
        run_id: String,
        /// The run that started this one (a sub-agent's run).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_run_id: Option<String>,
        /// The call's id (its `observation` names it).
        call_id: String,
        /// The tool.
        tool: String,
        /// The arguments: a JSON value, or the model's text when it was not JSON.
        arguments: Value,
        /// The SQL the call carries (its `sql` or `query` argument), or `null`.
        #[serde(default)]
        sql: Option<String>,
    },
    /// A tool call's result.
    Observation {
        /// The run.
        run_id: String,
        /// The run that started this one (a sub-agent's run).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_run_id: Option<String>,
        /// The call it answers.
        call_id: String,
        /// The tool.
        tool: String,
        /// What the model is shown (cut at 20,000 characters; the run store keeps it whole).
        content: String,
        /// True when the tool failed.
        is_error: bool,
        /// The rows the tool returned, when it returned a table.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        table: Option<Table>,
        /// A chart of the table, when it has a numeric column and a few rows.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chart: Option<Chart>,
    },
    /// A tool call was refused before it ran: invalid arguments, or the policy denied it.
    Rejected {
        /// The run.
        run_id: String,
        /// The run that started this one (a sub-agent's run).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_run_id: Option<String>,
        /// The call.
        call_id: String,
        /// The tool.
        tool: String,
        /// What was wrong (the model is told).
        reason: String,
    },
    /// A person's decision on a call that waited was applied to the resumed run.
    Decided {
        /// The run.
        run_id: String,
        /// The run that started this one (a sub-agent's run).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_run_id: Option<String>,
        /// The call decided.
        call_id: String,
        /// The decision: `{"approval": "approve"}`, `{"approval": "reject", "reason"}` or
        /// `{"approval": "edit", "arguments"}`.
        #[schema(value_type = Object)]
        decision: Approval,
    },
    /// A run ended: the tokens it used and its model calls.
    Usage {
        /// The run.
        run_id: String,
        /// The run that started this one (a sub-agent's run).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_run_id: Option<String>,
        /// Prompt tokens.
        input_tokens: u64,
        /// Completion tokens.
        output_tokens: u64,
        /// Both.
        total_tokens: u64,
        /// Model calls made.
        steps: u32,
    },
    /// Last event: the run waits for a person to approve calls (`POST /api/approvals/{id}`).
    Approval {
        /// The run.
        run_id: String,
        /// The run that started this one (a sub-agent's run).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_run_id: Option<String>,
        /// The calls that wait.
        approvals: Vec<ApprovalView>,
        /// The tool whose outside data the turn read (later turns' writes then wait for approval).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tainted_by: Option<String>,
    },
    /// Last event: the run answered.
    Answer {
        /// The run.
        run_id: String,
        /// The run that started this one (a sub-agent's run).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_run_id: Option<String>,
        /// Always `answered`.
        outcome: RunOutcome,
        /// The answer (Markdown).
        content: String,
        /// The tool whose outside data the turn read (later turns' writes then wait for approval).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tainted_by: Option<String>,
    },
    /// Last event: the run ended without an answer.
    Error {
        /// The run (absent from the note left for a turn whose server stopped).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        run_id: Option<String>,
        /// The run that started this one (a sub-agent's run).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_run_id: Option<String>,
        /// How it ended.
        outcome: RunOutcome,
        /// What went wrong, in a sentence for the user.
        message: String,
        /// The tool whose outside data the turn read (later turns' writes then wait for approval).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tainted_by: Option<String>,
    },
}

/// How a run ended, in `answer` and `error` events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunOutcome {
    /// The model answered.
    Answered,
    /// The step limit (`settings.max_actions`) was reached first.
    MaxSteps,
    /// The token budget was used up first.
    TokenBudget,
    /// The time limit was reached first.
    TimeLimit,
    /// The model (or a database it depended on) failed.
    ModelFailed,
    /// The run was cancelled (the server shut down).
    Cancelled,
    /// The run's server stopped or lost the conversation; the run was not repeated.
    Interrupted,
    /// The run could not go on (it could not be saved, or stopped for a reason the server does not know).
    Failed,
}

impl From<&steward_core::Outcome> for RunOutcome {
    fn from(outcome: &steward_core::Outcome) -> Self {
        use steward_core::Outcome;
        match outcome {
            Outcome::Answered { .. } => Self::Answered,
            Outcome::MaxSteps { .. } => Self::MaxSteps,
            Outcome::TokenBudget { .. } => Self::TokenBudget,
            Outcome::TimeLimit { .. } => Self::TimeLimit,
            Outcome::ModelFailed { .. } => Self::ModelFailed,
            Outcome::Cancelled => Self::Cancelled,
            _ => Self::Failed,
        }
    }
}

/// Rows a tool returned, as an `observation` carries them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Table {
    /// Column names.
    pub columns: Vec<String>,
    /// Rows, each as long as `columns` (at most 500 are sent).
    #[schema(value_type = Vec<Vec<Object>>)]
    pub rows: Vec<Vec<Value>>,
    /// True when more rows existed than are shown.
    #[serde(default)]
    pub truncated: bool,
}

/// A call that waits for a person's approval, as the API shows it (`approval` events, `GET /api/approvals`,
/// a conversation's `pending`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ApprovalView {
    /// The short id to decide it with (`POST /api/approvals/{id}`).
    pub id: String,
    /// The top run that waits.
    pub run_id: String,
    /// The conversation of that run, if it has one.
    #[serde(default)]
    pub conversation_id: Option<String>,
    /// The call's id, qualified by the agent calls above it (`r1/e1`).
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The arguments: a JSON value, or the model's text when it was not JSON.
    pub arguments: Value,
    /// The SQL the call carries (its `sql` or `query` argument), or `null`.
    #[serde(default)]
    pub sql: Option<String>,
    /// Why it waits.
    pub reason: String,
    /// What it would do, as plain text (for a SQL write, the rows it would change), or `null`.
    #[serde(default)]
    pub preview: Option<String>,
    /// When approval was asked for.
    pub created_at: DateTime<Utc>,
    /// `approve`, `deny` or `edit` once decided; `null` while it waits.
    #[serde(default)]
    pub decision: Option<String>,
    /// Who decided.
    #[serde(default)]
    pub decided_by: Option<String>,
}

impl ApprovalView {
    /// The view of a stored approval of a run in `conversation_id`.
    pub(crate) fn of(
        a: &steward_app::store::PendingApproval,
        conversation_id: Option<&str>,
    ) -> Self {
        let arguments = parse_arguments(&a.arguments);
        Self {
            id: a.id.clone(),
            run_id: a.run_id.clone(),
            conversation_id: conversation_id.map(str::to_owned),
            call_id: a.call_id.clone(),
            tool: a.tool.clone(),
            sql: sql_of(&arguments),
            arguments,
            reason: a.reason.clone(),
            preview: a.preview.clone(),
            created_at: a.requested_at,
            decision: a.decision.clone(),
            decided_by: a.decided_by.clone(),
        }
    }
}

/// A tool call's arguments as JSON: the value, or the model's text as a string when it is not JSON.
pub(crate) fn parse_arguments(text: &str) -> Value {
    serde_json::from_str::<Value>(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// The SQL a call carries: its `sql` or `query` argument, when that is text.
pub(crate) fn sql_of(arguments: &Value) -> Option<String> {
    ["sql", "query"]
        .iter()
        .find_map(|k| arguments.get(*k).and_then(Value::as_str))
        .map(str::to_owned)
}

impl ServerEvent {
    /// The event's `type`, as the SSE `event:` line names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Run { .. } => "run",
            Self::Step { .. } => "step",
            Self::Delta { .. } => "delta",
            Self::Thought { .. } => "thought",
            Self::ToolCall { .. } => "tool_call",
            Self::Observation { .. } => "observation",
            Self::Rejected { .. } => "rejected",
            Self::Decided { .. } => "decided",
            Self::Usage { .. } => "usage",
            Self::Approval { .. } => "approval",
            Self::Answer { .. } => "answer",
            Self::Error { .. } => "error",
        }
    }

    /// Whether this event ends a turn's stream: `answer`, `approval` or `error`.
    pub fn is_last(&self) -> bool {
        matches!(
            self,
            Self::Answer { .. } | Self::Approval { .. } | Self::Error { .. }
        )
    }

    /// The run the event belongs to (only the note of a turn whose server stopped has none).
    pub fn run_id(&self) -> Option<&str> {
        match self {
            Self::Run { run_id, .. }
            | Self::Step { run_id, .. }
            | Self::Delta { run_id, .. }
            | Self::Thought { run_id, .. }
            | Self::ToolCall { run_id, .. }
            | Self::Observation { run_id, .. }
            | Self::Rejected { run_id, .. }
            | Self::Decided { run_id, .. }
            | Self::Usage { run_id, .. }
            | Self::Approval { run_id, .. }
            | Self::Answer { run_id, .. } => Some(run_id),
            Self::Error { run_id, .. } => run_id.as_deref(),
        }
    }

    fn parent_slot(&mut self) -> &mut Option<String> {
        match self {
            Self::Run { parent_run_id, .. }
            | Self::Step { parent_run_id, .. }
            | Self::Delta { parent_run_id, .. }
            | Self::Thought { parent_run_id, .. }
            | Self::ToolCall { parent_run_id, .. }
            | Self::Observation { parent_run_id, .. }
            | Self::Rejected { parent_run_id, .. }
            | Self::Decided { parent_run_id, .. }
            | Self::Usage { parent_run_id, .. }
            | Self::Approval { parent_run_id, .. }
            | Self::Answer { parent_run_id, .. }
            | Self::Error { parent_run_id, .. } => parent_run_id,
        }
    }

    /// The run that started this event's run, for a sub-agent's run.
    pub fn parent_run_id(&self) -> Option<&str> {
        match self {
            Self::Run { parent_run_id, .. }
            | Self::Step { parent_run_id, .. }
            | Self::Delta { parent_run_id, .. }
            | Self::Thought { parent_run_id, .. }
            | Self::ToolCall { parent_run_id, .. }
            | Self::Observation { parent_run_id, .. }
            | Self::Rejected { parent_run_id, .. }
            | Self::Decided { parent_run_id, .. }
            | Self::Usage { parent_run_id, .. }
            | Self::Approval { parent_run_id, .. }
            | Self::Answer { parent_run_id, .. }
            | Self::Error { parent_run_id, .. } => parent_run_id.as_deref(),
        }
    }

    /// This event, of a sub-agent's run started by `parent` (unchanged for `None`).
    pub(crate) fn with_parent(mut self, parent: Option<String>) -> Self {
        if parent.is_some() {
            *self.parent_slot() = parent;
        }
        self
    }

    /// The tool whose outside data the turn read, as its last event says.
    pub fn tainted_by(&self) -> Option<&str> {
        match self {
            Self::Approval { tainted_by, .. }
            | Self::Answer { tainted_by, .. }
            | Self::Error { tainted_by, .. } => tainted_by.as_deref(),
            _ => None,
        }
    }

    /// This last event saying that the turn read `by`'s outside data (other events are unchanged).
    pub(crate) fn tainted(mut self, by: Option<String>) -> Self {
        if let Self::Approval { tainted_by, .. }
        | Self::Answer { tainted_by, .. }
        | Self::Error { tainted_by, .. } = &mut self
        {
            *tainted_by = by;
        }
        self
    }

    /// An `error` event of `run_id` that ended with `outcome`.
    pub(crate) fn error(run_id: &str, outcome: RunOutcome, message: impl Into<String>) -> Self {
        Self::Error {
            run_id: Some(run_id.to_owned()),
            parent_run_id: None,
            outcome,
            message: message.into(),
            tainted_by: None,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    /// The note the run store leaves for a turn whose server stopped (crates/app's reaper) reads as an event.
    #[test]
    fn the_reapers_note_is_an_error_event() {
        let note = json!({"type": "error", "outcome": "interrupted",
            "message": "the server answering this stopped before it finished"});
        let event: ServerEvent = serde_json::from_value(note.clone()).unwrap();
        assert!(matches!(
            &event,
            ServerEvent::Error {
                run_id: None,
                outcome: RunOutcome::Interrupted,
                ..
            }
        ));
        assert!(event.is_last());
        assert_eq!(serde_json::to_value(&event).unwrap(), note);
    }

    /// The wire shape is the one clients read: `type` first, the fields by name, `sql` always present on a
    /// tool call, optional fields left out when empty.
    #[test]
    fn events_keep_their_wire_shape() {
        let call = ServerEvent::ToolCall {
            run_id: "r".into(),
            parent_run_id: None,
            call_id: "c1".into(),
            tool: "run_sql".into(),
            arguments: json!({"sql": "SELECT 1"}),
            sql: Some("SELECT 1".into()),
        };
        assert_eq!(
            serde_json::to_string(&call).unwrap(),
            r#"{"type":"tool_call","run_id":"r","call_id":"c1","tool":"run_sql","arguments":{"sql":"SELECT 1"},"sql":"SELECT 1"}"#
        );
        let answer = ServerEvent::Answer {
            run_id: "r".into(),
            parent_run_id: None,
            outcome: RunOutcome::Answered,
            content: "hi".into(),
            tainted_by: None,
        }
        .with_parent(Some("p".into()))
        .tainted(Some("http_get".into()));
        assert_eq!(
            serde_json::to_value(&answer).unwrap(),
            json!({"type": "answer", "run_id": "r", "parent_run_id": "p", "outcome": "answered",
                   "content": "hi", "tainted_by": "http_get"})
        );
        assert_eq!(answer.tainted_by(), Some("http_get"));
        assert_eq!(answer.parent_run_id(), Some("p"));
        let back: ServerEvent =
            serde_json::from_value(serde_json::to_value(&answer).unwrap()).unwrap();
        assert_eq!(back, answer);
    }

    #[test]
    fn every_outcome_of_a_run_has_a_name() {
        use steward_core::Outcome;
        for (outcome, name) in [
            (
                Outcome::Answered {
                    answer: String::new(),
                },
                "answered",
            ),
            (Outcome::MaxSteps { limit: 1 }, "max_steps"),
            (Outcome::TokenBudget { limit: 1, used: 2 }, "token_budget"),
            (Outcome::TimeLimit { limit_ms: 1 }, "time_limit"),
            (Outcome::Cancelled, "cancelled"),
        ] {
            assert_eq!(outcome.name(), name);
            assert_eq!(
                serde_json::to_value(RunOutcome::from(&outcome)).unwrap(),
                json!(name)
            );
        }
    }
}
