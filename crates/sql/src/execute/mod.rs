//! Running SQL read-only, exactly as checked.
//!
//! - **What runs is what was checked**: the engine receives byte for byte the text the guard parsed. Rows are
//!   capped by streaming (at most `max_rows + 1` are read, then the cursor is abandoned), never by editing the
//!   SQL. The engine itself proves the text is one statement before it runs: PostgreSQL and MySQL/MariaDB
//!   prepare it (their prepared statements hold exactly one), SQLite compiles it and must find nothing after
//!   the first statement (see `sqlite_check`).
//! - **Read-only twice over**: reads use connections that are read-only by construction — SQLite opened with
//!   `SQLITE_OPEN_READONLY` and `query_only`; PostgreSQL and MySQL/MariaDB connections whose session default is
//!   read-only transactions — and each query runs in a read-only transaction with the engine's time limit
//!   (`statement_timeout`, `max_statement_time`/`max_execution_time`; on SQLite an interrupt).
//! - **As the engine's own client shows it**: SQL without parameters runs through the text protocol on
//!   PostgreSQL (simple query) and MySQL/MariaDB (`COM_QUERY`), so every value arrives as `psql` or `mariadb`
//!   print it; SQL built by code with bound parameters uses prepared statements. (One exception on
//!   MySQL/MariaDB, where sqlx misreads rows whose first cell is 16 MiB or longer: see `mysql`.)
//! - **Nothing left behind**: a connection goes back to its pool only after its session was reset; a result cut
//!   short, an error, a time limit or a cancelled future close it instead (see `lease`), and so does a result
//!   with a cell cut at the byte cap or a row over 1 MiB, whose buffers the driver would keep (see `collect`).
//! - **One row at a time**: a huge cell is in memory only as the driver holds it (sqlx reads whole rows, and
//!   its buffers hold a large row up to 2–3 times while it reads it), only until its row is dropped; steward
//!   copies at most the byte cap of it, and reads nothing more of a result once a cell was cut. The measured
//!   bound per engine is in docs/benchmarks.md ("Memory").
//! - **A dropped query stops on the server too**: a read dropped before its statement ended sends the
//!   engine's cancel from another connection (PostgreSQL `pg_cancel_backend`, MySQL/MariaDB `KILL QUERY`);
//!   SQLite's progress handler stops it (see `cancel`).
//!
//! This module is the read path's entry (`Database::query` and its siblings) and the per-engine parts under
//! it; what a query takes and gives back (`Param`, `QueryLimits`, `QueryResult`) is plain data in `query`.

pub(crate) mod bind;
mod cancel;
mod collect;
pub(crate) mod decode;
pub(crate) mod errors;
mod lease;
mod mysql;
mod postgres;
mod read;
mod sqlite;
pub(crate) mod sqlite_check;
pub(crate) mod sqlite_mask;
pub(crate) mod sqlite_rows;

use std::time::Duration;

use futures_util::FutureExt as _;

use crate::database::{Database, Pools};
use crate::enrich;
use crate::error::{SqlError, SqlErrorKind};
use crate::guard::Guard;
use crate::query::{Param, QueryLimits, QueryResult};

pub(crate) use bind::bind_all;
pub use cancel::{CANCEL_BOUND, settle_cancellations};
pub(crate) use collect::{Collector, Drained, columns_of};
pub(crate) use errors::{db_error, mysql_number, sqlite_error};
pub(crate) use lease::Lease;

impl Database {
    /// Checks `sql` with the guard, then runs exactly that text read-only; database errors are enriched for
    /// the model.
    pub async fn query(
        &self,
        guard: &Guard,
        sql: &str,
        limits: &QueryLimits,
    ) -> Result<QueryResult, SqlError> {
        self.query_with(guard, sql, &[], limits).await
    }

    /// [`Database::query`] with bound parameters.
    pub async fn query_with(
        &self,
        guard: &Guard,
        sql: &str,
        params: &[Param],
        limits: &QueryLimits,
    ) -> Result<QueryResult, SqlError> {
        self.query_seen_by(guard, sql, params, limits, None).await
    }

