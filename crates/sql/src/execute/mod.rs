//! Running SQL read-only: the guard first, then the engine's own read-only mode (PostgreSQL: a read-only
//! transaction with `statement_timeout`; MySQL/MariaDB: `START TRANSACTION READ ONLY` with the engine's
//! statement time limit; SQLite: a connection opened read-only, `query_only`, and an interrupt at the time limit),
//! so that the engine alone also stops a write. Rows stream with a row cap and a byte cap.

pub(crate) mod decode;
mod limit;

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::TypeInfo as _;

use crate::database::{Database, Pools, one_line};
use crate::enrich;
use crate::error::SqlError;
use crate::guard::Guard;

pub use decode::cell_text;

/// How much a query may return and how long it may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryLimits {
    /// Most rows returned.
    pub max_rows: usize,
    /// Most bytes of rendered cells returned.
    pub max_bytes: usize,
    /// Longest run time.
    pub timeout: Duration,
}

impl Default for QueryLimits {
    fn default() -> Self {
        Self {
            max_rows: 100,
            max_bytes: 1_000_000,
            timeout: Duration::from_secs(30),
        }
    }
}

/// A result column.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultColumn {
    /// Its name.
    pub name: String,
    /// The engine's type name.
    pub type_name: String,
}

/// The rows of a query.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueryResult {
    /// The columns.
    pub columns: Vec<ResultColumn>,
    /// The rows, each cell a JSON value (exact decimals as strings).
    pub rows: Vec<Vec<Value>>,
    /// True when more rows existed than were returned.
    pub truncated: bool,
}

/// A parameter bound to a query.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Param {
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// An exact decimal (money): bound as `NUMERIC`/`DECIMAL`; as text on SQLite, which has no decimal type
    /// and applies the column's affinity.
    Decimal(bigdecimal::BigDecimal),
    /// Text.
    Text(String),
    /// A boolean.
    Bool(bool),
    /// A date.
    Date(chrono::NaiveDate),
    /// A date and time without time zone.
    Timestamp(chrono::NaiveDateTime),
    /// A text NULL.
    Null,
    /// An integer NULL (PostgreSQL wants NULLs typed like their column).
    NullInt,
    /// A date NULL.
    NullDate,
}

/// Longest cell shown to the model, in characters.
const MAX_CELL: usize = 200;

impl QueryResult {
    /// The rows as a compact text table for a model.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let names: Vec<&str> = self.columns.iter().map(|c| c.name.as_str()).collect();
        out.push_str(&names.join(" | "));
        for row in &self.rows {
            out.push('\n');
            let cells: Vec<String> = row.iter().map(|v| short(&cell_text(v))).collect();
            out.push_str(&cells.join(" | "));
        }
        let n = self.rows.len();
        out.push_str(&if self.truncated {
            format!("\n({n} rows shown; more exist: add filters, aggregate, or ask for fewer rows)")
        } else {
            format!("\n({n} row{})", if n == 1 { "" } else { "s" })
        });
        out
    }
}

fn short(text: &str) -> String {
    let flat = text.replace(['\n', '\r'], " ");
    if flat.chars().count() <= MAX_CELL {
        flat
    } else {
        let head: String = flat.chars().take(MAX_CELL).collect();
        format!("{head}…")
    }
}

