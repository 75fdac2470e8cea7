//! Named parameters (`:name`) in SQL written by a person (a tool declared in a config file), turned into the
//! engine's own placeholders by lexing the text as the engine does: a `:name` inside a string, a quoted name or
//! a comment is text, and PostgreSQL's `::type` casts are not parameters. Values are always bound, never
//! spliced into the text.

use serde::{Deserialize, Serialize};

use super::lex::{Kind, Lexed, Token};
use super::{Guard, Reason, bounds, reason};
use crate::dialect::Dialect;

/// A statement whose `:name` parameters were replaced by the engine's placeholders.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamedSql {
    /// The text with the engine's placeholders (`$1`, `$2`, … on PostgreSQL, where a name used twice keeps
    /// its number; `?` on SQLite and MySQL/MariaDB). This is the text to check and to run.
    pub sql: String,
    /// The name of the parameter to bind at each placeholder, in order (on PostgreSQL each name once, in
    /// the order of first use; elsewhere once per use).
    pub names: Vec<String>,
}

/// One `:name` found in the text: its byte range and its name.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Found {
    start: usize,
    end: usize,
    name: String,
}

impl Guard {
    /// Replaces the `:name` parameters of `sql` with the engine's placeholders.
    ///
    /// Refused: text the engine's settings make ambiguous (where a string ends depends on an unknown
    /// setting), text that already has positional placeholders (`?`, `$1`, `@a`), and names that are not
    /// plain identifiers (`[A-Za-z_][A-Za-z0-9_]*`).
    ///
    /// ```
    /// use steward_sql::{Dialect, Guard};
    ///
    /// let pg = Guard::new(Dialect::Postgres);
    /// let named = pg.bind_named("SELECT ':x', a::int FROM t WHERE b = :x OR c = :x -- :y").unwrap();
    /// assert_eq!(named.sql, "SELECT ':x', a::int FROM t WHERE b = $1 OR c = $1 -- :y");
    /// assert_eq!(named.names, ["x"]);
    /// ```
    pub fn bind_named(&self, sql: &str) -> Result<NamedSql, Reason> {
        if let Some(r) = bounds::length(sql) {
            return Err(r);
        }
        let readings = self.readings(sql)?;
        let mut found: Option<Vec<Found>> = None;
        for lexed in &readings {
            let here = placeholders(sql, lexed, self.dialect())?;
            match &found {
                Some(first) if *first != here => {
                    return Err(reason(
                        "ambiguous_text",
                        "Where the parameters are in this text depends on the server's ANSI_QUOTES setting (\"…\" is a string without it, a name with it); write strings as '…' and names as `…`.",
                    ));
                }
                Some(_) => {}
                None => found = Some(here),
            }
        }
        let found = found.unwrap_or_default();
        Ok(translate(sql, &found, self.dialect()))
    }
}

