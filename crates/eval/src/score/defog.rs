//! defog sql-eval's verdict on one gold alternative, as `eval/eval.py`'s `compare_query_results` gives it
//! (`compare_df`, then `subset_df`, with `normalize_table`), on Python values (see `py`) with pandas'
//! rules. The caller tries every alternative, and goes on after a `subset_df` match as the official does.
//!
//! `compare_df(gold, predicted)`:
//! 1. `df_gold.values == df_gen.values`, all true — numpy's elementwise test, **with broadcasting**: a
//!    one-row gold result equals any prediction whose rows all equal it, and an empty gold result equals a
//!    one-row prediction of a compatible width. A NULL in a numeric column is NaN there, equal to nothing;
//!    a NULL in a text column is `None`, equal to `None`. Shapes that do not broadcast: not equal.
//! 2. Else both are normalised (`normalize_table`, below), the gold with the gold field's text, the
//!    prediction with its SQL; then the shapes must be equal and every cell equal after NULLs became
//!    `-99999` (so a NULL equals the number -99999).
//!
//! `subset_df(gold, predicted)` (the "correct" that is not an exact match):
//! 1. An empty gold result (no rows or no columns): false.
//! 2. Each gold column, in order, takes the first remaining predicted column whose sorted values equal its
//!    sorted values (`assert_series_equal`: same length; exact when either column is integral, else within
//!    `math.isclose(rel_tol=1e-5, abs_tol=1e-8)`; text exactly). Greedy, no backtracking.
//! 3. The gold result and the taken columns (renamed to the gold names) are normalised **without a query**
//!    and compared (`assert_frame_equal`, same tolerance for every column).
//!
//! `normalize_table(result, question, category, sql)`:
//! 1. Duplicate rows dropped (first kept); columns sorted by name. **Duplicate column names fail** (pandas
//!    raises): the question is then wrong, unless step 1 of `compare_df` already matched.
//! 2. A question "asks for an order" when its category is `order_by` or its text holds the word `order`,
//!    `sort` or `arrange` (case-insensitive, whole words: "sorted" does not count).
//!    - If it does not, rows are sorted by every column, ascending, missing values last.
//!    - If it does and there is no query (every `subset_df` call) or the query has no `ORDER BY`: **rows stay
//!      in the order the engine returned them**.
//!    - If it does and the query has `ORDER BY`: the text after the first `ORDER BY` up to the first `;`,
//!      `,` or `)` on the same line (Python's `(?<=ORDER BY)(.*?)(?=;|,|\)|$)`; a line break before any
//!      of them gives no match, then no column) is split into words; `DESC` among them sorts descending,
//!      else `ASC` ascending, **else descending**; the words that name a result column (after the last `.`)
//!      sort first, the other columns after; those columns are then moved last.
//! 3. Sorting a column that holds both text and numbers fails (Python's `TypeError`): the question is wrong.
//!
//! Any failure of the official (a query that fails, a gold alternative that fails, pandas raising) makes
//! the question wrong, even when an earlier gold alternative matched through `subset_df`.
//!
//! Known limits: pandas' dtypes are inferred from the values (a column is integral when it holds only
//! integers and no NULL, numeric when it holds only numbers); dates and times compare as the text Steward
//! renders them, as Python's `date` objects compare among themselves.

use std::cmp::Ordering;
use std::collections::HashSet;

use super::py::{Py, PyKey};
use super::{Comparison, MatchContext, Rows};

/// A result as pandas holds it: column names and rows.
#[derive(Clone, Debug)]
struct Frame {
    names: Vec<String>,
    rows: Vec<Vec<Py>>,
}

impl Frame {
    fn of(rows: &Rows) -> Frame {
        let cells = rows.py();
        let width = if rows.columns.is_empty() {
            cells.first().map_or(0, Vec::len)
        } else {
            rows.columns.len()
        };
        let names = if rows.columns.is_empty() {
            (0..width).map(|i| i.to_string()).collect()
        } else {
            rows.columns.clone()
        };
        Frame { names, rows: cells }
    }

    fn width(&self) -> usize {
        self.names.len()
    }

    fn column(&self, c: usize) -> Vec<&Py> {
        self.rows.iter().filter_map(|r| r.get(c)).collect()
    }

    /// Whether column `c` is numeric for pandas (only numbers and missing values, at least one number).
    fn numeric(&self, c: usize) -> bool {
        let col = self.column(c);
        col.iter().any(|v| matches!(v, Py::Int(_) | Py::Float(_)))
            && col
                .iter()
                .all(|v| matches!(v, Py::Int(_) | Py::Float(_) | Py::None))
    }

