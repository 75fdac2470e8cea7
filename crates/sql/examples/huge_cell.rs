//! Memory for one huge cell: a query whose single cell is far larger than the byte cap (`SELECT
//! repeat('x', N)`), run through the `Database` API on SQLite, PostgreSQL and MariaDB. Each case runs in a
//! fresh process (this program started again with `--case NAME`), so that no case inherits another's heap. For
//! each it prints what came back (bytes of the cell, the truncation flag), the peak resident set size while the
//! query ran above the RSS just before it (VmHWM, reset through `/proc/self/clear_refs`; also as a multiple of
//! the cell's size on the wire), the peak Rust heap above the heap before it (SQLite's own allocations are not
//! in it), and the RSS left once the result is dropped and one more small query has run on the same pool.
//!
//! Run: `cargo run --release -p steward-sql --example huge_cell [-- BYTES] [--raise-mariadb-packet]
//! [--case NAME]`
//!
//! BYTES defaults to 200,000,000. MariaDB refuses to build a value above `max_allowed_packet` (16 MiB by
//! default: `REPEAT` then gives NULL), so its cell is at most 16 MiB (`max_allowed_packet`) unless
//! `--raise-mariadb-packet` is given, which sets the server's global `max_allowed_packet` to 1 GiB for the run
//! and puts it back after. Servers: `postgres://postgres@127.0.0.1:5432/postgres` and
//! `mysql://root@127.0.0.1:3306/test` (override with `STEWARD_BENCH_PG`, `STEWARD_BENCH_MARIADB`); one that does
//! not answer is skipped.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;
use std::time::Instant;

use peak_alloc::PeakAlloc;
use steward_sql::{Database, QueryLimits, QueryResult, SqlError};

#[global_allocator]
static PEAK: PeakAlloc = PeakAlloc;

const CASES: &[&str] = &[
    "sqlite-text",
    "sqlite-blob",
    "postgres-text",
    "postgres-prepared",
    "postgres-bytea",
    "mariadb-text",
    "mariadb-prepared",
];

