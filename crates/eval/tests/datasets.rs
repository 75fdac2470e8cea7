//! Loading data sets: each format, the format guessed from the path or content, defog's alternatives,
//! where each question's database is, and errors that name the file and the line or field.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};

use steward_eval::{Dataset, EvalError, Format, Semantics};

/// A scratch folder holding `files` (name → content).
fn folder(files: &[(&str, &str)]) -> PathBuf {
    let dir = common::scratch("dataset");
    for (name, content) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    dir
}

fn error(path: &Path, format: Option<Format>) -> String {
    let err: EvalError = Dataset::load(path, format).unwrap_err();
    err.to_string()
}

#[test]
fn spider_by_folder_or_file() {
    let dir = common::testdata().join("spider-slice");
    assert_eq!(Format::guess(&dir).unwrap(), Format::Spider);
    assert_eq!(
        Format::guess(&dir.join("dev.json")).unwrap(),
        Format::Spider
    );
    let by_file = Dataset::load(&dir.join("dev.json"), None).unwrap();
    let by_dir = Dataset::load(&dir, Some(Format::Spider)).unwrap();
    assert_eq!(by_file.items, by_dir.items);
    let first = &by_dir.items[0];
    assert_eq!(
        (
            first.id.as_str(),
            first.db.as_str(),
            first.question.as_str()
        ),
        ("0", "concert_singer", "How many singers do we have?")
    );
    assert_eq!(first.gold, ["SELECT count(*) FROM singer"]);
}

#[test]
fn bird_questions_with_evidence_and_difficulty() {
    let sqlite =
        std::fs::read(common::testdata().join("spider-slice/database/pets_1/pets_1.sqlite"))
            .unwrap();
    let dir = folder(&[(
        "mini_dev_sqlite.json",
        r#"[
  {"question_id": 7, "db_id": "pets_1", "question": "How many pets?", "evidence": "pets are in Pets",
   "SQL": "SELECT count(*) FROM pets", "difficulty": "simple"},
  {"question_id": 8, "db_id": "pets_1", "question": "Heaviest?", "evidence": "",
   "SQL": "SELECT max(weight) FROM pets", "difficulty": "moderate"}
]"#,
    )]);
    std::fs::create_dir_all(dir.join("dev_databases/pets_1")).unwrap();
    std::fs::write(dir.join("dev_databases/pets_1/pets_1.sqlite"), sqlite).unwrap();
    let path = dir.join("mini_dev_sqlite.json");
    assert_eq!(Format::guess(&path).unwrap(), Format::Bird);
    let dataset = Dataset::load(&path, None).unwrap();
    assert_eq!(dataset.semantics, Semantics::Bird);
    let items = &dataset.items;
    assert_eq!(items[0].id, "7");
    assert_eq!(items[0].evidence.as_deref(), Some("pets are in Pets"));
    assert_eq!(items[1].evidence, None);
    assert_eq!(items[1].difficulty.as_deref(), Some("moderate"));
    let url = dataset.database_url(&items[0], None).unwrap();
    assert!(
        url.ends_with("dev_databases/pets_1/pets_1.sqlite?mode=ro"),
        "{url}"
    );
    // The PostgreSQL and MySQL variants of mini-dev hold every database in one: a URL without {db}.
    assert_eq!(
        dataset
            .database_url(&items[0], Some("postgres://postgres@localhost/bird"))
            .unwrap(),
        "postgres://postgres@localhost/bird"
    );
}

#[test]
fn defog_alternatives_are_expanded() {
    let path = common::testdata().join("defog/questions_gen_postgres.csv");
    assert_eq!(Format::guess(&path).unwrap(), Format::Defog);
    let dataset = Dataset::load(&path, None).unwrap();
    assert_eq!(dataset.items.len(), 210);
    let first = &dataset.items[0];
    assert_eq!(first.db, "academic");
    assert_eq!(first.tags, ["group_by"]);
    // `SELECT {author.name,author.aid} FROM author WHERE …`: every non-empty combination.
    assert_eq!(first.gold.len(), 3);
    assert!(
        first.gold[0].starts_with("SELECT author.name FROM author WHERE"),
        "{}",
        first.gold[0]
    );
    assert!(first.gold[1].starts_with("SELECT author.aid FROM author WHERE"));
    assert!(first.gold[2].starts_with("SELECT author.name, author.aid FROM author WHERE"));
    // `…GROUP BY {} …;SELECT {a.aid, a.name}, …;…`: four statements (the last repeats the third), each with
    // its combinations, `{}` filled; repeats dropped.
    let second = &dataset.items[1];
    assert_eq!(second.gold.len(), 9, "{:#?}", second.gold);
    assert!(
        second.gold[2].contains("GROUP BY author.name, author.aid"),
        "{}",
        second.gold[2]
    );
    assert!(
        dataset
            .items
            .iter()
            .all(|i| i.gold.iter().all(|g| !g.contains('{') && !g.contains(';')))
    );
    let total: usize = dataset.items.iter().map(|i| i.gold.len()).sum();
    assert!(total > 300, "{total}");
    // Its databases are on PostgreSQL: without a URL template there is none.
    let err = dataset.database_url(first, None).unwrap_err().to_string();
    assert!(err.contains("postgres://") && err.contains("{db}"), "{err}");
    assert_eq!(
        dataset
            .database_url(first, Some("postgres://postgres@127.0.0.1/{db}"))
            .unwrap(),
        "postgres://postgres@127.0.0.1/academic"
    );
}

