//! PostgreSQL's lexer (`scan.l`, PostgreSQL 15): `'…'` strings (with backslash escapes when
//! `standard_conforming_strings` is off), `E'…'`, `B'…'`, `X'…'`, `N'…'`, `U&'…'` strings, dollar quotes,
//! `"…"` and `U&"…"` names, nested `/* /* */ */` comments, `--` comments that also end operators, and strings
//! continued over a newline (`'a'` newline `'b'` is `'ab'`, in the first part's escape mode).

use super::{Kind, Scan, quote_str, undouble};

fn ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn ident_cont(b: u8) -> bool {
    ident_start(b) || b.is_ascii_digit() || b == b'$'
}

fn op_char(b: u8) -> bool {
    b"~!@#^&|`?+-*/%<>=".contains(&b)
}

/// How a string's body is read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Body {
    /// `'…'` under `standard_conforming_strings`: only `''` is special.
    Plain,
    /// `E'…'`, or `'…'` without `standard_conforming_strings`: backslash escapes too.
    Escaped,
    /// `B'…'` and `X'…'`: nothing is special; the first quote ends it.
    Bits,
    /// `U&'…'`: like plain; its escapes are decoded once `UESCAPE` is known.
    Unicode,
}

pub(super) fn scan(s: &mut Scan<'_>, standard_conforming_strings: bool) {
    let plain = if standard_conforming_strings {
        Body::Plain
    } else {
        Body::Escaped
    };
    while !s.done(s.i) {
        let i = s.i;
        let c = s.at(i);
        let next = s.at(i + 1);
        match c {
            b' ' | b'\t' | b'\n' | b'\r' | 0x0c => s.i += 1,
            b'-' if next == b'-' => {
                let end = s.run(i + 2, |b| b != b'\n' && b != b'\r');
                s.push(Kind::Comment, i, end);
            }
            b'/' if next == b'*' => block_comment(s, i),
            b'\'' => string(s, i, i, plain),
            b'"' => quoted(s, i, i),
            b'$' => dollar(s, i),
            b'e' | b'E' if next == b'\'' => string(s, i, i + 1, Body::Escaped),
            b'b' | b'B' | b'x' | b'X' if next == b'\'' => string(s, i, i + 1, Body::Bits),
            b'u' | b'U' if next == b'&' && s.at(i + 2) == b'\'' => {
                if !standard_conforming_strings {
                    s.problem(
                        "parse_error",
                        "U&'…' strings cannot be used when standard_conforming_strings is off; write the characters themselves.",
                    );
                }
                string(s, i, i + 2, Body::Unicode);
            }
            b'u' | b'U' if next == b'&' && s.at(i + 2) == b'"' => quoted(s, i, i + 2),
            // `N'…'` is the keyword NCHAR followed by an ordinary string.
            b'n' | b'N' if next == b'\'' => s.push(Kind::Word, i, i + 1),
            c if ident_start(c) => {
                let end = s.run(i + 1, ident_cont);
                s.push_word(i, end, b'"', true);
            }
            c if c.is_ascii_digit() || (c == b'.' && next.is_ascii_digit()) => number(s, i),
            b':' if next == b':' => s.push(Kind::Op, i, i + 2),
            c if op_char(c) => operator(s, i),
            _ => s.push(Kind::Punct, i, i + 1),
        }
    }
}

/// `/* … */`, nested.
fn block_comment(s: &mut Scan<'_>, start: usize) {
    let mut depth = 0usize;
    let mut i = start + 2;
    loop {
        if s.done(i) {
            s.unclosed("A /* comment is not closed; close it with */.");
            s.push(Kind::Comment, start, i);
            return;
        }
        match (s.at(i), s.at(i + 1)) {
            (b'/', b'*') => {
                depth += 1;
                i += 2;
            }
            (b'*', b'/') => {
                i += 2;
                if depth == 0 {
                    s.push(Kind::Comment, start, i);
                    return;
                }
                depth -= 1;
            }
            _ => i += 1,
        }
    }
}

