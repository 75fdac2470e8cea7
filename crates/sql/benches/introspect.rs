//! Introspection of a generated schema: 1,000 tables × 20 columns, each table with a foreign key to the one
//! before it and three rows (so samples are gathered), on SQLite and PostgreSQL. Goal: under 1 s each.
//!
//! Run: `cargo bench -p steward-sql --bench introspect` (PostgreSQL at 127.0.0.1:5432, else SKIPPED).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use steward_sql::{Database, IntrospectOptions};

const TABLES: usize = 1_000;

/// The DDL and rows of the generated schema, in the given dialect.
fn schema(postgres: bool) -> String {
    let mut sql = String::new();
    for i in 0..TABLES {
        let mut columns = vec!["id INTEGER PRIMARY KEY".to_owned()];
        for c in 1..19 {
            let ty = match c % 3 {
                0 => "TEXT",
                1 => "INTEGER",
                _ => {
                    if postgres {
                        "DOUBLE PRECISION"
                    } else {
                        "REAL"
                    }
                }
            };
            columns.push(format!("c{c} {ty}"));
        }
        if i == 0 {
            columns.push("parent_id INTEGER".to_owned());
        } else {
            columns.push(format!("parent_id INTEGER REFERENCES t{}(id)", i - 1));
        }
        sql.push_str(&format!("CREATE TABLE t{i} ({});\n", columns.join(", ")));
        for r in 1..=3 {
            let values: Vec<String> = (1..19)
                .map(|c| match c % 3 {
                    0 => format!("'value {r} of {c}'"),
                    1 => format!("{}", r * c),
                    _ => format!("{}.5", r * c),
                })
                .collect();
            sql.push_str(&format!(
                "INSERT INTO t{i} VALUES ({r}, {}, NULL);\n",
                values.join(", ")
            ));
        }
    }
    sql
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut group = c.benchmark_group("introspect_1000x20");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));

    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("introspect-{}.sqlite", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let sqlite_url = format!("sqlite://{}?mode=rwc", path.display());
    rt.block_on(async {
        let db = Database::connect(&sqlite_url).await.unwrap();
        db.execute_script(&schema(false)).await.unwrap();
        db.close().await;
    });
    let mut targets = vec![("sqlite", format!("sqlite://{}", path.display()))];
    match rt.block_on(postgres_database()) {
        Ok(url) => targets.push(("postgres", url)),
        Err(e) => eprintln!("SKIPPED postgres: {e}"),
    }
    for (engine, url) in &targets {
        for (label, skip_samples) in [("with_samples", false), ("structure_only", true)] {
            group.bench_function(format!("{engine}/{label}"), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        // A fresh connection each time: nothing cached.
                        let db = rt.block_on(Database::connect(url)).unwrap();
                        let options = IntrospectOptions {
                            skip_samples,
                            cache_dir: None,
                        };
                        let started = Instant::now();
                        let catalog = rt.block_on(db.refresh_catalog(&options)).unwrap();
                        total += started.elapsed();
                        assert_eq!(catalog.tables.len(), TABLES);
                        assert_eq!(catalog.tables[500].columns.len(), 20);
                        assert_eq!(catalog.table("t500").unwrap().foreign_keys.len(), 1);
                        if !skip_samples {
                            assert_eq!(catalog.table("t500").unwrap().columns[3].samples.len(), 3);
                        }
                        rt.block_on(db.close());
                    }
                    total
                });
            });
        }
    }
    group.finish();
    let _ = std::fs::remove_file(&path);
    if let Some((_, url)) = targets.iter().find(|(engine, _)| *engine == "postgres") {
        let name = url.rsplit('/').next().unwrap_or_default().to_owned();
        rt.block_on(async {
            if let Ok(admin) = Database::connect(common::PG_ADMIN).await {
                let _ = admin
                    .execute_script(&format!("DROP DATABASE IF EXISTS {name}"))
                    .await;
            }
        });
    }
}

/// A fresh PostgreSQL database holding the generated schema.
async fn postgres_database() -> Result<String, String> {
    let admin = Database::connect(common::PG_ADMIN)
        .await
        .map_err(|e| e.to_string())?;
    let name = format!("steward_bench_{}", common::unique());
    admin
        .execute_script(&format!("CREATE DATABASE {name}"))
        .await
        .map_err(|e| e.to_string())?;
    let url = format!("postgres://postgres@127.0.0.1:5432/{name}");
    let db = Database::connect(&url).await.map_err(|e| e.to_string())?;
    db.execute_script(&schema(true))
        .await
        .map_err(|e| e.to_string())?;
    db.execute_script("ANALYZE")
        .await
        .map_err(|e| e.to_string())?;
    db.close().await;
    Ok(url)
}

criterion_group!(benches, bench);
criterion_main!(benches);
