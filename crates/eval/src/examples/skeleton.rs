//! A query's skeleton: its structure with the literals and names abstracted, so that two questions answered
//! by the same kind of query (`SELECT count(*) FROM singer WHERE age > 30` and `SELECT count(*) FROM pets
//! WHERE weight > 10`) compare equal. A small tokenizer of its own, the same for every dialect: it reads
//! strings (`'…'` with `''`, `E'…'` with backslash escapes), quoted names (`"…"`, `` `…` ``, `[…]`), numbers,
//! parameters, comments (`--`, `/* */`) and operators.

/// What a literal (number, string, parameter) becomes in a skeleton.
pub(crate) const LITERAL: &str = "?";
/// What a name (table, column, alias; quoted or not) becomes in a skeleton.
pub(crate) const NAME: &str = "_";

/// One token of a query.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    /// A bare word: a keyword, a function's or a type's name, or a name.
    Word(String),
    /// A quoted name: `"…"`, `` `…` `` or `[…]` (its content, unquoted).
    Quoted { text: String, double: bool },
    /// A string literal (as written, quotes included).
    Str(String),
    /// A number or a parameter (`?`, `$1`, `:name`).
    Number(String),
    /// An operator or punctuation.
    Symbol(String),
}

/// Words kept in a skeleton (lower case): SQL's keywords, type names and the like. A word followed by `(` is
/// kept too (a function: `count`, `strftime`); any other word is a name.
const KEYWORDS: &[&str] = &[
    "all",
    "and",
    "any",
    "array",
    "as",
    "asc",
    "between",
    "bigint",
    "boolean",
    "both",
    "by",
    "case",
    "cast",
    "char",
    "collate",
    "cross",
    "current_date",
    "current_time",
    "current_timestamp",
    "date",
    "day",
    "decimal",
    "desc",
    "distinct",
    "double",
    "else",
    "end",
    "escape",
    "except",
    "exists",
    "extract",
    "false",
    "fetch",
    "filter",
    "first",
    "float",
    "following",
    "for",
    "from",
    "full",
    "glob",
    "group",
    "having",
    "hour",
    "ilike",
    "in",
    "inner",
    "int",
    "integer",
    "intersect",
    "interval",
    "is",
    "isnull",
    "join",
    "last",
    "lateral",
    "leading",
    "left",
    "like",
    "limit",
    "minute",
    "month",
    "natural",
    "next",
    "not",
    "notnull",
    "null",
    "nulls",
    "numeric",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "outer",
    "over",
    "partition",
    "preceding",
    "precision",
    "range",
    "real",
    "recursive",
    "right",
    "row",
    "rows",
    "second",
    "select",
    "similar",
    "smallint",
    "some",
    "text",
    "then",
    "ties",
    "time",
    "timestamp",
    "to",
    "top",
    "trailing",
    "true",
    "unbounded",
    "union",
    "using",
    "values",
    "varchar",
    "week",
    "when",
    "where",
    "window",
    "with",
    "within",
    "year",
    "zone",
];

/// Operators read as one token, longest first.
const OPERATORS: &[&str] = &[
    "->>", "<=>", "<>", "!=", "<=", ">=", "==", "||", "::", "->", "<<", ">>", "~*", "!~",
];

