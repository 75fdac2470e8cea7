//! Connections as the engines see them: the server's own session settings, sessions never reused after a
//! query was cut off, limits checked, input errors told apart from outages, and the privileges of the role —
//! on SQLite, PostgreSQL and MariaDB.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{engines, limits};

/// The text of the first cell of a query's first row.
async fn first(db: &Database, sql: &str) -> String {
    let result = db.query_read_only(sql, &[], &limits(5)).await.unwrap();
    cell_text(&result.rows[0][0])
}

use std::process::Command;
use std::time::Duration;

use steward_sql::{Database, Param, QueryLimits, SqlErrorKind, cell_text};

#[tokio::test]
async fn a_query_cut_off_leaves_no_session_behind() {
    for (name, db, track) in engines().await {
        let slow = if name == "postgres" {
            "SELECT count(*) FROM generate_series(1, 200000000)".to_owned()
        } else {
            format!("SELECT COUNT(*) FROM {track} a, {track} b, {track} c")
        };
        // More cancellations than the pool has connections. The engine's own limit (2 s) ends the work
        // on the server; the cancellation ends it for us at once.
        let slow_limits = QueryLimits {
            timeout: Duration::from_secs(2),
            ..limits(5)
        };
        let started = std::time::Instant::now();
        for _ in 0..6 {
            let cut = tokio::time::timeout(
                Duration::from_millis(150),
                db.query_read_only(&slow, &[], &slow_limits),
            )
            .await;
            assert!(cut.is_err(), "{name}: the slow query finished");
        }
        eprintln!("{name}: 6 cancellations took {:?}", started.elapsed());
        // Writing on the same database works, and a read sees it.
        let table = format!("cut_{}", common::unique());
        db.execute_script(&format!("CREATE TABLE {table} (a INTEGER)"))
            .await
            .unwrap();
        let mut tx = db.begin_write().await.unwrap();
        tx.execute(
            &format!("INSERT INTO {table} (a) VALUES (?)"),
            &[Param::Int(7)],
        )
        .await
        .unwrap();
        tx.commit().await.unwrap();
        assert_eq!(
            first(&db, &format!("SELECT a FROM {table}")).await,
            "7",
            "{name}"
        );
        // A read with its own, longer time limit is not stopped by a limit left behind.
        let patient = QueryLimits {
            timeout: Duration::from_secs(20),
            ..limits(5)
        };
        let count = if name == "postgres" {
            "SELECT count(*) FROM generate_series(1, 3000000)".to_owned()
        } else {
            format!(
                "SELECT COUNT(*) FROM {track} a, {track} b WHERE a.Milliseconds > b.Milliseconds"
            )
        };
        db.query_read_only(&count, &[], &patient).await.unwrap();
        if name == "postgres" {
            // No connection of ours sits inside a transaction.
            let idle = first(
                &db,
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                 AND application_name = 'steward' AND state LIKE 'idle in transaction%'",
            )
            .await;
            assert_eq!(idle, "0", "{name}");
        }
        db.execute_script(&format!("DROP TABLE {table}"))
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn an_in_memory_database_reads_read_only_and_still_writes() {
    let db = Database::connect("sqlite::memory:").await.unwrap();
    db.execute_script("CREATE TABLE t (a INTEGER)")
        .await
        .unwrap();
    let err = db
        .query_read_only("INSERT INTO t VALUES (1)", &[], &limits(5))
        .await
        .unwrap_err();
    assert!(err.is(SqlErrorKind::Refused), "{err}");
    // A read cut off mid-way does not leave the writer read-only.
    let _ = tokio::time::timeout(
        Duration::from_millis(50),
        db.query_read_only(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n",
            &[],
            &limits(5),
        ),
    )
    .await;
    let mut tx = db.begin_write().await.unwrap();
    tx.execute("INSERT INTO t VALUES (?)", &[Param::Int(1)])
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(first(&db, "SELECT count(*) FROM t").await, "1");
    // A URL that merely mentions memory in its path still reads read-only.
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join(format!("mode=memory-{}.sqlite", common::unique()));
    let db = Database::connect(&format!("sqlite://{}?mode=rwc", path.display()))
        .await
        .unwrap();
    db.execute_script("CREATE TABLE t (a INTEGER)")
        .await
        .unwrap();
    let err = db
        .query_read_only("DELETE FROM t", &[], &limits(5))
        .await
        .unwrap_err();
    assert!(err.is(SqlErrorKind::Refused), "{err}");
}

#[tokio::test]
async fn limits_out_of_range_are_refused_not_wrapped() {
    let db = Database::connect("sqlite::memory:").await.unwrap();
    let guard = db.guard().await.unwrap();
    for bad in [
        QueryLimits {
            max_rows: usize::MAX,
            ..QueryLimits::default()
        },
        QueryLimits {
            max_rows: 0,
            ..QueryLimits::default()
        },
        QueryLimits {
            timeout: Duration::MAX,
            ..QueryLimits::default()
        },
    ] {
        let err = db.query(&guard, "SELECT 1", &bad).await.unwrap_err();
        assert!(err.is(SqlErrorKind::Limits), "{err}");
    }
    let most = QueryLimits {
        max_rows: steward_sql::MAX_ROWS,
        timeout: steward_sql::MAX_TIMEOUT,
        ..QueryLimits::default()
    };
    let rows = db.query(&guard, "SELECT 1", &most).await.unwrap();
    assert_eq!(rows.rows.len(), 1);
}

#[tokio::test]
async fn the_byte_cap_covers_the_first_row() {
    for (name, db, _) in engines().await {
        let sql = match name {
            "postgres" => "SELECT repeat('x', 5000000) AS big, 1 AS one",
            "mariadb" => "SELECT REPEAT('x', 5000000) AS big, 1 AS one",
            _ => "SELECT printf('%.*c', 5000000, 'x') AS big, 1 AS one",
        };
        let small = QueryLimits {
            max_bytes: 1000,
            ..limits(5)
        };
        let result = db
            .query(&db.guard().await.unwrap(), sql, &small)
            .await
            .unwrap();
        assert!(result.truncated, "{name}");
        assert_eq!(result.rows.len(), 1, "{name}");
        let big = cell_text(&result.rows[0][0]);
        assert!(
            big.len() <= 1000 && big.len() > 900,
            "{name}: {}",
            big.len()
        );
    }
}

#[tokio::test]
async fn bad_values_are_the_input_s_fault_not_an_outage() {
    for (name, db, _) in engines().await {
        let cases: &[&str] = match name {
            "postgres" => &[
                "SELECT 2147483647::int + 1",
                "SELECT DATE '2024-13-01'",
                "SELECT convert_from('\\x00ff'::bytea, 'UTF8')",
                "SELECT 1 / 0",
            ],
            "mariadb" => &[
                "SELECT 18446744073709551615 + 1",
                "SELECT CAST(-1 AS UNSIGNED) * 2",
            ],
            _ => &["SELECT abs(-9223372036854775808)"],
        };
        for sql in cases {
            let err = db
                .query(&db.guard().await.unwrap(), sql, &limits(5))
                .await
                .unwrap_err();
            assert!(err.is(SqlErrorKind::Invalid), "{name}: {sql} -> {err:?}");
        }
    }
}

#[tokio::test]
async fn postgres_keeps_the_database_s_own_time_zone_and_date_style() {
    let Some(url) = common::chinook_postgres_url() else {
        return;
    };
    let url = match common::fresh(common::PG_ADMIN, "", false).await {
        Ok(url) => url,
        Err(e) => {
            common::skip(&format!("PostgreSQL is not usable: {e} ({url})"));
            return;
        }
    };
    let name = url.rsplit('/').next().unwrap().to_owned();
    let admin = Database::connect(common::PG_ADMIN).await.unwrap();
    admin
        .execute_script(&format!(
            "ALTER DATABASE {name} SET timezone = 'Asia/Tokyo'; ALTER DATABASE {name} SET datestyle = 'SQL, DMY'"
        ))
        .await
        .unwrap();
    let db = Database::connect(&url).await.unwrap();
    let probes = [
        "SELECT current_setting('TimeZone')",
        "SELECT current_setting('DateStyle')",
        "SELECT '04/03/2024'::date::text",
        "SELECT TIMESTAMPTZ '2024-01-02 03:04:05+00'",
        "SELECT TIMESTAMPTZ '2024-01-02 03:04:05+00'::date",
        "SELECT DATE '2024-03-04'",
        "SELECT to_char(TIMESTAMPTZ '2024-01-02 23:30:00+00', 'YYYY-MM-DD HH24:MI')",
        "SELECT INTERVAL '-1 day 02:03:04'",
    ];
    for sql in probes {
        let ours = first(&db, sql).await;
        let psql = Command::new("psql")
            .args(["-X", "-A", "-t", "-d", &url, "-c", sql])
            .output();
        let Ok(psql) = psql else {
            common::skip("psql is not installed");
            return;
        };
        let theirs = String::from_utf8_lossy(&psql.stdout).trim_end().to_owned();
        assert_eq!(ours, theirs, "{sql}");
    }
    assert_eq!(
        first(&db, "SELECT current_setting('TimeZone')").await,
        "Asia/Tokyo"
    );
}

#[tokio::test]
async fn mariadb_keeps_the_server_s_sql_mode_and_time_zone() {
    let Some(db) = common::chinook_mariadb().await else {
        return;
    };
    // Without PIPES_AS_CONCAT, `||` is OR, as in every other client of this server.
    assert_eq!(first(&db, "SELECT 1 || 0").await, "1");
    assert_eq!(
        first(&db, "SELECT @@SESSION.sql_mode = @@GLOBAL.sql_mode").await,
        "1"
    );
    assert_eq!(
        first(&db, "SELECT @@SESSION.time_zone = @@GLOBAL.time_zone").await,
        "1"
    );
    // IGNORE_SPACE is off: a space before `(` keeps a built-in name a column name.
    let err = db
        .query_read_only("SELECT count (*) FROM Track", &[], &limits(5))
        .await;
    assert!(err.is_err(), "{err:?}");
}

#[tokio::test]
async fn privileges_are_read_and_a_reader_gets_no_notice() {
    if let Some(url) = common::chinook_postgres_url() {
        let db = Database::connect(&url).await.unwrap();
        let notice = db.privileges().unwrap().notice().unwrap();
        assert!(notice.contains("superuser"), "{notice}");
        assert!(notice.contains("GRANT SELECT ON ALL TABLES"), "{notice}");
        let role = format!("steward_t_ro_{}", common::unique());
        let database = url.rsplit('/').next().unwrap();
        db.execute_script(&format!(
            "CREATE ROLE {role} LOGIN; GRANT CONNECT ON DATABASE {database} TO {role}; \
             GRANT USAGE ON SCHEMA public TO {role}; GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}; \
             REVOKE CREATE ON DATABASE {database} FROM PUBLIC"
        ))
        .await
        .unwrap();
        let reader = Database::connect(&url.replace("postgres@", &format!("{role}@")))
            .await
            .unwrap();
        let privileges = reader.privileges().unwrap();
        assert_eq!(privileges.powers, Vec::<String>::new());
        assert!(privileges.notice().is_none());
        reader.close().await;
        db.execute_script(&format!(
            "REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {role}; REVOKE ALL ON SCHEMA public FROM {role}; \
             REVOKE ALL ON DATABASE {database} FROM {role}; DROP ROLE {role}"
        ))
        .await
        .unwrap();
    }
    if let Some(url) = common::chinook_mariadb_url() {
        let db = Database::connect(&url).await.unwrap();
        let notice = db.privileges().unwrap().notice().unwrap();
        assert!(notice.contains("all privileges"), "{notice}");
        let user = format!("steward_t_ro_{}", common::unique());
        let database = url.rsplit('/').next().unwrap();
        db.execute_script(&format!(
            "CREATE USER '{user}'@'%'; GRANT SELECT ON `{database}`.* TO '{user}'@'%'"
        ))
        .await
        .unwrap();
        let reader = Database::connect(&url.replace("root@", &format!("{user}@")))
            .await
            .unwrap();
        assert!(reader.privileges().unwrap().notice().is_none());
        reader.close().await;
        db.execute_script(&format!("DROP USER '{user}'@'%'"))
            .await
            .unwrap();
    }
}
