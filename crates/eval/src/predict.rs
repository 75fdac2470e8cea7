//! Scoring SQL that is already written: a predictions file (one query per question, as the official scripts
//! take it), or one query for one question.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;
use steward_sql::{Database, QueryLimits};

use crate::dataset::Item;
use crate::error::EvalError;
use crate::results::Verdict;
use crate::score::{Comparison, MatchContext, Rows, Semantics, answer_matches, compare};
use crate::sqltext::{
    python_one_statement, remove_distinct, replace_cur_year, spider_postprocess,
    sqlparse_first_statement,
};

/// The predicted queries of a file, one per question in data set order; there must be exactly `n_items`.
///
/// - A text file has one query per line. A tab ends the query: Spider's gold files (`SQL\tdb_id`) and
///   BIRD's (`SQL\t----- bird -----\tdb_id`) read as predictions too, as the official Spider script takes
///   the first tab-separated field. Trailing empty lines are ignored; an empty line elsewhere is a question
///   without a prediction (scored wrong).
/// - A `.json` file is BIRD's predictions object (`{"0": "SQL\t----- bird -----\tdb_id", …}`, keys from 0)
///   or a list of strings.
pub fn read_predictions(path: &Path, n_items: usize) -> Result<Vec<String>, EvalError> {
    let text = std::fs::read_to_string(path).map_err(|e| EvalError::io(path, e))?;
    let json = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let predictions = if json {
        from_json(path, &text, n_items)?
    } else {
        let mut lines: Vec<&str> = text.lines().collect();
        while lines.last().is_some_and(|l| l.trim().is_empty()) {
            lines.pop();
        }
        lines.into_iter().map(first_field).collect()
    };
    if predictions.len() != n_items {
        return Err(EvalError::malformed(
            path,
            None,
            format!(
                "{} predictions for {n_items} questions; give one query per question, in the data set's order",
                predictions.len()
            ),
        ));
    }
    Ok(predictions)
}

/// The query before the first tab, trimmed.
fn first_field(line: &str) -> String {
    line.split('\t').next().unwrap_or("").trim().to_owned()
}

fn from_json(path: &Path, text: &str, n_items: usize) -> Result<Vec<String>, EvalError> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| EvalError::malformed(path, Some(e.line() as u64), format!("not JSON: {e}")))?;
    let as_text = |key: &str, v: &Value| match v {
        Value::String(s) => Ok(first_field(s)),
        Value::Null => Ok(String::new()),
        _ => Err(EvalError::malformed(
            path,
            None,
            format!("prediction {key} is not a string"),
        )),
    };
    match value {
        Value::Array(list) => list
            .iter()
            .enumerate()
            .map(|(i, v)| as_text(&i.to_string(), v))
            .collect(),
        Value::Object(map) => (0..n_items.max(map.len()))
            .map(|i| {
                let key = i.to_string();
                map.get(&key).map_or_else(
                    || {
                        Err(EvalError::malformed(
                            path,
                            None,
                            format!(
                                "no prediction for question {key}; keys run from 0 to {}",
                                n_items.saturating_sub(1)
                            ),
                        ))
                    },
                    |v| as_text(&key, v),
                )
            })
            .collect(),
        _ => Err(EvalError::malformed(
            path,
            None,
            "expected an object of predictions by question number, or a list",
        )),
    }
}

/// How to score: the semantics, the Spider scorer's `--keep_distinct`, and the limits each query runs
/// under.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct ScoreOptions {
    /// Whose idea of "the same result" applies.
    pub semantics: Semantics,
    /// Spider only: run both queries as written. By default `DISTINCT` is removed from both, as the official
    /// Spider scorer does unless given `--keep_distinct`.
    pub keep_distinct: bool,
    /// The row cap, byte cap and time limit of every query. A result that passes a cap cannot be scored:
    /// "too many rows to score".
    pub limits: QueryLimits,
}

