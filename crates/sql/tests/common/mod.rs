//! Test databases: SQLite files, and fresh PostgreSQL and MariaDB databases loaded with the shared Chinook
//! scripts. A server that does not answer makes its tests print SKIPPED (and fail under CI=true).
#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use steward_sql::Database;

pub const PG_ADMIN: &str = "postgres://postgres@127.0.0.1:5432/test";
pub const MARIA_ADMIN: &str = "mysql://root@127.0.0.1:3306/test";

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Reports a missing prerequisite: SKIPPED locally, a failure under CI.
pub fn skip(what: &str) {
    if ci() {
        panic!("{what} (CI=true: required)");
    }
    eprintln!("SKIPPED: {what}");
}

/// The reference data: `STEWARD_SHARED_DATA` when set, else the repository's own `testdata/` folder.
pub fn shared_data() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("STEWARD_SHARED_DATA").map(PathBuf::from) {
        if dir.is_dir() {
            return Some(dir);
        }
        skip(&format!(
            "STEWARD_SHARED_DATA={} is not a folder",
            dir.display()
        ));
        return None;
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    if dir.is_dir() {
        return Some(dir);
    }
    skip(
        "the reference data (testdata/ in the repository) is absent; set STEWARD_SHARED_DATA to its folder",
    );
    None
}

/// A fresh copy of a file in the test's temporary directory.
pub fn temp_copy(source: &std::path::Path, name: &str) -> PathBuf {
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "{}-{}-{name}",
        std::process::id(),
        unique()
    ));
    std::fs::copy(source, &target).unwrap();
    target
}

pub fn unique() -> String {
    // The clock alone is not enough: two tests of one process can read the same time (seen in CI: two demo
    // databases in one file, "table customers already exists").
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{:x}{n}", nanos & 0xffff_ffff_ffff)
}

/// The Chinook SQLite database, copied.
pub async fn chinook_sqlite() -> Option<Database> {
    let file = shared_data()?.join("chinook/Chinook_Sqlite.sqlite");
    let copy = temp_copy(&file, "chinook.sqlite");
    Some(
        Database::connect(&format!("sqlite://{}", copy.display()))
            .await
            .unwrap(),
    )
}

/// A scratch SQLite database file.
pub async fn scratch_sqlite(setup: &str) -> Database {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "scratch-{}-{}.sqlite",
        std::process::id(),
        unique()
    ));
    let db = Database::connect(&format!("sqlite://{}?mode=rwc", path.display()))
        .await
        .unwrap();
    db.execute_script(setup).await.unwrap();
    db
}

/// The Chinook script without the lines that create, drop or switch databases.
fn chinook_script(name: &str) -> Option<String> {
    let text = std::fs::read_to_string(shared_data()?.join("chinook").join(name)).unwrap();
    let start = text.find("Create Tables").unwrap_or(0);
    let start = text[..start].rfind("/*").unwrap_or(0);
    Some(text[start..].to_owned())
}

/// Creates a database named for this run on a server, loads `script`, and returns its URL. Databases of
/// earlier runs older than two hours are dropped first.
pub async fn fresh(admin_url: &str, script: &str, mysql: bool) -> Result<String, String> {
    let admin = Database::connect(admin_url)
        .await
        .map_err(|e| e.to_string())?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let name = format!("steward_t_{now}_{}", unique());
    let list = if mysql {
        "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE 'steward\\_t\\_%'"
    } else {
        "SELECT datname::text FROM pg_database WHERE datname LIKE 'steward\\_t\\_%'"
    };
    let limits = steward_sql::QueryLimits {
        max_rows: 10_000,
        ..Default::default()
    };
    if let Ok(old) = admin.query_read_only(list, &[], &limits).await {
        for row in old.rows {
            let old_name = steward_sql::cell_text(&row[0]);
            let born: u64 = old_name
                .split('_')
                .nth(2)
                .and_then(|t| t.parse().ok())
                .unwrap_or(now);
            if now.saturating_sub(born) > 7200 {
                let _ = admin
                    .execute_script(&format!("DROP DATABASE IF EXISTS {old_name}"))
                    .await;
            }
        }
    }
    admin
        .execute_script(&format!("CREATE DATABASE {name}"))
        .await
        .map_err(|e| e.to_string())?;
    admin.close().await;
    let url = admin_url
        .rsplit_once('/')
        .map(|(base, _)| format!("{base}/{name}"))
        .unwrap();
    let db = Database::connect(&url).await.map_err(|e| e.to_string())?;
    if !script.is_empty() {
        db.execute_script(script).await.map_err(|e| e.to_string())?;
    }
    // Statistics, as a live database has them (row estimates).
    if !mysql {
        db.execute_script("ANALYZE")
            .await
            .map_err(|e| e.to_string())?;
    }
    db.close().await;
    Ok(url)
}

