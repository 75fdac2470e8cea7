//! What the domain tools share: the database and the clock, reads, and writes that are one transaction each,
//! idempotent on the tool call, and audited.

use std::sync::Arc;

use serde_json::{Value, json};
use steward_core::{ToolContext, ToolError, ToolOutput};
use steward_sql::{Database, Param, QueryLimits, QueryResult, SqlError, WriteTx};

use crate::common::Clock;

/// The database and the clock the domain tools use.
#[derive(Clone, Debug)]
pub struct Store {
    /// The business database.
    pub db: Arc<Database>,
    /// Where "today" comes from.
    pub clock: Clock,
}

/// The start of a write: either it was done before for this call, or a fresh transaction.
pub(crate) enum Begun {
    /// This call already ran; here is what it returned.
    Replay(ToolOutput),
    /// A transaction to write in.
    Fresh(WriteTx),
}

impl Store {
    /// A store over `db`.
    pub fn new(db: Arc<Database>, clock: Clock) -> Self {
        Self { db, clock }
    }

    /// Today, from the clock.
    pub fn today(&self) -> chrono::NaiveDate {
        self.clock.now().0.date_naive()
    }

    /// Reads rows; `?` placeholders in every dialect.
    pub(crate) async fn read(&self, sql: &str, params: &[Param]) -> Result<QueryResult, ToolError> {
        let limits = QueryLimits {
            max_rows: 10_000,
            ..QueryLimits::default()
        };
        self.db
            .query_read_only(&self.db.dialect().placeholders(sql), params, &limits)
            .await
            .map_err(unavailable)
    }

    /// Begins the write of one tool call, unless that call was already done.
    pub(crate) async fn begin(&self, ctx: &ToolContext) -> Result<Begun, ToolError> {
        let mut tx = self.db.begin_write().await.map_err(unavailable)?;
        match previous(&mut tx, ctx).await? {
            Some(output) => Ok(Begun::Replay(output)),
            None => Ok(Begun::Fresh(tx)),
        }
    }

    /// Ends the write: an audit row, the call's result kept for replays, commit. If the same call committed
    /// meanwhile, its result is returned and this write is dropped.
    pub(crate) async fn finish(
        &self,
        mut tx: WriteTx,
        ctx: &ToolContext,
        tool: &str,
        action: &str,
        output: ToolOutput,
    ) -> Result<ToolOutput, ToolError> {
        let now = Param::Timestamp(self.clock.now().0.naive_local());
        let details = serde_json::to_string(&output.data).unwrap_or_default();
        tx.insert(
            "INSERT INTO audit_log (at, run_id, call_id, tool, action, details) VALUES (?, ?, ?, ?, ?, ?)",
            &[now.clone(), Param::Text(ctx.run_id.clone()), Param::Text(ctx.call_id.clone()), Param::Text(tool.to_owned()), Param::Text(action.to_owned()), Param::Text(details)],
        )
        .await
        .map_err(unavailable)?;
        let stored = json!({"content": output.content, "data": output.data}).to_string();
        let kept = tx
            .execute(
                "INSERT INTO tool_calls (run_id, call_id, tool, result, created_at) VALUES (?, ?, ?, ?, ?)",
                &[Param::Text(ctx.run_id.clone()), Param::Text(ctx.call_id.clone()), Param::Text(tool.to_owned()), Param::Text(stored), now],
            )
            .await;
        match kept {
            Ok(_) => {
                tx.commit().await.map_err(unavailable)?;
                Ok(output)
            }
            Err(SqlError::Constraint(_)) => {
                drop(tx);
                let mut again = self.db.begin_write().await.map_err(unavailable)?;
                previous(&mut again, ctx)
                    .await?
                    .ok_or_else(|| ToolError::internal("a concurrent call vanished"))
            }
            Err(e) => Err(unavailable(e)),
        }
    }
}

async fn previous(tx: &mut WriteTx, ctx: &ToolContext) -> Result<Option<ToolOutput>, ToolError> {
    let rows = tx
        .fetch(
            "SELECT result FROM tool_calls WHERE run_id = ? AND call_id = ?",
            &[
                Param::Text(ctx.run_id.clone()),
                Param::Text(ctx.call_id.clone()),
            ],
        )
        .await
        .map_err(unavailable)?;
    let Some(stored) = rows
        .rows
        .first()
        .and_then(|r| r.first())
        .and_then(Value::as_str)
    else {
        return Ok(None);
    };
    let value: Value = serde_json::from_str(stored)
        .map_err(|e| ToolError::internal(format!("stored result unreadable: {e}")))?;
    let mut output = ToolOutput::text(value["content"].as_str().unwrap_or_default());
    output.data = serde_json::from_value(value["data"].clone()).ok();
    Ok(Some(output))
}

/// A database failure as a tool error: the model is told the data is unavailable, the operator gets why.
pub(crate) fn unavailable(error: SqlError) -> ToolError {
    match error {
        SqlError::Constraint(m) => {
            ToolError::new(format!("The change conflicts with existing data: {m}."))
        }
        other => ToolError::new(
            "The database could not be used just now; tell the user the action did not happen.",
        )
        .with_diagnostic(other.to_string()),
    }
}

/// The cell at `i` of a row, NULL when the row is shorter.
pub(crate) fn at(row: &[Value], i: usize) -> &Value {
    static NULL: Value = Value::Null;
    row.get(i).unwrap_or(&NULL)
}

/// A number from a cell (numbers, or decimals rendered as strings).
pub(crate) fn num(value: &Value) -> f64 {
    match value {
        Value::Number(n) => n.as_f64().unwrap_or(0.0),
        Value::String(s) => s.parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

/// An integer from a cell.
pub(crate) fn int(value: &Value) -> i64 {
    match value {
        Value::Number(n) => n.as_i64().unwrap_or(0),
        Value::String(s) => s.parse().unwrap_or(0),
        _ => 0,
    }
}

/// Text from a cell (dates are shown as their day).
pub(crate) fn text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A cell holding a date or timestamp, as `YYYY-MM-DD`.
pub(crate) fn day(value: &Value) -> String {
    text(value).chars().take(10).collect()
}

/// Rows of a result as JSON objects keyed by column name, for structured data.
pub(crate) fn objects(result: &QueryResult) -> Value {
    Value::Array(
        result
            .rows
            .iter()
            .map(|row| {
                Value::Object(
                    result
                        .columns
                        .iter()
                        .zip(row)
                        .map(|(c, v)| (c.name.clone(), v.clone()))
                        .collect(),
                )
            })
            .collect(),
    )
}
