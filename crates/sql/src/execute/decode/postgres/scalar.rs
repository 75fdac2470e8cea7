//! PostgreSQL's text output of single values rendered from their binary form: floats, numeric, money, `uuid`,
//! bit strings, `pg_lsn`, `tid`, `tsvector`, `"char"`, and `bytea` in the escape format.

use std::fmt::Write as _;

use serde_json::Value;

use super::{Out, Reader};

/// `NaN`, `Infinity` or `-Infinity`, as PostgreSQL spells them.
pub(super) fn float_special(x: f64) -> String {
    if x.is_nan() {
        "NaN"
    } else if x > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
    }
    .to_owned()
}

/// A `float4` as PostgreSQL prints it: the shortest exact digits, in E-notation outside 1e-4 ≤ |x| < 1e6.
pub(super) fn float4(x: f32, out: &mut Out) {
    shortest(f64::from(x), &format!("{x:e}"), 6, out);
}

/// A `float8` as PostgreSQL prints it: the shortest exact digits, in E-notation outside 1e-4 ≤ |x| < 1e15.
pub(super) fn float8(x: f64, out: &mut Out) {
    shortest(x, &format!("{x:e}"), 15, out);
}

/// Writes a float from Rust's shortest scientific form (`1.5e-7`) in PostgreSQL's layout: fixed notation when
/// the decimal exponent is in `-4..limit`, else `d.ddde+XX` with at least two exponent digits.
fn shortest(x: f64, scientific: &str, limit: i32, out: &mut Out) {
    if !x.is_finite() {
        out.push_str(&float_special(x));
        return;
    }
    let (negative, rest) = match scientific.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, scientific),
    };
    let (mantissa, exponent) = rest.split_once('e').unwrap_or((rest, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if negative {
        out.push('-');
    }
    if digits == "0" {
        out.push('0');
        return;
    }
    if (-4..limit).contains(&exponent) {
        let point = exponent + 1;
        if point <= 0 {
            out.push_str("0.");
            for _ in point..0 {
                out.push('0');
            }
            out.push_str(&digits);
        } else {
            let point = usize::try_from(point).unwrap_or(0);
            match (digits.get(..point), digits.get(point..)) {
                (Some(int), Some(frac)) if !frac.is_empty() => {
                    out.push_str(int);
                    out.push('.');
                    out.push_str(frac);
                }
                _ => {
                    out.push_str(&digits);
                    for _ in digits.len()..point {
                        out.push('0');
                    }
                }
            }
        }
    } else {
        let (first, more) = digits.split_at_checked(1).unwrap_or((&digits, ""));
        out.push_str(first);
        if !more.is_empty() {
            out.push('.');
            out.push_str(more);
        }
        let sign = if exponent < 0 { '-' } else { '+' };
        let _ = write!(out, "e{sign}{:02}", exponent.unsigned_abs());
    }
}

/// A NUMERIC exactly as PostgreSQL writes it, with its display scale (`12.5000` stays `12.5000`): digit count,
/// weight, sign, display scale, then base-10000 digits.
pub(super) fn numeric(bytes: &[u8], out: &mut Out) -> Option<()> {
    let mut r = Reader(bytes);
    let ndigits = usize::from(r.u16()?);
    let weight = i32::from(r.i16()?);
    let sign = r.u16()?;
    let dscale = usize::from(r.u16()?);
    match sign {
        0xC000 => {
            out.push_str("NaN");
            return Some(());
        }
        0xD000 => {
            out.push_str("Infinity");
            return Some(());
        }
        0xF000 => {
            out.push_str("-Infinity");
            return Some(());
        }
        0x0000 | 0x4000 => {}
        _ => return None,
    }
    let digits: Vec<u16> = (0..ndigits).map(|_| r.u16()).collect::<Option<_>>()?;
    r.end()?;
    let group = |index: i32| -> u16 {
        usize::try_from(index)
            .ok()
            .and_then(|k| digits.get(k))
            .copied()
            .unwrap_or(0)
    };
    let mut int = String::new();
    for w in (0..=weight).rev() {
        let g = group(weight - w);
        if int.is_empty() {
            if g != 0 {
                int = g.to_string();
            }
        } else {
            let _ = write!(int, "{g:04}");
        }
    }
    if int.is_empty() {
        int.push('0');
    }
    let mut frac = String::new();
    let mut k = 0i32;
    while frac.len() < dscale {
        let _ = write!(frac, "{:04}", group(weight + 1 + k));
        k += 1;
    }
    frac.truncate(dscale);
    if sign == 0x4000 && (int != "0" || frac.bytes().any(|b| b != b'0')) {
        out.push('-');
    }
    out.push_str(&int);
    if dscale > 0 {
        out.push('.');
        out.push_str(&frac);
    }
    Some(())
}

/// `money` in the C locale's form: `$1,234.56`, `-$1,234.56` (the binary value is in cents and carries no
/// locale).
pub(super) fn money(cents: i64, out: &mut Out) {
    let abs = cents.unsigned_abs();
    let (units, fraction) = (abs / 100, abs % 100);
    let digits = units.to_string();
    if cents < 0 {
        out.push('-');
    }
    out.push('$');
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    let _ = write!(out, ".{fraction:02}");
}

/// A UUID in lowercase with hyphens.
pub(super) fn uuid(bytes: &[u8], out: &mut Out) -> Option<()> {
    if bytes.len() != 16 {
        return None;
    }
    for (k, b) in bytes.iter().enumerate() {
        if matches!(k, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        let _ = write!(out, "{b:02x}");
    }
    Some(())
}

/// `bit` and `varbit`: the bit count, then the bits, most significant first.
pub(super) fn bits(bytes: &[u8], out: &mut Out) -> Option<()> {
    let mut r = Reader(bytes);
    let count = usize::try_from(r.i32()?).ok()?;
    let data = r.0;
    if data.len() != count.div_ceil(8) {
        return None;
    }
    let mut chunk = String::with_capacity(1024);
    for k in 0..count {
        let byte = data.get(k / 8).copied().unwrap_or(0);
        chunk.push(if byte & (0x80 >> (k % 8)) != 0 {
            '1'
        } else {
            '0'
        });
        if chunk.len() == 1024 {
            out.push_str(&chunk);
            chunk.clear();
            if out.is_full() {
                return Some(());
            }
        }
    }
    out.push_str(&chunk);
    Some(())
}

/// `pg_lsn`: the high and low 32 bits in uppercase hex, `16/B374D848`.
pub(super) fn lsn(v: u64, out: &mut Out) {
    let _ = write!(out, "{:X}/{:X}", v >> 32, v & 0xffff_ffff);
}

/// `tid`: block and offset, `(0,1)`.
pub(super) fn tid(bytes: &[u8], out: &mut Out) -> Option<()> {
    let mut r = Reader(bytes);
    let (block, offset) = (r.u32()?, r.u16()?);
    r.end()?;
    let _ = write!(out, "({block},{offset})");
    Some(())
}

/// `tsvector`: lexemes in quotes (quotes and backslashes doubled), each with its positions and weights.
pub(super) fn tsvector(bytes: &[u8], out: &mut Out) -> Option<()> {
    let mut r = Reader(bytes);
    let count = r.i32()?;
    for k in 0..count {
        if k > 0 {
            out.push(' ');
        }
        let end = r.0.iter().position(|b| *b == 0)?;
        let lexeme = std::str::from_utf8(r.take(end)?).ok()?;
        r.u8()?;
        out.push('\'');
        for c in lexeme.chars() {
            if c == '\'' || c == '\\' {
                out.push(c);
            }
            out.push(c);
        }
        out.push('\'');
        let positions = r.u16()?;
        for p in 0..positions {
            let word = r.u16()?;
            out.push(if p == 0 { ':' } else { ',' });
            let _ = write!(out, "{}", word & 0x3fff);
            match word >> 14 {
                3 => out.push('A'),
                2 => out.push('B'),
                1 => out.push('C'),
                _ => {}
            }
        }
        if out.is_full() {
            return Some(());
        }
    }
    r.end()
}

/// `"char"`: one byte, as itself, or `\ooo` in octal when its high bit is set.
pub(super) fn char(bytes: &[u8], out: &mut Out) -> Option<()> {
    match bytes {
        [] | [0] => {}
        [b] if b.is_ascii() => out.push(char::from(*b)),
        [b] => {
            let _ = write!(out, "\\{b:03o}");
        }
        _ => return None,
    }
    Some(())
}

/// `bytea` in the escape format (`bytea_output = escape`: `\\` and `\ooo` octal escapes) as hex.
pub(super) fn bytea_escape(s: &str, max: usize) -> (Value, bool) {
    let mut bytes = Vec::new();
    let mut out = Out::new(max);
    out.push_str("\\x");
    let mut rest = s.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        match (b, tail) {
            (b'\\', [b'\\', more @ ..]) => {
                bytes.push(b'\\');
                rest = more;
            }
            (b'\\', [a, b2, c, more @ ..]) => {
                let digit = |d: u8| d.checked_sub(b'0').filter(|v| *v < 8);
                let (Some(a), Some(b2), Some(c)) = (digit(*a), digit(*b2), digit(*c)) else {
                    return super::super::text(s, max);
                };
                bytes.push((a << 6) | (b2 << 3) | c);
                rest = more;
            }
            _ => {
                bytes.push(b);
                rest = tail;
            }
        }
        if bytes.len() >= 4096 {
            super::super::push_hex(&mut out, &bytes);
            bytes.clear();
            if out.is_full() {
                return out.finish();
            }
        }
    }
    super::super::push_hex(&mut out, &bytes);
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f8(x: f64) -> String {
        let mut out = Out::new(100);
        float8(x, &mut out);
        out.as_str().to_owned()
    }

    fn f4(x: f32) -> String {
        let mut out = Out::new(100);
        float4(x, &mut out);
        out.as_str().to_owned()
    }

    #[test]
    fn floats_are_laid_out_like_postgres() {
        assert_eq!(f8(1e15), "1e+15");
        assert_eq!(f8(123456789012345.0), "123456789012345");
        assert_eq!(f8(1e-5), "1e-05");
        assert_eq!(f8(1.5e300), "1.5e+300");
        assert_eq!(f8(0.0001), "0.0001");
        assert_eq!(f8(-0.0), "-0");
        assert_eq!(f8(5e-324), "5e-324");
        assert_eq!(f8(100.0), "100");
        assert_eq!(f8(1.7976931348623157e308), "1.7976931348623157e+308");
        assert_eq!(f8(1234567890123456.0), "1.234567890123456e+15");
        assert_eq!(f8(0.000012345), "1.2345e-05");
        assert_eq!(f8(f64::NAN), "NaN");
        assert_eq!(f4(1e6), "1e+06");
        assert_eq!(f4(123456.0), "123456");
        assert_eq!(f4(0.1), "0.1");
        assert_eq!(f4(3.4e38), "3.4e+38");
        assert_eq!(f4(1234567.0), "1.234567e+06");
    }

    #[test]
    fn money_and_numeric_and_escape_bytea() {
        let mut out = Out::new(100);
        money(-123456789, &mut out);
        assert_eq!(out.as_str(), "-$1,234,567.89");
        let mut out = Out::new(100);
        money(5, &mut out);
        assert_eq!(out.as_str(), "$0.05");
        // 0.000 (scale 3) and 12.30 negative.
        let mut out = Out::new(100);
        numeric(&[0, 0, 0, 0, 0, 0, 0, 3], &mut out).unwrap();
        assert_eq!(out.as_str(), "0.000");
        let mut out = Out::new(100);
        numeric(&[0, 2, 0, 0, 0x40, 0, 0, 2, 0, 12, 0x0b, 0xb8], &mut out).unwrap();
        assert_eq!(out.as_str(), "-12.30");
        assert_eq!(
            bytea_escape(r"a\\\000\377", 100),
            (serde_json::json!("\\x615c00ff"), false)
        );
    }
}
