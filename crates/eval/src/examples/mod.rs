//! The example-retrieval benchmark, no model involved: when a question's verified examples are the other
//! questions of its database (with their gold SQL), does the ranking of [`steward_sql::ExampleIndex`] put one
//! answered by the same kind of query — the same [`sql_skeleton`] — among the first k the analyst is shown?
//!
//! For each question with gold SQL, the pool is every other question of its database whose gold SQL is not
//! the same query ([`normalized_sql`]: an example that is the answer itself would make the measure trivial).
//! The question's relevant tables are what the schema context ranks first for it
//! ([`steward_sql::ContextIndex::ranking`], the first [`TABLES_RANKED`]), as the analyst's context does; a
//! database without a catalog ranks with none. The figures are hit@1, hit@3 and hit@5 (the share of questions
//! with a same-skeleton example in the top k), the ceiling (the share whose pool has one at all) and what a
//! random pick of 3 would hit, per split and per database. Questions are split by database as the retrieval
//! benchmark splits them: a database is held out when the FNV-1a hash of its name is divisible by
//! [`HELDOUT_MODULUS`].

mod skeleton;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use steward_sql::{Catalog, ContextIndex, Dialect, Example, ExampleIndex, Guard};

use crate::dataset::{Dataset, Format};
use crate::retrieval::{Split, fnv1a};

pub use skeleton::{normalized_sql, sql_skeleton};

/// A database is held out when FNV-1a(name) is divisible by this: the retrieval benchmark's rule
/// (`heldout_modulus: 3` in `testdata/retrieval/merged.yaml`), so both hold out the same databases.
pub const HELDOUT_MODULUS: u64 = 3;
/// How many of the schema context's first tables a question's examples are ranked with (as
/// [`steward_sql::knowledge_context`] does).
pub const TABLES_RANKED: usize = 5;
/// The k of hit@k.
pub const HIT_AT: [usize; 3] = [1, 3, 5];
/// The depth of the misses: the examples the analyst is shown ([`steward_sql::EXAMPLES_SHOWN`]).
pub(crate) const SHOWN: usize = steward_sql::EXAMPLES_SHOWN;

/// Whether database `db` is held out.
pub fn example_split(db: &str) -> Split {
    if fnv1a(db).is_multiple_of(HELDOUT_MODULUS) {
        Split::Heldout
    } else {
        Split::Tune
    }
}

/// One question of the benchmark.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExampleQuestion {
    /// Its id in the data set.
    pub id: String,
    /// Its database.
    pub db: String,
    /// The question.
    pub question: String,
    /// Its gold SQL (the first alternative when there are several).
    pub sql: String,
    /// Tuning or held-out (by database).
    pub split: Split,
}

/// The questions of `dataset` that have gold SQL, each with its split; and the ids of those without (answer
/// only: they can be neither asked nor shown).
pub fn example_questions(dataset: &Dataset) -> (Vec<ExampleQuestion>, Vec<String>) {
    let mut questions = Vec::new();
    let mut skipped = Vec::new();
    for item in &dataset.items {
        match item.gold.iter().find(|sql| !sql.trim().is_empty()) {
            Some(sql) => questions.push(ExampleQuestion {
                id: item.id.clone(),
                db: item.db.clone(),
                question: item.question.clone(),
                sql: sql.clone(),
                split: example_split(&item.db),
            }),
            None => skipped.push(item.id.clone()),
        }
    }
    (questions, skipped)
}

/// The dialect a data set's gold SQL is written in, when its format says: defog's is PostgreSQL, Spider's
/// and BIRD's SQLite; Steward's is its database's.
pub fn gold_dialect(format: Format) -> Option<Dialect> {
    match format {
        Format::Defog => Some(Dialect::Postgres),
        Format::Spider | Format::Bird => Some(Dialect::Sqlite),
        Format::Steward => None,
    }
}

/// What the benchmark knows of one database.
#[derive(Clone, Debug)]
pub struct ExampleDb {
    /// Its catalog, for the question's relevant tables; `None` ranks with no table.
    pub catalog: Option<Catalog>,
    /// The dialect its gold SQL is read in (the guard reads an example's tables with it).
    pub dialect: Dialect,
}

/// One example as ranked for a question.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankedExample {
    /// The example's question id.
    pub id: String,
    /// Its question.
    pub question: String,
    /// Its SQL.
    pub sql: String,
    /// The ranking's score.
    pub score: f64,
    /// Whether its SQL has the question's skeleton.
    pub same_skeleton: bool,
}

