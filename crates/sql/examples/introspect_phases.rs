//! Where introspection's time and memory go, phase by phase, in one process: connect, read the catalog (with or
//! without samples), build the schema context; wall time since start, current and peak RSS after each.
//!
//! Run: `cargo run --release -p steward-sql --example introspect_phases -- URL [skip]` (`skip`: no samples).
//! `bench/introspect.sh` times the whole `steward schema` process instead.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::time::Instant;
use steward_sql::{Database, IntrospectOptions, schema_context};

fn rss() -> String {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let cur = s
        .lines()
        .find(|l| l.starts_with("VmRSS"))
        .unwrap_or("")
        .to_owned();
    let hwm = s
        .lines()
        .find(|l| l.starts_with("VmHWM"))
        .unwrap_or("")
        .to_owned();
    format!("{cur} {hwm}")
}

#[tokio::main]
async fn main() {
    let url = std::env::args()
        .nth(1)
        .expect("usage: introspect_phases URL [skip]");
    let skip = std::env::args().nth(2).is_some();
    let t = Instant::now();
    let db = Database::connect(&url).await.unwrap();
    eprintln!("connect {:?} {}", t.elapsed(), rss());
    let dir = std::env::temp_dir().join(format!("phases-{}", std::process::id()));
    let c = db
        .refresh_catalog(&IntrospectOptions {
            skip_samples: skip,
            cache_dir: Some(dir.clone()),
        })
        .await
        .unwrap();
    eprintln!("catalog {:?} {}", t.elapsed(), rss());
    let ctx = schema_context(&c, None, 1000);
    eprintln!("context {:?} {} {}", t.elapsed(), rss(), ctx.tokens);
    let _ = std::fs::remove_dir_all(dir);
}
