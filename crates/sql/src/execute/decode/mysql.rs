//! MySQL and MariaDB cells, from the text protocol (a query as written) or the binary protocol (a prepared
//! statement with bound parameters). Strings, decimals, bit values, blobs and JSON have the same bytes in both;
//! integers and floats are read by the driver, which knows the protocol; dates and times are told apart by their
//! first byte (a length in the binary protocol, a digit or `-` in text).

use std::fmt::Write as _;

use serde_json::{Value, json};
use sqlx::mysql::{MySql, MySqlRow, MySqlValueRef};
use sqlx::{Decode, Row, TypeInfo, ValueRef};

/// One MySQL or MariaDB cell and whether it was cut to `max` bytes.
pub(crate) fn mysql(row: &MySqlRow, i: usize, max: usize) -> (Value, bool) {
    let Ok(raw) = row.try_get_raw(i) else {
        return (Value::Null, false);
    };
    // Not `is_null()`: the driver calls a binary zero date NULL, and it is not.
    let Ok(bytes) = <&[u8] as Decode<MySql>>::decode(raw.clone()) else {
        return (Value::Null, false);
    };
    let name = raw.type_info().name().to_owned();
    match name.as_str() {
        "BOOLEAN" | "TINYINT" | "SMALLINT" | "MEDIUMINT" | "INT" | "BIGINT" | "YEAR" => {
            number::<i64>(raw, bytes, max)
        }
        n if n.ends_with(" UNSIGNED") => number::<u64>(raw, bytes, max),
        "FLOAT" => match <f32 as Decode<MySql>>::decode(raw)
            .ok()
            .and_then(super::float4)
        {
            Some(v) => (v, false),
            None => super::text_or_hex(bytes, max),
        },
        "DOUBLE" => match <f64 as Decode<MySql>>::decode(raw)
            .ok()
            .and_then(super::finite)
        {
            Some(v) => (v, false),
            None => super::text_or_hex(bytes, max),
        },
        "BIT" => match bits(bytes) {
            Some(v) => (json!(v), false),
            None => super::hex(bytes, max),
        },
        "DATE" | "DATETIME" | "TIMESTAMP" | "TIME" => match binary_temporal(&name, bytes) {
            Some(text) => super::text(&text, max),
            None => super::text_or_hex(bytes, max),
        },
        "JSON" => match std::str::from_utf8(bytes) {
            Ok(s) => super::json_doc(s, max),
            Err(_) => super::hex(bytes, max),
        },
        "GEOMETRY" => super::hex(bytes, max),
        // Binary strings, and text that MySQL hands over with the binary character set (some expressions).
        "BINARY" | "VARBINARY" | "TINYBLOB" | "BLOB" | "MEDIUMBLOB" | "LONGBLOB" => {
            super::printable_or_hex(bytes, max)
        }
        // DECIMAL, CHAR, VARCHAR, TEXT, ENUM, SET and the rest: text in both protocols.
        _ => super::text_or_hex(bytes, max),
    }
}

/// An integer as the driver reads it in either protocol; the bytes as text should it refuse.
fn number<'r, T>(raw: MySqlValueRef<'r>, bytes: &[u8], max: usize) -> (Value, bool)
where
    T: Decode<'r, MySql> + Into<Value>,
{
    match T::decode(raw) {
        Ok(v) => (v.into(), false),
        Err(_) => super::text_or_hex(bytes, max),
    }
}

/// `BIT(n)`: big-endian bits as an unsigned number (the same bytes in both protocols).
fn bits(bytes: &[u8]) -> Option<u64> {
    if bytes.len() > 8 {
        return None;
    }
    Some(bytes.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
}

/// A date or time from the binary protocol as the client prints it; `None` when `bytes` are text already.
/// The binary forms: a length byte, then year (2 bytes), month, day, hour, minute, second, microseconds (4) for
/// dates; sign, days (4), hour, minute, second, microseconds (4) for `TIME`; zero values are shorter.
fn binary_temporal(name: &str, bytes: &[u8]) -> Option<String> {
    let (&len, body) = bytes.split_first()?;
    if usize::from(len) != body.len() || !matches!(len, 0 | 4 | 7 | 8 | 11 | 12) {
        return None;
    }
    let u16_at = |k: usize| Some(u16::from_le_bytes([*body.get(k)?, *body.get(k + 1)?]));
    let u32_at = |k: usize| {
        Some(u32::from_le_bytes([
            *body.get(k)?,
            *body.get(k + 1)?,
            *body.get(k + 2)?,
            *body.get(k + 3)?,
        ]))
    };
    let byte = |k: usize| body.get(k).copied().unwrap_or(0);
    let mut out = String::new();
    if name == "TIME" {
        let (negative, days, h, m, s) = if len == 0 {
            (false, 0, 0, 0, 0)
        } else {
            (byte(0) == 1, u32_at(1)?, byte(5), byte(6), byte(7))
        };
        let hours = u64::from(days) * 24 + u64::from(h);
        let sign = if negative { "-" } else { "" };
        let _ = write!(out, "{sign}{hours:02}:{m:02}:{s:02}");
        if len == 12 {
            let _ = write!(out, ".{:06}", u32_at(8)?);
        }
        return Some(out);
    }
    let (y, mo, d) = if len == 0 {
        (0, 0, 0)
    } else {
        (u16_at(0)?, byte(2), byte(3))
    };
    let _ = write!(out, "{y:04}-{mo:02}-{d:02}");
    if name != "DATE" {
        let (h, mi, s) = if len >= 7 {
            (byte(4), byte(5), byte(6))
        } else {
            (0, 0, 0)
        };
        let _ = write!(out, " {h:02}:{mi:02}:{s:02}");
        if len == 11 {
            let _ = write!(out, ".{:06}", u32_at(7)?);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_dates_and_times_read_like_the_client() {
        let t = |name: &str, bytes: &[u8]| binary_temporal(name, bytes);
        assert_eq!(t("DATE", &[0]).as_deref(), Some("0000-00-00"));
        assert_eq!(
            t("DATE", &[4, 0xe8, 0x07, 0, 0]).as_deref(),
            Some("2024-00-00")
        );
        assert_eq!(
            t("DATETIME", &[7, 0xe8, 0x07, 1, 2, 3, 4, 5]).as_deref(),
            Some("2024-01-02 03:04:05")
        );
        assert_eq!(
            t(
                "DATETIME",
                &[11, 0xe8, 0x07, 1, 2, 3, 4, 5, 0x40, 0xe2, 0x01, 0]
            )
            .as_deref(),
            Some("2024-01-02 03:04:05.123456")
        );
        assert_eq!(
            t("TIME", &[8, 0, 34, 0, 0, 0, 22, 59, 59]).as_deref(),
            Some("838:59:59")
        );
        assert_eq!(
            t("TIME", &[8, 1, 0, 0, 0, 0, 1, 0, 0]).as_deref(),
            Some("-01:00:00")
        );
        assert_eq!(t("TIME", &[0]).as_deref(), Some("00:00:00"));
        // Text is left alone.
        assert_eq!(t("DATE", b"2024-01-02"), None);
        assert_eq!(t("TIME", b"-01:00:00"), None);
    }

    #[test]
    fn bits_are_big_endian_numbers() {
        assert_eq!(bits(&[0x01, 0x02]), Some(258));
        assert_eq!(bits(&[]), Some(0));
        assert_eq!(bits(&[0; 9]), None);
    }
}
