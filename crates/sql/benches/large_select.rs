//! A SELECT over 1,000,000 rows with a 100-row cap: peak heap while the query runs, against the same query
//! over 10,000 rows. Flat means the rows are never all in memory. The query runs exactly as written (the cap
//! is never written into the SQL): the reader stops after cap + 1 rows and closes the connection instead of
//! draining the rest. Measured with the live guard and without it (`query_read_only`), on SQLite and, when it
//! answers, PostgreSQL; the time is the median of five runs after a warm-up.
//!
//! Run: `cargo bench -p steward-sql --bench large_select`
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;

use peak_alloc::PeakAlloc;
use steward_sql::{Database, QueryLimits};

#[global_allocator]
static PEAK: PeakAlloc = PeakAlloc;

async fn measure(db: &Database, table: &str, guarded: bool) -> (usize, f64, usize) {
    let limits = QueryLimits {
        max_rows: 100,
        ..QueryLimits::default()
    };
    let sql = format!("SELECT id, name, amount FROM {table}");
    let guard = db.guard().await.unwrap();
    let mut peak = 0;
    let mut times = Vec::new();
    for _ in 0..6 {
        let base = PEAK.current_usage();
        PEAK.reset_peak_usage();
        let started = Instant::now();
        let result = if guarded {
            db.query(&guard, &sql, &limits).await.unwrap()
        } else {
            db.query_read_only(&sql, &[], &limits).await.unwrap()
        };
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        peak = peak.max(PEAK.peak_usage().saturating_sub(base));
        assert_eq!(result.rows.len(), 100);
        assert!(result.truncated);
    }
    // The first run warms the pool up.
    let mut times = times.split_off(1);
    times.sort_by(f64::total_cmp);
    (peak, times[times.len() / 2], 100)
}

async fn report(engine: &str, db: &Database) {
    for guarded in [true, false] {
        let path = if guarded { "guarded" } else { "unguarded" };
        let (small, small_ms, _) = measure(db, "rows_10k", guarded).await;
        let (large, large_ms, _) = measure(db, "rows_1m", guarded).await;
        println!(
            "{engine:>8} {path:<10} peak heap: 10k rows {:>8.1} KiB ({small_ms:.1} ms), 1M rows {:>8.1} KiB ({large_ms:.1} ms)",
            small as f64 / 1024.0,
            large as f64 / 1024.0
        );
    }
}

const SQLITE_SETUP: &str = "CREATE TABLE rows_1m (id INTEGER PRIMARY KEY, name TEXT, amount REAL);
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000)
    INSERT INTO rows_1m SELECT i, 'customer number ' || i, i * 1.25 FROM n;
    CREATE TABLE rows_10k AS SELECT * FROM rows_1m WHERE id <= 10000;";

const POSTGRES_SETUP: &str = "CREATE TABLE rows_1m (id INTEGER PRIMARY KEY, name TEXT, amount DOUBLE PRECISION);
    INSERT INTO rows_1m SELECT i, 'customer number ' || i, i * 1.25 FROM generate_series(1, 1000000) AS g(i);
    CREATE TABLE rows_10k AS SELECT * FROM rows_1m WHERE id <= 10000;";

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("large-{}.sqlite", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let db = Database::connect(&format!("sqlite://{}?mode=rwc", path.display()))
            .await
            .unwrap();
        db.execute_script(SQLITE_SETUP).await.unwrap();
        report("sqlite", &db).await;
        db.close().await;
        let _ = std::fs::remove_file(&path);

        match Database::connect(common::PG_ADMIN).await {
            Ok(admin) => {
                let name = format!("steward_bench_{}", common::unique());
                admin
                    .execute_script(&format!("CREATE DATABASE {name}"))
                    .await
                    .unwrap();
                // With TLS (the server's default here) and without: a result cut at the cap costs a new
                // connection, whose price is mostly the TLS handshake.
                for (label, tail) in [("postgres", ""), ("pg no-tls", "?sslmode=disable")] {
                    let url = format!("postgres://postgres@127.0.0.1:5432/{name}{tail}");
                    let db = Database::connect(&url).await.unwrap();
                    if tail.is_empty() {
                        db.execute_script(POSTGRES_SETUP).await.unwrap();
                    }
                    report(label, &db).await;
                    db.close().await;
                }
                let _ = admin.execute_script(&format!("DROP DATABASE {name}")).await;
            }
            Err(e) => eprintln!("SKIPPED postgres: {e}"),
        }
    });
}