/// A string starting at `start` whose opening quote is at `quote`.
fn string(s: &mut Scan<'_>, start: usize, quote: usize, body: Body) {
    let mut content: Vec<u8> = Vec::new();
    let mut i = quote + 1;
    let mut continued = false;
    loop {
        if s.done(i) {
            s.unclosed("A string is not closed; close it with '.");
            break;
        }
        let c = s.at(i);
        if c == b'\'' {
            if body != Body::Bits && s.at(i + 1) == b'\'' {
                content.push(b'\'');
                i += 2;
                continue;
            }
            i += 1;
            match continuation(s, i) {
                Some(q) => {
                    continued = true;
                    i = q + 1;
                    continue;
                }
                None => break,
            }
        }
        if c == b'\\' && body == Body::Escaped {
            i = escape(s, i, &mut content);
            continue;
        }
        content.push(c);
        i += 1;
    }
    let text = String::from_utf8_lossy(&content).into_owned();
    match body {
        Body::Plain if !continued && start == quote => s.push(Kind::Str, start, i),
        // Decoded once its UESCAPE is known.
        Body::Unicode => s.push_with(Kind::UnicodeStr, start, i, None, Some(text)),
        _ => s.push_with(Kind::Str, start, i, Some(quote_str(&text)), None),
    }
}

/// After a closing quote at `i - 1`: the position of the quote that continues the string over a newline
/// (`'a'` newline `'b'`), if any. Only spaces and `--` comments may come between, and at least one newline.
fn continuation(s: &Scan<'_>, mut i: usize) -> Option<usize> {
    let mut newline = false;
    loop {
        match s.at(i) {
            b' ' | b'\t' | 0x0c => i += 1,
            b'\n' | b'\r' => {
                newline = true;
                i += 1;
            }
            b'-' if s.at(i + 1) == b'-' => i = s.run(i + 2, |b| b != b'\n' && b != b'\r'),
            b'\'' if newline => return Some(i),
            _ => return None,
        }
    }
}

/// One backslash escape of an `E'…'` string at `i`; returns where it ends.
fn escape(s: &Scan<'_>, i: usize, out: &mut Vec<u8>) -> usize {
    let c = s.at(i + 1);
    if s.done(i + 1) {
        return i + 1;
    }
    let hex = |from: usize, max: usize| {
        let end = s.run(from, |b| b.is_ascii_hexdigit()).min(from + max);
        (u32::from_str_radix(s.slice(from, end), 16).ok(), end)
    };
    match c {
        b'b' => out.push(0x08),
        b'f' => out.push(0x0c),
        b'n' => out.push(b'\n'),
        b'r' => out.push(b'\r'),
        b't' => out.push(b'\t'),
        b'0'..=b'7' => {
            let end = s.run(i + 1, |b| (b'0'..=b'7').contains(&b)).min(i + 4);
            let v = u32::from_str_radix(s.slice(i + 1, end), 8).unwrap_or(0);
            out.push(u8::try_from(v & 0xff).unwrap_or(0));
            return end;
        }
        b'x' if s.at(i + 2).is_ascii_hexdigit() => {
            let (v, end) = hex(i + 2, 2);
            out.push(u8::try_from(v.unwrap_or(0) & 0xff).unwrap_or(0));
            return end;
        }
        b'u' | b'U' => {
            let width = if c == b'u' { 4 } else { 8 };
            let (v, end) = hex(i + 2, width);
            if end == i + 2 + width
                && let Some(ch) = v.and_then(char::from_u32)
            {
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                return end;
            }
            out.push(c);
        }
        other => out.push(other),
    }
    i + 2
}

