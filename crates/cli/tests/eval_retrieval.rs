//! `steward eval retrieval` as a user runs it: one command builds the 848-table merged schema from
//! `testdata/` and measures the schema context on it. The benchmark is deterministic, so this is a regression
//! gate on the held-out figures at 2,000 tokens, and a check that the 2,000-token rows of docs/eval.md are what
//! the command prints.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn the_retrieval_benchmark_reproduces_from_one_command() {
    let out = Command::new(env!("CARGO_BIN_EXE_steward"))
        .args(["eval", "retrieval", "--dataset"])
        .arg(root().join("testdata/retrieval/merged.yaml"))
        .args(["--budget", "2000", "--json"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stdout));
    });

    // The schema: every source table renamed, plus the distractors; every question kept.
    assert_eq!(report["tables"], 848, "{report}");
    assert_eq!(report["source_tables"], 148);
    assert_eq!(report["distractor_tables"], 700);
    assert_eq!(report["databases"].as_array().unwrap().len(), 17);
    assert_eq!(report["questions"]["tune"], 334);
    assert_eq!(report["questions"]["heldout"], 227);
    assert_eq!(report["skipped"].as_array().unwrap().len(), 0, "{report}");
    assert!(report["full_schema_tokens"].as_u64().unwrap() > 100_000);

    let figures = |split: &str| -> Value {
        report["splits"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["split"] == split)
            .unwrap_or_else(|| panic!("no {split} in {report}"))
            .clone()
    };
    let at_2000 = |split: &str| -> (u64, f64, f64, f64) {
        let s = figures(split);
        let b = &s["budgets"][0];
        assert_eq!(b["budget"], 2000);
        (
            s["questions"].as_u64().unwrap(),
            b["mean_recall"].as_f64().unwrap(),
            b["all_found"].as_f64().unwrap(),
            b["mean_tokens"].as_f64().unwrap(),
        )
    };

    // The gate: issue 12's goal on questions the ranking was not tuned on (recall >= 0.98, all found
    // >= 0.95), and what it reaches on the tuning questions.
    let (_, recall, all_found, tokens) = at_2000("heldout");
    assert!(recall >= 0.98, "held-out recall {recall}");
    assert!(all_found >= 0.95, "held-out all found {all_found}");
    assert!(tokens <= 2000.0);
    let (_, recall, all_found, _) = at_2000("tune");
    assert!(
        recall >= 0.99 && all_found >= 0.99,
        "tune {recall} {all_found}"
    );

    // The 2,000-token rows of docs/eval.md are the command's.
    let page = std::fs::read_to_string(root().join("docs/eval.md")).unwrap();
    for split in ["tune", "heldout", "all"] {
        let (n, recall, all_found, tokens) = at_2000(split);
        let row = format!("| {split} | {n} | 2000 | {recall:.3} | {all_found:.3} | {tokens:.0} |");
        assert!(page.contains(&row), "docs/eval.md lacks {row}");
    }
}

/// On a terminal the seconds of building and measuring show progress: what it is doing, then the questions
/// measured of all (a real pseudo-terminal from util-linux `script`; the table itself goes to /dev/null).
#[test]
fn a_terminal_sees_the_retrieval_benchmark_progress() {
    let command = format!(
        "{} eval retrieval --dataset {} --budget 2000 >/dev/null",
        env!("CARGO_BIN_EXE_steward"),
        root().join("testdata/retrieval/merged.yaml").display()
    );
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{shown}");
    assert!(shown.contains("building the merged schema"), "{shown}");
    assert!(shown.contains("questions measured at 1 budget"), "{shown}");
    assert!(
        shown.contains("/561"),
        "the bar counts the questions: {shown}"
    );
}

/// `--dataset` takes a data set as `steward eval` does, measured on its own databases: a Spider folder and a
/// defog CSV (its PostgreSQL scripts translated to SQLite), no distractors.
#[test]
fn retrieval_measures_a_spider_or_defog_data_set_on_its_own_databases() {
    for (path, tables, questions) in [
        ("testdata/spider-slice", 16, 259),
        ("testdata/defog/questions_gen_postgres.csv", 110, 210),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_steward"))
            .args(["eval", "retrieval", "--dataset"])
            .arg(root().join(path))
            .args(["--budget", "1000", "--json"])
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{path}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["tables"], tables, "{path}: {report}");
        assert_eq!(report["distractor_tables"], 0, "{path}");
        assert_eq!(report["questions"]["tune"], questions, "{path}");
        let recall = report["splits"][0]["budgets"][0]["mean_recall"]
            .as_f64()
            .unwrap();
        assert!(recall > 0.9, "{path}: {report}");
    }
}
