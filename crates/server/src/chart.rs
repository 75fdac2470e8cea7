//! Charts for numeric results, rendered on the server as SVG.
//!
//! [`chart`] draws a bar or a line chart only when the shape of a result calls for one; a listing gets none
//! (the table says it better). The rules, in order:
//!
//! - **Enough data**: between 2 and [`MAX_ROWS`] rows, and at least one numeric column. A column is numeric
//!   when every cell is a JSON number, a numeric string as databases return decimals (`"12.50"`, `"-3"`,
//!   `"1e3"`) or null, and at least one cell is not null. A null draws nothing (a missing bar, a gap in a line).
//! - **A category or time column**: the first non-numeric column, or a numeric first column named like a
//!   period (`year`, `month`, …). Without one there is no chart.
//! - **One value per label**: a label that repeats means the rows are a listing (60 shipments, not a
//!   total per carrier): no chart.
//! - **Measures**: the other numeric columns but identifiers (`id`, `*_id`), at most [`MAX_PANELS`].
//! - **Kind**: a line when the labels look like dates or months (`2024-05`, `2024-05-31`, `2024-05-31T10:00`,
//!   `2024-Q2`, month names) or the label column is named like a period (`date`, `day`, `week`, `month`,
//!   `quarter`, `year`); a bar otherwise, for at most [`MAX_BARS`] categories. An explicit `kind` wins.
//! - **Scale**: one measure, or two of comparable scale (their largest magnitudes within [`SCALE_RATIO`]), share
//!   one axis. Two measures of different scales (orders next to revenue in thousands) get two y axes in one
//!   panel, so that both are readable and still meet at each label: the first measure on the left axis, the
//!   second on a right axis, each axis with round ticks of its own (the same number of steps, zero at one
//!   height, so that both sets of ticks sit on the same gridlines), drawn and named in its series' colour, and a
//!   legend that says which axis each series is read on (`revenue (right axis)`). As bars, the first measure is
//!   the bars and the second a line with points over them: side by side, bars on different scales would invite
//!   comparing heights that mean different things. As lines, two lines. Three or four measures get a panel
//!   each, stacked with the same labels (small multiples): one axis per panel reads better than three or four.
//!
//! The SVG is self-contained (no script, no external reference, no style sheet), has a `viewBox`,
//! `role="img"`, a `<title>` and a `<desc>` for assistive technology (which says, with two axes, which measure is
//! on which), y axes with round ticks (`<g class="axis left">`, and `<g class="axis right">` with two axes), a
//! legend when there is more than one series, a `<title>` in every bar and point that says its label and value
//! (the web UI shows it on hover and focus), and escapes every text it draws.
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
/// The most series (numeric columns) one panel draws.
pub const MAX_SERIES: usize = 8;
/// The most measures [`chart`] draws (more than two in a panel each); a result with more gets no chart.
pub const MAX_PANELS: usize = 4;
/// The most categories a bar chart draws; more read better as a table.
pub const MAX_BARS: usize = 30;
/// Two measures share an axis when the larger of their largest magnitudes is at most this many times the
/// smaller; otherwise each has an axis of its own.
pub const SCALE_RATIO: f64 = 10.0;

const PERIOD_WORDS: [&str; 7] = ["date", "day", "week", "month", "quarter", "year", "period"];
/// Month names and their abbreviations, as labels of a line chart.
const MONTHS: &str = "jan feb mar apr may jun jul aug sep sept oct nov dec january february march april june july \
                      august september october november december";

/// The kind of chart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChartKind {
    /// Bars, grouped by label, one per series; with two axes, bars for the first measure and a line for the
    /// second.
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
    let label = numeric.iter().position(|n| !n).or_else(|| {
        (columns.len() > 1 && columns.first().is_some_and(|name| is_period_name(name))).then_some(0)
    })?;
    let series: Vec<usize> = (0..columns.len())
        .filter(|&c| numeric.get(c) == Some(&true) && c != label)
        .filter(|c| !columns.get(*c).is_some_and(|name| is_id_like(name)))
        .collect();
    if series.is_empty() || series.len() > MAX_PANELS {
        return None;
    }
    let label_name = columns.get(label)?.as_str();
    let labels: Vec<String> = column(label).map(label_text).collect();
    let mut seen = std::collections::HashSet::new();
    if !labels.iter().all(|l| seen.insert(l.as_str())) {
        return None;
    }
    let kind = kind.unwrap_or(if looks_temporal(label_name, &labels) {
        ChartKind::Line
    } else {
        ChartKind::Bar
    });
    if kind == ChartKind::Bar && labels.len() > MAX_BARS {
        return None;
    }
    let values: Vec<Vec<Option<f64>>> = series
        .iter()
        .map(|&c| column(c).map(number).collect())
        .collect();
    let names: Vec<String> = series
        .iter()
        .filter_map(|&c| columns.get(c).cloned())
        .collect();
    let svg = match values.as_slice() {
        [_] | [_, _] => {
            let two_axes = matches!(values.as_slice(), [a, b] if !comparable(a, b));
            Plot {
                label_name,
                labels,
                names,
                values,
                height: svg::HEIGHT,
                two_axes,
            }
            .render(kind)?
        }
        _ => {
            let panels: Vec<Plot<'_>> = names
                .into_iter()
                .zip(values)
                .map(|(name, values)| Plot {
                    label_name,
                    labels: labels.clone(),
                    names: vec![name],
                    values: vec![values],
                    height: svg::PANEL_HEIGHT,
                    two_axes: false,
                })
                .collect();
            svg::stack(&panels, kind)?
        }
    };
    Some(Chart { kind, svg })
}

/// Whether two measures can share an axis: their largest magnitudes are within [`SCALE_RATIO`].
fn comparable(a: &[Option<f64>], b: &[Option<f64>]) -> bool {
    let largest = |v: &[Option<f64>]| v.iter().flatten().fold(0.0_f64, |m, x| m.max(x.abs()));
    let (a, b) = (largest(a), largest(b));
    let (low, high) = (a.min(b), a.max(b));
    low == 0.0 || high / low <= SCALE_RATIO
}

/// Whether a column's name says it holds periods (`year`, `order_month`, `days`).
fn is_period_name(name: &str) -> bool {
    name.to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|word| {
            PERIOD_WORDS.contains(&word)
                || word
                    .strip_suffix('s')
                    .is_some_and(|w| PERIOD_WORDS.contains(&w))
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
    is_period_name(name)
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
