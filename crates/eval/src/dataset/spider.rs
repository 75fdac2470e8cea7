//! Spider's and BIRD's JSON question files.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::{Format, Item};
use crate::error::EvalError;

/// A Spider question (`dev.json`); other keys (`query_toks`, `sql`, …) are ignored.
#[derive(Deserialize)]
struct SpiderQuestion {
    db_id: String,
    question: String,
    query: String,
}

/// A BIRD question (`dev.json`, `mini_dev_sqlite.json`, `mini_dev_postgresql.json`, `mini_dev_mysql.json`).
#[derive(Deserialize)]
struct BirdQuestion {
    #[serde(default)]
    question_id: Option<Value>,
    db_id: String,
    question: String,
    #[serde(default)]
    evidence: Option<String>,
    #[serde(rename = "SQL")]
    sql: String,
    #[serde(default)]
    difficulty: Option<String>,
}

fn read(path: &Path) -> Result<String, EvalError> {
    std::fs::read_to_string(path).map_err(|e| EvalError::io(path, e))
}

fn parse<T: for<'de> Deserialize<'de>>(path: &Path, text: &str) -> Result<Vec<T>, EvalError> {
    serde_json::from_str(text).map_err(|e| {
        EvalError::malformed(
            path,
            Some(e.line() as u64),
            format!("not a list of questions: {e}"),
        )
    })
}

/// Spider's questions; ids are positions from 0.
pub(super) fn load_spider(path: &Path) -> Result<Vec<Item>, EvalError> {
    let questions: Vec<SpiderQuestion> = parse(path, &read(path)?)?;
    questions
        .into_iter()
        .enumerate()
        .map(|(i, q)| {
            if q.query.trim().is_empty() {
                return Err(EvalError::malformed(
                    path,
                    None,
                    format!("question {i}: the field `query` is empty"),
                ));
            }
            Ok(Item {
                id: i.to_string(),
                question: q.question,
                gold: vec![q.query],
                gold_text: None,
                expected_answer: None,
                db: q.db_id,
                tags: Vec::new(),
                difficulty: None,
                evidence: None,
            })
        })
        .collect()
}

/// BIRD's questions; ids are `question_id`, or positions from 0 when a file has none.
pub(super) fn load_bird(path: &Path) -> Result<Vec<Item>, EvalError> {
    let questions: Vec<BirdQuestion> = parse(path, &read(path)?)?;
    questions
        .into_iter()
        .enumerate()
        .map(|(i, q)| {
            if q.sql.trim().is_empty() {
                return Err(EvalError::malformed(
                    path,
                    None,
                    format!("question {i}: the field `SQL` is empty"),
                ));
            }
            let id = match q.question_id {
                Some(Value::String(s)) => s,
                Some(Value::Number(n)) => n.to_string(),
                _ => i.to_string(),
            };
            Ok(Item {
                id,
                question: q.question,
                gold: vec![q.sql],
                gold_text: None,
                expected_answer: None,
                db: q.db_id,
                tags: Vec::new(),
                difficulty: q.difficulty.filter(|d| !d.trim().is_empty()),
                evidence: q.evidence.filter(|e| !e.trim().is_empty()),
            })
        })
        .collect()
}

/// Spider or BIRD, by the keys of the file's first question.
pub(super) fn guess_json(path: &Path) -> Result<Format, EvalError> {
    let value: Value = serde_json::from_str(&read(path)?)
        .map_err(|e| EvalError::malformed(path, Some(e.line() as u64), format!("not JSON: {e}")))?;
    let first = value
        .as_array()
        .and_then(|a| a.first())
        .and_then(Value::as_object);
    let Some(first) = first else {
        return Err(EvalError::Format(format!(
            "{} is not a list of questions; Spider and BIRD files are JSON lists",
            path.display()
        )));
    };
    if first.contains_key("SQL") {
        Ok(Format::Bird)
    } else if first.contains_key("query") && first.contains_key("db_id") {
        Ok(Format::Spider)
    } else {
        Err(EvalError::Format(format!(
            "cannot tell the format of {}: its questions have neither `SQL` (BIRD) nor `query` and `db_id` (Spider)",
            path.display()
        )))
    }
}
