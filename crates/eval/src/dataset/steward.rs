//! Steward's own question files (YAML):
//!
//! ```yaml
//! name: demo                     # optional
//! description: …                 # optional
//! database: demo                 # default database of every question: a name, a URL or a SQLite file
//! semantics: steward             # optional: spider, bird, defog or steward (default: steward)
//! questions:
//!   - id: lookup-1               # unique
//!     question: Where is order QZKDLWPRTM?
//!     sql: SELECT …              # the gold SQL, or a list of acceptable alternatives
//!     answer: Leipzig hub        # optional: the expected answer (instead of, or besides, sql)
//!     tags: [lookup]
//!     difficulty: easy
//!     evidence: …                # optional hint
//!     database: …                # optional: this question's database
//! ```
//!
//! Unknown keys are refused, so that a misspelt `sq1:` is an error rather than a question without gold.

use std::path::Path;

use serde::Deserialize;

use super::Item;
use crate::error::EvalError;
use crate::score::Semantics;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    #[allow(dead_code)]
    name: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    description: Option<String>,
    #[serde(default)]
    database: Option<String>,
    #[serde(default)]
    semantics: Option<String>,
    questions: Vec<Question>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Question {
    id: Scalar,
    question: String,
    #[serde(default)]
    sql: Option<OneOrMany>,
    #[serde(default)]
    answer: Option<Scalar>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    difficulty: Option<String>,
    #[serde(default)]
    evidence: Option<String>,
    #[serde(default)]
    database: Option<String>,
}

/// A YAML scalar read as text: `answer: 42` and `answer: "42"` are the same answer.
#[derive(Deserialize)]
#[serde(untagged)]
enum Scalar {
    Text(String),
    Integer(i64),
    Float(f64),
    Bool(bool),
}

impl Scalar {
    fn text(self) -> String {
        match self {
            Scalar::Text(s) => s,
            Scalar::Integer(i) => i.to_string(),
            Scalar::Float(x) => x.to_string(),
            Scalar::Bool(b) => b.to_string(),
        }
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// What a Steward file holds.
pub(super) struct Loaded {
    pub(super) items: Vec<Item>,
    pub(super) semantics: Option<Semantics>,
}

pub(super) fn load(path: &Path) -> Result<Loaded, EvalError> {
    let text = std::fs::read_to_string(path).map_err(|e| EvalError::io(path, e))?;
    let file: File = serde_yaml::from_str(&text).map_err(|e| {
        let line = e.location().map(|l| l.line() as u64);
        EvalError::malformed(path, line, e.to_string())
    })?;
    let semantics = file
        .semantics
        .as_deref()
        .map(|s| s.parse::<Semantics>())
        .transpose()
        .map_err(|e| EvalError::malformed(path, None, format!("`semantics`: {e}")))?;
    let default_db = file.database.unwrap_or_default();
    let mut items = Vec::with_capacity(file.questions.len());
    for (i, q) in file.questions.into_iter().enumerate() {
        let id = q.id.text();
        let at = |what: &str| {
            EvalError::malformed(
                path,
                None,
                format!("question {} (id `{id}`): {what}", i + 1),
            )
        };
        let gold: Vec<String> = match q.sql {
            None => Vec::new(),
            Some(OneOrMany::One(s)) => vec![s],
            Some(OneOrMany::Many(v)) => v,
        }
        .into_iter()
        .map(|s| s.trim().trim_end_matches(';').trim().to_owned())
        .collect();
        if gold.iter().any(String::is_empty) {
            return Err(at("an empty `sql`"));
        }
        let answer = q.answer.map(Scalar::text);
        if gold.is_empty() && answer.is_none() {
            return Err(at(
                "needs `sql` (the gold query) or `answer` (the expected answer)",
            ));
        }
        if id.trim().is_empty() || q.question.trim().is_empty() {
            return Err(at("`id` and `question` must not be empty"));
        }
        items.push(Item {
            id,
            question: q.question.trim().to_owned(),
            gold,
            gold_text: None,
            expected_answer: answer,
            db: q.database.unwrap_or_else(|| default_db.clone()),
            tags: q.tags,
            difficulty: q.difficulty,
            evidence: q.evidence,
        });
    }
    Ok(Loaded { items, semantics })
}
