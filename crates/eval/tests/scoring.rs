//! Scoring one question on a real SQLite database: gold alternatives, failing predictions, failing gold
//! (a data set error), results too large to score, questions with only an answer, and the Spider scorer's
//! own edits (DISTINCT removed unless kept, `> =` joined).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use steward_eval::{
    Item, Rows, ScoreOptions, Semantics, Verdict, score_item, score_item_with, score_result_with,
};
use steward_sql::{Database, QueryLimits};

async fn shop() -> Database {
    let path = common::scratch("shop").with_extension("sqlite");
    let db = Database::connect(&format!("sqlite://{}?mode=rwc", path.display()))
        .await
        .unwrap();
    db.execute_script(
        "CREATE TABLE c (id INTEGER PRIMARY KEY, name TEXT, city TEXT, spent REAL);
         INSERT INTO c VALUES (1, 'Ada', 'London', 10.5), (2, 'Alan', 'London', 20), (3, 'Grace', 'Paris', NULL);",
    )
    .await
    .unwrap();
    db
}

fn item(gold: &[&str]) -> Item {
    Item {
        id: "q1".into(),
        question: "?".into(),
        gold: gold.iter().map(|s| (*s).to_owned()).collect(),
        gold_text: None,
        expected_answer: None,
        db: "shop".into(),
        tags: vec!["t".into()],
        difficulty: Some("easy".into()),
        evidence: None,
    }
}

async fn score(gold: &[&str], predicted: &str, semantics: Semantics) -> Verdict {
    let db = shop().await;
    let v = score_item(&item(gold), predicted, &db, semantics).await;
    db.close().await;
    v
}

#[tokio::test]
async fn any_gold_alternative_may_match() {
    let gold = [
        "SELECT name FROM c WHERE city = 'Paris'",
        "SELECT name, city FROM c WHERE city = 'London'",
    ];
    for semantics in Semantics::ALL {
        let v = score(&gold, "SELECT city, name FROM c WHERE spent > 1", semantics).await;
        // Spider and defog match the second alternative (columns in any order); BIRD wants them in order.
        assert_eq!(
            v.correct,
            semantics != Semantics::Bird,
            "{semantics}: {v:?}"
        );
        assert_eq!((v.rows, v.attempts, v.error.as_deref()), (Some(2), 1, None));
        assert_eq!(
            (v.tags.as_slice(), v.difficulty.as_deref()),
            (&["t".to_owned()][..], Some("easy"))
        );
        let v = score(&gold, "SELECT name, city FROM c WHERE id < 3", semantics).await;
        assert!(v.correct, "{semantics}");
        let v = score(&gold, "SELECT name FROM c", semantics).await;
        assert!(!v.correct, "{semantics}");
    }
}

#[tokio::test]
async fn a_failing_prediction_is_wrong_with_its_error() {
    let v = score(&["SELECT 1"], "SELECT nope FROM c", Semantics::Spider).await;
    assert!(!v.correct);
    assert!(v.error.as_deref().unwrap().contains("nope"), "{v:?}");
    assert_eq!((v.rows, v.gold_error.as_deref()), (None, None));
    let v = score(&["SELECT 1"], "  ", Semantics::Spider).await;
    assert_eq!(v.error.as_deref(), Some("no SQL was predicted"));
    // Read-only: a write is refused by the engine.
    let v = score(&["SELECT 1"], "DELETE FROM c", Semantics::Bird).await;
    assert!(!v.correct && v.error.is_some(), "{v:?}");
}

