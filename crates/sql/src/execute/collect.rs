//! Rows collected up to the caps: at most `max_rows` rows and `max_bytes` bytes of cell text, the first row's
//! cells included; a cell is never copied beyond what is left of the byte cap.
//!
//! The driver hands over whole rows (sqlx reads a PostgreSQL `DataRow` or a MySQL row packet into one buffer,
//! and copies a SQLite value out of the statement), so a huge cell is in memory as the driver holds it until
//! its row is dropped; the decoders read it in place and copy at most what is left of the cap. Rows are
//! dropped one by one, and reading stops at the caps. See docs/benchmarks.md ("Memory") for the measured
//! bound.

use std::time::Duration;

use futures_util::TryStreamExt as _;
use futures_util::stream::BoxStream;
use serde_json::Value;
use sqlx::TypeInfo as _;

use crate::query::{QueryLimits, QueryResult, ResultColumn};

/// Rows read and thrown away after the caps, so that a result only a little larger than the cap leaves its
/// connection reusable; a larger one is abandoned and its connection closed.
const TAIL_ROWS: usize = 1_000;
/// The longest time spent reading that tail.
const TAIL_TIME: Duration = Duration::from_millis(20);
/// A row rendered to more bytes than this (or a cell cut at the byte cap) may have grown the connection's read
/// buffer to its size: see [`Collector::large`]. A buffer up to this size may stay with a pooled connection.
const LARGE_ROW: usize = 1024 * 1024;

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

/// Reads what is left of a capped result when it is short: `Complete` when the stream ended within
/// [`TAIL_ROWS`] rows and [`TAIL_TIME`], `Stopped` otherwise. The rows are not decoded.
async fn finish_tail<R>(rows: &mut BoxStream<'_, Result<R, sqlx::Error>>) -> Drained {
    let tail = async {
        for _ in 0..TAIL_ROWS {
            match rows.try_next().await {
                Ok(Some(_)) => {}
                Ok(None) => return Drained::Complete,
                Err(_) => return Drained::Stopped,
            }
        }
        Drained::Stopped
    };
    tokio::time::timeout(TAIL_TIME, tail)
        .await
        .unwrap_or(Drained::Stopped)
}

/// Collects rows up to the caps.
pub(crate) struct Collector<'a> {
    limits: &'a QueryLimits,
    pub(crate) columns: Vec<ResultColumn>,
    rows: Vec<Vec<Value>>,
    bytes: usize,
    /// The most bytes one row took, as rendered.
    widest: usize,
    /// Whether a cell was cut at the byte cap (its row was then of any size).
    cut: bool,
    truncated: bool,
}

impl<'a> Collector<'a> {
    pub(crate) fn new(limits: &'a QueryLimits) -> Self {
        Self {
            limits,
            columns: Vec::new(),
            rows: Vec::new(),
            bytes: 0,
            widest: 0,
            cut: false,
            truncated: false,
        }
    }

    /// Whether a row read may have left a large buffer in the driver's connection: a row of more than
    /// [`LARGE_ROW`] bytes, or one with a cell cut at the byte cap. sqlx keeps a PostgreSQL or MySQL
    /// connection's read buffer as large as the largest message it read (a 200 MB row leaves a 200 MB buffer
    /// that the pool would keep for the connection's life; `shrink_buffers` does not always give it back), so
    /// such a connection is closed rather than returned to its pool.
    pub(crate) fn large(&self) -> bool {
        self.cut || self.widest > LARGE_ROW
    }

    /// Reads rows from `rows` until they end or a cap is reached. The byte cap covers every cell, the first
    /// row's included: a cell is never copied beyond what is left of it. With `tail`, a short rest after the
    /// caps is read and thrown away so that the connection stays reusable (worth it where a new connection
    /// costs a handshake), unless a cell was cut. Each row is dropped before the next one is read.
    pub(crate) async fn drain<R>(
        &mut self,
        mut rows: BoxStream<'_, Result<R, sqlx::Error>>,
        decode: Decode<R>,
        tail: bool,
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
                drop(row);
                return Ok(if tail {
                    finish_tail(&mut rows).await
                } else {
                    Drained::Stopped
                });
            }
            let mut cut = false;
            let mut cells = Vec::with_capacity(row.len());
            let before = self.bytes;
            for i in 0..row.len() {
                let left = self.limits.max_bytes.saturating_sub(self.bytes);
                let (value, was_cut) = decode(&row, i, left);
                self.bytes = self
                    .bytes
                    .saturating_add(cell_len(&value).saturating_add(1));
                cut |= was_cut;
                cells.push(value);
            }
            // The row is dropped here or below, before the next one is read: the driver's copy of a cell
            // never outlives its row.
            drop(row);
            self.widest = self.widest.max(self.bytes.saturating_sub(before));
            self.cut |= cut;
            if cut || self.bytes > self.limits.max_bytes {
                self.truncated = true;
                // A first row is shown cut rather than not at all.
                if self.rows.is_empty() {
                    self.rows.push(cells);
                }
                // After a cut cell the connection is closed anyway (see `large`): the rest, likely as large, is
                // not read.
                return Ok(if tail && !cut {
                    finish_tail(&mut rows).await
                } else {
                    Drained::Stopped
                });
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

/// The bytes a cell takes as text (a JSON document's compact text, counted without being written out).
fn cell_len(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len(),
        Value::Null => 4,
        other => {
            let mut counter = Counter(0);
            match serde_json::to_writer(&mut counter, other) {
                Ok(()) => counter.0,
                Err(_) => other.to_string().len(),
            }
        }
    }
}

/// A writer that only counts bytes.
struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 = self.0.saturating_add(buf.len());
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
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
