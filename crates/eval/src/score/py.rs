//! Cells as the official scorers see them: Python values.
//!
//! The official scripts fetch rows with Python's database drivers and compare the Python values they get:
//! `sqlite3` gives `int`, `float`, `str` and `None` (and `bytes` for BLOBs), `psycopg2` adds
//! `decimal.Decimal` for NUMERIC. Python's `==` on them is what decides, so here:
//!
//! - `None` equals `None` only.
//! - Numbers compare by exact value across types: `1 == 1.0 == Decimal('1.00')`, `True == 1`,
//!   `Decimal('12.5') == 12.5`, but `Decimal('0.1') != 0.1` (the float is not exactly one tenth) and
//!   `0.1 + 0.2 != 0.3`. No tolerance.
//! - Text equals the same text only: **`'3' != 3`** (a TEXT value never equals a number).
//!
//! Steward's rows come as JSON with each column's engine type: a JSON number is an `int` (integers) or a
//! `float`; a string is `str`, except in a NUMERIC/DECIMAL column, where it is that engine's exact decimal
//! (`Decimal`). A BLOB, which Steward renders as `\x…` text, is taken as that text (Python would have
//! `bytes`, equal to no `str`: a difference only for a BLOB compared with the same `\x…` written as text).

use std::cmp::Ordering;

use serde_json::Value;

/// A Python value.
#[derive(Clone, Debug)]
pub(crate) enum Py {
    /// `None`.
    None,
    /// `int` (and `bool`).
    Int(i128),
    /// `float`.
    Float(f64),
    /// `decimal.Decimal`: its text as the engine wrote it, and its value when it fits an f64 exactly.
    Decimal(Dec),
    /// `str`.
    Str(String),
}

/// An exact decimal: sign, digits without the point, and the count of digits after the point.
#[derive(Clone, Debug)]
pub(crate) struct Dec {
    text: String,
    negative: bool,
    digits: u128,
    scale: u32,
    /// Set when the digits do not fit 128 bits: compared by normalised text only.
    overflow: Option<String>,
}

/// Largest magnitude kept as an integer key.
const INT_LIMIT: f64 = 1e38;

impl Py {
    /// The Python value of a JSON cell of a column whose engine type is `type_name` (empty when unknown).
    pub(crate) fn of(value: &Value, type_name: &str) -> Py {
        match value {
            Value::Null => Py::None,
            Value::Bool(b) => Py::Int(i128::from(*b)),
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Py::Int(i128::from(i))
                } else if let Some(u) = n.as_u64() {
                    Py::Int(i128::from(u))
                } else {
                    n.as_f64().map_or_else(|| Py::Str(n.to_string()), Py::Float)
                }
            }
            Value::String(s) => {
                if is_decimal_type(type_name)
                    && let Some(d) = Dec::parse(s)
                {
                    return Py::Decimal(d);
                }
                if is_float_type(type_name) {
                    match s.as_str() {
                        "Inf" | "Infinity" => return Py::Float(f64::INFINITY),
                        "-Inf" | "-Infinity" => return Py::Float(f64::NEG_INFINITY),
                        "NaN" => return Py::Float(f64::NAN),
                        _ => {}
                    }
                }
                Py::Str(s.clone())
            }
            other => Py::Str(other.to_string()),
        }
    }

    /// A key such that two values are `==` in Python exactly when their keys are equal (and so hash alike).
    pub(crate) fn key(&self) -> PyKey {
        match self {
            Py::None => PyKey::None,
            Py::Int(i) => PyKey::Int(*i),
            Py::Float(x) => float_key(*x),
            Py::Decimal(d) => d.key(),
            Py::Str(s) => PyKey::Str(s.clone()),
        }
    }

    /// Whether it is a number (`int`, `float`, `Decimal`).
    pub(crate) fn is_number(&self) -> bool {
        matches!(self, Py::Int(_) | Py::Float(_) | Py::Decimal(_))
    }

    /// The value as an f64 (numbers only).
    pub(crate) fn as_f64(&self) -> Option<f64> {
        match self {
            Py::Int(i) => Some(*i as f64),
            Py::Float(x) => Some(*x),
            Py::Decimal(d) => d.text.parse().ok(),
            _ => None,
        }
    }

    /// Python's `str(x) + str(type(x))`, the sort key test-suite-sql-eval's `unorder_row` uses.
    pub(crate) fn str_and_type(&self) -> String {
        match self {
            Py::None => "None<class 'NoneType'>".to_owned(),
            Py::Int(i) => format!("{i}<class 'int'>"),
            Py::Float(x) => format!("{}<class 'float'>", float_repr(*x)),
            Py::Decimal(d) => format!("{}<class 'decimal.Decimal'>", d.text),
            Py::Str(s) => format!("{s}<class 'str'>"),
        }
    }

    /// Python's `<` between two values as pandas sorts them: numbers by value, text by code points; `None`
    /// is not ordered here (pandas puts missing values last itself). `None` when Python would raise
    /// `TypeError` (`'<' not supported between instances of 'str' and 'int'`).
    pub(crate) fn py_cmp(&self, other: &Py) -> Option<Ordering> {
        match (self, other) {
            (Py::Str(a), Py::Str(b)) => Some(a.cmp(b)),
            (Py::Int(a), Py::Int(b)) => Some(a.cmp(b)),
            _ if self.is_number() && other.is_number() => {
                let (a, b) = (self.as_f64()?, other.as_f64()?);
                a.partial_cmp(&b)
            }
            _ => None,
        }
    }

    /// Whether it is missing for pandas (`None`, NaN).
    pub(crate) fn is_na(&self) -> bool {
        match self {
            Py::None => true,
            Py::Float(x) => x.is_nan(),
            _ => false,
        }
    }
}

