//! The rows of a query: its columns, its cells as JSON values, whether it was cut short, and the text forms
//! people and models read.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A result column.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultColumn {
    /// Its name.
    pub name: String,
    /// The engine's type name.
    pub type_name: String,
}

/// The rows of a query.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueryResult {
    /// The columns.
    pub columns: Vec<ResultColumn>,
    /// The rows, each cell a JSON value (exact decimals as strings).
    pub rows: Vec<Vec<Value>>,
    /// True when more rows existed than were returned, or a cell was cut to the byte cap.
    pub truncated: bool,
}

/// Longest cell shown to the model, in characters.
const MAX_CELL: usize = 200;

impl QueryResult {
    /// The rows as a compact text table for a model.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let names: Vec<&str> = self.columns.iter().map(|c| c.name.as_str()).collect();
        out.push_str(&names.join(" | "));
        for row in &self.rows {
            out.push('\n');
            let cells: Vec<String> = row.iter().map(|v| short(&cell_text(v))).collect();
            out.push_str(&cells.join(" | "));
        }
        let n = self.rows.len();
        out.push_str(&if self.truncated {
            format!("\n({n} rows shown; more exist: add filters, aggregate, or ask for fewer rows)")
        } else {
            format!("\n({n} row{})", if n == 1 { "" } else { "s" })
        });
        out
    }
}

fn short(text: &str) -> String {
    let flat = text.replace(['\n', '\r'], " ");
    if flat.chars().count() <= MAX_CELL {
        flat
    } else {
        let head: String = flat.chars().take(MAX_CELL).collect();
        format!("{head}…")
    }
}

/// A cell as text for people and models: strings as they are, NULL as `NULL`, the rest as JSON.
pub fn cell_text(value: &Value) -> String {
    match value {
        Value::Null => "NULL".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
