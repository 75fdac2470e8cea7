//! `steward eval` as a user runs it: predictions files on the Spider slice (the gold scores 100 %, a shifted
//! file what steward-eval's own tests established, `--min-accuracy` gates), resuming after `--limit` and
//! after a kill, an agent on the demo database against a mock OpenAI server, and `--report`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn spider_slice() -> String {
    testdata().join("spider-slice").display().to_string()
}

/// The Spider slice's gold SQL, one query per question, in order.
fn spider_gold() -> Vec<String> {
    let text = std::fs::read_to_string(testdata().join("spider-slice/dev.json")).unwrap();
    let questions: Vec<Value> = serde_json::from_str(&text).unwrap();
    questions
        .iter()
        .map(|q| {
            q["query"]
                .as_str()
                .unwrap()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// Writes `lines` as a predictions file in a fresh folder; returns the folder and the file.
fn predictions(name: &str, lines: &[String]) -> (String, String) {
    let dir = scratch_dir("eval");
    let file = format!("{dir}/{name}");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    (dir, file)
}

/// Each question i predicted with question i+1's gold (the last with the first's).
fn shifted(gold: &[String]) -> Vec<String> {
    (0..gold.len())
        .map(|i| gold[(i + 1) % gold.len()].clone())
        .collect()
}

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: stdout {:?}, stderr {:?}",
            text(&out.stdout),
            text(&out.stderr)
        )
    })
}

