//! PostgreSQL `U&'…'` strings and `U&"…"` names: `\0041` or `\+000041` escapes (or another escape character
//! given by a following `UESCAPE '!'`), decoded the way the engine does, so that `U&"pg\005fsleep"` is checked
//! as `pg_sleep`. The parser reads the decoded form; the `UESCAPE` clause becomes spaces.

use super::{Kind, Scan, quote_ident, quote_str, undouble};

/// Decodes every pending `U&` token of the scan.
pub(super) fn resolve(s: &mut Scan<'_>) {
    for idx in 0..s.tokens.len() {
        let Some(token) = s.tokens.get(idx) else {
            continue;
        };
        let kind = token.kind;
        if !matches!(kind, Kind::UnicodeStr | Kind::UnicodeName) {
            continue;
        }
        let body = token.name().unwrap_or_default().to_owned();
        let mut escape = '\\';
        if let Some(word) = next_code(s, idx + 1)
            && s.tokens
                .get(word)
                .is_some_and(|t| t.is_word(s.sql, "UESCAPE"))
        {
            let value = next_code(s, word + 1).and_then(|v| {
                let t = s.tokens.get(v)?;
                (t.kind == Kind::Str).then(|| (v, string_value(s, v)))
            });
            match value {
                Some((v, text)) => {
                    let mut chars = text.chars();
                    match (chars.next(), chars.next()) {
                        (Some(c), None) if valid_escape(c) => escape = c,
                        _ => s.problem(
                            "parse_error",
                            "UESCAPE needs a single character that is not a hex digit, +, a quote or a space.",
                        ),
                    }
                    for erased in [word, v] {
                        if let Some(t) = s.tokens.get_mut(erased) {
                            t.kind = Kind::Comment;
                        }
                    }
                }
                None => s.problem(
                    "parse_error",
                    "UESCAPE must be followed by a simple string literal.",
                ),
            }
        }
        let decoded = match decode(&body, escape) {
            Some(text) => text,
            None => {
                s.problem(
                    "parse_error",
                    "A U&'…' string or U&\"…\" name has an invalid Unicode escape.",
                );
                body
            }
        };
        if let Some(t) = s.tokens.get_mut(idx) {
            if kind == Kind::UnicodeStr {
                t.kind = Kind::Str;
                t.set(Some(quote_str(&decoded)), None);
            } else {
                t.kind = Kind::Quoted;
                t.set(Some(quote_ident(&decoded, b'"')), Some(decoded));
            }
        }
    }
}

/// The index of the next token from `from` that is not a comment.
fn next_code(s: &Scan<'_>, from: usize) -> Option<usize> {
    (from..s.tokens.len()).find(|&i| s.tokens.get(i).is_some_and(|t| t.kind != Kind::Comment))
}

/// The value of a string token.
fn string_value(s: &Scan<'_>, idx: usize) -> String {
    let Some(t) = s.tokens.get(idx) else {
        return String::new();
    };
    let quoted = t.canonical().unwrap_or_else(|| t.text(s.sql));
    let inner = quoted
        .strip_prefix('\'')
        .and_then(|q| q.strip_suffix('\''))
        .unwrap_or(quoted);
    undouble(inner, '\'')
}

fn valid_escape(c: char) -> bool {
    !(c.is_ascii_hexdigit() || c == '+' || c == '\'' || c == '"' || c.is_whitespace())
}

/// The text with its Unicode escapes decoded; `None` when an escape is invalid.
pub(super) fn decode(body: &str, escape: char) -> Option<String> {
    let chars: Vec<char> = body.chars().collect();
    let mut out = String::with_capacity(body.len());
    let mut i = 0;
    let mut pending_high: Option<u32> = None;
    while let Some(&c) = chars.get(i) {
        if c != escape {
            if pending_high.is_some() {
                return None;
            }
            out.push(c);
            i += 1;
            continue;
        }
        if chars.get(i + 1) == Some(&escape) {
            if pending_high.is_some() {
                return None;
            }
            out.push(escape);
            i += 2;
            continue;
        }
        let (digits, from) = if chars.get(i + 1) == Some(&'+') {
            (6, i + 2)
        } else {
            (4, i + 1)
        };
        let hex: String = chars.get(from..from + digits)?.iter().collect();
        if hex.len() != digits || !hex.chars().all(|h| h.is_ascii_hexdigit()) {
            return None;
        }
        let code = u32::from_str_radix(&hex, 16).ok()?;
        i = from + digits;
        match (pending_high.take(), code) {
            (None, 0xD800..=0xDBFF) => pending_high = Some(code),
            (Some(high), 0xDC00..=0xDFFF) => {
                let combined = 0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00);
                out.push(char::from_u32(combined)?);
            }
            (Some(_), _) => return None,
            (None, 0) => return None,
            (None, _) => out.push(char::from_u32(code)?),
        }
    }
    pending_high.is_none().then_some(out)
}
