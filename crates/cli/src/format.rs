//! `--format`: rows as a terminal table, CSV, TSV, a Markdown table, JSON or NDJSON.
//!
//! Every format writes the same values the JSON output holds: a cell is its JSON value, shown as text by
//! [`steward_sql::cell_text`] (strings as they are, numbers, exact decimals and JSON documents as their JSON
//! text). NULL and an empty string stay apart in every format: in CSV NULL is an empty field and an empty
//! string `""`; in TSV NULL is `\N` (as PostgreSQL's `COPY` and MySQL's `INTO OUTFILE` write it; a backslash in a
//! value is `\\`) and an empty string an empty field; in Markdown NULL is `*NULL*` (a `*` in a value is `\*`) and
//! an empty string an empty cell; the terminal table shows `NULL` and nothing; JSON has `null` and `""`.

use clap::ValueEnum;
use serde_json::{Map, Value};
use steward_sql::cell_text;

use crate::out::note;
use crate::style::Style;

/// How rows are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Aligned columns for a terminal (the default).
    Table,
    /// Comma-separated values with RFC 4180 quoting and a header row.
    Csv,
    /// Tab-separated values with a header row; tabs, newlines and backslashes escaped as \t, \n, \r, \\; NULL
    /// is \N.
    Tsv,
    /// A GitHub-flavoured Markdown table; NULL is *NULL*.
    Markdown,
    /// One JSON document.
    Json,
    /// One JSON object per row, keyed by column name.
    Ndjson,
}

impl Format {
    /// The format's name as `--format` takes it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Table => "table",
            Self::Csv => "csv",
            Self::Tsv => "tsv",
            Self::Markdown => "markdown",
            Self::Json => "json",
            Self::Ndjson => "ndjson",
        }
    }

    /// The format from `--format` and the older `--json` (an alias of `--format json`).
    pub(crate) fn pick(format: Option<Self>, json: bool) -> anyhow::Result<Self> {
        match (format, json) {
            (Some(f), true) if f != Self::Json => anyhow::bail!(
                "--json means --format json, but --format {} was given too; use one of them",
                f.name()
            ),
            (_, true) => Ok(Self::Json),
            (Some(f), false) => Ok(f),
            (None, false) => Ok(Self::Table),
        }
    }

    /// Rows as text in the CSV, TSV, Markdown or NDJSON format (`None` for table and JSON, which each
    /// command prints in its own way). The text ends with a newline unless it is empty.
    pub(crate) fn rows(self, columns: &[String], rows: &[Vec<Value>]) -> Option<String> {
        match self {
            Self::Csv => Some(delimited(columns, rows, csv_field)),
            Self::Tsv => Some(delimited(columns, rows, tsv_field)),
            Self::Markdown => Some(markdown(columns, rows)),
            Self::Ndjson => Some(ndjson(columns, rows)),
            Self::Table | Self::Json => None,
        }
    }
}

/// What `steward sql run` can do when its rows were cut short.
pub(crate) const MORE_ROWS_SQL_RUN: &str = "raise --max-rows or narrow the query";

/// Says on stderr that the rows shown are not all of them, and `advice`: what the command at hand can do
/// about it (the JSON output says so in its own field).
pub(crate) fn note_truncated(shown: usize, advice: &str) {
    note!(
        "{}",
        Style::stderr().warn(&format!("({shown} rows shown; more exist: {advice})"))
    );
}

/// Longest cell shown in the terminal table.
const MAX_CELL: usize = 60;

/// Prints rows as aligned columns (cells cut to 60 terminal columns, line breaks and tabs as spaces), and the row
/// count, or that more rows exist and `advice` (see [`note_truncated`]), on stderr.
pub(crate) fn print_table(columns: &[String], rows: &[Vec<Value>], truncated: bool, advice: &str) {
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|v| crate::out::cut(&cell_text(v), MAX_CELL))
                .collect()
        })
        .collect();
    let header: Vec<&str> = columns.iter().map(String::as_str).collect();
    crate::out::aligned(&header, &cells);
    let n = rows.len();
    if truncated {
        note_truncated(n, advice);
    } else {
        note!(
            "{}",
            Style::stderr().dim(&format!("({n} row{})", if n == 1 { "" } else { "s" }))
        );
    }
}

/// A header line and one line per row, each field written by `field` (`None` is a NULL cell).
fn delimited(
    columns: &[String],
    rows: &[Vec<Value>],
    field: fn(Option<&str>) -> (String, char),
) -> String {
    let mut out = String::new();
    let mut line = |cells: &mut dyn Iterator<Item = Option<String>>| {
        let mut first = true;
        for cell in cells {
            let (text, separator) = field(cell.as_deref());
            if !first {
                out.push(separator);
            }
            first = false;
            out.push_str(&text);
        }
        out.push('\n');
    };
    line(&mut columns.iter().map(|c| Some(c.clone())));
    for row in rows {
        line(&mut row.iter().map(|v| (!v.is_null()).then(|| cell_text(v))));
    }
    out
}

/// One CSV field (RFC 4180): quoted when it holds a comma, a quote, CR or LF, or when it is an empty string
/// (an empty field without quotes is NULL); quotes inside are doubled.
fn csv_field(cell: Option<&str>) -> (String, char) {
    let text = match cell {
        None => String::new(),
        Some(s) if s.is_empty() || s.contains([',', '"', '\n', '\r']) => {
            format!("\"{}\"", s.replace('"', "\"\""))
        }
        Some(s) => s.to_owned(),
    };
    (text, ',')
}

