//! PostgreSQL: a read-only transaction with `statement_timeout` on a read-only session; SQL without
//! parameters is first prepared (a prepared statement holds exactly one statement: PostgreSQL refuses more)
//! and then runs, the same text, through the simple query protocol, so every value comes back as text exactly
//! as `psql` prints it. SQL with bound parameters runs as a prepared statement.

use sqlx::{AssertSqlSafe, PgPool, Postgres, Row as _};

use super::cancel::{Cancel, Target};
use super::read;
use super::{Collector, Drained, Lease, Protocol, db_error, decode, millis};
use crate::error::SqlError;
use crate::query::{Param, QueryLimits, QueryResult};

/// SQLSTATE of a statement cancelled by `statement_timeout`.
const CANCELED: &str = "57014";

pub(super) async fn run(
    pool: &PgPool,
    sql: &str,
    params: &[Param],
    limits: &QueryLimits,
    protocol: Protocol,
) -> Result<QueryResult, SqlError> {
    let mut lease = Lease::acquire(pool).await.map_err(db_error)?;
    // The session's backend pid comes back in the same round trip, for a cancellation if this future is
    // dropped before the statement ends.
    let begin = format!(
        "BEGIN TRANSACTION READ ONLY; SET LOCAL statement_timeout = {}; SELECT pg_backend_pid()",
        millis(limits.timeout).max(1)
    );
    let rows = sqlx::raw_sql(AssertSqlSafe(begin))
        .fetch_all(&mut *lease)
        .await
        .map_err(db_error)?;
    let cancel = Cancel::arm(
        rows.first()
            .and_then(|row| row.try_get::<i32, _>(0).ok())
            .map(|pid| Target::Postgres {
                options: pool.connect_options(),
                pid,
            }),
    );
    let result = in_transaction(lease, sql, params, limits, protocol).await;
    cancel.disarm();
    result
}

/// The rest of a read, once its transaction is open.
async fn in_transaction(
    mut lease: Lease<Postgres>,
    sql: &str,
    params: &[Param],
    limits: &QueryLimits,
    protocol: Protocol,
) -> Result<QueryResult, SqlError> {
    let proof = if read::text(params, protocol) {
        read::prove::<Postgres>(&mut lease, sql, protocol).await
    } else {
        Ok(Vec::new())
    };
    let described = match proof {
        Ok(columns) => columns,
        // The server parsed it, but the driver could not describe a result type (sqlx 0.9 knows no
        // multiranges): PostgreSQL's own list of this session's prepared statements is the proof that it took
        // the text as one statement.
        Err(e) if !matches!(e, sqlx::Error::Database(_)) && prepared(&mut lease, sql).await => {
            Vec::new()
        }
        Err(e) => {
            end(lease, false).await;
            return Err(error(e, limits));
        }
    };
    let mut collector = Collector::new(limits);
    let drained = read::fetch::<Postgres>(
        &mut lease,
        sql,
        params,
        protocol,
        described,
        &mut collector,
        decode::postgres,
    )
    .await;
    match drained {
        Ok(Drained::Complete) => {
            end(lease, collector.large()).await;
            Ok(collector.finish())
        }
        // Rows may still be on their way: the connection is closed rather than drained.
        Ok(Drained::Stopped) => Ok(collector.finish()),
        Err(e) => {
            end(lease, collector.large()).await;
            Err(error(e, limits))
        }
    }
}

/// Whether this session holds a prepared statement of exactly `sql` (PostgreSQL keeps a statement only when
/// its text is one statement).
async fn prepared(lease: &mut Lease<Postgres>, sql: &str) -> bool {
    sqlx::query_scalar::<_, bool>(
        "SELECT EXISTS (SELECT 1 FROM pg_prepared_statements WHERE statement = $1)",
    )
    .bind(sql)
    .fetch_one(&mut **lease)
    .await
    .unwrap_or(false)
}

/// Ends the transaction and gives the connection back; if that fails, the connection is closed. After a
/// `large` result the connection is closed instead (see [`super::Collector::large`]).
async fn end(mut lease: Lease<Postgres>, large: bool) {
    if large {
        return;
    }
    if sqlx::raw_sql("ROLLBACK").execute(&mut *lease).await.is_ok() {
        lease.release();
    }
}

fn error(e: sqlx::Error, limits: &QueryLimits) -> SqlError {
    if let sqlx::Error::Database(db) = &e {
        if db.code().as_deref() == Some(CANCELED) {
            return SqlError::timeout(millis(limits.timeout));
        }
        if db
            .message()
            .contains("cannot insert multiple commands into a prepared statement")
        {
            return SqlError::refused(
                "PostgreSQL reads more than one statement here; send exactly one statement."
                    .to_owned(),
            );
        }
    }
    db_error(e)
}
