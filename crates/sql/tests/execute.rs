//! Running SQL: caps, read-only enforcement by the engine alone, time limits, enriched errors, and clear
//! connection errors — on SQLite, PostgreSQL and MariaDB.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{engines, limits};

use std::time::Duration;

use steward_sql::{Database, QueryLimits, SqlErrorKind};

#[tokio::test]
async fn row_cap_truncates_and_says_so() {
    for (name, db, track) in engines().await {
        let guard = db.guard().await.unwrap();
        let result = db
            .query(&guard, &format!("SELECT * FROM {track}"), &limits(5))
            .await
            .unwrap();
        assert_eq!(result.rows.len(), 5, "{name}");
        assert!(result.truncated, "{name}");
        assert_eq!(result.columns.len(), 9, "{name}");
        assert!(
            result.to_text().ends_with(
                "(5 rows shown; more exist: add filters, aggregate, or ask for fewer rows)"
            ),
            "{name}"
        );
        let result = db
            .query(
                &guard,
                &format!("SELECT COUNT(*) AS n FROM {track}"),
                &limits(5),
            )
            .await
            .unwrap();
        assert_eq!(result.rows, vec![vec![serde_json::json!(3503)]], "{name}");
        assert!(!result.truncated);
        // An empty result still names its columns.
        let result = db
            .query(
                &guard,
                &format!("SELECT * FROM {track} WHERE 1 = 0"),
                &limits(5),
            )
            .await
            .unwrap();
        assert!(result.rows.is_empty());
        assert_eq!(result.columns.len(), 9, "{name}: {:?}", result.columns);
    }
}

#[tokio::test]
async fn the_byte_cap_stops_wide_results() {
    for (name, db, track) in engines().await {
        let guard = db.guard().await.unwrap();
        let small = QueryLimits {
            max_rows: 10_000,
            max_bytes: 2_000,
            ..QueryLimits::default()
        };
        let result = db
            .query(&guard, &format!("SELECT * FROM {track}"), &small)
            .await
            .unwrap();
        assert!(result.truncated, "{name}");
        assert!(
            result.rows.len() < 100 && !result.rows.is_empty(),
            "{name}: {}",
            result.rows.len()
        );
    }
}

#[tokio::test]
async fn the_engine_alone_refuses_writes() {
    let mut dbs = engines().await;
    dbs.push((
        "sqlite-memory",
        Database::connect("sqlite::memory:").await.unwrap(),
        "t",
    ));
    dbs.last()
        .unwrap()
        .1
        .execute_script("CREATE TABLE t (a INTEGER)")
        .await
        .unwrap();
    for (name, db, table) in dbs {
        let columns = if table == "t" {
            "(a) VALUES (1)"
        } else {
            "SELECT * FROM Track WHERE 1 = 0"
        };
        let insert = if table == "t" {
            format!("INSERT INTO t {columns}")
        } else {
            format!("INSERT INTO {table} {}", columns.replace("Track", table))
        };
        for sql in [
            insert.clone(),
            format!("DELETE FROM {table}"),
            format!(
                "UPDATE {table} SET {} = NULL",
                if table == "t" { "a" } else { "composer" }
            ),
        ] {
            let err = db.query_read_only(&sql, &[], &limits(5)).await.unwrap_err();
            let text = err.to_string().to_lowercase();
            assert!(
                text.contains("read-only")
                    || text.contains("changes the database")
                    || text.contains("readonly")
                    || text.contains("read only")
                    || text.contains("query_only"),
                "{name}: {sql} -> {err}"
            );
        }
        // The data is untouched.
        let count = db
            .query(
                &db.guard().await.unwrap(),
                &format!("SELECT COUNT(*) FROM {table}"),
                &limits(5),
            )
            .await
            .unwrap();
        let expected = if table == "t" { 0 } else { 3503 };
        assert_eq!(count.rows[0][0], serde_json::json!(expected), "{name}");
    }
}

#[tokio::test]
async fn postgres_refuses_a_data_modifying_cte_without_the_guard() {
    let Some(db) = common::chinook_postgres().await else {
        return;
    };
    let err = db
        .query_read_only(
            "WITH d AS (DELETE FROM genre RETURNING *) SELECT COUNT(*) FROM d",
            &[],
            &limits(5),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("read-only transaction"), "{err}");
    let err = db.query_read_only("COMMIT", &[], &limits(5)).await;
    // A smuggled COMMIT cannot end the read-only transaction early: the next write still fails.
    let _ = err;
    let err = db
        .query_read_only("INSERT INTO genre VALUES (999, 'x')", &[], &limits(5))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("read-only transaction"), "{err}");
}