impl Database {
    /// Checks `sql` with the guard, then runs it read-only; database errors are enriched for the model.
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
        let verdict = guard.check(sql);
        if !verdict.allowed {
            return Err(SqlError::Refused(verdict.explanation()));
        }
        let capped = guard
            .parse_one(sql)
            .and_then(|statement| limit::cap(statement, limits.max_rows + 1));
        let result = self
            .query_read_only(capped.as_deref().unwrap_or(sql), params, limits)
            .await;
        match result {
            Err(SqlError::Query(message)) => {
                let catalog = self.catalog().await.ok();
                Err(SqlError::Query(enrich::explain(
                    &message,
                    catalog.as_deref(),
                    &verdict.tables,
                    &verdict.aliases,
                )))
            }
            other => other,
        }
    }

    /// Runs `sql` in the engine's read-only mode, **without the guard**: the engine alone must refuse writes.
    /// For SQL built by code (with bound parameters); SQL from a model goes through [`Database::query`].
    pub async fn query_read_only(
        &self,
        sql: &str,
        params: &[Param],
        limits: &QueryLimits,
    ) -> Result<QueryResult, SqlError> {
        let deadline = limits.timeout;
        let run = async {
            match &self.pools {
                Pools::Sqlite { read, memory, .. } => {
                    sqlite(read, *memory, sql, params, limits).await
                }
                Pools::Postgres(pool) => postgres(pool, sql, params, limits).await,
                Pools::Mysql(pool) => mysql(pool, self.is_mariadb(), sql, params, limits).await,
            }
        };
        // The engines stop the statement themselves; this is the backstop.
        match tokio::time::timeout(deadline + Duration::from_secs(2), run).await {
            Ok(result) => result,
            Err(_) => Err(SqlError::Timeout(millis(deadline))),
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Collects rows up to the caps; `decode` turns one row into cells.
pub(crate) struct Collector<'a> {
    limits: &'a QueryLimits,
    pub(crate) columns: Vec<ResultColumn>,
    rows: Vec<Vec<Value>>,
    bytes: usize,
    truncated: bool,
}

impl<'a> Collector<'a> {
    pub(crate) fn new(limits: &'a QueryLimits) -> Self {
        Self {
            limits,
            columns: Vec::new(),
            rows: Vec::new(),
            bytes: 0,
            truncated: false,
        }
    }

    /// Bytes of the byte cap still free for the cells of the next row.
    pub(crate) fn room(&self) -> usize {
        self.limits.max_bytes.saturating_sub(self.bytes)
    }

    /// Adds a row whose cells were cut to [`Collector::room`] (`cut` when one was); false when the caps are
    /// reached and reading should stop. The first row is kept even when cut; a later row that does not fit whole
    /// is left out.
    pub(crate) fn push(&mut self, cells: Vec<Value>, cut: bool) -> bool {
        if self.rows.len() >= self.limits.max_rows {
            self.truncated = true;
            return false;
        }
        self.bytes += cells
            .iter()
            .map(|c| decode::rendered_len(c) + 1)
            .sum::<usize>();
        let over = cut || self.bytes > self.limits.max_bytes;
        if over && !self.rows.is_empty() {
            self.truncated = true;
            return false;
        }
        self.rows.push(cells);
        if over {
            self.truncated = true;
            return false;
        }
        true
    }

    pub(crate) fn finish(self) -> QueryResult {
        QueryResult {
            columns: self.columns,
            rows: self.rows,
            truncated: self.truncated,
        }
    }
}

/// The columns of a result's first row. Where the engine gives no column type (SQLite for expressions and for
/// declared types it does not map, such as NUMERIC), the first value's own type stands in for it.
pub(crate) fn columns_of_row<R: sqlx::Row>(row: &R) -> Vec<ResultColumn>
where
    usize: sqlx::ColumnIndex<R>,
{
    use sqlx::{Column, TypeInfo, ValueRef};
    row.columns()
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let declared = c.type_info();
            let type_name = match row.try_get_raw(i) {
                Ok(value) if declared.is_null() && !value.is_null() => {
                    value.type_info().name().to_owned()
                }
                _ => declared.name().to_owned(),
            };
            ResultColumn {
                name: c.name().to_owned(),
                type_name,
            }
        })
        .collect()
}

pub(crate) fn columns_of<C: sqlx::Column>(columns: &[C]) -> Vec<ResultColumn> {
    columns
        .iter()
        .map(|c| ResultColumn {
            name: c.name().to_owned(),
            type_name: c.type_info().name().to_owned(),
        })
        .collect()
}

macro_rules! bind_all {
    ($query:expr, $params:expr) => {{
        let mut q = $query;
        for p in $params {
            q = $crate::execute::Bind::bind_param(q, p);
        }
        q
    }};
}
pub(crate) use bind_all;

