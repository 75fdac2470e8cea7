//! `steward eval guard` as a user runs it: the corpus of `testdata/guard` on a scratch SQLite database, on
//! PostgreSQL (both passes: `standard_conforming_strings` on and off) and on MariaDB, every attack held, no
//! legitimate read refused, the totals those of the corpus files (counted here on their own), the scratch
//! databases gone afterwards; and a corpus of its own to show that an escape is seen and fails the run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::*;
use serde_json::Value;

const PG: &str = "postgres://postgres@127.0.0.1:5432/postgres";
const MARIA: &str = "mysql://root@127.0.0.1:3306";

/// Blocks of a corpus file, counted by engine and by (engine, class): each `-- name:` line, under the last
/// `-- ## ` heading, on the engines of its `-- engines:` line.
#[derive(Default)]
struct Counts {
    by_engine: BTreeMap<String, usize>,
    by_class: BTreeMap<(String, String), usize>,
}

fn count(file: &str) -> Counts {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/guard")
        .join(file);
    let text = std::fs::read_to_string(path).unwrap();
    let mut counts = Counts::default();
    let mut class = "unclassified".to_owned();
    let mut in_block = false;
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix("-- ## ") {
            class = heading.trim().to_owned();
        } else if line.starts_with("-- name:") {
            in_block = true;
        } else if let Some(list) = line.strip_prefix("-- engines:")
            && in_block
        {
            for engine in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
                *counts.by_engine.entry(engine.to_owned()).or_default() += 1;
                *counts
                    .by_class
                    .entry((engine.to_owned(), class.clone()))
                    .or_default() += 1;
            }
            in_block = false;
        }
    }
    counts
}

fn number(v: &Value, key: &str) -> usize {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}")) as usize
}

/// Runs `steward eval guard --json` with `args`; the report and the exit code.
fn run_json(args: &[&str]) -> (Value, i32) {
    let mut all = vec!["eval", "guard", "--json"];
    all.extend_from_slice(args);
    let out = steward(&all, &[], "");
    let stdout = text(&out.stdout);
    let report: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}\nstderr:\n{}", text(&out.stderr)));
    (report, out.status.code().unwrap())
}

