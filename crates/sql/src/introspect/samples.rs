//! Sample values: up to five distinct values per column (binary columns excepted), from the first 200 rows of
//! each table.
//!
//! Tables are read in batches of up to [`BATCH_TABLES`] statements
//! `SELECT <table number>, <columns> FROM <table> LIMIT 200`. On a server a batch is one round trip, each
//! statement with its own result and column types, so every value is decoded exactly as a query of that table
//! alone would give it; a batch that fails (a table that cannot be read, a time limit) is read again one table at
//! a time, so one bad table costs only its own samples. On SQLite each statement is stepped on the locked
//! connection itself and its cells decoded in place by the same decoder (see `execute::sqlite_rows`), one table
//! at a time, each with its own time limit. Rows are streamed into the samples, never held.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures_util::{StreamExt as _, TryStreamExt as _};
use serde_json::Value;
use sqlx::AssertSqlSafe;

use crate::catalog::{Catalog, MAX_SAMPLES, TableKind, cut_sample, is_binary};
use crate::database::{Database, Pools};
use crate::execute::{Lease, decode, sqlite_rows};
use crate::query::cell_text;

/// Rows read per table to find samples.
const ROWS_READ: usize = 200;
/// Most bytes of cell text read per table (cells beyond are not read, as with any capped query).
const MAX_BYTES: usize = 4_000_000;
/// Time limit per table.
const TIMEOUT: Duration = Duration::from_secs(2);
/// Most tables per round trip.
const BATCH_TABLES: usize = 50;
/// Most columns per round trip (a batch of wide tables holds fewer tables).
const BATCH_COLUMNS: usize = 1_000;
/// Batches read at once on a server. SQLite reads one at a time: each further connection parses the whole
/// schema again when it opens (~0.25 s and tens of MB for 10,000 tables), which costs more than it saves.
const CONCURRENCY: usize = 4;

/// One table to sample: its index in the catalog, the columns read (by index) and its statement.
struct Job {
    table: usize,
    columns: Vec<usize>,
    sql: String,
}

/// The samples of one table as its rows arrive: the same rows and caps a capped query of that table alone
/// would read.
struct Sampler {
    samples: Vec<Vec<String>>,
    rows: usize,
    bytes: usize,
    done: bool,
}

impl Sampler {
    fn new(columns: usize) -> Self {
        Self {
            samples: vec![Vec::new(); columns],
            rows: 0,
            bytes: 0,
            done: false,
        }
    }

    /// Takes one row: `cell(i, left)` decodes column `i` (0-based, the table number excluded) with at most
    /// `left` bytes of text.
    fn row(&mut self, width: usize, mut cell: impl FnMut(usize, usize) -> (Value, bool)) {
        if self.done || self.rows >= ROWS_READ {
            self.done = true;
            return;
        }
        let mut cut = false;
        let mut cells = Vec::with_capacity(width);
        for i in 0..width {
            let (value, was_cut) = cell(i, MAX_BYTES.saturating_sub(self.bytes));
            self.bytes = self
                .bytes
                .saturating_add(cell_len(&value).saturating_add(1));
            cut |= was_cut;
            cells.push(value);
        }
        if cut || self.bytes > MAX_BYTES {
            self.done = true;
            // A first row is used cut rather than not at all.
            if self.rows > 0 {
                return;
            }
        }
        self.rows += 1;
        for (samples, value) in self.samples.iter_mut().zip(&cells) {
            if value.is_null() || samples.len() == MAX_SAMPLES {
                continue;
            }
            let text = cut_sample(&cell_text(value)).into_owned();
            if !text.is_empty() && !samples.contains(&text) {
                samples.push(text);
            }
        }
    }
}

/// The bytes a cell takes as text (as the capped read path counts them).
fn cell_len(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len(),
        Value::Null => 4,
        other => other.to_string().len(),
    }
}