/// The verdicts of a log, as JSON objects.
fn verdicts(path: &str) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// How many verdicts each id has.
fn id_counts(verdicts: &[Value]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for v in verdicts {
        *counts
            .entry(v["id"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    counts
}

#[test]
fn the_gold_as_predictions_scores_everything() {
    let (dir, file) = predictions("gold.sql", &spider_gold());
    let results = format!("{dir}/verdicts.jsonl");
    let out = steward(
        &[
            "eval",
            "--dataset",
            &spider_slice(),
            "--predictions",
            &file,
            "--results",
            &results,
            "--json",
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json = json_of(&out);
    assert_eq!(json["total"], 259);
    assert_eq!(json["correct"], 259);
    assert_eq!(json["accuracy"], 1.0);
    assert!(json["by_tag"].is_object());
    assert_eq!(json["errors"], 0);
    assert_eq!(verdicts(&results).len(), 259);
    // Where the verdicts are is said at the start.
    assert!(
        text(&out.stderr).contains(&results),
        "{}",
        text(&out.stderr)
    );

    // The table, without --json, and the default log under the data folder.
    let data = scratch_dir("data");
    let out = steward(
        &["eval", "--dataset", &spider_slice(), "--predictions", &file],
        &[("XDG_DATA_HOME", &data)],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("overall | 259       | 259     | 100.0 %"),
        "{stdout}"
    );
    // Named by the data set, the predictions' name and a key of their content and the options.
    let prefix = format!("{data}/steward/eval/spider-slice-gold-");
    let stderr = text(&out.stderr);
    let start = stderr.find(&prefix).unwrap_or_else(|| panic!("{stderr}"));
    let default_log = stderr[start..]
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    assert!(
        default_log.ends_with(".jsonl") && default_log.len() == prefix.len() + 16 + 6,
        "{default_log}"
    );
    assert_eq!(verdicts(&default_log).len(), 259);
}

#[test]
fn shifted_predictions_score_less_and_min_accuracy_gates() {
    let (dir, file) = predictions("shifted.sql", &shifted(&spider_gold()));
    let results = format!("{dir}/verdicts.jsonl");
    let run = |min: &str| {
        steward(
            &[
                "eval",
                "--dataset",
                &spider_slice(),
                "--predictions",
                &file,
                "--results",
                &results,
                "--json",
                "--min-accuracy",
                min,
            ],
            &[],
            "",
        )
    };
    let out = run("0.9");
    // 143 of 259: the figure steward-eval's tests established by hand and by an independent comparison.
    let json = json_of(&out);
    assert_eq!(
        (json["total"].as_u64(), json["correct"].as_u64()),
        (Some(259), Some(143))
    );
    assert_eq!(out.status.code(), Some(5), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr)
            .contains("the accuracy 55.2 % (143 of 259) is below --min-accuracy 90.0 %"),
        "{}",
        text(&out.stderr)
    );
    let out = run("0.1");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("259 of 259 already scored"));
    let out = run("10%");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = run("90");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("write 90%"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_rerun_goes_on_where_a_limited_run_stopped() {
    let (dir, file) = predictions("gold.sql", &spider_gold());
    let results = format!("{dir}/verdicts.jsonl");
    let args = |limit: bool| {
        let mut a = vec![
            "eval".to_owned(),
            "--dataset".to_owned(),
            spider_slice(),
            "--predictions".to_owned(),
            file.clone(),
            "--results".to_owned(),
            results.clone(),
            "--json".to_owned(),
        ];
        if limit {
            a.extend(["--limit".to_owned(), "20".to_owned()]);
        }
        a
    };
    let first = args(true);
    let first: Vec<&str> = first.iter().map(String::as_str).collect();
    let out = steward(&first, &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(json_of(&out)["total"], 20);
    assert_eq!(verdicts(&results).len(), 20);

    let second = args(false);
    let second: Vec<&str> = second.iter().map(String::as_str).collect();
    let out = steward(&second, &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("20 of 259 already scored"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(json_of(&out)["total"], 259);
    let log = verdicts(&results);
    let counts = id_counts(&log);
    assert_eq!(log.len(), 259);
    assert_eq!(counts.len(), 259);
    assert!(counts.values().all(|&n| n == 1));

    // --fresh starts over.
    let mut fresh = second.clone();
    fresh.extend(["--fresh", "--limit", "3"]);
    let out = steward(&fresh, &[], "");
    assert_eq!(json_of(&out)["total"], 3);
    assert_eq!(verdicts(&results).len(), 3);
}

#[test]
fn a_killed_run_resumes_without_scoring_a_question_twice() {
    // The first 40 predictions are slow (a recursive count), the rest the gold: the run is killed while it
    // works through the slow ones.
    let slow = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000) \
                SELECT count(*) FROM c";
    let mut lines = spider_gold();
    for line in lines.iter_mut().take(40) {
        *line = slow.to_owned();
    }
    let (dir, file) = predictions("slow.sql", &lines);
    let results = format!("{dir}/verdicts.jsonl");
    let args = [
        "eval",
        "--dataset",
        &spider_slice(),
        "--predictions",
        &file,
        "--results",
        &results,
        "--json",
    ];
    let mut child = steward_command(&args, &[]).spawn().unwrap();
    let started = Instant::now();
    let lines_in = |path: &str| {
        std::fs::read_to_string(path)
            .map(|t| t.matches('\n').count())
            .unwrap_or(0)
    };
    while lines_in(&results) < 5 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no 5 verdicts in 2 minutes"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it could be killed"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let scored = lines_in(&results);
    assert!((5..259).contains(&scored), "{scored}");

    let out = steward(&args, &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("of 259 already scored"), "{stderr}");
    let json = json_of(&out);
    assert_eq!(json["total"], 259);
    assert_eq!(json["correct"], 259 - 40);
    let log = verdicts(&results);
    let counts = id_counts(&log);
    assert_eq!(counts.len(), 259);
    assert!(
        counts.values().all(|&n| n == 1),
        "{:?}",
        counts.iter().filter(|(_, n)| **n > 1).collect::<Vec<_>>()
    );
}

const TWO_QUESTIONS: &str = "\
name: two demo questions
database: demo
questions:
  - id: grinders
    question: Which grinders do we sell?
    sql: SELECT name FROM products WHERE category = 'Grinders'
    tags: [lookup]
    difficulty: easy
  - id: germany
    question: Which customers live in Germany?
    sql: SELECT name FROM customers WHERE country = 'Germany'
    tags: [lookup, geography]
    difficulty: medium
";

#[tokio::test]
async fn an_agent_answers_on_the_demo_database() {
    let dir = scratch_dir("eval-agent");
    let db = format!("{dir}/demo.sqlite");
    let out = steward(&["demo", "--db", &db], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let dataset = format!("{dir}/two.yaml");
    std::fs::write(&dataset, TWO_QUESTIONS).unwrap();
    let gold = r#"{"sql": "SELECT name FROM products WHERE category = 'Grinders'"}"#;
    let wrong = r#"{"sql": "SELECT name FROM customers WHERE country = 'France'"}"#;
    let server = mock_openai(vec![
        tool_reply("call_1", "run_sql", gold),
        text_reply("We sell the grinders listed above."),
        tool_reply("call_2", "run_sql", wrong),
        text_reply("These customers live in Germany."),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let results = format!("{dir}/verdicts.jsonl");
    let report = format!("{dir}/report");
    let args = [
        "eval",
        "--dataset",
        &dataset,
        "--db",
        &db,
        "--model",
        "openai:gpt-4o-mini",
        "--concurrency",
        "1",
        "--results",
        &results,
        "--report",
        &report,
    ];
    let env = [
        ("OPENAI_BASE_URL", base.as_str()),
        ("OPENAI_API_KEY", "test"),
    ];
    let out = steward(&args, &env, "");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("analyst on openai:gpt-4o-mini"), "{stdout}");
    assert!(
        stdout.contains("overall            | 2         | 1       | 50.0 %"),
        "{stdout}"
    );
    assert!(
        stdout.contains("model calls: 4 (2.0 per question)"),
        "{stdout}"
    );

    // Two model calls per question: the query, then the answer.
    let bodies = bodies(&server).await;
    assert_eq!(bodies.len(), 4);
    assert_eq!(
        bodies[0]["messages"][1]["content"],
        "Which grinders do we sell?"
    );
    let tools: Vec<&str> = bodies[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"run_sql"), "{tools:?}");

    let log = verdicts(&results);
    assert_eq!(log.len(), 2);
    let by_id: BTreeMap<&str, &Value> =
        log.iter().map(|v| (v["id"].as_str().unwrap(), v)).collect();
    let right = by_id["grinders"];
    assert_eq!(right["correct"], true);
    assert_eq!(
        right["predicted_sql"],
        "SELECT name FROM products WHERE category = 'Grinders'"
    );
    assert_eq!(right["answer"], "We sell the grinders listed above.");
    let wrong = by_id["germany"];
    assert_eq!(wrong["correct"], false);
    assert_eq!(
        wrong["predicted_sql"],
        "SELECT name FROM customers WHERE country = 'France'"
    );
    assert!(wrong["error"].is_null(), "the query ran: {wrong}");
    for v in [right, wrong] {
        assert_eq!(v["attempts"], 1);
        assert_eq!(v["model_calls"], 2);
        assert_eq!(v["tokens"], 170 + 215);
        assert!(v["rows"].as_u64().unwrap() > 0);
        assert!(v["cost_usd"].as_f64().unwrap() > 0.0);
    }

    // The report: the four files, an SVG chart, and JSON with the tags.
    let svg = std::fs::read_to_string(format!("{report}/chart.svg")).unwrap();
    assert!(svg.starts_with("<svg"), "{svg}");
    assert!(svg.trim_end().ends_with("</svg>"));
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{report}/summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["correct"], 1);
    assert_eq!(summary["by_tag"]["geography"]["total"], 1);
    assert_eq!(summary["by_tag"]["geography"]["accuracy"], 0.0);
    assert_eq!(summary["by_tag"]["lookup"]["accuracy"], 0.5);
    let markdown = std::fs::read_to_string(format!("{report}/summary.md")).unwrap();
    assert!(markdown.contains("**50.0 %** (1 of 2)"), "{markdown}");
    assert_eq!(
        std::fs::read_to_string(format!("{report}/verdicts.jsonl"))
            .unwrap()
            .lines()
            .count(),
        2
    );

    // A rerun asks the model nothing: both questions are scored.
    let out = steward(&args, &env, "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("2 of 2 already scored"));
    assert_eq!(server.received_requests().await.unwrap().len(), 4);
}

#[test]
fn the_report_folder_holds_four_files() {
    let (dir, file) = predictions("gold.sql", &spider_gold());
    let report = format!("{dir}/report");
    let out = steward(
        &[
            "eval",
            "--dataset",
            &spider_slice(),
            "--predictions",
            &file,
            "--results",
            &format!("{dir}/verdicts.jsonl"),
            "--limit",
            "30",
            "--report",
            &report,
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut names: Vec<String> = std::fs::read_dir(&report)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["chart.svg", "summary.json", "summary.md", "verdicts.jsonl"]
    );
    let svg = std::fs::read_to_string(Path::new(&report).join("chart.svg")).unwrap();
    assert!(svg.starts_with("<svg"));
    assert!(svg.contains("</svg>"));
    let summary: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(&report).join("summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(summary["total"], 30);
    assert_eq!(summary["accuracy"], 1.0);
}

#[test]
fn errors_say_what_to_do() {
    let data = scratch_dir("data");
    let bench = testdata()
        .join("steward-bench/demo.yaml")
        .display()
        .to_string();
    // No demo database yet.
    let out = steward(
        &["eval", "--dataset", &bench, "--model", "openai:gpt-4o-mini"],
        &[("XDG_DATA_HOME", &data)],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("run `steward demo` first"),
        "{}",
        text(&out.stderr)
    );
    // A predictions file of the wrong length.
    let (_, file) = predictions("short.sql", &["SELECT 1".to_owned()]);
    let out = steward(
        &["eval", "--dataset", &spider_slice(), "--predictions", &file],
        &[("XDG_DATA_HOME", &data)],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("1 predictions for 259 questions"),
        "{}",
        text(&out.stderr)
    );
    // A data set that is not one.
    let out = steward(
        &[
            "eval",
            "--dataset",
            "/nonexistent/questions.txt",
            "--predictions",
            &file,
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot load the data set"));
    // A tag no question has.
    let out = steward(
        &[
            "eval",
            "--dataset",
            &bench,
            "--predictions",
            &file,
            "--tag",
            "nope",
        ],
        &[("XDG_DATA_HOME", &data)],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no question has the tag nope; the tags are: aggregate"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_gold_sql_that_fails_is_a_fault_of_the_data_set() {
    let dir = scratch_dir("eval-gold");
    let db = format!("{dir}/demo.sqlite");
    let out = steward(&["demo", "--db", &db], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let dataset = format!("{dir}/broken.yaml");
    std::fs::write(
        &dataset,
        "database: demo\nquestions:\n  - id: broken\n    question: How many widgets?\n    sql: SELECT count(*) FROM widgets\n  - id: fine\n    question: How many customers?\n    sql: SELECT count(*) FROM customers\n",
    )
    .unwrap();
    let (_, file) = predictions(
        "p.sql",
        &[
            "SELECT count(*) FROM customers".to_owned(),
            "SELECT count(*) FROM customers".to_owned(),
        ],
    );
    let out = steward(
        &[
            "eval",
            "--dataset",
            &dataset,
            "--db",
            &db,
            "--predictions",
            &file,
            "--results",
            &format!("{dir}/v.jsonl"),
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        stdout.contains("overall | 2         | 1       | 50.0 %"),
        "{stdout}"
    );
    assert!(stdout.contains("prediction errors: 0"), "{stdout}");
    assert!(stdout.contains("gold SQL failed: 1"), "{stdout}");
    assert!(
        stderr.contains("broken: data set error in question broken"),
        "{stderr}"
    );
}

const STRUCTURED_AND_ANSWERED: &str = "\
database: demo
questions:
  - id: grinders
    question: Which grinders do we sell?
    sql: SELECT name FROM products WHERE category = 'Grinders'
  - id: email
    question: What is the email address of customer number 1?
    answer: ada.lovelace@example.com
";

#[tokio::test]
async fn a_structured_query_and_an_answer_without_sql_are_scored_too() {
    let dir = scratch_dir("eval-structured");
    let db = format!("{dir}/demo.sqlite");
    let out = steward(&["demo", "--db", &db], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let dataset = format!("{dir}/q.yaml");
    std::fs::write(&dataset, STRUCTURED_AND_ANSWERED).unwrap();
    let query_table = r#"{"table": "products", "columns": ["name"], "filters": [{"column": "category", "op": "eq", "value": "Grinders"}]}"#;
    let server = mock_openai(vec![
        tool_reply("call_1", "query_table", query_table),
        text_reply("We sell these grinders."),
        text_reply("Customer 1's email address is ada.lovelace@example.com."),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let results = format!("{dir}/verdicts.jsonl");
    let out = steward(
        &[
            "eval",
            "--dataset",
            &dataset,
            "--db",
            &db,
            "--model",
            "openai:gpt-4o-mini",
            "--results",
            &results,
            "--json",
        ],
        &[("OPENAI_BASE_URL", &base)],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json = json_of(&out);
    assert_eq!(
        (json["total"].as_u64(), json["correct"].as_u64()),
        (Some(2), Some(2)),
        "{json}"
    );
    assert_eq!(json["model_calls"], 3);
    let log = verdicts(&results);
    let structured = log.iter().find(|v| v["id"] == "grinders").unwrap();
    assert!(
        structured["predicted_sql"]
            .as_str()
            .unwrap()
            .starts_with("SELECT \"name\" FROM \"products\""),
        "{structured}"
    );
    assert_eq!(structured["attempts"], 1);
    let answered = log.iter().find(|v| v["id"] == "email").unwrap();
    assert_eq!(answered["correct"], true);
    assert!(answered["predicted_sql"].is_null());
    assert_eq!(answered["attempts"], 0);
}

/// With `--store`, an eval's runs go through the same recorded path as any other surface: each tool call is in
/// the audit trail, marked `eval`, for the eval's principal.
#[tokio::test]
async fn an_eval_with_a_store_is_in_the_audit_trail() {
    let (dir, db) = demo_in("eval-store");
    let dataset = format!("{dir}/q.yaml");
    std::fs::write(&dataset, STRUCTURED_AND_ANSWERED).unwrap();
    let query_table = r#"{"table": "products", "columns": ["name"], "filters": [{"column": "category", "op": "eq", "value": "Grinders"}]}"#;
    let server = mock_openai(vec![
        tool_reply("call_1", "query_table", query_table),
        text_reply("We sell these grinders."),
        text_reply("Customer 1's email address is ada.lovelace@example.com."),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let store = format!("{dir}/store.sqlite");
    let out = steward(
        &[
            "eval",
            "--dataset",
            &dataset,
            "--db",
            &db,
            "--model",
            "openai:gpt-4o-mini",
            "--store",
            &store,
        ],
        &[("OPENAI_BASE_URL", &base)],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = steward(&["audit", "list", "--json", "--store", &store], &[], "");
    let records: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(records.len(), 1, "{records:#?}");
    assert_eq!(records[0]["tool"], "query_table");
    assert_eq!(records[0]["surface"], "eval");
    assert_eq!(records[0]["status"], "ok");
    let out = steward(&["audit", "verify", "--store", &store], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

/// The default verdict log belongs to the content scored: `runs/b/pred.sql` after `runs/a/pred.sql` (same
/// name, other SQL) is scored anew, and so is a file rewritten in place; with a fixed `--results`, a logged
/// verdict for other SQL is scored again rather than taken.
#[test]
fn the_same_file_name_with_other_content_scores_the_new_content() {
    let gold = spider_gold();
    let dir = scratch_dir("eval-content");
    let data = format!("{dir}/data");
    let env = [("XDG_DATA_HOME", data.as_str())];
    for run in ["a", "b"] {
        std::fs::create_dir_all(format!("{dir}/runs/{run}")).unwrap();
    }
    let a = format!("{dir}/runs/a/pred.sql");
    let b = format!("{dir}/runs/b/pred.sql");
    std::fs::write(&a, gold.join("\n") + "\n").unwrap();
    std::fs::write(&b, shifted(&gold).join("\n") + "\n").unwrap();
    let score = |file: &str, extra: &[&str]| {
        let mut args = vec![
            "eval",
            "--dataset",
            &*Box::leak(spider_slice().into_boxed_str()),
            "--predictions",
            file,
            "--json",
        ];
        args.extend_from_slice(extra);
        let out = steward(&args, &env, "");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        (json_of(&out), text(&out.stderr))
    };
    let (first, _) = score(&a, &[]);
    assert_eq!(first["correct"], 259);
    let (second, stderr) = score(&b, &[]);
    assert!(!stderr.contains("already scored"), "{stderr}");
    assert!(second["correct"].as_u64().unwrap() < 259, "{second}");
    // Rewritten in place: b now holds the gold (with a trailing blank line: other bytes than a's).
    std::fs::write(&b, gold.join("\n") + "\n\n").unwrap();
    let (third, stderr) = score(&b, &[]);
    assert!(!stderr.contains("already scored"), "{stderr}");
    assert_eq!(third["correct"], 259);
    // Unchanged: resumed.
    let (_, stderr) = score(&b, &[]);
    assert!(stderr.contains("259 of 259 already scored"), "{stderr}");

    // A fixed log: the verdicts of other SQL are scored again, the new ones read.
    let results = format!("{dir}/fixed.jsonl");
    std::fs::write(&b, shifted(&gold).join("\n") + "\n").unwrap();
    let (before, _) = score(&b, &["--results", &results, "--limit", "10"]);
    std::fs::write(&b, gold.join("\n") + "\n").unwrap();
    let (after, stderr) = score(&b, &["--results", &results, "--limit", "10"]);
    // Spider repeats a query for paraphrased questions: those predictions did not change and stand.
    assert!(!stderr.contains("10 of 10 already scored"), "{stderr}");
    assert!(before["correct"].as_u64().unwrap() < 10);
    assert_eq!(after["correct"], 10);
    // Scored with other options: again.
    let (_, stderr) = score(
        &b,
        &[
            "--results",
            &results,
            "--limit",
            "10",
            "--semantics",
            "steward",
        ],
    );
    assert!(!stderr.contains("already scored"), "{stderr}");
}

/// `--misses` lists each wrong question with both SQL texts and both results' first rows.
#[test]
fn misses_list_both_sql_texts_and_first_rows() {
    let gold = spider_gold();
    let mut lines = gold.clone();
    lines[0] = "SELECT count(*) + 1 FROM singer".to_owned();
    lines[1] = "SELECT nope FROM singer".to_owned();
    let (dir, file) = predictions("pred.sql", &lines);
    let out = steward(
        &[
            "eval",
            "--dataset",
            &spider_slice(),
            "--predictions",
            &file,
            "--results",
            &format!("{dir}/v.jsonl"),
            "--limit",
            "3",
            "--misses",
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("2 wrong:"), "{stdout}");
    assert!(
        stdout.contains("[0] How many singers do we have?"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("  gold:      {}", gold[0])),
        "{stdout}"
    );
    assert!(
        stdout.contains("  predicted: SELECT count(*) + 1 FROM singer"),
        "{stdout}"
    );
    assert!(stdout.contains("  gold row:      [6]"), "{stdout}");
    assert!(stdout.contains("  predicted row: [7]"), "{stdout}");
    assert!(
        stdout.contains("[1] ") && stdout.contains("(failed)") && stdout.contains("nope"),
        "{stdout}"
    );
    assert!(!stdout.contains("[2] "), "{stdout}");
}