/// The skeleton of `sql`: its tokens separated by single spaces, keywords, function names, operators and
/// punctuation kept (in lower case), every number, string and parameter as `?` and every name as `_`.
/// Comments, whitespace, case and a trailing `;` do not count; `==` is `=` and `!=` is `<>`. A double-quoted
/// token is a name (standard SQL), except where only a value can be (after a comparison, `LIKE`, `BETWEEN`,
/// in an `IN` list): SQLite, and Spider's gold SQL with it, reads `"Alice"` there as a string.
pub fn sql_skeleton(sql: &str) -> String {
    let tokens = tokenize(sql);
    let mut out: Vec<String> = Vec::with_capacity(tokens.len());
    for (i, token) in tokens.iter().enumerate() {
        let next = tokens.get(i + 1);
        let piece = match token {
            Token::Str(_) | Token::Number(_) => LITERAL.to_owned(),
            Token::Quoted { double: true, .. } if value_position(&out) => LITERAL.to_owned(),
            Token::Quoted { .. } => NAME.to_owned(),
            Token::Word(w) => {
                let lower = w.to_ascii_lowercase();
                let call = matches!(next, Some(Token::Symbol(s)) if s == "(");
                // A type name before a string is a typed literal (`DATE '2024-01-01'`).
                let typed = matches!(next, Some(Token::Str(_)));
                if KEYWORDS.contains(&lower.as_str()) || call || typed {
                    lower
                } else {
                    NAME.to_owned()
                }
            }
            Token::Symbol(s) => match s.as_str() {
                "==" => "=".to_owned(),
                "!=" => "<>".to_owned(),
                _ => s.clone(),
            },
        };
        out.push(piece);
    }
    while out.last().is_some_and(|t| t == ";") {
        out.pop();
    }
    out.join(" ")
}

/// `sql` with whitespace, comments and case normalised (tokens as written, lower case, one space apart;
/// no trailing `;`): two queries equal after this are the same query.
pub fn normalized_sql(sql: &str) -> String {
    let mut out: Vec<String> = tokenize(sql)
        .into_iter()
        .map(|t| match t {
            Token::Word(s) | Token::Str(s) | Token::Number(s) | Token::Symbol(s) => {
                s.to_lowercase()
            }
            Token::Quoted { text, .. } => format!("\"{}\"", text.to_lowercase()),
        })
        .collect();
    while out.last().is_some_and(|t| t == ";") {
        out.pop();
    }
    out.join(" ")
}

/// Whether a double-quoted token after the skeleton so far stands where only a value can: after a
/// comparison, `LIKE`/`GLOB`, `BETWEEN … AND`, or in a list of values after `IN (`.
fn value_position(before: &[String]) -> bool {
    let last = |n: usize| {
        before
            .len()
            .checked_sub(n)
            .and_then(|i| before.get(i))
            .map(String::as_str)
    };
    match last(1) {
        Some("=" | "<>" | "<" | ">" | "<=" | ">=" | "like" | "ilike" | "glob" | "between") => true,
        Some("(") => last(2) == Some("in"),
        Some(",") => {
            // Inside `IN (?, ?, …`: walk back over the values to the parenthesis.
            let mut i = before.len();
            while i >= 2 && before[i - 1] == "," && before[i - 2] == LITERAL {
                i -= 2;
            }
            i >= 2 && before[i - 1] == "(" && before[i - 2] == "in"
        }
        Some("and") => last(2) == Some(LITERAL) && last(3) == Some("between"),
        _ => false,
    }
}

