//! What a SQL text says besides its code, read with the engine's own lexer: its comments (free text that runs as
//! nothing), its literals (values, which name rows: `order_code = 'QZKD…'`, `id = 7`, `DATE '2024-01-31'`) and
//! the names it makes up (aliases, CTE names: `AS "Bob's total"`). Saved examples are kept without comments
//! ([`Guard::without_comments`]) and shown to a reader whose rows are filtered only when they hold no value
//! ([`Guard::free_text`]). The text is edited only between tokens: strings, quoted names and every other token
//! stay byte for byte (`'a -- b'` and `'/* c */'` are strings, not comments); nothing is re-printed from a parse.

use super::Guard;
use super::lex::{Kind, Lexed, Token};

/// What a text holds besides code.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FreeText {
    /// It holds a literal — a string, a number, a date, a blob, a variable — other than a row count of `LIMIT`,
    /// `OFFSET`, `FETCH FIRST` or `TOP`, a position in a `GROUP BY` or `ORDER BY` list, or a string that only
    /// spells a date format, unit or offset (`'%Y-%m'`, `'month'`, `'-90 days'`, `'start of month'`).
    pub(crate) values: bool,
    /// The names it uses that are not keywords, called functions or qualifiers (`o.` in `o.total`): table,
    /// column and made-up names (aliases, CTEs), lowercase, as the engine reads them (quoted names decoded).
    pub(crate) names: Vec<String>,
}

/// Words that end a `GROUP BY` or `ORDER BY` list.
const LIST_ENDS: &[&str] = &[
    "limit",
    "offset",
    "having",
    "window",
    "union",
    "intersect",
    "except",
    "fetch",
    "for",
    "qualify",
    "select",
    "from",
    "where",
    "order",
    "group",
];

/// Words whose following number is a row count, not a value.
const COUNTS: &[&str] = &["limit", "offset", "top", "first", "next"];

/// A comment as the engines write one (MySQL's lexer also marks the quoted name of `@'var'` as a comment token,
/// which is code).
fn is_comment(sql: &str, t: &Token) -> bool {
    t.kind == Kind::Comment && {
        let text = t.text(sql);
        text.starts_with("--") || text.starts_with("/*") || text.starts_with('#')
    }
}

impl Guard {
    /// `sql` without its comments, as the engine reads them (`--`, `/* */` nested on PostgreSQL, `#` on MySQL and
    /// MariaDB): each is removed with the space before it on its line, a removed comment between two tokens
    /// leaves a space (or the line break after it), and the ends are trimmed. Strings, quoted names and every
    /// other token are kept byte for byte. An error saying why when the text cannot be read safely: a string
    /// or comment left open, executable comments and optimizer hints (MySQL runs their content), or text that
    /// reads two ways under the server's unknown settings.
    pub fn without_comments(&self, sql: &str) -> Result<String, String> {
        let readings = self.readings(sql).map_err(|r| r.message)?;
        let Some(lexed) = readings.first() else {
            return Ok(sql.trim().to_owned());
        };
        let comments = |l: &Lexed| -> Vec<(usize, usize)> {
            l.tokens
                .iter()
                .filter(|t| is_comment(sql, t))
                .map(|t| (t.start, t.end))
                .collect()
        };
        let found = comments(lexed);
        if readings.iter().any(|r| comments(r) != found) {
            return Err(
                "where its comments are depends on the server's ANSI_QUOTES setting; write names as `…` and \
                 strings as '…'"
                    .to_owned(),
            );
        }
        if let Some(problem) = readings.iter().flat_map(|r| &r.problems).next() {
            return Err(problem.message.clone());
        }
        let mut out = String::with_capacity(sql.len());
        // The end of the last token kept, and whether a comment was removed since.
        let mut kept: Option<usize> = None;
        let mut removed = false;
        let mut last_comment_end = 0;
        for token in &lexed.tokens {
            if is_comment(sql, token) {
                removed = true;
                last_comment_end = token.end;
                continue;
            }
            if let Some(end) = kept {
                let gap = sql.get(end..token.start).unwrap_or("");
                if !removed {
                    out.push_str(gap);
                } else {
                    // The layout after the last comment when it starts a new line, else one separator.
                    let after = sql.get(last_comment_end..token.start).unwrap_or("");
                    if after.contains('\n') {
                        out.push_str(after.trim_start_matches([' ', '\t']));
                    } else if gap.contains('\n') {
                        out.push('\n');
                    } else {
                        out.push(' ');
                    }
                }
            }
            out.push_str(token.text(sql));
            kept = Some(token.end);
            removed = false;
        }
        Ok(out.trim().to_owned())
    }

