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
//!   print it; SQL built by code with bound parameters uses prepared statements.
//! - **Nothing left behind**: a connection goes back to its pool only after its session was reset; a result cut
//!   short, an error, a time limit or a cancelled future close it instead (see `lease`).

pub(crate) mod decode;
mod lease;
mod mysql;
mod postgres;
mod sqlite;
mod sqlite_check;

use std::time::Duration;

use futures_util::TryStreamExt as _;
use futures_util::stream::BoxStream;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::TypeInfo as _;

use crate::database::{Database, Pools, one_line};
use crate::enrich;
use crate::error::SqlError;
use crate::guard::Guard;

pub use decode::cell_text;
pub(crate) use lease::Lease;

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

/// The largest row cap a query may ask for.
pub const MAX_ROWS: usize = 1_000_000;
/// The longest time limit a query may ask for.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

impl QueryLimits {
    /// Checks that the limits are usable: a row cap of 1 to 1,000,000, a byte cap of at least 1, a time
    /// limit of 1 ms to 24 h.
    pub fn check(&self) -> Result<(), SqlError> {
        if self.max_rows == 0 || self.max_rows > MAX_ROWS {
            return Err(SqlError::Limits(format!(
                "the row cap must be between 1 and {MAX_ROWS}, not {}",
                self.max_rows
            )));
        }
        if self.max_bytes == 0 {
            return Err(SqlError::Limits(
                "the byte cap must be at least 1".to_owned(),
            ));
        }
        if self.timeout < Duration::from_millis(1) || self.timeout > MAX_TIMEOUT {
            return Err(SqlError::Limits(format!(
                "the time limit must be between 1 ms and 24 h, not {:?}",
                self.timeout
            )));
        }
        Ok(())
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
    /// True when more rows existed than were returned, or a cell was cut to the byte cap.
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
        limits.check()?;
        let verdict = guard.check(sql);
        if !verdict.allowed {
            return Err(SqlError::Refused(verdict.explanation()));
        }
        match self.query_read_only(sql, params, limits).await {
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
        limits.check()?;
        if sql.contains('\0') {
            return Err(SqlError::Refused(
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
        match tokio::time::timeout(limits.timeout.saturating_add(Duration::from_secs(2)), run).await
        {
            Ok(result) => result,
            Err(_) => Err(SqlError::Timeout(millis(limits.timeout))),
        }
    }
}

/// How a query travels: as text, exactly as the engine's own client would see it (only without parameters),
/// or as a prepared statement with binary values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// PostgreSQL's simple query protocol, MySQL's `COM_QUERY`.
    Text,
    /// A prepared statement.
    Prepared,
}

pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A decoder: the cell at a column, given at most `max_len` bytes of text; true when the text was cut.
pub(crate) type Decode<R> = fn(&R, usize, usize) -> (Value, bool);

/// How a stream of rows ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Drained {
    /// Every row was read.
    Complete,
    /// The caps were reached; rows may remain unread and the connection must not be reused as is.
    Stopped,
}

/// Collects rows up to the caps.
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

    /// Reads rows from `rows` until they end or a cap is reached. The byte cap covers every cell, the first
    /// row's included: a cell is never copied beyond what is left of it.
    pub(crate) async fn drain<R>(
        &mut self,
        mut rows: BoxStream<'_, Result<R, sqlx::Error>>,
        decode: Decode<R>,
    ) -> Result<Drained, sqlx::Error>
    where
        R: sqlx::Row,
        usize: sqlx::ColumnIndex<R>,
    {
        while let Some(row) = rows.try_next().await? {
            if self.columns.is_empty() {
                self.columns = columns_of_row(&row);
            }
            if self.rows.len() >= self.limits.max_rows {
                self.truncated = true;
                return Ok(Drained::Stopped);
            }
            let mut cut = false;
            let mut cells = Vec::with_capacity(row.len());
            for i in 0..row.len() {
                let left = self.limits.max_bytes.saturating_sub(self.bytes);
                let (value, was_cut) = decode(&row, i, left);
                self.bytes = self
                    .bytes
                    .saturating_add(cell_len(&value).saturating_add(1));
                cut |= was_cut;
                cells.push(value);
            }
            if cut || self.bytes > self.limits.max_bytes {
                self.truncated = true;
                // A first row is shown cut rather than not at all.
                if self.rows.is_empty() {
                    self.rows.push(cells);
                }
                return Ok(Drained::Stopped);
            }
            self.rows.push(cells);
        }
        Ok(Drained::Complete)
    }

    pub(crate) fn finish(self) -> QueryResult {
        QueryResult {
            columns: self.columns,
            rows: self.rows,
            truncated: self.truncated,
        }
    }
}

/// The bytes a cell takes as text.
fn cell_len(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len(),
        Value::Null => 4,
        other => other.to_string().len(),
    }
}

