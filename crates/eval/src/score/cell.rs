//! Cells as the scorers compare them.
//!
//! The official scorers compare Python values: `1 == 1.0`, `True == 1`, `None == None`, `'1' != 1`, and
//! `Decimal('12.50') == Decimal('12.5') == 12.5`. Steward's values come as JSON (see steward-sql's
//! `QueryResult`): numbers, strings, `null`, booleans, and exact decimals (PostgreSQL `numeric`, MySQL
//! `DECIMAL`) as strings such as `"12.50"` that carry no type. So:
//!
//! - NULL equals NULL (Python's `None == None`).
//! - Booleans are the integers 1 and 0 (Python's `True == 1`).
//! - JSON numbers are numbers; an integral float is that integer (`1.0` is `1`).
//! - A string that is a plain decimal number — an optional `-`, digits without a leading zero (`0` itself
//!   and `0.5` are fine, `007` is not), an optional `.` and digits, no exponent — is that number, so that
//!   an engine's decimal meets a float or an integer computed another way: `"12.50"` equals `12.5`, `"3"`
//!   and `"3.00"` equal `3`. **This departs from the official scorers on SQLite**, where a TEXT value `'3'`
//!   never equals the INTEGER `3`: a prediction that casts a number stored as text is accepted here. Leading
//!   zeros are excluded so that codes such as `'007'` stay text.
//! - Non-integral numbers are equal when they agree to 12 significant digits (the "tiny epsilon": a float
//!   average and an exact decimal average of the same numbers differ in their last digits). Python compares
//!   floats exactly; both results normally come from the same engine, where the same computation gives the
//!   same bits, so this only forgives rounding noise between different computations.
//! - Other strings compare exactly (case and spaces matter, as in Python); JSON arrays and objects compare
//!   by their JSON text.

use std::cmp::Ordering;

use serde_json::Value;

/// A cell, normalised.
#[derive(Clone, Debug)]
pub(crate) enum Cell {
    /// NULL.
    Null,
    /// An integer (booleans and integral floats and decimals too).
    Int(i128),
    /// A number that is not an integer.
    Float(f64),
    /// Text (and any JSON array or object, as its JSON text).
    Text(String),
}

/// Largest magnitude kept as an integer (i128 holds about 1.7e38).
const INT_LIMIT: f64 = 1e38;

impl Cell {
    /// The cell of a JSON value.
    pub(crate) fn of(value: &Value) -> Self {
        match value {
            Value::Null => Cell::Null,
            Value::Bool(b) => Cell::Int(i128::from(*b)),
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Cell::Int(i128::from(i))
                } else if let Some(u) = n.as_u64() {
                    Cell::Int(i128::from(u))
                } else {
                    n.as_f64().map_or(Cell::Text(n.to_string()), float)
                }
            }
            Value::String(s) => decimal(s).unwrap_or_else(|| Cell::Text(s.clone())),
            other => Cell::Text(other.to_string()),
        }
    }

    /// The exact form the Spider and BIRD scorers (and defog's first, exact test) compare.
    pub(crate) fn key(&self) -> Key {
        match self {
            Cell::Null => Key::Null,
            Cell::Int(i) => Key::Int(*i),
            Cell::Float(x) => {
                let r = round12(*x);
                if r.fract() == 0.0 && r.abs() < INT_LIMIT {
                    // Rounding noise around an integer: `2.0000000000000004` is `2`.
                    Key::Int(r as i128)
                } else {
                    // `+ 0.0` turns -0.0 into 0.0.
                    Key::Float((r + 0.0).to_bits())
                }
            }
            Cell::Text(s) => Key::Text(s.clone()),
        }
    }

    fn number(&self) -> Option<f64> {
        match self {
            Cell::Int(i) => Some(*i as f64),
            Cell::Float(x) => Some(*x),
            _ => None,
        }
    }

    /// pandas' `assert_series_equal`/`assert_frame_equal` with their default tolerances (defog's subset
    /// test): integers exactly, other numbers within `atol + rtol·|b|` with `rtol = 1e-5` and `atol = 1e-8`,
    /// NULL with NULL, text exactly.
    pub(crate) fn close(&self, other: &Cell) -> bool {
        match (self, other) {
            (Cell::Null, Cell::Null) => true,
            (Cell::Int(a), Cell::Int(b)) => a == b,
            (Cell::Text(a), Cell::Text(b)) => a == b,
            _ => match (self.number(), other.number()) {
                (Some(a), Some(b)) => (a - b).abs() <= 1e-8 + 1e-5 * b.abs(),
                _ => false,
            },
        }
    }

    /// A total order for sorting: NULL, then numbers by value, then text.
    pub(crate) fn order(&self, other: &Cell) -> Ordering {
        let rank = |c: &Cell| match c {
            Cell::Null => 0,
            Cell::Int(_) | Cell::Float(_) => 1,
            Cell::Text(_) => 2,
        };
        match (self, other) {
            (Cell::Int(a), Cell::Int(b)) => a.cmp(b),
            (Cell::Text(a), Cell::Text(b)) => a.cmp(b),
            _ => match (self.number(), other.number()) {
                (Some(a), Some(b)) => a.total_cmp(&b),
                _ => rank(self).cmp(&rank(other)),
            },
        }
    }
}

