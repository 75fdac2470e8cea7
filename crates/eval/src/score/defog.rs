//! defog sql-eval's comparison (`eval/eval.py`: `compare_query_results`, `compare_df`, `subset_df`,
//! `normalize_table`), on one gold alternative; the caller tries every alternative.
//!
//! A prediction is correct for a gold alternative when either test passes:
//!
//! `compare_df` (the official's "exact match"):
//! 1. Same shape and every cell equal, in the order given (`df_gold.values == df_gen.values`).
//! 2. Or, after `normalize_table` on both: duplicate rows dropped, columns put in alphabetical order of
//!    their names, rows sorted — same shape and every cell equal (NULLs equal each other, as the official's
//!    `fillna(-99999)` makes them).
//!
//! `subset_df` (the official's "correct" when the exact match fails):
//! 1. The gold result is not empty (an empty gold result only ever matches through `compare_df`).
//! 2. Each gold column, in order, takes the first predicted column not yet taken whose values, sorted, equal
//!    its own sorted values (`assert_series_equal`: same length, so the same row count; numbers within
//!    pandas' default tolerance). Greedy, as the official: no backtracking.
//! 3. The taken predicted columns, renamed to the gold names, and the gold result are both normalised
//!    (duplicate rows dropped, rows sorted) and must be equal (`assert_frame_equal`, same tolerance).
//!
//! Row order. The official `normalize_table` sorts the rows in every case that matters: by all columns, or,
//! when the question asks for an order ("order", "sort", "arrange" in its text, or the category
//! `order_by`), by the columns a regular expression finds after the query's `ORDER BY` first and all the
//! others after them. Either way a full sort, so two results holding the same rows in different orders
//! compare equal, and here rows are always compared sorted. What this does not reproduce are the
//! official's accidents in the ordered case: the sort direction it reads (`DESC` or `ASC` anywhere after
//! `ORDER BY`) is taken from each query's own text, and the column order after sorting depends on the
//! names that query uses, so two equal results can compare different there. Nor numpy's broadcasting in
//! the first exact test (a one-row gold result "equals" any result whose rows all equal it): shapes must be
//! equal here.

use std::cmp::Ordering;
use std::collections::HashSet;

use super::Rows;
use super::cell::{Cell, Key};

/// `compare_df`: equal as given, or equal once both are normalised with their own column names.
pub(super) fn compare_df(gold: &Rows, predicted: &Rows) -> bool {
    let (gw, pw) = (gold.width(), predicted.width());
    if gw == pw && gold.rows.len() == predicted.rows.len() && gold.keys() == predicted.keys() {
        return true;
    }
    if gw != pw {
        return false;
    }
    let by_name = |rows: &Rows| {
        let mut order: Vec<usize> = (0..rows.width()).collect();
        order.sort_by(|&a, &b| rows.columns.get(a).cmp(&rows.columns.get(b)));
        order
    };
    let gold = normalized_keys(gold, &by_name(gold));
    let predicted = normalized_keys(predicted, &by_name(predicted));
    gold == predicted
}

/// `subset_df`: every gold column matched by a predicted column, then the matched columns equal the gold
/// result as normalised tables.
pub(super) fn subset_df(gold: &Rows, predicted: &Rows) -> bool {
    if gold.rows.is_empty() || gold.width() == 0 {
        return false;
    }
    let gold_cells = gold.cells();
    let predicted_cells = predicted.cells();
    let (gw, pw) = (gold.width(), predicted.width());
    if gold_cells.iter().any(|r| r.len() != gw) || predicted_cells.iter().any(|r| r.len() != pw) {
        return false;
    }
    let mut taken = vec![false; pw];
    let mut matched = Vec::with_capacity(gw);
    for g in 0..gw {
        let want = sorted_column(&gold_cells, g);
        let found = (0..pw).find(|&p| {
            !taken[p] && {
                let have = sorted_column(&predicted_cells, p);
                have.len() == want.len() && have.iter().zip(&want).all(|(a, b)| a.close(b))
            }
        });
        let Some(p) = found else {
            return false;
        };
        taken[p] = true;
        matched.push(p);
    }
    let identity: Vec<usize> = (0..gw).collect();
    let gold = normalized_cells(&gold_cells, &identity);
    let predicted = normalized_cells(&predicted_cells, &matched);
    gold.len() == predicted.len()
        && gold
            .iter()
            .zip(&predicted)
            .all(|(g, p)| g.iter().zip(p).all(|(a, b)| a.close(b)))
}

/// Column `c` of `rows`, sorted by value.
fn sorted_column(rows: &[Vec<Cell>], c: usize) -> Vec<&Cell> {
    let mut column: Vec<&Cell> = rows.iter().filter_map(|r| r.get(c)).collect();
    column.sort_by(|a, b| a.order(b));
    column
}

/// The rows projected on `columns` (in that order), duplicates dropped, sorted — exact keys.
fn normalized_keys(rows: &Rows, columns: &[usize]) -> Vec<Vec<Key>> {
    let mut seen = HashSet::new();
    let mut out: Vec<Vec<Key>> = rows
        .keys()
        .into_iter()
        .map(|row| {
            columns
                .iter()
                .filter_map(|&c| row.get(c).cloned())
                .collect::<Vec<Key>>()
        })
        .filter(|row| seen.insert(row.clone()))
        .collect();
    out.sort();
    out
}

/// The rows projected on `columns` (in that order), exact duplicates dropped, sorted by value.
fn normalized_cells(rows: &[Vec<Cell>], columns: &[usize]) -> Vec<Vec<Cell>> {
    let mut seen = HashSet::new();
    let mut out: Vec<Vec<Cell>> = rows
        .iter()
        .map(|row| {
            columns
                .iter()
                .filter_map(|&c| row.get(c).cloned())
                .collect::<Vec<Cell>>()
        })
        .filter(|row| seen.insert(row.iter().map(Cell::key).collect::<Vec<Key>>()))
        .collect();
    out.sort_by(|a, b| {
        a.iter()
            .zip(b)
            .map(|(x, y)| x.order(y))
            .find(|o| *o != Ordering::Equal)
            .unwrap_or(Ordering::Equal)
    });
    out
}
