//! Test helpers: the reference data, SKIPPED reports, fresh PostgreSQL databases, and an independent
//! (brute-force, string-based) comparison to check the scorer's counts against.
#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;
use steward_eval::Rows;
use steward_sql::{Database, QueryLimits};

pub const PG_ADMIN: &str = "postgres://postgres@127.0.0.1:5432/postgres";

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Reports a missing prerequisite: SKIPPED locally, a failure under CI.
pub fn skip(what: &str) {
    if ci() {
        panic!("{what} (CI=true: required)");
    }
    eprintln!("\n==================== SKIPPED: {what} ====================\n");
}

/// The reference data: `STEWARD_SHARED_DATA` when set, else the repository's `testdata/`.
pub fn testdata() -> PathBuf {
    if let Some(dir) = std::env::var_os("STEWARD_SHARED_DATA").map(PathBuf::from) {
        return dir;
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// A name unique to this run.
pub fn unique(prefix: &str) -> String {
    // The clock alone is not enough: two tests of one process can read the same time.
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    format!(
        "{prefix}_{}_{}_{:x}_{}",
        now.as_secs(),
        std::process::id(),
        now.subsec_nanos(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// A scratch file path in the test target directory.
pub fn scratch(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(unique(name))
}

/// Limits for helper queries.
pub fn limits() -> QueryLimits {
    QueryLimits {
        max_rows: 100_000,
        max_bytes: 256 << 20,
        ..QueryLimits::default()
    }
}

/// Runs a query; its rows, or the error text.
pub async fn rows(db: &Database, sql: &str) -> Result<Rows, String> {
    match db.query_read_only(sql, &[], &limits()).await {
        Ok(r) => {
            assert!(!r.truncated, "{sql}");
            Ok(Rows::from(r))
        }
        Err(e) => Err(e.to_string()),
    }
}

/// A cell as text for the independent comparison: numbers (JSON numbers and decimal strings alike) printed
/// with 10 significant digits, other strings as they are, NULL as a marker no string equals.
pub fn canonical(value: &Value) -> String {
    let number = match value {
        Value::Number(n) => n.as_f64(),
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        Value::String(s)
            if !s.is_empty()
                && s.trim_start_matches('-')
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == '.')
                && s.matches('.').count() <= 1
                && !(s.trim_start_matches('-').len() > 1
                    && s.trim_start_matches('-').starts_with('0')
                    && !s.trim_start_matches('-').starts_with("0.")) =>
        {
            s.parse::<f64>().ok()
        }
        _ => None,
    };
    match (number, value) {
        (Some(x), _) => format!("#{:.9e}", x + 0.0),
        (None, Value::Null) => "\u{0}NULL".to_owned(),
        (None, Value::String(s)) => format!("'{s}"),
        (None, other) => other.to_string(),
    }
}

fn canonical_rows(rows: &Rows) -> Vec<Vec<String>> {
    rows.rows
        .iter()
        .map(|r| r.iter().map(canonical).collect())
        .collect()
}

/// Every permutation of `0..n` (Heap's algorithm would do; this is the plain recursive one).
pub fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for i in 0..=p.len() {
            let mut q = p.clone();
            q.insert(i, n - 1);
            out.push(q);
        }
    }
    out
}

/// Spider's rule by brute force: every column permutation, bags compared by sorting.
pub fn naive_spider(gold: &Rows, predicted: &Rows, order_matters: bool) -> bool {
    let (g, p) = (canonical_rows(gold), canonical_rows(predicted));
    if g.is_empty() && p.is_empty() {
        return true;
    }
    if g.len() != p.len() || g[0].len() != p[0].len() {
        return false;
    }
    let mut g_sorted = g.clone();
    g_sorted.sort();
    permutations(g[0].len()).into_iter().any(|perm| {
        let mut permuted: Vec<Vec<String>> = p
            .iter()
            .map(|r| perm.iter().map(|&i| r[i].clone()).collect())
            .collect();
        if order_matters {
            permuted == g
        } else {
            permuted.sort();
            permuted == g_sorted
        }
    })
}

/// defog's rule, written plainly: both empty with the same width; or the same width and the same rows
/// (duplicates dropped) once each side's columns are put in the order of their names; or the gold is not
/// empty and some assignment of distinct predicted columns to the gold columns, each with the same sorted
/// values as its gold column, gives the gold rows (duplicates dropped on both sides). Exhaustive where the
/// official is greedy; numbers to 10 significant digits where it uses pandas' tolerance.
pub fn naive_defog(gold: &Rows, predicted: &Rows) -> bool {
    let (g, p) = (canonical_rows(gold), canonical_rows(predicted));
    let (gw, pw) = (gold.columns.len(), predicted.columns.len());
    let dedup = |mut rows: Vec<Vec<String>>| {
        rows.sort();
        rows.dedup();
        rows
    };
    let by_name = |rows: &[Vec<String>], names: &[String]| {
        let mut order: Vec<usize> = (0..names.len()).collect();
        order.sort_by_key(|&i| names[i].clone());
        dedup(
            rows.iter()
                .map(|r| order.iter().map(|&i| r[i].clone()).collect())
                .collect(),
        )
    };
    if gw == pw && by_name(&g, &gold.columns) == by_name(&p, &predicted.columns) {
        return true;
    }
    if g.is_empty() || g.len() != p.len() || gw > pw {
        return false;
    }
    let column = |rows: &[Vec<String>], c: usize| {
        let mut values: Vec<String> = rows.iter().map(|r| r[c].clone()).collect();
        values.sort();
        values
    };
    let candidates: Vec<Vec<usize>> = (0..gw)
        .map(|gc| {
            (0..pw)
                .filter(|&pc| column(&p, pc) == column(&g, gc))
                .collect()
        })
        .collect();
    let target = dedup(g.clone());
    fn assign(
        candidates: &[Vec<usize>],
        chosen: &mut Vec<usize>,
        check: &dyn Fn(&[usize]) -> bool,
    ) -> bool {
        let Some(options) = candidates.get(chosen.len()) else {
            return check(chosen);
        };
        for &o in options {
            if chosen.contains(&o) {
                continue;
            }
            chosen.push(o);
            if assign(candidates, chosen, check) {
                return true;
            }
            chosen.pop();
        }
        false
    }
    let check = |chosen: &[usize]| {
        dedup(
            p.iter()
                .map(|r| chosen.iter().map(|&i| r[i].clone()).collect())
                .collect(),
        ) == target
    };
    assign(&candidates, &mut Vec::new(), &check)
}

/// Creates a database named for this run on the local PostgreSQL and loads `script`; its URL, or why not.
pub async fn fresh_postgres(name: &str, script: &str) -> Result<String, String> {
    let admin = Database::connect(PG_ADMIN)
        .await
        .map_err(|e| e.to_string())?;
    admin
        .execute_script(&format!("CREATE DATABASE {name}"))
        .await
        .map_err(|e| e.to_string())?;
    admin.close().await;
    let url = format!("postgres://postgres@127.0.0.1:5432/{name}");
    let db = Database::connect(&url).await.map_err(|e| e.to_string())?;
    let loaded = db.execute_script(script).await.map_err(|e| e.to_string());
    db.close().await;
    loaded.map(|()| url)
}

/// Drops the databases that runs older than two hours left behind (a run killed before its cleanup):
/// names `steward_eval_<seconds>_…`.
pub async fn drop_stale_postgres() {
    let Ok(admin) = Database::connect(PG_ADMIN).await else {
        return;
    };
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let list = "SELECT datname::text FROM pg_database WHERE datname LIKE 'steward\\_eval\\_%'";
    let stale: Vec<String> = match admin.query_read_only(list, &[], &limits()).await {
        Ok(result) => result
            .rows
            .iter()
            .map(|row| steward_sql::cell_text(&row[0]))
            .filter(|name| {
                name.split('_')
                    .nth(2)
                    .and_then(|t| t.parse::<u64>().ok())
                    .is_some_and(|born| now.saturating_sub(born) > 7200)
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    admin.close().await;
    drop_postgres(&stale).await;
}

/// Drops the databases of this run, all at once (each drop waits for a checkpoint; concurrent drops share
/// it).
pub async fn drop_postgres(names: &[String]) {
    let drops: Vec<_> = names
        .iter()
        .map(|name| {
            let sql = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
            tokio::spawn(async move {
                if let Ok(admin) = Database::connect(PG_ADMIN).await {
                    let _ = admin.execute_script(&sql).await;
                    admin.close().await;
                }
            })
        })
        .collect();
    for drop in drops {
        let _ = drop.await;
    }
}
