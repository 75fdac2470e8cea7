//! Checks on the tokens themselves, before and besides the parser: how many statements there are (counted
//! the way the engine splits them), each statement's first word, and words that are refused wherever they
//! appear in a read (`INTO`, locking clauses, calls of refused functions, sequence expressions). These hold
//! even where the parser reads the SQL differently from the engine or cannot read it at all.

use super::functions::{self, Family};
use super::lex::{Kind, Token};
use super::{Reason, reason};

/// What the tokens show.
#[derive(Debug, Default)]
pub(crate) struct Findings {
    /// The statements' first significant words, uppercase (after `EXPLAIN` and its options).
    pub(crate) first_words: Vec<String>,
    /// Refusals.
    pub(crate) reasons: Vec<Reason>,
}

/// Words that only introduce `EXPLAIN` and its options.
const EXPLAIN_WORDS: &[&str] = &[
    "EXPLAIN",
    "ANALYZE",
    "ANALYSE",
    "VERBOSE",
    "QUERY",
    "PLAN",
    "EXTENDED",
    "PARTITIONS",
];

/// The findings for the code tokens of `sql`; `allow_sensitive` lets functions that read sensitive catalogs
/// through.
pub(crate) fn findings(sql: &str, tokens: &[Token], allow_sensitive: bool) -> Findings {
    // The tokens that are not comments (most texts have none: then no copy is made).
    let filtered: Vec<&Token>;
    let code: Code<'_> = if tokens.iter().any(|t| t.kind == Kind::Comment) {
        filtered = tokens.iter().filter(|t| t.kind != Kind::Comment).collect();
        Code::Filtered(&filtered)
    } else {
        Code::All(tokens)
    };
    let mut out = Findings::default();
    let push = |r: Reason, out: &mut Findings| {
        if !out.reasons.contains(&r) {
            out.reasons.push(r);
        }
    };
    // Statements: split at `;` as the engine does.
    let mut statements = 0usize;
    let mut in_statement = false;
    let mut depth = 0usize;
    let mut first: Option<String> = None;
    let mut explain = false;
    for t in code.iter() {
        if t.is_punct(sql, ";") {
            if in_statement {
                out.first_words.push(first.take().unwrap_or_default());
            }
            in_statement = false;
            depth = 0;
            continue;
        }
        if !in_statement {
            statements += 1;
            in_statement = true;
            explain = false;
        }
        if first.is_none() && depth == 0 {
            if t.kind == Kind::Word {
                let upper = t.text(sql).to_ascii_uppercase();
                if EXPLAIN_WORDS.contains(&upper.as_str()) {
                    explain = true;
                } else {
                    first = Some(upper);
                }
            } else if t.is_punct(sql, "(") && !explain {
                // A parenthesized query: `(SELECT …)`.
                first = Some("(".to_owned());
            }
        }
        if t.is_punct(sql, "(") {
            depth += 1;
        } else if t.is_punct(sql, ")") {
            depth = depth.saturating_sub(1);
        }
    }
    if in_statement {
        out.first_words.push(first.take().unwrap_or_default());
    }
    if statements > 1 {
        push(
            reason(
                "multiple_statements",
                format!(
                    "{statements} statements were given; send exactly one SELECT statement, without `;` in between."
                ),
            ),
            &mut out,
        );
    }
    // `EXPLAIN ANALYZE` (or `ANALYSE`, or inside the options) runs the statement.
    let mut explaining = false;
    for t in code.iter() {
        if t.is_word(sql, "EXPLAIN") {
            explaining = true;
        } else if explaining && (t.is_word(sql, "ANALYZE") || t.is_word(sql, "ANALYSE")) {
            push(
                reason(
                    "explain_analyze",
                    "EXPLAIN ANALYZE runs the statement; use EXPLAIN without ANALYZE.",
                ),
                &mut out,
            );
        } else if explaining
            && t.kind == Kind::Word
            && !EXPLAIN_WORDS.iter().any(|w| t.is_word(sql, w))
            && ![
                "FORMAT",
                "JSON",
                "TEXT",
                "XML",
                "YAML",
                "TRUE",
                "FALSE",
                "ON",
                "OFF",
                "COSTS",
                "BUFFERS",
                "SETTINGS",
                "WAL",
                "TIMING",
                "SUMMARY",
                "GENERIC_PLAN",
            ]
            .iter()
            .any(|w| t.is_word(sql, w))
        {
            explaining = false;
        }
    }
    for (i, t) in code.iter().enumerate() {
        let next = |k: usize| code.get(i + k);
        let word_at = |k: usize, w: &str| next(k).is_some_and(|n| n.is_word(sql, w));
        if t.is_word(sql, "INTO") {
            push(
                reason(
                    "select_into",
                    "SELECT … INTO creates a table, writes a file or sets variables; remove INTO.",
                ),
                &mut out,
            );
        }
        let locking = (t.is_word(sql, "FOR")
            && ["UPDATE", "SHARE", "NO", "KEY"]
                .iter()
                .any(|w| word_at(1, w)))
            || (t.is_word(sql, "LOCK") && word_at(1, "IN"));
        if locking {
            push(
                reason(
                    "locking_read",
                    "Locking reads (FOR UPDATE / FOR SHARE / LOCK IN SHARE MODE) are not allowed; remove that clause.",
                ),
                &mut out,
            );
        }
        if (t.is_word(sql, "NEXT") || t.is_word(sql, "PREVIOUS"))
            && word_at(1, "VALUE")
            && word_at(2, "FOR")
        {
            push(
                reason(
                    "forbidden_function",
                    "NEXT VALUE FOR / PREVIOUS VALUE FOR use a sequence, which has side effects; remove them.",
                ),
                &mut out,
            );
        }
        if let Some(name) = t.ident(sql)
            && next(1).is_some_and(|n| n.is_punct(sql, "("))
            && let Some(family) = functions::family(name)
            && family != Family::Memory
            && !(allow_sensitive && family == Family::Sensitive)
        {
            push(function_refusal(name, family), &mut out);
        }
    }
    out
}

/// Tokens without comments: all of them, or a filtered copy.
enum Code<'a> {
    All(&'a [Token]),
    Filtered(&'a [&'a Token]),
}

impl<'a> Code<'a> {
    fn get(&self, i: usize) -> Option<&'a Token> {
        match self {
            Self::All(t) => t.get(i),
            Self::Filtered(t) => t.get(i).copied(),
        }
    }

    fn iter(&self) -> impl Iterator<Item = &'a Token> + '_ {
        (0..).map_while(|i| self.get(i))
    }
}

/// The refusal for a call of `name`, refused as part of `family`.
pub(crate) fn function_refusal(name: &str, family: Family) -> Reason {
    reason(
        "forbidden_function",
        format!(
            "Function `{}` is not allowed: {}.",
            name.to_ascii_lowercase(),
            family.why()
        ),
    )
}
