//! Reading SQL text exactly as the engine will: where each string, quoted name, comment and statement ends,
//! under the engine's settings. The parser (sqlparser) reads strings and comments its own way; so the guard
//! lexes first, then hands the parser a *canonical* text in which every string, quoted name and comment has a
//! form every lexer agrees on (decoded `U&` names, `E'…'` and dollar-quoted strings as plain `'…'`,
//! comments as spaces). The text that runs is never changed.

mod canonical;
mod mysql;
mod postgres;
mod sqlite;
mod unicode;

pub(crate) use canonical::{canonical, canonical_located};

use super::{Reason, reason};
use crate::dialect::Dialect;

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An unquoted identifier or keyword.
    Word,
    /// A quoted identifier.
    Quoted,
    /// A string literal of any form.
    Str,
    /// A number.
    Number,
    /// A bind parameter or placeholder.
    Param,
    /// A MySQL user or system variable (`@x`, `@@x`).
    Variable,
    /// Operator characters.
    Op,
    /// One of `( ) [ ] , ; . :` and other single characters.
    Punct,
    /// A comment (the canonical text has spaces instead).
    Comment,
    /// PostgreSQL `U&'…'` before its escapes are decoded (`name` holds the body).
    UnicodeStr,
    /// PostgreSQL `U&"…"` before its escapes are decoded (`name` holds the body).
    UnicodeName,
}

/// One token of the text. Small, because a query has many: what only a few tokens carry (a canonical form, a
/// decoded name) is boxed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    /// What it is.
    pub(crate) kind: Kind,
    /// Byte offset of its first character.
    pub(crate) start: usize,
    /// Byte offset just past it.
    pub(crate) end: usize,
    /// Its canonical text (when that differs from the original) and its decoded name (quoted identifiers).
    extra: Option<Box<Extra>>,
}

/// What a few tokens carry.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Extra {
    canonical: Option<String>,
    name: Option<String>,
}

impl Token {
    fn new(
        kind: Kind,
        start: usize,
        end: usize,
        canonical: Option<String>,
        name: Option<String>,
    ) -> Self {
        let extra =
            (canonical.is_some() || name.is_some()).then(|| Box::new(Extra { canonical, name }));
        Self {
            kind,
            start,
            end,
            extra,
        }
    }

    /// Its canonical text, when that differs from the original.
    pub(crate) fn canonical(&self) -> Option<&str> {
        self.extra.as_ref()?.canonical.as_deref()
    }

    /// A quoted identifier's name, decoded as the engine reads it (or the pending body of a `U&` token).
    pub(crate) fn name(&self) -> Option<&str> {
        self.extra.as_ref()?.name.as_deref()
    }

    /// Sets its canonical text and decoded name.
    pub(crate) fn set(&mut self, canonical: Option<String>, name: Option<String>) {
        *self = Self::new(self.kind, self.start, self.end, canonical, name);
    }

    /// The token as written.
    pub(crate) fn text<'a>(&self, sql: &'a str) -> &'a str {
        sql.get(self.start..self.end).unwrap_or("")
    }

    /// A name as the engine reads it: quoted identifiers decoded, words as written.
    pub(crate) fn ident<'a>(&'a self, sql: &'a str) -> Option<&'a str> {
        match self.kind {
            Kind::Word => Some(self.text(sql)),
            Kind::Quoted => self.name(),
            _ => None,
        }
    }

    /// True for this single punctuation character.
    pub(crate) fn is_punct(&self, sql: &str, c: &str) -> bool {
        self.kind == Kind::Punct && self.text(sql) == c
    }

    /// True for this unquoted word (any case).
    pub(crate) fn is_word(&self, sql: &str, word: &str) -> bool {
        self.kind == Kind::Word && self.text(sql).eq_ignore_ascii_case(word)
    }
}

/// How to read the text: the dialect and the settings that change where strings end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Mode {
    /// The engine.
    pub(crate) dialect: Dialect,
    /// PostgreSQL: `'…'` takes backslash escapes (`standard_conforming_strings` off). MySQL: strings take
    /// backslash escapes (no `NO_BACKSLASH_ESCAPES`). Unused for SQLite.
    pub(crate) backslash: bool,
    /// MySQL `ANSI_QUOTES`: `"x"` is a name.
    pub(crate) ansi_quotes: bool,
}

/// The tokens of a text and what is wrong with it at the lexical level.
#[derive(Debug, Default)]
pub(crate) struct Lexed {
    /// Every token, comments included, in order.
    pub(crate) tokens: Vec<Token>,
    /// Refusals found while lexing.
    pub(crate) problems: Vec<Reason>,
    /// A string, name or comment runs to the end of the text unclosed.
    pub(crate) unclosed: bool,
}

impl Lexed {
    /// The tokens that are not comments.
    pub(crate) fn code(&self) -> impl Iterator<Item = &Token> {
        self.tokens.iter().filter(|t| t.kind != Kind::Comment)
    }

