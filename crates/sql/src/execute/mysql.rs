//! MySQL and MariaDB: a read-only transaction on a read-only session with the engine's statement time limit;
//! SQL without parameters is first prepared (the server refuses to prepare more than one statement) and then
//! runs, the same text, through `COM_QUERY`, so every value comes back as text exactly as the `mariadb` client
//! prints it. SQL with bound parameters runs as a prepared statement.

use sqlx::{AssertSqlSafe, MySql, MySqlPool, Row as _};

use super::cancel::{Cancel, Target};
use super::read;
use super::{Collector, Drained, Lease, Protocol, db_error, decode, millis, mysql_number};
use crate::error::SqlError;
use crate::query::{Param, QueryLimits, QueryResult};

/// Error numbers of a statement stopped by its time limit (MariaDB, MySQL) or interrupted.
const TIMED_OUT: &[u16] = &[1969, 3024, 1317];
/// "This command is not supported in the prepared statement protocol yet".
const NOT_PREPARABLE: u16 = 1295;

pub(super) async fn run(
    pool: &MySqlPool,
    mariadb: bool,
    sql: &str,
    params: &[Param],
    limits: &QueryLimits,
    protocol: Protocol,
) -> Result<QueryResult, SqlError> {
    let mut lease = Lease::acquire(pool).await.map_err(db_error)?;
    let limit = if mariadb {
        format!(
            "SET SESSION max_statement_time = {:.3}",
            limits.timeout.as_secs_f64()
        )
    } else {
        format!(
            "SET SESSION max_execution_time = {}",
            millis(limits.timeout).max(1)
        )
    };
    // The session's id comes back in the same round trip, for a cancellation if this future is dropped
    // before the statement ends.
    let rows = sqlx::raw_sql(AssertSqlSafe(format!(
        "{limit}; START TRANSACTION READ ONLY; SELECT CONNECTION_ID()"
    )))
    .fetch_all(&mut *lease)
    .await
    .map_err(db_error)?;
    let cancel = Cancel::arm(
        rows.first()
            .and_then(|row| row.try_get::<u64, _>(0).ok())
            .map(|id| Target::Mysql {
                options: pool.connect_options(),
                id,
            }),
    );
    let result = in_transaction(lease, mariadb, sql, params, limits, protocol).await;
    cancel.disarm();
    result
}

/// The rest of a read, once its transaction is open.
async fn in_transaction(
    mut lease: Lease<MySql>,
    mariadb: bool,
    sql: &str,
    params: &[Param],
    limits: &QueryLimits,
    protocol: Protocol,
) -> Result<QueryResult, SqlError> {
    let proof = if read::text(params, protocol) {
        read::prove::<MySql>(&mut lease, sql, protocol).await
    } else {
        Ok(Vec::new())
    };
    let described = match proof {
        Ok(columns) => columns,
        Err(e) => {
            end(lease, mariadb).await;
            return Err(error(e, limits));
        }
    };
    let mut collector = Collector::new(limits);
    let drained = read::fetch::<MySql>(
        &mut lease,
        sql,
        params,
        protocol,
        described,
        &mut collector,
        decode::mysql,
    )
    .await;
    match drained {
        Ok(Drained::Complete) => {
            end(lease, mariadb).await;
            Ok(collector.finish())
        }
        // Rows may still be on their way: the connection is closed rather than drained.
        Ok(Drained::Stopped) => Ok(collector.finish()),
        Err(e) => {
            end(lease, mariadb).await;
            Err(error(e, limits))
        }
    }
}

/// Ends the transaction, lifts the time limit and gives the connection back; if that fails, the connection
/// is closed.
async fn end(mut lease: Lease<MySql>, mariadb: bool) {
    let reset = if mariadb {
        "ROLLBACK; SET SESSION max_statement_time = DEFAULT"
    } else {
        "ROLLBACK; SET SESSION max_execution_time = DEFAULT"
    };
    if sqlx::raw_sql(reset).execute(&mut *lease).await.is_ok() {
        lease.release();
    }
}

fn error(e: sqlx::Error, limits: &QueryLimits) -> SqlError {
    if let sqlx::Error::Database(db) = &e {
        let number = mysql_number(db.as_ref());
        if number.is_some_and(|n| TIMED_OUT.contains(&n)) {
            return SqlError::Timeout(millis(limits.timeout));
        }
        if number == Some(NOT_PREPARABLE) {
            return SqlError::Refused(
                "The server cannot check this statement with its own parser; write it as a plain SELECT."
                    .to_owned(),
            );
        }
    }
    db_error(e)
}