    /// What `sql` holds besides code (see [`FreeText`]), in every way the engine may read it; `None` when it
    /// cannot be read (it then counts as holding values).
    pub(crate) fn free_text(&self, sql: &str) -> Option<FreeText> {
        let readings = self.readings(sql).ok()?;
        let mut found = FreeText::default();
        for lexed in &readings {
            let code: Vec<&Token> = lexed.code().collect();
            // How deep in parentheses the text is, and the depth of the `GROUP BY` / `ORDER BY` list it is in.
            let mut depth = 0usize;
            let mut by_list: Option<usize> = None;
            for (i, t) in code.iter().enumerate() {
                let next = code.get(i + 1);
                let before = |back: usize| i.checked_sub(back).and_then(|j| code.get(j));
                if t.is_punct(sql, "(") {
                    depth += 1;
                } else if t.is_punct(sql, ")") {
                    depth = depth.saturating_sub(1);
                    if by_list.is_some_and(|d| depth < d) {
                        by_list = None;
                    }
                } else if t.is_punct(sql, ";") {
                    by_list = None;
                } else if t.is_word(sql, "by") {
                    by_list = Some(depth);
                } else if by_list == Some(depth) && LIST_ENDS.iter().any(|w| t.is_word(sql, w)) {
                    by_list = None;
                }
                match t.kind {
                    Kind::Str if is_date_code(&string_body(sql, t)) => {}
                    Kind::Str | Kind::UnicodeStr | Kind::Variable => found.values = true,
                    Kind::Number => {
                        let counted = |w: Option<&&Token>| {
                            w.is_some_and(|w| COUNTS.iter().any(|c| w.is_word(sql, c)))
                        };
                        // `LIMIT 5`, `OFFSET 10`, MySQL's `LIMIT 10, 5`; `GROUP BY 1, 2` and `ORDER BY 2`
                        // (positions of the select list).
                        let count = counted(before(1))
                            || (before(1).is_some_and(|p| p.is_punct(sql, ","))
                                && before(2).is_some_and(|p| p.kind == Kind::Number)
                                && counted(before(3)));
                        let position = by_list == Some(depth)
                            && before(1)
                                .is_some_and(|p| p.is_word(sql, "by") || p.is_punct(sql, ","));
                        let ends = next.is_none_or(|n| {
                            n.is_punct(sql, ",")
                                || n.is_punct(sql, ")")
                                || n.is_punct(sql, ";")
                                || n.kind == Kind::Word
                        });
                        if !(count || (position && ends)) {
                            found.values = true;
                        }
                    }
                    Kind::Word | Kind::Quoted | Kind::UnicodeName => {
                        // A qualifier (`o.` of `o.total`, a schema) names what is named elsewhere; a called
                        // function is code.
                        if next.is_some_and(|n| n.is_punct(sql, ".") || n.is_punct(sql, "(")) {
                            continue;
                        }
                        let name = match t.kind {
                            Kind::Word => t.text(sql),
                            _ => t.name().unwrap_or_else(|| t.text(sql)),
                        };
                        if t.kind == Kind::Word && is_keyword(name) {
                            continue;
                        }
                        let name = name.to_lowercase();
                        if !found.names.contains(&name) {
                            found.names.push(name);
                        }
                    }
                    Kind::Param | Kind::Op | Kind::Punct | Kind::Comment => {}
                }
            }
        }
        Some(found)
    }
}

/// The words of a string that spells a date unit or an offset from now (`date_trunc('month', …)`,
/// `date('now', 'start of month', '-90 days')`, `INTERVAL '1 year'`).
const DATE_WORDS: &[&str] = &[
    "now",
    "start",
    "of",
    "localtime",
    "utc",
    "unixepoch",
    "weekday",
    "epoch",
    "dow",
    "doy",
    "isodow",
    "millennium",
    "century",
    "decade",
    "year",
    "years",
    "quarter",
    "quarters",
    "month",
    "months",
    "week",
    "weeks",
    "day",
    "days",
    "hour",
    "hours",
    "minute",
    "minutes",
    "second",
    "seconds",
    "milliseconds",
    "microseconds",
    "ago",
];

