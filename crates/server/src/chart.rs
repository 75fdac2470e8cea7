//! Charts for numeric results, rendered on the server as SVG.
//!
//! [`chart`] looks at a result's columns and rows and draws a bar or a line chart when the data lends itself
//! to one. The rules, in order:
//!
//! - **Enough data**: between 2 and [`MAX_ROWS`] rows, and at least one numeric column. A column is numeric
//!   when every cell is a JSON number, a numeric string as databases return decimals (`"12.50"`, `"-3"`,
//!   `"1e3"`) or null, and at least one cell is not null. A null draws nothing (a missing bar, a gap in a line).
//! - **Labels**: the first non-numeric column. When every column is numeric, the first column (a year, a
//!   month number), or the row number when there is only one column.
//! - **Series**: the other numeric columns, at most [`MAX_SERIES`]. Columns named `id` or ending in `_id` are
//!   left out when another series remains: identifiers are not quantities.
//! - **Kind**: a line when the labels look like dates or months (`2024-05`, `2024-05-31`, `2024-05-31T10:00`,
//!   `2024-Q2`, month names) or the label column is named like a period (`date`, `day`, `week`, `month`,
//!   `quarter`, `year`); a bar otherwise. An explicit `kind` wins.
//!
//! The SVG is self-contained (no script, no external reference, no style sheet), has a `viewBox`,
//! `role="img"`, a `<title>` and a `<desc>` for assistive technology, a y axis with round ticks, a legend when
//! there is more than one series, and escapes every text it draws.
//!
//! ```
//! use serde_json::json;
//! use steward_server::chart::{ChartKind, chart};
//!
//! let columns = vec!["month".to_string(), "revenue".to_string()];
//! let rows = vec![vec![json!("2024-01"), json!("1200.50")], vec![json!("2024-02"), json!(980)]];
//! let drawn = chart(&columns, &rows, None).expect("two months of revenue make a chart");
//! assert_eq!(drawn.kind, ChartKind::Line);
//! assert!(drawn.svg.starts_with("<svg") && drawn.svg.contains("viewBox"));
//! ```

use serde::{Deserialize, Serialize};
use serde_json::Value;

use svg::Plot;

mod svg;

/// The most rows [`chart`] draws; a larger result gets no chart.
pub const MAX_ROWS: usize = 500;
/// The most series (numeric columns) [`chart`] draws; further columns are left out.
pub const MAX_SERIES: usize = 8;

const PERIOD_WORDS: [&str; 7] = ["date", "day", "week", "month", "quarter", "year", "period"];
/// Month names and their abbreviations, as labels of a line chart.
const MONTHS: &str = "jan feb mar apr may jun jul aug sep sept oct nov dec january february march april june july \
                      august september october november december";

/// The kind of chart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChartKind {
    /// Bars, grouped by label, one per series.
    Bar,
    /// Lines, one per series, with the labels in order along the x axis.
    Line,
}

/// A drawn chart.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Chart {
    /// The kind drawn.
    pub kind: ChartKind,
    /// The chart as a self-contained SVG document.
    pub svg: String,
}