#[test]
fn defog_instructions_are_the_evidence() {
    let dir = folder(&[(
        "q.csv",
        "db_name,query_category,question,query,instructions\n\
         shop,basic,\"How many, in all?\",\"SELECT count(*) FROM t WHERE a = ';';SELECT count(a) FROM t\",Count rows\n",
    )]);
    let dataset = Dataset::load(&dir.join("q.csv"), None).unwrap();
    let item = &dataset.items[0];
    assert_eq!(item.question, "How many, in all?");
    assert_eq!(
        item.gold,
        [
            "SELECT count(*) FROM t WHERE a = ';'",
            "SELECT count(a) FROM t"
        ]
    );
    assert_eq!(item.evidence.as_deref(), Some("Count rows"));
}

#[test]
fn steward_yaml() {
    let dir = folder(&[(
        "bench.yaml",
        "database: shop.sqlite\nsemantics: spider\nquestions:\n  - id: 1\n    question: How many?\n    sql: SELECT 1;\n    tags: [aggregate]\n    difficulty: easy\n  - id: two\n    question: Who?\n    answer: 42\n    database: postgres://h/db\n",
    )]);
    std::fs::write(dir.join("shop.sqlite"), b"").unwrap();
    let path = dir.join("bench.yaml");
    assert_eq!(Format::guess(&path).unwrap(), Format::Steward);
    let dataset = Dataset::load(&path, None).unwrap();
    assert_eq!(dataset.semantics, Semantics::Spider);
    let (one, two) = (&dataset.items[0], &dataset.items[1]);
    assert_eq!(
        (one.id.as_str(), one.gold.as_slice()),
        ("1", &["SELECT 1".to_owned()][..])
    );
    assert_eq!(two.expected_answer.as_deref(), Some("42"));
    assert!(two.gold.is_empty());
    let url = dataset.database_url(one, None).unwrap();
    assert!(
        url.starts_with("sqlite://") && url.ends_with("shop.sqlite?mode=ro"),
        "{url}"
    );
    assert_eq!(dataset.database_url(two, None).unwrap(), "postgres://h/db");
    assert_eq!(
        dataset.database_url(one, Some("sqlite:///x/{db}")).unwrap(),
        "sqlite:///x/shop.sqlite"
    );
}

#[test]
fn malformed_data_is_named_by_file_and_line() {
    // Spider: a question without `query`.
    let dir = folder(&[(
        "dev.json",
        "[\n  {\"db_id\": \"a\", \"question\": \"q\", \"query\": \"SELECT 1\"},\n  {\"db_id\": \"a\",\n   \"question\": \"q\"}\n]",
    )]);
    let err = error(&dir.join("dev.json"), Some(Format::Spider));
    assert!(err.contains("dev.json:4") && err.contains("query"), "{err}");

    // defog: no `db_name` column; an empty query on line 3.
    let dir = folder(&[
        ("a.csv", "question,query\nq,SELECT 1\n"),
        ("b.csv", "question,query,db_name\nq,SELECT 1,x\nq2,  ,x\n"),
    ]);
    let err = error(&dir.join("a.csv"), None);
    assert!(err.contains("a.csv:1") && err.contains("db_name"), "{err}");
    let err = error(&dir.join("b.csv"), None);
    assert!(
        err.contains("b.csv:3") && err.contains("question 1"),
        "{err}"
    );

    // Steward: a misspelt key (with its line), a question without gold, duplicate ids, bad semantics.
    let dir = folder(&[
        (
            "typo.yaml",
            "questions:\n  - id: a\n    question: q\n    sq1: SELECT 1\n",
        ),
        ("nogold.yaml", "questions:\n  - id: a\n    question: q\n"),
        (
            "twice.yaml",
            "questions:\n  - {id: a, question: q, sql: SELECT 1}\n  - {id: a, question: r, sql: SELECT 2}\n",
        ),
        ("semantics.yaml", "semantics: exact\nquestions: []\n"),
    ]);
    let err = error(&dir.join("typo.yaml"), None);
    assert!(err.contains("typo.yaml:4") && err.contains("sq1"), "{err}");
    let err = error(&dir.join("nogold.yaml"), None);
    assert!(
        err.contains("nogold.yaml") && err.contains("id `a`") && err.contains("sql"),
        "{err}"
    );
    let err = error(&dir.join("twice.yaml"), None);
    assert!(err.contains("twice.yaml") && err.contains("`a`"), "{err}");
    let err = error(&dir.join("semantics.yaml"), None);
    assert!(err.contains("semantics") && err.contains("exact"), "{err}");

    // Unknown formats, missing files.
    let err = error(&dir.join("notes.txt"), None);
    assert!(err.contains("notes.txt"), "{err}");
    let err = error(&dir.join("missing.yaml"), None);
    assert!(err.contains("missing.yaml"), "{err}");
    let dir = folder(&[("x.json", "[{\"a\": 1}]")]);
    let err = Format::guess(&dir.join("x.json")).unwrap_err().to_string();
    assert!(err.contains("x.json"), "{err}");
}

#[test]
fn formats_and_semantics_by_name() {
    for format in Format::ALL {
        assert_eq!(format.name().parse::<Format>().unwrap(), format);
    }
    for semantics in Semantics::ALL {
        assert_eq!(
            semantics.to_string().parse::<Semantics>().unwrap(),
            semantics
        );
    }
    assert!("Spider".parse::<Semantics>().is_ok());
    assert!("sql".parse::<Format>().unwrap_err().contains("spider"));
}