fn fixture(
    cell: &'static OnceLock<Option<String>>,
    admin: &'static str,
    script: &'static str,
    mysql: bool,
) -> Option<String> {
    cell.get_or_init(|| {
        let script = chinook_script(script)?;
        // Its own runtime: pools must not outlive the runtime that made them.
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(fresh(admin, &script, mysql))
        })
        .join()
        .unwrap()
        .map_err(|e| {
            skip(&format!(
                "{} is not usable: {e}",
                if mysql {
                    "MariaDB at 127.0.0.1:3306"
                } else {
                    "PostgreSQL at 127.0.0.1:5432"
                }
            ))
        })
        .ok()
    })
    .clone()
}

/// The URL of this run's Chinook database on PostgreSQL.
pub fn chinook_postgres_url() -> Option<String> {
    static URL: OnceLock<Option<String>> = OnceLock::new();
    fixture(&URL, PG_ADMIN, "Chinook_PostgreSql.sql", false)
}

/// The URL of this run's Chinook database on MariaDB.
pub fn chinook_mariadb_url() -> Option<String> {
    static URL: OnceLock<Option<String>> = OnceLock::new();
    fixture(&URL, MARIA_ADMIN, "Chinook_MySql.sql", true)
}

/// This run's Chinook database on PostgreSQL.
pub async fn chinook_postgres() -> Option<Database> {
    Some(Database::connect(&chinook_postgres_url()?).await.unwrap())
}

/// This run's Chinook database on MariaDB.
pub async fn chinook_mariadb() -> Option<Database> {
    Some(Database::connect(&chinook_mariadb_url()?).await.unwrap())
}

/// Splits a defog gold field into its statements and expands column alternatives: `{a, b}` selects both, and
/// a later `{}` repeats the columns of the last group (defog's convention for `GROUP BY {}`).
pub fn defog_statements(gold: &str) -> Vec<String> {
    let mut expanded = String::new();
    let mut last_group = String::new();
    let mut rest = gold;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        expanded.push_str(&rest[..open]);
        let inner = &rest[open + 1..open + close];
        if inner.trim().is_empty() {
            expanded.push_str(&last_group);
        } else {
            last_group = inner.to_owned();
            expanded.push_str(inner);
        }
        rest = &rest[open + close + 1..];
    }
    expanded.push_str(rest);
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in expanded.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                current.push(c);
            }
            ';' if !quoted => {
                if !current.trim().is_empty() {
                    out.push(current.trim().to_owned());
                }
                current.clear();
            }
            _ => current.push(c),
        }
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_owned());
    }
    out
}

/// Every defog gold statement with its database name, from both question sets.
pub fn defog_gold(data: &std::path::Path) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for file in ["questions_gen_postgres.csv", "instruct_basic_postgres.csv"] {
        let mut reader = csv::Reader::from_path(data.join("defog").join(file)).unwrap();
        for record in reader.deserialize::<std::collections::HashMap<String, String>>() {
            let record = record.unwrap();
            for sql in defog_statements(&record["query"]) {
                out.push((record["db_name"].clone(), record["question"].clone(), sql));
            }
        }
    }
    out
}

/// Limits with a row cap.
pub fn limits(max_rows: usize) -> steward_sql::QueryLimits {
    steward_sql::QueryLimits {
        max_rows,
        ..steward_sql::QueryLimits::default()
    }
}

/// This run's Chinook on every engine that answers: (name, database, the Track table's name there).
pub async fn engines() -> Vec<(&'static str, Database, &'static str)> {
    let mut out = Vec::new();
    if let Some(db) = chinook_sqlite().await {
        out.push(("sqlite", db, "Track"));
    }
    if let Some(db) = chinook_postgres().await {
        out.push(("postgres", db, "track"));
    }
    if let Some(db) = chinook_mariadb().await {
        out.push(("mariadb", db, "Track"));
    }
    out
}
