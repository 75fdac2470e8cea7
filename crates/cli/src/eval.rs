//! `steward eval`: how well an agent answers a text-to-SQL data set (Spider, BIRD, defog, Steward's own
//! YAML), or how well given SQL does (`--predictions`). Each question's verdict is appended to a log as it
//! comes, so an interrupted run goes on where it stopped; the end is a table (or JSON), reports on request, and
//! an exit code for CI (`--min-accuracy`).
//!
//! The scoring itself is steward-eval's; this module selects the questions, finds their databases, runs the
//! agent (see `agent`), keeps the log and shows the figures (see `report`).

mod agent;
mod examples;
mod guard;
mod report;
mod retrieval;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use steward_eval::{
    Dataset, Format, ScoreOptions, Semantics, Verdict, VerdictLog, content_key, is_current,
    read_predictions, read_verdicts, score_item_with,
};
use steward_sql::Database;
use tokio::task::JoinSet;

use crate::agents::ConfigFile;
use crate::exit;
use crate::out::note;
use crate::setup::{ModelArgs, bounded};
use crate::style::Style;

/// Arguments of `steward eval`.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct EvalArgs {
    #[command(subcommand)]
    command: Option<EvalCommand>,

    /// The data set: a Spider or BIRD folder (with dev.json) or .json file, a defog .csv, or a Steward .yaml.
    #[arg(long, value_name = "PATH", required = true)]
    dataset: Option<PathBuf>,

    /// The data set's format (default: told from the path and content).
    #[arg(long, value_name = "spider|bird|defog|steward", value_parser = parse_format)]
    format: Option<Format>,

    // This text is `--help`, where `<db>` is a placeholder, not an HTML tag.
    #[allow(rustdoc::invalid_html_tags)]
    /// Where the databases are: a folder (holding <db>/<db>.sqlite or <db>.sqlite), a SQLite file, a URL for
    /// every question, or a URL template with {db} (postgres://postgres@127.0.0.1/{db}). Default: next to the
    /// data set (Spider, BIRD); the demo database for Steward's demo benchmark.
    #[arg(long, value_name = "DIR|URL")]
    db: Option<String>,

    /// Score the SQL in FILE instead of running a model: one query per line in data set order (a tab ends the
    /// query, so Spider's and BIRD's gold files read as predictions too), or BIRD's JSON.
    #[arg(long, value_name = "FILE")]
    predictions: Option<PathBuf>,

    /// Record the agent's runs in this run store (sqlite://path or postgres://…), with every tool call in its
    /// audit trail (as `eval`). Default: not recorded — a benchmark's thousands of runs stay out of the store.
    #[arg(long, value_name = "URL")]
    store: Option<String>,

    /// The agent that answers (default: analyst, the text-to-SQL agent).
    #[arg(short, long, value_name = "NAME")]
    agent: Option<String>,

    /// Questions answered at once.
    #[arg(
        short = 'j',
        long,
        default_value_t = 1,
        value_name = "N",
        value_parser = bounded::<usize, 1, 64>
    )]
    concurrency: usize,

    // This text is `--help`, where `<data set>` is a placeholder, not an HTML tag.
    #[allow(rustdoc::invalid_html_tags)]
    /// The verdict log (JSON lines, one per question, appended as each is scored; a rerun skips the questions
    /// it has, unless scored otherwise or for other SQL). Default: steward/eval/<data set>-<model or
    /// predictions>-<key>.jsonl in the data folder ($XDG_DATA_HOME or ~/.local/share), the key a hash of the
    /// data set's and predictions' content and the scoring options.
    #[arg(long, value_name = "FILE")]
    results: Option<PathBuf>,

    /// Start over: empty the verdict log first.
    #[arg(long)]
    fresh: bool,

    /// Only the first N questions (after --tag).
    #[arg(long, value_name = "N", value_parser = bounded::<usize, 1, 100_000_000>)]
    limit: Option<usize>,

    /// Only the questions with this tag (repeat for any of several).
    #[arg(long, value_name = "TAG")]
    tag: Vec<String>,

    /// Score as this benchmark's official scorer does (default: the data set's own), or with Steward's own,
    /// more forgiving rules (steward: text that spells a number equals it, floats to 12 digits, extra columns).
    #[arg(long, value_name = "spider|bird|defog|steward", value_parser = parse_semantics)]
    semantics: Option<Semantics>,

    /// Spider semantics: keep DISTINCT in both queries (the official scorer's --keep_distinct).
    #[arg(long)]
    keep_distinct: bool,

    /// Print {"total", "correct", "accuracy", "by_tag", …} as JSON instead of the table.
    #[arg(long)]
    json: bool,

    /// Exit with code 5 when the accuracy is below X: a fraction (0.8) or a percentage (80%).
    #[arg(long, value_name = "X", value_parser = parse_accuracy)]
    min_accuracy: Option<f64>,

    /// List the questions answered wrong: the gold and predicted SQL, and each result's first row.
    #[arg(long)]
    misses: bool,

    /// Write summary.md, summary.json, chart.svg and verdicts.jsonl into DIR.
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,

    #[command(flatten)]
    model: ModelArgs,
}