/// A value's identity under Python's `==`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum PyKey {
    /// `None`.
    None,
    /// An integral number.
    Int(i128),
    /// A non-integral number that is exactly an f64, as its bits.
    Float(u64),
    /// A non-integral decimal that no f64 equals, normalised (`-12.50` → `-12.5`).
    Decimal(String),
    /// Text.
    Str(String),
}

fn float_key(x: f64) -> PyKey {
    if x.is_finite() && x.fract() == 0.0 && x.abs() < INT_LIMIT {
        PyKey::Int(x as i128)
    } else {
        PyKey::Float(x.to_bits())
    }
}

fn is_decimal_type(type_name: &str) -> bool {
    let t = type_name.to_ascii_uppercase();
    t.contains("NUMERIC") || t.contains("DECIMAL")
}

fn is_float_type(type_name: &str) -> bool {
    let t = type_name.to_ascii_uppercase();
    t.contains("REAL") || t.contains("FLOAT") || t.contains("DOUBLE")
}

impl Dec {
    /// A plain decimal (`-12.50`, `3`, `.5`), or `None`.
    fn parse(text: &str) -> Option<Dec> {
        let t = text.trim();
        let (negative, body) = match t.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, t.strip_prefix('+').unwrap_or(t)),
        };
        let (whole, fraction) = body.split_once('.').unwrap_or((body, ""));
        if whole.is_empty() && fraction.is_empty() {
            return None;
        }
        if !whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let all = format!("{whole}{fraction}");
        let scale = u32::try_from(fraction.len()).ok()?;
        let (digits, overflow) = match all.parse::<u128>() {
            Ok(d) => (d, None),
            Err(_) => (0, Some(normalise(negative, whole, fraction))),
        };
        Some(Dec {
            text: t.to_owned(),
            negative,
            digits,
            scale,
            overflow,
        })
    }

    fn key(&self) -> PyKey {
        if let Some(text) = &self.overflow {
            return PyKey::Decimal(text.clone());
        }
        // Strip trailing zeros of the fraction.
        let (mut digits, mut scale) = (self.digits, self.scale);
        while scale > 0 && digits % 10 == 0 {
            digits /= 10;
            scale -= 1;
        }
        if scale == 0 {
            if let Ok(i) = i128::try_from(digits) {
                return PyKey::Int(if self.negative { -i } else { i });
            }
        } else if let Some(x) = self.exact_f64(digits, scale) {
            return PyKey::Float(x.to_bits());
        }
        let text = digits.to_string();
        let s = scale as usize;
        let padded = format!("{text:0>width$}", width = s + 1);
        let (w, f) = padded.split_at(padded.len() - s);
        PyKey::Decimal(normalise(self.negative, w, f))
    }

    /// The f64 equal to `digits / 10^scale` (with the sign), when one is exactly equal.
    fn exact_f64(&self, digits: u128, scale: u32) -> Option<f64> {
        let text = format!(
            "{}{}e-{scale}",
            if self.negative { "-" } else { "" },
            digits
        );
        let x: f64 = text.parse().ok()?;
        if !x.is_finite() || x == 0.0 {
            return None;
        }
        // x = m · 2^e with m odd; x equals digits/10^scale iff digits · 2^k == m · 10^scale (k = -e ≤ scale).
        let bits = x.abs().to_bits();
        let exponent = ((bits >> 52) & 0x7ff) as i32;
        let fraction = bits & ((1u64 << 52) - 1);
        let (mut m, mut e) = if exponent == 0 {
            (fraction, -1074)
        } else {
            (fraction | (1u64 << 52), exponent - 1075)
        };
        while m % 2 == 0 && m > 0 {
            m /= 2;
            e += 1;
        }
        if e >= 0 {
            return None; // an integer: handled as such by the caller
        }
        let k = u32::try_from(-e).ok()?;
        if k > scale {
            return None;
        }
        let left = digits.checked_mul(2u128.checked_pow(k)?)?;
        let right = u128::from(m).checked_mul(10u128.checked_pow(scale)?)?;
        (left == right).then_some(x)
    }
}

