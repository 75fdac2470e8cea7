//! MySQL's and MariaDB's lexer (`sql_lex.cc`): backslash escapes in strings unless `NO_BACKSLASH_ESCAPES`,
//! `"…"` a string unless `ANSI_QUOTES`, `` `…` `` names, `#` comments, `--` a comment only before a space or a
//! control character, `/* */` comments that do not nest, and `/*! … */`, `/*M! … */` (run as code) and
//! `/*+ … */` (optimizer hints that can set variables), which are refused.

use super::{Kind, Scan, quote_ident, quote_str, undouble};

fn ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

/// What MySQL's `my_isspace` or `my_iscntrl` accepts after `--` (the end of the text counts, as NUL).
fn ends_dash_dash(b: u8) -> bool {
    b <= 0x20 || b == 0x7f
}

pub(super) fn scan(s: &mut Scan<'_>, backslash: bool, ansi_quotes: bool) {
    while !s.done(s.i) {
        let i = s.i;
        let c = s.at(i);
        let next = s.at(i + 1);
        match c {
            b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' => s.i += 1,
            b'#' => line_comment(s, i),
            b'-' if next == b'-' && ends_dash_dash(s.at(i + 2)) => line_comment(s, i),
            b'/' if next == b'*' => block_comment(s, i),
            b'\'' => string(s, i, b'\'', backslash),
            b'"' if !ansi_quotes => string(s, i, b'"', backslash),
            b'"' | b'`' => quoted(s, i, c),
            b'n' | b'N' if next == b'\'' => s.push(Kind::Word, i, i + 1),
            b'x' | b'X' | b'b' | b'B' if next == b'\'' => bits(s, i),
            b'@' => variable(s, i, backslash, ansi_quotes),
            b'?' => s.push(Kind::Param, i, i + 1),
            b':' if next == b'=' => {
                s.problem(
                    "variable_assignment",
                    "`:=` assigns a user variable; only reads are allowed. Compute the value in the query instead.",
                );
                s.push(Kind::Op, i, i + 2);
            }
            b'\\' if next == b'N' => {
                s.push_with(Kind::Word, i, i + 2, Some("NULL".to_owned()), None);
            }
            c if c.is_ascii_digit() || (c == b'.' && next.is_ascii_digit()) => number(s, i),
            c if ident_char(c) => {
                let end = s.run(i + 1, ident_char);
                s.push_word(i, end, b'`', false);
            }
            b'(' | b')' | b'[' | b']' | b',' | b';' | b'.' | b'{' | b'}' => {
                s.push(Kind::Punct, i, i + 1);
            }
            _ => operator(s, i),
        }
    }
}

fn line_comment(s: &mut Scan<'_>, start: usize) {
    let end = s.run(start + 1, |b| b != b'\n');
    s.push(Kind::Comment, start, end);
}

fn block_comment(s: &mut Scan<'_>, start: usize) {
    let third = s.at(start + 2);
    if third == b'!' || (matches!(third, b'M' | b'm') && s.at(start + 3) == b'!') {
        s.problem(
            "executable_comment",
            "MySQL and MariaDB run the code inside /*! … */ and /*M! … */ comments; remove them.",
        );
    } else if third == b'+' {
        s.problem(
            "optimizer_hint",
            "Optimizer hints (/*+ … */) can change session settings; remove them.",
        );
    }
    let body = s.slice(start + 2, s.b.len());
    match body.find("*/") {
        Some(pos) => s.push(Kind::Comment, start, start + 2 + pos + 2),
        None => {
            s.unclosed("A /* comment is not closed; close it with */.");
            let end = s.b.len();
            s.push(Kind::Comment, start, end);
        }
    }
}

/// A string quoted with `quote` (`'`, or `"` without ANSI_QUOTES).
fn string(s: &mut Scan<'_>, start: usize, quote: u8, backslash: bool) {
    let mut content: Vec<u8> = Vec::new();
    let mut escaped = false;
    let mut i = start + 1;
    loop {
        if s.done(i) {
            s.unclosed("A string is not closed; close it with its quote.");
            break;
        }
        let c = s.at(i);
        if c == b'\\' && backslash {
            escaped = true;
            let e = s.at(i + 1);
            match e {
                b'0' => content.push(0),
                b'b' => content.push(0x08),
                b'n' => content.push(b'\n'),
                b'r' => content.push(b'\r'),
                b't' => content.push(b'\t'),
                b'Z' => content.push(0x1a),
                // LIKE wildcards keep their backslash.
                b'%' | b'_' => content.extend_from_slice(&[b'\\', e]),
                _ => content.push(e),
            }
            i += 2;
            continue;
        }
        if c == quote {
            if s.at(i + 1) == quote {
                content.push(quote);
                i += 2;
                continue;
            }
            i += 1;
            break;
        }
        content.push(c);
        i += 1;
    }
    if quote == b'\'' && !escaped {
        s.push(Kind::Str, start, i);
    } else {
        let text = String::from_utf8_lossy(&content);
        s.push_with(Kind::Str, start, i, Some(quote_str(&text)), None);
    }
}