/// Checks a report against the corpus for the passes `engines`: every attack held, every read allowed, the
/// totals (overall, by pass, by class) those of the corpus files.
fn check(report: &Value, code: i32, engines: &[&str]) {
    let attacks = count("attacks.sql");
    let legit = count("legit.sql");
    let escaped: Vec<String> = report["escaped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| format!("{} [{}]: {}", a["name"], a["engine"], a["observed"]))
        .collect();
    assert!(escaped.is_empty(), "escaped:\n{}", escaped.join("\n"));
    assert_eq!(code, 0, "{report}");
    let expected_attacks: usize = engines
        .iter()
        .map(|e| attacks.by_engine.get(*e).copied().unwrap_or(0))
        .sum();
    let expected_legit: usize = engines
        .iter()
        .map(|e| legit.by_engine.get(*e).copied().unwrap_or(0))
        .sum();
    assert!(
        expected_attacks > 10 && expected_legit > 10,
        "{expected_attacks} {expected_legit}"
    );

    let all = &report["attacks"];
    assert_eq!(number(all, "total"), expected_attacks, "{all}");
    assert_eq!(number(all, "held"), expected_attacks, "{all}");
    assert_eq!(number(all, "escaped"), 0);
    assert_eq!(
        number(all, "refused_by_guard")
            + number(all, "stopped_by_engine")
            + number(all, "ran_without_effect"),
        expected_attacks
    );
    assert_eq!(
        report["attack_results"].as_array().unwrap().len(),
        expected_attacks
    );

    let reads = &report["legit"];
    assert_eq!(number(reads, "total"), expected_legit, "{reads}");
    assert_eq!(
        number(reads, "allowed"),
        expected_legit,
        "{}",
        report["false_refusals"]
    );
    assert_eq!(
        number(reads, "false_refusals"),
        0,
        "{}",
        report["false_refusals"]
    );

    // By pass.
    let passes = report["passes"].as_array().unwrap();
    let names: Vec<&str> = passes
        .iter()
        .map(|p| p["engine"].as_str().unwrap())
        .collect();
    assert_eq!(names, engines);
    for pass in passes {
        let engine = pass["engine"].as_str().unwrap();
        assert_eq!(
            number(&pass["attacks"], "total"),
            attacks.by_engine.get(engine).copied().unwrap_or(0),
            "{engine}"
        );
        assert_eq!(number(&pass["attacks"], "escaped"), 0, "{engine}");
        assert_eq!(
            number(&pass["legit"], "total"),
            legit.by_engine.get(engine).copied().unwrap_or(0),
            "{engine}"
        );
        assert_eq!(number(&pass["legit"], "false_refusals"), 0, "{engine}");
    }

    // By class.
    let mut expected_classes: BTreeMap<&str, usize> = BTreeMap::new();
    for ((engine, class), n) in &attacks.by_class {
        if engines.contains(&engine.as_str()) {
            *expected_classes.entry(class.as_str()).or_default() += n;
        }
    }
    let classes: BTreeMap<&str, &Value> = report["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["class"].as_str().unwrap(), c))
        .collect();
    assert_eq!(
        classes.keys().collect::<Vec<_>>(),
        expected_classes.keys().collect::<Vec<_>>()
    );
    for (class, n) in &expected_classes {
        let tally = classes[class];
        assert_eq!(number(tally, "total"), *n, "{class}");
        assert_eq!(number(tally, "held"), *n, "{class}");
        assert_eq!(number(tally, "escaped"), 0, "{class}");
    }
}

/// The names of the scratch databases the passes ran on.
fn scratch_names(report: &Value) -> Vec<String> {
    report["passes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["database"].as_str().unwrap().to_owned())
        .collect()
}

/// How many of `names` are still databases on the server at `admin`.
fn left_on_server(admin: &str, list: &str, names: &[String]) -> usize {
    let (admin, list) = (admin.to_owned(), list.to_owned());
    let found = std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async {
                let db = steward_sql::Database::connect(&admin).await.unwrap();
                let limits = steward_sql::QueryLimits {
                    max_rows: 100_000,
                    ..Default::default()
                };
                let rows = db.query_read_only(&list, &[], &limits).await.unwrap();
                db.close().await;
                rows.rows
                    .iter()
                    .map(|r| steward_sql::cell_text(&r[0]))
                    .collect::<Vec<_>>()
            })
    })
    .join()
    .unwrap();
    names.iter().filter(|n| found.contains(n)).count()
}

#[test]
fn the_corpus_is_held_on_a_scratch_sqlite_database() {
    let (report, code) = run_json(&[]);
    check(&report, code, &["sqlite"]);
    assert_eq!(report["engine"], "sqlite");
    for file in scratch_names(&report) {
        assert!(file.ends_with(".sqlite"), "{file}");
        assert!(!Path::new(&file).exists(), "{file} was left behind");
    }
}

#[test]
fn the_corpus_is_held_on_postgres() {
    if !postgres_up() {
        return;
    }
    let (report, code) = run_json(&["--db", PG]);
    check(&report, code, &["postgres", "postgres_scs_off"]);
    assert_eq!(report["engine"], "postgres");
    let names = scratch_names(&report);
    assert_eq!(names.len(), 2);
    assert!(
        names.iter().all(|n| n.starts_with("steward_guard_")),
        "{names:?}"
    );
    assert_eq!(
        left_on_server(PG, "SELECT datname::text FROM pg_database", &names),
        0,
        "{names:?} left behind"
    );
}

#[test]
fn the_corpus_is_held_on_mariadb() {
    if !mariadb_up() {
        return;
    }
    let (report, code) = run_json(&["--db", MARIA]);
    check(&report, code, &["mariadb"]);
    assert_eq!(report["engine"], "mariadb");
    let names = scratch_names(&report);
    assert_eq!(
        left_on_server(
            MARIA,
            "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA",
            &names
        ),
        0,
        "{names:?} left behind"
    );
}