#[tokio::test]
async fn a_failing_gold_is_a_data_set_error() {
    let v = score(&["SELECT missing FROM c"], "SELECT 1", Semantics::Spider).await;
    assert!(!v.correct && v.error.is_none());
    let gold_error = v.gold_error.unwrap();
    assert!(
        gold_error.contains("data set error in question q1") && gold_error.contains("missing"),
        "{gold_error}"
    );
    // With alternatives, the one that fails is named, and another may still match (Steward's rule)…
    let v = score(
        &["SELECT missing FROM c", "SELECT 1"],
        "SELECT 1",
        Semantics::Steward,
    )
    .await;
    assert!(v.correct && v.gold_error.is_none(), "{v:?}");
    // …while defog's scorer raises on the failing alternative: wrong.
    let v = score(
        &["SELECT missing FROM c", "SELECT 1"],
        "SELECT 1",
        Semantics::Defog,
    )
    .await;
    assert!(!v.correct && v.gold_error.is_some(), "{v:?}");
    let v = score(
        &["SELECT 2", "SELECT missing FROM c"],
        "SELECT 1",
        Semantics::Defog,
    )
    .await;
    assert!(v.gold_error.unwrap().contains("gold alternative 2 failed"));
}

/// Python's sqlite3 runs one statement: the official Spider scorer keeps the first statement
/// (`remove_distinct` takes `sqlparse.parse(s)[0]`), BIRD's and Spider's `--keep_distinct` fail on anything
/// after it, `;;` included. Steward's own rule runs the text as Steward does (`;;` is fine, a second
/// statement is refused).
#[tokio::test]
async fn statements_after_the_first_as_the_official_scorers() {
    let gold = ["SELECT name FROM c WHERE id = 1"];
    let trailing = "SELECT name FROM c WHERE id = 1; SELECT 2";
    let doubled = "SELECT name FROM c WHERE id = 1;;";
    assert!(score(&gold, trailing, Semantics::Spider).await.correct);
    assert!(score(&gold, doubled, Semantics::Spider).await.correct);
    let db = shop().await;
    let keep = ScoreOptions::new(Semantics::Spider).with_keep_distinct(true);
    for sql in [trailing, doubled] {
        let v = score_item_with(&item(&gold), sql, &db, &keep).await;
        assert!(
            !v.correct && v.error.as_deref().unwrap().contains("one statement"),
            "{v:?}"
        );
    }
    db.close().await;
    for sql in [trailing, doubled] {
        let v = score(&gold, sql, Semantics::Bird).await;
        assert!(
            !v.correct && v.error.as_deref().unwrap().contains("one statement"),
            "{v:?}"
        );
    }
    assert!(score(&gold, doubled, Semantics::Steward).await.correct);
    assert!(!score(&gold, trailing, Semantics::Steward).await.correct);
    // Spider's evaluation.py replaces every `value` in the prediction by `1`.
    assert!(
        !score(&["SELECT 'value'"], "SELECT 'value'", Semantics::Spider)
            .await
            .correct
    );
    assert!(
        score(&["SELECT 'value'"], "SELECT 'value'", Semantics::Bird)
            .await
            .correct
    );
}

#[tokio::test]
async fn results_past_the_caps_cannot_be_scored() {
    let db = shop().await;
    let options = ScoreOptions::new(Semantics::Spider).with_limits(QueryLimits {
        max_rows: 2,
        ..ScoreOptions::new(Semantics::Spider).limits
    });
    let v = score_item_with(
        &item(&["SELECT id FROM c"]),
        "SELECT id FROM c",
        &db,
        &options,
    )
    .await;
    assert!(!v.correct);
    assert!(v.error.unwrap().starts_with("too many rows to score"));
    let v = score_item_with(&item(&["SELECT id FROM c"]), "SELECT 1", &db, &options).await;
    assert!(v.gold_error.unwrap().contains("too many rows to score"));
    db.close().await;
}

#[tokio::test]
async fn a_question_with_only_an_answer() {
    let db = shop().await;
    let mut question = item(&[]);
    question.expected_answer = Some("20".into());
    let v = score_item(
        &question,
        "SELECT name, spent FROM c WHERE id = 2",
        &db,
        Semantics::Defog,
    )
    .await;
    assert!(v.correct, "{v:?}");
    let v = score_item(&question, "SELECT spent FROM c", &db, Semantics::Defog).await;
    assert!(!v.correct, "three rows are not one answer");
    question.expected_answer = None;
    let v = score_item(&question, "SELECT 1", &db, Semantics::Defog).await;
    assert!(
        v.gold_error
            .unwrap()
            .contains("neither gold SQL nor an expected answer")
    );
    db.close().await;
}