    /// Whether column `c` is integral for pandas (`int64`: integers only, no missing value).
    fn integral(&self, c: usize) -> bool {
        let col = self.column(c);
        !col.is_empty() && col.iter().all(|v| matches!(v, Py::Int(_)))
    }
}

/// `compare_df`, then `subset_df`.
pub(super) fn compare_query_results(
    gold: &Rows,
    predicted: &Rows,
    context: &MatchContext<'_>,
) -> Comparison {
    let (gold, predicted) = (Frame::of(gold), Frame::of(predicted));
    match compare_df(&gold, &predicted, context) {
        Err(e) => Comparison::Fails(e),
        Ok(true) => Comparison::Same,
        Ok(false) => match subset_df(&gold, &predicted, context) {
            Err(e) => Comparison::Fails(e),
            Ok(true) => Comparison::Correct,
            Ok(false) => Comparison::Different,
        },
    }
}

/// A cell of `.values`: a NULL in a numeric column is NaN (equal to nothing).
fn values_key(frame: &Frame, c: usize, v: &Py) -> Option<PyKey> {
    match v {
        Py::None if frame.numeric(c) => None,
        Py::Float(x) if x.is_nan() => None,
        other => Some(other.key()),
    }
}

/// `(df_gold.values == df_gen.values).all()`, with numpy's broadcasting; false when the shapes do not
/// broadcast.
fn values_equal(gold: &Frame, predicted: &Frame) -> bool {
    let shape = |f: &Frame| (f.rows.len(), f.width());
    let ((gr, gc), (pr, pc)) = (shape(gold), shape(predicted));
    let dim = |a: usize, b: usize| match (a, b) {
        _ if a == b => Some(a),
        (1, n) | (n, 1) => Some(n),
        _ => None,
    };
    let (Some(rows), Some(cols)) = (dim(gr, pr), dim(gc, pc)) else {
        return false;
    };
    let pick = |n: usize, i: usize| if n == 1 { 0 } else { i };
    let (g_numeric, p_numeric): (Vec<bool>, Vec<bool>) = (
        (0..gc).map(|c| gold.numeric(c)).collect(),
        (0..pc).map(|c| predicted.numeric(c)).collect(),
    );
    let key = |numeric: bool, v: &Py| match v {
        Py::None if numeric => None,
        Py::Float(x) if x.is_nan() => None,
        other => Some(other.key()),
    };
    for r in 0..rows {
        for c in 0..cols {
            let (gcol, pcol) = (pick(gc, c), pick(pc, c));
            let g = gold.rows.get(pick(gr, r)).and_then(|row| row.get(gcol));
            let p = predicted
                .rows
                .get(pick(pr, r))
                .and_then(|row| row.get(pcol));
            let (Some(g), Some(p)) = (g, p) else {
                return false;
            };
            match (key(g_numeric[gcol], g), key(p_numeric[pcol], p)) {
                (Some(a), Some(b)) if a == b => {}
                _ => return false,
            }
        }
    }
    true
}

fn compare_df(gold: &Frame, predicted: &Frame, context: &MatchContext<'_>) -> Result<bool, String> {
    if values_equal(gold, predicted) {
        return Ok(true);
    }
    let gold = normalize_table(gold, context, Some(context.gold_text))?;
    let predicted = normalize_table(predicted, context, Some(context.predicted_sql))?;
    if gold.rows.len() != predicted.rows.len() || gold.width() != predicted.width() {
        return Ok(false);
    }
    // fillna(-99999), then `==` everywhere.
    let filled = |frame: &Frame, c: usize, v: &Py| {
        if v.is_na() {
            Some(PyKey::Int(-99999))
        } else {
            values_key(frame, c, v)
        }
    };
    Ok(gold.rows.iter().zip(&predicted.rows).all(|(g, p)| {
        g.iter().zip(p).enumerate().all(|(c, (a, b))| {
            matches!((filled(&gold, c, a), filled(&predicted, c, b)), (Some(x), Some(y)) if x == y)
        })
    }))
}

