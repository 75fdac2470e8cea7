//! The figures of a run: accuracy overall, by tag and by difficulty, errors, latency, tokens and cost, as
//! numbers, a Markdown report and an SVG chart (in `svg`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::results::Verdict;

/// Questions and correct answers in one group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Tally {
    /// Questions.
    pub total: usize,
    /// Correct answers.
    pub correct: usize,
    /// `correct / total`, 0 when there are none.
    pub accuracy: f64,
}

impl Tally {
    fn add(&mut self, correct: bool) {
        self.total += 1;
        self.correct += usize::from(correct);
        self.accuracy = self.correct as f64 / self.total as f64;
    }
}

/// Latency figures, in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// The mean.
    pub mean_ms: f64,
    /// The median.
    pub p50_ms: u64,
    /// The 95th percentile (nearest rank).
    pub p95_ms: u64,
    /// The longest.
    pub max_ms: u64,
}

/// A run's figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Questions.
    pub total: usize,
    /// Correct answers.
    pub correct: usize,
    /// `correct / total`, 0 for an empty run.
    pub accuracy: f64,
    /// Predictions that failed to run or could not be scored.
    pub errors: usize,
    /// Questions whose gold SQL failed (faults of the data set).
    pub gold_errors: usize,
    /// By tag (a question counts under each of its tags).
    pub by_tag: BTreeMap<String, Tally>,
    /// By difficulty (questions without one are not counted here).
    pub by_difficulty: BTreeMap<String, Tally>,
    /// Latency over all questions.
    pub latency: Latency,
    /// Model calls in all.
    pub model_calls: u64,
    /// Tokens in all.
    pub tokens: u64,
    /// Cost in all, when any question's cost is known.
    pub cost_usd: Option<f64>,
    /// Every question's latency, in milliseconds, in verdict order (for the histogram).
    #[serde(skip)]
    latencies_ms: Vec<u64>,
}

/// Difficulty names in their natural order (Spider's, BIRD's, Steward's); others follow alphabetically.
const DIFFICULTY_ORDER: &[&str] = &[
    "easy",
    "simple",
    "medium",
    "moderate",
    "hard",
    "challenging",
    "extra",
];

impl Summary {
    /// The figures of `verdicts`.
    pub fn of(verdicts: &[Verdict]) -> Summary {
        let mut s = Summary::default();
        let mut overall = Tally::default();
        for v in verdicts {
            overall.add(v.correct);
            s.errors += usize::from(v.error.is_some());
            s.gold_errors += usize::from(v.gold_error.is_some());
            for tag in &v.tags {
                s.by_tag.entry(tag.clone()).or_default().add(v.correct);
            }
            if let Some(d) = &v.difficulty {
                s.by_difficulty.entry(d.clone()).or_default().add(v.correct);
            }
            s.model_calls += u64::from(v.model_calls);
            s.tokens += v.tokens;
            if let Some(c) = v.cost_usd {
                s.cost_usd = Some(s.cost_usd.unwrap_or(0.0) + c);
            }
            s.latencies_ms.push(v.latency_ms);
        }
        s.total = overall.total;
        s.correct = overall.correct;
        s.accuracy = overall.accuracy;
        let mut sorted = s.latencies_ms.clone();
        sorted.sort_unstable();
        if let Some(&max) = sorted.last() {
            let rank = |p: f64| {
                let i = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
                sorted.get(i).copied().unwrap_or(max)
            };
            s.latency = Latency {
                mean_ms: sorted.iter().sum::<u64>() as f64 / sorted.len() as f64,
                p50_ms: rank(0.5),
                p95_ms: rank(0.95),
                max_ms: max,
            };
        }
        s
    }

    /// The difficulties in their natural order (easy, medium, hard; simple, moderate, challenging), then
    /// any others alphabetically.
    pub fn difficulties(&self) -> Vec<(&str, Tally)> {
        let mut out: Vec<(&str, Tally)> = self
            .by_difficulty
            .iter()
            .map(|(k, t)| (k.as_str(), *t))
            .collect();
        let rank = |d: &str| {
            DIFFICULTY_ORDER
                .iter()
                .position(|k| k.eq_ignore_ascii_case(d))
                .unwrap_or(DIFFICULTY_ORDER.len())
        };
        out.sort_by(|a, b| rank(a.0).cmp(&rank(b.0)).then(a.0.cmp(b.0)));
        out
    }

    /// Every question's latency in milliseconds, in verdict order.
    pub fn latencies_ms(&self) -> &[u64] {
        &self.latencies_ms
    }

    /// A Markdown report: the totals, then accuracy by difficulty and by tag.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let pct = |t: &Tally| format!("{:.1} %", t.accuracy * 100.0);
        let _ = writeln!(out, "| | |\n|---|---|");
        let _ = writeln!(
            out,
            "| accuracy | **{:.1} %** ({} of {}) |",
            self.accuracy * 100.0,
            self.correct,
            self.total
        );
        let _ = writeln!(out, "| prediction errors | {} |", self.errors);
        if self.gold_errors > 0 {
            let _ = writeln!(out, "| gold SQL errors (data set) | {} |", self.gold_errors);
        }
        let l = &self.latency;
        let _ = writeln!(
            out,
            "| latency | mean {:.0} ms, median {} ms, p95 {} ms, max {} ms |",
            l.mean_ms, l.p50_ms, l.p95_ms, l.max_ms
        );
        if self.model_calls > 0 || self.tokens > 0 {
            let _ = writeln!(out, "| model calls | {} |", self.model_calls);
            let _ = writeln!(out, "| tokens | {} |", self.tokens);
        }
        if let Some(c) = self.cost_usd {
            let _ = writeln!(out, "| cost | ${c:.4} |");
        }
        let mut table = |title: &str, rows: Vec<(&str, Tally)>| {
            if rows.is_empty() {
                return;
            }
            let _ = writeln!(
                out,
                "\n| {title} | questions | correct | accuracy |\n|---|--:|--:|--:|"
            );
            for (name, t) in rows {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} |",
                    markdown_cell(name),
                    t.total,
                    t.correct,
                    pct(&t)
                );
            }
        };
        table("difficulty", self.difficulties());
        table(
            "tag",
            self.by_tag.iter().map(|(k, t)| (k.as_str(), *t)).collect(),
        );
        out
    }
}

/// Text made safe for a Markdown table cell.
fn markdown_cell(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}
