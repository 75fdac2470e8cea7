//! What the domain tools share: the database and the clock, reads, and writes that are one transaction each,
//! idempotent on the tool call (run id, call id, tool and arguments: see [`CallKey`]), and audited.

use std::sync::Arc;

use serde_json::{Value, json};
use steward_core::{ToolContext, ToolError, ToolOutput};
use steward_sql::{
    AccessFn, Database, Param, QueryLimits, QueryResult, SqlError, SqlErrorKind, WriteTx,
};

use crate::call_key::CallKey;
use crate::cells::first;
use crate::common::Clock;

/// The database and the clock the domain tools use.
#[derive(Clone, Debug)]
pub struct Store {
    /// The business database.
    pub db: Arc<Database>,
    /// Where "today" comes from.
    pub clock: Clock,
    /// Each principal's SQL access (set once by the app; shared by every clone).
    access: Option<AccessFn>,
}

fn read_limits() -> QueryLimits {
    QueryLimits {
        max_rows: 10_000,
        ..QueryLimits::default()
    }
}

/// The rows a principal whose role filters them may see, and so write: every write of the domain tools reads
/// and leaves only such rows (a row it names that the principal may not see does not exist for them).
pub(crate) struct Rows {
    guard: steward_sql::Guard,
    scope: steward_sql::Scope,
}

impl Rows {
    /// True when the row `id` of `table` (one of the domain's own tables) is one the principal may see, as the
    /// transaction `tx` sees it (rows it wrote included).
    pub(crate) async fn sees(
        &self,
        tx: &mut WriteTx,
        table: &str,
        id: i64,
    ) -> Result<bool, ToolError> {
        let sql = tx
            .dialect()
            .placeholders(&format!("SELECT id FROM {table} WHERE id = ?"));
        let scoped = self
            .guard
            .scoped(&sql, &self.scope)
            .map_err(|verdict| ToolError::new(format!("Not allowed: {}", verdict.explanation())))?;
        let params = scoped
            .bind(&[Param::Int(id)])
            .map_err(ToolError::internal)?;
        let found = tx
            .fetch_prepared(&scoped.sql, &params)
            .await
            .map_err(unavailable)?;
        Ok(!found.rows.is_empty())
    }
}

/// The start of a write: either it was done before for this call, or a fresh transaction.
pub(crate) enum Begun {
    /// This call already ran; here is what it returned.
    Replay(ToolOutput),
    /// A transaction to write in.
    Fresh(WriteTx),
}

impl Store {
    /// A store over `db`; with `access`, the tools' reads show a principal only the tables, columns and rows
    /// its role allows.
    pub fn new(db: Arc<Database>, clock: Clock, access: Option<AccessFn>) -> Self {
        Self { db, clock, access }
    }

    /// How each principal's SQL access is found, when it is limited.
    pub fn access(&self) -> Option<&AccessFn> {
        self.access.as_ref()
    }

    /// Today, from the clock.
    pub fn today(&self) -> chrono::NaiveDate {
        self.clock.now().0.date_naive()
    }

    /// Reads rows for the call `ctx` belongs to; `?` placeholders in every dialect. When the call's principal's
    /// role filters rows, the text is limited to them (in its syntax tree; the tables and columns the domain
    /// tools read are governed by the role's `tools` list instead) and the limited text, checked by the guard,
    /// is what runs.
    pub(crate) async fn read(
        &self,
        ctx: &ToolContext,
        sql: &str,
        params: &[Param],
    ) -> Result<QueryResult, ToolError> {
        let sql = self.db.dialect().placeholders(sql);
        let Some(Rows { guard, scope }) = self.scope_of(ctx, |scope| !scope.is_empty()).await?
        else {
            return self.read_trusted(&sql, params).await;
        };
        let scoped = guard
            .scoped(&sql, &scope)
            .map_err(|verdict| ToolError::new(format!("Not allowed: {}", verdict.explanation())))?;
        self.db
            .query_prepared(
                &scoped.sql,
                &scoped.bind(params).map_err(ToolError::internal)?,
                &read_limits(),
            )
            .await
            .map_err(unavailable)
    }