/// Whether a string's content only spells a date format, unit or offset: [`DATE_WORDS`], `strftime` formats
/// (`%Y-%m-%d`), and signed whole numbers before a unit (`-90 days`). Anything else is a value.
fn is_date_code(body: &str) -> bool {
    let words: Vec<String> = body
        .split_whitespace()
        .map(str::to_ascii_lowercase)
        .collect();
    !words.is_empty()
        && words.iter().enumerate().all(|(i, w)| {
            DATE_WORDS.contains(&w.as_str())
                || is_format(w)
                || (w
                    .trim_start_matches(['+', '-'])
                    .bytes()
                    .all(|b| b.is_ascii_digit())
                    && w.trim_start_matches(['+', '-']).len() <= 4
                    && words
                        .get(i + 1)
                        .is_some_and(|unit| DATE_WORDS.contains(&unit.as_str())))
        })
}

/// A `strftime` format: `%` codes and separators only (`%Y-%m`, `%H:%M`).
fn is_format(word: &str) -> bool {
    let mut chars = word.chars();
    let mut codes = 0;
    while let Some(c) = chars.next() {
        match c {
            '%' => match chars.next() {
                Some(code) if code.is_ascii_alphabetic() => codes += 1,
                _ => return false,
            },
            '-' | '/' | ':' | '.' | 'T' | 't' | '_' => {}
            _ => return false,
        }
    }
    codes > 0
}

/// The content of a string token, as written between its quotes (prefixes like `E`, `N`, `B` dropped; a
/// dollar-quoted string's canonical `'…'` form read instead).
fn string_body(sql: &str, t: &Token) -> String {
    let text = t.canonical().unwrap_or_else(|| t.text(sql));
    let Some(open) = text.find(['\'', '"']) else {
        return text.to_owned();
    };
    let quote = text
        .get(open..)
        .and_then(|t| t.chars().next())
        .unwrap_or('\'');
    let inner = text
        .get(open + 1..text.len().saturating_sub(1).max(open + 1))
        .unwrap_or("");
    let doubled = format!("{quote}{quote}");
    inner.replace(&doubled, &quote.to_string())
}

/// Whether an unquoted word is a SQL keyword (of any dialect sqlparser knows).
fn is_keyword(word: &str) -> bool {
    let upper = word.to_ascii_uppercase();
    sqlparser::keywords::ALL_KEYWORDS
        .binary_search(&upper.as_str())
        .is_ok()
}

#[cfg(test)]
mod tests {
    use crate::dialect::Dialect;
    use crate::guard::{Guard, ServerSettings};