/// The subcommands of `steward eval` (`steward eval --dataset …` itself is the text-to-SQL evaluation).
#[derive(Subcommand, Debug)]
enum EvalCommand {
    /// Retrieval, no model: are the tables each gold query reads in the schema context, per token budget?
    Retrieval(retrieval::RetrievalArgs),
    /// The guard benchmark: every attack of the corpus by class, run on a real engine and judged by its
    /// effect (held or escaped), and the legitimate reads it must allow (false refusals). Exit code 1 when an
    /// attack escaped.
    Guard(guard::GuardArgs),
    /// Example retrieval, no model: with the other questions of its database as verified examples, does the
    /// ranking put one with the same SQL skeleton among the first k (hit@1, hit@3, hit@5)?
    Examples(examples::ExamplesArgs),
}

/// The format of `--format`.
pub(crate) fn parse_format(text: &str) -> Result<Format, String> {
    text.parse()
}

/// The semantics of `--semantics`.
fn parse_semantics(text: &str) -> Result<Semantics, String> {
    text.parse()
}

/// `--min-accuracy`: a fraction from 0 to 1, or a percentage from 0 % to 100 %.
fn parse_accuracy(text: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    let (number, percent) = match trimmed.strip_suffix('%') {
        Some(n) => (n.trim(), true),
        None => (trimmed, false),
    };
    let usage = || "expected a fraction from 0 to 1 (0.8) or a percentage (80%)".to_owned();
    let value: f64 = number.parse().map_err(|_| usage())?;
    let fraction = if percent { value / 100.0 } else { value };
    if !fraction.is_finite() || !(0.0..=1.0).contains(&fraction) {
        if !percent && (1.0..=100.0).contains(&value) {
            return Err(format!(
                "{value} is more than 1; for a percentage write {value}%"
            ));
        }
        return Err(usage());
    }
    Ok(fraction)
}

/// What answers the questions.
enum Source {
    /// Given SQL, by question index.
    Predictions(Vec<String>),
    /// An agent on a model.
    Agent(Box<agent::Agents>),
}

/// What every question's task shares.
struct Shared {
    dataset: Dataset,
    options: ScoreOptions,
    /// Each selected question's database URL, by question index.
    urls: HashMap<usize, String>,
    /// One scoring connection per database URL.
    databases: HashMap<String, Arc<Database>>,
    source: Source,
}

/// Why the evaluation stopped before its end.
pub(crate) enum Fatal {
    /// The model or its provider failed: no verdict is written, so a rerun asks again.
    Model(String),
    /// Anything else (a database that cannot be opened, an agent that cannot be built).
    Other(anyhow::Error),
}