/// A corpus of its own whose "attacks" are reads the guard allows: an effect seen is an escape, listed loudly,
/// and the exit code is 1; a read the guard refuses or the engine fails is a false refusal.
#[test]
fn an_escape_is_seen_and_fails_the_run() {
    let dir = PathBuf::from(scratch_dir("guard-corpus"));
    std::fs::write(
        dir.join("attacks.sql"),
        "-- A corpus for the test.\n\n\
         -- ## Reads posing as attacks\n\n\
         -- name: returns_a_secret\n-- engines: sqlite\n-- expect: held\n-- effect: secret:Apollo rows\n\
         SELECT name FROM projects ORDER BY id\n\n\
         -- name: fails_in_the_engine\n-- engines: sqlite\n-- expect: held\n-- effect: rows\n\
         SELECT * FROM no_such_table\n\n\
         -- name: runs_to_no_effect\n-- engines: sqlite\n-- expect: held\n-- effect: rows canary\n\
         SELECT 1 WHERE 0\n\n\
         -- ## Writes\n\n\
         -- name: deletes\n-- engines: sqlite, postgres\n-- expect: held\n-- effect: canary\n\
         DELETE FROM canary\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("legit.sql"),
        "-- name: a_read\n-- engines: sqlite\n-- expect: runs\nSELECT COUNT(*) FROM tasks\n\n\
         -- name: a_write\n-- engines: sqlite\n-- expect: runs\nDELETE FROM tasks\n\n\
         -- name: a_missing_table\n-- engines: sqlite\n-- expect: runs\nSELECT * FROM nope\n",
    )
    .unwrap();
    let corpus = dir.display().to_string();

    let (report, code) = run_json(&["--corpus", &corpus]);
    assert_eq!(code, 1, "{report}");
    let all = &report["attacks"];
    assert_eq!(
        [
            "total",
            "held",
            "escaped",
            "refused_by_guard",
            "stopped_by_engine",
            "ran_without_effect"
        ]
        .map(|k| number(all, k)),
        [4, 3, 1, 1, 1, 1],
        "{all}"
    );
    let escaped = report["escaped"].as_array().unwrap();
    assert_eq!(escaped.len(), 1);
    assert_eq!(escaped[0]["name"], "returns_a_secret");
    assert_eq!(escaped[0]["class"], "Reads posing as attacks");
    let observed = escaped[0]["observed"].to_string();
    assert!(
        observed.contains("`Apollo`") && observed.contains("3 rows"),
        "{observed}"
    );
    let outcomes: BTreeMap<&str, &str> = report["attack_results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["name"].as_str().unwrap(), a["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(outcomes["deletes"], "refused");
    assert_eq!(outcomes["fails_in_the_engine"], "stopped");
    assert_eq!(outcomes["runs_to_no_effect"], "ran_without_effect");
    assert_eq!(number(&report["legit"], "total"), 3);
    assert_eq!(number(&report["legit"], "false_refusals"), 2);
    let refused: BTreeMap<&str, &str> = report["false_refusals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap(), r["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(
        refused,
        BTreeMap::from([("a_missing_table", "failed"), ("a_write", "refused")])
    );

    // The table says it too, and standard error names the escape.
    let out = steward(&["eval", "guard", "--corpus", &corpus], &[], "");
    assert_eq!(out.status.code(), Some(1));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        stdout.contains("ESCAPED returns_a_secret [sqlite] (Reads posing as attacks)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("falsely refused: a_write [sqlite]"),
        "{stdout}"
    );
    assert!(stdout.contains("Reads posing as attacks | 3"), "{stdout}");
    assert!(stderr.contains("1 of 4 attacks ESCAPED"), "{stderr}");
}

#[test]
fn a_corpus_that_cannot_be_used_is_a_usage_error() {
    let dir = scratch_dir("guard-bad-corpus");
    let out = steward(&["eval", "guard", "--corpus", &dir], &[], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("attacks.sql"),
        "{}",
        text(&out.stderr)
    );

    std::fs::write(
        Path::new(&dir).join("attacks.sql"),
        "-- name: a\n-- engines: sqlite\n-- expect: held\n-- effect: canary sparks\nSELECT 1\n",
    )
    .unwrap();
    std::fs::write(Path::new(&dir).join("legit.sql"), "").unwrap();
    let out = steward(&["eval", "guard", "--corpus", &dir], &[], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("attacks.sql:4: unknown effect `sparks`"),
        "{}",
        text(&out.stderr)
    );

    let out = steward(&["eval", "guard", "--db", "sqlite::memory:"], &[], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("leave out --db"),
        "{}",
        text(&out.stderr)
    );
}