/// One question's outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExampleResult {
    /// The question's id.
    pub id: String,
    /// Its database.
    pub db: String,
    /// Its split.
    pub split: Split,
    /// The question.
    pub question: String,
    /// Its gold SQL.
    pub sql: String,
    /// The gold SQL's skeleton.
    pub skeleton: String,
    /// The tables its examples were ranked with.
    pub tables: Vec<String>,
    /// Examples in its pool.
    pub pool: usize,
    /// Of which with the same skeleton.
    pub matching: usize,
    /// The rank (from 1) of the first same-skeleton example, when the ranking has one.
    pub first_hit: Option<usize>,
    /// The first examples of the ranking (as many as the largest k).
    pub top: Vec<RankedExample>,
}

impl ExampleResult {
    /// Whether a same-skeleton example is among the first `k`.
    pub fn hit_at(&self, k: usize) -> bool {
        self.first_hit.is_some_and(|r| r <= k)
    }

    /// Whether the first `SHOWN` examples miss though the pool has a same-skeleton example.
    pub fn is_miss(&self) -> bool {
        self.matching > 0 && !self.hit_at(SHOWN)
    }
}

/// The figures of a set of questions (a split or a database).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HitFigures {
    /// `tune`, `heldout` or `all`; or the database's name.
    pub name: String,
    /// The split (for a database, its own; for `all`, none).
    pub split: Option<Split>,
    /// Questions measured.
    pub questions: usize,
    /// Questions whose pool has a same-skeleton example (the ceiling of hit@k).
    pub with_match: usize,
    /// Its share of the questions.
    pub ceiling: f64,
    /// Questions with a same-skeleton example in the top k, for each k of [`HIT_AT`].
    pub hits: Vec<usize>,
    /// Their share of the questions: hit@1, hit@3, hit@5.
    pub hit_at: Vec<f64>,
    /// The share a random pick of 3 examples from each pool would hit (the expectation).
    pub chance_at_3: f64,
}

impl HitFigures {
    fn of(name: &str, split: Option<Split>, results: &[&ExampleResult]) -> Self {
        let questions = results.len();
        let share = |n: f64| {
            if questions == 0 {
                0.0
            } else {
                n / questions as f64
            }
        };
        let with_match = results.iter().filter(|r| r.matching > 0).count();
        let hits: Vec<usize> = HIT_AT
            .iter()
            .map(|&k| results.iter().filter(|r| r.hit_at(k)).count())
            .collect();
        let chance: f64 = results
            .iter()
            .map(|r| chance_hit(r.pool, r.matching, 3))
            .sum();
        Self {
            name: name.to_owned(),
            split,
            questions,
            with_match,
            ceiling: share(with_match as f64),
            hit_at: hits.iter().map(|&h| share(h as f64)).collect(),
            hits,
            chance_at_3: share(chance),
        }
    }
}

/// The chance that `k` examples drawn at random from a pool of `pool`, `matching` of which match, hold one.
fn chance_hit(pool: usize, matching: usize, k: usize) -> f64 {
    if matching == 0 {
        return 0.0;
    }
    let others = pool.saturating_sub(matching);
    let mut miss = 1.0;
    for i in 0..k.min(pool) {
        if others <= i {
            return 1.0;
        }
        miss *= (others - i) as f64 / (pool - i) as f64;
    }
    1.0 - miss
}

/// The benchmark's outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExamplesReport {
    /// Per split: `tune`, `heldout`, then `all` (only the splits the questions have; `all` when they are two).
    pub splits: Vec<HitFigures>,
    /// Per database, in name order.
    pub databases: Vec<HitFigures>,
    /// Every question's outcome, in the questions' order.
    pub results: Vec<ExampleResult>,
}

impl ExamplesReport {
    /// The questions whose first `SHOWN` examples miss though their pool has a same-skeleton example.
    pub fn misses(&self) -> impl Iterator<Item = &ExampleResult> {
        self.results.iter().filter(|r| r.is_miss())
    }
}

