//! Execution accuracy: whether a predicted query's rows answer the question as the gold query's rows do,
//! under the semantics of each benchmark's official scorer.
//!
//! - [`Semantics::Spider`] — test-suite-sql-eval's `result_eq`: equal as multisets of rows under some
//!   permutation of the columns; rows in order only when the gold SQL says `order by`.
//! - [`Semantics::Bird`] — BIRD's `set(predicted) == set(gold)`: sets of row tuples, columns in order.
//! - [`Semantics::Defog`] — sql-eval's `compare_df` or `subset_df`: the predicted rows may carry extra
//!   columns as long as every gold column is matched by one of them.
//!
//! Values are compared as described in `cell` (NULL equals NULL, `1 == 1.0 == "1.00"`, text exactly).

mod cell;
mod defog;
mod spider;

use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use cell::{Cell, Key};

/// A query's result as the scorers see it: column names and rows of JSON values, as steward-sql's
/// `QueryResult` gives them (exact decimals as strings, NULL as `null`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Rows {
    /// The column names, in order.
    pub columns: Vec<String>,
    /// The rows, each as long as `columns`.
    pub rows: Vec<Vec<Value>>,
}

impl Rows {
    /// Rows from column names and rows.
    pub fn new(columns: Vec<String>, rows: Vec<Vec<Value>>) -> Self {
        Self { columns, rows }
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
}

impl From<steward_sql::QueryResult> for Rows {
    /// The result's column names and rows (whether it was truncated is the caller's business).
    fn from(result: steward_sql::QueryResult) -> Self {
        Self {
            columns: result.columns.into_iter().map(|c| c.name).collect(),
            rows: result.rows,
        }
    }
}

/// Which official scorer's idea of "the same result" to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Semantics {
    /// Spider (test-suite-sql-eval `exec_eval`): multisets of rows, column order free, row order only when
    /// the gold SQL contains `ORDER BY`.
    Spider,
    /// BIRD (`evaluation.py`): sets of row tuples; column order matters, duplicates and row order don't.
    Bird,
    /// defog sql-eval (`compare_df` / `subset_df`): extra predicted columns allowed, duplicates and row order
    /// ignored, any gold alternative may match.
    Defog,
}

impl Semantics {
    /// Every semantics, for listings and `--help`.
    pub const ALL: [Semantics; 3] = [Semantics::Spider, Semantics::Bird, Semantics::Defog];

    /// Its name: `spider`, `bird` or `defog`.
    pub fn name(self) -> &'static str {
        match self {
            Semantics::Spider => "spider",
            Semantics::Bird => "bird",
            Semantics::Defog => "defog",
        }
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
            .ok_or_else(|| format!("unknown scoring semantics `{s}`; use spider, bird or defog"))
    }
}

/// Whether `predicted` answers as `gold` does under `semantics`. `gold_sql` is the gold query that gave
/// `gold` (Spider looks in it for `ORDER BY`). Several gold alternatives are the caller's loop: a prediction
/// is correct when it matches any of them.
pub fn matches(semantics: Semantics, gold: &Rows, predicted: &Rows, gold_sql: &str) -> bool {
    match semantics {
        Semantics::Spider => {
            spider::result_eq(gold, predicted, crate::sqltext::mentions_order_by(gold_sql))
        }
        Semantics::Bird => bird_eq(gold, predicted),
        Semantics::Defog => defog::compare_df(gold, predicted) || defog::subset_df(gold, predicted),
    }
}

/// BIRD: `set(predicted_res) == set(ground_truth_res)` over row tuples. Column order matters (a tuple is
/// ordered); duplicates and row order don't; two empty results are equal whatever their columns.
fn bird_eq(gold: &Rows, predicted: &Rows) -> bool {
    let gold: HashSet<Vec<Key>> = gold.keys().into_iter().collect();
    let predicted: HashSet<Vec<Key>> = predicted.keys().into_iter().collect();
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
