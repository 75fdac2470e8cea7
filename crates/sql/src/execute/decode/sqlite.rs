//! SQLite cells, by each value's own storage class (SQLite types are per value, not per column).

use serde_json::{Value, json};
use sqlx::sqlite::{Sqlite, SqliteRow};
use sqlx::{Decode, Row, TypeInfo, ValueRef};

/// A SQLite value by its storage class, however it was read (through sqlx's row or straight from a statement).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Cell<'a> {
    Null,
    Integer(i64),
    Real(f64),
    /// Its bytes (UTF-8 in a UTF-8 database).
    Text(&'a [u8]),
    Blob(&'a [u8]),
}

/// One SQLite cell and whether it was cut to `max` bytes: INTEGER and REAL as numbers (infinities as `"Inf"` and
/// `"-Inf"`, as `sqlite3` prints them), TEXT as it is (hex when it is not UTF-8), BLOB in hex.
pub(crate) fn sqlite(row: &SqliteRow, i: usize, max: usize) -> (Value, bool) {
    let Ok(raw) = row.try_get_raw(i) else {
        return (Value::Null, false);
    };
    if raw.is_null() {
        return (Value::Null, false);
    }
    let class = raw.type_info().name().to_owned();
    let number = match class.as_str() {
        "INTEGER" => <i64 as Decode<Sqlite>>::decode(raw).map(Cell::Integer),
        "REAL" => <f64 as Decode<Sqlite>>::decode(raw).map(Cell::Real),
        _ => Err("bytes".into()),
    };
    if let Ok(cell) = number {
        return value(cell, max);
    }
    // Reading the bytes never fails; an empty value stands in should the driver ever refuse.
    let bytes = row
        .try_get_raw(i)
        .ok()
        .and_then(|raw| <&[u8] as Decode<Sqlite>>::decode(raw).ok())
        .unwrap_or_default();
    value(
        if class == "BLOB" {
            Cell::Blob(bytes)
        } else {
            Cell::Text(bytes)
        },
        max,
    )
}

/// A cell as [`sqlite`] gives it.
pub(crate) fn value(cell: Cell<'_>, max: usize) -> (Value, bool) {
    match cell {
        Cell::Null => (Value::Null, false),
        Cell::Integer(n) => (json!(n), false),
        Cell::Real(x) => (real(x), false),
        Cell::Text(bytes) => super::text_or_hex(bytes, max),
        Cell::Blob(bytes) => super::hex(bytes, max),
    }
}

/// A REAL: a number, or `Inf`/`-Inf` as `sqlite3` prints them (SQLite stores no NaN).
fn real(x: f64) -> Value {
    super::finite(x).unwrap_or_else(|| {
        Value::String(
            if x.is_nan() {
                "NaN"
            } else if x > 0.0 {
                "Inf"
            } else {
                "-Inf"
            }
            .to_owned(),
        )
    })
}