/// `-w.f` without leading zeros of `w` and trailing zeros of `f`.
fn normalise(negative: bool, whole: &str, fraction: &str) -> String {
    let w = whole.trim_start_matches('0');
    let f = fraction.trim_end_matches('0');
    let w = if w.is_empty() { "0" } else { w };
    let sign = if negative && (w != "0" || !f.is_empty()) {
        "-"
    } else {
        ""
    };
    if f.is_empty() {
        format!("{sign}{w}")
    } else {
        format!("{sign}{w}.{f}")
    }
}

/// Python's `repr(float)`: the shortest digits that read back, fixed notation for 1e-4 ≤ |x| < 1e16 (always
/// with a `.`), else `d.ddde±XX`.
pub(crate) fn float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if x < 0.0 { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let n = digits.len() as i32;
        let body = if exp >= 0 {
            let point = (exp + 1) as usize;
            if digits.len() <= point {
                format!("{digits:0<point$}.0")
            } else {
                format!("{}.{}", &digits[..point], &digits[point..])
            }
        } else {
            let zeros = (-exp - 1) as usize;
            format!("0.{}{digits}", "0".repeat(zeros))
        };
        let _ = n;
        format!("{sign}{body}")
    } else {
        let body = if digits.len() > 1 {
            format!("{}.{}", &digits[..1], &digits[1..])
        } else {
            digits
        };
        let esign = if exp < 0 { "-" } else { "+" };
        format!("{sign}{body}e{esign}{:02}", exp.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(v: Value, t: &str) -> PyKey {
        Py::of(&v, t).key()
    }

    #[test]
    fn python_equality() {
        assert_eq!(key(json!(1), ""), key(json!(1.0), ""));
        assert_eq!(key(json!(true), ""), key(json!(1), ""));
        assert_ne!(key(json!("3"), "TEXT"), key(json!(3), ""));
        assert_ne!(key(json!("3"), ""), key(json!(3.0), ""));
        assert_eq!(key(json!("3.00"), "NUMERIC"), key(json!(3), ""));
        assert_eq!(key(json!("12.50"), "NUMERIC"), key(json!(12.5), ""));
        assert_ne!(key(json!("0.1"), "NUMERIC"), key(json!(0.1), ""));
        assert_eq!(key(json!("0.10"), "NUMERIC"), key(json!("0.1"), "NUMERIC"));
        assert_ne!(key(json!(0.30000000000000004), ""), key(json!(0.3), ""));
        assert_eq!(key(json!(null), ""), key(json!(null), ""));
        assert_ne!(key(json!(null), ""), key(json!(0), ""));
        assert_eq!(key(json!("-0.0"), "NUMERIC"), key(json!(0), ""));
    }

    #[test]
    fn python_repr() {
        for (x, want) in [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1.5, "1.5"),
            (123.456, "123.456"),
            (1e16, "1e+16"),
            (1.5e-5, "1.5e-05"),
            (0.0001, "0.0001"),
            (-2.5, "-2.5"),
            (1e15, "1000000000000000.0"),
            (2.0 / 3.0, "0.6666666666666666"),
        ] {
            assert_eq!(float_repr(x), want);
        }
    }
}