/// A cell's exact form: equal keys are equal values; hashable and totally ordered (the order is not
/// numeric, only consistent).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Key {
    /// NULL.
    Null,
    /// An integer.
    Int(i128),
    /// A non-integral number rounded to 12 significant digits, as its bits.
    Float(u64),
    /// Text.
    Text(String),
}

/// A float: an integer when integral, else itself.
fn float(x: f64) -> Cell {
    if x.is_finite() && x.fract() == 0.0 && x.abs() < INT_LIMIT {
        Cell::Int(x as i128)
    } else {
        Cell::Float(x)
    }
}

/// `x` rounded to 12 significant digits.
fn round12(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    format!("{x:.11e}").parse().unwrap_or(x)
}

/// A plain decimal number written as text (see the module's rules), or `None`.
fn decimal(s: &str) -> Option<Cell> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    let (whole, fraction) = match digits.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (digits, None),
    };
    let all_digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(whole) || (whole.len() > 1 && whole.starts_with('0')) {
        return None;
    }
    if fraction.is_some_and(|f| !all_digits(f)) {
        return None;
    }
    if fraction.is_none_or(|f| f.bytes().all(|b| b == b'0'))
        && let Ok(i) = whole.parse::<i128>()
    {
        return Some(Cell::Int(if s.starts_with('-') { -i } else { i }));
    }
    s.parse::<f64>().ok().map(float)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(v: Value) -> Key {
        Cell::of(&v).key()
    }

    #[test]
    fn numbers_meet_across_types() {
        assert_eq!(key(json!(1)), key(json!(1.0)));
        assert_eq!(key(json!(1)), key(json!("1.00")));
        assert_eq!(key(json!(true)), key(json!(1)));
        assert_eq!(key(json!("12.50")), key(json!(12.5)));
        assert_eq!(key(json!(2.0000000000000004)), key(json!(2)));
        assert_eq!(key(json!(0.30000000000000004)), key(json!("0.3")));
        assert_eq!(key(json!("-0.0")), key(json!(0)));
        assert_ne!(key(json!(0.3)), key(json!(0.31)));
        assert_ne!(key(json!("007")), key(json!(7)));
        assert_ne!(key(json!("1e3")), key(json!(1000)));
        assert_ne!(key(json!("abc")), key(json!("ABC")));
        assert_eq!(key(json!(null)), key(json!(null)));
        assert_ne!(key(json!(null)), key(json!(0)));
        assert_ne!(key(json!(null)), key(json!("")));
    }

    #[test]
    fn tolerance_is_pandas_default() {
        let c = |v: Value| Cell::of(&v);
        assert!(c(json!(2.333333)).close(&c(json!(2.3333333333))));
        assert!(!c(json!(2.33)).close(&c(json!(2.3333333333))));
        assert!(!c(json!(1_000_001)).close(&c(json!(1_000_002))));
        assert!(c(json!(null)).close(&c(json!(null))));
    }
}
