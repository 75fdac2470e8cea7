//! Reading predictions files: one query per line (Spider's `SQL\tdb_id` too), BIRD's JSON object, a JSON
//! list; the count must match the data set.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use steward_eval::read_predictions;

fn file(name: &str, content: &str) -> std::path::PathBuf {
    let path = common::scratch("pred").with_extension(name);
    std::fs::write(&path, content).unwrap();
    path
}

#[test]
fn lines_with_or_without_a_database_id() {
    let path = file(
        "sql",
        "SELECT 1\nSELECT 2\tconcert_singer\r\n\nSELECT 'a\tb'\n\n\n",
    );
    assert_eq!(
        read_predictions(&path, 4).unwrap(),
        ["SELECT 1", "SELECT 2", "", "SELECT 'a"]
    );
    let err = read_predictions(&path, 5).unwrap_err().to_string();
    assert!(err.contains("4 predictions for 5 questions"), "{err}");
}

#[test]
fn bird_json_and_lists() {
    let bird = file(
        "json",
        r#"{"1": "SELECT 2\t----- bird -----\tdb", "0": "SELECT 1\t----- bird -----\tdb"}"#,
    );
    assert_eq!(
        read_predictions(&bird, 2).unwrap(),
        ["SELECT 1", "SELECT 2"]
    );
    let err = read_predictions(&bird, 3).unwrap_err().to_string();
    assert!(err.contains("no prediction for question 2"), "{err}");
    let list = file("json", r#"["SELECT 1", null]"#);
    assert_eq!(read_predictions(&list, 2).unwrap(), ["SELECT 1", ""]);
    let bad = file("json", r#"{"0": 5}"#);
    assert!(
        read_predictions(&bad, 1)
            .unwrap_err()
            .to_string()
            .contains("not a string")
    );
    let missing = common::scratch("none.sql");
    assert!(read_predictions(&missing, 1).is_err());
}