/// A quoted name starting at `start` whose opening `"` is at `quote` (`U&"…"` when they differ).
fn quoted(s: &mut Scan<'_>, start: usize, quote: usize) {
    let mut i = quote + 1;
    loop {
        if s.done(i) {
            s.unclosed("A quoted name is not closed; close it with \".");
            break;
        }
        if s.at(i) == b'"' {
            if s.at(i + 1) == b'"' {
                i += 2;
                continue;
            }
            i += 1;
            break;
        }
        i += 1;
    }
    let body = s.slice(quote + 1, i.saturating_sub(1).max(quote + 1));
    let name = undouble(body, '"');
    if name.is_empty() {
        s.problem("parse_error", "A quoted name is empty (\"\").");
    }
    if start == quote {
        s.push_with(Kind::Quoted, start, i, None, Some(name));
    } else {
        // `U&"…"`: decoded once its UESCAPE is known.
        s.push_with(Kind::UnicodeName, start, i, None, Some(name));
    }
}

/// `$1` parameters and `$tag$…$tag$` strings.
fn dollar(s: &mut Scan<'_>, start: usize) {
    let first = s.at(start + 1);
    if first.is_ascii_digit() {
        let end = s.run(start + 1, |b| b.is_ascii_digit());
        s.push(Kind::Param, start, end);
        return;
    }
    let dolq_start = |b: u8| b.is_ascii_alphabetic() || b == b'_' || b >= 0x80;
    let tag_end = if dolq_start(first) {
        s.run(start + 2, |b| dolq_start(b) || b.is_ascii_digit())
    } else {
        start + 1
    };
    if s.at(tag_end) != b'$' {
        // A lone `$`: the engine reports a syntax error.
        s.push(Kind::Punct, start, start + 1);
        return;
    }
    let delimiter = s.slice(start, tag_end + 1);
    let body_start = tag_end + 1;
    let rest = s.slice(body_start, s.b.len());
    match rest.find(delimiter) {
        Some(pos) => {
            let body = s.slice(body_start, body_start + pos);
            let end = body_start + pos + delimiter.len();
            s.push_with(Kind::Str, start, end, Some(quote_str(body)), None);
        }
        None => {
            s.unclosed(format!(
                "A dollar-quoted string is not closed; close it with {delimiter}."
            ));
            let end = s.b.len();
            s.push_with(Kind::Str, start, end, Some(quote_str(rest)), None);
        }
    }
}

/// Digits, a fraction, an exponent, and any letters stuck to them (which PostgreSQL 15 refuses).
fn number(s: &mut Scan<'_>, start: usize) {
    let mut i = s.run(start, |b| b.is_ascii_digit());
    if s.at(i) == b'.' && s.at(i + 1) != b'.' {
        i = s.run(i + 1, |b| b.is_ascii_digit());
    }
    if matches!(s.at(i), b'e' | b'E') {
        let sign = usize::from(matches!(s.at(i + 1), b'+' | b'-'));
        if s.at(i + 1 + sign).is_ascii_digit() {
            i = s.run(i + 1 + sign, |b| b.is_ascii_digit());
        }
    }
    // PostgreSQL 15 refuses letters stuck to a number (but `1$a$…$a$` is a number and a dollar quote).
    let end = if ident_start(s.at(i)) {
        s.run(i, ident_cont)
    } else {
        i
    };
    s.push(Kind::Number, start, end);
}

/// A run of operator characters, cut where a comment starts, without trailing `+`/`-` unless the operator
/// has a character that only custom operators use (PostgreSQL's rule: `=-1` is `=` then `-1`).
fn operator(s: &mut Scan<'_>, start: usize) {
    let mut end = s.run(start, op_char);
    let mut j = start + 1;
    while j < end {
        if (s.at(j) == b'-' && s.at(j + 1) == b'-') || (s.at(j) == b'/' && s.at(j + 1) == b'*') {
            end = j;
            break;
        }
        j += 1;
    }
    let special = s
        .slice(start, end)
        .bytes()
        .any(|b| b"~!@#^&|`?%".contains(&b));
    while end > start + 1 && !special && matches!(s.at(end - 1), b'+' | b'-') {
        end -= 1;
    }
    s.push(Kind::Op, start, end);
}
