//! Schema context on the Spider slice: for each dev question, the share of the gold SQL's tables that the
//! context for that question contains, and the context's tokens, at budgets of 500, 1,000 and 2,000 tokens.
//!
//! Run: `cargo bench -p steward-sql --bench context_recall`
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::collections::HashMap;
use std::sync::Arc;

use steward_sql::{Catalog, Database, Dialect, Guard, schema_context};

fn main() {
    let Some(data) = common::shared_data().map(|d| d.join("spider-slice")) else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dev: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("dev.json")).unwrap()).unwrap();
    let mut catalogs: HashMap<String, Arc<Catalog>> = HashMap::new();
    let guard = Guard::new(Dialect::Sqlite);
    println!(
        "schema context on the Spider slice ({} questions)",
        dev.as_array().unwrap().len()
    );
    for db_id in ["concert_singer", "pets_1", "car_1", "flight_2"] {
        let path = data
            .join("database")
            .join(db_id)
            .join(format!("{db_id}.sqlite"));
        let catalog = rt.block_on(async {
            let db = Database::connect(&format!("sqlite://{}", path.display()))
                .await
                .unwrap();
            db.catalog().await.unwrap()
        });
        let full = schema_context(&catalog, None, usize::MAX / 4);
        println!(
            "  {db_id}: {} tables, whole schema {} tokens",
            catalog.tables.len(),
            full.tokens
        );
        catalogs.insert(db_id.to_owned(), catalog);
    }
    let spider: Vec<(String, String, String)> = dev
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["db_id"].as_str().unwrap().to_owned(),
                i["question"].as_str().unwrap().to_owned(),
                i["query"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    recall(&catalogs, &spider, &guard, &[200, 500, 1000, 2000]);

    // The defog databases are larger (up to 25 tables): a harder test of the ranking.
    let defog = data.join("../defog");
    let loaded = rt.block_on(load_defog(&defog));
    match loaded {
        Ok(catalogs) => {
            let gold = common::defog_gold(&data.join(".."));
            println!(
                "schema context on the defog databases ({} gold statements)",
                gold.len()
            );
            for (name, c) in &catalogs {
                let full = schema_context(c, None, usize::MAX / 4);
                println!(
                    "  {name}: {} tables, whole schema {} tokens",
                    c.tables.len(),
                    full.tokens
                );
            }
            recall(
                &catalogs,
                &gold,
                &Guard::new(Dialect::Postgres),
                &[500, 1000, 2000],
            );
        }
        Err(e) => eprintln!("SKIPPED defog (PostgreSQL): {e}"),
    }
}

/// Loads each defog database into a fresh PostgreSQL database and reads its catalog.
async fn load_defog(dir: &std::path::Path) -> Result<HashMap<String, Arc<Catalog>>, String> {
    let admin = Database::connect(common::PG_ADMIN)
        .await
        .map_err(|e| e.to_string())?;
    let mut out = HashMap::new();
    for name in [
        "academic",
        "advising",
        "atis",
        "broker",
        "car_dealership",
        "derm_treatment",
        "ewallet",
        "geography",
        "restaurants",
        "scholar",
        "yelp",
    ] {
        let db_name = format!("steward_bench_{name}_{}", common::unique());
        admin
            .execute_script(&format!("CREATE DATABASE {db_name}"))
            .await
            .map_err(|e| e.to_string())?;
        let url = format!("postgres://postgres@127.0.0.1:5432/{db_name}");
        let db = Database::connect(&url).await.map_err(|e| e.to_string())?;
        let script =
            std::fs::read_to_string(dir.join("databases").join(name).join(format!("{name}.sql")))
                .map_err(|e| e.to_string())?;
        db.execute_script(&script)
            .await
            .map_err(|e| format!("{name}: {e}"))?;
        db.execute_script("ANALYZE")
            .await
            .map_err(|e| e.to_string())?;
        out.insert(
            name.to_owned(),
            db.catalog().await.map_err(|e| e.to_string())?,
        );
        db.close().await;
        let _ = admin
            .execute_script(&format!("DROP DATABASE {db_name}"))
            .await;
    }
    Ok(out)
}

/// Recall of gold tables in the context, per budget.
fn recall(
    catalogs: &HashMap<String, Arc<Catalog>>,
    items: &[(String, String, String)],
    guard: &Guard,
    budgets: &[usize],
) {
    for &budget in budgets {
        let (mut recall_sum, mut complete, mut tokens, mut n) = (0.0, 0, 0usize, 0);
        for (db_id, question, sql) in items {
            let Some(catalog) = catalogs.get(db_id) else {
                continue;
            };
            let gold: Vec<String> = guard
                .check(sql)
                .tables
                .iter()
                .map(|t| t.to_lowercase().trim_start_matches("public.").to_owned())
                .collect();
            if gold.is_empty() {
                continue;
            }
            let context = schema_context(catalog, Some(question), budget);
            let got: Vec<String> = context.tables.iter().map(|t| t.to_lowercase()).collect();
            let found = gold.iter().filter(|g| got.contains(g)).count();
            recall_sum += found as f64 / gold.len() as f64;
            if found == gold.len() {
                complete += 1;
            }
            tokens += context.tokens;
            n += 1;
        }
        println!(
            "  budget {budget:>5}: gold tables present {:.1}% (all of them in {:.1}% of questions), mean context {} tokens",
            100.0 * recall_sum / n as f64,
            100.0 * complete as f64 / n as f64,
            tokens / n
        );
    }
}