/// Runs `steward eval`.
pub(crate) async fn run(args: EvalArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    if let Some(command) = args.command {
        return match command {
            EvalCommand::Retrieval(retrieval) => retrieval::run(retrieval).await,
            EvalCommand::Guard(guard) => guard::run(guard).await,
            EvalCommand::Examples(examples) => examples::run(examples).await,
        };
    }
    let Some(path) = args.dataset.as_deref() else {
        anyhow::bail!(
            "--dataset is required: a Spider or BIRD folder, a defog .csv or a Steward .yaml"
        );
    };
    let dataset = Dataset::load(path, args.format).with_context(|| {
        format!(
            "cannot load the data set {} (give a Spider or BIRD folder or .json file, a defog .csv or a Steward \
             .yaml, and --format when it cannot be told)",
            path.display()
        )
    })?;
    let semantics = args.semantics.unwrap_or(dataset.semantics);
    let options = ScoreOptions::new(semantics).with_keep_distinct(args.keep_distinct);

    let selected = select(&dataset, &args.tag, args.limit)?;
    let urls = database_urls(&dataset, &selected, args.db.as_deref())?;
    let distinct: BTreeSet<String> = urls.values().cloned().collect();

    let source = match &args.predictions {
        Some(file) => Source::Predictions(
            read_predictions(file, dataset.items.len())
                .context("cannot use the predictions file")?,
        ),
        None => Source::Agent(Box::new(
            agent::Agents::open(
                config,
                &distinct,
                &args.model,
                args.agent.as_deref(),
                args.store.as_deref(),
            )
            .await?,
        )),
    };
    let results = match &args.results {
        Some(file) => file.clone(),
        None => {
            let mut files = vec![dataset.source.as_path()];
            files.extend(args.predictions.as_deref());
            let model = args.model.model.clone().unwrap_or_default();
            let agent = args.agent.clone().unwrap_or_default();
            let key = content_key(&files, &[&options.label(), &model, &agent])
                .context("cannot read the data set or the predictions")?;
            let name = default_results(path, &args, &source, semantics != dataset.semantics);
            name.with_file_name(format!(
                "{}-{key}.jsonl",
                name.file_stem().unwrap_or_default().to_string_lossy()
            ))
        }
    };
    if let Some(dir) = results.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the folder {}", dir.display()))?;
    }
    if args.fresh {
        match std::fs::remove_file(&results) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(e).with_context(|| format!("cannot empty {}", results.display()));
            }
        }
    }
    let earlier = read_verdicts(&results).with_context(|| {
        format!(
            "{} is not a verdict log of steward eval; pass another --results FILE, or --fresh to overwrite it",
            results.display()
        )
    })?;
    let wanted: BTreeSet<String> = selected
        .iter()
        .filter_map(|&i| dataset.items.get(i))
        .map(|item| item.id.clone())
        .collect();
    let stray = earlier
        .iter()
        .filter(|v| !dataset.items.iter().any(|i| i.id == v.id))
        .count();
    if stray > 0 {
        note!(
            "{}",
            Style::stderr().warn(&format!(
                "warning: {} has {stray} verdicts for questions this data set does not have: is it the log of \
                 another data set? (--fresh starts over)",
                results.display()
            ))
        );
    }
    // A verdict stands when it was scored the same way and, for given SQL, for the same text; else the
    // question is scored again (its new verdict, appended, is the one read).
    let current = |v: &Verdict| {
        let prediction = match &source {
            Source::Predictions(predictions) => Some(
                dataset
                    .items
                    .iter()
                    .position(|i| i.id == v.id)
                    .and_then(|i| predictions.get(i))
                    .map_or("", String::as_str),
            ),
            Source::Agent(_) => None,
        };
        is_current(v, prediction, &options.label())
    };
    let mut latest: BTreeMap<&str, &Verdict> = BTreeMap::new();
    for v in &earlier {
        latest.insert(v.id.as_str(), v);
    }
    let finished: BTreeSet<&str> = latest
        .values()
        .filter(|v| current(v))
        .map(|v| v.id.as_str())
        .filter(|id| wanted.contains(*id))
        .collect();
    // Whether each question scored before was right, for the accuracy so far.
    let before: BTreeMap<String, bool> = latest
        .values()
        .filter(|v| finished.contains(v.id.as_str()))
        .map(|v| (v.id.clone(), v.correct))
        .collect();
    let todo: Vec<usize> = selected
        .iter()
        .copied()
        .filter(|&i| {
            dataset
                .items
                .get(i)
                .is_some_and(|item| !finished.contains(item.id.as_str()))
        })
        .collect();
    let already = finished.len();
    let style = Style::stderr();
    note!(
        "{}",
        style.dim(&format!(
            "steward eval: {} questions of {} ({} semantics); verdicts in {}",
            selected.len(),
            dataset.source.display(),
            semantics,
            results.display()
        ))
    );
    if already > 0 {
        note!(
            "{}",
            style.dim(&format!(
                "{} of {} already scored; going on with the other {} (--fresh starts over)",
                already,
                selected.len(),
                todo.len()
            ))
        );
    }

    let mut databases = HashMap::new();
    if !todo.is_empty() {
        let needed: BTreeSet<&String> = todo.iter().filter_map(|i| urls.get(i)).collect();
        let bar = crate::db::spinner("opening the databases");
        for url in needed {
            let db = Database::connect(url).await;
            match db {
                Ok(db) => {
                    databases.insert(url.clone(), Arc::new(db));
                }
                Err(e) => {
                    bar.finish_and_clear();
                    anyhow::bail!(
                        "cannot open the database {}: {e}",
                        steward_core::redact_url(url)
                    );
                }
            }
        }
        bar.finish_and_clear();
    }
    let shared = Arc::new(Shared {
        dataset,
        options,
        urls,
        databases,
        source,
    });
    let stopped = score_all(&shared, &results, todo, args.concurrency, &before).await;
    for db in shared.databases.values() {
        db.close().await;
    }
    if let Source::Agent(agents) = &shared.source {
        agents.flush_traces().await;
    }
    if let Some(code) = stopped? {
        return Ok(code);
    }

    let verdicts = in_order(&shared.dataset, &selected, read_verdicts(&results)?);
    let summary = steward_eval::Summary::of(&verdicts);
    let header = report::Header {
        dataset: shared.dataset.source.display().to_string(),
        semantics,
        results: results.display().to_string(),
        answered_by: match &shared.source {
            Source::Predictions(_) => args
                .predictions
                .as_deref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            Source::Agent(agents) => agents.describe(),
        },
    };
    if args.json {
        crate::out::say!(
            "{}",
            serde_json::to_string_pretty(&report::json(&summary, &header))?
        );
    } else {
        report::table(&summary, &header);
    }
    report::gold_faults(&verdicts);
    if args.misses {
        report::misses(&shared.dataset, &verdicts);
    }
    if let Some(dir) = &args.report {
        report::write(dir, &summary, &header, &verdicts)?;
        note!(
            "{}",
            style.dim(&format!("report written to {}", dir.display()))
        );
    }
    if let Some(min) = args.min_accuracy
        && summary.accuracy < min
    {
        note!(
            "{} the accuracy {:.1} % ({} of {}) is below --min-accuracy {:.1} %",
            style.error("error:"),
            summary.accuracy * 100.0,
            summary.correct,
            summary.total,
            min * 100.0
        );
        return Ok(exit::BELOW_MIN_ACCURACY);
    }
    Ok(exit::OK)
}