/// Draws a chart of a result, or `None` when the result has no numeric column, fewer than 2 or more than
/// [`MAX_ROWS`] rows, or values too large to scale. `kind` forces bar or line; without it the labels decide
/// (see the [module docs](self)). Rows shorter than `columns` read as nulls in the missing cells.
pub fn chart(columns: &[String], rows: &[Vec<Value>], kind: Option<ChartKind>) -> Option<Chart> {
    if columns.is_empty() || rows.len() < 2 || rows.len() > MAX_ROWS {
        return None;
    }
    const NULL: &Value = &Value::Null;
    let column = |c: usize| rows.iter().map(move |row| row.get(c).unwrap_or(NULL));
    let numeric: Vec<bool> = (0..columns.len())
        .map(|c| is_numeric_column(column(c)))
        .collect();
    let label = numeric
        .iter()
        .position(|n| !n)
        .or(if columns.len() > 1 { Some(0) } else { None });
    let mut series: Vec<usize> = (0..columns.len())
        .filter(|&c| numeric.get(c) == Some(&true) && Some(c) != label)
        .collect();
    let is_id = |c: &usize| columns.get(*c).is_some_and(|name| is_id_like(name));
    if series.iter().any(|c| !is_id(c)) {
        series.retain(|c| !is_id(c));
    }
    series.truncate(MAX_SERIES);
    if series.is_empty() {
        return None;
    }
    let (label_name, labels): (&str, Vec<String>) =
        match label.and_then(|c| columns.get(c).map(|n| (c, n))) {
            Some((c, name)) => (name, column(c).map(label_text).collect()),
            None => ("row", (1..=rows.len()).map(|i| i.to_string()).collect()),
        };
    let plot = Plot {
        label_name,
        labels,
        names: series
            .iter()
            .filter_map(|&c| columns.get(c).cloned())
            .collect(),
        values: series
            .iter()
            .map(|&c| column(c).map(number).collect())
            .collect(),
    };
    let kind = kind.unwrap_or(if looks_temporal(plot.label_name, &plot.labels) {
        ChartKind::Line
    } else {
        ChartKind::Bar
    });
    Some(Chart {
        kind,
        svg: plot.render(kind)?,
    })
}

/// A finite number from a JSON number or a numeric string.
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) if is_numeric_text(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    }
    .filter(|v| v.is_finite())
}

fn is_numeric_column<'a>(mut cells: impl Iterator<Item = &'a Value>) -> bool {
    let mut any = false;
    cells.all(|cell| {
        any |= !cell.is_null();
        cell.is_null() || number(cell).is_some()
    }) && any
}

/// A decimal number as databases print one: optional sign, digits with at most one point, optional exponent.
/// Not `inf`, `NaN` or hexadecimal, which `f64::from_str` would take.
fn is_numeric_text(text: &str) -> bool {
    let bytes = text.trim().as_bytes();
    let mut i = usize::from(matches!(bytes.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while bytes.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    let mut mantissa = digits(&mut i);
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        mantissa += digits(&mut i);
    }
    if mantissa == 0 {
        return false;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        i += usize::from(matches!(bytes.get(i), Some(b'+' | b'-')));
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == bytes.len()
}

fn is_id_like(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name == "id" || name.ends_with("_id")
}

fn label_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "(null)".to_string(),
        other => other.to_string(),
    }
}

/// Whether the labels are points in time: all dates or months, or the column is named like a period.
fn looks_temporal(name: &str, labels: &[String]) -> bool {
    let lower = name.to_ascii_lowercase();
    let named = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|word| {
            PERIOD_WORDS.contains(&word)
                || word
                    .strip_suffix('s')
                    .is_some_and(|w| PERIOD_WORDS.contains(&w))
        });
    named
        || labels.iter().all(|l| {
            is_date_like(l)
                || MONTHS
                    .split_whitespace()
                    .any(|m| l.trim().eq_ignore_ascii_case(m))
        })
}

/// `YYYY-MM`, `YYYY-MM-DD` (then anything after `T` or a space), or `YYYY-Qn`.
fn is_date_like(text: &str) -> bool {
    let b = text.trim().as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        b.get(range)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
    };
    if !(digits(0..4) && b.get(4) == Some(&b'-')) {
        return false;
    }
    if matches!(b.get(5), Some(b'Q' | b'q')) {
        return b.len() == 7 && matches!(b.get(6), Some(b'1'..=b'4'));
    }
    if !digits(5..7) {
        return false;
    }
    match b.get(7) {
        None => true,
        Some(b'-') => digits(8..10) && matches!(b.get(10), None | Some(b'T' | b' ')),
        Some(_) => false,
    }
}

#[cfg(test)]
mod tests;
