//! Tools: what the model may call, what a call returns, and how a call fails.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::approval::Approval;
use crate::context::ToolContext;
use crate::error::Error;
use crate::spec::ToolSpec;
use crate::suspension::{DecidedCall, ToolProgress};

/// Structured data a tool returns for UIs, beside the text the model sees.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolData {
    /// Rows and columns.
    Table {
        /// Column names.
        columns: Vec<String>,
        /// Rows, each as long as `columns`.
        rows: Vec<Vec<Value>>,
        /// True when more rows existed than were returned.
        #[serde(default)]
        truncated: bool,
        /// What the model is told about the rows beside them (rows filtered by the caller's role, the SQL
        /// run), when anything.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// A chart specification (Vega-Lite).
    Chart {
        /// The specification.
        spec: Value,
    },
    /// Any other JSON value.
    Json {
        /// The value.
        value: Value,
    },
}

/// The successful result of a tool call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// What the model is shown.
    pub content: String,
    /// Optional structured data for UIs; the model does not see it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<ToolData>,
    /// The tool whose outside data is in this output (a sub-agent's run read it): the caller's run is
    /// tainted by it too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tainted_by: Option<String>,
    /// The change set of a sub-agent's run (the caller's staged writes, then its own): the caller's run
    /// continues it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub staged: Vec<crate::run::StagedCall>,
    /// The rows a write inserted, changed or deleted (shown to the person who reviews it; the model reads
    /// `content`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<RowChange>,
}

/// What a write did to one row, for the person who reviews it: the columns it set, with their values before
/// and after.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RowChange {
    /// The table.
    pub table: String,
    /// `insert`, `update` or `delete`.
    pub op: RowOp,
    /// The row, as people name it: `#7 "Buy a cake"`, `#-1 Birthday` (a row the change set creates).
    pub row: String,
    /// The columns, in order.
    pub fields: Vec<FieldChange>,
}

/// The kind of a [`RowChange`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RowOp {
    /// A new row.
    Insert,
    /// A row changed.
    Update,
    /// A row removed.
    Delete,
}

/// One column of a [`RowChange`]: its value before (`None` for an insert) and after (`None` for a delete), as
/// shown to people (money with two decimals, dates as `YYYY-MM-DD`, a project as `#3 Birthday`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldChange {
    /// The column.
    pub column: String,
    /// Before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    /// After.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

impl RowChange {
    /// A row inserted with `fields` (column, value).
    pub fn insert(table: &str, row: impl Into<String>, fields: &[(&str, String)]) -> Self {
        Self {
            table: table.to_owned(),
            op: RowOp::Insert,
            row: row.into(),
            fields: fields
                .iter()
                .map(|(column, value)| FieldChange {
                    column: (*column).to_owned(),
                    before: None,
                    after: Some(value.clone()),
                })
                .collect(),
        }
    }

    /// A row updated: `fields` are (column, before, after).
    pub fn update(table: &str, row: impl Into<String>, fields: &[(&str, String, String)]) -> Self {
        Self {
            table: table.to_owned(),
            op: RowOp::Update,
            row: row.into(),
            fields: fields
                .iter()
                .map(|(column, before, after)| FieldChange {
                    column: (*column).to_owned(),
                    before: Some(before.clone()),
                    after: Some(after.clone()),
                })
                .collect(),
        }
    }
}

impl ToolOutput {
    /// An output with text only.
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            ..Self::default()
        }
    }

    /// An output whose text is the given value as compact JSON, also kept as structured data.
    pub fn json(value: Value) -> Self {
        Self {
            content: value.to_string(),
            data: Some(ToolData::Json { value }),
            ..Self::default()
        }
    }

    /// The same output, carrying outside data that the tool `by` read (`None`: none).
    pub fn with_taint(mut self, by: Option<&str>) -> Self {
        self.tainted_by = by.map(str::to_owned);
        self
    }

    /// The same output with structured data attached.
    pub fn with_data(mut self, data: ToolData) -> Self {
        self.data = Some(data);
        self
    }

    /// The same output, saying which rows the write changed.
    pub fn with_changes(mut self, changes: Vec<RowChange>) -> Self {
        self.changes = changes;
        self
    }
}

/// A failed tool call.
///
/// `message` is what the model is told (what went wrong and what to do); `person`, when set, is the same for
/// a person, without the advice meant for a model ("tell the user…"); `diagnostic` is for the operator only
/// (the cause, with context) and never reaches the model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("{message}")]
pub struct ToolError {
    /// What the model is told.
    pub message: String,
    /// What the operator is told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostic: Option<String>,
    /// The tool whose outside data this error may carry (a sub-agent's run read it): the caller's run is
    /// tainted by it too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tainted_by: Option<String>,
    /// What a person is told when `message` speaks to a model; `None` when the message reads well to both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
}

impl ToolError {
    /// An error the model can act on.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            diagnostic: None,
            tainted_by: None,
            person: None,
        }
    }

    /// An internal failure: the model is told only that the tool failed, the operator gets the cause.
    pub fn internal(diagnostic: impl Into<String>) -> Self {
        Self::new(
            "The tool failed because of an internal error; the operator has the details. \
             Tell the user the action could not be completed.",
        )
        .for_people("The tool failed because of an internal error, so the action was not completed; the operator has the details.")
        .with_diagnostic(diagnostic)
    }

    /// The same error with the words a person reads instead of the model's (which advise the model what to
    /// tell them).
    pub fn for_people(mut self, text: impl Into<String>) -> Self {
        self.person = Some(text.into());
        self
    }

    /// What a person is told: the person's words when the error has them, else the model's.
    pub fn person_text(&self) -> &str {
        self.person.as_deref().unwrap_or(&self.message)
    }

    /// The same error with an operator diagnostic attached.
    pub fn with_diagnostic(mut self, diagnostic: impl Into<String>) -> Self {
        self.diagnostic = Some(diagnostic.into());
        self
    }
}