/// A name quoted with `` ` `` (or `"` under ANSI_QUOTES); `""` and ``` `` ``` stand for the quote itself.
fn quoted(s: &mut Scan<'_>, start: usize, quote: u8) {
    let mut i = start + 1;
    loop {
        if s.done(i) {
            s.unclosed("A quoted name is not closed; close it with its quote.");
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
    let body = s.slice(start + 1, i.saturating_sub(1).max(start + 1));
    let name = undouble(body, char::from(quote));
    let canonical = (quote != b'`').then(|| quote_ident(&name, b'`'));
    s.push_with(Kind::Quoted, start, i, canonical, Some(name));
}

/// `X'…'` (hex digits) and `B'…'` (binary digits): nothing is escaped; anything else makes the engine refuse.
fn bits(s: &mut Scan<'_>, start: usize) {
    let hex = matches!(s.at(start), b'x' | b'X');
    let end = s.run(start + 2, |b| {
        if hex {
            b.is_ascii_hexdigit()
        } else {
            b == b'0' || b == b'1'
        }
    });
    if s.at(end) != b'\'' {
        s.problem(
            "parse_error",
            "An X'…' or B'…' literal holds something other than its digits.",
        );
    }
    let end = (end + 1).min(s.b.len());
    let body = s.slice(start + 2, end.saturating_sub(1).max(start + 2));
    let canonical = (!hex).then(|| quote_str(body));
    s.push_with(Kind::Str, start, end, canonical, None);
}

/// `@name`, `@'name'`, `` @`name` ``, `@@system_variable`.
fn variable(s: &mut Scan<'_>, start: usize, backslash: bool, ansi_quotes: bool) {
    let system = s.at(start + 1) == b'@';
    let from = start + 1 + usize::from(system);
    let quote = s.at(from);
    if system && matches!(quote, b'\'' | b'"') {
        s.problem(
            "parse_error",
            "A system variable's name cannot be a string; write @@name.",
        );
    }
    if matches!(quote, b'\'' | b'"' | b'`') {
        s.push_with(Kind::Variable, start, from, Some("@v".to_owned()), None);
        let before = s.tokens.len();
        match quote {
            b'\'' => string(s, from, quote, backslash),
            b'"' if !ansi_quotes => string(s, from, quote, backslash),
            _ => quoted(s, from, quote),
        }
        // The quoted part is the variable's name: the canonical text keeps only `@v`.
        for t in s.tokens.iter_mut().skip(before) {
            t.kind = Kind::Comment;
        }
        return;
    }
    let end = s.run(from, |b| ident_char(b) || b == b'.');
    if end == from {
        s.push(Kind::Op, start, from);
        return;
    }
    let simple = s
        .slice(from, end)
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.');
    let canonical = (!simple).then(|| if system { "@@v" } else { "@v" }.to_owned());
    s.push_with(Kind::Variable, start, end, canonical, None);
}

/// Numbers, and names that start with digits (`1abc` is a name in MySQL).
fn number(s: &mut Scan<'_>, start: usize) {
    let c = s.at(start);
    let next = s.at(start + 1);
    if c == b'0' && matches!(next, b'x' | b'b') {
        let digits = s.run(start + 2, |b| {
            if next == b'x' {
                b.is_ascii_hexdigit()
            } else {
                b == b'0' || b == b'1'
            }
        });
        if digits > start + 2 && !ident_char(s.at(digits)) {
            s.push(Kind::Number, start, digits);
            return;
        }
    }
    let mut i = s.run(start, |b| b.is_ascii_digit());
    if c != b'.' && ident_char(s.at(i)) && !matches!(s.at(i), b'e' | b'E') {
        let end = s.run(i, ident_char);
        s.push_word(start, end, b'`', false);
        return;
    }
    if s.at(i) == b'.' {
        i = s.run(i + 1, |b| b.is_ascii_digit());
    }
    if matches!(s.at(i), b'e' | b'E') {
        let sign = usize::from(matches!(s.at(i + 1), b'+' | b'-'));
        if s.at(i + 1 + sign).is_ascii_digit() {
            i = s.run(i + 1 + sign, |b| b.is_ascii_digit());
        } else if c != b'.' {
            let end = s.run(i, ident_char);
            s.push_word(start, end, b'`', false);
            return;
        }
    }
    s.push(Kind::Number, start, i);
}

fn operator(s: &mut Scan<'_>, start: usize) {
    let rest = s.slice(start, (start + 3).min(s.b.len()));
    let len = ["<=>", "->>"]
        .iter()
        .chain(["<=", ">=", "<>", "!=", "<<", ">>", "&&", "||", "->", ":="].iter())
        .find(|op| rest.starts_with(**op))
        .map_or(1, |op| op.len());
    s.push(Kind::Op, start, start + len);
}