    /// [`Database::query_with`] for a principal with `access`: an error is explained (the columns of the
    /// tables in the query, "did you mean") from what it may see alone ([`crate::visible_catalog`]), so that it
    /// names no table or column it may not read.
    pub async fn query_seen_by(
        &self,
        guard: &Guard,
        sql: &str,
        params: &[Param],
        limits: &QueryLimits,
        access: Option<&crate::tools::Access>,
    ) -> Result<QueryResult, SqlError> {
        limits.check()?;
        let verdict = guard.check(sql);
        if !verdict.allowed {
            return Err(SqlError::refused(verdict.explanation()));
        }
        match self.query_read_only(sql, params, limits).await {
            Err(error) if error.is(SqlErrorKind::Query) => {
                let catalog = self.catalog().await.ok();
                let seen = catalog
                    .as_deref()
                    .map(|c| crate::tools::visible_catalog(c, access));
                let message = enrich::explain(
                    error.message(),
                    seen.as_deref(),
                    &verdict.tables,
                    &verdict.aliases,
                );
                Err(error.with_message(message))
            }
            other => other,
        }
    }

    /// Runs `sql` in the engine's read-only mode, **without the guard**: the engine alone must refuse writes,
    /// and still proves the text is one statement. For SQL built by code; SQL from a model goes through
    /// [`Database::query`].
    pub async fn query_read_only(
        &self,
        sql: &str,
        params: &[Param],
        limits: &QueryLimits,
    ) -> Result<QueryResult, SqlError> {
        let protocol = if params.is_empty() {
            Protocol::Text
        } else {
            Protocol::Prepared
        };
        self.run_read_only(sql, params, limits, protocol).await
    }

    /// [`Database::query_read_only`] as a prepared statement even without parameters: values in the stable
    /// renderings of the binary protocol (ISO dates, UTC timestamps) whatever the session's `DateStyle` or
    /// `TimeZone`, for code that reads the values it gets back.
    pub async fn query_prepared(
        &self,
        sql: &str,
        params: &[Param],
        limits: &QueryLimits,
    ) -> Result<QueryResult, SqlError> {
        self.run_read_only(sql, params, limits, Protocol::Prepared)
            .await
    }

    async fn run_read_only(
        &self,
        sql: &str,
        params: &[Param],
        limits: &QueryLimits,
        protocol: Protocol,
    ) -> Result<QueryResult, SqlError> {
        async move {
            limits.check()?;
            if sql.contains('\0') {
                return Err(SqlError::refused(
                    "The SQL contains a NUL byte; remove it.".to_owned(),
                ));
            }
            let run = async {
                match &self.pools {
                    Pools::Sqlite { read, .. } => sqlite::run(read, sql, params, limits).await,
                    Pools::Postgres { read, .. } => {
                        postgres::run(read, sql, params, limits, protocol).await
                    }
                    Pools::Mysql { read, .. } => {
                        mysql::run(read, self.is_mariadb(), sql, params, limits, protocol).await
                    }
                }
            };
            // The engines stop the statement themselves; this is the backstop. A query cut off here closes its
            // connection (see `Lease`).
            match tokio::time::timeout(limits.timeout.saturating_add(Duration::from_secs(2)), run)
                .await
            {
                Ok(result) => result,
                Err(_) => Err(SqlError::timeout(millis(limits.timeout))),
            }
        }
        .boxed()
        .await
    }
}

/// How a query travels: as text, exactly as the engine's own client would see it (only without parameters),
/// or as a prepared statement with binary values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// PostgreSQL's simple query protocol, MySQL's `COM_QUERY`, after the engine prepared the text once to
    /// prove it is one statement.
    Text,
    /// A prepared statement.
    Prepared,
}

pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// SQL text for sqlx, which wants to be told it was checked.
pub(crate) fn sql_str(sql: &str) -> sqlx::SqlStr {
    sqlx::SqlSafeStr::into_sql_str(sqlx::AssertSqlSafe(sql.to_owned()))
}
