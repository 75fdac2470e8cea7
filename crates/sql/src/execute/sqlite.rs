//! SQLite: a connection opened read-only, SQLite's own check that the text is one read-only statement, an
//! interrupt at the time limit, rows streamed up to the caps.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use sqlx::{AssertSqlSafe, SqlitePool};

use super::sqlite_check::{self, Shape};
use super::sqlite_rows::STEPS_PER_CHECK;
use super::{Collector, Drained, Lease, bind_all, db_error, decode, sql_str};
use crate::error::SqlError;
use crate::query::{Param, QueryLimits, QueryResult};

pub(super) async fn run(
    pool: &SqlitePool,
    sql: &str,
    params: &[Param],
    limits: &QueryLimits,
) -> Result<QueryResult, SqlError> {
    let mut lease = Lease::acquire(pool).await.map_err(db_error)?;
    let deadline = Instant::now().checked_add(limits.timeout);
    // Set when this future ends in any way, a cancellation included: the statement, which runs on sqlx's
    // worker thread, then stops at its next progress check instead of running on to the time limit.
    let stop = Stop::default();
    let refusal = {
        let mut handle = lease.lock_handle().await.map_err(db_error)?;
        let refusal = refusal(sqlite_check::shape(handle.as_raw_handle(), sql));
        if refusal.is_none() {
            let stopped = stop.0.clone();
            handle.set_progress_handler(STEPS_PER_CHECK, move || {
                !stopped.load(Ordering::Relaxed) && deadline.is_none_or(|d| Instant::now() < d)
            });
        }
        refusal
    };
    if let Some(refusal) = refusal {
        lease.release();
        return Err(refusal);
    }
    let mut collector = Collector::new(limits);
    let query = bind_all!(sqlx::query(AssertSqlSafe(sql.to_owned())), params);
    let drained = collector
        .drain(query.fetch(&mut *lease), decode::sqlite, false)
        .await;
    match drained {
        Ok(Drained::Complete) => {
            if collector.columns.is_empty()
                && let Ok(statement) = sqlx::Executor::prepare(&mut *lease, sql_str(sql)).await
            {
                collector.columns = super::columns_of(sqlx::Statement::columns(&statement));
            }
            let reset = match lease.lock_handle().await {
                Ok(mut handle) => {
                    handle.remove_progress_handler();
                    true
                }
                Err(_) => false,
            };
            if reset {
                lease.release();
            }
            Ok(collector.finish())
        }
        // Rows may remain: the connection is closed rather than reused.
        Ok(Drained::Stopped) => Ok(collector.finish()),
        Err(e) if e.to_string().contains("interrupted") => {
            Err(SqlError::timeout(super::millis(limits.timeout)))
        }
        Err(e) => Err(db_error(e)),
    }
}

/// Interrupts the statement when dropped.
#[derive(Default)]
struct Stop(Arc<AtomicBool>);

impl Drop for Stop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Why SQLite's own reading of the text stops it, if it does.
fn refusal(shape: Shape) -> Option<SqlError> {
    match shape {
        Shape::ReadOnly => None,
        Shape::Writes => Some(SqlError::refused(
            "SQLite reports that this statement changes the database; only reads may run."
                .to_owned(),
        )),
        Shape::Several(at) => Some(SqlError::refused(format!(
            "SQLite reads a second statement starting at byte {at}; send exactly one statement."
        ))),
        Shape::Empty => Some(SqlError::refused(
            "There is no SQL statement. Write one SELECT statement.".to_owned(),
        )),
        Shape::Error(message) => Some(super::sqlite_error(message)),
    }
}
