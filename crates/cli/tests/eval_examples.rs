//! `steward eval examples` as a user runs it, on two of the Spider slice's databases (one tuning, one held
//! out) to stay quick: the table, the JSON, and the misses. The ceiling does not depend on the ranking, so it
//! is pinned; the hits only have to be figures that make sense (the ranking may be tuned).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn steward(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_steward"))
        .args(["eval", "examples", "--dataset"])
        .arg(root().join("testdata/spider-slice"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn the_example_benchmark_prints_its_figures() {
    let out = steward(&["--database", "concert_singer", "--misses"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Example retrieval on"), "{text}");
    assert!(text.contains("45 questions over 1 databases"), "{text}");
    for column in [
        "questions",
        "ceiling",
        "hit@1",
        "hit@3",
        "hit@5",
        "chance@3",
    ] {
        assert!(text.contains(column), "{text}");
    }
    let tune = text
        .lines()
        .find(|l| l.starts_with("tune "))
        .unwrap_or_else(|| panic!("no tune row: {text}"));
    let cells: Vec<&str> = tune.split_whitespace().collect();
    assert_eq!(cells.len(), 7, "{tune}");
    assert_eq!(cells[1], "45");
    assert!(
        text.lines().any(|l| l.starts_with("concert_singer ")),
        "{text}"
    );
    assert!(
        text.contains("questions whose first 3 examples miss"),
        "{text}"
    );
    // Nothing but warnings on stderr: every catalog was read.
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("no catalog"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_json_has_both_splits_and_each_database() {
    let out = steward(&[
        "--database",
        "concert_singer",
        "--database",
        "flight_2",
        "--json",
    ]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stdout));
    });
    assert_eq!(report["format"], "spider");
    assert_eq!(report["questions"], 125, "{report}");
    assert_eq!(report["heldout_databases"], serde_json::json!(["flight_2"]));
    assert_eq!(report["without_catalog"], serde_json::json!([]));
    let splits = report["splits"].as_array().unwrap();
    let names: Vec<&str> = splits.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["tune", "heldout", "all"]);
    // Pinned: which questions have a same-skeleton example in their pool does not depend on the ranking.
    let with_match: Vec<u64> = splits
        .iter()
        .map(|s| s["with_match"].as_u64().unwrap())
        .collect();
    assert_eq!(with_match, [4, 62, 66], "{report}");
    for s in splits {
        let hits: Vec<u64> = s["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h.as_u64().unwrap())
            .collect();
        assert_eq!(hits.len(), 3);
        assert!(hits[0] <= hits[1] && hits[1] <= hits[2], "{s}");
        assert!(hits[2] <= s["with_match"].as_u64().unwrap(), "{s}");
    }
    // The held-out database's examples are found well above chance.
    let heldout = &splits[1];
    assert!(
        heldout["hit_at"][1].as_f64().unwrap() > 2.0 * heldout["chance_at_3"].as_f64().unwrap(),
        "{heldout}"
    );
    let databases: Vec<&str> = report["databases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(databases, ["concert_singer", "flight_2"]);
}
