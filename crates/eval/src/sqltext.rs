//! SQL as text, the little the data sets and official scorers need: where the code is (outside string
//! literals, quoted identifiers and comments), splitting a field into its statements, defog's `{a, b}`
//! column alternatives, and the Spider scorer's edits (`> =` → `>=`, dropping `DISTINCT`).
//!
//! This is a lexer, not a parser: it knows `'…'` (with `''`, and backslash escapes in `E'…'`), `"…"`,
//! `` `…` ``, PostgreSQL's `$tag$…$tag$`, `-- …` and `/* … */`. That is enough to never split inside a
//! literal.

use std::ops::Range;

/// Whether a stretch of SQL text is code or something the scanner must not look into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Keywords, names, operators, numbers.
    Code,
    /// A string literal or a quoted identifier (quotes included).
    Quoted,
    /// A comment.
    Comment,
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

/// The text cut into code, quoted and comment stretches, in order, covering all of it.
fn segments(sql: &str) -> Vec<(Kind, Range<usize>)> {
    let bytes = sql.as_bytes();
    let mut out = Vec::new();
    let mut code_start = 0;
    let mut i = 0;
    let push = |out: &mut Vec<(Kind, Range<usize>)>, kind: Kind, range: Range<usize>| {
        if !range.is_empty() {
            out.push((kind, range));
        }
    };
    while i < bytes.len() {
        let b = bytes[i];
        let next = bytes.get(i + 1).copied();
        let end = match b {
            b'\'' => {
                // E'…' (PostgreSQL) takes backslash escapes: E directly before the quote, itself not part of
                // a longer word.
                let escapes = i >= 1
                    && matches!(bytes[i - 1], b'e' | b'E')
                    && (i < 2 || !is_word(bytes[i - 2]));
                Some((Kind::Quoted, quoted_end(bytes, i, b'\'', escapes)))
            }
            b'"' | b'`' => Some((Kind::Quoted, quoted_end(bytes, i, b, false))),
            b'-' if next == Some(b'-') => {
                let end = sql[i..].find('\n').map_or(bytes.len(), |n| i + n);
                Some((Kind::Comment, end))
            }
            b'/' if next == Some(b'*') => {
                let end = sql[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |n| i + 2 + n + 2);
                Some((Kind::Comment, end))
            }
            b'$' if i == 0 || !is_word(bytes[i - 1]) => {
                dollar_end(sql, i).map(|e| (Kind::Quoted, e))
            }
            _ => None,
        };
        match end {
            Some((kind, end)) => {
                push(&mut out, Kind::Code, code_start..i);
                push(&mut out, kind, i..end);
                i = end;
                code_start = end;
            }
            None => i += 1,
        }
    }
    push(&mut out, Kind::Code, code_start..bytes.len());
    out
}

/// The end (exclusive) of a literal opened by `quote` at `start`; a doubled quote is an escaped one.
fn quoted_end(bytes: &[u8], start: usize, quote: u8, backslash: bool) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        let b = bytes[i];
        if backslash && b == b'\\' {
            i += 2;
            continue;
        }
        if b == quote {
            if bytes.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    bytes.len()
}

/// The end (exclusive) of a dollar-quoted string `$tag$…$tag$` opened at `start`, if one opens there
/// (`$1`, a parameter, does not).
fn dollar_end(sql: &str, start: usize) -> Option<usize> {
    let bytes = sql.as_bytes();
    let mut i = start + 1;
    if bytes.get(i).is_some_and(|b| b.is_ascii_digit()) {
        return None;
    }
    while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
        i += 1;
    }
    if bytes.get(i) != Some(&b'$') {
        return None;
    }
    let tag = &sql[start..=i];
    let body = i + 1;
    Some(
        sql[body..]
            .find(tag)
            .map_or(bytes.len(), |n| body + n + tag.len()),
    )
}

