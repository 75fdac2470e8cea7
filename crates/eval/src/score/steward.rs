//! Steward's own comparison (`--semantics steward`): defog sql-eval's two tests, `compare_df` and
//! `subset_df`, made deterministic and forgiving, on the cells of `cell` (text that is a plain number equals
//! that number; non-integral numbers equal to 12 significant digits).
//!
//! A prediction is correct for a gold alternative when either test passes:
//!
//! `compare_df`:
//! 1. Same shape and every cell equal, in the order given.
//! 2. Or, with duplicate rows dropped, columns put in alphabetical order of their names and rows sorted,
//!    same shape and every cell equal (NULLs equal each other).
//!
//! `subset_df`:
//! 1. The gold result is not empty.
//! 2. Each gold column, in order, takes the first predicted column not yet taken whose values, sorted, equal
//!    its own sorted values (same length; numbers within pandas' default tolerance). Greedy: no
//!    backtracking.
//! 3. The taken predicted columns and the gold result, duplicate rows dropped and rows sorted, are equal
//!    (same tolerance).
//!
//! Where it departs from the official defog scorer (see `defog`): rows are always compared sorted, whatever
//! the question asks (the official leaves an ordered question's rows in their order in `subset_df`, and
//! sorts them in a direction read from each query's text in `compare_df`); shapes must be equal (no numpy
//! broadcasting); duplicate column names are compared as any others (the official fails); the cells are
//! `cell`'s, not Python's.

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