    fn strip(dialect: Dialect, sql: &str) -> String {
        Guard::new(dialect)
            .with_settings(known(dialect))
            .without_comments(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    fn known(dialect: Dialect) -> ServerSettings {
        match dialect {
            Dialect::Postgres => ServerSettings::postgres(true),
            Dialect::Mysql => ServerSettings::mysql("", true),
            Dialect::Sqlite => ServerSettings::unknown(),
        }
    }

    #[test]
    fn comments_go_and_strings_that_look_like_comments_stay() {
        for dialect in [Dialect::Sqlite, Dialect::Postgres, Dialect::Mysql] {
            assert_eq!(
                strip(dialect, "SELECT 1 -- SSN-BOB-SECRET"),
                "SELECT 1",
                "{dialect:?}"
            );
            assert_eq!(
                strip(
                    dialect,
                    "/* lead */ SELECT a, -- the a\n       b\nFROM t /* end */"
                ),
                "SELECT a,\n       b\nFROM t"
            );
            assert_eq!(strip(dialect, "SELECT/**/1"), "SELECT 1");
            assert_eq!(strip(dialect, "SELECT 2-/**/-1"), "SELECT 2- -1");
            assert_eq!(
                strip(
                    dialect,
                    "SELECT '-- not a comment', '/* nor this */' FROM t -- but this\nWHERE x = 1"
                ),
                "SELECT '-- not a comment', '/* nor this */' FROM t\nWHERE x = 1"
            );
            assert_eq!(
                strip(dialect, "SELECT 'a  \n  b' /* x */ FROM t"),
                "SELECT 'a  \n  b' FROM t"
            );
        }
        // Nested comments on PostgreSQL, dollar quotes keep what looks like one.
        assert_eq!(
            strip(
                Dialect::Postgres,
                "SELECT /* outer /* inner SSN-BOB-SECRET */ still */ $q$-- kept /* too */$q$"
            ),
            "SELECT $q$-- kept /* too */$q$"
        );
        // `#` comments and backslash escapes on MySQL and MariaDB; `--` without a space is arithmetic.
        assert_eq!(
            strip(
                Dialect::Mysql,
                "SELECT 'it\\'s -- here' # SSN-BOB-SECRET\nFROM t WHERE a = 1--1"
            ),
            "SELECT 'it\\'s -- here'\nFROM t WHERE a = 1--1"
        );
        // `#` is not a comment on PostgreSQL; a variable's quoted name is not one on MySQL.
        assert_eq!(strip(Dialect::Postgres, "SELECT 5 # 3"), "SELECT 5 # 3");
        assert_eq!(strip(Dialect::Mysql, "SELECT @'x' -- y"), "SELECT @'x'");
    }

    #[test]
    fn text_that_cannot_be_read_safely_is_refused() {
        let mysql = Guard::new(Dialect::Mysql).with_settings(known(Dialect::Mysql));
        assert!(mysql.without_comments("SELECT /*! 1 */ 2").is_err());
        assert!(mysql.without_comments("SELECT 1 /* open").is_err());
        assert!(
            Guard::new(Dialect::Postgres)
                .with_settings(known(Dialect::Postgres))
                .without_comments("SELECT 'open")
                .is_err()
        );
        // Unknown ANSI_QUOTES: `"…"` is a string (where `\"` escapes the quote) or a name, so the `--` after it
        // is or is not a comment.
        let mut unknown_quotes = ServerSettings::mysql("", true);
        unknown_quotes.ansi_quotes = None;
        assert!(
            Guard::new(Dialect::Mysql)
                .with_settings(unknown_quotes)
                .without_comments("SELECT \"a\\\" -- \" FROM t")
                .is_err()
        );
    }

    #[test]
    fn values_and_made_up_names_are_found_and_row_counts_are_not_values() {
        let lite = Guard::new(Dialect::Sqlite);
        let said = |sql: &str| lite.free_text(sql).unwrap();
        assert!(!said("SELECT COUNT(*) AS n FROM orders o LIMIT 5 OFFSET 10").values);
        assert!(!said("SELECT a, b, SUM(c) AS c FROM t GROUP BY 1, 2 ORDER BY 3 DESC, 1").values);
        assert!(said("SELECT a FROM t ORDER BY 2 * a").values);
        assert!(!said("SELECT a, b FROM t GROUP BY a, 2").values);
        assert!(said("SELECT a FROM t ORDER BY f(a, 7)").values);
        assert!(said("SELECT a FROM t GROUP BY a HAVING COUNT(*) > 7").values);
        assert_eq!(
            said("SELECT COUNT(*) AS n FROM main.orders o WHERE o.total > total").names,
            ["n", "orders", "o", "total"]
        );
        for sql in [
            "SELECT * FROM orders WHERE code = 'QZKDLWPRTM'",
            "SELECT * FROM orders WHERE id = 7",
            "SELECT * FROM orders WHERE at > date('2024-01-31')",
            "SELECT * FROM orders WHERE blob = X'00'",
            "SELECT * FROM orders LIMIT 1 OFFSET 2 + 3",
        ] {
            assert!(said(sql).values, "{sql}");
        }
        assert!(
            said("SELECT total AS \"Bob Smith\" FROM orders")
                .names
                .contains(&"bob smith".to_owned())
        );
        // Strings that only spell a date format, unit or offset are code.
        for sql in [
            "SELECT strftime('%Y-%m', at) AS month FROM orders WHERE at >= date('now', 'start of month', '-90 days')",
            "SELECT date_trunc('month', at) FROM orders",
        ] {
            assert!(!said(sql).values, "{sql}");
        }
        for sql in [
            "SELECT * FROM orders WHERE at = '2024-01-31'",
            "SELECT * FROM orders WHERE code = 'month QZ'",
            "SELECT * FROM orders WHERE code LIKE '%QZ%'",
            "SELECT * FROM orders WHERE code = '%'",
        ] {
            assert!(said(sql).values, "{sql}");
        }
        let pg = Guard::new(Dialect::Postgres);
        assert!(pg.free_text("SELECT $x$QZ$x$").unwrap().values);
        assert!(
            !pg.free_text("SELECT $x$month$x$, INTERVAL '1 year'")
                .unwrap()
                .values
        );
        assert!(pg.free_text("SELECT DATE '2024-01-01'").unwrap().values);
        assert!(
            !pg.free_text("SELECT a FROM t FETCH FIRST 3 ROWS ONLY")
                .unwrap()
                .values
        );
        let my = Guard::new(Dialect::Mysql).with_settings(known(Dialect::Mysql));
        assert!(!my.free_text("SELECT a FROM t LIMIT 10, 5").unwrap().values);
        assert!(my.free_text("SELECT \"QZ\" FROM t").unwrap().values);
    }
}
