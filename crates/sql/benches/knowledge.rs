//! What the knowledge costs a turn: the time to build the analyst's schema context for a question with the
//! knowledge (`knowledge_context`), on the Spider slice's `car_1` catalog, with a pool of 0, 50 and 250
//! verified examples (the slice's gold queries) and a glossary and metrics, against the plain schema context.
//! Every turn of the analyst builds one.
//!
//! Run: `cargo bench -p steward-sql --bench knowledge`
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;

use steward_sql::{
    Database, Dialect, Example, ExamplePool, ExampleReader, GlossaryEntry, Guard, Knowledge,
    Metric, knowledge_context, schema_context,
};

const ROUNDS: usize = 50;

fn main() {
    let Some(data) = common::shared_data().map(|d| d.join("spider-slice")) else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dev: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("dev.json")).unwrap()).unwrap();
    let path = data.join("database/car_1/car_1.sqlite");
    let catalog = rt.block_on(async {
        let db = Database::connect(&format!("sqlite://{}", path.display()))
            .await
            .unwrap();
        db.catalog().await.unwrap()
    });
    let pool: Vec<Example> = dev
        .as_array()
        .unwrap()
        .iter()
        .map(|q| Example {
            question: q["question"].as_str().unwrap().to_owned(),
            sql: q["query"].as_str().unwrap().to_owned(),
        })
        .collect();
    let mut knowledge = Knowledge::default();
    knowledge.glossary.push(GlossaryEntry {
        term: "fast car".into(),
        meaning: "accelerates from 0 to 60 in under 12 seconds".into(),
        sql: Some("cars_data.Accelerate < 12".into()),
        ..GlossaryEntry::default()
    });
    knowledge.metrics.insert(
        "average horsepower".into(),
        Metric {
            sql: "AVG(cars_data.Horsepower)".into(),
            ..Metric::default()
        },
    );
    let guard = Guard::new(Dialect::Sqlite);
    let question = "What is the average horsepower of the fast cars made in 1974 by each maker?";
    let time = |f: &dyn Fn()| {
        let mut times: Vec<f64> = (0..ROUNDS)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        times.sort_by(f64::total_cmp);
        times[ROUNDS / 2]
    };
    println!("knowledge in the schema context (car_1, budget 1500, median of {ROUNDS})");
    let plain = time(&|| {
        schema_context(&catalog, Some(question), 1500);
    });
    println!("  plain schema context:          {plain:.3} ms");
    for n in [0usize, 50, 250] {
        // Indexed once, as the toolkit does when the saved examples change.
        let examples = ExamplePool::new(&knowledge, &pool[..n.min(pool.len())], &guard);
        let ms = time(&|| {
            knowledge_context(
                &catalog,
                &catalog,
                &knowledge,
                &examples,
                Some(question),
                1500,
                &ExampleReader::everything(guard.clone()),
            );
        });
        println!("  with knowledge, {n:>3} examples:  {ms:.3} ms");
    }
}
