//! `steward eval examples`: the example-retrieval benchmark, no model. Every question of a data set is asked
//! with the other questions of its database as verified examples; is one answered by the same kind of query
//! (the same SQL skeleton) among the first k the ranking gives? The measuring is steward-eval's
//! (`measure_examples`); this module finds each database's catalog (for the tables the ranking weighs) and
//! shows the figures.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::Args;
use steward_eval::{
    Dataset, ExampleDb, ExamplesReport, Format, HELDOUT_MODULUS, HIT_AT, HitFigures, Split,
    TABLES_RANKED, defog_sqlite, example_questions, gold_dialect, measure_examples,
};
use steward_sql::{Catalog, Database, Dialect};

use crate::out::{note, say};
use crate::style::Style;

/// Arguments of `steward eval examples`.
#[derive(Args, Debug)]
pub(crate) struct ExamplesArgs {
    /// The data set: a Spider or BIRD folder (with dev.json) or .json file, a defog .csv, or a Steward .yaml.
    #[arg(long, value_name = "PATH")]
    dataset: PathBuf,

    /// The data set's format (default: told from the path and content).
    #[arg(long, value_name = "spider|bird|defog|steward", value_parser = parse_format)]
    format: Option<Format>,

    // This text is `--help`, where `<db>` is a placeholder, not an HTML tag.
    #[allow(rustdoc::invalid_html_tags)]
    /// Where the databases are, for their catalogs (as `steward eval --db`: a folder, a SQLite file, a URL, or
    /// a template with {db}). Default: next to the data set (Spider, BIRD); for defog, SQLite copies built
    /// from databases/<db>/<db>.sql next to the .csv; for Steward's demo benchmark, a demo database
    /// generated with seed 42. A database that cannot be opened ranks with no table (said on stderr).
    #[arg(long, value_name = "DIR|URL")]
    db: Option<String>,

    /// Which questions: tune (the ranking may be tuned on them), heldout, or all (both, each reported).
    #[arg(long, value_name = "tune|heldout|all", default_value = "all", value_parser = parse_split)]
    split: Which,

    /// Only the questions of this database (repeat for several).
    #[arg(long = "database", value_name = "NAME")]
    databases: Vec<String>,

    /// Print the figures as JSON.
    #[arg(long)]
    json: bool,

    /// List the questions whose first 3 examples miss their kind of query though their pool has one: the
    /// question, its gold SQL and the 3 examples' questions.
    #[arg(long)]
    misses: bool,
}

/// The questions `--split` selects: one split, or all of them (`None`).
#[derive(Clone, Copy, Debug)]
struct Which(Option<Split>);

fn parse_split(text: &str) -> Result<Which, String> {
    if text.trim().eq_ignore_ascii_case("all") {
        Ok(Which(None))
    } else {
        text.parse().map(|s| Which(Some(s)))
    }
}

fn parse_format(text: &str) -> Result<Format, String> {
    text.parse()
}

/// Removes a temporary folder when dropped.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A database the benchmark could not read the catalog of, and why.
struct NoCatalog {
    db: String,
    why: String,
}

