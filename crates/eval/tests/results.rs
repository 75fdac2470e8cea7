//! The verdict log (one line per verdict, synced; resumable after a half-written line) and the summary:
//! figures, Markdown and SVG.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Write;

use steward_eval::{Item, Summary, Verdict, VerdictLog, finished_ids, read_verdicts};

fn verdict(
    id: &str,
    correct: bool,
    tags: &[&str],
    difficulty: Option<&str>,
    latency_ms: u64,
) -> Verdict {
    let item = Item {
        id: id.into(),
        question: format!("question {id}"),
        gold: vec!["SELECT 1".into()],
        gold_text: None,
        expected_answer: None,
        db: "db".into(),
        tags: tags.iter().map(|t| (*t).to_owned()).collect(),
        difficulty: difficulty.map(str::to_owned),
        evidence: None,
    };
    let mut v = Verdict::for_item(&item);
    v.correct = correct;
    v.latency_ms = latency_ms;
    v.attempts = 1;
    v.predicted_sql = Some("SELECT 1".into());
    v
}

#[test]
fn the_log_resumes_after_a_half_written_line() {
    let path = common::scratch("verdicts.jsonl");
    assert!(
        finished_ids(&path).unwrap().is_empty(),
        "no file: nothing finished"
    );
    let mut log = VerdictLog::open(&path).unwrap();
    log.append(&verdict("a", true, &[], None, 5)).unwrap();
    log.append(&verdict("b", false, &[], None, 7)).unwrap();
    drop(log);
    // A run killed while writing its third line.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(br#"{"id":"c","question":"#).unwrap();
    drop(file);
    let read = read_verdicts(&path).unwrap();
    assert_eq!(read.len(), 2);
    assert_eq!(read[1], verdict("b", false, &[], None, 7));
    assert_eq!(
        finished_ids(&path).unwrap().into_iter().collect::<Vec<_>>(),
        ["a", "b"]
    );
    // Reopening cuts the half line off; the next verdict has a line of its own.
    let mut log = VerdictLog::open(&path).unwrap();
    log.append(&verdict("c", true, &[], None, 9)).unwrap();
    let ids: Vec<String> = read_verdicts(&path)
        .unwrap()
        .into_iter()
        .map(|v| v.id)
        .collect();
    assert_eq!(ids, ["a", "b", "c"]);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 3);
    assert!(text.ends_with('\n'));
    // A damaged line in the middle is an error naming it.
    std::fs::write(&path, text.replacen("{\"id\":\"b\"", "{\"id\":", 1)).unwrap();
    let err = read_verdicts(&path).unwrap_err().to_string();
    assert!(
        err.contains(":2:") && err.contains("not a verdict"),
        "{err}"
    );
}

#[test]
fn summary_figures() {
    let mut verdicts = vec![
        verdict("1", true, &["join", "ratio"], Some("easy"), 10),
        verdict("2", false, &["join"], Some("hard"), 30),
        verdict("3", true, &[], Some("medium"), 20),
        verdict("4", true, &["ratio"], None, 40),
    ];
    verdicts[1].error = Some("no such column".into());
    verdicts[2].tokens = 100;
    verdicts[2].model_calls = 2;
    verdicts[2].cost_usd = Some(0.25);
    verdicts[3].gold_error = Some("gold failed".into());
    let s = Summary::of(&verdicts);
    assert_eq!((s.total, s.correct, s.errors, s.gold_errors), (4, 3, 1, 1));
    assert_eq!(s.accuracy, 0.75);
    assert_eq!((s.by_tag["join"].total, s.by_tag["join"].correct), (2, 1));
    assert_eq!(s.by_tag["ratio"].accuracy, 1.0);
    assert_eq!(
        s.difficulties().iter().map(|(d, _)| *d).collect::<Vec<_>>(),
        ["easy", "medium", "hard"]
    );
    assert_eq!(
        (s.latency.p50_ms, s.latency.p95_ms, s.latency.max_ms),
        (20, 40, 40)
    );
    assert_eq!(s.latency.mean_ms, 25.0);
    assert_eq!((s.tokens, s.model_calls, s.cost_usd), (100, 2, Some(0.25)));
    let empty = Summary::of(&[]);
    assert_eq!((empty.total, empty.accuracy), (0, 0.0));
    assert!(empty.to_svg().contains("no questions"));
}

#[test]
fn markdown_and_svg() {
    let verdicts = vec![
        verdict("1", true, &["a|b"], Some("<script>alert(1)</script>"), 10),
        verdict("2", false, &["x & y"], Some("easy"), 1500),
    ];
    let s = Summary::of(&verdicts);
    let md = s.to_markdown();
    assert!(md.contains("**50.0 %** (1 of 2)"), "{md}");
    assert!(md.contains("| a\\|b | 1 | 1 | 100.0 % |"), "{md}");
    assert!(md.contains("| easy | 1 | 0 | 0.0 % |"), "{md}");
    let svg = s.to_svg();
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.trim_end().ends_with("</svg>"));
    assert!(!svg.contains("<script"), "text is escaped");
    assert!(svg.contains("&lt;script&gt;"));
    assert!(!svg.contains("href"), "self-contained");
    // Bars for each difficulty and for all, a histogram of latencies.
    assert!(svg.contains(">all<") && svg.contains(">easy<"));
    assert!(svg.contains(">1500<") && svg.contains(">10<"));
    // Balanced elements.
    assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count());
}
