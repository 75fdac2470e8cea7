//! Several `steward` processes writing one SQLite database, and a writer killed in the middle of a transaction,
//! as a user sees them: every call succeeds, nothing is written twice or lost, and the file stays usable.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

/// A fresh demo database made by `steward demo --db PATH`.
fn demo() -> String {
    let db = format!("{}/demo.sqlite", scratch_dir("concurrency"));
    let out = steward(&["demo", "--db", &db], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    db
}

/// `steward sql run` of one number.
fn number(db: &str, sql: &str) -> i64 {
    let out = steward(&["sql", "run", "--db", db, "--json", sql], &[], "");
    assert_eq!(
        out.status.code(),
        Some(0),
        "steward sql run {sql}: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cell = &json["rows"][0][0];
    cell.as_i64()
        .or_else(|| cell.as_str().and_then(|s| s.parse().ok()))
        .unwrap_or_else(|| panic!("{json}"))
}

/// One `steward tools call add_expense`; the failure as text.
fn add_expense(db: &str, call_id: &str, description: &str, cache: &str) -> Result<String, String> {
    let args = format!(
        r#"{{"description": "{description}", "net_amount": 1.1, "tax_rate": 0.2, "date": "2026-11-21"}}"#
    );
    let out = steward(
        &[
            "tools",
            "call",
            "add_expense",
            &args,
            "--call-id",
            call_id,
            "--db",
            db,
        ],
        &[("XDG_CACHE_HOME", cache)],
        "",
    );
    if out.status.code() == Some(0) {
        Ok(text(&out.stdout))
    } else {
        Err(format!(
            "{call_id}: exit {:?}: {} {}",
            out.status.code(),
            text(&out.stdout).trim(),
            text(&out.stderr).trim()
        ))
    }
}

#[test]
fn four_writer_processes_record_every_call_exactly_once() {
    let db = demo();
    // The processes share a catalog cache, as on a user's machine.
    let cache = scratch_dir("cache");
    let started = Instant::now();
    let failures: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4)
            .map(|w| {
                let (db, cache) = (&db, &cache);
                scope.spawn(move || {
                    (0..50)
                        .filter_map(|i| {
                            add_expense(
                                db,
                                &format!("load-{w}-{i}"),
                                &format!("Load {w}-{i}"),
                                cache,
                            )
                            .err()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    eprintln!(
        "200 calls from 4 processes in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} of 200 calls failed; the first ones:\n{}",
        failures.len(),
        failures
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(
        number(
            &db,
            "SELECT COUNT(*) FROM expenses WHERE description LIKE 'Load %'"
        ),
        200
    );
    assert_eq!(
        number(
            &db,
            "SELECT COUNT(*) FROM audit_log WHERE call_id LIKE 'load-%'"
        ),
        200
    );
    assert_eq!(
        number(
            &db,
            "SELECT COUNT(*) FROM tool_calls WHERE call_id LIKE 'load-%'"
        ),
        200
    );
    // 200 × 1.32, to the cent.
    assert_eq!(
        number(
            &db,
            "SELECT CAST(ROUND(SUM(gross_amount) * 100) AS INTEGER) FROM expenses WHERE description LIKE 'Load %'"
        ),
        26_400
    );

    // Four processes retrying one call at once: one write, the same answer for all.
    let answers: Vec<Result<String, String>> = std::thread::scope(|scope| {
        let calls: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| add_expense(&db, "retried", "Retried", &cache)))
            .collect();
        calls.into_iter().map(|c| c.join().unwrap()).collect()
    });
    assert!(
        answers.iter().all(|a| a.is_ok() && a == &answers[0]),
        "{answers:?}"
    );
    assert_eq!(
        number(
            &db,
            "SELECT COUNT(*) FROM expenses WHERE description = 'Retried'"
        ),
        1
    );
    assert_eq!(
        number(
            &db,
            "SELECT COUNT(*) FROM audit_log WHERE call_id = 'retried'"
        ),
        1
    );
}

/// What the helper prints once it holds its transaction.
const HOLDING: &str = "holding the write transaction";

/// Rows the killed writer inserts: enough to spill its cache into the database file (or the WAL).
const CRASH_ROWS: u32 = 20_000;

/// Not a test on its own: the crash test runs it in a child process (`STEWARD_TEST_HOLD_DB` names the file),
/// which begins a write transaction, writes until its pages reach the file, says [`HOLDING`], and waits to be
/// killed.
#[test]
#[ignore = "a helper process of writer_killed_mid_transaction_leaves_the_database_usable"]
fn hold_a_write_transaction_until_killed() {
    let Some(path) = std::env::var_os("STEWARD_TEST_HOLD_DB") else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let db = steward_sql::Database::connect(&format!("sqlite://{}", Path::new(&path).display()))
            .await
            .unwrap();
        let mut tx = db.begin_write().await.unwrap();
        tx.execute(
            &format!(
                "INSERT INTO tasks (title, notes, status, created_at) \
                 SELECT 'Written by a writer that gets killed ' || n, hex(randomblob(400)), 'OPEN', '2026-11-21 10:00:00' \
                 FROM (WITH RECURSIVE k(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM k WHERE n < {CRASH_ROWS}) SELECT n FROM k)"
            ),
            &[],
        )
        .await
        .unwrap();
        println!("\n{HOLDING}");
        tokio::time::sleep(Duration::from_secs(120)).await;
        drop(tx);
    });
}

/// Starts the helper on `db` and waits until it holds its transaction.
fn start_writer(db: &str) -> Child {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "hold_a_write_transaction_until_killed",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("STEWARD_TEST_HOLD_DB", db)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if line.trim() == HOLDING {
                let _ = tx.send(());
            }
        }
    });
    if rx.recv_timeout(Duration::from_secs(30)).is_err() {
        let _ = child.kill();
        panic!("the writer did not begin its transaction within 30 s");
    }
    child
}

/// The file's journal mode, read from its header: 2 in bytes 18 and 19 is WAL, 1 is a rollback journal.
fn wal(db: &str) -> bool {
    let header = std::fs::read(db).unwrap();
    header.get(18) == Some(&2)
}

fn writer_killed_mid_transaction(db: &str) {
    let tasks = number(db, "SELECT COUNT(*) FROM tasks");
    let mut writer = start_writer(db);
    eprintln!(
        "killing a writer mid-transaction on a database in {} mode",
        if wal(db) { "WAL" } else { "rollback-journal" }
    );
    let leftover = if wal(db) {
        format!("{db}-wal")
    } else {
        format!("{db}-journal")
    };
    // SIGKILL: no destructor, no rollback; what the transaction wrote stays behind in the journal (or WAL).
    writer.kill().unwrap();
    writer.wait().unwrap();
    assert!(
        std::fs::metadata(&leftover).is_ok_and(|m| m.len() > 0),
        "the killed writer left {leftover} behind"
    );

    // The next commands work, and the killed writer's rows are not there.
    let out = steward(
        &[
            "sql",
            "run",
            "--db",
            db,
            "--json",
            "SELECT COUNT(*) FROM tasks",
        ],
        &[],
        "",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "steward sql run after the crash: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        json["rows"][0][0], tasks,
        "the killed transaction left no rows"
    );
    let cache = scratch_dir("cache");
    let recorded = add_expense(db, "after-the-crash", "After the crash", &cache);
    assert!(
        recorded.is_ok(),
        "steward tools call after the crash: {recorded:?}"
    );
    let out = steward(&["tools", "call", "get_inbox_tasks", "--db", db], &[], "");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert_eq!(
        number(
            db,
            "SELECT COUNT(*) FROM expenses WHERE description = 'After the crash'"
        ),
        1
    );
}

#[test]
fn writer_killed_mid_transaction_leaves_the_database_usable() {
    // A demo database, as `steward demo` makes it (WAL).
    let db = demo();
    assert!(wal(&db), "steward demo makes a WAL database");
    writer_killed_mid_transaction(&db);

    // A database in rollback-journal mode (one Steward did not create, or a demo made by an older version):
    // the killed writer leaves a hot journal that must be rolled back before anything reads the file.
    let db = demo();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let conn = steward_sql::Database::connect(&format!("sqlite://{db}"))
            .await
            .unwrap();
        conn.execute_script("PRAGMA journal_mode=DELETE")
            .await
            .unwrap();
        conn.close().await;
    });
    assert!(!wal(&db), "the copy is in rollback-journal mode");
    writer_killed_mid_transaction(&db);
}