pub(super) async fn gather(db: &Database, catalog: &mut Catalog) {
    let dialect = catalog.dialect;
    let jobs: Vec<Job> = catalog
        .tables
        .iter()
        .enumerate()
        .filter(|(_, t)| t.kind == TableKind::Table && t.rows != Some(0))
        .filter_map(|(ti, t)| {
            let columns: Vec<usize> = (0..t.columns.len())
                .filter(|&ci| !is_binary(&t.columns[ci].data_type))
                .collect();
            if columns.is_empty() {
                return None;
            }
            let list: Vec<String> = columns
                .iter()
                .map(|&ci| dialect.quote(&t.columns[ci].name))
                .collect();
            let sql = format!(
                "SELECT {ti}, {} FROM {} LIMIT {ROWS_READ}",
                list.join(", "),
                dialect.quote_table(&t.name)
            );
            Some(Job {
                table: ti,
                columns,
                sql,
            })
        })
        .collect();
    let batches = batches(jobs);
    let concurrency = match db.pools {
        Pools::Sqlite { .. } => 1,
        _ => CONCURRENCY,
    };
    let mut results = futures_util::stream::iter(batches)
        .map(|batch| async move {
            let samplers = match read(db, &batch).await {
                Ok(samplers) => samplers,
                // Again one table at a time: a table that cannot be sampled (permissions, a time limit) simply
                // has no samples.
                Err(_) if batch.len() > 1 => {
                    let mut samplers = HashMap::new();
                    for job in &batch {
                        if let Ok(one) = read(db, std::slice::from_ref(job)).await {
                            samplers.extend(one);
                        }
                    }
                    samplers
                }
                Err(_) => HashMap::new(),
            };
            (batch, samplers)
        })
        .buffer_unordered(concurrency);
    // Each batch's samples go into the catalog as soon as it is read.
    while let Some((batch, mut samplers)) = results.next().await {
        for job in batch {
            let Some(sampler) = samplers.remove(&job.table) else {
                continue;
            };
            let Some(table) = catalog.tables.get_mut(job.table) else {
                continue;
            };
            for (&ci, samples) in job.columns.iter().zip(sampler.samples) {
                if let Some(column) = table.columns.get_mut(ci) {
                    column.samples = samples.into();
                }
            }
        }
    }
}

/// Jobs grouped into round trips of at most [`BATCH_TABLES`] tables and [`BATCH_COLUMNS`] columns.
fn batches(jobs: Vec<Job>) -> Vec<Vec<Job>> {
    let mut out: Vec<Vec<Job>> = Vec::new();
    let mut columns = 0;
    for job in jobs {
        let full = out
            .last()
            .is_none_or(|b| b.len() >= BATCH_TABLES || columns + job.columns.len() > BATCH_COLUMNS);
        if full {
            out.push(Vec::new());
            columns = 0;
        }
        columns += job.columns.len();
        if let Some(batch) = out.last_mut() {
            batch.push(job);
        }
    }
    out
}