/// A query that takes a [`Param`] in each engine's own way.
pub(crate) trait Bind: Sized {
    /// The query with `param` bound to its next placeholder.
    fn bind_param(self, param: &Param) -> Self;
}

macro_rules! bind_common {
    ($q:expr, $p:expr, $decimal:expr) => {
        match $p {
            Param::Int(v) => $q.bind(*v),
            Param::Float(v) => $q.bind(*v),
            Param::Decimal(v) => $decimal($q, v),
            Param::Text(v) => $q.bind(v.clone()),
            Param::Bool(v) => $q.bind(*v),
            Param::Date(v) => $q.bind(*v),
            Param::Timestamp(v) => $q.bind(*v),
            Param::Null => $q.bind(None::<String>),
            Param::NullInt => $q.bind(None::<i64>),
            Param::NullDate => $q.bind(None::<chrono::NaiveDate>),
        }
    };
}

type Query<'q, DB> = sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments>;

impl Bind for Query<'_, sqlx::Sqlite> {
    fn bind_param(self, param: &Param) -> Self {
        bind_common!(self, param, |q: Self, v: &bigdecimal::BigDecimal| q
            .bind(v.to_string()))
    }
}

impl Bind for Query<'_, sqlx::Postgres> {
    fn bind_param(self, param: &Param) -> Self {
        bind_common!(self, param, |q: Self, v: &bigdecimal::BigDecimal| q
            .bind(v.clone()))
    }
}

impl Bind for Query<'_, sqlx::MySql> {
    fn bind_param(self, param: &Param) -> Self {
        bind_common!(self, param, |q: Self, v: &bigdecimal::BigDecimal| q
            .bind(v.clone()))
    }
}

/// Streams the rows of `$sql` on the connection `$conn` (an expression giving `&mut` connection, evaluated
/// each time it is used) into `$collector`, stopping at its caps; an empty result gets its column names from the
/// prepared statement. Evaluates to the stream's `Result<(), sqlx::Error>`.
macro_rules! collect_rows {
    ($conn:expr, $sql:expr, $params:expr, $decode:path, $collector:expr) => {{
        let outcome: Result<(), sqlx::Error> = async {
            let query = $crate::execute::bind_all!(
                sqlx::query(sqlx::AssertSqlSafe($sql.to_owned())),
                $params
            );
            let mut rows = query.fetch($conn);
            while let Some(row) = futures_util::TryStreamExt::try_next(&mut rows).await? {
                if $collector.columns.is_empty() {
                    $collector.columns = $crate::execute::columns_of_row(&row);
                }
                let (mut room, mut cut) = ($collector.room(), false);
                let mut cells = Vec::with_capacity(sqlx::Row::len(&row));
                for i in 0..sqlx::Row::len(&row) {
                    let (cell, cell_cut) = $decode(&row, i, room);
                    room = room.saturating_sub($crate::execute::decode::rendered_len(&cell) + 1);
                    cut |= cell_cut;
                    cells.push(cell);
                }
                if !$collector.push(cells, cut) {
                    break;
                }
            }
            Ok(())
        }
        .await;
        if $collector.columns.is_empty()
            && outcome.is_ok()
            && let Ok(described) = sqlx::Executor::prepare(
                $conn,
                sqlx::SqlSafeStr::into_sql_str(sqlx::AssertSqlSafe($sql.to_owned())),
            )
            .await
        {
            $collector.columns = $crate::execute::columns_of(sqlx::Statement::columns(&described));
        }
        outcome
    }};
}
pub(crate) use collect_rows;

pub(crate) fn db_error(e: sqlx::Error) -> SqlError {
    let text = one_line(&e.to_string());
    let text = text.trim_start_matches("error returned from database: ");
    // SQLite messages come as `(code: 1) no such column: x`.
    let text = match text.strip_prefix("(code: ") {
        Some(rest) => rest.split_once(") ").map_or(rest, |(_, m)| m),
        None => text,
    };
    // MySQL messages come as `1054 (42S22): Unknown column …`.
    let text = match text.split_once("): ") {
        Some((code, m))
            if code
                .split(' ')
                .next()
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) =>
        {
            m
        }
        _ => text,
    };
    SqlError::Query(text.to_owned())
}

