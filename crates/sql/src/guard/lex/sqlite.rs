//! SQLite's lexer (`tokenize.c`): `'…'` strings without escapes, `"…"`, `` `…` `` and `[…]` names, `--`
//! comments to the end of the line, `/* */` comments that may run to the end of the text, `X'…'` blobs, and
//! variables (`?1`, `:a`, `@a`, `$a`, `#a`) that may carry a `(…)` or `::` suffix: `@a(';x)` is one token.

use super::{Kind, Scan, quote_ident, undouble};

fn id_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

fn space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

pub(super) fn scan(s: &mut Scan<'_>) {
    while !s.done(s.i) {
        let i = s.i;
        let c = s.at(i);
        let next = s.at(i + 1);
        match c {
            b' ' | b'\t' | b'\n' | 0x0c | b'\r' => s.i += 1,
            b'-' if next == b'-' => {
                let end = s.run(i + 2, |b| b != b'\n');
                s.push(Kind::Comment, i, end);
            }
            b'/' if next == b'*' && !s.done(i + 2) => {
                // An unclosed comment runs to the end of the text.
                let body = s.slice(i + 2, s.b.len());
                let end = body.find("*/").map_or(s.b.len(), |p| i + 2 + p + 2);
                s.push(Kind::Comment, i, end);
            }
            b'\'' | b'"' | b'`' => quoted(s, i, c),
            b'[' => {
                let close = s.run(i + 1, |b| b != b']');
                if s.done(close) {
                    s.unclosed("A [name] is not closed; close it with ].");
                }
                let name = s.slice(i + 1, close).to_owned();
                let end = (close + 1).min(s.b.len());
                s.push_with(
                    Kind::Quoted,
                    i,
                    end,
                    Some(quote_ident(&name, b'"')),
                    Some(name),
                );
            }
            b'x' | b'X' if next == b'\'' => blob(s, i),
            b'?' => {
                let end = s.run(i + 1, |b| b.is_ascii_digit());
                s.push(Kind::Param, i, end);
            }
            b'$' | b'@' | b':' | b'#' => variable(s, i),
            c if c.is_ascii_digit() || (c == b'.' && next.is_ascii_digit()) => number(s, i),
            c if id_char(c) => {
                let end = s.run(i + 1, id_char);
                s.push_word(i, end, b'"', false);
            }
            b'(' | b')' | b',' | b';' | b'.' => s.push(Kind::Punct, i, i + 1),
            _ => operator(s, i),
        }
    }
}

/// `'…'` strings and `"…"` / `` `…` `` names: the quote doubled stands for itself.
fn quoted(s: &mut Scan<'_>, start: usize, quote: u8) {
    let mut i = start + 1;
    loop {
        if s.done(i) {
            s.unclosed("A string or quoted name is not closed; close it with its quote.");
            break;
        }
        if s.at(i) == quote {
            if s.at(i + 1) == quote {
                i += 2;
                continue;
            }
            i += 1;
            break;
        }
        i += 1;
    }
    if quote == b'\'' {
        s.push(Kind::Str, start, i);
        return;
    }
    let body = s.slice(start + 1, i.saturating_sub(1).max(start + 1));
    let name = undouble(body, char::from(quote));
    let canonical = (quote != b'"').then(|| quote_ident(&name, b'"'));
    s.push_with(Kind::Quoted, start, i, canonical, Some(name));
}

/// `X'…'`: an even number of hex digits; SQLite refuses anything else.
fn blob(s: &mut Scan<'_>, start: usize) {
    let digits = s.run(start + 2, |b| b.is_ascii_hexdigit());
    let mut end = digits;
    if s.at(digits) != b'\'' || (digits - start - 2) % 2 == 1 {
        s.problem(
            "parse_error",
            "An X'…' blob holds something other than an even number of hex digits.",
        );
        end = s.run(digits, |b| b != b'\'');
    }
    s.push(Kind::Str, start, (end + 1).min(s.b.len()));
}

/// SQLite's variables, including the TCL forms `$a(…)` (up to `)`, no spaces) and `$a::b`. The canonical
/// text has a plain `?` instead.
fn variable(s: &mut Scan<'_>, start: usize) {
    let mut n = 0usize;
    let mut i = start + 1;
    loop {
        let c = s.at(i);
        if s.done(i) {
            break;
        }
        if id_char(c) {
            n += 1;
            i += 1;
        } else if c == b'(' && n > 0 {
            i = s.run(i + 1, |b| !space(b) && b != b')');
            if s.at(i) == b')' {
                i += 1;
            } else {
                s.unclosed("A variable's (…) suffix is not closed.");
            }
            break;
        } else if c == b':' && s.at(i + 1) == b':' {
            i += 2;
        } else {
            break;
        }
    }
    if n == 0 {
        s.problem(
            "parse_error",
            format!("`{}` is not valid SQLite.", char::from(s.at(start))),
        );
    }
    s.push_with(Kind::Param, start, i, Some("?".to_owned()), None);
}

fn number(s: &mut Scan<'_>, start: usize) {
    let digits = |b: u8| b.is_ascii_digit() || b == b'_';
    let mut i;
    if s.at(start) == b'0'
        && matches!(s.at(start + 1), b'x' | b'X')
        && s.at(start + 2).is_ascii_hexdigit()
    {
        i = s.run(start + 2, |b| b.is_ascii_hexdigit() || b == b'_');
    } else {
        i = s.run(start, digits);
        if s.at(i) == b'.' {
            i = s.run(i + 1, digits);
        }
        if matches!(s.at(i), b'e' | b'E') {
            let sign = usize::from(matches!(s.at(i + 1), b'+' | b'-'));
            if s.at(i + 1 + sign).is_ascii_digit() {
                i = s.run(i + 1 + sign, digits);
            }
        }
    }
    let end = s.run(i, id_char);
    if end > i {
        s.problem(
            "parse_error",
            format!("`{}` is not a number.", s.slice(start, end)),
        );
    }
    s.push(Kind::Number, start, end);
}

fn operator(s: &mut Scan<'_>, start: usize) {
    let rest = s.slice(start, (start + 3).min(s.b.len()));
    let len = ["->>"]
        .iter()
        .chain(["||", "<=", "<>", "<<", ">=", ">>", "==", "!=", "->"].iter())
        .find(|op| rest.starts_with(**op))
        .map_or(1, |op| op.len());
    if len == 1 && !b"+-*/%&|~<>=".contains(&s.at(start)) {
        s.problem(
            "parse_error",
            format!("`{}` is not valid SQLite.", char::from(s.at(start))),
        );
    }
    s.push(Kind::Op, start, start + len);
}
