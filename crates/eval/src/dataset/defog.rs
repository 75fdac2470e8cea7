//! defog sql-eval's question CSV: `question`, `query`, `db_name`, and optionally `query_category` (a tag)
//! and `instructions` (the hint); other columns are ignored. A `query` holds one or more acceptable answers
//! separated by `;` and may offer column alternatives as `{a, b}` (see `sqltext::expand_alternatives`):
//! each item's `gold` lists every concrete query, in the official order.

use std::path::Path;

use super::Item;
use crate::error::EvalError;
use crate::sqltext::{expand_alternatives, split_statements};

/// The questions of a defog CSV; ids are positions from 0.
pub(super) fn load(path: &Path) -> Result<Vec<Item>, EvalError> {
    let file = std::fs::File::open(path).map_err(|e| EvalError::io(path, e))?;
    let mut reader = csv::ReaderBuilder::new().flexible(false).from_reader(file);
    let headers = reader
        .headers()
        .map_err(|e| EvalError::malformed(path, Some(1), format!("cannot read the header: {e}")))?
        .clone();
    let column = |name: &str| headers.iter().position(|h| h.trim() == name);
    let required = |name: &str| {
        column(name).ok_or_else(|| {
            EvalError::malformed(
                path,
                Some(1),
                format!(
                    "no `{name}` column (defog question files have question, query and db_name; this one has {})",
                    headers.iter().collect::<Vec<_>>().join(", ")
                ),
            )
        })
    };
    let (question, query, db_name) = (
        required("question")?,
        required("query")?,
        required("db_name")?,
    );
    let (category, instructions) = (column("query_category"), column("instructions"));
    let mut items = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let record = record.map_err(|e| {
            let line = e.position().map(|p| p.line());
            EvalError::malformed(path, line, format!("question {i}: {e}"))
        })?;
        let line = record.position().map(|p| p.line());
        let field = |c: usize| record.get(c).unwrap_or("").trim().to_owned();
        let optional = |c: Option<usize>| c.map(field).filter(|s| !s.is_empty());
        let gold_text = field(query);
        let mut gold: Vec<String> = Vec::new();
        for statement in split_statements(&gold_text) {
            for alternative in expand_alternatives(&statement) {
                if !gold.contains(&alternative) {
                    gold.push(alternative);
                }
            }
        }
        if gold.is_empty() {
            return Err(EvalError::malformed(
                path,
                line,
                format!("question {i}: the `query` field holds no SQL"),
            ));
        }
        let db = field(db_name);
        if db.is_empty() {
            return Err(EvalError::malformed(
                path,
                line,
                format!("question {i}: the `db_name` field is empty"),
            ));
        }
        items.push(Item {
            id: i.to_string(),
            question: field(question),
            gold,
            gold_text: Some(gold_text),
            expected_answer: None,
            db,
            tags: optional(category).into_iter().collect(),
            difficulty: None,
            evidence: optional(instructions),
        });
    }
    Ok(items)
}
