//! JSON documents read without loss: numbers that survive 64-bit integers and floats, objects without repeated
//! keys (PostgreSQL's `json` keeps them; a JSON value cannot).

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// The JSON value of `s` when it parses, has no object with a repeated key, and every number in it survives as
/// an `i64`, `u64` or `f64`.
pub(super) fn lossless(s: &str) -> Option<Value> {
    if !numbers_are_exact(s) {
        return None;
    }
    serde_json::from_str::<Strict>(s)
        .ok()
        .map(|strict| strict.0)
}

/// A JSON value that refuses repeated keys.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("not a finite number"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(de::Error::custom("a repeated key"));
            }
            let Strict(value) = map.next_value()?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// True when every number in the JSON text `s` reads back as the same value after a trip through `i64`, `u64`
/// or `f64` (so `0.1` and `1e300` pass, `0.10000000000000000001` and `1e400` do not). Text that is not JSON may
/// pass: the parser says no to it afterwards.
fn numbers_are_exact(s: &str) -> bool {
    let bytes = s.as_bytes();
    let mut k = 0;
    while let Some(&b) = bytes.get(k) {
        match b {
            b'"' => {
                k += 1;
                while let Some(&c) = bytes.get(k) {
                    k += 1;
                    match c {
                        b'\\' => k += 1,
                        b'"' => break,
                        _ => {}
                    }
                }
            }
            b'-' | b'0'..=b'9' => {
                let start = k;
                while bytes
                    .get(k)
                    .is_some_and(|c| matches!(c, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                {
                    k += 1;
                }
                if !s.get(start..k).is_some_and(exact) {
                    return false;
                }
            }
            _ => k += 1,
        }
    }
    true
}

/// One number's text survives as an `i64`, a `u64` or an `f64`.
fn exact(lexeme: &str) -> bool {
    let integer = !lexeme.contains(['.', 'e', 'E']);
    if integer {
        return lexeme.parse::<i64>().is_ok() || lexeme.parse::<u64>().is_ok();
    }
    let Ok(x) = lexeme.parse::<f64>() else {
        return true;
    };
    if !x.is_finite() {
        return false;
    }
    match (decimal(lexeme), decimal(&format!("{x:e}"))) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// A decimal number as (negative, significant digits without leading or trailing zeros, exponent of the last
/// digit); zero is `(false, "", 0)`.
fn decimal(text: &str) -> Option<(bool, String, i64)> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(at) => (rest.get(..at)?, rest.get(at + 1..)?.parse::<i64>().ok()?),
        None => (rest, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut digits: String = int.chars().chain(frac.chars()).collect();
    let mut exponent = exponent.checked_sub(i64::try_from(frac.len()).ok()?)?;
    let trailing = digits.len() - digits.trim_end_matches('0').len();
    digits.truncate(digits.len() - trailing);
    exponent = exponent.checked_add(i64::try_from(trailing).ok()?)?;
    let digits = digits.trim_start_matches('0').to_owned();
    if digits.is_empty() {
        return Some((false, digits, 0));
    }
    Some((negative, digits, exponent))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn repeated_keys_are_not_merged_away() {
        assert_eq!(
            lossless(r#"{"a": 1, "b": {"c": [2]}}"#),
            Some(json!({"a": 1, "b": {"c": [2]}}))
        );
        assert_eq!(lossless(r#"{"a": 1, "a": 2}"#), None);
        assert_eq!(
            lossless(r#"[{"a": 1}, {"a": 2}]"#),
            Some(json!([{"a": 1}, {"a": 2}]))
        );
        assert_eq!(lossless("[1e400]"), None);
    }

    #[test]
    fn numbers_that_fit_pass_and_the_others_do_not() {
        assert!(numbers_are_exact(
            r#"{"a": [1, -2, 2.5, 0.1, 1e300, 1.0, -0, 18446744073709551615]}"#
        ));
        assert!(numbers_are_exact(
            r#"{"a": "0.10000000000000000001 \" 1e999"}"#
        ));
        assert!(!numbers_are_exact(r#"[0.10000000000000000001]"#));
        assert!(!numbers_are_exact(r#"[1e400]"#));
        assert!(!numbers_are_exact(r#"[18446744073709551616]"#));
        assert!(!numbers_are_exact(r#"[1e-400]"#));
        assert!(numbers_are_exact(r#"[0e-99999999999]"#));
    }
}
