//! Rows collected up to the caps: at most `max_rows` rows and `max_bytes` bytes of cell text, the first row's
//! cells included; a cell is never copied beyond what is left of the byte cap.

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
    /// row's included: a cell is never copied beyond what is left of it. With `tail`, a short rest after the
    /// caps is read and thrown away so that the connection stays reusable (worth it where a new connection
    /// costs a handshake).
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
                return Ok(if tail {
                    finish_tail(&mut rows).await
                } else {
                    Drained::Stopped
                });
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
                return Ok(if tail {
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
