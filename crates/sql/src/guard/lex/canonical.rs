//! The canonical text the parser reads: the original with every comment turned into spaces and every token
//! that has a canonical form replaced by it. Line breaks are kept, so the parser's line numbers still match.

use std::borrow::Cow;

use super::{Kind, Token};

/// The canonical text of `sql` lexed into `tokens`; the original itself when nothing needs to change.
pub(crate) fn canonical<'a>(sql: &'a str, tokens: &[Token]) -> Cow<'a, str> {
    let changed = tokens
        .iter()
        .any(|t| t.canonical().is_some() || t.kind == Kind::Comment)
        || tokens.windows(2).any(|w| match w {
            [a, b] => joins(sql, a, b),
            _ => false,
        });
    if !changed {
        return Cow::Borrowed(sql);
    }
    let mut out = String::with_capacity(sql.len() + 16);
    let mut pos = 0;
    let mut previous: Option<&Token> = None;
    for token in tokens {
        out.push_str(sql.get(pos..token.start).unwrap_or(""));
        if token.kind == Kind::Comment {
            for c in token.text(sql).chars() {
                out.push(if c == '\n' || c == '\r' { c } else { ' ' });
            }
        } else {
            if previous.is_some_and(|p| joins(sql, p, token)) {
                out.push(' ');
            }
            match token.canonical() {
                Some(text) => out.push_str(text),
                None => out.push_str(token.text(sql)),
            }
        }
        pos = token.end;
        previous = Some(token);
    }
    out.push_str(sql.get(pos..).unwrap_or(""));
    Cow::Owned(out)
}

/// Two adjacent operator tokens that another lexer could read as a comment (`-` `-`, `/` `*`).
fn joins(sql: &str, a: &Token, b: &Token) -> bool {
    a.kind == Kind::Op
        && b.kind == Kind::Op
        && a.end == b.start
        && matches!(
            (a.text(sql).chars().last(), b.text(sql).chars().next()),
            (Some('-'), Some('-')) | (Some('/'), Some('*')) | (Some('*'), Some('/'))
        )
}

/// The canonical text of `sql` and, for each token, where it starts in that text: for locating what the parser
/// found (its spans are positions in the canonical text) in the original.
pub(crate) fn canonical_located(sql: &str, tokens: &[Token]) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut starts = Vec::with_capacity(tokens.len());
    let mut pos = 0;
    let mut previous: Option<&Token> = None;
    for token in tokens {
        out.push_str(sql.get(pos..token.start).unwrap_or(""));
        if token.kind == Kind::Comment {
            starts.push(out.len());
            for c in token.text(sql).chars() {
                out.push(if c == '\n' || c == '\r' { c } else { ' ' });
            }
        } else {
            if previous.is_some_and(|p| joins(sql, p, token)) {
                out.push(' ');
            }
            starts.push(out.len());
            match token.canonical() {
                Some(text) => out.push_str(text),
                None => out.push_str(token.text(sql)),
            }
        }
        pos = token.end;
        previous = Some(token);
    }
    out.push_str(sql.get(pos..).unwrap_or(""));
    (out, starts)
}
