//! What `steward eval` shows at its end: a table on standard output (or JSON), the questions whose gold SQL
//! failed, and with `--report DIR` the Markdown, JSON, SVG chart and verdicts of the run.

use std::io::Write as _;
use std::path::Path;

use anyhow::Context as _;
use serde_json::{Value, json};
use steward_eval::{Semantics, Summary, Tally, Verdict};

use crate::out::{note, say};
use crate::style::Style;

/// What the figures are of.
pub(super) struct Header {
    /// The data set's file.
    pub(super) dataset: String,
    /// How it was scored.
    pub(super) semantics: Semantics,
    /// The verdict log.
    pub(super) results: String,
    /// The predictions file, or the agent and model.
    pub(super) answered_by: String,
}

/// The summary as JSON: `total`, `correct`, `accuracy`, `by_tag` (each `total`, `correct`, `accuracy`), the
/// rest of [`Summary`], and what was scored.
pub(super) fn json(summary: &Summary, header: &Header) -> Value {
    let mut value = serde_json::to_value(summary).unwrap_or_else(|_| json!({}));
    if let Value::Object(map) = &mut value {
        map.insert("dataset".to_owned(), json!(header.dataset));
        map.insert("answered_by".to_owned(), json!(header.answered_by));
        map.insert("semantics".to_owned(), json!(header.semantics.name()));
        map.insert("results".to_owned(), json!(header.results));
    }
    value
}

fn percent(t: &Tally) -> String {
    format!("{:.1} %", t.accuracy * 100.0)
}

/// The table: overall, by difficulty and by tag; then errors, latency and, when a model ran, its calls,
/// tokens and cost.
pub(super) fn table(summary: &Summary, header: &Header) {
    say!(
        "{} · {} · {} semantics",
        header.dataset,
        header.answered_by,
        header.semantics
    );
    say!();
    let overall = Tally {
        total: summary.total,
        correct: summary.correct,
        accuracy: summary.accuracy,
    };
    let row = |name: String, t: &Tally| {
        vec![name, t.total.to_string(), t.correct.to_string(), percent(t)]
    };
    let mut rows = vec![row("overall".to_owned(), &overall)];
    for (name, t) in summary.difficulties() {
        rows.push(row(format!("difficulty: {name}"), &t));
    }
    for (name, t) in &summary.by_tag {
        rows.push(row(format!("tag: {name}"), t));
    }
    crate::out::aligned(&["", "questions", "correct", "accuracy"], &rows);
    say!();
    say!(
        "prediction errors: {} (the SQL failed, could not be scored, or there was none)",
        summary.errors
    );
    if summary.gold_errors > 0 {
        say!(
            "gold SQL failed: {} (faults of the data set, listed on standard error; counted as wrong, not as \
             prediction errors)",
            summary.gold_errors
        );
    }
    let l = &summary.latency;
    say!(
        "latency: mean {:.0} ms, median {} ms, p95 {} ms, max {} ms",
        l.mean_ms,
        l.p50_ms,
        l.p95_ms,
        l.max_ms
    );
    if summary.model_calls > 0 && summary.total > 0 {
        let n = summary.total as f64;
        say!(
            "model calls: {} ({:.1} per question) · tokens: {} ({:.0} per question)",
            summary.model_calls,
            summary.model_calls as f64 / n,
            summary.tokens,
            summary.tokens as f64 / n
        );
        match summary.cost_usd {
            Some(cost) => say!("cost: ${cost:.4} (${:.5} per question)", cost / n),
            None => say!("cost: unknown (no price for the model: see --prices)"),
        }
    }
}

/// Says on standard error which questions' gold SQL failed: faults of the data set, to be fixed there.
pub(super) fn gold_faults(verdicts: &[Verdict]) {
    let faults: Vec<&Verdict> = verdicts.iter().filter(|v| v.gold_error.is_some()).collect();
    if faults.is_empty() {
        return;
    }
    let style = Style::stderr();
    note!(
        "{}",
        style.warn(&format!(
            "{} questions could not be scored fairly: their gold SQL failed (fix the data set, or check --db):",
            faults.len()
        ))
    );
    for v in faults.iter().take(20) {
        note!("  {}: {}", v.id, v.gold_error.as_deref().unwrap_or(""));
    }
    if faults.len() > 20 {
        note!("  … and {} more (see the verdict log)", faults.len() - 20);
    }
}

/// Writes `summary.md`, `summary.json`, `chart.svg` and `verdicts.jsonl` (the run's verdicts in data set
/// order) into `dir`.
pub(super) fn write(
    dir: &Path,
    summary: &Summary,
    header: &Header,
    verdicts: &[Verdict],
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the report folder {}", dir.display()))?;
    let file = |name: &str, bytes: &[u8]| -> anyhow::Result<()> {
        let path = dir.join(name);
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))
    };
    let mut markdown = format!(
        "# steward eval\n\n{} · {} · {} semantics\n\n",
        header.dataset, header.answered_by, header.semantics
    );
    markdown.push_str(&summary.to_markdown());
    let faults: Vec<&Verdict> = verdicts.iter().filter(|v| v.gold_error.is_some()).collect();
    if !faults.is_empty() {
        markdown.push_str(
            "\n## Gold SQL that failed\n\nFaults of the data set: these questions count as wrong.\n\n",
        );
        for v in faults {
            markdown.push_str(&format!(
                "- `{}`: {}\n",
                v.id,
                v.gold_error.as_deref().unwrap_or("").replace('\n', " ")
            ));
        }
    }
    file("summary.md", markdown.as_bytes())?;
    file(
        "summary.json",
        serde_json::to_string_pretty(&json(summary, header))?.as_bytes(),
    )?;
    file("chart.svg", summary.to_svg().as_bytes())?;
    let mut lines = Vec::new();
    for v in verdicts {
        serde_json::to_writer(&mut lines, v)?;
        lines.write_all(b"\n")?;
    }
    file("verdicts.jsonl", &lines)
}

/// `--misses`: each question answered wrong, with the gold and predicted SQL and the first row of each
/// result (on standard output, after the figures).
pub(super) fn misses(dataset: &steward_eval::Dataset, verdicts: &[Verdict]) {
    let row = |r: &Option<Vec<serde_json::Value>>| match r {
        Some(cells) => serde_json::to_string(cells).unwrap_or_default(),
        None => "(no row)".to_owned(),
    };
    let wrong: Vec<&Verdict> = verdicts.iter().filter(|v| !v.correct).collect();
    crate::out::say!("\n{} wrong:", wrong.len());
    for v in wrong {
        let gold = dataset
            .items
            .iter()
            .find(|i| i.id == v.id)
            .map(|i| i.gold.join("\n           or "))
            .unwrap_or_default();
        crate::out::say!("\n[{}] {}", v.id, v.question);
        crate::out::say!("  gold:      {gold}");
        crate::out::say!(
            "  predicted: {}",
            v.predicted_sql.as_deref().unwrap_or("(none)")
        );
        crate::out::say!("  gold row:      {}", row(&v.gold_first_row));
        match v.error.as_deref().or(v.gold_error.as_deref()) {
            Some(error) => crate::out::say!("  predicted row: (failed) {error}"),
            None => crate::out::say!("  predicted row: {}", row(&v.first_row)),
        }
    }
}