    /// The rows the principal of `ctx` may see and write, when their role filters rows (`None`: every row).
    pub(crate) async fn rows_of(&self, ctx: &ToolContext) -> Result<Option<Rows>, ToolError> {
        self.scope_of(ctx, steward_sql::Scope::filters_rows).await
    }

    /// The principal's row filters and masks (not its column lists: the domain tools' columns are governed by
    /// the role's `tools` list), with the guard that applies them, when `applies` says the scope limits
    /// anything here; `None` otherwise.
    async fn scope_of(
        &self,
        ctx: &ToolContext,
        applies: impl Fn(&steward_sql::Scope) -> bool,
    ) -> Result<Option<Rows>, ToolError> {
        let Some(f) = self.access.as_ref() else {
            return Ok(None);
        };
        let Some(access) = f
            .of(&ctx.principal, self.db.dialect())
            .map_err(|why| ToolError::new(format!("Not allowed: {why}.")))?
        else {
            return Ok(None);
        };
        let mut scope = access.scope.rows_only();
        if !applies(&scope) {
            return Ok(None);
        }
        scope.complete(&*self.db.catalog().await.map_err(unavailable)?);
        let guard = self.db.guard().await.map_err(unavailable)?;
        Ok(Some(Rows { guard, scope }))
    }

    /// Reads rows with SQL in the database's own placeholders, for no principal in particular.
    pub(crate) async fn read_trusted(
        &self,
        sql: &str,
        params: &[Param],
    ) -> Result<QueryResult, ToolError> {
        self.db
            .query_prepared(sql, params, &read_limits())
            .await
            .map_err(unavailable)
    }

    /// Begins the write of one tool call, unless that call was already done. A call id already used in this
    /// run by another tool or with other arguments is an error, and nothing is written.
    pub(crate) async fn begin(&self, key: &CallKey) -> Result<Begun, ToolError> {
        let mut tx = self.db.begin_write().await.map_err(unavailable)?;
        match previous(&mut tx, key).await? {
            Some(output) => Ok(Begun::Replay(output)),
            None => Ok(Begun::Fresh(tx)),
        }
    }

    /// Ends the write: an audit row, the call's key and result kept for replays, commit. If the same call
    /// committed meanwhile, its result is returned and this write is dropped (or the error, when that id was
    /// used for another call).
    pub(crate) async fn finish(
        &self,
        mut tx: WriteTx,
        key: &CallKey,
        action: &str,
        output: ToolOutput,
    ) -> Result<ToolOutput, ToolError> {
        match self.record(&mut tx, key, action, &output).await {
            Ok(()) => {
                tx.commit().await.map_err(unavailable)?;
                Ok(output)
            }
            Err(Recorded::Taken) => {
                drop(tx);
                let mut again = self.db.begin_write().await.map_err(unavailable)?;
                previous(&mut again, key)
                    .await?
                    .ok_or_else(|| ToolError::internal("a concurrent call vanished"))
            }
            Err(Recorded::Failed(e)) => Err(e),
        }
    }