/// Reads one batch on a read-only connection, with the time limit per statement.
async fn read(db: &Database, batch: &[Job]) -> Result<HashMap<usize, Sampler>, sqlx::Error> {
    let mut samplers: HashMap<usize, Sampler> = batch
        .iter()
        .map(|j| (j.table, Sampler::new(j.columns.len())))
        .collect();
    let per_table = u32::try_from(batch.len()).unwrap_or(u32::MAX);
    let backstop = TIMEOUT
        .saturating_mul(per_table)
        .saturating_add(Duration::from_secs(2));
    let millis = TIMEOUT.as_millis();
    let run = async {
        match &db.pools {
            Pools::Sqlite { read, .. } => {
                let mut lease = Lease::acquire(read).await?;
                let mut handle = lease.lock_handle().await?;
                read_sqlite(&mut handle, batch, &mut samplers);
                handle.remove_progress_handler();
                drop(handle);
                lease.release();
            }
            Pools::Postgres { read, .. } => {
                // One simple query is one implicit transaction (read-only: the session's default), and
                // `statement_timeout` applies to each statement in it.
                let sql = format!(
                    "SET LOCAL statement_timeout = {millis};\n{}",
                    statements(batch)
                );
                let mut lease = Lease::acquire(read).await?;
                stream::<sqlx::Postgres>(&mut lease, sql, decode::postgres, &mut samplers).await?;
                lease.release();
            }
            Pools::Mysql { read, .. } => {
                let (set, reset) = if db.is_mariadb() {
                    (
                        format!(
                            "SET SESSION max_statement_time = {:.3}",
                            TIMEOUT.as_secs_f64()
                        ),
                        "SET SESSION max_statement_time = DEFAULT",
                    )
                } else {
                    (
                        format!("SET SESSION max_execution_time = {millis}"),
                        "SET SESSION max_execution_time = DEFAULT",
                    )
                };
                let sql = format!("{set};\n{};\n{reset}", statements(batch));
                // A statement that fails stops the rest, the reset included: the connection is then closed.
                let mut lease = Lease::acquire(read).await?;
                stream::<sqlx::MySql>(&mut lease, sql, decode::mysql, &mut samplers).await?;
                lease.release();
            }
        }
        Ok::<_, sqlx::Error>(())
    };
    match tokio::time::timeout(backstop, run).await {
        Ok(result) => result.map(|()| samplers),
        Err(_) => Err(sqlx::Error::PoolTimedOut),
    }
}

/// The batch's statements as one text.
fn statements(batch: &[Job]) -> String {
    let statements: Vec<&str> = batch.iter().map(|j| j.sql.as_str()).collect();
    statements.join(";\n")
}

/// Reads a SQLite batch straight from its statements (see `sqlite_rows`: no row is copied to another thread),
/// one table at a time, each within [`TIMEOUT`]; a table that fails has no samples.
fn read_sqlite(
    handle: &mut sqlx::sqlite::LockedSqliteHandle<'_>,
    batch: &[Job],
    samplers: &mut HashMap<usize, Sampler>,
) {
    let start = Instant::now();
    let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    let deadline = Arc::new(AtomicU64::new(0));
    let until = deadline.clone();
    handle.set_progress_handler(sqlite_rows::STEPS_PER_CHECK, move || {
        nanos(start.elapsed()) < until.load(Ordering::Relaxed)
    });
    for job in batch {
        let Some(sampler) = samplers.get_mut(&job.table) else {
            continue;
        };
        deadline.store(
            nanos(start.elapsed().saturating_add(TIMEOUT)),
            Ordering::Relaxed,
        );
        let read = sqlite_rows::each_row(handle.as_raw_handle(), &job.sql, |row| {
            // The first column is the table's number.
            sampler.row(row.len().saturating_sub(1), |i, left| {
                decode::sqlite_value(row.cell(i + 1), left)
            });
            !sampler.done
        });
        if read.is_err() {
            samplers.remove(&job.table);
        }
    }
}

