//! The bookkeeping that makes a declarative write idempotent: each call's key (run id, call id, tool, SHA-256
//! of the canonical arguments: steward-domains' [`CallKey`]) and result, kept in the business database in the
//! same transaction as the write. A retried call gets the first result back; the same call id with other
//! arguments is an error. The table has the columns of the demo's `tool_calls` and is created on first use.

use serde_json::{Value, json};
use steward_core::{ToolError, ToolOutput};
use steward_domains::call_key::CallKey;
use steward_sql::{Database, Dialect, Param, SqlError, SqlErrorKind, WriteTx};
use tokio::sync::OnceCell;

/// The table that records the declarative writes of a database.
pub const LEDGER_TABLE: &str = "steward_tool_calls";

/// The start of a write: done before for this call, or a fresh transaction.
pub(crate) enum Begun {
    /// This call already ran; here is what it returned.
    Replay(ToolOutput),
    /// A transaction to write in.
    Fresh(WriteTx),
}

/// The ledger of one tool's database.
#[derive(Debug)]
pub(crate) struct Ledger {
    ready: OnceCell<()>,
    /// The table, as SQL: Steward's own quoting of a name checked to be `name` or `schema.name`.
    table: String,
}

/// The SQL of a ledger table named `name` (`table` or `schema.table`, each part letters, digits and `_`, not
/// starting with a digit), quoted for `dialect`; `None` for any other name.
pub(crate) fn ledger_table(dialect: Dialect, name: &str) -> Option<String> {
    let parts: Vec<&str> = name.split('.').collect();
    let plain = |part: &&str| {
        part.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && part.len() <= 63
    };
    if parts.is_empty() || parts.len() > 2 || !parts.iter().all(plain) {
        return None;
    }
    let quote = |part: &str| match dialect {
        Dialect::Mysql => format!("`{part}`"),
        _ => format!("\"{part}\""),
    };
    Some(parts.into_iter().map(quote).collect::<Vec<_>>().join("."))
}

/// The columns of a ledger table.
pub(crate) const COLUMNS: &str =
    "run_id, call_id, tool, arguments_hash, arguments, result, created_at";

/// Why a ledger named `name` may not go where it says, or `None`: it stays in the tool's own database (on
/// MySQL and MariaDB a schema is another database) and out of the engines' own schemas.
pub(crate) fn misplaced(dialect: Dialect, name: &str) -> Option<String> {
    let (schema, _) = name.split_once('.')?;
    if dialect == Dialect::Mysql {
        return Some(format!(
            "on MySQL and MariaDB `{schema}.` names another database, and the ledger must stay in the tool's own \
             (it commits with the write); name the table alone"
        ));
    }
    let system = [
        "information_schema",
        "pg_catalog",
        "pg_toast",
        "mysql",
        "performance_schema",
        "sys",
    ];
    system
        .iter()
        .any(|s| s.eq_ignore_ascii_case(schema))
        .then(|| {
            format!("`{schema}` is the engine's own schema; name one of yours, or the table alone")
        })
}

impl Ledger {
    /// The table, as SQL.
    pub(crate) fn table(&self) -> &str {
        &self.table
    }

    /// The ledger in the table `table` (SQL made by [`ledger_table`]).
    pub(crate) fn new(table: String) -> Self {
        Self {
            ready: OnceCell::new(),
            table,
        }
    }

    /// Begins the write of one call, unless that call was already done.
    pub(crate) async fn begin(&self, db: &Database, key: &CallKey) -> Result<Begun, ToolError> {
        self.ready
            .get_or_try_init(|| async {
                // DDL outside the write: on MySQL/MariaDB it would commit the transaction.
                let ddl = ddl(db.dialect(), &self.table);
                match db.execute_script(&ddl).await {
                    Ok(()) => Ok(()),
                    // Two processes may race to create it: once more sees it there.
                    Err(_) => db.execute_script(&ddl).await,
                }
            })
            .await
            .map_err(|e| {
                failed(&e, &self.table)
                    .with_diagnostic(format!("creating the table {} failed: {e}", self.table))
            })?;
        let mut tx = db.begin_write().await.map_err(|e| unavailable(&e))?;
        match previous(&mut tx, &self.table, key).await? {
            Some(output) => Ok(Begun::Replay(output)),
            None => Ok(Begun::Fresh(tx)),
        }
    }

