//! `steward eval retrieval`: the retrieval benchmark, no model. Builds the merged schema of a spec
//! (`testdata/retrieval/merged.yaml`: every test database renamed `<db>__<table>` into one SQLite file, plus
//! seeded distractors; the demo database generated with a fixed seed and day), then, per question, compares
//! the tables its gold SQL reads with the tables the schema context selects at each budget.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use chrono::NaiveDate;
use clap::Args;
use steward_domains::demo::{self, DemoConfig};
use steward_eval::{
    Benchmark, RetrievalReport, RetrievalSpec, SourceKind, Split, build_benchmark, measure_with,
};
use steward_sql::Database;

use crate::out::note;
use crate::setup::bounded;
use crate::style::Style;

/// The demo database's seed and scale, as `testdata/steward-bench/demo.yaml` assumes them.
const DEMO_SEED: u64 = 42;
const DEMO_SCALE: u64 = 1;

/// Arguments of `steward eval retrieval`.
#[derive(Args, Debug)]
pub(crate) struct RetrievalArgs {
    /// The benchmark's spec (testdata/retrieval/merged.yaml: its source databases, question files, distractors
    /// and held-out rule), or a data set as `steward eval` takes it (Spider or BIRD folder or .json, defog .csv,
    /// Steward .yaml), measured on its own databases.
    #[arg(long, value_name = "PATH")]
    dataset: PathBuf,

    /// The data set's format, when --dataset is a data set whose format cannot be told from the path.
    #[arg(long, value_name = "spider|bird|defog|steward", value_parser = super::parse_format)]
    format: Option<steward_eval::Format>,

    /// Token budgets of the schema context (repeat for several; default 500, 1000 and 2000).
    #[arg(long = "budget", value_name = "N", value_parser = bounded::<usize, 1, 10_000_000>)]
    budgets: Vec<usize>,

    /// Which questions: tune (the ranking may be tuned on them), heldout, or all (both, each reported).
    #[arg(long, value_name = "tune|heldout|all", default_value = "all", value_parser = parse_split)]
    split: Which,

    /// Print the figures as JSON.
    #[arg(long)]
    json: bool,

    /// Keep the merged schema (schema.sqlite) and the questions (questions.json) in DIR.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,

    /// List the questions whose context misses a gold table at the largest budget.
    #[arg(long)]
    misses: bool,
}

/// The questions `--split` selects: one split, or all of them (`None`).
#[derive(Clone, Copy, Debug)]
struct Which(Option<Split>);

/// `all` is every split.
fn parse_split(text: &str) -> Result<Which, String> {
    if text.trim().eq_ignore_ascii_case("all") {
        Ok(Which(None))
    } else {
        text.parse().map(|s| Which(Some(s)))
    }
}

/// Removes a temporary folder when dropped.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `steward eval retrieval`.
pub(crate) async fn run(args: RetrievalArgs) -> anyhow::Result<u8> {
    let spec = RetrievalSpec::load_any(&args.dataset, args.format).with_context(|| {
        format!(
            "cannot read {} as a retrieval spec or a data set",
            args.dataset.display()
        )
    })?;
    let budgets = if args.budgets.is_empty() {
        vec![500, 1000, 2000]
    } else {
        args.budgets.clone()
    };
    let (dir, _cleanup) = match &args.out {
        Some(dir) => (dir.clone(), None),
        None => {
            let dir = std::env::temp_dir().join(format!(
                "steward-retrieval-{}-{}",
                std::process::id(),
                uuid::Uuid::new_v4().simple()
            ));
            (dir.clone(), Some(TempDir(dir)))
        }
    };
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create the folder {}", dir.display()))?;
    // On a terminal: what it is doing, then how far the measuring is (it takes seconds on the merged schema).
    let stage = super::spinner();
    let demo_db = if spec.sources.iter().any(|s| s.kind == SourceKind::Demo) {
        stage.set_message("generating the demo database");
        Some(generate_demo(&dir.join("demo.sqlite")).await?)
    } else {
        None
    };
    let schema = dir.join("schema.sqlite");
    stage.set_message(format!(
        "building the merged schema from {} source{}",
        spec.sources.len(),
        if spec.sources.len() == 1 { "" } else { "s" }
    ));
    let bench = build_benchmark(&spec, demo_db.as_deref(), &schema)
        .await
        .context("cannot build the merged schema")?;
    stage.set_message("reading the merged schema");
    if args.out.is_some() {
        let file = dir.join("questions.json");
        std::fs::write(&file, serde_json::to_string_pretty(&bench.questions)?)
            .with_context(|| format!("cannot write {}", file.display()))?;
    }
    let db = Database::connect(&format!("sqlite://{}?mode=ro", schema.display()))
        .await
        .context("cannot open the merged schema")?;
    let catalog = db
        .catalog()
        .await
        .context("cannot read the merged schema")?;
    db.close().await;
    let questions: Vec<_> = bench
        .questions
        .iter()
        .filter(|q| args.split.0.is_none_or(|s| q.split == s))
        .cloned()
        .collect();
    stage.finish_and_clear();
    let bar = super::progress_bar(questions.len() as u64);
    bar.set_message(format!(
        "questions measured at {} budget{}",
        budgets.len(),
        if budgets.len() == 1 { "" } else { "s" }
    ));
    let report = measure_with(&catalog, &questions, &budgets, &|| bar.inc(1));
    bar.finish_and_clear();
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&to_json(&spec, &bench, &report))?
        );
    } else {
        print_table(&spec, &bench, &report);
    }
    if args.misses {
        let largest = budgets.iter().copied().max().unwrap_or(0);
        for miss in report.misses.iter().filter(|m| m.budget == largest) {
            note!(
                "miss [{}] {} {:?}\n  missing {:?}\n  selected {:?}",
                miss.split,
                miss.id,
                miss.question,
                miss.missing,
                miss.selected
            );
        }
    }
    Ok(crate::exit::OK)
}