fn subset_df(gold: &Frame, predicted: &Frame, context: &MatchContext<'_>) -> Result<bool, String> {
    if gold.rows.is_empty() || gold.width() == 0 {
        return Ok(false);
    }
    if has_duplicates(&predicted.names) || has_duplicates(&gold.names) {
        // compare_df raised before: unreachable in the official; kept as its KeyError.
        return Err("duplicate column names (pandas KeyError)".to_owned());
    }
    let mut remaining: Vec<usize> = (0..predicted.width()).collect();
    let mut matched = Vec::with_capacity(gold.width());
    for g in 0..gold.width() {
        let mut found = None;
        for (slot, &p) in remaining.iter().enumerate() {
            let want = sorted_series(&gold.column(g))?;
            let have = sorted_series(&predicted.column(p))?;
            let exact = gold.integral(g) || predicted.integral(p);
            if series_equal(&want, &have, exact) {
                found = Some((slot, p));
                break;
            }
        }
        let Some((slot, p)) = found else {
            return Ok(false);
        };
        remaining.remove(slot);
        matched.push(p);
    }
    let taken = Frame {
        names: gold.names.clone(),
        rows: predicted
            .rows
            .iter()
            .map(|row| {
                matched
                    .iter()
                    .filter_map(|&p| row.get(p).cloned())
                    .collect()
            })
            .collect(),
    };
    let gold = normalize_table(gold, context, None)?;
    let taken = normalize_table(&taken, context, None)?;
    if gold.rows.len() != taken.rows.len() || gold.names != taken.names {
        return Ok(false);
    }
    Ok((0..gold.width()).all(|c| series_equal(&gold.column(c), &taken.column(c), false)))
}

fn has_duplicates(names: &[String]) -> bool {
    let mut seen = HashSet::new();
    names.iter().any(|n| !seen.insert(n))
}

/// `Series.sort_values()`: ascending, missing values last; text and numbers together fail.
fn sorted_series<'a>(column: &[&'a Py]) -> Result<Vec<&'a Py>, String> {
    check_sortable(column.iter().copied())?;
    let mut out = column.to_vec();
    out.sort_by(|a, b| order_na_last(a, b, true));
    Ok(out)
}

/// Python's `TypeError` when a column mixes values `<` cannot order (text with numbers).
fn check_sortable<'a>(column: impl Iterator<Item = &'a Py>) -> Result<(), String> {
    let (mut text, mut number) = (false, false);
    for v in column {
        match v {
            Py::Str(_) => text = true,
            v if v.is_number() && !v.is_na() => number = true,
            _ => {}
        }
    }
    if text && number {
        return Err("'<' not supported between instances of 'str' and a number (pandas cannot sort the column)".to_owned());
    }
    Ok(())
}

fn order_na_last(a: &Py, b: &Py, ascending: bool) -> Ordering {
    match (a.is_na(), b.is_na()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => {
            let o = a.py_cmp(b).unwrap_or(Ordering::Equal);
            if ascending { o } else { o.reverse() }
        }
    }
}

/// `assert_series_equal(check_dtype=False, check_names=False)` on two columns as given: same length, missing
/// with missing, text exactly, numbers exactly when `exact`, else within `math.isclose(rel_tol=1e-5,
/// abs_tol=1e-8)` (a `Decimal` by `==`).
fn series_equal(a: &[&Py], b: &[&Py], exact: bool) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            _ if x.is_na() && y.is_na() => true,
            _ if x.is_na() || y.is_na() => false,
            (Py::Str(s), Py::Str(t)) => s == t,
            (Py::Decimal(_), _) | (_, Py::Decimal(_)) => x.key() == y.key(),
            _ if x.is_number() && y.is_number() => {
                if exact || x.key() == y.key() {
                    return x.key() == y.key();
                }
                match (x.as_f64(), y.as_f64()) {
                    (Some(p), Some(q)) => (p - q).abs() <= (1e-5 * p.abs().max(q.abs())).max(1e-8),
                    _ => false,
                }
            }
            _ => false,
        })
}

/// Whether the question asks for an order: category `order_by`, or the whole word order, sort or arrange.
fn asks_for_order(context: &MatchContext<'_>) -> bool {
    if context.category.is_some_and(|c| c == "order_by") {
        return true;
    }
    let q = context.question.to_lowercase();
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    ["order", "sort", "arrange"].iter().any(|w| {
        q.match_indices(w).any(|(i, _)| {
            let before = q[..i].chars().next_back();
            let after = q[i + w.len()..].chars().next();
            !before.is_some_and(is_word) && !after.is_some_and(is_word)
        })
    })
}