    /// Keeps, in `tx`, an audit row of the write and the call's key and result for replays.
    pub(crate) async fn record(
        &self,
        tx: &mut WriteTx,
        key: &CallKey,
        action: &str,
        output: &ToolOutput,
    ) -> Result<(), Recorded> {
        let now = Param::Timestamp(self.clock.now().0.naive_local());
        let details = serde_json::to_string(&output.data).map_err(|e| {
            ToolError::internal(format!("the result of {} cannot be stored: {e}", key.tool))
        })?;
        tx.insert(
            "INSERT INTO audit_log (at, run_id, call_id, tool, action, details) VALUES (?, ?, ?, ?, ?, ?)",
            &[
                now.clone(),
                Param::Text(key.run_id.clone()),
                Param::Text(key.call_id.clone()),
                Param::Text(key.tool.clone()),
                Param::Text(action.to_owned()),
                Param::Text(details),
            ],
        )
        .await
        .map_err(unavailable)?;
        let stored = json!({"content": output.content, "data": output.data}).to_string();
        tx.execute(
            "INSERT INTO tool_calls (run_id, call_id, tool, arguments_hash, arguments, result, created_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?)",
            &[
                Param::Text(key.run_id.clone()),
                Param::Text(key.call_id.clone()),
                Param::Text(key.tool.clone()),
                Param::Text(key.hash.clone()),
                Param::Text(key.arguments.clone()),
                Param::Text(stored),
                now,
            ],
        )
        .await
        .map_err(|e| {
            if e.is(SqlErrorKind::Constraint) {
                Recorded::Taken
            } else {
                Recorded::Failed(unavailable(e))
            }
        })?;
        Ok(())
    }
}

/// Why a write's record could not be kept.
pub(crate) enum Recorded {
    /// The same call was recorded meanwhile (its key is taken).
    Taken,
    /// Something else failed.
    Failed(ToolError),
}

impl From<ToolError> for Recorded {
    fn from(e: ToolError) -> Self {
        Self::Failed(e)
    }
}

/// The result recorded for this run and call id, when it is the same call; an error when the id was used by
/// another tool or with other arguments.
pub(crate) async fn previous(
    tx: &mut WriteTx,
    key: &CallKey,
) -> Result<Option<ToolOutput>, ToolError> {
    let rows = tx
        .fetch(
            "SELECT tool, arguments_hash, arguments, result FROM tool_calls WHERE run_id = ? AND call_id = ?",
            &[Param::Text(key.run_id.clone()), Param::Text(key.call_id.clone())],
        )
        .await
        .map_err(|e| {
            let cause = e.to_string();
            unavailable(e).with_diagnostic(format!(
                "reading tool_calls failed: {cause} (a demo database made by an older steward lacks its key \
                 columns; `steward demo --force` rebuilds it)"
            ))
        })?;
    let Some(row) = first(&rows) else {
        return Ok(None);
    };
    key.check_same(&row.text(0)?, &row.text(1)?, &row.text(2)?)?;
    let stored = row.text(3)?;
    let value: Value = serde_json::from_str(&stored).map_err(|e| {
        ToolError::internal(format!(
            "the stored result of call {} is unreadable: {e}",
            key.call_id
        ))
    })?;
    let content = value
        .get("content")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            ToolError::internal(format!(
                "the stored result of call {} has no content",
                key.call_id
            ))
        })?;
    let mut output = ToolOutput::text(content);
    output.data = match value.get("data") {
        None | Some(Value::Null) => None,
        Some(data) => Some(serde_json::from_value(data.clone()).map_err(|e| {
            ToolError::internal(format!(
                "the stored data of call {} is unreadable: {e}",
                key.call_id
            ))
        })?),
    };
    Ok(Some(output))
}

/// A database failure as a tool error. The model is told whose fault it was — a value the database rejected
/// (fix it and retry), a conflict with existing data, or an outage (the action did not happen) — and the
/// operator gets the engine's own words.
pub(crate) fn unavailable(error: SqlError) -> ToolError {
    let m = error.message();
    match error.kind() {
        SqlErrorKind::Constraint => {
            ToolError::new(format!("The change conflicts with existing data: {m}."))
        }
        SqlErrorKind::Invalid => ToolError::new(format!(
            "The database rejected a value: {m}. Nothing was changed; correct that value and try again."
        )),
        SqlErrorKind::Query => ToolError::new(
            "The database refused Steward's statement, so the action did not happen; tell the user.",
        )
        .for_people(
            "The database refused Steward's statement, so the action did not happen; the operator has the \
             details.",
        )
        .with_diagnostic(m),
        _ => ToolError::new(
            "The database could not be used just now; tell the user the action did not happen.",
        )
        .for_people("The database could not be used just now, so the action did not happen; try again later.")
        .with_diagnostic(error.to_string()),
    }
}
