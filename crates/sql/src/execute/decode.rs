//! Cells as JSON values, faithful to each engine's types: integers and floats as numbers, exact decimals as
//! strings, dates and times in ISO 8601, UUIDs as text, JSON as JSON, blobs as their size.

use bigdecimal::BigDecimal;
use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};
use serde_json::{Value, json};
use sqlx::mysql::MySqlRow;
use sqlx::postgres::PgRow;
use sqlx::postgres::types::PgInterval;
use sqlx::sqlite::SqliteRow;
use sqlx::{Column, Row, TypeInfo, ValueRef};

/// A blob shown by its size.
fn blob(len: usize) -> Value {
    Value::String(format!("<blob {len} bytes>"))
}

fn float(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or_else(|| Value::String(x.to_string()), Value::Number)
}

/// Dates, times, decimals and UUIDs as their text (ISO for dates and times).
fn display(v: impl std::fmt::Display) -> Value {
    Value::String(v.to_string())
}

/// A timestamp without a zone, in ISO form with a `T` (the same in every engine).
fn local_time(v: NaiveDateTime) -> Value {
    Value::String(v.format("%Y-%m-%dT%H:%M:%S%.f").to_string())
}

/// A timestamp with a zone, in UTC as RFC 3339.
fn instant(v: DateTime<Utc>) -> Value {
    Value::String(v.to_rfc3339())
}

fn or_null<T>(value: Result<Option<T>, sqlx::Error>, f: impl FnOnce(T) -> Value) -> Option<Value> {
    match value {
        Ok(Some(v)) => Some(f(v)),
        Ok(None) => Some(Value::Null),
        Err(_) => None,
    }
}

/// One SQLite cell, by the value's own storage class (SQLite types are per value).
fn sqlite_value(row: &SqliteRow, i: usize) -> Value {
    let Ok(raw) = row.try_get_raw(i) else {
        return Value::Null;
    };
    if raw.is_null() {
        return Value::Null;
    }
    let class = raw.type_info().name().to_owned();
    let decoded = match class.as_str() {
        "INTEGER" => or_null(row.try_get_unchecked::<Option<i64>, _>(i), |v| json!(v)),
        "REAL" => or_null(row.try_get_unchecked::<Option<f64>, _>(i), float),
        "BLOB" => or_null(row.try_get_unchecked::<Option<Vec<u8>>, _>(i), |b| {
            blob(b.len())
        }),
        _ => or_null(row.try_get_unchecked::<Option<String>, _>(i), Value::String),
    };
    decoded.unwrap_or(Value::Null)
}

/// One PostgreSQL cell, by the column's type.
fn postgres_value(row: &PgRow, i: usize) -> Value {
    let Some(column) = row.columns().get(i) else {
        return Value::Null;
    };
    let name = column.type_info().name().to_ascii_uppercase();
    let decoded = match name.as_str() {
        "BOOL" => or_null(row.try_get::<Option<bool>, _>(i), Value::Bool),
        "INT2" => or_null(row.try_get::<Option<i16>, _>(i), |v| json!(v)),
        "INT4" => or_null(row.try_get::<Option<i32>, _>(i), |v| json!(v)),
        "INT8" => or_null(row.try_get::<Option<i64>, _>(i), |v| json!(v)),
        "OID" => or_null(
            row.try_get::<Option<sqlx::postgres::types::Oid>, _>(i),
            |v| json!(v.0),
        ),
        "FLOAT4" => or_null(row.try_get::<Option<f32>, _>(i), |v| float(f64::from(v))),
        "FLOAT8" => or_null(row.try_get::<Option<f64>, _>(i), float),
        "NUMERIC" => numeric(row, i),
        "DATE" => or_null(row.try_get::<Option<NaiveDate>, _>(i), display),
        "TIME" => or_null(row.try_get::<Option<NaiveTime>, _>(i), display),
        "TIMESTAMP" => or_null(row.try_get::<Option<NaiveDateTime>, _>(i), local_time),
        "TIMESTAMPTZ" => or_null(row.try_get::<Option<DateTime<Utc>>, _>(i), instant),
        "INTERVAL" => or_null(row.try_get::<Option<PgInterval>, _>(i), |v| {
            Value::String(interval(&v))
        }),
        "UUID" => or_null(row.try_get::<Option<uuid::Uuid>, _>(i), display),
        "JSON" | "JSONB" => or_null(row.try_get::<Option<Value>, _>(i), |v| v),
        "BYTEA" => or_null(row.try_get::<Option<Vec<u8>>, _>(i), |b| blob(b.len())),
        "INT2[]" | "INT4[]" | "INT8[]" => {
            or_null(row.try_get::<Option<Vec<i64>>, _>(i), |v| json!(v))
                .or_else(|| or_null(row.try_get::<Option<Vec<i32>>, _>(i), |v| json!(v)))
                .or_else(|| or_null(row.try_get::<Option<Vec<i16>>, _>(i), |v| json!(v)))
        }
        "FLOAT8[]" => or_null(row.try_get::<Option<Vec<f64>>, _>(i), |v| json!(v)),
        "BOOL[]" => or_null(row.try_get::<Option<Vec<bool>>, _>(i), |v| json!(v)),
        "TEXT[]" | "VARCHAR[]" | "NAME[]" | "BPCHAR[]" => {
            or_null(row.try_get::<Option<Vec<String>>, _>(i), |v| json!(v))
        }
        "NUMERIC[]" => or_null(row.try_get::<Option<Vec<BigDecimal>>, _>(i), |v| {
            Value::Array(
                v.into_iter()
                    .map(|d| Value::String(d.to_string()))
                    .collect(),
            )
        }),
        _ => None,
    };
    decoded
        // Text types, and enums and domains, whose binary form is their text.
        .or_else(|| or_null(row.try_get_unchecked::<Option<String>, _>(i), Value::String))
        .unwrap_or_else(|| Value::String(format!("<{name} value>")))
}

