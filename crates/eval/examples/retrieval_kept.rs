//! Measures the schema context on a retrieval benchmark kept by `steward eval retrieval --out DIR`, without
//! rebuilding the merged schema: a quick loop for work on the ranking. Misses are listed for the tuning split
//! only (the held-out split's questions must not tune the ranking).
//!
//! Run: `cargo run -p steward-eval --example retrieval_kept -- DIR [BUDGET…]`; with `MISSES=BUDGET` it lists the
//! tuning misses at that budget, with `RANKS=1` where each tuning question's worst gold table ranks (and the
//! objective the weights were fitted to: the mean of log2(1 + that rank); `QUIET=1` prints only the summary,
//! `DBS=a,b` keeps those databases' questions, for cross-validation within the tuning split), with
//! `CONTEXT="a question"` the context of that question at the first budget, with `HELDOUT=1` the other splits'
//! figures too (an aggregate, to check progress sparingly).
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout
)]

use steward_eval::{RetrievalQuestion, Split, measure};
use steward_sql::Database;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().expect("usage: retrieval_kept DIR [BUDGET…]"));
    let mut budgets: Vec<usize> = args.map(|a| a.parse().expect("a budget")).collect();
    if budgets.is_empty() {
        budgets = vec![500, 1000, 2000];
    }
    let questions: Vec<RetrievalQuestion> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("questions.json")).unwrap())
            .unwrap();
    let db = Database::connect(&format!(
        "sqlite://{}?mode=ro",
        dir.join("schema.sqlite").display()
    ))
    .await
    .unwrap();
    let catalog = db.catalog().await.unwrap();
    if let Ok(q) = std::env::var("CONTEXT") {
        let ctx = steward_sql::schema_context(&catalog, Some(&q), budgets[0]);
        println!("{}", ctx.text);
        return;
    }
    if std::env::var("RANKS").is_ok() {
        // Where each tuning question's worst-placed gold table ranks (the whole schema in order).
        let index = steward_sql::ContextIndex::new(&catalog);
        let mut worst = Vec::new();
        let dbs = std::env::var("DBS").ok();
        for q in questions.iter().filter(|q| q.split == Split::Tune) {
            if dbs
                .as_deref()
                .is_some_and(|d| !d.split(',').any(|d| d == q.db))
            {
                continue;
            }
            let order = index.ranking(&q.question);
            let rank = q
                .gold_tables
                .iter()
                .map(|g| {
                    order
                        .iter()
                        .position(|t| t.eq_ignore_ascii_case(g))
                        .unwrap_or(9999)
                })
                .max()
                .unwrap_or(0);
            if rank >= 10 && std::env::var("QUIET").is_err() {
                println!(
                    "rank {rank:>4} {} {:?} gold {:?} top {:?}",
                    q.id,
                    q.question,
                    q.gold_tables,
                    &order[..8]
                );
            }
            worst.push(rank);
        }
        let j: f64 =
            worst.iter().map(|&r| ((r + 1) as f64).log2()).sum::<f64>() / worst.len() as f64;
        println!("objective {j:.4}");
        for cut in [1, 3, 5, 10, 20, 40, 80] {
            let share = worst.iter().filter(|&&r| r < cut).count() as f64 / worst.len() as f64;
            println!("worst gold rank < {cut:>3}: {share:.3}");
        }
        return;
    }
    let report = measure(&catalog, &questions, &budgets);
    let show = std::env::var("MISSES").ok();
    for miss in report.misses.iter().filter(|m| m.split == Split::Tune) {
        if show
            .as_deref()
            .is_some_and(|b| b == miss.budget.to_string())
        {
            println!(
                "miss {} {} {:?}\n  missing {:?}\n  selected {:?}",
                miss.budget,
                miss.id,
                miss.question,
                miss.missing,
                &miss.selected[..miss.selected.len().min(12)]
            );
        }
    }
    for split in &report.splits {
        if split.split == "tune" || std::env::var("HELDOUT").is_ok() {
            for b in &split.budgets {
                println!(
                    "{:<8} {:>4} {:>5} recall {:.3} all {:.3} tokens {:.0}",
                    split.split,
                    split.questions,
                    b.budget,
                    b.mean_recall,
                    b.all_found,
                    b.mean_tokens
                );
            }
        }
    }
}