/// Something the model can call.
///
/// Most tools are written with [`crate::TypedTool`], which derives the schema from a Rust type and
/// deserialises the arguments; implement this trait directly for tools whose schema is only known at run
/// time (for example one declared in a config file).
#[async_trait]
pub trait Tool: Send + Sync {
    /// The tool's name, description, schema and annotations.
    fn spec(&self) -> &ToolSpec;

    /// Runs the tool. `args` has already been validated against `spec().parameters`.
    async fn call(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError>;

    /// True when the tool runs another agent on the run's model (a sub-agent). A replay then runs the tool,
    /// and the sub-agent's own calls are replayed one by one (see [`crate::Model::tool_replay`]).
    fn runs_agent(&self) -> bool {
        false
    }

    /// True when a call that needs approval can be staged in a run that stages writes
    /// ([`crate::Run::with_staging`]): the tool is then called with [`ToolContext::dry_run`] set and the
    /// run's earlier staged writes in [`ToolContext::staged`], must replay those first and keep nothing, and
    /// its result is shown to the model while the write waits, with the others, for one decision.
    fn stages(&self) -> bool {
        false
    }

    /// What applies this tool's staged calls (with the others of its change set that it knows), for a tool
    /// that [`Tool::stages`].
    fn applier(&self) -> Option<std::sync::Arc<dyn Applier>> {
        None
    }

    /// What a call with `args` would do, for the person asked to approve it (for a SQL write: the rows it
    /// would change, found in a transaction that is rolled back). `None` (the default): nothing to show
    /// beyond the call itself. Nothing may change.
    async fn preview(&self, ctx: &ToolContext, args: Value) -> Option<String> {
        let _ = (ctx, args);
        None
    }

    /// Runs the tool as the runner does: it may finish, or stop because calls it made wait for a person and
    /// hand back a [`crate::Suspension`] that the caller's run keeps (an agent tool whose sub-agent waits). By
    /// default the tool runs to its end with [`Tool::call`].
    async fn call_or_suspend(&self, ctx: &ToolContext, args: Value) -> ToolProgress {
        ToolProgress::Done(self.call(ctx, args).await)
    }

    /// Records a person's decision on the request `call_id` (an id of the suspension's requests) inside a
    /// suspension's `state`, checking it as a decision on the waiting call itself would be (an edit against the
    /// tool's schema). Says where the decision landed. Tools that never suspend refuse.
    fn decide(
        &self,
        state: &mut Value,
        call_id: &str,
        approval: &Approval,
    ) -> Result<DecidedCall, Error> {
        let _ = (state, approval);
        Err(Error::CannotSuspend {
            tool: self.spec().name.clone(),
            call_id: call_id.to_owned(),
        })
    }

    /// Ends a suspended call that will never go on (the caller's run was cancelled), so that what it started
    /// is reported as ended too. By default there is nothing to end.
    fn cancel(&self, ctx: &ToolContext, state: Value) {
        let _ = (ctx, state);
    }

    /// Goes on from a suspension whose every request has a decision: finishes, or stops again with new
    /// requests. `ctx` is the context of the call being resumed. Tools that never suspend fail.
    async fn resume(&self, ctx: &ToolContext, state: Value) -> ToolProgress {
        let _ = (ctx, state);
        ToolProgress::Done(Err(ToolError::internal(format!(
            "tool `{}` cannot resume a suspended call: it never suspends",
            self.spec().name
        ))))
    }
}

/// Applies a change set: the staged calls of a run, written in one transaction.
#[async_trait]
pub trait Applier: Send + Sync {
    /// Where the calls write (a database, its URL with no secrets): calls with another target cannot be
    /// applied together.
    fn target(&self) -> String;

    /// Writes `staged`, in order, in one transaction — only the calls `chosen` (by call id) and the earlier
    /// ones whose results they use, when given; each must give the result it was staged with, else nothing is
    /// written and the error says why. Calls applied before are not written again.
    async fn apply(
        &self,
        staged: &[crate::run::StagedCall],
        chosen: Option<&[String]>,
    ) -> Result<AppliedChanges, ToolError>;

    /// Whether the principal of `viewer` (a reviewer, not the asker) may not see a row the calls `staged` read
    /// or write, their role filtering rows: then the set is not theirs to see or decide. `false` when they see
    /// every row (or the applier cannot tell).
    async fn hidden_from(
        &self,
        _staged: &[crate::run::StagedCall],
        _viewer: &ToolContext,
    ) -> Result<bool, ToolError> {
        Ok(false)
    }
}

/// What applying a change set did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AppliedChanges {
    /// The calls applied (their ids), in order.
    pub calls: Vec<String>,
    /// The result of each call applied, in order.
    pub outputs: Vec<ToolOutput>,
    /// How many of them had been applied before (not written again).
    pub already: usize,
    /// The rows created, as people read them: `project -1 is #13`.
    pub created: Vec<String>,
}
