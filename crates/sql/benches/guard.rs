//! The guard's time per verdict over every gold query of the shared Spider slice (SQLite) and defog sets
//! (PostgreSQL), and verdicts per second on one thread. Goal: median under 50 µs. Then the same with scoping
//! (`Guard::scoped`): every table the query reads filtered by a principal's value, the text edited at the
//! located spans and checked again.
//!
//! Run: `cargo bench -p steward-sql --bench guard`
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;

use std::collections::BTreeMap;

use steward_sql::{Dialect, Guard, Scope};

const ROUNDS: usize = 200;

fn main() {
    let Some(data) = common::shared_data() else {
        return;
    };
    let mut corpus: Vec<(Dialect, String)> = Vec::new();
    let spider: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("spider-slice/dev.json")).unwrap())
            .unwrap();
    for item in spider.as_array().unwrap() {
        corpus.push((Dialect::Sqlite, item["query"].as_str().unwrap().to_owned()));
    }
    for (_, _, sql) in common::defog_gold(&data) {
        corpus.push((Dialect::Postgres, sql));
    }
    let guards = [Guard::new(Dialect::Sqlite), Guard::new(Dialect::Postgres)];
    let guard = |d: Dialect| {
        if d == Dialect::Sqlite {
            &guards[0]
        } else {
            &guards[1]
        }
    };
    let mut medians: Vec<f64> = Vec::new();
    let mut allowed = 0;
    for (dialect, sql) in &corpus {
        if guard(*dialect).check(sql).allowed {
            allowed += 1;
        }
        let mut times: Vec<f64> = (0..ROUNDS)
            .map(|_| {
                let started = Instant::now();
                std::hint::black_box(guard(*dialect).check(std::hint::black_box(sql)));
                started.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        times.sort_by(f64::total_cmp);
        medians.push(times[ROUNDS / 2]);
    }
    // Throughput: whole passes over the corpus on one thread, as a server checking a stream of queries would.
    let passes = 20;
    let started = Instant::now();
    for _ in 0..passes {
        for (dialect, sql) in &corpus {
            std::hint::black_box(guard(*dialect).check(std::hint::black_box(sql)));
        }
    }
    let per_second = (passes * corpus.len()) as f64 / started.elapsed().as_secs_f64();
    medians.sort_by(f64::total_cmp);
    let pct = |p: f64| medians[((medians.len() - 1) as f64 * p) as usize];
    println!(
        "guard: {} gold queries ({allowed} allowed), {ROUNDS} rounds each",
        corpus.len()
    );
    println!(
        "  time per verdict: median {:.1} µs, p90 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
        pct(0.5),
        pct(0.9),
        pct(0.99),
        pct(1.0)
    );
    println!("  verdicts per second on one thread: {per_second:.0}");
    scoped(&corpus, &guard);
}

/// Time per scoped verdict: each table the query reads gets a row filter bound to a principal's value.
fn scoped<'g>(corpus: &[(Dialect, String)], guard: &impl Fn(Dialect) -> &'g Guard) {
    let attributes: BTreeMap<String, serde_json::Value> =
        [("id".to_owned(), serde_json::json!(7))].into();
    let mut medians: Vec<f64> = Vec::new();
    let mut scoped = 0;
    for (dialect, sql) in corpus {
        let g = guard(*dialect);
        let verdict = g.check(sql);
        if !verdict.allowed {
            continue;
        }
        let mut scope = Scope::new();
        for table in &verdict.tables {
            scope
                .filter(*dialect, table, "id = {principal.id}", &attributes)
                .unwrap();
        }
        if g.scoped(sql, &scope).is_ok() {
            scoped += 1;
        }
        let mut times: Vec<f64> = (0..ROUNDS / 4)
            .map(|_| {
                let started = Instant::now();
                let _ = std::hint::black_box(g.scoped(std::hint::black_box(sql), &scope));
                started.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        times.sort_by(f64::total_cmp);
        medians.push(times[times.len() / 2]);
    }
    medians.sort_by(f64::total_cmp);
    let pct = |p: f64| medians[((medians.len() - 1) as f64 * p) as usize];
    println!(
        "scoped: {} allowed gold queries ({scoped} scoped), every table filtered",
        medians.len()
    );
    println!(
        "  time per scoped verdict: median {:.1} µs, p90 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
        pct(0.5),
        pct(0.9),
        pct(0.99),
        pct(1.0)
    );
}