/// Generates the demo database (fixed seed, scale and day: the same file every run).
pub(super) async fn generate_demo(path: &Path) -> anyhow::Result<PathBuf> {
    let _ = std::fs::remove_file(path);
    let db = Database::connect(&format!("sqlite://{}?mode=rwc", path.display()))
        .await
        .context("cannot create the demo database")?;
    let today = NaiveDate::from_ymd_opt(2026, 1, 15).context("a fixed day")?;
    let config = DemoConfig {
        seed: DEMO_SEED,
        scale: DEMO_SCALE,
        today,
    };
    demo::create(&db, config, &|_, _| {})
        .await
        .context("cannot generate the demo database")?;
    db.close().await;
    Ok(path.to_owned())
}

fn heldout_databases(spec: &RetrievalSpec, bench: &Benchmark) -> Vec<String> {
    bench
        .databases
        .iter()
        .filter(|d| spec.is_heldout(d) && bench.questions.iter().any(|q| &q.db == *d))
        .cloned()
        .collect()
}

fn to_json(spec: &RetrievalSpec, bench: &Benchmark, report: &RetrievalReport) -> serde_json::Value {
    let count = |split: Split| bench.questions.iter().filter(|q| q.split == split).count();
    serde_json::json!({
        "benchmark": spec.name,
        "tables": bench.tables,
        "source_tables": bench.source_tables,
        "distractor_tables": bench.distractor_tables,
        "databases": bench.databases,
        "heldout_databases": heldout_databases(spec, bench),
        "questions": {"tune": count(Split::Tune), "heldout": count(Split::Heldout)},
        "skipped": bench.skipped,
        "full_schema_tokens": report.full_schema_tokens,
        "splits": report.splits,
    })
}

fn print_table(spec: &RetrievalSpec, bench: &Benchmark, report: &RetrievalReport) {
    let style = Style::stdout();
    println!(
        "{}",
        style.bold(&format!(
            "Retrieval benchmark `{}`: {} tables ({} from {} databases, {} distractors); the whole schema is {} tokens",
            spec.name,
            bench.tables,
            bench.source_tables,
            bench.databases.len(),
            bench.distractor_tables,
            report.full_schema_tokens
        ))
    );
    let heldout = heldout_databases(spec, bench);
    if !heldout.is_empty() {
        println!(
            "held out (FNV-1a of the database name divisible by {}): {}",
            spec.heldout_modulus,
            heldout.join(", ")
        );
    }
    if !bench.skipped.is_empty() {
        println!(
            "{} questions skipped: {}",
            bench.skipped.len(),
            bench.skipped.join("; ")
        );
    }
    println!();
    println!(
        "{:<8} {:>9} {:>7} {:>8} {:>10} {:>8}",
        "split", "questions", "budget", "recall", "all found", "tokens"
    );
    for split in &report.splits {
        for b in &split.budgets {
            println!(
                "{:<8} {:>9} {:>7} {:>8.3} {:>10.3} {:>8.0}",
                split.split, split.questions, b.budget, b.mean_recall, b.all_found, b.mean_tokens
            );
        }
    }
}
