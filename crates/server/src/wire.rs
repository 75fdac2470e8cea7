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
        /// When the tool failed: what went wrong as a person reads it (`content` speaks to the model, e.g.
        /// "tell the user…").
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
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
        /// What was wrong as a person reads it (empty in events kept before it was sent).
        #[serde(default)]
        error: String,
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
    /// The writes the run staged, saved as a change set to be applied together or discarded (`POST
    /// /api/changes/{id}`): sent just before the turn's last event, and kept.
    Changes {
        /// The run.
        run_id: String,
        /// The run that started this one (a sub-agent's run).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_run_id: Option<String>,
        /// The change set, as it was saved (`GET /api/changes/{id}` says how it was decided since).
        change_set: ChangeSetView,
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

/// A change set: the writes a run staged (each tried in a transaction that was rolled back), applied together
/// in one transaction or discarded (`GET /api/changes`, a `changes` event).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ChangeSetView {
    /// Its id (`POST /api/changes/{id}` decides it).
    pub id: String,
    /// The run that staged it.
    pub run_id: String,
    /// The agent of that run.
    pub agent: String,
    /// Who asked.
    pub asked_by: String,
    /// `waiting`, `applied` or `discarded`.
    pub status: String,
    /// When it was saved.
    pub saved_at: DateTime<Utc>,
    /// Who decided, once someone did.
    #[serde(default)]
    pub decided_by: Option<String>,
    /// When.
    #[serde(default)]
    pub decided_at: Option<DateTime<Utc>>,
    /// The rows applying it created (`project -1 is #13`), when it did.
    #[serde(default)]
    pub result: Option<String>,
    /// The changes, in order.
    pub changes: Vec<ChangeView>,
    /// The rows they write, by table.
    #[serde(default)]
    pub tables: Vec<TableChanges>,
}

/// One staged change of a change set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ChangeView {
    /// The call's id (in the run, or the sub-run, that made it): `calls` of `POST /api/changes/{id}` names it.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// Its arguments, after defaults.
    pub arguments: Value,
    /// What it returned when staged.
    pub result: String,
    /// Why it needs approval.
    pub reason: String,
    /// Once the set was decided: whether this change was written (`false`: discarded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied: Option<bool>,
}

/// The rows a change set writes in one table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TableChanges {
    /// The table.
    pub table: String,
    /// The rows, in the order of the changes.
    pub rows: Vec<RowChangeView>,
}

/// A row a change writes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RowChangeView {
    /// The change that writes it.
    pub call_id: String,
    /// That change's place in the set (1 for the first).
    pub step: usize,
    /// `insert`, `update` or `delete`.
    pub op: String,
    /// The row as people name it (`#7 "Buy a cake"`; `#-1` for a row the set creates).
    pub row: String,
    /// Its columns: `before` (absent for an insert) and `after` (absent for a delete), formatted.
    pub fields: Vec<FieldView>,
}

/// A column of a [`RowChangeView`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct FieldView {
    /// The column.
    pub column: String,
    /// Its value before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    /// Its value after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

impl ChangeSetView {
    /// The view of a saved change set.
    pub(crate) fn of(set: &steward_app::store::ChangeSet) -> Self {
        let tables = steward_app::changes::diff_by_table(&set.calls)
            .into_iter()
            .map(|t| TableChanges {
                table: t.table,
                rows: t
                    .rows
                    .into_iter()
                    .map(|r| RowChangeView {
                        call_id: r.call_id,
                        step: r.step,
                        op: match r.change.op {
                            steward_core::RowOp::Insert => "insert",
                            steward_core::RowOp::Update => "update",
                            _ => "delete",
                        }
                        .to_owned(),
                        row: r.change.row,
                        fields: r
                            .change
                            .fields
                            .into_iter()
                            .map(|f| FieldView {
                                column: f.column,
                                before: f.before,
                                after: f.after,
                            })
                            .collect(),
                    })
                    .collect(),
            })
            .collect();
        Self {
            id: set.id.clone(),
            run_id: set.run_id.clone(),
            agent: set.agent.clone(),
            asked_by: set.principal.name.clone(),
            status: set.status.clone(),
            saved_at: set.saved_at,
            decided_by: set.decided_by.clone(),
            decided_at: set.decided_at,
            result: set.result.clone(),
            changes: set
                .calls
                .iter()
                .map(|s| ChangeView {
                    call_id: s.call.id.clone(),
                    tool: s.call.name.clone(),
                    arguments: s.args.clone(),
                    result: s.output.content.clone(),
                    reason: s.reason.clone(),
                    applied: match set.status.as_str() {
                        "waiting" => None,
                        "applied" => Some(
                            set.applied
                                .as_ref()
                                .is_none_or(|calls| calls.contains(&s.call.id)),
                        ),
                        _ => Some(false),
                    },
                })
                .collect(),
            tables,
        }
    }

    /// What a client that shows only text (the OpenAI-compatible facade) tells the person: how many changes
    /// wait, and how to apply or discard them.
    pub(crate) fn note(&self) -> String {
        let n = self.changes.len();
        let lines: Vec<String> = self
            .changes
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{}. {}", i + 1, c.result))
            .collect();
        let mut reasons: Vec<&str> = self.changes.iter().map(|c| c.reason.as_str()).collect();
        reasons.dedup();
        format!(
            "{n} change{s} wait{v} for approval as change set {id} (nothing is written yet):\n{list}\n\
             Needs approval: {why}.\nApply them together with `steward changes apply {id}` or POST /api/changes/{id} \
             {{\"decision\": \"apply\"}}; discard them with {{\"decision\": \"discard\"}}.",
            s = if n == 1 { "" } else { "s" },
            v = if n == 1 { "s" } else { "" },
            id = self.id,
            list = lines.join("\n"),
            why = reasons.join("; "),
        )
    }
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
            Self::Changes { .. } => "changes",
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
            | Self::Changes { run_id, .. }
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
            | Self::Changes { parent_run_id, .. }
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
            | Self::Changes { parent_run_id, .. }
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