/// The `:name` parameters of one reading of the text.
fn placeholders(sql: &str, lexed: &Lexed, dialect: Dialect) -> Result<Vec<Found>, Reason> {
    let tokens: Vec<&Token> = lexed.code().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(token) = tokens.get(i) {
        let text = token.text(sql);
        match (dialect, token.kind) {
            // SQLite reads `:name` as one variable token (with any `::x` or `(…)` suffix it allows).
            (Dialect::Sqlite, Kind::Param) if text.starts_with(':') => {
                out.push(found(token.start, token.end, &text[1..])?);
            }
            (_, Kind::Param) => return Err(positional(text)),
            // PostgreSQL reads `:` as punctuation (`::` is one operator), MySQL as an operator (`:=` is
            // one); a name must follow it directly. `a[1:2]` (an array slice) has a number there and stays;
            // `a[lo:hi]` reads as a parameter `hi` (write `a[lo : hi]`).
            (Dialect::Postgres, Kind::Punct) | (Dialect::Mysql, Kind::Op) if text == ":" => {
                if let Some(next) = tokens.get(i + 1)
                    && next.start == token.end
                    && next.kind == Kind::Word
                {
                    out.push(found(token.start, next.end, next.text(sql))?);
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(out)
}

fn found(start: usize, end: usize, name: &str) -> Result<Found, Reason> {
    let mut chars = name.chars();
    let plain = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !plain {
        return Err(reason(
            "parse_error",
            format!(
                "`:{name}` is not a parameter name: write :name with letters, digits and _ only, starting with a letter or _."
            ),
        ));
    }
    Ok(Found {
        start,
        end,
        name: name.to_owned(),
    })
}

fn positional(text: &str) -> Reason {
    reason(
        "positional_placeholder",
        format!(
            "`{text}` is a positional placeholder; name every parameter instead (:name) and declare it."
        ),
    )
}

fn translate(sql: &str, found: &[Found], dialect: Dialect) -> NamedSql {
    let mut out = String::with_capacity(sql.len() + found.len() * 2);
    let mut names: Vec<String> = Vec::new();
    let mut pos = 0;
    for f in found {
        out.push_str(sql.get(pos..f.start).unwrap_or(""));
        if dialect == Dialect::Postgres {
            let n = match names.iter().position(|n| *n == f.name) {
                Some(i) => i + 1,
                None => {
                    names.push(f.name.clone());
                    names.len()
                }
            };
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            names.push(f.name.clone());
            out.push('?');
        }
        pos = f.end;
    }
    out.push_str(sql.get(pos..).unwrap_or(""));
    NamedSql { sql: out, names }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::ServerSettings;

    fn named(dialect: Dialect, sql: &str) -> Result<NamedSql, Reason> {
        let settings = match dialect {
            Dialect::Postgres => ServerSettings::postgres(true),
            Dialect::Mysql => ServerSettings::mysql("", true),
            _ => ServerSettings::unknown(),
        };
        Guard::new(dialect).with_settings(settings).bind_named(sql)
    }

    #[test]
    fn names_outside_strings_comments_and_casts_become_placeholders() {
        let sql = "SELECT ':a', \":a\", x::int, /* :a */ y FROM t WHERE a = :a AND b = :b_2 AND c = :a -- :a";
        let pg = named(Dialect::Postgres, sql).unwrap();
        assert_eq!(
            pg.sql,
            "SELECT ':a', \":a\", x::int, /* :a */ y FROM t WHERE a = $1 AND b = $2 AND c = $1 -- :a"
        );
        assert_eq!(pg.names, ["a", "b_2"]);
        let sqlite = named(Dialect::Sqlite, &sql.replace("x::int", "x")).unwrap();
        assert_eq!(
            sqlite.sql,
            "SELECT ':a', \":a\", x, /* :a */ y FROM t WHERE a = ? AND b = ? AND c = ? -- :a"
        );
        assert_eq!(sqlite.names, ["a", "b_2", "a"]);
        let mysql = named(
            Dialect::Mysql,
            "SELECT ':a', `:a`, '\\':a' FROM t WHERE a = :a # :b",
        )
        .unwrap();
        assert_eq!(
            mysql.sql,
            "SELECT ':a', `:a`, '\\':a' FROM t WHERE a = ? # :b"
        );
        assert_eq!(mysql.names, ["a"]);
    }

    #[test]
    fn dollar_quotes_and_escape_strings_are_text() {
        let pg = named(
            Dialect::Postgres,
            "SELECT $$ :a $$, $t$:a$t$, E'\\':a', :b::text",
        )
        .unwrap();
        assert_eq!(pg.sql, "SELECT $$ :a $$, $t$:a$t$, E'\\':a', $1::text");
        assert_eq!(pg.names, ["b"]);
    }

    #[test]
    fn positional_placeholders_and_odd_names_are_refused() {
        for (dialect, sql) in [
            (Dialect::Postgres, "SELECT $1"),
            (Dialect::Sqlite, "SELECT ?"),
            (Dialect::Sqlite, "SELECT @a"),
            (Dialect::Mysql, "SELECT ?"),
        ] {
            let r = named(dialect, sql).unwrap_err();
            assert_eq!(r.code, "positional_placeholder", "{sql}: {r:?}");
        }
        let r = named(Dialect::Sqlite, "SELECT :a::b").unwrap_err();
        assert_eq!(r.code, "parse_error", "{r:?}");
        let r = named(Dialect::Sqlite, "SELECT :a$").unwrap_err();
        assert!(r.message.contains("`:a$`"), "{r:?}");
        // A PostgreSQL array slice is not a parameter.
        let slice = named(Dialect::Postgres, "SELECT (ARRAY[1,2,3])[1:2], :a").unwrap();
        assert_eq!(slice.sql, "SELECT (ARRAY[1,2,3])[1:2], $1");
        // MySQL `:=` is not a parameter (the guard refuses it elsewhere).
        assert!(
            named(Dialect::Mysql, "SELECT @x := 1")
                .unwrap()
                .names
                .is_empty()
        );
        assert_eq!(
            named(Dialect::Mysql, "SELECT a FROM t").unwrap().names,
            Vec::<String>::new()
        );
    }
}
