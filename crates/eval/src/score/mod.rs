//! Execution accuracy: whether a predicted query's rows answer the question as the gold query's rows do.
//!
//! `spider`, `bird` and `defog` reproduce their official scorer's verdict, quirks included, rule by rule:
//!
//! - [`Semantics::Spider`] — test-suite-sql-eval `evaluation.py --etype exec` (no `--plug_value`):
//!   `exec_eval.result_eq` on Python values (see `spider` and `py`), the texts prepared as the script does
//!   (see [`crate::ScoreOptions::prepare`]).
//! - [`Semantics::Bird`] — BIRD mini-dev `evaluation_ex.py`: `set(predicted) == set(gold)` over row tuples
//!   of Python values; columns in order, duplicates and row order ignored.
//! - [`Semantics::Defog`] — sql-eval `compare_query_results`: `compare_df`, then `subset_df`, with pandas'
//!   rules, its row ordering for questions that ask for an order and its failure on duplicate column names
//!   (see `defog`).
//!
//! Python values (`py`): `None == None`, `1 == 1.0 == Decimal('1.0')`, floats exactly, and **text never
//! equals a number** (`'3' != 3`).
//!
//! [`Semantics::Steward`] is Steward's own, more forgiving rule, never printed under an official name:
//! defog's extra columns allowed and rows always compared as sorted sets, with the cell rules of `cell`
//! (text that is a plain number equals that number, non-integral numbers equal to 12 significant digits).

mod cell;
mod defog;
mod py;
mod spider;
mod steward;

use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use cell::{Cell, Key};
use py::{Py, PyKey};

/// A query's result as the scorers see it: column names and rows of JSON values, as steward-sql's
/// `QueryResult` gives them (exact decimals as strings, NULL as `null`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Rows {
    /// The column names, in order.
    pub columns: Vec<String>,
    /// The rows, each as long as `columns`.
    pub rows: Vec<Vec<Value>>,
    /// Each column's engine type (`INTEGER`, `NUMERIC`, `TEXT`, …), when known: it tells an exact decimal
    /// (a Python `Decimal`) from text. Empty when unknown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub types: Vec<String>,
}

impl Rows {
    /// Rows from column names and rows.
    pub fn new(columns: Vec<String>, rows: Vec<Vec<Value>>) -> Self {
        Self {
            columns,
            rows,
            types: Vec::new(),
        }
    }

    /// The same with each column's engine type.
    pub fn with_types(mut self, types: Vec<String>) -> Self {
        self.types = types;
        self
    }

    /// The width of the result: its column count, or the first row's length when no columns are named.
    fn width(&self) -> usize {
        if self.columns.is_empty() {
            self.rows.first().map_or(0, Vec::len)
        } else {
            self.columns.len()
        }
    }

    fn cells(&self) -> Vec<Vec<Cell>> {
        self.rows
            .iter()
            .map(|row| row.iter().map(Cell::of).collect())
            .collect()
    }

    fn keys(&self) -> Vec<Vec<Key>> {
        self.rows
            .iter()
            .map(|row| row.iter().map(|v| Cell::of(v).key()).collect())
            .collect()
    }

    /// The rows as Python values.
    fn py(&self) -> Vec<Vec<Py>> {
        self.rows
            .iter()
            .map(|row| {
                row.iter()
                    .enumerate()
                    .map(|(c, v)| Py::of(v, self.types.get(c).map_or("", String::as_str)))
                    .collect()
            })
            .collect()
    }

    /// The rows as keys of Python's `==`.
    fn py_keys(&self) -> Vec<Vec<PyKey>> {
        self.py()
            .iter()
            .map(|row| row.iter().map(Py::key).collect())
            .collect()
    }
}

impl From<steward_sql::QueryResult> for Rows {
    /// The result's column names and rows (whether it was truncated is the caller's business).
    fn from(result: steward_sql::QueryResult) -> Self {
        let (columns, types) = result
            .columns
            .into_iter()
            .map(|c| (c.name, c.type_name))
            .unzip();
        Self {
            columns,
            rows: result.rows,
            types,
        }
    }
}

/// Which scorer's idea of "the same result" to apply: an official one, or Steward's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Semantics {
    /// Spider (test-suite-sql-eval `exec_eval`): multisets of rows, column order free, row order only when
    /// the gold SQL contains `order by`; Python values.
    Spider,
    /// BIRD (mini-dev `evaluation_ex.py`): sets of row tuples; column order matters, duplicates and row
    /// order don't; Python values.
    Bird,
    /// defog sql-eval (`compare_query_results`): `compare_df` or `subset_df` (extra predicted columns
    /// allowed), pandas' rules, any gold alternative may match.
    Defog,
    /// Steward's own: defog's comparison with rows always compared sorted, and forgiving cells (`'3'`
    /// equals `3`, non-integral numbers to 12 significant digits). Not any official scorer's number.
    Steward,
}