async fn sqlite(
    pool: &sqlx::SqlitePool,
    shared: bool,
    sql: &str,
    params: &[Param],
    limits: &QueryLimits,
) -> Result<QueryResult, SqlError> {
    let mut conn = pool.acquire().await.map_err(db_error)?;
    sqlx::query("PRAGMA query_only = ON")
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    let deadline = Instant::now() + limits.timeout;
    conn.lock_handle()
        .await
        .map_err(db_error)?
        .set_progress_handler(10_000, move || Instant::now() < deadline);
    let mut collector = Collector::new(limits);
    let outcome = collect_rows!(&mut *conn, sql, params, decode::sqlite, collector);
    if shared {
        // The same connection also writes (an in-memory database): give it back writable.
        let _ = sqlx::query("PRAGMA query_only = OFF")
            .execute(&mut *conn)
            .await;
    }
    match outcome {
        Ok(()) => Ok(collector.finish()),
        Err(e) if e.to_string().contains("interrupted") => {
            Err(SqlError::Timeout(millis(limits.timeout)))
        }
        Err(e) => Err(db_error(e)),
    }
}

async fn postgres(
    pool: &sqlx::PgPool,
    sql: &str,
    params: &[Param],
    limits: &QueryLimits,
) -> Result<QueryResult, SqlError> {
    let mut tx = pool.begin().await.map_err(db_error)?;
    sqlx::query("SET TRANSACTION READ ONLY")
        .execute(&mut *tx)
        .await
        .map_err(db_error)?;
    let timeout = format!(
        "SET LOCAL statement_timeout = {}",
        millis(limits.timeout).max(1)
    );
    sqlx::query(sqlx::AssertSqlSafe(timeout))
        .execute(&mut *tx)
        .await
        .map_err(db_error)?;
    let mut collector = Collector::new(limits);
    let outcome = collect_rows!(&mut *tx, sql, params, decode::postgres, collector);
    let _ = tx.rollback().await;
    match outcome {
        Ok(()) => Ok(collector.finish()),
        Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some("57014") => {
            Err(SqlError::Timeout(millis(limits.timeout)))
        }
        Err(e) => Err(db_error(e)),
    }
}

async fn mysql(
    pool: &sqlx::MySqlPool,
    mariadb: bool,
    sql: &str,
    params: &[Param],
    limits: &QueryLimits,
) -> Result<QueryResult, SqlError> {
    let mut conn = pool.acquire().await.map_err(db_error)?;
    let (set, reset) = if mariadb {
        (
            format!(
                "SET SESSION max_statement_time = {:.3}",
                limits.timeout.as_secs_f64()
            ),
            "SET SESSION max_statement_time = 0",
        )
    } else {
        (
            format!(
                "SET SESSION max_execution_time = {}",
                millis(limits.timeout)
            ),
            "SET SESSION max_execution_time = 0",
        )
    };
    sqlx::query(sqlx::AssertSqlSafe(set))
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    sqlx::query("START TRANSACTION READ ONLY")
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    let mut collector = Collector::new(limits);
    let outcome = collect_rows!(&mut *conn, sql, params, decode::mysql, collector);
    let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
    let _ = sqlx::query(sqlx::AssertSqlSafe(reset))
        .execute(&mut *conn)
        .await;
    match outcome {
        Ok(()) => Ok(collector.finish()),
        Err(sqlx::Error::Database(e))
            if matches!(e.code().as_deref(), Some("HY000" | "70100"))
                && e.message().contains("interrupted") =>
        {
            Err(SqlError::Timeout(millis(limits.timeout)))
        }
        Err(e)
            if e.to_string().contains("max_statement_time")
                || e.to_string().contains("maximum statement execution time") =>
        {
            Err(SqlError::Timeout(millis(limits.timeout)))
        }
        Err(e) => Err(db_error(e)),
    }
}