/// Measures the ranking on `questions`: for each, its database's other questions as the pool, ranked by
/// [`ExampleIndex`] with the first [`TABLES_RANKED`] tables its catalog's context ranks (`databases`; a
/// database missing there ranks with no table, its SQL read as SQLite). `progress` is called after each
/// question.
pub fn measure_examples(
    questions: &[ExampleQuestion],
    databases: &BTreeMap<String, ExampleDb>,
    progress: &dyn Fn(),
) -> ExamplesReport {
    let skeletons: Vec<String> = questions.iter().map(|q| sql_skeleton(&q.sql)).collect();
    let normal: Vec<String> = questions.iter().map(|q| normalized_sql(&q.sql)).collect();
    let mut by_db: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, q) in questions.iter().enumerate() {
        by_db.entry(q.db.as_str()).or_default().push(i);
    }
    let depth = HIT_AT.iter().copied().max().unwrap_or(SHOWN);
    let mut results: Vec<Option<ExampleResult>> = vec![None; questions.len()];
    for (db, members) in &by_db {
        let info = databases.get(*db);
        let guard = Guard::new(info.map_or(Dialect::Sqlite, |d| d.dialect));
        let context = info.and_then(|d| d.catalog.as_ref()).map(ContextIndex::new);
        for &qi in members {
            let Some(q) = questions.get(qi) else { continue };
            let pool_ids: Vec<usize> = members
                .iter()
                .copied()
                .filter(|&j| j != qi && normal[j] != normal[qi])
                .collect();
            let pool: Vec<Example> = pool_ids
                .iter()
                .map(|&j| Example {
                    question: questions[j].question.clone(),
                    sql: questions[j].sql.clone(),
                })
                .collect();
            let tables: Vec<&str> = context
                .as_ref()
                .map(|c| {
                    c.ranking(&q.question)
                        .into_iter()
                        .take(TABLES_RANKED)
                        .collect()
                })
                .unwrap_or_default();
            let index = ExampleIndex::new(&pool, &guard);
            let ranked = index.ranked(&q.question, &tables);
            let same = |j: usize| skeletons[j] == skeletons[qi];
            let first_hit = ranked
                .iter()
                .position(|&(p, _)| pool_ids.get(p).is_some_and(|&j| same(j)))
                .map(|r| r + 1);
            let top = ranked
                .iter()
                .take(depth)
                .filter_map(|&(p, score)| {
                    let j = *pool_ids.get(p)?;
                    Some(RankedExample {
                        id: questions[j].id.clone(),
                        question: questions[j].question.clone(),
                        sql: questions[j].sql.clone(),
                        score,
                        same_skeleton: same(j),
                    })
                })
                .collect();
            results[qi] = Some(ExampleResult {
                id: q.id.clone(),
                db: q.db.clone(),
                split: q.split,
                question: q.question.clone(),
                sql: q.sql.clone(),
                skeleton: skeletons[qi].clone(),
                tables: tables.iter().map(|t| (*t).to_owned()).collect(),
                pool: pool_ids.len(),
                matching: pool_ids.iter().filter(|&&j| same(j)).count(),
                first_hit,
                top,
            });
            progress();
        }
    }
    let results: Vec<ExampleResult> = results.into_iter().flatten().collect();
    let mut splits = Vec::new();
    for split in [Split::Tune, Split::Heldout] {
        let of: Vec<&ExampleResult> = results.iter().filter(|r| r.split == split).collect();
        if !of.is_empty() {
            splits.push(HitFigures::of(split.name(), Some(split), &of));
        }
    }
    if splits.len() > 1 {
        let all: Vec<&ExampleResult> = results.iter().collect();
        splits.push(HitFigures::of("all", None, &all));
    }
    let databases = by_db
        .keys()
        .map(|db| {
            let of: Vec<&ExampleResult> = results.iter().filter(|r| r.db == *db).collect();
            HitFigures::of(db, Some(example_split(db)), &of)
        })
        .collect();
    ExamplesReport {
        splits,
        databases,
        results,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chance_is_the_hypergeometric_complement() {
        assert_eq!(chance_hit(10, 0, 3), 0.0);
        assert!((chance_hit(10, 1, 3) - 0.3).abs() < 1e-12);
        assert!((chance_hit(4, 2, 3) - 1.0).abs() < 1e-12);
        assert!((chance_hit(2, 1, 3) - 1.0).abs() < 1e-12);
        // 1 - (8/10)(7/9)(6/8)
        assert!((chance_hit(10, 2, 3) - (1.0 - 8.0 / 10.0 * 7.0 / 9.0 * 6.0 / 8.0)).abs() < 1e-12);
    }
}
