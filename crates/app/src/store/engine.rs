//! The two engines the store runs on, behind one small interface: SQL is written once with `$n` placeholders
//! (SQLite reads `$1` as parameter 1 too), values travel as [`Arg`]s and come back through [`Row`].
//!
//! Times are `TIMESTAMPTZ` on PostgreSQL and, on SQLite, text in one fixed-width UTC form
//! (`2026-11-21T08:30:00.000000Z`), so that text order is time order.
//!
//! Where a caller enters sqlx, the future is boxed: sqlx's own futures nest deep enough that a caller holding
//! one inline overflowed the compiler's layout queries in release builds (docs/DESIGN.md, "Async depth").

use std::time::Duration;

use chrono::{DateTime, Utc};
use futures_util::FutureExt as _;
use sqlx::Connection as _;
use sqlx::migrate::{Migrate as _, MigrateError, Migrator};
use sqlx::postgres::{PgConnection, PgPool, PgRow};
use sqlx::sqlite::SqliteRow;
use sqlx::{Postgres, Row as _, Sqlite, Transaction};

use super::StoreError;
use super::sqlite_pool::{SqliteProbeFailure, SqliteStore, WRITE_PROBE};

/// A value bound to a statement.
#[derive(Clone, Debug)]
pub(crate) enum Arg {
    Text(Option<String>),
    Int(Option<i64>),
    Real(Option<f64>),
    Bool(Option<bool>),
    Time(Option<DateTime<Utc>>),
}

impl From<&str> for Arg {
    fn from(v: &str) -> Self {
        Self::Text(Some(v.to_owned()))
    }
}
impl From<String> for Arg {
    fn from(v: String) -> Self {
        Self::Text(Some(v))
    }
}
impl From<Option<String>> for Arg {
    fn from(v: Option<String>) -> Self {
        Self::Text(v)
    }
}
impl From<i64> for Arg {
    fn from(v: i64) -> Self {
        Self::Int(Some(v))
    }
}
impl From<u64> for Arg {
    fn from(v: u64) -> Self {
        Self::Int(Some(i64::try_from(v).unwrap_or(i64::MAX)))
    }
}
impl From<Option<f64>> for Arg {
    fn from(v: Option<f64>) -> Self {
        Self::Real(v)
    }
}
impl From<bool> for Arg {
    fn from(v: bool) -> Self {
        Self::Bool(Some(v))
    }
}
impl From<DateTime<Utc>> for Arg {
    fn from(v: DateTime<Utc>) -> Self {
        Self::Time(Some(v))
    }
}