/// A field of `/proc/self/status` in bytes (the file gives kB).
fn status(key: &str) -> usize {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    text.lines()
        .find_map(|line| line.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().trim_end_matches(" kB").parse::<usize>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Resets VmHWM to the current RSS (Linux 4.0 and later).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn pg_url() -> String {
    std::env::var("STEWARD_BENCH_PG")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

fn mariadb_url() -> String {
    std::env::var("STEWARD_BENCH_MARIADB")
        .unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".to_owned())
}

/// Runs `sql` (text protocol, or prepared) on `db` and prints the figures.
async fn measure(db: &Database, label: &str, sql: &str, cell: usize, prepared: bool) {
    let limits = QueryLimits::default();
    // Warm the pool up so that the figures are the query's alone.
    let _ = db.query_read_only("SELECT 1", &[], &limits).await;
    let rss_before = status("VmRSS");
    let heap_before = PEAK.current_usage();
    PEAK.reset_peak_usage();
    reset_peak_rss();
    let started = Instant::now();
    let result: Result<QueryResult, SqlError> = if prepared {
        db.query_prepared(sql, &[], &limits).await
    } else {
        db.query_read_only(sql, &[], &limits).await
    };
    let elapsed = started.elapsed();
    let peak_rss = status("VmHWM").saturating_sub(rss_before);
    let peak_heap = PEAK.peak_usage().saturating_sub(heap_before);
    let (got, outcome) = match &result {
        Ok(r) => (
            r.rows
                .first()
                .and_then(|row| row.first())
                .map_or(0, |v| v.as_str().map_or(v.to_string().len(), str::len)),
            format!("{} row(s), truncated={}", r.rows.len(), r.truncated),
        ),
        Err(e) => (0, format!("error: {e}")),
    };
    drop(result);
    let next = db.query_read_only("SELECT 1", &[], &limits).await.is_ok();
    // A connection closed after a large row is closed by a task of its own.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let rss_after = status("VmRSS");
    println!(
        "{label:<18} cell {:>6.1} MiB -> {got:>8} B, {outcome:<26} peak RSS +{:>6.1} MiB ({:>4.2}x the cell)  \
         peak Rust heap +{:>6.1} MiB  RSS after +{:>5.1} MiB{}  {:>5.0} ms",
        mib(cell),
        mib(peak_rss),
        peak_rss as f64 / cell.max(1) as f64,
        mib(peak_heap),
        mib(rss_after.saturating_sub(rss_before)),
        if next { "" } else { " (next query failed)" },
        elapsed.as_secs_f64() * 1000.0
    );
}

async fn connect(url: &str) -> Option<Database> {
    match Database::connect(url).await {
        Ok(db) => Some(db),
        Err(e) => {
            println!("SKIPPED {url}: {e}");
            None
        }
    }
}

/// The server's `max_allowed_packet`.
async fn max_packet(db: &Database) -> u64 {
    db.query_read_only(
        "SELECT @@global.max_allowed_packet",
        &[],
        &QueryLimits::default(),
    )
    .await
    .ok()
    .and_then(|r| r.rows.first()?.first()?.as_u64())
    .unwrap_or(16 << 20)
}

async fn case(name: &str, n: usize) {
    match name {
        "sqlite-text" | "sqlite-blob" => {
            let db = Database::connect("sqlite::memory:").await.unwrap();
            let sql = if name == "sqlite-text" {
                format!("SELECT printf('%.*c', {n}, 'x')")
            } else {
                format!("SELECT zeroblob({n})")
            };
            measure(&db, name, &sql, n, false).await;
        }
        "postgres-text" | "postgres-prepared" | "postgres-bytea" => {
            let Some(db) = connect(&pg_url()).await else {
                return;
            };
            let sql = if name == "postgres-bytea" {
                // A bytea of n/2 bytes: n bytes of hex text on the wire (the text protocol), as here.
                format!("SELECT convert_to(repeat('x', {}), 'UTF8')", n / 2)
            } else {
                format!("SELECT repeat('x', {n})")
            };
            measure(&db, name, &sql, n, name == "postgres-prepared").await;
        }
        _ => {
            let Some(db) = connect(&mariadb_url()).await else {
                return;
            };
            let n = n.min(usize::try_from(max_packet(&db).await).unwrap_or(usize::MAX));
            let sql = format!("SELECT REPEAT('x', {n})");
            measure(&db, name, &sql, n, name == "mariadb-prepared").await;
        }
    }
}

fn main() {
    let mut n = 200_000_000usize;
    let mut raise = false;
    let mut only = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--raise-mariadb-packet" {
            raise = true;
        } else if arg == "--case" {
            only = args.next();
        } else if let Ok(bytes) = arg.replace('_', "").parse() {
            n = bytes;
        }
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    if let Some(name) = only {
        rt.block_on(case(&name, n));
        return;
    }
    let mut restore = None;
    if raise {
        rt.block_on(async {
            if let Some(admin) = connect(&mariadb_url()).await {
                restore = Some(max_packet(&admin).await);
                admin
                    .execute_script("SET GLOBAL max_allowed_packet = 1073741824")
                    .await
                    .unwrap();
                admin.close().await;
            }
        });
    }
    println!(
        "one cell of {n} bytes, byte cap {} (QueryLimits::default), each case in a fresh process",
        QueryLimits::default().max_bytes
    );
    let me = std::env::current_exe().unwrap();
    for name in CASES {
        let status = Command::new(&me)
            .args(["--case", name, &n.to_string()])
            .status();
        if !status.is_ok_and(|s| s.success()) {
            println!("{name}: the case failed");
        }
    }
    if let Some(before) = restore {
        rt.block_on(async {
            if let Some(admin) = connect(&mariadb_url()).await {
                admin
                    .execute_script(&format!("SET GLOBAL max_allowed_packet = {before}"))
                    .await
                    .unwrap();
            }
        });
    }
}
