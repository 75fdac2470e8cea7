//! Cells as JSON values: the numbers you see are the numbers in the database.
//!
//! Every value comes back either exactly as the engine's own client prints it (`psql`, `mariadb`, `sqlite3`), or
//! in one of these lossless, JSON-safe renderings:
//!
//! - NULL is `null`. Only a NULL is `null`: MySQL's zero dates are text, not NULL.
//! - Integers are JSON numbers, unsigned 64-bit included.
//! - Finite floats are JSON numbers holding the engine's value (the engine's text, parsed). NaN and infinities
//!   are strings in the engine's spelling: `"NaN"`, `"Infinity"`, `"-Infinity"` on PostgreSQL, `"Inf"` and
//!   `"-Inf"` on SQLite (as `sqlite3` prints them).
//! - PostgreSQL `bool` is `true` or `false`; MySQL's `BOOLEAN` is a `TINYINT(1)` and stays a number.
//! - A JSON object or array is the JSON value itself: PostgreSQL `json` and `jsonb`, MySQL's `JSON` type. A
//!   scalar document (`null`, `"a"`, `1.5`, `true`) is its JSON text as a string, as the client prints it, so that
//!   a JSON `null` is never taken for SQL NULL. So is a document that a JSON value cannot hold without loss: a
//!   number with more digits than a 64-bit integer or float holds, an object that repeats a key (`json` keeps
//!   both): nothing is rounded or dropped. MariaDB's `JSON` is an alias of `LONGTEXT` that the server does not
//!   mark in results: it is the stored text, a string, exactly as `mariadb` shows it.
//! - Exact decimals are strings exactly as the engine prints them, with their scale: `0.000`, `-12.30`,
//!   `NaN`, `Infinity`; never E-notation; each element of a `numeric[]` keeps its own scale.
//! - Binary data is `\x` followed by lowercase hex (PostgreSQL's own `bytea` output), in every engine: `bytea`
//!   (also when the server's `bytea_output` is `escape`), SQLite blobs, text that is not valid UTF-8, MySQL
//!   `GEOMETRY`, and MySQL `BINARY`/`VARBINARY`/`BLOB` values that are not printable text. MySQL returns some text
//!   expressions with the binary character set; those stay text when they are valid UTF-8 without control
//!   characters.
//! - MySQL `BIT(n)` is a number (its bits read as an unsigned big-endian integer); `YEAR` is a number.
//! - SQLite values follow their storage class: INTEGER and REAL are numbers, TEXT is the text, BLOB is hex.
//! - Everything else is a string exactly as the client prints it: dates and times with the server's `DateStyle`,
//!   `TimeZone`, `IntervalStyle` and `time_zone` (`infinity`, `0044-03-15 BC`, `24:00:00`, `838:59:59`,
//!   `0000-00-00`, `2024-01-02 03:04:05.123456`), `money`, network and geometric types, bit strings, ranges,
//!   arrays (`{1,NULL,3}`), records, enums, `xml`, `tsvector`, `uuid`, `ENUM`, `SET`, …
//!
//! Queries with bound parameters reach PostgreSQL and MySQL as prepared statements, whose values come in the
//! engines' binary formats. Those are rendered from the bytes to the same text wherever the bytes allow, with
//! these differences, since a binary value carries no session settings: PostgreSQL dates and times in the ISO
//! style, `timestamptz` in UTC with `+00`, intervals in the `postgres` style, `money` in the C locale's form
//! (`-$1,234.56`), `reg*` types as their OID number; MySQL `FLOAT` with the float's shortest exact digits (the
//! text protocol has the server's six significant ones), fractional seconds with six digits whenever they are not
//! zero (the column's declared precision is not in the row). A binary value of a type not known here (a domain
//! over a number inside an anonymous record, `tsquery`, extension types) is its text when its bytes are
//! printable UTF-8 (enums, `citext`, domains over text), an array or a record when the bytes are exactly one,
//! and hex otherwise. PostgreSQL's `aclitem` has no binary form at all: the engine refuses such a prepared query.
//!
//! Every cell is cut to the byte budget left in the result (see [`crate::QueryLimits::max_bytes`]), the first
//! cell of the first row included, at a character boundary, without copying the whole value first: a cut cell is
//! a string holding the beginning of its rendering, and the result says it was truncated.