/// One TSV field: backslash, tab, LF and CR escaped as `\\`, `\t`, `\n`, `\r`; NULL is `\N` (no value can
/// be written so, its backslash would be doubled), so that it stays apart from an empty string.
fn tsv_field(cell: Option<&str>) -> (String, char) {
    let Some(cell) = cell else {
        return ("\\N".to_owned(), '\t');
    };
    let mut out = String::new();
    for c in cell.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    (out, '\t')
}

/// Markdown's NULL, apart from an empty string (an empty cell) and from the text `*NULL*` (written `\*NULL\*`).
const MARKDOWN_NULL: &str = "*NULL*";

/// A Markdown table cell: `\`, `|` and `*` escaped with a backslash, line breaks as `<br>`.
fn markdown_cell(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push_str("\\\\"),
            '|' => out.push_str("\\|"),
            '*' => out.push_str("\\*"),
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push_str("<br>");
            }
            '\n' => out.push_str("<br>"),
            c => out.push(c),
        }
    }
    out
}

fn markdown(columns: &[String], rows: &[Vec<Value>]) -> String {
    let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    let mut out = line(columns.iter().map(|c| markdown_cell(c)).collect());
    out.push_str(&line(columns.iter().map(|_| "---".to_owned()).collect()));
    for row in rows {
        out.push_str(&line(
            row.iter()
                .map(|v| {
                    if v.is_null() {
                        MARKDOWN_NULL.to_owned()
                    } else {
                        markdown_cell(&cell_text(v))
                    }
                })
                .collect(),
        ));
    }
    out
}

/// Keys for the columns: each column's name, and for a name that came before, the name with `_2`, `_3`, …
/// (the first free one), so no value is lost to a repeated key.
pub(crate) fn unique_keys(columns: &[String]) -> Vec<String> {
    let mut taken: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut keys = Vec::with_capacity(columns.len());
    for (i, name) in columns.iter().enumerate() {
        let mut key = name.clone();
        if taken.contains(&key) {
            let mut n = 2usize;
            loop {
                let candidate = format!("{name}_{n}");
                // A later column's own name stays its own.
                if !taken.contains(&candidate) && !columns[i + 1..].contains(&candidate) {
                    key = candidate;
                    break;
                }
                n += 1;
            }
        }
        taken.insert(key.clone());
        keys.push(key);
    }
    keys
}

fn ndjson(columns: &[String], rows: &[Vec<Value>]) -> String {
    let keys = unique_keys(columns);
    let mut out = String::new();
    for row in rows {
        let object: Map<String, Value> = keys.iter().cloned().zip(row.iter().cloned()).collect();
        out.push_str(&Value::Object(object).to_string());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cols(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn csv_quotes_what_rfc_4180_needs_and_keeps_null_apart_from_empty() {
        let rows = vec![vec![
            json!("a,b"),
            json!("say \"hi\""),
            json!("x\ny"),
            Value::Null,
            json!(""),
            json!(1.5),
            json!({"k": [1]}),
        ]];
        let out = Format::Csv
            .rows(&cols(&["a", "b", "c", "d", "e", "f", "g"]), &rows)
            .unwrap();
        assert_eq!(
            out,
            "a,b,c,d,e,f,g\n\"a,b\",\"say \"\"hi\"\"\",\"x\ny\",,\"\",1.5,\"{\"\"k\"\":[1]}\"\n"
        );
    }

    #[test]
    fn tsv_escapes_tabs_newlines_and_backslashes() {
        let rows = vec![
            vec![json!("a\tb\\c\r\n"), Value::Null, json!(true)],
            vec![json!("\\N"), json!(""), json!("N")],
        ];
        let out = Format::Tsv.rows(&cols(&["x\ty", "n", "b"]), &rows).unwrap();
        assert_eq!(
            out,
            "x\\ty\tn\tb\na\\tb\\\\c\\r\\n\t\\N\ttrue\n\\\\N\t\tN\n"
        );
    }

    #[test]
    fn markdown_escapes_pipes_and_breaks_lines() {
        let rows = vec![
            vec![json!("a|b\\"), json!("one\r\ntwo\nthree"), Value::Null],
            vec![json!("*NULL*"), json!(""), json!("NULL")],
        ];
        let out = Format::Markdown
            .rows(&cols(&["p|q", "t", "n"]), &rows)
            .unwrap();
        assert_eq!(
            out,
            "| p\\|q | t | n |\n| --- | --- | --- |\n| a\\|b\\\\ | one<br>two<br>three | *NULL* |\n\
             | \\*NULL\\* |  | NULL |\n"
        );
    }

    #[test]
    fn ndjson_keys_repeated_names_apart() {
        assert_eq!(
            unique_keys(&cols(&["a", "a", "a_2", "a"])),
            ["a", "a_3", "a_2", "a_4"]
        );
        let out = Format::Ndjson
            .rows(&cols(&["id", "id"]), &[vec![json!(1), Value::Null]])
            .unwrap();
        assert_eq!(out, "{\"id\":1,\"id_2\":null}\n");
    }

    #[test]
    fn json_and_format_together_must_agree() {
        assert_eq!(Format::pick(None, false).unwrap(), Format::Table);
        assert_eq!(Format::pick(None, true).unwrap(), Format::Json);
        assert_eq!(
            Format::pick(Some(Format::Json), true).unwrap(),
            Format::Json
        );
        assert!(Format::pick(Some(Format::Csv), true).is_err());
    }
}