/// The tokens of `sql`; comments and whitespace dropped. Never fails: an unterminated string or quoted
/// name runs to the end, an unknown character is a symbol of its own.
fn tokenize(sql: &str) -> Vec<Token> {
    let chars: Vec<char> = sql.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    let text = |from: usize, to: usize| chars[from..to.min(chars.len())].iter().collect::<String>();
    while let Some(&c) = chars.get(i) {
        let next = chars.get(i + 1).copied();
        if c.is_whitespace() {
            i += 1;
        } else if c == '-' && next == Some('-') {
            while chars.get(i).is_some_and(|&c| c != '\n') {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i += 2;
        } else if c == '\'' {
            let end = string_end(&chars, i, false);
            tokens.push(Token::Str(text(i, end)));
            i = end;
        } else if matches!(c, 'e' | 'E' | 'n' | 'N' | 'x' | 'X' | 'b' | 'B') && next == Some('\'') {
            // E'…' (backslash escapes), N'…', X'…', B'…': one string.
            let end = string_end(&chars, i + 1, matches!(c, 'e' | 'E'));
            tokens.push(Token::Str(text(i, end)));
            i = end;
        } else if c == '"' || c == '`' {
            let (end, content) = quoted_end(&chars, i, c);
            tokens.push(Token::Quoted {
                text: content,
                double: c == '"',
            });
            i = end;
        } else if c == '[' {
            // SQL Server's and SQLite's bracketed name.
            let close = chars[i + 1..].iter().position(|&c| c == ']');
            let end = close.map_or(chars.len(), |p| i + 1 + p);
            tokens.push(Token::Quoted {
                text: text(i + 1, end),
                double: false,
            });
            i = end + 1;
        } else if c.is_ascii_digit() || (c == '.' && next.is_some_and(|n| n.is_ascii_digit())) {
            let start = i;
            i = number_end(&chars, i);
            tokens.push(Token::Number(text(start, i)));
        } else if c == '?' || ((c == '$' || c == ':' || c == '@') && next.is_some_and(is_word_char))
        {
            // A parameter: `?`, `?1`, `$1`, `:name`, `@name`.
            let start = i;
            i += 1;
            while chars.get(i).copied().is_some_and(is_word_char) {
                i += 1;
            }
            tokens.push(Token::Number(text(start, i)));
        } else if is_word_char(c) {
            let start = i;
            while chars
                .get(i)
                .copied()
                .is_some_and(|c| is_word_char(c) || c == '$')
            {
                i += 1;
            }
            tokens.push(Token::Word(text(start, i)));
        } else {
            let rest = text(i, i + 3);
            let op = OPERATORS.iter().find(|op| rest.starts_with(**op));
            let symbol = op.map_or_else(|| c.to_string(), |op| (*op).to_owned());
            i += symbol.chars().count();
            tokens.push(Token::Symbol(symbol));
        }
    }
    tokens
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Where the string opening at `start` (a `'`) ends: after its closing quote (`''` is a quote inside it, and
/// so is `\'` when `backslash` escapes), or at the end of the text.
fn string_end(chars: &[char], start: usize, backslash: bool) -> usize {
    let mut i = start + 1;
    while let Some(&c) = chars.get(i) {
        if backslash && c == '\\' {
            i += 2;
        } else if c == '\'' {
            if chars.get(i + 1) == Some(&'\'') {
                i += 2;
            } else {
                return i + 1;
            }
        } else {
            i += 1;
        }
    }
    chars.len()
}

/// Where the name quoted with `quote` at `start` ends (a doubled quote is a quote inside it), and its
/// content.
fn quoted_end(chars: &[char], start: usize, quote: char) -> (usize, String) {
    let mut content = String::new();
    let mut i = start + 1;
    while let Some(&c) = chars.get(i) {
        if c == quote {
            if chars.get(i + 1) == Some(&quote) {
                content.push(quote);
                i += 2;
            } else {
                return (i + 1, content);
            }
        } else {
            content.push(c);
            i += 1;
        }
    }
    (chars.len(), content)
}

/// Where the number at `start` ends: digits, a decimal point, an exponent (`1.5e-3`), or hexadecimal
/// (`0x1F`).
fn number_end(chars: &[char], start: usize) -> usize {
    let mut i = start;
    if chars.get(i) == Some(&'0') && matches!(chars.get(i + 1), Some('x' | 'X')) {
        i += 2;
        while chars.get(i).is_some_and(char::is_ascii_hexdigit) {
            i += 1;
        }
        return i;
    }
    while chars
        .get(i)
        .is_some_and(|c| c.is_ascii_digit() || *c == '.')
    {
        i += 1;
    }
    if matches!(chars.get(i), Some('e' | 'E')) {
        let sign = usize::from(matches!(chars.get(i + 1), Some('+' | '-')));
        if chars.get(i + 1 + sign).is_some_and(char::is_ascii_digit) {
            i += 1 + sign;
            while chars.get(i).is_some_and(char::is_ascii_digit) {
                i += 1;
            }
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_and_names_are_abstracted_keywords_kept() {
        assert_eq!(
            sql_skeleton("SELECT count(*) FROM singer WHERE age > 30"),
            "select count ( * ) from _ where _ > ?"
        );
        assert_eq!(
            sql_skeleton("SELECT count(*) FROM singer WHERE age > 30"),
            sql_skeleton("select COUNT ( * )\n  from   pets\twhere weight>10.5;")
        );
        assert_ne!(
            sql_skeleton("SELECT count(*) FROM t"),
            sql_skeleton("SELECT avg(x) FROM t")
        );
    }

    #[test]
    fn strings_with_escapes_are_one_literal() {
        assert_eq!(
            sql_skeleton("SELECT a FROM t WHERE b = 'it''s; -- not a comment'"),
            "select _ from _ where _ = ?"
        );
        assert_eq!(
            sql_skeleton(r"SELECT a FROM t WHERE b = E'it\'s' AND c = 'x\'"),
            "select _ from _ where _ = ? and _ = ?"
        );
        // An unterminated string runs to the end.
        assert_eq!(sql_skeleton("SELECT 'abc"), "select ?");
    }

    #[test]
    fn quoted_names_are_names_and_double_quoted_values_are_values() {
        assert_eq!(
            sql_skeleton(r#"SELECT "first name", `last``name`, [x y] FROM "my ""table""""#),
            "select _ , _ , _ from _"
        );
        // Spider writes strings in double quotes.
        assert_eq!(
            sql_skeleton(r#"SELECT name FROM singer WHERE country = "France""#),
            sql_skeleton("SELECT name FROM singer WHERE country = 'France'")
        );
        assert_eq!(
            sql_skeleton(r#"SELECT a FROM t WHERE b IN ("x", "y") AND c BETWEEN "p" AND "q""#),
            "select _ from _ where _ in ( ? , ? ) and _ between ? and ?"
        );
        assert_eq!(
            sql_skeleton(r#"SELECT a FROM t WHERE b LIKE "%x%""#),
            "select _ from _ where _ like ?"
        );
    }

    #[test]
    fn comments_whitespace_and_case_do_not_count() {
        assert_eq!(
            sql_skeleton("SELECT a -- the name\nFROM t /* all of it */ ;"),
            "select _ from _"
        );
        assert_eq!(
            sql_skeleton("select A from T"),
            sql_skeleton("SELECT\n\ta\nFROM\n\tt")
        );
    }

    #[test]
    fn numbers_and_parameters_are_literals() {
        assert_eq!(
            sql_skeleton("SELECT 1, 2.5, .5, 1e10, 1.5E-3, 0x1F, ?, $1, :name FROM t LIMIT 10"),
            "select ? , ? , ? , ? , ? , ? , ? , ? , ? from _ limit ?"
        );
        // A digit inside a name is the name's.
        assert_eq!(sql_skeleton("SELECT t1.c2 FROM t1"), "select _ . _ from _");
    }

    #[test]
    fn aliases_are_names() {
        let a = "SELECT T1.name FROM singer AS T1 JOIN concert AS T2 ON T1.id = T2.singer_id";
        let b = "select s.title from songs as s join albums as al on s.album = al.id";
        assert_eq!(sql_skeleton(a), sql_skeleton(b));
        assert_eq!(
            sql_skeleton(a),
            "select _ . _ from _ as _ join _ as _ on _ . _ = _ . _"
        );
        // An alias without AS is a name too; with or without AS is another skeleton.
        assert_eq!(
            sql_skeleton("SELECT s.x FROM songs s"),
            "select _ . _ from _ _"
        );
    }

    #[test]
    fn types_functions_and_operators() {
        assert_eq!(
            sql_skeleton(
                "SELECT CAST(x AS REAL) / y::float, a || b FROM t WHERE d >= DATE '2024-01-01' AND e != 1 AND f == 2"
            ),
            "select cast ( _ as real ) / _ :: float , _ || _ from _ where _ >= date ? and _ <> ? and _ = ?"
        );
        assert_eq!(
            sql_skeleton("SELECT strftime('%Y', d) FROM t"),
            "select strftime ( ? , _ ) from _"
        );
    }

    #[test]
    fn normalized_keeps_literals_and_names() {
        assert_eq!(
            normalized_sql("SELECT  Name FROM singer -- x\n WHERE age>30;"),
            normalized_sql("select name from SINGER where age > 30")
        );
        assert_ne!(
            normalized_sql("SELECT name FROM singer WHERE age > 30"),
            normalized_sql("SELECT name FROM singer WHERE age > 31")
        );
    }
}
