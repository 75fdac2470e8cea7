//! The middle of a read on PostgreSQL and MySQL/MariaDB, the same for both: the engine's proof that a text is
//! one statement, then its rows through the text protocol; or a prepared statement with bound parameters.

use sqlx::AssertSqlSafe;

use super::collect::Decode;
use super::{Collector, Drained, Protocol, bind::Bind, columns_of, sql_str};
use crate::query::{Param, ResultColumn};

/// The engine prepares `sql` once — a prepared statement holds exactly one statement, so more is an error —
/// and describes its columns.
pub(super) async fn prove<DB>(
    conn: &mut DB::Connection,
    sql: &str,
    protocol: Protocol,
) -> Result<Vec<ResultColumn>, sqlx::Error>
where
    DB: sqlx::Database,
    for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
{
    if protocol != Protocol::Text {
        return Ok(Vec::new());
    }
    let statement = sqlx::Executor::prepare(&mut *conn, sql_str(sql)).await?;
    Ok(columns_of(sqlx::Statement::columns(&statement)))
}

/// Reads the rows of `sql` into `collector`: through the text protocol when there are no parameters and the
/// protocol allows it (`described` are the columns the proof found, for a result without rows), else as a
/// prepared statement.
pub(super) async fn fetch<DB>(
    conn: &mut DB::Connection,
    sql: &str,
    params: &[Param],
    protocol: Protocol,
    described: Vec<ResultColumn>,
    collector: &mut Collector<'_>,
    decode: Decode<DB::Row>,
) -> Result<Drained, sqlx::Error>
where
    DB: sqlx::Database,
    for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
    for<'q> sqlx::query::Query<'q, DB, DB::Arguments>: Bind,
    DB::Arguments: sqlx::IntoArguments<DB>,
    usize: sqlx::ColumnIndex<DB::Row>,
{
    if text(params, protocol) {
        let drained = collector
            .drain(
                sqlx::raw_sql(AssertSqlSafe(sql.to_owned())).fetch(&mut *conn),
                decode,
                true,
            )
            .await;
        if collector.columns.is_empty() {
            collector.columns = described;
        }
        return drained;
    }
    let mut query = sqlx::query::<DB>(AssertSqlSafe(sql.to_owned()));
    for param in params {
        query = query.bind_param(param);
    }
    let drained = collector.drain(query.fetch(&mut *conn), decode, true).await;
    if collector.columns.is_empty()
        && drained.is_ok()
        && let Ok(statement) = sqlx::Executor::prepare(&mut *conn, sql_str(sql)).await
    {
        collector.columns = columns_of(sqlx::Statement::columns(&statement));
    }
    drained
}

/// Whether the text protocol is used: no parameters, and not asked for a prepared statement.
pub(super) fn text(params: &[Param], protocol: Protocol) -> bool {
    params.is_empty() && protocol != Protocol::Prepared
}