/// The indexes of the questions to score: those with one of `tags` (all without), the first `limit` of them.
fn select(dataset: &Dataset, tags: &[String], limit: Option<usize>) -> anyhow::Result<Vec<usize>> {
    let mut selected: Vec<usize> = dataset
        .items
        .iter()
        .enumerate()
        .filter(|(_, item)| tags.is_empty() || item.tags.iter().any(|t| tags.contains(t)))
        .map(|(i, _)| i)
        .collect();
    if selected.is_empty() {
        let known: BTreeSet<&str> = dataset
            .items
            .iter()
            .flat_map(|i| i.tags.iter().map(String::as_str))
            .collect();
        if dataset.items.is_empty() {
            anyhow::bail!("the data set {} has no questions", dataset.source.display());
        }
        anyhow::bail!(
            "no question has the tag {}; {}",
            tags.join(" or "),
            if known.is_empty() {
                "this data set has no tags".to_owned()
            } else {
                format!(
                    "the tags are: {}",
                    known.into_iter().collect::<Vec<_>>().join(", ")
                )
            }
        );
    }
    if let Some(limit) = limit {
        selected.truncate(limit);
    }
    Ok(selected)
}

/// Each selected question's database URL; the first one that cannot be found is an error saying what to do.
fn database_urls(
    dataset: &Dataset,
    selected: &[usize],
    db: Option<&str>,
) -> anyhow::Result<HashMap<usize, String>> {
    let mut urls = HashMap::new();
    let mut demo_checked = false;
    for &index in selected {
        let Some(item) = dataset.items.get(index) else {
            continue;
        };
        let demo = db.is_none()
            && dataset.format == Format::Steward
            && item.db.trim() == "demo"
            && !dataset.base_dir.join("demo").is_file();
        let url = if demo {
            let path = steward_app::demo_path();
            if !path.is_file() {
                anyhow::bail!(
                    "the data set asks the demo database, and there is none at {}: run `steward demo` first (or \
                     pass --db with a demo database file)",
                    path.display()
                );
            }
            if !demo_checked {
                demo_checked = true;
                warn_if_stale(&path);
            }
            dataset.database_url(item, Some(&path.display().to_string()))?
        } else {
            dataset.database_url(item, db)?
        };
        urls.insert(index, url);
    }
    Ok(urls)
}

