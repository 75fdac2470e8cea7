//! # steward-eval
//!
//! How well does a text-to-SQL system answer? Load a data set — Spider, BIRD, defog sql-eval or Steward's
//! own YAML ([`Dataset`]) —, score predicted SQL by executing it next to the gold SQL and comparing the rows
//! the way each benchmark's official scorer does ([`Semantics`], [`matches()`]), log one [`Verdict`] per
//! question as it comes ([`VerdictLog`], resumable), and sum a run up ([`Summary`]: Markdown and SVG).
//!
//! Scoring a predictions file (one SQL per line, as the official scripts take it):
//!
//! ```no_run
//! use std::path::Path;
//! use steward_eval::{Dataset, ScoreOptions, Scorer, Summary, VerdictLog, finished_ids, read_predictions, read_verdicts};
//!
//! # async fn run() -> Result<(), steward_eval::EvalError> {
//! let dataset = Dataset::load(Path::new("testdata/spider-slice"), None)?; // format guessed: Spider
//! let predictions = read_predictions(Path::new("pred.sql"), dataset.items.len())?;
//! let log_path = Path::new("verdicts.jsonl");
//! let done = finished_ids(log_path)?; // resume: skip what an earlier run finished
//! let mut log = VerdictLog::open(log_path)?;
//! let mut scorer = Scorer::new(ScoreOptions::new(dataset.semantics));
//! for (item, sql) in dataset.items.iter().zip(&predictions) {
//!     if !done.contains(&item.id) {
//!         let verdict = scorer.score(&dataset, item, sql, None).await?;
//!         log.append(&verdict)?;
//!     }
//! }
//! let summary = Summary::of(&read_verdicts(log_path)?);
//! println!("{}", summary.to_markdown());
//! std::fs::write("report.svg", summary.to_svg()).ok();
//! # Ok(()) }
//! ```
//!
//! A model run builds its verdicts itself: [`Verdict::for_item`], then its SQL scored with
//! [`score_item_with`] (or, for a structured query whose values were bound as parameters, the rows it
//! returned with [`score_result_with`]) and the model's attempts, calls, tokens, latency and cost filled in.
//! `steward eval` does this for Steward's agents.
//!
//! The guard benchmark ([`run_guard_bench`]) is the other side of an agent's SQL: the attack corpus of
//! `testdata/guard`, by class, run on a real engine through the guard and judged by its effect, and the
//! legitimate reads the guard must not refuse (`steward eval guard`).
//!
//! `spider`, `bird` and `defog` give the official scorer's verdict, quirks included; each rule is written
//! next to its code (see [`Semantics`] and the `score` module's files: `spider`, `defog`, `py`, and
//! [`ScoreOptions::prepare`] for the texts). The few places where the official cannot be followed (it
//! crashes, or Steward does not see what its driver sees) are listed in `docs/eval.md`. Steward's own,
//! forgiving rules are [`Semantics::Steward`], never printed under an official name.

mod dataset;
mod error;
mod examples;
mod guard;
mod predict;
mod results;
mod retrieval;
mod score;
mod scorer;
mod sqltext;
mod summary;
mod svg;

pub use dataset::{Dataset, Format, Item};
pub use error::EvalError;
pub use examples::{
    ExampleDb, ExampleQuestion, ExampleResult, ExamplesReport, HELDOUT_MODULUS, HIT_AT, HitFigures,
    RankedExample, TABLES_RANKED, example_questions, example_split, gold_dialect, measure_examples,
    normalized_sql, sql_skeleton,
};
pub use guard::{
    AttackOutcome, AttackResult, AttackTally, Effect, GuardCase, GuardCorpus, GuardEngine,
    GuardReport, PassTally, ReadOutcome, ReadResult, ReadTally, run_guard_bench,
};
pub use predict::{ScoreOptions, read_predictions, score_item, score_item_with, score_result_with};
pub use results::{Verdict, VerdictLog, content_key, finished_ids, is_current, read_verdicts};
pub use retrieval::{
    Benchmark, BudgetFigures, Miss, RetrievalQuestion, RetrievalReport, RetrievalSpec, SourceKind,
    SourceSpec, Split, SplitFigures, build_benchmark, defog_sqlite, measure, measure_with,
};
pub use score::{Comparison, MatchContext, Rows, Semantics, answer_matches, compare, matches};
pub use scorer::Scorer;
pub use sqltext::remove_distinct;
pub use summary::{Latency, Summary, Tally};