    /// Where tokens start and end and what they are: equal shapes mean the text reads the same way.
    pub(crate) fn same_shape(&self, other: &Lexed) -> bool {
        self.unclosed == other.unclosed
            && self.tokens.len() == other.tokens.len()
            && self
                .tokens
                .iter()
                .zip(&other.tokens)
                .all(|(a, b)| a.kind == b.kind && a.start == b.start && a.end == b.end)
    }
}

/// Lexes `sql` as the engine of `mode` would.
pub(crate) fn lex(sql: &str, mode: Mode) -> Lexed {
    let mut scan = Scan::new(sql);
    match mode.dialect {
        Dialect::Postgres => postgres::scan(&mut scan, !mode.backslash),
        Dialect::Mysql => mysql::scan(&mut scan, mode.backslash, mode.ansi_quotes),
        Dialect::Sqlite => sqlite::scan(&mut scan),
    }
    if mode.dialect == Dialect::Postgres {
        unicode::resolve(&mut scan);
    }
    Lexed {
        tokens: scan.tokens,
        problems: scan.problems,
        unclosed: scan.unclosed,
    }
}

/// The scanner's state: the bytes, where it is, and what it found.
pub(super) struct Scan<'a> {
    pub(super) sql: &'a str,
    pub(super) b: &'a [u8],
    pub(super) i: usize,
    pub(super) tokens: Vec<Token>,
    pub(super) problems: Vec<Reason>,
    pub(super) unclosed: bool,
}

impl<'a> Scan<'a> {
    fn new(sql: &'a str) -> Self {
        Self {
            sql,
            b: sql.as_bytes(),
            i: 0,
            tokens: Vec::with_capacity(sql.len() / 3 + 8),
            problems: Vec::new(),
            unclosed: false,
        }
    }

    /// The byte at `i`, or 0 past the end (as the engines' scanners see their NUL terminator).
    pub(super) fn at(&self, i: usize) -> u8 {
        self.b.get(i).copied().unwrap_or(0)
    }

    /// True when the text is finished at `i`.
    pub(super) fn done(&self, i: usize) -> bool {
        i >= self.b.len()
    }

    /// The text between two offsets.
    pub(super) fn slice(&self, start: usize, end: usize) -> &'a str {
        self.sql.get(start..end).unwrap_or("")
    }

    /// Adds a token ending at `end` and moves past it.
    pub(super) fn push(&mut self, kind: Kind, start: usize, end: usize) {
        self.push_with(kind, start, end, None, None);
    }

    /// Adds a token with its canonical text and decoded name.
    pub(super) fn push_with(
        &mut self,
        kind: Kind,
        start: usize,
        end: usize,
        canonical: Option<String>,
        name: Option<String>,
    ) {
        let end = end.min(self.b.len()).max(start);
        self.tokens
            .push(Token::new(kind, start, end, canonical, name));
        self.i = end;
    }

    /// Records a lexical refusal once.
    pub(super) fn problem(&mut self, code: &str, message: impl Into<String>) {
        let r = reason(code, message);
        if !self.problems.contains(&r) {
            self.problems.push(r);
        }
    }

    /// Records that something runs unclosed to the end of the text (a refusal too).
    pub(super) fn unclosed(&mut self, message: impl Into<String>) {
        self.unclosed = true;
        self.problem("parse_error", message);
    }

    /// Scans a run of bytes for which `f` holds, from `i`; returns where it stops.
    pub(super) fn run(&self, mut i: usize, f: impl Fn(u8) -> bool) -> usize {
        while !self.done(i) && f(self.at(i)) {
            i += 1;
        }
        i
    }

    /// A word's canonical form: words with characters other than ASCII letters, digits and `_` (or that
    /// start with a digit) are quoted, so that every lexer reads them as one name.
    pub(super) fn push_word(&mut self, start: usize, end: usize, quote: u8, fold: bool) {
        let text = self.slice(start, end);
        let plain = text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !text.bytes().next().is_some_and(|b| b.is_ascii_digit());
        if plain {
            self.push(Kind::Word, start, end);
        } else {
            let name = if fold {
                text.to_ascii_lowercase()
            } else {
                text.to_owned()
            };
            let canonical = quote_ident(&name, quote);
            self.push_with(Kind::Word, start, end, Some(canonical), Some(name));
        }
    }
}

/// `'text'` with quotes doubled: a string every lexer reads the same way.
pub(super) fn quote_str(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('\'');
    for c in text.chars() {
        if c == '\'' {
            out.push('\'');
        }
        out.push(c);
    }
    out.push('\'');
    out
}

/// A quoted identifier with the quote character doubled inside.
pub(super) fn quote_ident(name: &str, quote: u8) -> String {
    let q = char::from(quote);
    let mut out = String::with_capacity(name.len() + 2);
    out.push(q);
    for c in name.chars() {
        if c == q {
            out.push(q);
        }
        out.push(c);
    }
    out.push(q);
    out
}

/// The content of a quoted span with doubled quote characters undoubled.
pub(super) fn undouble(body: &str, quote: char) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == quote && chars.peek() == Some(&quote) {
            chars.next();
        }
    }
    out
}

#[cfg(test)]
mod tests;
