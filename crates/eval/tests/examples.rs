//! The example-retrieval benchmark on a hand-made data set whose hit@k is known by construction: questions
//! share made-up words (alpha, bravo, …) only with the examples meant to rank above the others, and no
//! database has a catalog, so the ranking is the words' alone.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;

use steward_eval::{
    ExampleQuestion, HitFigures, Split, example_split, measure_examples, sql_skeleton,
};

fn q(db: &str, id: &str, question: &str, sql: &str) -> ExampleQuestion {
    ExampleQuestion {
        id: id.into(),
        db: db.into(),
        question: question.into(),
        sql: sql.into(),
        split: example_split(db),
    }
}

/// db1 and db2 are tuning databases (FNV-1a % 3 is 2 and 1), db3 is held out (0).
fn questions() -> Vec<ExampleQuestion> {
    vec![
        // db1. A's pool is B, C, D (E is the same query, whitespace and case aside): only B shares a word,
        // and B is another kind of query: a miss with two same-skeleton examples in the pool.
        q("db1", "A", "alpha bravo", "SELECT count(*) FROM t1"),
        // B: no other query of its kind.
        q("db1", "B", "alpha bravo charlie", "SELECT name FROM t2"),
        // C and D share `delta` and a skeleton with each other: hit@1 both.
        q("db1", "C", "delta echo", "SELECT count(*) FROM t3"),
        q("db1", "D", "delta foxtrot", "SELECT count(*) FROM t4"),
        // E ranks only B (A, the same query, is not in its pool): a miss.
        q("db1", "E", "alpha golf", "select COUNT(*)\n  from t1;"),
        // db2. P's first example is R1 (every word shared, another kind of query), then R2, its kind:
        // first hit at rank 2.
        q(
            "db2",
            "P",
            "kilo lima mike",
            "SELECT name FROM x WHERE a = 1",
        ),
        q("db2", "R1", "kilo lima mike", "SELECT count(*) FROM x"),
        // R2 ties P and R1 (two words each); the tie goes to the first, P, its kind: hit@1.
        q(
            "db2",
            "R2",
            "kilo lima oscar",
            "SELECT name FROM y WHERE b = 'z'",
        ),
        // db3. S's examples: T1–T3 share two words and are another kind; T4 shares one and is its kind:
        // first hit at rank 4.
        q("db3", "S", "papa quebec", "SELECT a FROM t WHERE b > 1"),
        q("db3", "T1", "papa quebec romeo", "SELECT count(*) FROM t1"),
        q("db3", "T2", "papa quebec romeo", "SELECT count(*) FROM t2"),
        q("db3", "T3", "papa quebec romeo", "SELECT count(*) FROM t3"),
        // T4 shares `papa` with everyone; S has fewer words than T1–T3, so it ranks first: hit@1.
        q("db3", "T4", "papa sierra", "SELECT c FROM u WHERE d > 2"),
    ]
}

fn figures(f: &HitFigures) -> (usize, usize, Vec<usize>) {
    (f.questions, f.with_match, f.hits.clone())
}

#[test]
fn hits_are_what_the_construction_says() {
    assert_eq!(example_split("db1"), Split::Tune);
    assert_eq!(example_split("db2"), Split::Tune);
    assert_eq!(example_split("db3"), Split::Heldout);
    let questions = questions();
    let measured = std::cell::Cell::new(0);
    let report = measure_examples(&questions, &BTreeMap::new(), &|| {
        measured.set(measured.get() + 1)
    });
    assert_eq!(measured.get(), 13);

    let first: BTreeMap<&str, Option<usize>> = report
        .results
        .iter()
        .map(|r| (r.id.as_str(), r.first_hit))
        .collect();
    let expected: BTreeMap<&str, Option<usize>> = [
        ("A", None),
        ("B", None),
        ("C", Some(1)),
        ("D", Some(1)),
        ("E", None),
        ("P", Some(2)),
        ("R1", None),
        ("R2", Some(1)),
        ("S", Some(4)),
        ("T1", Some(1)),
        ("T2", Some(1)),
        ("T3", Some(1)),
        ("T4", Some(1)),
    ]
    .into_iter()
    .collect();
    assert_eq!(first, expected);

    let a = &report.results[0];
    assert_eq!(a.id, "A");
    // E, the same query, is left out of A's pool; C and D are its kind.
    assert_eq!((a.pool, a.matching), (3, 2));
    assert_eq!(a.top.len(), 1);
    assert_eq!(a.top[0].id, "B");
    assert!(!a.top[0].same_skeleton);

    let by_db: BTreeMap<&str, _> = report
        .databases
        .iter()
        .map(|f| (f.name.as_str(), figures(f)))
        .collect();
    assert_eq!(by_db["db1"], (5, 4, vec![2, 2, 2]));
    assert_eq!(by_db["db2"], (3, 2, vec![1, 2, 2]));
    assert_eq!(by_db["db3"], (5, 5, vec![4, 4, 5]));

    let names: Vec<&str> = report.splits.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["tune", "heldout", "all"]);
    assert_eq!(figures(&report.splits[0]), (8, 6, vec![3, 4, 4]));
    assert_eq!(figures(&report.splits[1]), (5, 5, vec![4, 4, 5]));
    let all = &report.splits[2];
    assert_eq!(figures(all), (13, 11, vec![7, 8, 9]));
    assert!((all.hit_at[1] - 8.0 / 13.0).abs() < 1e-12);
    assert!((all.ceiling - 11.0 / 13.0).abs() < 1e-12);

    // The misses: top 3 without the kind though the pool has it.
    let misses: Vec<&str> = report.misses().map(|r| r.id.as_str()).collect();
    assert_eq!(misses, ["A", "E", "S"]);
}

#[test]
fn same_skeleton_means_same_structure() {
    assert_eq!(
        sql_skeleton(r#"SELECT T1.name FROM singer AS T1 WHERE T1.country = "France""#),
        sql_skeleton("select p.title from pets as p where p.kind = 'dog'")
    );
}
