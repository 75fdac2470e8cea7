//! Writing the demo into a database: SQL literals for its values; rows batched into multi-row INSERTs and
//! statements into one transaction per flush, parents first; and what each engine needs before the rows (the
//! schema dropped and created; SQLite in WAL mode) and after them (PostgreSQL's identities moved past the
//! explicit ids).

use chrono::NaiveDate;
use steward_sql::{Database, Dialect, SqlError};

use super::schema::{TABLES, ddl, drop_all};

/// Rows per INSERT statement.
const ROWS_PER_INSERT: usize = 500;

/// Makes `db` ready for the rows: SQLite in WAL mode, the demo tables dropped and created again.
pub(super) async fn prepare(db: &Database) -> Result<(), SqlError> {
    let dialect = db.dialect();
    if dialect == Dialect::Sqlite {
        // Persistent in the file; an in-memory database answers `memory` and stays as it is.
        db.execute_script("PRAGMA journal_mode=WAL").await?;
    }
    db.execute_script(&drop_all(dialect)).await?;
    db.execute_script(&ddl(dialect)).await
}

/// Finishes the database once every row is in.
pub(super) async fn finish(db: &Database) -> Result<(), SqlError> {
    let dialect = db.dialect();
    if dialect == Dialect::Postgres {
        // Ids were given explicitly: move each identity past them so new rows get fresh ids.
        let reset: String = TABLES
            .iter()
            .filter(|t| **t != "tool_calls")
            .map(|t| format!("SELECT setval(pg_get_serial_sequence('{t}', 'id'), COALESCE((SELECT MAX(id) FROM {t}), 0) + 1, false);"))
            .collect();
        db.execute_script(&reset).await?;
    }
    Ok(())
}

/// Whole cents as a decimal literal: `1250` → `12.50`.
pub(super) fn money(cents: u64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// A rate in basis points as a decimal literal: `1900` → `0.1900`.
pub(super) fn rate_text(basis_points: u64) -> String {
    format!("{}.{:04}", basis_points / 10_000, basis_points % 10_000)
}

/// A SQL string literal.
pub(super) fn text(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

/// A date literal: `'2026-11-21'`.
pub(super) fn date(day: NaiveDate) -> String {
    format!("'{}'", day.format("%Y-%m-%d"))
}

/// A timestamp literal: `'2026-11-21 09:30:00'`.
pub(super) fn stamp(at: chrono::NaiveDateTime) -> String {
    format!("'{}'", at.format("%Y-%m-%d %H:%M:%S"))
}

/// Batches rows into multi-row INSERTs, and statements into one transaction per flush, parent tables first
/// (foreign keys are checked statement by statement).
pub(super) struct Writer<'a> {
    db: &'a Database,
    dialect: Dialect,
    pending: Vec<(&'static str, &'static str, Vec<String>)>,
    script: String,
    /// Rows written per table, in the order the tables were first written.
    pub(super) counts: Vec<(String, u64)>,
}

impl<'a> Writer<'a> {
    /// A writer with nothing pending.
    pub(super) fn new(db: &'a Database, dialect: Dialect) -> Self {
        Self {
            db,
            dialect,
            pending: Vec::new(),
            script: String::new(),
            counts: Vec::new(),
        }
    }

    /// Queues one row of `table`: `values` are SQL literals in the order of `columns`.
    pub(super) fn row(&mut self, table: &'static str, columns: &'static str, values: String) {
        match self.counts.iter_mut().find(|(t, _)| t == table) {
            Some((_, n)) => *n += 1,
            None => self.counts.push((table.to_owned(), 1)),
        }
        let index = match self.pending.iter().position(|(t, _, _)| *t == table) {
            Some(i) => i,
            None => {
                self.pending.push((table, columns, Vec::new()));
                self.pending.len() - 1
            }
        };
        self.pending[index].2.push(values);
    }

    fn statements(&mut self, table: &str, columns: &str, rows: &[String]) {
        for chunk in rows.chunks(ROWS_PER_INSERT) {
            self.script.push_str(&format!(
                "INSERT INTO {table} ({columns}) VALUES ({});\n",
                chunk.join("), (")
            ));
        }
    }

    /// Writes everything pending in one transaction, parents before children.
    pub(super) async fn flush_all(&mut self) -> Result<(), SqlError> {
        let mut pending = std::mem::take(&mut self.pending);
        pending.sort_by_key(|(t, _, _)| TABLES.iter().position(|x| x == t).unwrap_or(usize::MAX));
        for (table, columns, rows) in &pending {
            self.statements(table, columns, rows);
        }
        if self.script.is_empty() {
            return Ok(());
        }
        let begin = if self.dialect == Dialect::Mysql {
            "START TRANSACTION"
        } else {
            "BEGIN"
        };
        let script = format!("{begin};\n{}COMMIT;", std::mem::take(&mut self.script));
        self.db.execute_script(&script).await
    }
}