impl Semantics {
    /// Every semantics, for listings and `--help`.
    pub const ALL: [Semantics; 4] = [
        Semantics::Spider,
        Semantics::Bird,
        Semantics::Defog,
        Semantics::Steward,
    ];

    /// Its name: `spider`, `bird`, `defog` or `steward`.
    pub fn name(self) -> &'static str {
        match self {
            Semantics::Spider => "spider",
            Semantics::Bird => "bird",
            Semantics::Defog => "defog",
            Semantics::Steward => "steward",
        }
    }

    /// Whether it is an official scorer's.
    pub fn is_official(self) -> bool {
        self != Semantics::Steward
    }
}

impl fmt::Display for Semantics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Semantics {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Semantics::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                format!("unknown scoring semantics `{s}`; use spider, bird, defog or steward")
            })
    }
}

/// What a scorer may read besides the two results: the question, its category, the gold text as the data
/// set gives it and the predicted SQL (defog's row ordering looks at them).
#[derive(Clone, Copy, Debug, Default)]
pub struct MatchContext<'a> {
    /// The question in words.
    pub question: &'a str,
    /// Its category (defog's `query_category`), when it has one.
    pub category: Option<&'a str>,
    /// The gold field as written in the data set (defog: every alternative, `;`-separated).
    pub gold_text: &'a str,
    /// The predicted SQL as given.
    pub predicted_sql: &'a str,
}

/// How a prediction compares with one gold result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Comparison {
    /// The same result (defog: `compare_df`).
    Same,
    /// Correct without being the same (defog's `subset_df`: extra columns); defog goes on with the other
    /// gold alternatives, whose failure still fails the question.
    Correct,
    /// Different.
    Different,
    /// The official scorer raises here (defog: duplicate column names, values pandas cannot sort), which
    /// counts the question wrong; why.
    Fails(String),
}

/// Whether `predicted` answers as `gold` does under `semantics`. `gold_sql` is the gold query that gave
/// `gold` (Spider looks in it for `order by`). Several gold alternatives are the caller's loop: a prediction
/// is correct when it matches any of them. defog's context-dependent rules see an empty context here; use
/// [`compare`] to give it.
pub fn matches(semantics: Semantics, gold: &Rows, predicted: &Rows, gold_sql: &str) -> bool {
    let context = MatchContext {
        gold_text: gold_sql,
        ..MatchContext::default()
    };
    matches!(
        compare(semantics, gold, predicted, gold_sql, &context),
        Comparison::Same | Comparison::Correct
    )
}

/// How `predicted` compares with `gold` under `semantics`, `gold_sql` being the (prepared) gold query that
/// gave `gold`.
pub fn compare(
    semantics: Semantics,
    gold: &Rows,
    predicted: &Rows,
    gold_sql: &str,
    context: &MatchContext<'_>,
) -> Comparison {
    let same = |b: bool| {
        if b {
            Comparison::Same
        } else {
            Comparison::Different
        }
    };
    match semantics {
        Semantics::Spider => same(spider::result_eq(
            &gold.py(),
            &predicted.py(),
            crate::sqltext::mentions_order_by(gold_sql),
        )),
        Semantics::Bird => same(bird_eq(gold, predicted)),
        Semantics::Defog => defog::compare_query_results(gold, predicted, context),
        Semantics::Steward => {
            if steward::compare_df(gold, predicted) {
                Comparison::Same
            } else if steward::subset_df(gold, predicted) {
                Comparison::Correct
            } else {
                Comparison::Different
            }
        }
    }
}

/// BIRD: `set(predicted_res) == set(ground_truth_res)` over row tuples of Python values. Column order
/// matters (a tuple is ordered); duplicates and row order don't; two empty results are equal whatever their
/// columns.
fn bird_eq(gold: &Rows, predicted: &Rows) -> bool {
    let gold: HashSet<Vec<PyKey>> = gold.py_keys().into_iter().collect();
    let predicted: HashSet<Vec<PyKey>> = predicted.py_keys().into_iter().collect();
    gold == predicted
}

/// Whether a result is its expected answer: it has exactly one row, and one of that row's cells equals
/// `expected` (numbers numerically: `"42"` matches `42` and `42.0`; text exactly, but trimmed).
pub fn answer_matches(expected: &str, predicted: &Rows) -> bool {
    let [row] = predicted.rows.as_slice() else {
        return false;
    };
    let expected = expected.trim();
    let want = Cell::of(&Value::String(expected.to_owned())).key();
    row.iter().any(|v| {
        let cell = match v {
            Value::String(s) => Cell::of(&Value::String(s.trim().to_owned())),
            other => Cell::of(other),
        };
        cell.key() == want
    })
}

#[cfg(test)]
mod tests;