/// The demo benchmark's relative dates (`date('now', 'localtime')`) expect a demo database generated today.
fn warn_if_stale(path: &Path) {
    let modified = std::fs::metadata(path).and_then(|m| m.modified());
    let Ok(modified) = modified else { return };
    let day = chrono::DateTime::<chrono::Local>::from(modified).date_naive();
    if day != chrono::Local::now().date_naive() {
        note!(
            "{}",
            Style::stderr().warn(&format!(
                "warning: the demo database was last written on {day}; the benchmark's relative dates expect one \
                 generated today (`steward demo --force` makes it anew)"
            ))
        );
    }
}

/// `steward/eval/<data set>-<model or predictions>[-<agent>][-<semantics>].jsonl` in the data folder.
fn default_results(
    dataset: &Path,
    args: &EvalArgs,
    source: &Source,
    other_semantics: bool,
) -> PathBuf {
    let stem = |p: &Path| {
        let p = if p.file_name().is_some_and(|n| n == "dev.json") {
            p.parent().unwrap_or(p)
        } else {
            p
        };
        p.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "dataset".to_owned())
    };
    let mut parts = vec![stem(dataset)];
    match source {
        Source::Predictions(_) => {
            parts.push(args.predictions.as_deref().map(stem).unwrap_or_default());
        }
        Source::Agent(agents) => {
            parts.push(
                args.model
                    .model
                    .clone()
                    .unwrap_or_else(|| agents.model_name().to_owned()),
            );
            if args.agent.is_some() {
                parts.push(agents.agent_name().to_owned());
            }
        }
    }
    if other_semantics {
        parts.push(
            args.semantics
                .map(|s| s.name().to_owned())
                .unwrap_or_default(),
        );
    }
    if args.keep_distinct {
        parts.push("keep-distinct".to_owned());
    }
    let name = parts
        .iter()
        .map(|p| file_safe(p))
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    steward_app::data_dir()
        .join("steward")
        .join("eval")
        .join(format!("{name}.jsonl"))
}

/// `text` with anything but letters, digits, `.` and `_` as `-` (runs as one), trimmed of `-`.
fn file_safe(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches(['-', '.']).to_owned()
}

/// The selected questions' verdicts in data set order (the last verdict of a question when a log has two).
fn in_order(dataset: &Dataset, selected: &[usize], verdicts: Vec<Verdict>) -> Vec<Verdict> {
    let mut by_id: HashMap<String, Verdict> = HashMap::new();
    for v in verdicts {
        by_id.insert(v.id.clone(), v);
    }
    selected
        .iter()
        .filter_map(|&i| dataset.items.get(i).and_then(|item| by_id.remove(&item.id)))
        .collect()
}

