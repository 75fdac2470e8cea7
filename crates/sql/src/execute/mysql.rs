//! MySQL and MariaDB: a read-only transaction on a read-only session with the engine's statement time limit;
//! SQL without parameters is first prepared (the server refuses to prepare more than one statement) and then
//! runs, the same text, through `COM_QUERY`, so every value comes back as text exactly as the `mariadb` client
//! prints it. SQL with bound parameters runs as a prepared statement.
//!
//! One exception to the text protocol: sqlx 0.9 takes a text-protocol row whose first cell is 16 MiB or longer
//! for the end of the result (the cell's length prefix starts with `0xFE`, the byte of an EOF packet), so the
//! rest of the result is lost without an error, or the read waits for the time limit. When the first column
//! can hold such a value (a `TEXT`, `BLOB`, `JSON` or `GEOMETRY` type: the driver does not say how long) and the
//! server's `max_allowed_packet` lets one through, the query runs as a prepared statement instead, whose rows
//! start with `0x00`; its values are then rendered from the binary protocol (see `decode`).

use sqlx::{AssertSqlSafe, MySql, MySqlPool, Row as _};

use super::cancel::{Cancel, Target};
use super::read;
use super::{Collector, Drained, Lease, Protocol, db_error, decode, millis, mysql_number};
use crate::error::SqlError;
use crate::query::{Param, QueryLimits, QueryResult, ResultColumn};

/// Error numbers of a statement stopped by its time limit (MariaDB, MySQL) or interrupted.
const TIMED_OUT: &[u16] = &[1969, 3024, 1317];
/// "This command is not supported in the prepared statement protocol yet".
const NOT_PREPARABLE: u16 = 1295;
/// The shortest cell whose length prefix is `0xFE` (an 8-byte length): 2^24 bytes.
const HUGE_CELL: u64 = 1 << 24;
/// The column types (as sqlx names them) that can hold a value of [`HUGE_CELL`] bytes. MySQL and MariaDB send
/// every `TEXT` and `BLOB` column of a table as `TEXT`/`BLOB` whatever its size; expressions have `LONGTEXT`
/// and `LONGBLOB`.
const HUGE_TYPES: &[&str] = &["TEXT", "BLOB", "LONGTEXT", "LONGBLOB", "JSON", "GEOMETRY"];

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
    // before the statement ends, with the largest packet the server sends (see `text_is_safe`).
    let rows = sqlx::raw_sql(AssertSqlSafe(format!(
        "{limit}; START TRANSACTION READ ONLY; SELECT CONNECTION_ID(), @@max_allowed_packet"
    )))
    .fetch_all(&mut *lease)
    .await
    .map_err(db_error)?;
    let first = rows.first();
    let cancel = Cancel::arm(
        first
            .and_then(|row| row.try_get::<u64, _>(0).ok())
            .map(|id| Target::Mysql {
                options: pool.connect_options(),
                id,
            }),
    );
    // Unknown: as if any size could come back.
    let max_packet = first
        .and_then(|row| row.try_get::<u64, _>(1).ok())
        .unwrap_or(u64::MAX);
    let result = in_transaction(lease, mariadb, sql, params, limits, protocol, max_packet).await;
    cancel.disarm();
    result
}

/// The rest of a read, once its transaction is open; `max_packet` is the server's `max_allowed_packet`.
async fn in_transaction(
    mut lease: Lease<MySql>,
    mariadb: bool,
    sql: &str,
    params: &[Param],
    limits: &QueryLimits,
    protocol: Protocol,
    max_packet: u64,
) -> Result<QueryResult, SqlError> {
    let proof = if read::text(params, protocol) {
        read::prove::<MySql>(&mut lease, sql, protocol).await
    } else {
        Ok(Vec::new())
    };
    let described = match proof {
        Ok(columns) => columns,
        Err(e) => {
            end(lease, mariadb, false).await;
            return Err(error(e, limits));
        }
    };
    let protocol = if read::text(params, protocol) && !text_is_safe(&described, max_packet) {
        Protocol::Prepared
    } else {
        protocol
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
            end(lease, mariadb, collector.large()).await;
            Ok(collector.finish())
        }
        // Rows may still be on their way: the connection is closed rather than drained.
        Ok(Drained::Stopped) => Ok(collector.finish()),
        Err(e) => {
            end(lease, mariadb, collector.large()).await;
            Err(error(e, limits))
        }
    }
}

/// Whether the text protocol reads every row of a result with columns `described` (see the module's
/// documentation): false when its first column can hold a value of [`HUGE_CELL`] bytes or more and the server
/// sends packets that large.
fn text_is_safe(described: &[ResultColumn], max_packet: u64) -> bool {
    max_packet < HUGE_CELL
        || described
            .first()
            .is_none_or(|c| !HUGE_TYPES.contains(&c.type_name.as_str()))
}

/// Ends the transaction, lifts the time limit and gives the connection back; if that fails, the connection
/// is closed. After a `large` result the connection is closed instead (see [`super::Collector::large`]).
async fn end(mut lease: Lease<MySql>, mariadb: bool, large: bool) {
    if large {
        return;
    }
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
            return SqlError::timeout(millis(limits.timeout));
        }
        if number == Some(NOT_PREPARABLE) {
            return SqlError::refused(
                "The server cannot check this statement with its own parser; write it as a plain SELECT."
                    .to_owned(),
            );
        }
    }
    db_error(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns(types: &[&str]) -> Vec<ResultColumn> {
        types
            .iter()
            .map(|t| ResultColumn {
                name: "c".to_owned(),
                type_name: (*t).to_owned(),
            })
            .collect()
    }

    #[test]
    fn a_first_column_that_can_hold_16_mib_leaves_the_text_protocol() {
        let sixteen = 16 * 1024 * 1024;
        assert!(!text_is_safe(&columns(&["TEXT", "INT"]), sixteen));
        assert!(!text_is_safe(&columns(&["LONGTEXT"]), 64 * 1024 * 1024));
        assert!(!text_is_safe(&columns(&["BLOB"]), u64::MAX));
        // Later columns do not matter: only the first cell's length prefix opens a row packet.
        assert!(text_is_safe(&columns(&["INT", "LONGTEXT"]), sixteen));
        assert!(text_is_safe(&columns(&["VARCHAR"]), sixteen));
        assert!(text_is_safe(&columns(&["MEDIUMTEXT"]), sixteen));
        // A server that sends no packet of 16 MiB sends no such cell.
        assert!(text_is_safe(&columns(&["LONGTEXT"]), sixteen - 1));
        assert!(text_is_safe(&[], sixteen));
    }
}