/// The words of the official's `ORDER BY` match (see the module), or `None` when the text has no `ORDER
/// BY` (then nothing is sorted).
fn order_by_words(sql: &str) -> Option<Vec<String>> {
    let lower = sql.to_ascii_lowercase();
    let start = lower.find("order by")?;
    let clause = &sql[start..];
    let lower_clause = &lower[start..];
    let bytes = clause.as_bytes();
    for (at, _) in lower_clause.match_indices("order by") {
        let from = at + "order by".len();
        // `.*?` cannot cross a line break; `$` is the end, or just before a final line break.
        let mut end = None;
        for i in from..=bytes.len() {
            match bytes.get(i) {
                None => {
                    end = Some(i);
                    break;
                }
                Some(b';' | b',' | b')') => {
                    end = Some(i);
                    break;
                }
                Some(b'\n') => {
                    if i + 1 == bytes.len() {
                        end = Some(i);
                    }
                    break;
                }
                Some(_) => {}
            }
        }
        if let Some(end) = end {
            return Some(
                clause[from..end]
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect(),
            );
        }
    }
    Some(Vec::new())
}

/// `normalize_table` (see the module).
fn normalize_table(
    frame: &Frame,
    context: &MatchContext<'_>,
    sql: Option<&str>,
) -> Result<Frame, String> {
    // drop_duplicates (missing values equal each other).
    let mut seen = HashSet::new();
    let rows: Vec<Vec<Py>> = frame
        .rows
        .iter()
        .filter(|row| {
            let key: Vec<Option<PyKey>> = row
                .iter()
                .map(|v| if v.is_na() { None } else { Some(v.key()) })
                .collect();
            seen.insert(key)
        })
        .cloned()
        .collect();
    if let Some(name) = frame
        .names
        .iter()
        .find(|n| frame.names.iter().filter(|m| m == n).count() > 1)
    {
        return Err(format!(
            "the column label '{name}' is not unique (pandas cannot normalise a result with duplicate column names)"
        ));
    }
    let mut order: Vec<usize> = (0..frame.width()).collect();
    order.sort_by(|&a, &b| frame.names[a].cmp(&frame.names[b]));
    let mut out = Frame {
        names: order.iter().map(|&c| frame.names[c].clone()).collect(),
        rows: rows
            .iter()
            .map(|row| order.iter().filter_map(|&c| row.get(c).cloned()).collect())
            .collect(),
    };
    if !asks_for_order(context) {
        let all: Vec<usize> = (0..out.width()).collect();
        sort_rows(&mut out, &all, true)?;
        return Ok(out);
    }
    let Some(words) = sql.and_then(order_by_words) else {
        return Ok(out);
    };
    let words: Vec<String> = words
        .iter()
        .map(|w| w.trim().rsplit('.').next().unwrap_or("").to_owned())
        .collect();
    let upper: Vec<String> = words.iter().map(|w| w.to_uppercase()).collect();
    let ascending = if upper.iter().any(|w| w == "DESC") {
        false
    } else {
        upper.iter().any(|w| w == "ASC")
    };
    let named: Vec<String> = words
        .iter()
        .map(|w| w.trim().replace([',', '('], ""))
        .filter(|w| {
            !["desc", "asc", "nulls", "last", "first", "limit"].contains(&w.to_lowercase().as_str())
        })
        .collect();
    let others: Vec<usize> = (0..out.width())
        .filter(|&c| !named.contains(&out.names[c]))
        .collect();
    let firsts: Vec<usize> = named
        .iter()
        .filter_map(|n| out.names.iter().position(|m| m == n))
        .collect();
    let by: Vec<usize> = firsts.iter().chain(&others).copied().collect();
    sort_rows(&mut out, &by, ascending)?;
    let columns: Vec<usize> = others.iter().chain(&firsts).copied().collect();
    out = Frame {
        names: columns.iter().map(|&c| out.names[c].clone()).collect(),
        rows: out
            .rows
            .iter()
            .map(|row| {
                columns
                    .iter()
                    .filter_map(|&c| row.get(c).cloned())
                    .collect()
            })
            .collect(),
    };
    Ok(out)
}

/// `sort_values(by=…, ascending=…)`: lexicographic on the columns `by`, missing values last.
fn sort_rows(frame: &mut Frame, by: &[usize], ascending: bool) -> Result<(), String> {
    for &c in by {
        check_sortable(frame.column(c).into_iter())?;
    }
    frame.rows.sort_by(|a, b| {
        by.iter()
            .map(|&c| match (a.get(c), b.get(c)) {
                (Some(x), Some(y)) => order_na_last(x, y, ascending),
                _ => Ordering::Equal,
            })
            .find(|o| *o != Ordering::Equal)
            .unwrap_or(Ordering::Equal)
    });
    Ok(())
}
