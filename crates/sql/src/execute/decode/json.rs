//! Whether the numbers of a JSON document survive parsing into 64-bit integers and floats unchanged.

/// True when every number in the JSON text `s` reads back as the same value after a trip through `i64`, `u64`
/// or `f64` (so `0.1` and `1e300` pass, `0.10000000000000000001` and `1e400` do not). Text that is not JSON may
/// pass: the parser says no to it afterwards.
pub(super) fn numbers_are_exact(s: &str) -> bool {
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