impl ScoreOptions {
    /// The options of `semantics`: DISTINCT removed (Spider), up to 100,000 rows and 256 MiB per result,
    /// and the official scorer's time limit (Spider 60 s, BIRD 30 s, defog 10 s).
    pub fn new(semantics: Semantics) -> Self {
        let seconds = match semantics {
            Semantics::Spider => 60,
            Semantics::Bird => 30,
            Semantics::Defog => 10,
            Semantics::Steward => 30,
        };
        Self {
            semantics,
            keep_distinct: false,
            limits: QueryLimits {
                max_rows: 100_000,
                max_bytes: 256 << 20,
                timeout: Duration::from_secs(seconds),
            },
        }
    }

    /// The same with `keep_distinct` set.
    pub fn with_keep_distinct(mut self, keep: bool) -> Self {
        self.keep_distinct = keep;
        self
    }

    /// The same with other limits.
    pub fn with_limits(mut self, limits: QueryLimits) -> Self {
        self.limits = limits;
        self
    }

    /// What the verdicts depend on besides the data and the SQL: the semantics and `keep_distinct`
    /// (`spider`, `spider+keep_distinct`, `bird`, …). Logged with each verdict.
    pub fn label(&self) -> String {
        if self.keep_distinct && self.semantics == Semantics::Spider {
            format!("{}+keep_distinct", self.semantics)
        } else {
            self.semantics.to_string()
        }
    }

    /// A gold query as the official scorer runs it. Spider (`exec_eval.eval_exec_match`): `> =`, `< =`,
    /// `! =` joined; unless `keep_distinct`, `remove_distinct`, which also keeps only the first statement
    /// (`sqlparse.parse(s)[0]`); at execution `YEAR(CURDATE())` becomes `2020`. The others run it as
    /// written.
    pub fn prepare(&self, sql: &str) -> String {
        match self.semantics {
            Semantics::Spider => {
                let sql = spider_postprocess(sql);
                let sql = if self.keep_distinct {
                    sql
                } else {
                    remove_distinct(sqlparse_first_statement(&sql))
                };
                replace_cur_year(&sql)
            }
            _ => sql.to_owned(),
        }
    }

    /// A predicted query as the official scorer runs it: as [`ScoreOptions::prepare`], and for Spider
    /// first `evaluation.py`'s `p_str.replace("value", "1")` (every `value`, case-sensitive, wherever it
    /// stands, names and literals included).
    pub fn prepare_predicted(&self, sql: &str) -> String {
        match self.semantics {
            Semantics::Spider => self.prepare(&sql.replace("value", "1")),
            _ => self.prepare(sql),
        }
    }

    /// Whether the official scorer's driver would run the prepared text: Spider and BIRD execute with
    /// Python's `sqlite3`, which refuses anything but spaces and comments after the first statement
    /// (`SELECT 1;;` included).
    pub fn check(&self, prepared: &str) -> Result<(), String> {
        match self.semantics {
            Semantics::Spider | Semantics::Bird => python_one_statement(prepared),
            _ => Ok(()),
        }
    }
}

/// Scores `predicted_sql` for `item` on `db` with the default options of `semantics`
/// ([`ScoreOptions::new`]).
pub async fn score_item(
    item: &Item,
    predicted_sql: &str,
    db: &Database,
    semantics: Semantics,
) -> Verdict {
    score_item_with(item, predicted_sql, db, &ScoreOptions::new(semantics)).await
}

/// Scores `predicted_sql` for `item` on `db`: runs it read-only, then each gold alternative until one
/// matches. A prediction that fails is wrong, with its error; a gold query that fails is a fault of the data
/// set, reported in [`Verdict::gold_error`]. A question with only an expected answer is right when the
/// prediction's single row holds it. `latency_ms` is the predicted query's run time.
pub async fn score_item_with(
    item: &Item,
    predicted_sql: &str,
    db: &Database,
    options: &ScoreOptions,
) -> Verdict {
    let mut verdict = Verdict::for_item(item);
    verdict.predicted_sql = Some(predicted_sql.to_owned());
    verdict.scoring = Some(options.label());
    verdict.attempts = 1;
    if predicted_sql.trim().is_empty() {
        verdict.error = Some("no SQL was predicted".to_owned());
        return verdict;
    }
    let started = Instant::now();
    let prepared = options.prepare_predicted(predicted_sql);
    let predicted = match options.check(&prepared) {
        Ok(()) => run(db, &prepared, &options.limits).await,
        Err(e) => Err(e),
    };
    verdict.latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let predicted = match predicted {
        Ok(rows) => rows,
        Err(error) => {
            verdict.error = Some(error);
            return verdict;
        }
    };
    judge(&mut verdict, item, &predicted, db, options).await;
    verdict
}