/// Streams the rows of `sql` into the samplers; each row starts with its table's number.
async fn stream<DB>(
    conn: &mut DB::Connection,
    sql: String,
    decode: fn(&DB::Row, usize, usize) -> (Value, bool),
    samplers: &mut HashMap<usize, Sampler>,
) -> Result<(), sqlx::Error>
where
    DB: sqlx::Database,
    for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
    usize: sqlx::ColumnIndex<DB::Row>,
{
    use sqlx::Row as _;
    let mut rows = sqlx::raw_sql(AssertSqlSafe(sql)).fetch(&mut *conn);
    while let Some(row) = rows.try_next().await? {
        let width = row.len().saturating_sub(1);
        let (tag, _) = decode(&row, 0, 64);
        let Some(sampler) = tag
            .as_u64()
            .and_then(|t| usize::try_from(t).ok())
            .and_then(|t| samplers.get_mut(&t))
        else {
            continue;
        };
        sampler.row(width, |i, left| decode(&row, i + 1, left));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(table: usize, columns: usize) -> Job {
        Job {
            table,
            columns: (0..columns).collect(),
            sql: String::new(),
        }
    }

    #[test]
    fn batches_hold_at_most_fifty_tables_and_a_thousand_columns() {
        let sizes: Vec<usize> = batches((0..120).map(|t| job(t, 20)).collect())
            .iter()
            .map(Vec::len)
            .collect();
        assert_eq!(sizes, vec![50, 50, 20]);
        let sizes: Vec<usize> = batches((0..5).map(|t| job(t, 400)).collect())
            .iter()
            .map(Vec::len)
            .collect();
        assert_eq!(sizes, vec![2, 2, 1]);
        // A table wider than a batch still gets one of its own.
        let sizes: Vec<usize> = batches(vec![job(0, 1_500), job(1, 3)])
            .iter()
            .map(Vec::len)
            .collect();
        assert_eq!(sizes, vec![1, 1]);
    }

    #[tokio::test]
    async fn a_sqlite_table_that_fails_or_runs_out_of_time_has_no_samples_and_the_next_still_does()
    {
        use sqlx::Connection as _;
        let mut conn = sqlx::SqliteConnection::connect("sqlite::memory:")
            .await
            .unwrap();
        sqlx::raw_sql(
            "CREATE TABLE a (n INTEGER, x REAL, t TEXT, b BLOB);
             INSERT INTO a VALUES (1, 2.5, 'one', x'00ff'), (2, 1e308 * 10, 'two', NULL), (1, NULL, 'one', NULL);",
        )
        .execute(&mut conn)
        .await
        .unwrap();
        let forever = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) \
                       SELECT 1, x FROM c WHERE x < 0 LIMIT 200";
        let jobs = [
            (0, "SELECT 0, n, x, t, b FROM a LIMIT 200"),
            (1, forever),
            (2, "SELECT 2, n FROM missing LIMIT 200"),
            (3, "SELECT 3, t FROM a LIMIT 200"),
        ]
        .map(|(table, sql)| Job {
            table,
            columns: Vec::new(),
            sql: sql.to_owned(),
        });
        let mut samplers: HashMap<usize, Sampler> = [(0, 4), (1, 1), (2, 1), (3, 1)]
            .map(|(t, w)| (t, Sampler::new(w)))
            .into();
        let started = Instant::now();
        let mut handle = conn.lock_handle().await.unwrap();
        read_sqlite(&mut handle, &jobs, &mut samplers);
        handle.remove_progress_handler();
        assert!(started.elapsed() < TIMEOUT * 3, "{:?}", started.elapsed());
        let mut keys: Vec<usize> = samplers.keys().copied().collect();
        keys.sort_unstable();
        assert_eq!(keys, [0, 3]);
        assert_eq!(
            samplers[&0].samples,
            [
                vec!["1", "2"],
                vec!["2.5", "Inf"],
                vec!["one", "two"],
                vec!["\\x00ff"]
            ]
        );
        assert_eq!(samplers[&3].samples, [vec!["one", "two"]]);
    }

    #[test]
    fn a_sampler_keeps_five_distinct_values_in_row_order_and_stops_at_the_byte_cap() {
        let mut s = Sampler::new(1);
        for v in ["a", "b", "a", "", "c", "d", "e", "f"] {
            s.row(1, |_, _| (Value::String(v.to_owned()), false));
        }
        s.row(1, |_, _| (Value::Null, false));
        assert_eq!(s.samples[0], ["a", "b", "c", "d", "e"]);
        let mut s = Sampler::new(1);
        s.row(1, |_, left| (Value::String("x".repeat(left.min(10))), true));
        s.row(1, |_, _| (Value::String("y".to_owned()), false));
        assert_eq!(s.samples[0], ["xxxxxxxxxx"]);
    }
}