mod json;
#[cfg(test)]
mod live_tests;
mod mysql;
mod postgres;
mod sqlite;

use std::fmt;

use serde_json::Value;

pub(crate) use mysql::mysql;
pub(crate) use postgres::postgres;
pub(crate) use sqlite::{Cell as SqliteCell, sqlite, value as sqlite_value};

/// Text under construction with a byte limit: what does not fit is dropped at a character boundary, and the
/// cut is remembered.
pub(crate) struct Out {
    text: String,
    max: usize,
    cut: bool,
}

impl Out {
    /// Empty text that may grow to `max` bytes.
    pub(crate) fn new(max: usize) -> Self {
        Self {
            text: String::new(),
            max,
            cut: false,
        }
    }

    /// Appends `s`, or as much of it as fits.
    pub(crate) fn push_str(&mut self, s: &str) {
        if self.cut {
            return;
        }
        let room = self.max.saturating_sub(self.text.len());
        if s.len() <= room {
            self.text.push_str(s);
        } else {
            self.text
                .push_str(s.get(..s.floor_char_boundary(room)).unwrap_or(""));
            self.cut = true;
        }
    }

    /// Appends one character, if it fits.
    pub(crate) fn push(&mut self, c: char) {
        let mut buf = [0u8; 4];
        self.push_str(c.encode_utf8(&mut buf));
    }

    /// True once something did not fit: further text is dropped.
    pub(crate) fn is_full(&self) -> bool {
        self.cut
    }

    /// Bytes still free.
    pub(crate) fn room(&self) -> usize {
        if self.cut {
            0
        } else {
            self.max.saturating_sub(self.text.len())
        }
    }

    /// The text so far.
    #[cfg(test)]
    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    /// The cell: the text as a JSON string, and whether it was cut.
    pub(crate) fn finish(self) -> (Value, bool) {
        (Value::String(self.text), self.cut)
    }
}

impl fmt::Write for Out {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push_str(s);
        Ok(())
    }
}

/// A string cell borrowed from the row, cut to `max` bytes.
pub(crate) fn text(s: &str, max: usize) -> (Value, bool) {
    if s.len() <= max {
        (Value::String(s.to_owned()), false)
    } else {
        let end = s.floor_char_boundary(max);
        (Value::String(s.get(..end).unwrap_or("").to_owned()), true)
    }
}

/// Appends `bytes` as lowercase hex digits, as many whole bytes as fit.
pub(crate) fn push_hex(out: &mut Out, bytes: &[u8]) {
    let head = bytes.get(..out.room() / 2).unwrap_or(bytes);
    let mut chunk = String::with_capacity(head.len().min(2048) * 2);
    for block in head.chunks(2048) {
        chunk.clear();
        for b in block {
            for nibble in [b >> 4, b & 0x0f] {
                chunk.push(char::from_digit(u32::from(nibble), 16).unwrap_or('0'));
            }
        }
        out.push_str(&chunk);
    }
    if head.len() < bytes.len() {
        out.cut = true;
    }
}

/// Binary data as `\x` and lowercase hex, PostgreSQL's `bytea` output, cut to `max` bytes.
pub(crate) fn hex(bytes: &[u8], max: usize) -> (Value, bool) {
    let mut out = Out::new(max);
    out.push_str("\\x");
    push_hex(&mut out, bytes);
    out.finish()
}

/// Text when `bytes` are valid UTF-8, else hex.
pub(crate) fn text_or_hex(bytes: &[u8], max: usize) -> (Value, bool) {
    match std::str::from_utf8(bytes) {
        Ok(s) => text(s, max),
        Err(_) => hex(bytes, max),
    }
}

/// True for UTF-8 text without control characters other than whitespace: bytes that read as text.
pub(crate) fn printable(bytes: &[u8]) -> Option<&str> {
    let s = std::str::from_utf8(bytes).ok()?;
    (!s.chars().any(|c| c.is_control() && !c.is_whitespace())).then_some(s)
}

