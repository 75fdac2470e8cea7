//! Verdicts, one per question, and the log they are appended to: one JSON object per line, each line on
//! disk before the next question starts, so that an interrupted run resumes where it stopped.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::dataset::Item;
use crate::error::EvalError;

/// How one question went.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Verdict {
    /// The question's id.
    pub id: String,
    /// The question.
    pub question: String,
    /// Whether the prediction answers it (under the run's semantics).
    pub correct: bool,
    /// The SQL that was scored, when there was one.
    pub predicted_sql: Option<String>,
    /// How it was scored ([`crate::ScoreOptions::label`]: `spider`, `bird`, `defog`, `steward`, …); a
    /// verdict scored otherwise is scored again on resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scoring: Option<String>,
    /// Why the prediction failed to run or could not be scored (its SQL error, "too many rows to score",
    /// no SQL at all). `None` for a prediction that ran, right or wrong.
    pub error: Option<String>,
    /// A fault of the data set rather than of the prediction: the gold SQL failed, or the question has
    /// neither gold SQL nor an answer. Such a question counts as wrong; fix the data set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold_error: Option<String>,
    /// The final answer in words, for runs where a model answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// How many rows the prediction returned.
    pub rows: Option<usize>,
    /// The prediction's first row, when it ran and returned one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_row: Option<Vec<Value>>,
    /// The (first) gold result's first row, when the gold ran and returned one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold_first_row: Option<Vec<Value>>,
    /// How many SQL attempts it took (1 for a predictions file).
    pub attempts: u32,
    /// How many model calls it took (0 for a predictions file).
    pub model_calls: u32,
    /// Tokens spent (input and output).
    pub tokens: u64,
    /// Wall-clock time, in milliseconds: the whole answer for a model run, the predicted query's run for a
    /// predictions file.
    pub latency_ms: u64,
    /// What the model calls cost, when prices are known.
    pub cost_usd: Option<f64>,
    /// The question's tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// The question's difficulty.
    #[serde(default)]
    pub difficulty: Option<String>,
}

impl Verdict {
    /// A verdict for `item`, not (yet) correct, with nothing spent.
    pub fn for_item(item: &Item) -> Self {
        Self {
            id: item.id.clone(),
            question: item.question.clone(),
            correct: false,
            predicted_sql: None,
            scoring: None,
            error: None,
            gold_error: None,
            answer: None,
            rows: None,
            first_row: None,
            gold_first_row: None,
            attempts: 0,
            model_calls: 0,
            tokens: 0,
            latency_ms: 0,
            cost_usd: None,
            tags: item.tags.clone(),
            difficulty: item.difficulty.clone(),
        }
    }
}

/// An append-only verdict log (JSON Lines). Every [`VerdictLog::append`] writes one line and syncs it to
/// disk before returning.
#[derive(Debug)]
pub struct VerdictLog {
    file: File,
    path: PathBuf,
}

impl VerdictLog {
    /// Opens (or creates) the log at `path` for appending. A last line without its newline — the trace of
    /// a run killed while writing — is cut off first, so the next verdict starts on a line of its own.
    pub fn open(path: &Path) -> Result<Self, EvalError> {
        let io = |e| EvalError::io(path, e);
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)
            .map_err(io)?;
        let bytes = std::fs::read(path).map_err(io)?;
        let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |n| n + 1);
        if complete < bytes.len() {
            file.set_len(complete as u64).map_err(io)?;
            file.sync_all().map_err(io)?;
        }
        file.seek(SeekFrom::End(0)).map_err(io)?;
        Ok(Self {
            file,
            path: path.to_owned(),
        })
    }

    /// Appends one verdict as one line and waits until it is on disk.
    pub fn append(&mut self, verdict: &Verdict) -> Result<(), EvalError> {
        let mut line = serde_json::to_string(verdict)
            .map_err(|e| EvalError::io(&self.path, std::io::Error::other(e)))?;
        line.push('\n');
        let io = |e| EvalError::io(&self.path, e);
        self.file.write_all(line.as_bytes()).map_err(io)?;
        self.file.sync_data().map_err(io)
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The verdicts of a log, in order. A missing file has none; a last line without its newline (a write that
/// was interrupted) is ignored; any other line that is not a verdict is an error naming it.
pub fn read_verdicts(path: &Path) -> Result<Vec<Verdict>, EvalError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(EvalError::io(path, e)),
    };
    let complete = text.rfind('\n').map_or("", |n| &text[..n]);
    let mut verdicts = Vec::new();
    for (i, line) in complete.split('\n').enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let verdict = serde_json::from_str(line).map_err(|e| {
            EvalError::malformed(path, Some(i as u64 + 1), format!("not a verdict: {e}"))
        })?;
        verdicts.push(verdict);
    }
    Ok(verdicts)
}

/// The ids of the questions a log already has a verdict for (to skip them when resuming).
pub fn finished_ids(path: &Path) -> Result<BTreeSet<String>, EvalError> {
    Ok(read_verdicts(path)?.into_iter().map(|v| v.id).collect())
}

/// What a run's verdicts depend on, as a short hex key (the first 16 hex digits of a SHA-256): the content of
/// `files` (the data set's file, the predictions file) and `parts` (the scoring options, the model). A
/// default verdict log named with it belongs to that content: another file under the same name, or the
/// same file rewritten, gets another log.
pub fn content_key(files: &[&Path], parts: &[&str]) -> Result<String, EvalError> {
    let mut hash = Sha256::new();
    for file in files {
        let bytes = std::fs::read(file).map_err(|e| EvalError::io(file, e))?;
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(&bytes);
    }
    for part in parts {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part.as_bytes());
    }
    Ok(hash
        .finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Whether a logged verdict still stands for a rerun: it was scored the same way (`scoring`, see
/// [`crate::ScoreOptions::label`]; a verdict without one is taken as such) and, when the run scores given SQL,
/// for the same `prediction` text. Otherwise the question is scored again.
pub fn is_current(verdict: &Verdict, prediction: Option<&str>, scoring: &str) -> bool {
    verdict.scoring.as_deref().is_none_or(|s| s == scoring)
        && prediction.is_none_or(|p| verdict.predicted_sql.as_deref() == Some(p))
}