/// A NUMERIC exactly as PostgreSQL writes it, with its display scale (`12.5000` stays `12.5000`, `0.1` stays
/// `0.1`), read from the binary form: digit count, weight, sign, display scale, then base-10000 digits.
fn numeric(row: &PgRow, i: usize) -> Option<Value> {
    let raw = row.try_get_raw(i).ok()?;
    if raw.is_null() {
        return Some(Value::Null);
    }
    if raw.format() == sqlx::postgres::PgValueFormat::Text {
        return raw.as_str().ok().map(|s| Value::String(s.to_owned()));
    }
    let bytes = raw.as_bytes().ok()?;
    let word = |k: usize| -> Option<u16> {
        Some(u16::from_be_bytes([*bytes.get(k)?, *bytes.get(k + 1)?]))
    };
    let (ndigits, weight, sign, dscale) = (
        word(0)? as usize,
        word(2)? as i16,
        word(4)?,
        word(6)? as usize,
    );
    match sign {
        0xC000 => return Some(Value::String("NaN".to_owned())),
        0xD000 => return Some(Value::String("Infinity".to_owned())),
        0xF000 => return Some(Value::String("-Infinity".to_owned())),
        _ => {}
    }
    let digits: Vec<u16> = (0..ndigits)
        .map(|d| word(8 + 2 * d))
        .collect::<Option<_>>()?;
    // Integer part: groups with weight >= 0.
    let mut int = String::new();
    for w in (0..=i32::from(weight)).rev() {
        let index = i32::from(weight) - w;
        let group = usize::try_from(index)
            .ok()
            .and_then(|k| digits.get(k))
            .copied()
            .unwrap_or(0);
        if int.is_empty() {
            if group != 0 {
                int = group.to_string();
            }
        } else {
            int.push_str(&format!("{group:04}"));
        }
    }
    if int.is_empty() {
        int.push('0');
    }
    let mut frac = String::new();
    let mut k = 0i32;
    while frac.len() < dscale {
        let index = i32::from(weight) + 1 + k;
        let group = usize::try_from(index)
            .ok()
            .and_then(|j| digits.get(j))
            .copied()
            .unwrap_or(0);
        frac.push_str(&format!("{group:04}"));
        k += 1;
    }
    frac.truncate(dscale);
    let negative = sign == 0x4000 && (int != "0" || frac.bytes().any(|b| b != b'0'));
    let text = match (negative, dscale) {
        (true, 0) => format!("-{int}"),
        (false, 0) => int,
        (true, _) => format!("-{int}.{frac}"),
        (false, _) => format!("{int}.{frac}"),
    };
    Some(Value::String(text))
}

/// An interval as PostgreSQL writes it: `1 mon 2 days 03:04:05`.
fn interval(v: &PgInterval) -> String {
    let mut parts = Vec::new();
    if v.months != 0 {
        let (y, m) = (v.months / 12, v.months % 12);
        if y != 0 {
            parts.push(format!("{y} year{}", if y == 1 { "" } else { "s" }));
        }
        if m != 0 {
            parts.push(format!("{m} mon{}", if m == 1 { "" } else { "s" }));
        }
    }
    if v.days != 0 {
        parts.push(format!(
            "{} day{}",
            v.days,
            if v.days == 1 { "" } else { "s" }
        ));
    }
    if v.microseconds != 0 || parts.is_empty() {
        let sign = if v.microseconds < 0 { "-" } else { "" };
        let us = v.microseconds.unsigned_abs();
        let (h, rest) = (us / 3_600_000_000, us % 3_600_000_000);
        let (m, rest) = (rest / 60_000_000, rest % 60_000_000);
        let (s, frac) = (rest / 1_000_000, rest % 1_000_000);
        let time = format!("{sign}{h:02}:{m:02}:{s:02}");
        parts.push(if frac == 0 {
            time
        } else {
            format!("{time}.{frac:06}")
        });
    }
    parts.join(" ")
}