/// Scores a result a prediction already produced, for a query that cannot simply be run again: an agent's
/// structured query whose values were bound as parameters (its `sql` then shows placeholders; it is kept in
/// the verdict as written). The gold is run and compared as in [`score_item_with`]; `predicted` is taken as
/// it is (the caller checks that it was not cut short). `latency_ms` is left at 0 for the caller.
pub async fn score_result_with(
    item: &Item,
    sql: &str,
    predicted: &Rows,
    db: &Database,
    options: &ScoreOptions,
) -> Verdict {
    let mut verdict = Verdict::for_item(item);
    verdict.predicted_sql = Some(sql.to_owned());
    verdict.scoring = Some(options.label());
    verdict.attempts = 1;
    judge(&mut verdict, item, predicted, db, options).await;
    verdict
}

/// Compares `predicted` with `item`'s gold (each alternative until one matches) or its expected answer, and
/// records the outcome in `verdict`.
async fn judge(
    verdict: &mut Verdict,
    item: &Item,
    predicted: &Rows,
    db: &Database,
    options: &ScoreOptions,
) {
    verdict.rows = Some(predicted.rows.len());
    verdict.first_row = predicted.rows.first().cloned();
    if item.gold.is_empty() {
        match &item.expected_answer {
            Some(answer) => verdict.correct = answer_matches(answer, predicted),
            None => {
                verdict.gold_error =
                    Some("the question has neither gold SQL nor an expected answer".to_owned())
            }
        }
        return;
    }
    let predicted_sql = verdict.predicted_sql.clone().unwrap_or_default();
    let joined = item.gold.join(";\n");
    let context = MatchContext {
        question: &item.question,
        category: item
            .tags
            .iter()
            .find(|t| t.as_str() == "order_by")
            .map(String::as_str),
        gold_text: item.gold_text.as_deref().unwrap_or(&joined),
        predicted_sql: &predicted_sql,
    };
    // defog goes on after a `subset_df` match, and any failure after it still fails the question.
    let defog = options.semantics == Semantics::Defog;
    let mut failures = Vec::new();
    for (k, gold_sql) in item.gold.iter().enumerate() {
        let gold_sql = options.prepare(gold_sql);
        let gold = match options.check(&gold_sql) {
            Ok(()) => run(db, &gold_sql, &options.limits).await,
            Err(e) => Err(e),
        };
        if let Ok(gold) = &gold
            && verdict.gold_first_row.is_none()
        {
            verdict.gold_first_row = gold.rows.first().cloned();
        }
        match gold {
            Ok(gold) => match compare(options.semantics, &gold, predicted, &gold_sql, &context) {
                Comparison::Same => {
                    verdict.correct = true;
                    break;
                }
                Comparison::Correct => {
                    verdict.correct = true;
                    if !defog {
                        break;
                    }
                }
                Comparison::Different => {}
                Comparison::Fails(why) => {
                    verdict.correct = false;
                    verdict.error = Some(format!("the official scorer fails here: {why}"));
                    break;
                }
            },
            Err(error) => {
                if item.gold.len() > 1 {
                    failures.push(format!("gold alternative {} failed: {error}", k + 1));
                } else {
                    failures.push(format!("the gold SQL failed: {error}"));
                }
                if defog {
                    verdict.correct = false;
                    break;
                }
            }
        }
    }
    if !verdict.correct && !failures.is_empty() {
        verdict.gold_error = Some(format!(
            "data set error in question {}: {}",
            item.id,
            failures.join("; ")
        ));
    }
}

/// Runs one query read-only; its rows, or why there are none to score.
pub(crate) async fn run(db: &Database, sql: &str, limits: &QueryLimits) -> Result<Rows, String> {
    match db.query_read_only(sql, &[], limits).await {
        Ok(result) if result.truncated => Err(format!(
            "too many rows to score: the result passes {} rows or {} bytes",
            limits.max_rows, limits.max_bytes
        )),
        Ok(result) => Ok(Rows::from(result)),
        Err(error) => Err(error.to_string()),
    }
}
