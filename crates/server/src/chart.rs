//! Charts for numeric results, rendered on the server as SVG.

use serde::Serialize;
use serde_json::Value;

/// A chart's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChartKind {
    /// Bars.
    Bar,
    /// A line.
    Line,
}

/// A rendered chart.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Chart {
    /// Its kind.
    pub kind: ChartKind,
    /// The SVG document.
    pub svg: String,
}

/// The chart of a result, when it has numbers to chart.
pub fn chart(_columns: &[String], _rows: &[Vec<Value>], _kind: Option<ChartKind>) -> Option<Chart> {
    None
}