    /// Records the call and its result, then commits. If the same call committed meanwhile, its result is
    /// returned and this write is dropped.
    pub(crate) async fn finish(
        &self,
        db: &Database,
        mut tx: WriteTx,
        key: &CallKey,
        output: ToolOutput,
    ) -> Result<ToolOutput, ToolError> {
        let stored = json!({"content": output.content, "data": output.data}).to_string();
        let now = Param::Timestamp(chrono::Utc::now().naive_utc());
        let kept = tx
            .execute(
                &format!(
                    "INSERT INTO {} (run_id, call_id, tool, arguments_hash, arguments, result, created_at) \
                     VALUES (?, ?, ?, ?, ?, ?, ?)",
                    self.table
                ),
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
            .await;
        match kept {
            Ok(_) => {
                tx.commit().await.map_err(|e| unavailable(&e))?;
                Ok(output)
            }
            Err(e) if e.is(SqlErrorKind::Constraint) => {
                drop(tx);
                let mut again = db.begin_write().await.map_err(|e| unavailable(&e))?;
                previous(&mut again, &self.table, key)
                    .await?
                    .ok_or_else(|| ToolError::internal("a concurrent call vanished"))
            }
            Err(e) => Err(failed(&e, &self.table).with_diagnostic(e.to_string())),
        }
    }
}

/// The table's DDL in a dialect (the demo's `tool_calls` columns).
fn ddl(dialect: Dialect, table: &str) -> String {
    let (ts, long) = match dialect {
        Dialect::Mysql => ("DATETIME", "LONGTEXT"),
        _ => ("TIMESTAMP", "TEXT"),
    };
    format!(
        "CREATE TABLE IF NOT EXISTS {table} (
    run_id VARCHAR(200) NOT NULL,
    call_id VARCHAR(200) NOT NULL,
    tool VARCHAR(64) NOT NULL,
    arguments_hash CHAR(64) NOT NULL,
    arguments {long} NOT NULL,
    result {long} NOT NULL,
    created_at {ts} NOT NULL,
    PRIMARY KEY (run_id, call_id)
)"
    )
}

/// The result recorded for this run and call id when it is the same call; an error when the id was used by
/// another tool or with other arguments.
async fn previous(
    tx: &mut WriteTx,
    table: &str,
    key: &CallKey,
) -> Result<Option<ToolOutput>, ToolError> {
    let rows = tx
        .fetch(
            &format!(
                "SELECT tool, arguments_hash, arguments, result FROM {table} WHERE run_id = ? AND call_id = ?"
            ),
            &[
                Param::Text(key.run_id.clone()),
                Param::Text(key.call_id.clone()),
            ],
        )
        .await
        .map_err(|e| failed(&e, table).with_diagnostic(format!("reading {table}: {e}")))?;
    let Some(row) = rows.rows.first() else {
        return Ok(None);
    };
    let text = |i: usize| -> Result<&str, ToolError> {
        row.get(i).and_then(Value::as_str).ok_or_else(|| {
            ToolError::internal(format!(
                "{table} holds an unreadable row for call {}",
                key.call_id
            ))
        })
    };
    key.check_same(text(0)?, text(1)?, text(2)?)?;
    let value: Value = serde_json::from_str(text(3)?).map_err(|e| {
        ToolError::internal(format!(
            "the stored result of call {} is unreadable: {e}",
            key.call_id
        ))
    })?;
    let content = value
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut output = ToolOutput::text(content);
    output.data = match value.get("data") {
        None | Some(Value::Null) => None,
        Some(data) => serde_json::from_value(data.clone()).ok(),
    };
    Ok(Some(output))
}

/// A failure of the bookkeeping in `table`: an outage passes (try again later); a table the database will not
/// create or use as a ledger (a schema it lacks, no right to create, a table of another shape) is the config's
/// to fix. Either way the change did not happen.
fn failed(error: &SqlError, table: &str) -> ToolError {
    if matches!(
        error.kind(),
        SqlErrorKind::Connect | SqlErrorKind::Unavailable | SqlErrorKind::Timeout
    ) {
        return unavailable(error);
    }
    ToolError::new(format!(
        "The change was not made: the database refuses the table {table} where Steward records each write. \
         Tell the user the tool is misconfigured."
    ))
    .for_people(format!(
        "The change was not made: the database refuses the table {table} where Steward records each write \
         (the tool's `ledger:` names where it goes); the operator has the details."
    ))
    .with_diagnostic(error.to_string())
}

/// A failure of the bookkeeping: the model is told the change did not happen.
fn unavailable(error: &SqlError) -> ToolError {
    ToolError::new(
        "The database could not be used just now, so the change was not made; tell the user.",
    )
    .for_people(
        "The database could not be used just now, so the change was not made; try again later.",
    )
    .with_diagnostic(error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ledger stays in the tool's own database and out of the engines' schemas; a plain name or a schema of
    /// the user's (PostgreSQL, SQLite) is fine.
    #[test]
    fn a_ledger_in_another_database_or_a_system_schema_is_refused() {
        for (dialect, name) in [
            (Dialect::Mysql, "other_db.calls"),
            (Dialect::Mysql, "mysql.steward_calls"),
            (Dialect::Postgres, "information_schema.calls"),
            (Dialect::Postgres, "PG_CATALOG.calls"),
            (Dialect::Sqlite, "sys.calls"),
        ] {
            assert!(misplaced(dialect, name).is_some(), "{dialect:?} {name}");
        }
        for (dialect, name) in [
            (Dialect::Mysql, "calls"),
            (Dialect::Postgres, "books.calls"),
            (Dialect::Postgres, "steward_tool_calls"),
            (Dialect::Sqlite, "main.calls"),
        ] {
            assert_eq!(misplaced(dialect, name), None, "{dialect:?} {name}");
        }
    }
}