/// The fixed-width UTC text of a time on SQLite.
pub(crate) fn sqlite_time(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// A connection pool of either engine.
///
/// A PostgreSQL pool tests each idle connection before it lends it (a server that restarted, or a database
/// that dropped its sessions, costs one failed ping, not a failed statement) and opens new ones as needed, so
/// it reconnects by itself once the server answers again. A SQLite pool watches its file (see
/// `sqlite_pool.rs`).
#[derive(Clone, Debug)]
pub(crate) enum Pool {
    Sqlite(SqliteStore),
    Postgres(PgPool),
}

/// A write transaction of either engine; dropped without [`Tx::commit`], it rolls back. A SQLite
/// transaction keeps its store, to report a fault of the file to it.
pub(crate) enum Tx {
    Sqlite(Transaction<'static, Sqlite>, SqliteStore),
    Postgres(Transaction<'static, Postgres>),
}

/// Why a write probe failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ProbeFailure {
    /// A SQLite store's file is gone or cannot be written.
    Sqlite(SqliteProbeFailure),
    /// PostgreSQL refused, or could not be reached: the SQLSTATE (when it gave one) and the message.
    Postgres {
        /// The SQLSTATE.
        code: Option<String>,
        /// The message, on one line.
        message: String,
    },
    /// PostgreSQL takes new connections, but the check through the pool did not finish in time: every
    /// connection is in use, or a lock is held.
    PostgresBusy,
}

/// The message of a driver error, on one line, without sqlx's preamble.
pub(crate) fn plain(e: &sqlx::Error) -> String {
    let text = one_line(&e.to_string());
    let text = text
        .strip_prefix("error returned from database: ")
        .unwrap_or(&text);
    // PostgreSQL's report of the line of its own source that raised the error says nothing to an operator.
    match text.rsplit_once(" at line ") {
        Some((head, line)) if !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()) => {
            head.to_owned()
        }
        _ => text.to_owned(),
    }
}

fn pg_failure(e: &sqlx::Error) -> ProbeFailure {
    ProbeFailure::Postgres {
        code: e
            .as_database_error()
            .and_then(|d| d.code())
            .map(|c| c.into_owned()),
        message: plain(e),
    }
}

/// The table where sqlx's migrator keeps the steps applied.
pub(crate) const MIGRATIONS_TABLE: &str = "_sqlx_migrations";

/// What [`Tx::migrator`] does.
#[derive(Clone, Copy, Debug)]
pub(crate) enum MigratorStep {
    /// Creates the migrator's table when it is missing.
    Ensure,
    /// Records the steps up to this version as applied without running them.
    Skip(i64),
    /// Applies the steps up to this version that are not applied yet.
    RunTo(i64),
}

/// A result row of either engine.
pub(crate) enum Row {
    Sqlite(SqliteRow),
    Postgres(PgRow),
}

fn db(e: sqlx::Error) -> StoreError {
    StoreError::driver(one_line(&e.to_string()), e)
}

/// Text on one line (engine messages can span several).
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

macro_rules! bind_all {
    ($query:expr, $args:expr, $time:expr) => {{
        let mut q = $query;
        for arg in $args {
            q = match arg {
                Arg::Text(v) => q.bind(v),
                Arg::Int(v) => q.bind(v),
                Arg::Real(v) => q.bind(v),
                Arg::Bool(v) => q.bind(v),
                Arg::Time(v) => q.bind(v.map($time)),
            };
        }
        q
    }};
}

impl Pool {
    /// Begins a write transaction; on SQLite it takes the write lock first (`BEGIN IMMEDIATE`), waiting on the
    /// busy timeout for other writers instead of failing half-way.
    pub(crate) async fn begin(&self) -> Result<Tx, StoreError> {
        async move {
            Ok(match self {
                Self::Sqlite(store) => Tx::Sqlite(store.begin().await?, store.clone()),
                Self::Postgres(pool) => Tx::Postgres(pool.begin().await.map_err(db)?),
            })
        }
        .boxed()
        .await
    }

    /// Proves that the store can be written now, without writing: a SQLite store on a connection of its own
    /// (see `SqliteStore::probe`), PostgreSQL in a transaction of the pool that is rolled back. The pool keeps
    /// trying to connect to a server that refuses connections until its acquire timeout, so when the check
    /// has not finished within three fifths of `limit`, one direct connection finds out why. The caller
    /// bounds the whole in time (`limit`).
    pub(crate) async fn probe(&self, limit: Duration) -> Result<(), ProbeFailure> {
        async move {
            match self {
                Self::Sqlite(store) => store.probe().await.map_err(ProbeFailure::Sqlite),
                Self::Postgres(pool) => {
                    let pooled = async {
                        let mut tx = pool.begin().await?;
                        sqlx::query(WRITE_PROBE).execute(&mut *tx).await?;
                        tx.rollback().await
                    };
                    match tokio::time::timeout(limit * 3 / 5, pooled).await {
                        Ok(outcome) => outcome.map_err(|e| pg_failure(&e)),
                        Err(_) => {
                            match PgConnection::connect_with(&*pool.connect_options()).await {
                                Ok(direct) => {
                                    let _ = direct.close().await;
                                    Err(ProbeFailure::PostgresBusy)
                                }
                                Err(e) => Err(pg_failure(&e)),
                            }
                        }
                    }
                }
            }
        }
        .boxed()
        .await
    }

    /// Runs a query outside any transaction and returns its rows.
    pub(crate) async fn fetch(
        &self,
        sql: &'static str,
        args: Vec<Arg>,
    ) -> Result<Vec<Row>, StoreError> {
        async move {
            Ok(match self {
                Self::Sqlite(store) => bind_all!(sqlx::query(sql), args, sqlite_time)
                    .fetch_all(&store.for_read()?)
                    .await
                    .map_err(|e| store.fail(e))?
                    .into_iter()
                    .map(Row::Sqlite)
                    .collect(),
                Self::Postgres(pool) => bind_all!(sqlx::query(sql), args, pg_time)
                    .fetch_all(pool)
                    .await
                    .map_err(db)?
                    .into_iter()
                    .map(Row::Postgres)
                    .collect(),
            })
        }
        .boxed()
        .await
    }

    /// Closes every connection.
    pub(crate) async fn close(&self) {
        match self {
            Self::Sqlite(store) => store.close().await,
            Self::Postgres(pool) => pool.close().await,
        }
    }
}

/// PostgreSQL takes times as they are.
fn pg_time(t: DateTime<Utc>) -> DateTime<Utc> {
    t
}

impl Tx {
    /// Runs a statement; returns the rows it changed.
    pub(crate) async fn execute(
        &mut self,
        sql: &'static str,
        args: Vec<Arg>,
    ) -> Result<u64, StoreError> {
        async move {
            Ok(match self {
                Self::Sqlite(tx, store) => bind_all!(sqlx::query(sql), args, sqlite_time)
                    .execute(&mut **tx)
                    .await
                    .map_err(|e| store.fail(e))?
                    .rows_affected(),
                Self::Postgres(tx) => bind_all!(sqlx::query(sql), args, pg_time)
                    .execute(&mut **tx)
                    .await
                    .map_err(db)?
                    .rows_affected(),
            })
        }
        .boxed()
        .await
    }

    /// Runs a query and returns its rows.
    pub(crate) async fn fetch(
        &mut self,
        sql: &'static str,
        args: Vec<Arg>,
    ) -> Result<Vec<Row>, StoreError> {
        async move {
            Ok(match self {
                Self::Sqlite(tx, store) => bind_all!(sqlx::query(sql), args, sqlite_time)
                    .fetch_all(&mut **tx)
                    .await
                    .map_err(|e| store.fail(e))?
                    .into_iter()
                    .map(Row::Sqlite)
                    .collect(),
                Self::Postgres(tx) => bind_all!(sqlx::query(sql), args, pg_time)
                    .fetch_all(&mut **tx)
                    .await
                    .map_err(db)?
                    .into_iter()
                    .map(Row::Postgres)
                    .collect(),
            })
        }
        .boxed()
        .await
    }

    /// Runs a script of several statements without parameters (a migration).
    pub(crate) async fn script(&mut self, sql: &'static str) -> Result<(), StoreError> {
        async move {
            match self {
                Self::Sqlite(tx, store) => {
                    sqlx::raw_sql(sql)
                        .execute(&mut **tx)
                        .await
                        .map_err(|e| store.fail(e))?;
                }
                Self::Postgres(tx) => {
                    sqlx::raw_sql(sql).execute(&mut **tx).await.map_err(db)?;
                }
            }
            Ok(())
        }
        .boxed()
        .await
    }

    /// Runs sqlx's migrator on this transaction's connection (each step it applies in a savepoint). Through
    /// `Migrator::run_direct`, which sqlx keeps public for this: its `run_to` and `skip` take an `Acquire`,
    /// whose impl for `&mut` connections is not general enough for the compiler to prove a caller's future
    /// `Send`.
    pub(crate) async fn migrator(
        &mut self,
        migrator: &Migrator,
        step: MigratorStep,
    ) -> Result<(), MigrateError> {
        async move {
            macro_rules! on {
                ($conn:expr) => {
                    match step {
                        MigratorStep::Ensure => {
                            $conn.ensure_migrations_table(MIGRATIONS_TABLE).await
                        }
                        MigratorStep::Skip(to) => migrator.run_direct(Some(to), $conn, true).await,
                        MigratorStep::RunTo(to) => {
                            migrator.run_direct(Some(to), $conn, false).await
                        }
                    }
                };
            }
            match self {
                Self::Sqlite(tx, _) => on!(&mut **tx),
                Self::Postgres(tx) => on!(&mut **tx),
            }
        }
        .boxed()
        .await
    }

    /// True on PostgreSQL.
    pub(crate) fn is_postgres(&self) -> bool {
        matches!(self, Self::Postgres(_))
    }

    /// Commits.
    pub(crate) async fn commit(self) -> Result<(), StoreError> {
        async move {
            match self {
                Self::Sqlite(tx, store) => tx.commit().await.map_err(|e| store.fail(e)),
                Self::Postgres(tx) => tx.commit().await.map_err(db),
            }
        }
        .boxed()
        .await
    }
}

fn cell(column: usize, e: sqlx::Error) -> StoreError {
    StoreError::Corrupt(format!("column {column}: {}", one_line(&e.to_string())))
}

impl Row {
    /// A text column.
    pub(crate) fn text(&self, i: usize) -> Result<Option<String>, StoreError> {
        match self {
            Self::Sqlite(row) => row.try_get(i),
            Self::Postgres(row) => row.try_get(i),
        }
        .map_err(|e| cell(i, e))
    }

    /// A text column that may not be NULL.
    pub(crate) fn string(&self, i: usize) -> Result<String, StoreError> {
        self.text(i)?
            .ok_or_else(|| StoreError::Corrupt(format!("column {i} is NULL")))
    }

    /// An integer column that may be NULL.
    pub(crate) fn opt_int(&self, i: usize) -> Result<Option<i64>, StoreError> {
        match self {
            Self::Sqlite(row) => row.try_get(i),
            Self::Postgres(row) => row.try_get(i),
        }
        .map_err(|e| cell(i, e))
    }

    /// An integer column (NULL reads as 0).
    pub(crate) fn int(&self, i: usize) -> Result<i64, StoreError> {
        Ok(self.opt_int(i)?.unwrap_or_default())
    }

    /// A non-negative integer column, as u64.
    pub(crate) fn count(&self, i: usize) -> Result<u64, StoreError> {
        Ok(u64::try_from(self.int(i)?).unwrap_or_default())
    }

    /// A floating-point column.
    pub(crate) fn real(&self, i: usize) -> Result<Option<f64>, StoreError> {
        match self {
            Self::Sqlite(row) => row.try_get(i),
            Self::Postgres(row) => row.try_get(i),
        }
        .map_err(|e| cell(i, e))
    }

    /// A boolean column.
    pub(crate) fn boolean(&self, i: usize) -> Result<Option<bool>, StoreError> {
        match self {
            Self::Sqlite(row) => row.try_get(i),
            Self::Postgres(row) => row.try_get(i),
        }
        .map_err(|e| cell(i, e))
    }

    /// A time column.
    pub(crate) fn time(&self, i: usize) -> Result<Option<DateTime<Utc>>, StoreError> {
        match self {
            Self::Sqlite(row) => {
                let text: Option<String> = row.try_get(i).map_err(|e| cell(i, e))?;
                text.map(|t| {
                    DateTime::parse_from_rfc3339(&t)
                        .map(|t| t.with_timezone(&Utc))
                        .map_err(|e| {
                            StoreError::Corrupt(format!("column {i}: `{t}` is not a time: {e}"))
                        })
                })
                .transpose()
            }
            Self::Postgres(row) => row.try_get(i).map_err(|e| cell(i, e)),
        }
    }

    /// A time column that may not be NULL.
    pub(crate) fn instant(&self, i: usize) -> Result<DateTime<Utc>, StoreError> {
        self.time(i)?
            .ok_or_else(|| StoreError::Corrupt(format!("column {i} is NULL")))
    }
}
