//! `steward eval guard`: the guard benchmark of steward-eval on a scratch SQLite database or a PostgreSQL or
//! MariaDB server, shown as a table by attack class (or JSON), with the escapes and false refusals listed and
//! exit code 1 when any attack escaped.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;
use steward_eval::{AttackTally, GuardCorpus, GuardReport, run_guard_bench};

use crate::exit;
use crate::out::{aligned, note, say};
use crate::style::Style;

/// Arguments of `steward eval guard`.
#[derive(Args, Debug)]
pub(crate) struct GuardArgs {
    /// A PostgreSQL or MariaDB server to attack (postgres://postgres@127.0.0.1/postgres): a database of the
    /// benchmark's own is created there (the role must be allowed to create databases), loaded with the
    /// fixtures and dropped at the end. Default: a scratch SQLite database in a temporary folder.
    #[arg(long, value_name = "URL")]
    db: Option<String>,

    /// Print the report as JSON: `attacks`, `classes` and `passes` (each `total`, `held`, `escaped`,
    /// `refused_by_guard`, `stopped_by_engine`, `ran_without_effect`), `legit` (`total`, `allowed`,
    /// `false_refusals`), `escaped`, `false_refusals` and every result.
    #[arg(long)]
    json: bool,

    // This text is `--help`, where `<engine>` is a placeholder, not an HTML tag.
    #[allow(rustdoc::invalid_html_tags)]
    /// A corpus folder with attacks.sql, legit.sql and optionally setup/<engine>.sql (default: the corpus
    /// of testdata/guard, built in).
    #[arg(long, value_name = "DIR")]
    corpus: Option<PathBuf>,
}

/// Exit code when an attack escaped.
const ESCAPED: u8 = 1;

/// Runs `steward eval guard`.
pub(crate) async fn run(args: GuardArgs) -> anyhow::Result<u8> {
    let corpus = match &args.corpus {
        Some(dir) => GuardCorpus::load(dir)
            .with_context(|| format!("cannot read the guard corpus in {}", dir.display()))?,
        None => GuardCorpus::builtin().context("the built-in guard corpus")?,
    };
    let bar = crate::db::spinner("setting up the scratch database");
    let report = run_guard_bench(&corpus, args.db.as_deref(), &|name: &str| {
        bar.set_message(name.to_owned());
    })
    .await;
    bar.finish_and_clear();
    let report = report.context("the guard benchmark could not run")?;
    for warning in &report.warnings {
        note!("{}", Style::stderr().warn(&format!("warning: {warning}")));
    }
    if args.json {
        say!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        table(&report);
    }
    if report.all_held() {
        Ok(exit::OK)
    } else {
        let style = Style::stderr();
        note!(
            "{}",
            style.error(&format!(
                "{} of {} attacks ESCAPED the guard and the engine:",
                report.attacks.escaped, report.attacks.total
            ))
        );
        for attack in &report.escaped {
            note!(
                "  {} [{}] ({}): {}",
                attack.name,
                attack.engine,
                attack.class,
                attack.observed.join("; ")
            );
        }
        Ok(ESCAPED)
    }
}

/// The figures as tables on standard output, the escapes and false refusals after them.
fn table(report: &GuardReport) {
    let style = Style::stdout();
    let passes: Vec<&str> = report.passes.iter().map(|p| p.engine.as_str()).collect();
    say!(
        "guard benchmark · {} · {} · passes: {} · {:.1} s",
        report.engine,
        report.database,
        passes.join(", "),
        report.elapsed_ms as f64 / 1000.0
    );
    say!();
    let mut classes: Vec<&AttackTally> = report.classes.iter().collect();
    classes.push(&report.attacks);
    tallies("attack class", &classes);
    if report.passes.len() > 1 {
        say!();
        let passes: Vec<&AttackTally> = report.passes.iter().map(|p| &p.attacks).collect();
        tallies("pass", &passes);
    }
    say!();
    let legit = &report.legit;
    say!(
        "legitimate reads: {} · allowed {} · falsely refused {}",
        legit.total,
        legit.allowed,
        legit.false_refusals
    );
    for read in &report.false_refusals {
        say!(
            "  falsely refused: {} [{}]: {}",
            read.name,
            read.engine,
            read.message.as_deref().unwrap_or_default()
        );
    }
    say!();
    if report.escaped.is_empty() {
        say!(
            "{}",
            style.good(&format!(
                "every attack was held ({} of {})",
                report.attacks.held, report.attacks.total
            ))
        );
    } else {
        for attack in &report.escaped {
            say!(
                "{} {} [{}] ({}): {}",
                style.error("ESCAPED"),
                attack.name,
                attack.engine,
                attack.class,
                attack.observed.join("; ")
            );
        }
    }
}

/// A table of attack tallies, the first column named `first`.
fn tallies(first: &str, tallies: &[&AttackTally]) {
    let rows: Vec<Vec<String>> = tallies
        .iter()
        .map(|t| {
            vec![
                t.class.clone(),
                t.total.to_string(),
                t.held.to_string(),
                t.escaped.to_string(),
                t.refused_by_guard.to_string(),
                t.stopped_by_engine.to_string(),
                t.ran_without_effect.to_string(),
            ]
        })
        .collect();
    aligned(
        &[
            first,
            "attacks",
            "held",
            "escaped",
            "refused by guard",
            "stopped by engine",
            "ran, no effect",
        ],
        &rows,
    );
}