#[tokio::test]
async fn spider_removes_distinct_unless_kept() {
    let db = shop().await;
    let gold = item(&["SELECT DISTINCT city FROM c"]);
    let spider = ScoreOptions::new(Semantics::Spider);
    // The official default runs both without DISTINCT: the duplicate London is on both sides.
    let v = score_item_with(&gold, "SELECT city FROM c", &db, &spider).await;
    assert!(v.correct);
    let kept = spider.with_keep_distinct(true);
    let v = score_item_with(&gold, "SELECT city FROM c", &db, &kept).await;
    assert!(!v.correct);
    let v = score_item_with(&gold, "SELECT DISTINCT city FROM c", &db, &kept).await;
    assert!(v.correct);
    // `> =` is joined, as the official does, so SQLite can run it.
    let v = score_item_with(
        &item(&["SELECT id FROM c WHERE spent >= 11"]),
        "SELECT id FROM c WHERE spent > = 11",
        &db,
        &spider,
    )
    .await;
    assert!(v.correct, "{v:?}");
    // The other semantics run the SQL as written.
    let v = score_item(
        &item(&["SELECT 1"]),
        "SELECT 1 WHERE 2 > = 1",
        &db,
        Semantics::Bird,
    )
    .await;
    assert!(v.error.is_some());
    db.close().await;
}

#[tokio::test]
async fn nulls_and_numbers_from_a_database() {
    let db = shop().await;
    let gold = item(&["SELECT name, spent FROM c"]);
    for semantics in Semantics::ALL {
        // 20 stored as REAL 20.0 against an integer literal; NULL against NULL; 10.5 against text '10.50':
        // equal for Steward only (for Python, the text '10.50' is not the number 10.5).
        let v = score_item(
            &gold,
            "SELECT name, CASE id WHEN 1 THEN '10.50' WHEN 2 THEN 20 END FROM c",
            &db,
            semantics,
        )
        .await;
        assert_eq!(
            v.correct,
            semantics == Semantics::Steward,
            "{semantics}: {v:?}"
        );
        let v = score_item(
            &gold,
            "SELECT name, CASE id WHEN 1 THEN 10.5 WHEN 2 THEN 20 END FROM c",
            &db,
            semantics,
        )
        .await;
        assert!(v.correct, "{semantics}: {v:?}");
        let v = score_item(
            &gold,
            "SELECT name, COALESCE(spent, 0) FROM c",
            &db,
            semantics,
        )
        .await;
        assert!(!v.correct, "{semantics}: NULL is not 0");
    }
    db.close().await;
}

#[tokio::test]
async fn a_result_already_produced_is_scored_as_it_is() {
    // An agent's structured query: its SQL has placeholders, its rows are what it returned.
    let db = shop().await;
    let options = ScoreOptions::new(Semantics::Defog);
    let item = item(&["SELECT name FROM c WHERE city = 'London'"]);
    let sql = "SELECT \"name\" FROM \"c\" WHERE \"city\" = ? LIMIT 100";
    let right = Rows::new(
        vec!["name".into()],
        vec![vec!["Alan".into()], vec!["Ada".into()]],
    );
    let v = score_result_with(&item, sql, &right, &db, &options).await;
    assert!(v.correct, "{v:?}");
    assert_eq!(
        (v.predicted_sql.as_deref(), v.rows, v.attempts, v.latency_ms),
        (Some(sql), Some(2), 1, 0)
    );
    let wrong = Rows::new(vec!["name".into()], vec![vec!["Grace".into()]]);
    let v = score_result_with(&item, sql, &wrong, &db, &options).await;
    assert!(
        !v.correct && v.error.is_none() && v.gold_error.is_none(),
        "{v:?}"
    );
    // The gold still runs: a failing gold is the data set's fault.
    let broken = self::item(&["SELECT name FROM nowhere"]);
    let v = score_result_with(&broken, sql, &right, &db, &options).await;
    assert!(!v.correct && v.gold_error.is_some(), "{v:?}");
    db.close().await;
}