/// Text when `bytes` read as text ([`printable`]), else hex.
pub(crate) fn printable_or_hex(bytes: &[u8], max: usize) -> (Value, bool) {
    match printable(bytes) {
        Some(s) => text(s, max),
        None => hex(bytes, max),
    }
}

/// A float from the engine's text: a JSON number when finite, else the engine's spelling as a string.
pub(crate) fn float_text(s: &str) -> Value {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() => serde_json::Number::from_f64(x)
            .map_or_else(|| Value::String(s.to_owned()), Value::Number),
        _ => Value::String(s.to_owned()),
    }
}

/// A finite float as a JSON number; `None` for NaN and infinities.
pub(crate) fn finite(x: f64) -> Option<Value> {
    serde_json::Number::from_f64(x).map(Value::Number)
}

/// A 32-bit float as the JSON number of its shortest decimal form (`0.1`, not `0.10000000149011612`).
pub(crate) fn float4(x: f32) -> Option<Value> {
    if !x.is_finite() {
        return None;
    }
    x.to_string().parse::<f64>().ok().and_then(finite)
}

/// A JSON document from its text: the JSON value when it is an object or an array that parses without loss
/// (every number survives as a 64-bit integer or float, no object repeats a key), else the text as a string (so a JSON `null` is never taken for
/// SQL NULL, nor the document `"a"` for the text `a`); cut to `max` bytes (then always the text).
pub(crate) fn json_doc(s: &str, max: usize) -> (Value, bool) {
    if s.len() > max {
        return text(s, max);
    }
    if let Some(value @ (Value::Object(_) | Value::Array(_))) = json::lossless(s) {
        return (value, false);
    }
    (Value::String(s.to_owned()), false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_is_cut_at_a_character_boundary() {
        assert_eq!(text("café", 10), (json!("café"), false));
        assert_eq!(text("café", 4), (json!("caf"), true));
        assert_eq!(text("café", 0), (json!(""), true));
        let mut out = Out::new(5);
        out.push_str("ab");
        out.push('é');
        out.push_str("cd");
        assert_eq!(out.finish(), (json!("abéc"), true));
    }

    #[test]
    fn binary_is_lowercase_hex_and_cut_to_whole_bytes() {
        assert_eq!(hex(&[0, 0xAB, 0x10], 100), (json!("\\x00ab10"), false));
        assert_eq!(hex(&[0, 0xAB, 0x10], 7), (json!("\\x00ab"), true));
        assert_eq!(hex(&[], 2), (json!("\\x"), false));
        assert_eq!(hex(&[1], 1), (json!("\\"), true));
        assert_eq!(text_or_hex(&[0xff, 0x61], 100), (json!("\\xff61"), false));
        assert_eq!(printable_or_hex(b"a\0", 100), (json!("\\x6100"), false));
        assert_eq!(printable_or_hex(b"a b\n", 100), (json!("a b\n"), false));
    }

    #[test]
    fn floats_keep_the_engine_value_and_spelling() {
        assert_eq!(float_text("0.1"), json!(0.1));
        assert_eq!(float_text("1e+300"), json!(1e300));
        assert_eq!(float_text("NaN"), json!("NaN"));
        assert_eq!(float_text("-Infinity"), json!("-Infinity"));
        assert_eq!(float4(0.1), Some(json!(0.1)));
        assert_eq!(float4(f32::INFINITY), None);
    }

    #[test]
    fn json_documents_are_values_unless_a_number_would_lose_digits() {
        assert_eq!(
            json_doc(r#"{"a": [1, 2.5, null]}"#, 100),
            (json!({"a": [1, 2.5, null]}), false)
        );
        assert_eq!(
            json_doc(r#"{"a": 0.10000000000000000001}"#, 100),
            (json!(r#"{"a": 0.10000000000000000001}"#), false)
        );
        assert_eq!(json_doc("[1, 2]", 3), (json!("[1,"), true));
        assert_eq!(json_doc("not json", 100), (json!("not json"), false));
        assert_eq!(json_doc("null", 100), (json!("null"), false));
        assert_eq!(json_doc("\"a\"", 100), (json!("\"a\""), false));
        assert_eq!(json_doc("1.5", 100), (json!("1.5"), false));
    }
}
