//! Spider's execution match, as test-suite-sql-eval's `exec_eval.result_eq` decides it, on Python values
//! (see `py`).
//!
//! The official rules, in its order:
//! 1. Both results empty: equal, whatever their columns.
//! 2. Different row counts: different.
//! 3. Different column counts (of the first rows): different.
//! 4. `quick_rej`: each row's values sorted by `str(x) + str(type(x))`; those sorted rows must be equal as
//!    lists when order matters, as sets otherwise — else different. (This is a string sort, so `1` and `1.0`
//!    may sort differently within a row: `(1, 1.5)` sorts to `(1.5, 1)`, `(1.0, 1.5)` to `(1.0, 1.5)`, and
//!    the two rows are rejected although `1 == 1.0`. Reproduced.)
//! 5. Equal when some permutation of the predicted columns makes the rows equal: as lists when order
//!    matters, as multisets (bags: duplicates count) otherwise.
//!
//! The official enumerates column permutations (all of them up to three columns; above, those a sample of 20
//! random rows does not rule out) and tests each. Both only discard permutations that cannot work, so the
//! answer is "does any permutation work". This search prunes instead with a stronger necessary condition —
//! a predicted column can stand for a gold column only if the two hold the same multiset of values — and is
//! deterministic; it gives up (different) after [`MAX_PERMUTATIONS`] candidate permutations, which takes
//! many columns holding identical values.

use std::collections::{HashMap, HashSet};

use super::py::{Py, PyKey};

/// Most complete column permutations tried.
const MAX_PERMUTATIONS: usize = 100_000;

/// Whether `predicted` is `gold` up to a permutation of columns (and of rows, unless `order_matters`).
pub(super) fn result_eq(gold: &[Vec<Py>], predicted: &[Vec<Py>], order_matters: bool) -> bool {
    if gold.is_empty() && predicted.is_empty() {
        return true;
    }
    if gold.len() != predicted.len() {
        return false;
    }
    let width = gold.first().map_or(0, Vec::len);
    if predicted.first().map_or(0, Vec::len) != width {
        return false;
    }
    if gold.iter().chain(predicted).any(|row| row.len() != width) {
        // Ragged rows do not come out of a database; refuse rather than index past an end.
        return false;
    }
    if !quick_rej(gold, predicted, order_matters) {
        return false;
    }
    let keys = |rows: &[Vec<Py>]| -> Vec<Vec<PyKey>> {
        rows.iter()
            .map(|r| r.iter().map(Py::key).collect())
            .collect()
    };
    let (gold, predicted) = (keys(gold), keys(predicted));
    // candidates[g] = the predicted columns whose multiset of values is gold column g's.
    let gold_profiles: Vec<Vec<&PyKey>> = (0..width).map(|c| profile(&gold, c)).collect();
    let predicted_profiles: Vec<Vec<&PyKey>> = (0..width).map(|c| profile(&predicted, c)).collect();
    let candidates: Vec<Vec<usize>> = gold_profiles
        .iter()
        .map(|g| {
            (0..width)
                .filter(|&p| predicted_profiles[p] == *g)
                .collect()
        })
        .collect();
    if candidates.iter().any(Vec::is_empty) {
        return false;
    }
    let target = if order_matters {
        Target::List(&gold)
    } else {
        Target::Bag(bag(gold.iter().cloned()))
    };
    let mut search = Search {
        candidates: &candidates,
        predicted: &predicted,
        target,
        chosen: Vec::with_capacity(width),
        used: vec![false; width],
        tried: 0,
    };
    search.run()
}

/// The official `quick_rej`: rows with their values sorted by `str(x) + str(type(x))`, compared as lists
/// (order matters) or sets.
fn quick_rej(gold: &[Vec<Py>], predicted: &[Vec<Py>], order_matters: bool) -> bool {
    let unorder = |rows: &[Vec<Py>]| -> Vec<Vec<PyKey>> {
        rows.iter()
            .map(|row| {
                let mut cells: Vec<(String, &Py)> =
                    row.iter().map(|v| (v.str_and_type(), v)).collect();
                // Python's sort is stable; equal sort keys are equal values.
                cells.sort_by(|a, b| a.0.cmp(&b.0));
                cells.into_iter().map(|(_, v)| v.key()).collect()
            })
            .collect()
    };
    let (g, p) = (unorder(gold), unorder(predicted));
    if order_matters {
        g == p
    } else {
        g.into_iter().collect::<HashSet<_>>() == p.into_iter().collect::<HashSet<_>>()
    }
}

/// Column `c` of `rows` as a sorted list (its multiset of values).
fn profile(rows: &[Vec<PyKey>], c: usize) -> Vec<&PyKey> {
    let mut column: Vec<&PyKey> = rows.iter().filter_map(|r| r.get(c)).collect();
    column.sort();
    column
}

/// What a permuted prediction must equal.
enum Target<'a> {
    /// The gold rows in order.
    List(&'a [Vec<PyKey>]),
    /// The gold rows with their counts.
    Bag(HashMap<Vec<PyKey>, usize>),
}

fn bag(rows: impl Iterator<Item = Vec<PyKey>>) -> HashMap<Vec<PyKey>, usize> {
    let mut counts = HashMap::new();
    for row in rows {
        *counts.entry(row).or_insert(0) += 1;
    }
    counts
}

/// A depth-first search over column permutations: `chosen[g]` is the predicted column standing for gold
/// column `g`.
struct Search<'a> {
    candidates: &'a [Vec<usize>],
    predicted: &'a [Vec<PyKey>],
    target: Target<'a>,
    chosen: Vec<usize>,
    used: Vec<bool>,
    tried: usize,
}

impl Search<'_> {
    fn run(&mut self) -> bool {
        let g = self.chosen.len();
        let Some(options) = self.candidates.get(g) else {
            self.tried += 1;
            return self.permuted_equal();
        };
        for &p in options {
            if self.used[p] {
                continue;
            }
            if self.tried >= MAX_PERMUTATIONS {
                return false;
            }
            self.used[p] = true;
            self.chosen.push(p);
            let found = self.run();
            self.chosen.pop();
            self.used[p] = false;
            if found {
                return true;
            }
        }
        false
    }

    fn permuted_equal(&self) -> bool {
        let permuted = self.predicted.iter().map(|row| {
            self.chosen
                .iter()
                .map(|&p| row[p].clone())
                .collect::<Vec<PyKey>>()
        });
        match &self.target {
            Target::List(gold) => permuted.zip(gold.iter()).all(|(p, g)| p == *g),
            Target::Bag(gold) => bag(permuted) == *gold,
        }
    }
}