/// The columns of a result's first row. Where the engine gives no column type (SQLite for expressions and for
/// declared types it does not map, such as NUMERIC), the first value's own type stands in for it.
pub(crate) fn columns_of_row<R: sqlx::Row>(row: &R) -> Vec<ResultColumn>
where
    usize: sqlx::ColumnIndex<R>,
{
    use sqlx::{Column, ValueRef};
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

/// The columns a prepared statement describes (for results without rows).
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

/// What kind of failure an engine error is.
pub(crate) fn db_error(e: sqlx::Error) -> SqlError {
    match &e {
        sqlx::Error::Database(db) => {
            let message = engine_message(db.message());
            let number = mysql_number(db.as_ref());
            match classify(db.code().as_deref(), number, &message) {
                Kind::Input => SqlError::Invalid(message),
                Kind::Outage => SqlError::Unavailable(message),
                Kind::Statement => SqlError::Query(message),
            }
        }
        sqlx::Error::Encode(_) => SqlError::Invalid(one_line(&e.to_string())),
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => SqlError::Unavailable(one_line(&e.to_string())),
        _ => SqlError::Query(engine_message(&one_line(&e.to_string()))),
    }
}

enum Kind {
    /// The statement was wrong (syntax, names, permissions, read-only).
    Statement,
    /// A value was wrong (overflow, out of range, bad encoding, bad date).
    Input,
    /// The database could not be used (connection lost, shutting down, out of resources).
    Outage,
}

/// The MySQL/MariaDB error number of an engine error.
pub(crate) fn mysql_number(db: &dyn sqlx::error::DatabaseError) -> Option<u16> {
    db.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>()
        .map(sqlx::mysql::MySqlDatabaseError::number)
}

/// Sorts an engine error by its SQLSTATE (PostgreSQL and MySQL), its MySQL error number, or its message.
fn classify(sqlstate: Option<&str>, number: Option<u16>, message: &str) -> Kind {
    // MySQL/MariaDB numbers for bad values and lost servers whose SQLSTATE is the generic HY000.
    match number {
        Some(
            1264 | 1265 | 1292 | 1365 | 1366 | 1367 | 1406 | 1411 | 1441 | 1690 | 3140 | 3141
            | 4025 | 4078,
        ) => {
            return Kind::Input;
        }
        Some(1040 | 1053 | 1205 | 2002 | 2006 | 2013) => return Kind::Outage,
        _ => {}
    }
    // SQLSTATE classes: 22 is a data exception; 08 a connection exception; 53, 57P0x and 58 are resources,
    // shutdowns and system errors.
    let code = sqlstate.unwrap_or("");
    if code.len() == 5 && code.is_ascii() {
        match code.get(..2) {
            Some("22") => return Kind::Input,
            Some("08" | "53" | "58") => return Kind::Outage,
            Some("57") if code.starts_with("57P0") => return Kind::Outage,
            _ => {}
        }
    }
    // SQLite: codes are primary result codes; messages tell the kind.
    let lower = message.to_ascii_lowercase();
    if [
        "integer overflow",
        "too big",
        "out of range",
        "datatype mismatch",
        "invalid utf",
        "malformed json",
    ]
    .iter()
    .any(|m| lower.contains(m))
    {
        return Kind::Input;
    }
    if [
        "disk i/o error",
        "unable to open database",
        "database disk image is malformed",
        "out of memory",
    ]
    .iter()
    .any(|m| lower.contains(m))
    {
        return Kind::Outage;
    }
    Kind::Statement
}

/// An engine's message without the driver's prefixes: `error returned from database: `, SQLite's
/// `(code: 1) `, MySQL's `1054 (42S22): `.
fn engine_message(text: &str) -> String {
    let text = one_line(text);
    let text = text.trim_start_matches("error returned from database: ");
    let text = match text.strip_prefix("(code: ") {
        Some(rest) => rest.split_once(") ").map_or(rest, |(_, m)| m),
        None => text,
    };
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
    text.to_owned()
}

/// A SQLite error message, sorted like the others.
pub(crate) fn sqlite_error(message: String) -> SqlError {
    match classify(None, None, &message) {
        Kind::Input => SqlError::Invalid(message),
        Kind::Outage => SqlError::Unavailable(message),
        Kind::Statement => SqlError::Query(message),
    }
}

/// SQL text for sqlx, which wants to be told it was checked.
pub(crate) fn sql_str(sql: &str) -> sqlx::SqlStr {
    sqlx::SqlSafeStr::into_sql_str(sqlx::AssertSqlSafe(sql.to_owned()))
}
