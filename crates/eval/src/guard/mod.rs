//! The guard benchmark: the two-sided corpus of `testdata/guard` run on a real engine, judged by effect.
//!
//! Every attack (by class: stacked statements, writes inside a read, files, sleeps, other sessions, settings,
//! sequences and locks, SQL given as a string, sensitive catalogs, administrative statements, the database's
//! own functions) is sent the way a model's SQL is — [`Database::query`](steward_sql::Database::query) with
//! the database's own guard — and then judged by what it did on the engine: no file written, no sleep taken,
//! no canary row changed, no secret returned, no other session ended, no setting, sequence, lock, table or
//! large object changed. An attack is *held* when nothing of that is seen, whether the guard refused it, the
//! engine's read-only mode stopped it, or it ran to no effect; otherwise it *escaped*. Every legitimate
//! read must run: one the guard refuses or the engine fails is a *false refusal*.
//!
//! The database is made for the run: a SQLite file in a temporary folder, or a database of its own on the
//! PostgreSQL or MariaDB server given (PostgreSQL twice: with `standard_conforming_strings` on and off), loaded
//! with the fixtures of `testdata/guard/setup/` and removed at the end.
//!
//! ```no_run
//! use steward_eval::{GuardCorpus, run_guard_bench};
//! # async fn demo() -> Result<(), steward_eval::EvalError> {
//! let corpus = GuardCorpus::builtin()?;
//! let report = run_guard_bench(&corpus, Some("postgres://postgres@127.0.0.1/postgres"), &|_| {}).await?;
//! assert!(report.all_held(), "{:?}", report.escaped);
//! println!("{} false refusals", report.legit.false_refusals);
//! # Ok(()) }
//! ```

mod corpus;
mod report;
mod run;
mod scratch;

use std::time::Instant;

pub use corpus::{Effect, GuardCase, GuardCorpus, GuardEngine};
pub use report::{
    AttackOutcome, AttackResult, AttackTally, GuardReport, PassTally, ReadOutcome, ReadResult,
    ReadTally,
};

use crate::error::EvalError;
use run::Target;
use scratch::{Scratch, Server};
use steward_sql::{Database, Dialect};

/// Runs the corpus: on a scratch SQLite database when `url` is `None`, else in databases of its own on the
/// PostgreSQL or MariaDB server `url` names (the role must be allowed to create databases). `progress` is told
/// the name of each block before it runs. An error is returned only when the databases could not be set up;
/// what the attacks did is in the report.
pub async fn run_guard_bench(
    corpus: &GuardCorpus,
    url: Option<&str>,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<GuardReport, EvalError> {
    let started = Instant::now();
    let mut report = GuardReport {
        attacks: AttackTally {
            class: "all".to_owned(),
            ..AttackTally::default()
        },
        ..GuardReport::default()
    };
    match url {
        None => {
            report.engine = "sqlite".to_owned();
            report.database = "scratch SQLite database".to_owned();
            let scratch = Scratch::sqlite(corpus.setup(GuardEngine::Sqlite)).await?;
            let pass = pass(corpus, GuardEngine::Sqlite, &scratch.db, true, progress).await;
            let name = scratch.name();
            if let Err(warning) = scratch.remove(None).await {
                report.warnings.push(warning);
            }
            let (attacks, reads) = pass?;
            report.add_pass(GuardEngine::Sqlite.name(), name, attacks, reads);
        }
        Some(url) => {
            let server = Server::open(url).await?;
            report.engine = server.kind().to_owned();
            report.database.clone_from(&server.shown);
            let engines: &[GuardEngine] = if server.dialect() == Dialect::Postgres {
                &[GuardEngine::Postgres, GuardEngine::PostgresScsOff]
            } else {
                &[GuardEngine::Mariadb]
            };
            let mut failure = None;
            for &engine in engines {
                let scratch = match server.scratch(engine, corpus.setup(engine)).await {
                    Ok(scratch) => scratch,
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                };
                let pass = pass(corpus, engine, &scratch.db, server.local, progress).await;
                let name = scratch.name();
                if let Err(warning) = scratch.remove(Some(&server)).await {
                    report.warnings.push(warning);
                }
                match pass {
                    Ok((attacks, reads)) => report.add_pass(engine.name(), name, attacks, reads),
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                }
            }
            if !server.local {
                report.warnings.push(
                    "the server is not on this machine: an attack on a file that ran counts as escaped, since \
                     the file cannot be looked for here"
                        .to_owned(),
                );
            }
            server.close().await;
            if let Some(e) = failure {
                return Err(e);
            }
        }
    }
    report.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    Ok(report)
}

/// The attacks and reads of `engine`, on `db`.
async fn pass(
    corpus: &GuardCorpus,
    engine: GuardEngine,
    db: &Database,
    files_visible: bool,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<(Vec<AttackResult>, Vec<ReadResult>), EvalError> {
    let mut target = Target::new(engine, db, files_visible).await?;
    let mut attacks = Vec::new();
    for case in corpus.attacks.iter().filter(|c| c.runs_on(engine)) {
        progress(&format!("{engine}: {}", case.name));
        attacks.push(target.attack(case).await);
    }
    let mut reads = Vec::new();
    for case in corpus.legit.iter().filter(|c| c.runs_on(engine)) {
        progress(&format!("{engine}: {}", case.name));
        reads.push(target.read(case).await);
    }
    Ok((attacks, reads))
}