#[test]
fn demo_killed_while_it_generates_leaves_the_database_usable() {
    let db = demo();
    let mut child = Command::new(env!("CARGO_BIN_EXE_steward"))
        .args(["demo", "--scale", "40", "--force", "--db", &db])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", env!("CARGO_TARGET_TMPDIR"))
        .env("STEWARD_NOW", "2026-11-21T09:30:00+01:00")
        .env("OLLAMA_HOST", "127.0.0.1:9")
        .env("XDG_DATA_HOME", scratch_dir("data"))
        .env("XDG_CACHE_HOME", scratch_dir("cache"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed once it is well into the orders (the WAL has grown past 4 MB).
    let deadline = Instant::now() + Duration::from_secs(60);
    let wal_file = format!("{db}-wal");
    loop {
        if std::fs::metadata(&wal_file).is_ok_and(|m| m.len() > 4 << 20) {
            break;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("steward demo --scale 40 ended ({status}) before it could be killed");
        }
        assert!(
            Instant::now() < deadline,
            "steward demo --scale 40 wrote no 4 MB in 60 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();

    // What it had committed is readable, a write works, and the demo can be made again.
    let out = steward(
        &["sql", "run", "--db", &db, "SELECT COUNT(*) FROM orders"],
        &[],
        "",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let out = steward(
        &[
            "tools",
            "call",
            "create_project",
            r#"{"name": "After the crash"}"#,
            "--db",
            &db,
        ],
        &[],
        "",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let out = steward(&["demo", "--force", "--db", &db], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let recorded = add_expense(
        &db,
        "after-the-rebuild",
        "After the rebuild",
        &scratch_dir("cache"),
    );
    assert!(recorded.is_ok(), "{recorded:?}");
}