/// The statements of a text, split at the semicolons that are code (not in literals or comments), trimmed;
/// empty ones are dropped.
pub(crate) fn split_statements(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = 0;
    for (kind, range) in segments(sql) {
        if kind != Kind::Code {
            continue;
        }
        for (offset, _) in sql[range.clone()].match_indices(';') {
            out.push(&sql[start..range.start + offset]);
            start = range.start + offset + 1;
        }
    }
    out.push(&sql[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The byte positions of the first `{` in code and the first `}` in code after it.
fn first_group(sql: &str) -> Option<(usize, usize)> {
    let code: Vec<Range<usize>> = segments(sql)
        .into_iter()
        .filter(|(kind, _)| *kind == Kind::Code)
        .map(|(_, range)| range)
        .collect();
    let find = |c: char, from: usize| {
        code.iter().find_map(|r| {
            let lo = r.start.max(from);
            if lo >= r.end {
                return None;
            }
            sql[lo..r.end].find(c).map(|n| lo + n)
        })
    };
    let open = find('{', 0)?;
    let close = find('}', open + 1)?;
    Some((open, close))
}

/// Most options one `{…}` group may have: 2^12 - 1 combinations.
const MAX_OPTIONS: usize = 12;

/// defog's column alternatives: each `{a, b, …}` group stands for every non-empty combination of its
/// options, in the order of Python's `itertools.combinations` for sizes 1, 2, …, joined by `, `; an empty
/// `{}` after a group (defog writes `GROUP BY {}`) repeats the combination chosen for that group. A text
/// without groups is itself. This is the official `get_all_minimal_queries` expansion, with two
/// generalisations that give the same result on every defog question: options are split at commas outside
/// parentheses and literals (the official splits at every comma), and every group is expanded (the official
/// expands the first only).
pub(crate) fn expand_alternatives(sql: &str) -> Vec<String> {
    let Some((open, close)) = first_group(sql) else {
        return vec![sql.to_owned()];
    };
    let (left, inner, right) = (&sql[..open], &sql[open + 1..close], &sql[close + 1..]);
    if inner.trim().is_empty() {
        // `{}` with no group before it: nothing to repeat; keep it and look further.
        return expand_alternatives(right)
            .into_iter()
            .map(|tail| format!("{}{tail}", &sql[..=close]))
            .collect();
    }
    let options: Vec<&str> = split_commas(inner);
    let options = &options[..options.len().min(MAX_OPTIONS)];
    let mut out = Vec::new();
    for size in 1..=options.len() {
        for combination in combinations(options.len(), size) {
            let columns: Vec<&str> = combination
                .iter()
                .filter_map(|&i| options.get(i).copied())
                .collect();
            let columns = columns.join(", ");
            for tail in expand_alternatives(&fill_empty_groups(right, &columns)) {
                out.push(format!("{left}{columns}{tail}"));
            }
        }
    }
    out
}

/// The options of a group: split at commas outside parentheses and literals, trimmed, empty ones dropped.
fn split_commas(inner: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (kind, range) in segments(inner) {
        if kind != Kind::Code {
            continue;
        }
        for (offset, c) in inner[range.clone()].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                ',' if depth == 0 => {
                    out.push(&inner[start..range.start + offset]);
                    start = range.start + offset + 1;
                }
                _ => {}
            }
        }
    }
    out.push(&inner[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// Every `size`-element combination of `0..n`, in lexicographic order (Python's `itertools.combinations`).
fn combinations(n: usize, size: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut current: Vec<usize> = (0..size).collect();
    if size == 0 || size > n {
        return out;
    }
    loop {
        out.push(current.clone());
        // The rightmost index that can still move right.
        let Some(i) = (0..size).rev().find(|&i| current[i] < n - size + i) else {
            return out;
        };
        current[i] += 1;
        for j in i + 1..size {
            current[j] = current[j - 1] + 1;
        }
    }
}

/// `text` with every empty `{}` in code, up to the next non-empty group, replaced by `columns`.
fn fill_empty_groups(text: &str, columns: &str) -> String {
    let mut out = String::with_capacity(text.len() + columns.len());
    let mut rest = text;
    while let Some((open, close)) = first_group(rest) {
        if !rest[open + 1..close].trim().is_empty() {
            break;
        }
        out.push_str(&rest[..open]);
        out.push_str(columns);
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// The Spider scorer's `postprocess`: `> =`, `< =` and `! =` joined (as the official does it, anywhere in
/// the text).
pub(crate) fn spider_postprocess(sql: &str) -> String {
    sql.replace("> =", ">=")
        .replace("< =", "<=")
        .replace("! =", "!=")
}

/// The Spider scorer's `remove_distinct` (applied unless `--keep_distinct`): every `DISTINCT` keyword
/// removed, in any case, wherever it stands (`SELECT DISTINCT a` → `SELECT  a`, `count(DISTINCT a)` →
/// `count( a)`). Literals, quoted names and comments are left alone.
pub fn remove_distinct(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    for (kind, range) in segments(sql) {
        let part = &sql[range];
        if kind != Kind::Code {
            out.push_str(part);
            continue;
        }
        let bytes = part.as_bytes();
        let mut i = 0;
        let mut copied = 0;
        while i < bytes.len() {
            if is_word(bytes[i]) {
                let start = i;
                while i < bytes.len() && is_word(bytes[i]) {
                    i += 1;
                }
                if part[start..i].eq_ignore_ascii_case("distinct") {
                    out.push_str(&part[copied..start]);
                    copied = i;
                }
            } else {
                i += 1;
            }
        }
        out.push_str(&part[copied..]);
    }
    out
}

/// The Spider scorer's test for "row order matters": `'order by' in g_str.lower()` — the gold text holds
/// `order by` with exactly one space (in any case, anywhere, subqueries and literals included).
pub(crate) fn mentions_order_by(sql: &str) -> bool {
    sql.to_lowercase().contains("order by")
}

/// The first statement as `sqlparse.parse(sql)[0]` gives it (what the Spider scorer's `remove_distinct`
/// keeps): the text up to the first `;` in code at nesting level 0 or below (`(` opens a level, `)` and the
/// keyword `END` close one, as sqlparse counts), with the spaces, line breaks and `--` comments that follow
/// it; the rest is dropped.
pub(crate) fn sqlparse_first_statement(sql: &str) -> &str {
    let mut level: i64 = 0;
    for (kind, range) in segments(sql) {
        if kind != Kind::Code {
            continue;
        }
        let part = &sql[range.clone()];
        let bytes = part.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if is_word(b) {
                let start = i;
                while i < bytes.len() && is_word(bytes[i]) {
                    i += 1;
                }
                if part[start..i].eq_ignore_ascii_case("end") {
                    level -= 1;
                }
                continue;
            }
            match b {
                b'(' => level += 1,
                b')' => level -= 1,
                b';' if level <= 0 => {
                    let after = range.start + i + 1;
                    return &sql[..after + trailing_blank(&sql[after..])];
                }
                _ => {}
            }
            i += 1;
        }
    }
    sql
}

/// How many bytes of `rest` are spaces, line breaks and `--` comments (what sqlparse keeps with a statement
/// after its `;`).
fn trailing_blank(rest: &str) -> usize {
    let mut used = 0;
    for (kind, range) in segments(rest) {
        let part = &rest[range.clone()];
        match kind {
            Kind::Comment if part.starts_with("--") => used = range.end,
            Kind::Code => {
                let blank = part.len() - part.trim_start().len();
                used = range.start + blank;
                if blank < part.len() {
                    return used;
                }
            }
            _ => return used,
        }
    }
    used
}

/// Python's `sqlite3` rule, `cursor.execute` of one statement: after the first complete statement only
/// spaces and comments may follow; a second statement, or a second `;` (`SELECT 1;;`), fails with "You can
/// only execute one statement at a time."
pub(crate) fn python_one_statement(sql: &str) -> Result<(), String> {
    let mut seen_semicolon = false;
    for (kind, range) in segments(sql) {
        if kind != Kind::Code {
            continue;
        }
        for c in sql[range].chars() {
            if seen_semicolon && !c.is_whitespace() {
                return Err("You can only execute one statement at a time.".to_owned());
            }
            if c == ';' {
                seen_semicolon = true;
            }
        }
    }
    // A quoted text or a `/* */` comment after the `;` is code for SQLite only when quoted.
    if seen_semicolon {
        let mut after = false;
        for (kind, range) in segments(sql) {
            if kind == Kind::Code && sql[range].contains(';') {
                after = true;
            } else if after && kind == Kind::Quoted {
                return Err("You can only execute one statement at a time.".to_owned());
            }
        }
    }
    Ok(())
}

/// test-suite-sql-eval's `replace_cur_year`: `YEAR(CURDATE())` (any case and spacing, with the spaces after
/// it) becomes `2020`.
pub(crate) fn replace_cur_year(sql: &str) -> String {
    let lower = sql.to_ascii_lowercase();
    let mut out = String::with_capacity(sql.len());
    let mut copied = 0;
    let mut from = 0;
    while let Some(n) = lower[from..].find("year") {
        let start = from + n;
        let mut i = start + 4;
        let skip = |i: &mut usize| {
            while lower[*i..].starts_with(|c: char| c.is_whitespace()) {
                *i += lower[*i..].chars().next().map_or(1, char::len_utf8);
            }
        };
        let mut ok = true;
        for token in ["(", "curdate", "(", ")", ")"] {
            skip(&mut i);
            if lower[i..].starts_with(token) {
                i += token.len();
            } else {
                ok = false;
                break;
            }
        }
        if ok {
            skip(&mut i);
            out.push_str(&sql[copied..start]);
            out.push_str("2020");
            copied = i;
            from = i;
        } else {
            from = start + 4;
        }
    }
    out.push_str(&sql[copied..]);
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn splits_outside_literals_and_comments() {
        let sql = "SELECT ';' AS a; SELECT \"x;y\" FROM t -- no; split\n; /* ; */ SELECT $$;$$;;";
        assert_eq!(
            split_statements(sql),
            [
                "SELECT ';' AS a",
                "SELECT \"x;y\" FROM t -- no; split",
                "/* ; */ SELECT $$;$$"
            ]
        );
        assert_eq!(split_statements("SELECT 'it''s;' ;"), ["SELECT 'it''s;'"]);
        assert_eq!(
            split_statements("SELECT E'\\';' ;x"),
            ["SELECT E'\\';'", "x"]
        );
        assert_eq!(
            split_statements("SELECT $1; SELECT 2"),
            ["SELECT $1", "SELECT 2"]
        );
    }

    #[test]
    fn expands_column_alternatives_like_defog() {
        let got =
            expand_alternatives("SELECT {a.name, a.id}, count(*) FROM a GROUP BY {} ORDER BY 2");
        assert_eq!(
            got,
            [
                "SELECT a.name, count(*) FROM a GROUP BY a.name ORDER BY 2",
                "SELECT a.id, count(*) FROM a GROUP BY a.id ORDER BY 2",
                "SELECT a.name, a.id, count(*) FROM a GROUP BY a.name, a.id ORDER BY 2",
            ]
        );
        assert_eq!(expand_alternatives("SELECT '{x, y}'"), ["SELECT '{x, y}'"]);
        assert_eq!(expand_alternatives("SELECT {a,b,c}").len(), 7);
        assert_eq!(
            expand_alternatives("SELECT {f(x, y), z}"),
            ["SELECT f(x, y)", "SELECT z", "SELECT f(x, y), z"]
        );
    }

    #[test]
    fn combinations_in_python_order() {
        assert_eq!(
            combinations(4, 2),
            [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]
        );
        assert!(combinations(2, 3).is_empty());
    }

    #[test]
    fn removes_distinct_like_the_spider_scorer() {
        assert_eq!(
            remove_distinct("SELECT DISTINCT a, count(distinct b) FROM t WHERE c = 'distinct'"),
            "SELECT  a, count( b) FROM t WHERE c = 'distinct'"
        );
        assert_eq!(
            remove_distinct("SELECT distinct_id FROM t"),
            "SELECT distinct_id FROM t"
        );
    }

    #[test]
    fn first_statement_like_sqlparse() {
        assert_eq!(sqlparse_first_statement("SELECT 1; SELECT 2"), "SELECT 1; ");
        assert_eq!(sqlparse_first_statement("SELECT 1;;"), "SELECT 1;");
        assert_eq!(
            sqlparse_first_statement("SELECT ';' FROM t; -- c\n  x"),
            "SELECT ';' FROM t; -- c\n  "
        );
        assert_eq!(sqlparse_first_statement("SELECT (1; 2)"), "SELECT (1; 2)");
        assert_eq!(sqlparse_first_statement("SELECT 1"), "SELECT 1");
    }

    #[test]
    fn one_statement_like_python_sqlite3() {
        assert!(python_one_statement("SELECT 1;").is_ok());
        assert!(python_one_statement("SELECT 1; -- x").is_ok());
        assert!(python_one_statement("SELECT 1; /* x */ ").is_ok());
        assert!(python_one_statement("SELECT ';'").is_ok());
        assert!(python_one_statement("SELECT 1;;").is_err());
        assert!(python_one_statement("SELECT 1; SELECT 2").is_err());
    }

    #[test]
    fn cur_year() {
        assert_eq!(
            replace_cur_year("WHERE y = YEAR( curdate ( ) ) AND x"),
            "WHERE y = 2020AND x"
        );
        assert_eq!(replace_cur_year("SELECT year FROM t"), "SELECT year FROM t");
    }

    #[test]
    fn order_by_anywhere() {
        assert!(!mentions_order_by("select a from t ORDER\n  BY a"));
        assert!(mentions_order_by("select a from t ORDER BY a"));
        assert!(mentions_order_by(
            "select (select a from t order by b limit 1)"
        ));
        assert!(!mentions_order_by("select orders from t"));
    }
}
