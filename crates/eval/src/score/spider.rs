//! Spider's execution match, as test-suite-sql-eval's `exec_eval.result_eq` decides it.
//!
//! The official rules, in its order:
//! 1. Both results empty: equal, whatever their columns.
//! 2. Different row counts: different.
//! 3. Different column counts (of the first rows): different.
//! 4. Equal when some permutation of the predicted columns makes the rows equal: as lists when order
//!    matters, as multisets (bags: duplicates count) otherwise.
//!
//! The official enumerates column permutations (all of them up to three columns; above, those a sample of 20
//! random rows does not rule out) and tests each. Both only discard permutations that cannot work, so the
//! answer is "does any permutation work". This search prunes instead with a stronger necessary condition —
//! a predicted column can stand for a gold column only if the two hold the same multiset of values — and is
//! deterministic; it gives up (different) after [`MAX_PERMUTATIONS`] candidate permutations, which takes
//! many columns holding identical values.

use std::collections::HashMap;

use super::Rows;
use super::cell::Key;

/// Most complete column permutations tried.
const MAX_PERMUTATIONS: usize = 100_000;

/// Whether `predicted` is `gold` up to a permutation of columns (and of rows, unless `order_matters`).
pub(super) fn result_eq(gold: &Rows, predicted: &Rows, order_matters: bool) -> bool {
    if gold.rows.is_empty() && predicted.rows.is_empty() {
        return true;
    }
    if gold.rows.len() != predicted.rows.len() {
        return false;
    }
    let width = gold.rows.first().map_or(0, Vec::len);
    if predicted.rows.first().map_or(0, Vec::len) != width {
        return false;
    }
    let gold = gold.keys();
    let predicted = predicted.keys();
    if gold.iter().chain(&predicted).any(|row| row.len() != width) {
        // Ragged rows do not come out of a database; refuse rather than index past an end.
        return false;
    }
    // candidates[g] = the predicted columns whose multiset of values is gold column g's.
    let gold_profiles: Vec<Vec<&Key>> = (0..width).map(|c| profile(&gold, c)).collect();
    let predicted_profiles: Vec<Vec<&Key>> = (0..width).map(|c| profile(&predicted, c)).collect();
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

/// Column `c` of `rows` as a sorted list (its multiset of values).
fn profile(rows: &[Vec<Key>], c: usize) -> Vec<&Key> {
    let mut column: Vec<&Key> = rows.iter().filter_map(|r| r.get(c)).collect();
    column.sort();
    column
}

/// What a permuted prediction must equal.
enum Target<'a> {
    /// The gold rows in order.
    List(&'a [Vec<Key>]),
    /// The gold rows with their counts.
    Bag(HashMap<Vec<Key>, usize>),
}

fn bag(rows: impl Iterator<Item = Vec<Key>>) -> HashMap<Vec<Key>, usize> {
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
    predicted: &'a [Vec<Key>],
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
                .collect::<Vec<Key>>()
        });
        match &self.target {
            Target::List(gold) => permuted.zip(gold.iter()).all(|(p, g)| p == *g),
            Target::Bag(gold) => bag(permuted) == *gold,
        }
    }
}