/// One MySQL or MariaDB cell, by the column's type.
fn mysql_value(row: &MySqlRow, i: usize) -> Value {
    let Some(column) = row.columns().get(i) else {
        return Value::Null;
    };
    let name = column.type_info().name().to_ascii_uppercase();
    let decoded = match name.as_str() {
        "BOOLEAN" | "TINYINT" => or_null(row.try_get_unchecked::<Option<i8>, _>(i), |v| json!(v)),
        "SMALLINT" | "MEDIUMINT" | "INT" | "BIGINT" | "YEAR" => {
            or_null(row.try_get_unchecked::<Option<i64>, _>(i), |v| json!(v))
        }
        n if n.ends_with("UNSIGNED") => {
            or_null(row.try_get_unchecked::<Option<u64>, _>(i), |v| json!(v))
        }
        "FLOAT" => or_null(row.try_get::<Option<f32>, _>(i), |v| float(f64::from(v))),
        "DOUBLE" => or_null(row.try_get::<Option<f64>, _>(i), float),
        "DECIMAL" => or_null(row.try_get::<Option<BigDecimal>, _>(i), display),
        "DATE" => or_null(row.try_get::<Option<NaiveDate>, _>(i), display),
        "TIME" => or_null(row.try_get::<Option<NaiveTime>, _>(i), display),
        "DATETIME" => or_null(row.try_get::<Option<NaiveDateTime>, _>(i), local_time),
        "TIMESTAMP" => or_null(row.try_get::<Option<DateTime<Utc>>, _>(i), instant),
        "JSON" => or_null(row.try_get::<Option<Value>, _>(i), |v| v),
        "BIT" => or_null(row.try_get_unchecked::<Option<u64>, _>(i), |v| json!(v)),
        "BLOB" | "TINYBLOB" | "MEDIUMBLOB" | "LONGBLOB" | "BINARY" | "VARBINARY" | "GEOMETRY" => {
            // MySQL reports text with a binary collation (some expressions) as binary: show it when it is text.
            or_null(
                row.try_get_unchecked::<Option<Vec<u8>>, _>(i),
                |b| match String::from_utf8(b) {
                    Ok(s) if !s.chars().any(|c| c.is_control() && !c.is_whitespace()) => {
                        Value::String(s)
                    }
                    Ok(s) => blob(s.len()),
                    Err(e) => blob(e.as_bytes().len()),
                },
            )
        }
        "NULL" => Some(Value::Null),
        _ => None,
    };
    decoded
        .or_else(|| or_null(row.try_get_unchecked::<Option<String>, _>(i), Value::String))
        .unwrap_or_else(|| Value::String(format!("<{name} value>")))
}

/// A cell with its text cut to `max_len` bytes (at a character boundary); true when it was cut.
fn capped(value: Value, max_len: usize) -> (Value, bool) {
    match value {
        Value::String(mut s) if s.len() > max_len => {
            let mut end = max_len;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            s.truncate(end);
            (Value::String(s), true)
        }
        other => (other, false),
    }
}

/// One SQLite cell, at most `max_len` bytes of text.
pub(crate) fn sqlite(row: &SqliteRow, i: usize, max_len: usize) -> (Value, bool) {
    capped(sqlite_value(row, i), max_len)
}

/// One PostgreSQL cell, at most `max_len` bytes of text.
pub(crate) fn postgres(row: &PgRow, i: usize, max_len: usize) -> (Value, bool) {
    capped(postgres_value(row, i), max_len)
}

/// One MySQL/MariaDB cell, at most `max_len` bytes of text.
pub(crate) fn mysql(row: &MySqlRow, i: usize, max_len: usize) -> (Value, bool) {
    capped(mysql_value(row, i), max_len)
}

/// A cell as text for people and models: strings as they are, NULL as `NULL`, the rest as JSON.
pub fn cell_text(value: &Value) -> String {
    match value {
        Value::Null => "NULL".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_read_like_postgres() {
        let v = |months, days, microseconds| {
            interval(&PgInterval {
                months,
                days,
                microseconds,
            })
        };
        assert_eq!(v(14, 3, 3_723_000_000), "1 year 2 mons 3 days 01:02:03");
        assert_eq!(v(0, 0, 0), "00:00:00");
        assert_eq!(v(0, -1, -1_500_000), "-1 days -00:00:01.500000");
    }
}