/// Scores the questions `todo`, `concurrency` at a time, appending each verdict to the log at `results` as it
/// comes. `Ok(Some(code))` when it stopped early (interrupted, the model failed), having said why.
async fn score_all(
    shared: &Arc<Shared>,
    results: &Path,
    todo: Vec<usize>,
    concurrency: usize,
    before: &BTreeMap<String, bool>,
) -> anyhow::Result<Option<u8>> {
    if todo.is_empty() {
        return Ok(None);
    }
    let mut log = VerdictLog::open(results)?;
    let bar = progress_bar(todo.len() as u64);
    let (mut scored, mut correct) = (before.len(), before.values().filter(|c| **c).count());
    bar.set_message(so_far(correct, scored));
    let mut pending = todo.into_iter();
    let mut tasks: JoinSet<Result<Verdict, Fatal>> = JoinSet::new();
    let interrupt = tokio::signal::ctrl_c();
    tokio::pin!(interrupt);
    let style = Style::stderr();
    let resume = || {
        format!(
            "the verdicts so far are in {}; run the same command again to go on",
            results.display()
        )
    };
    loop {
        while tasks.len() < concurrency {
            let Some(index) = pending.next() else { break };
            let shared = shared.clone();
            tasks.spawn(async move { evaluate(&shared, index).await });
        }
        let joined = tokio::select! {
            joined = tasks.join_next() => joined,
            _ = &mut interrupt => {
                tasks.abort_all();
                bar.finish_and_clear();
                note!("{} {}", style.warn("interrupted:"), resume());
                return Ok(Some(exit::INTERRUPTED));
            }
        };
        let verdict = match joined {
            None => break,
            Some(Ok(Ok(verdict))) => verdict,
            Some(Ok(Err(Fatal::Model(error)))) => {
                tasks.abort_all();
                bar.finish_and_clear();
                note!(
                    "{} the model failed: {error}\n{}",
                    style.error("error:"),
                    resume()
                );
                return Ok(Some(exit::MODEL_FAILED));
            }
            Some(Ok(Err(Fatal::Other(error)))) => {
                tasks.abort_all();
                bar.finish_and_clear();
                return Err(error.context(resume()));
            }
            Some(Err(error)) => {
                tasks.abort_all();
                bar.finish_and_clear();
                anyhow::bail!("a question's evaluation failed: {error}; {}", resume());
            }
        };
        log.append(&verdict)?;
        scored += 1;
        correct += usize::from(verdict.correct);
        bar.inc(1);
        bar.set_message(so_far(correct, scored));
    }
    bar.finish_and_clear();
    Ok(None)
}

/// The accuracy so far, for the progress bar.
fn so_far(correct: usize, scored: usize) -> String {
    if scored == 0 {
        return "no verdict yet".to_owned();
    }
    format!("{:.1} % correct", correct as f64 * 100.0 / scored as f64)
}

/// A spinner on standard error when it is a terminal, saying what is being done (its message).
fn spinner() -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg}… {elapsed}") {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// A progress bar on standard error when it is a terminal: done of all, accuracy so far, time left.
fn progress_bar(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{bar:20} {pos}/{len} · {msg} · {elapsed}, ~{eta} left")
    {
        bar.set_style(style.progress_chars("█▌ "));
    }
    bar.enable_steady_tick(Duration::from_millis(250));
    bar
}

/// The verdict on the question at `index`.
async fn evaluate(shared: &Shared, index: usize) -> Result<Verdict, Fatal> {
    let item = shared
        .dataset
        .items
        .get(index)
        .ok_or_else(|| Fatal::Other(anyhow::anyhow!("the data set has no question {index}")))?;
    let db = shared
        .urls
        .get(&index)
        .and_then(|url| shared.databases.get(url))
        .ok_or_else(|| {
            Fatal::Other(anyhow::anyhow!(
                "no database was opened for question {}",
                item.id
            ))
        })?;
    match &shared.source {
        Source::Predictions(predictions) => {
            let sql = predictions.get(index).map_or("", String::as_str);
            Ok(score_item_with(item, sql, db, &shared.options).await)
        }
        Source::Agent(agents) => {
            let url = shared.urls.get(&index).map_or("", String::as_str);
            agents.evaluate(item, url, db, &shared.options).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_accuracy_takes_fractions_and_percentages() {
        assert_eq!(parse_accuracy("0.8"), Ok(0.8));
        assert_eq!(parse_accuracy("80%"), Ok(0.8));
        assert_eq!(parse_accuracy(" 55.5 % "), Ok(0.555));
        assert_eq!(parse_accuracy("1"), Ok(1.0));
        assert!(parse_accuracy("80").unwrap_err().contains("80%"));
        assert!(parse_accuracy("-0.1").is_err());
        assert!(parse_accuracy("120%").is_err());
        assert!(parse_accuracy("NaN").is_err());
    }

    #[test]
    fn result_file_names_are_safe() {
        assert_eq!(file_safe("openai:gpt-4o-mini"), "openai-gpt-4o-mini");
        assert_eq!(
            file_safe("openai-compatible:qwen@http://x:8000/v1"),
            "openai-compatible-qwen-http-x-8000-v1"
        );
        assert_eq!(file_safe("../x"), "x");
    }
}