#[tokio::test]
async fn slow_queries_stop_at_the_time_limit() {
    for (name, db, track) in engines().await {
        let quick = QueryLimits {
            timeout: Duration::from_millis(300),
            ..QueryLimits::default()
        };
        let sql = format!("SELECT COUNT(*) FROM {track} a, {track} b, {track} c");
        let started = std::time::Instant::now();
        let err = db
            .query(&db.guard().await.unwrap(), &sql, &quick)
            .await
            .unwrap_err();
        assert!(err.timeout_ms() == Some(300), "{name}: {err}");
        assert!(err.to_string().contains("time limit"));
        assert!(started.elapsed() < Duration::from_secs(10), "{name}");
        // The connection is usable afterwards.
        let ok = db
            .query(&db.guard().await.unwrap(), "SELECT 1", &limits(5))
            .await
            .unwrap();
        assert_eq!(ok.rows.len(), 1, "{name}");
    }
}

#[tokio::test]
async fn wrong_columns_and_tables_get_the_closest_names() {
    for (name, db, track) in engines().await {
        let guard = db.guard().await.unwrap();
        let bad_column = if name == "postgres" {
            "SELECT nmae FROM track"
        } else {
            "SELECT Nmae FROM Track"
        };
        let err = db
            .query(&guard, bad_column, &limits(5))
            .await
            .unwrap_err()
            .to_string();
        let expected = if name == "postgres" {
            "did you mean track.name?"
        } else {
            "did you mean Track.Name?"
        };
        assert!(err.contains(expected), "{name}: {err}");
        let err = db
            .query(&guard, &format!("SELECT * FROM {track}s"), &limits(5))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("did you mean {track}")),
            "{name}: {err}"
        );
        let ambiguous = if name == "postgres" {
            "SELECT name FROM track JOIN genre ON genre.genre_id = track.genre_id"
        } else {
            "SELECT Name FROM Track JOIN Genre ON Genre.GenreId = Track.GenreId"
        };
        let err = db
            .query(&guard, ambiguous, &limits(5))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("Qualify it with its table:"), "{name}: {err}");
    }
}

#[tokio::test]
async fn hints_use_the_alias_and_the_hinted_query_runs() {
    for (name, db, _) in engines().await {
        let guard = db.guard().await.unwrap();
        let (genre, column) = if name == "postgres" {
            ("genre", "name")
        } else {
            ("Genre", "Name")
        };
        let wrong = format!("SELECT g.Nme FROM {genre} g ORDER BY 1");
        let err = db
            .query(&guard, &wrong, &limits(5))
            .await
            .unwrap_err()
            .to_string();
        let hint = format!("did you mean g.{column}?");
        assert!(err.contains(&hint), "{name}: {err}");
        // Following the hint works: the model does not loop.
        let fixed = wrong.replace("g.Nme", &format!("g.{column}"));
        let rows = db.query(&guard, &fixed, &limits(5)).await.unwrap();
        assert_eq!(rows.rows.len(), 5, "{name}");
    }
}

#[tokio::test]
async fn refused_sql_never_reaches_the_engine() {
    for (name, db, track) in engines().await {
        let err = db
            .query(
                &db.guard().await.unwrap(),
                &format!("DELETE FROM {track}"),
                &limits(5),
            )
            .await
            .unwrap_err();
        assert!(err.is(SqlErrorKind::Refused), "{name}: {err}");
        assert!(
            err.to_string()
                .starts_with("refused: DELETE (it changes data) is not allowed"),
            "{name}: {err}"
        );
    }
}

#[tokio::test]
async fn connection_errors_are_one_clear_line_without_secrets() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = Database::connect(&format!("postgres://bob:hunter2@127.0.0.1:{closed}/x"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("connection refused; is the database server running there?"),
        "{err}"
    );
    assert!(!err.contains("hunter2") && !err.contains('\n'), "{err}");
    let err = Database::connect(&format!("mysql://bob:hunter2@127.0.0.1:{closed}/x"))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("connection refused"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    if common::chinook_postgres_url().is_some() {
        let err = Database::connect("postgres://postgres:pw@127.0.0.1:5432/steward_no_such_db")
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("\"steward_no_such_db\" does not exist"),
            "{err}"
        );
        assert!(!err.contains(":pw@"), "{err}");
    }
    if common::chinook_mariadb_url().is_some() {
        let err = Database::connect("mysql://nobody_here:s3cret@127.0.0.1:3306/test")
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("authentication failed at 127.0.0.1:3306"),
            "{err}"
        );
        assert!(!err.contains("s3cret"), "{err}");
    }
}