/// Runs `steward eval examples`.
pub(crate) async fn run(args: ExamplesArgs) -> anyhow::Result<u8> {
    let dataset = Dataset::load(&args.dataset, args.format).with_context(|| {
        format!(
            "cannot load the data set {} (give a Spider or BIRD folder or .json file, a defog .csv or a Steward \
             .yaml, and --format when it cannot be told)",
            args.dataset.display()
        )
    })?;
    let (all, skipped) = example_questions(&dataset);
    let known: BTreeSet<&str> = all.iter().map(|q| q.db.as_str()).collect();
    if let Some(unknown) = args.databases.iter().find(|d| !known.contains(d.as_str())) {
        anyhow::bail!(
            "the data set has no question on the database `{unknown}`; its databases: {}",
            known.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    let questions: Vec<_> = all
        .iter()
        .filter(|q| args.split.0.is_none_or(|s| q.split == s))
        .filter(|q| args.databases.is_empty() || args.databases.contains(&q.db))
        .cloned()
        .collect();
    if questions.is_empty() {
        anyhow::bail!(
            "no question of {} with gold SQL is in the selection",
            dataset.source.display()
        );
    }

    let scratch = std::env::temp_dir().join(format!(
        "steward-examples-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    let _cleanup = TempDir(scratch.clone());
    let stage = super::spinner();
    let names: BTreeSet<&str> = questions.iter().map(|q| q.db.as_str()).collect();
    let mut databases = BTreeMap::new();
    let mut missing = Vec::new();
    for name in names {
        stage.set_message(format!("reading the catalog of {name}"));
        let catalog = match catalog_of(&dataset, name, args.db.as_deref(), &scratch).await {
            Ok(catalog) => Some(catalog),
            Err(e) => {
                missing.push(NoCatalog {
                    db: name.to_owned(),
                    why: format!("{e:#}"),
                });
                None
            }
        };
        let dialect = gold_dialect(dataset.format)
            .or_else(|| catalog.as_ref().map(|c| c.dialect))
            .unwrap_or(Dialect::Sqlite);
        databases.insert(name.to_owned(), ExampleDb { catalog, dialect });
    }
    stage.finish_and_clear();
    for m in &missing {
        note!(
            "{}",
            Style::stderr().warn(&format!(
                "warning: no catalog for `{}`, its examples are ranked with no table: {}",
                m.db, m.why
            ))
        );
    }

    let bar = super::progress_bar(questions.len() as u64);
    bar.set_message("questions ranked");
    let report = measure_examples(&questions, &databases, &|| bar.inc(1));
    bar.finish_and_clear();

    if args.json {
        let json = to_json(&dataset, &report, &skipped, &missing, args.misses);
        say!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        print_table(&dataset, &report, &skipped, &missing);
        if args.misses {
            print_misses(&report);
        }
    }
    Ok(crate::exit::OK)
}

/// The catalog of database `name`: from `--db` when given; else defog's load script as SQLite, the demo
/// generated with a fixed seed, or the data set's own database.
async fn catalog_of(
    dataset: &Dataset,
    name: &str,
    db: Option<&str>,
    scratch: &Path,
) -> anyhow::Result<Catalog> {
    let item = dataset
        .items
        .iter()
        .find(|i| i.db == name)
        .context("no question asks it")?;
    let url = if db.is_some() {
        dataset.database_url(item, db)?
    } else if dataset.format == Format::Defog {
        let script = dataset
            .base_dir
            .join("databases")
            .join(name)
            .join(format!("{name}.sql"));
        if !script.is_file() {
            anyhow::bail!(
                "no load script {} (pass --db with a URL template such as postgres://postgres@127.0.0.1/{{db}})",
                script.display()
            );
        }
        std::fs::create_dir_all(scratch)
            .with_context(|| format!("cannot create {}", scratch.display()))?;
        let file = scratch.join(format!("{name}.sqlite"));
        defog_sqlite(&script, &file, ROWS)
            .await
            .with_context(|| format!("cannot read {} as SQLite", script.display()))?;
        format!("sqlite://{}?mode=ro", file.display())
    } else if dataset.format == Format::Steward
        && name.trim() == "demo"
        && !dataset.base_dir.join("demo").is_file()
    {
        std::fs::create_dir_all(scratch)
            .with_context(|| format!("cannot create {}", scratch.display()))?;
        let file = super::retrieval::generate_demo(&scratch.join("demo.sqlite")).await?;
        format!("sqlite://{}?mode=ro", file.display())
    } else {
        dataset.database_url(item, None)?
    };
    let database = Database::connect(&url)
        .await
        .with_context(|| format!("cannot open {}", steward_core::redact_url(&url)))?;
    let catalog = database.catalog().await;
    database.close().await;
    Ok(catalog?.as_ref().clone())
}

/// Rows copied from each table of a defog load script (the catalog samples the first 200, as the retrieval
/// benchmark's).
const ROWS: usize = 200;

fn heldout(report: &ExamplesReport) -> Vec<&str> {
    report
        .databases
        .iter()
        .filter(|d| d.split == Some(Split::Heldout))
        .map(|d| d.name.as_str())
        .collect()
}

fn to_json(
    dataset: &Dataset,
    report: &ExamplesReport,
    skipped: &[String],
    missing: &[NoCatalog],
    misses: bool,
) -> serde_json::Value {
    let mut json = serde_json::json!({
        "dataset": dataset.source.display().to_string(),
        "format": dataset.format.name(),
        "questions": report.results.len(),
        "skipped_without_sql": skipped,
        "hit_at": HIT_AT,
        "tables_ranked": TABLES_RANKED,
        "heldout_databases": heldout(report),
        "without_catalog": missing
            .iter()
            .map(|m| serde_json::json!({"db": m.db, "why": m.why}))
            .collect::<Vec<_>>(),
        "splits": report.splits,
        "databases": report.databases,
    });
    if misses && let Some(object) = json.as_object_mut() {
        let list: Vec<serde_json::Value> = report
            .misses()
            .map(|r| {
                serde_json::json!({
                    "id": r.id,
                    "db": r.db,
                    "split": r.split,
                    "question": r.question,
                    "sql": r.sql,
                    "skeleton": r.skeleton,
                    "matching": r.matching,
                    "first_hit": r.first_hit,
                    "top": r.top.iter().take(3).collect::<Vec<_>>(),
                })
            })
            .collect();
        object.insert("misses".into(), serde_json::Value::Array(list));
    }
    json
}

fn row(f: &HitFigures, label: &str) -> String {
    let at = |i: usize| f.hit_at.get(i).copied().unwrap_or(0.0);
    format!(
        "{:<20} {:>9} {:>8.3} {:>7.3} {:>7.3} {:>7.3} {:>9.3}",
        label,
        f.questions,
        f.ceiling,
        at(0),
        at(1),
        at(2),
        f.chance_at_3
    )
}

fn header(first: &str) -> String {
    format!(
        "{:<20} {:>9} {:>8} {:>7} {:>7} {:>7} {:>9}",
        first, "questions", "ceiling", "hit@1", "hit@3", "hit@5", "chance@3"
    )
}

fn print_table(
    dataset: &Dataset,
    report: &ExamplesReport,
    skipped: &[String],
    missing: &[NoCatalog],
) {
    let style = Style::stdout();
    say!(
        "{}",
        style.bold(&format!(
            "Example retrieval on {} ({}): {} questions over {} databases, each with the other questions of its \
             database as examples (the same query left out)",
            dataset.source.display(),
            dataset.format,
            report.results.len(),
            report.databases.len()
        ))
    );
    say!(
        "hit@k: a same-skeleton example in the first k; ceiling: one in the pool at all; chance@3: a random 3. \
         Ranked with the schema context's first {TABLES_RANKED} tables{}.",
        if missing.is_empty() {
            String::new()
        } else {
            format!(
                " (none for {})",
                missing
                    .iter()
                    .map(|m| m.db.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    );
    say!(
        "held out (FNV-1a of the database name divisible by {HELDOUT_MODULUS}): {}",
        match heldout(report) {
            h if h.is_empty() => "none".to_owned(),
            h => h.join(", "),
        }
    );
    if !skipped.is_empty() {
        say!(
            "{} questions without gold SQL left out: {}",
            skipped.len(),
            skipped.join(", ")
        );
    }
    say!();
    say!("{}", header("split"));
    for f in &report.splits {
        say!("{}", row(f, &f.name));
    }
    say!();
    say!("{}", header("database"));
    for f in &report.databases {
        let label = match f.split {
            Some(Split::Heldout) => format!("{} (h)", f.name),
            _ => f.name.clone(),
        };
        say!("{}", row(f, &label));
    }
}

fn print_misses(report: &ExamplesReport) {
    let misses: Vec<_> = report.misses().collect();
    say!();
    say!(
        "{} questions whose first 3 examples miss their kind of query (the pool has one):",
        misses.len()
    );
    for r in misses {
        say!(
            "\nmiss [{} {}] {} {:?}\n  gold: {}\n  skeleton: {}\n  {} of {} examples of its kind; first at {}",
            r.split,
            r.db,
            r.id,
            r.question,
            one_line(&r.sql),
            r.skeleton,
            r.matching,
            r.pool,
            r.first_hit
                .map_or_else(|| "none (not ranked)".to_owned(), |k| k.to_string())
        );
        for (i, e) in r.top.iter().take(3).enumerate() {
            say!("  {}. {:?}  {}", i + 1, e.question, one_line(&e.sql));
        }
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
