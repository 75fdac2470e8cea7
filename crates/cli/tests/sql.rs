//! `steward schema`, `steward sql check`, `steward sql run` and `steward ask --db` as a user runs them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::PathBuf;

use common::*;
use serde_json::Value;

/// A copy of the shared Chinook SQLite file, or None (SKIPPED; a failure under CI=true).
fn chinook() -> Option<String> {
    let data = std::env::var_os("STEWARD_SHARED_DATA")
        .map(PathBuf::from)
        .or_else(|| Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata")));
    let source = data
        .map(|d| d.join("chinook/Chinook_Sqlite.sqlite"))
        .filter(|f| f.is_file());
    let Some(source) = source else {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!(
                "the Chinook database (testdata/chinook) is absent (CI=true: required); set STEWARD_SHARED_DATA"
            );
        }
        eprintln!(
            "SKIPPED: the Chinook database (testdata/chinook) is absent; set STEWARD_SHARED_DATA to a folder holding it"
        );
        return None;
    };
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "cli-chinook-{}-{:?}.sqlite",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::copy(&source, &target).unwrap();
    Some(target.display().to_string())
}

#[test]
fn schema_for_a_question_as_json() {
    let Some(db) = chinook() else { return };
    let out = steward(
        &[
            "schema",
            "--db",
            &format!("sqlite://{db}"),
            "--question",
            "Which artists have the most albums?",
            "--budget",
            "500",
            "--json",
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tables: Vec<&str> = json["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(&tables[..2], ["Album", "Artist"], "{tables:?}");
    assert!(json["tokens"].as_u64().unwrap() <= 500);
    assert!(
        json["text"]
            .as_str()
            .unwrap()
            .contains("-- Joins: Album.ArtistId = Artist.ArtistId"),
        "{}",
        json["text"]
    );
}

#[test]
fn sql_check_exit_codes_and_json() {
    let out = steward(
        &[
            "sql",
            "check",
            "--dialect",
            "postgres",
            "--json",
            "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["allowed"], false);
    assert_eq!(json["class"], "write");
    assert!(
        json["reasons"][0]
            .as_str()
            .unwrap()
            .contains("data-modifying DELETE")
    );
    let out = steward(
        &["sql", "check", "--dialect", "sqlite", "--json", "-"],
        &[],
        "SELECT a, RANK() OVER (ORDER BY b) FROM t",
    );
    assert_eq!(out.status.code(), Some(0));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["allowed"], true);
    assert_eq!(json["class"], "read");
    assert_eq!(json["tables"], serde_json::json!(["t"]));
    let out = steward(
        &["sql", "check", "--dialect", "oracle", "SELECT 1"],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn sql_run_prints_rows_caps_them_and_explains_errors() {
    let Some(db) = chinook() else { return };
    let out = steward(
        &[
            "sql",
            "run",
            "--db",
            &db,
            "--json",
            "--max-rows",
            "2",
            "SELECT Name, UnitPrice FROM Track ORDER BY TrackId",
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["columns"], serde_json::json!(["Name", "UnitPrice"]));
    assert_eq!(
        json["rows"],
        serde_json::json!([
            ["For Those About To Rock (We Salute You)", 0.99],
            ["Balls to the Wall", 0.99]
        ])
    );
    assert_eq!(json["truncated"], true);
    let out = steward(
        &[
            "sql",
            "run",
            "--db",
            &db,
            "SELECT Name FROM Genre WHERE GenreId < 3 ORDER BY GenreId",
        ],
        &[],
        "",
    );
    assert_eq!(text(&out.stdout), "Name\n----\nRock\nJazz\n");
    let out = steward(&["sql", "run", "--db", &db, "DELETE FROM Genre"], &[], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("error: refused: DELETE (it changes data) is not allowed"),
        "{}",
        text(&out.stderr)
    );
    let out = steward(
        &["sql", "run", "--db", &db, "SELECT Titel FROM Album"],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("did you mean Album.Title?"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn bad_database_urls_are_usage_errors() {
    let out = steward(
        &[
            "sql",
            "run",
            "--db",
            "sqlite:///nonexistent/x.db",
            "SELECT 1",
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("SQLite database file not found: /nonexistent/x.db"),
        "{}",
        text(&out.stderr)
    );
    let out = steward(&["schema", "--db", "redis://127.0.0.1"], &[], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("unsupported database URL scheme `redis`"),
        "{}",
        text(&out.stderr)
    );
}

#[tokio::test]
async fn ask_db_uses_the_analyst_with_sql_tools() {
    let Some(db) = chinook() else { return };
    let server = mock_openai(vec![
        tool_reply("c1", "run_sql", r#"{"sql": "SELECT ar.Name, COUNT(*) AS albums FROM Album al JOIN Artist ar ON ar.ArtistId = al.ArtistId GROUP BY ar.Name ORDER BY albums DESC LIMIT 1"}"#),
        text_reply("Iron Maiden has the most albums (21)."),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let out = steward(
        &[
            "ask",
            "--trace",
            "--db",
            &db,
            "Which artist has the most albums?",
        ],
        &[("OPENAI_BASE_URL", &base)],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Iron Maiden has the most albums (21).\n");
    assert!(
        text(&out.stderr).contains("result run_sql: Name | albums Iron Maiden | 21 (1 row)"),
        "{}",
        text(&out.stderr)
    );
    let bodies = bodies(&server).await;
    let system = bodies[0]["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.starts_with(
            "You are a careful data analyst answering questions over a SQLite database."
        ),
        "{system}"
    );
    assert!(system.contains("CREATE TABLE Album"), "{system}");
    let tools: Vec<&str> = bodies[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "list_tables",
            "describe_tables",
            "query_table",
            "run_sql",
            "ask_database",
            "current_date",
            "calculator"
        ]
    );
    // The tool result the model saw holds the real rows.
    let seen = bodies[1]["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(seen.contains("Iron Maiden | 21"), "{seen}");
}

#[test]
fn sql_check_without_flags_assumes_sqlite_and_says_so() {
    // No config, no STEWARD_DB, no demo database: SQLite, with a note naming it.
    let out = steward(&["sql", "check", "SELECT 1::int"], &[], "");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "`::` is not SQLite: {stderr}");
    assert!(
        text(&out.stdout).starts_with("refused"),
        "{}",
        text(&out.stdout)
    );
    assert!(
        stderr.contains("no --dialect or --db and no configured database: checked as SQLite"),
        "{stderr}"
    );
    let out = steward(&["sql", "check", "--json", "SELECT `a` FROM t"], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["allowed"], true);
    assert_eq!(json["tables"], serde_json::json!(["t"]));
    // --dialect still decides alone, without a note.
    let out = steward(
        &["sql", "check", "--dialect", "postgres", "SELECT 1::int"],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(
        !text(&out.stderr).contains("checked as"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn sql_check_without_flags_uses_the_configured_database() {
    let dir = scratch_dir("check-config");
    let file = format!("{dir}/shop.sqlite");
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        format!("databases:\n  shop: sqlite://{file}?mode=rwc\n"),
    )
    .unwrap();
    let out = steward(&["sql", "check", "--config", &config, "SELECT 1"], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!("checked as SQLite against sqlite://{file}")),
        "{}",
        text(&out.stderr)
    );
    if !postgres_up() {
        return;
    }
    // A PostgreSQL database from the config (or STEWARD_DB): PostgreSQL's rules, from the live server.
    std::fs::write(
        &config,
        "databases:\n  main: postgres://postgres@127.0.0.1:5432/postgres\n",
    )
    .unwrap();
    let out = steward(
        &["sql", "check", "--config", &config, "SELECT 1::int"],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr)
            .contains("checked as PostgreSQL against postgres://postgres@127.0.0.1:5432/postgres"),
        "{}",
        text(&out.stderr)
    );
    let out = steward(
        &["sql", "check", "SELECT `a` FROM t"],
        &[("STEWARD_DB", "postgres://postgres@127.0.0.1:5432/postgres")],
        "",
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("checked as PostgreSQL"),
        "{}",
        text(&out.stderr)
    );
}
