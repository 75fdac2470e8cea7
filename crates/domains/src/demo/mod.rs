//! The demo database: a coffee-equipment shop with customers, products, orders, shipments, expenses, projects
//! and tasks, generated deterministically from a seed and a scale, on SQLite, PostgreSQL or MySQL/MariaDB.
//!
//! Money is generated in whole cents (integers), so every total is the exact sum of its items and every gross
//! amount is its net plus tax. A SQLite demo database is put in WAL mode: readers never wait for a writer, and
//! a writer killed mid-transaction leaves nothing a reader must roll back.
//!
//! - `schema`: the tables and their DDL in each dialect.
//! - `generate`: the generator's material: its random numbers (SplitMix64), names, places, products,
//!   carriers, expense categories, projects and tasks, and [`DemoConfig`].
//! - `rows`: the rows, table by table, drawn from the seed.
//! - `seed`: writing them: literals, batched INSERTs in one transaction per flush, and what each engine
//!   needs before and after.

mod generate;
mod rows;
mod schema;
mod seed;

use steward_sql::{Catalog, Database, Dialect, QueryLimits, SqlError, cell_text};

pub use generate::{DemoConfig, IN_TRANSIT_ORDER};
pub use schema::{TABLES, ddl, drop_all};

use seed::Writer;

/// What was generated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DemoSummary {
    /// Rows per table.
    pub rows: Vec<(String, u64)>,
    /// The order that is in transit with an ETA.
    pub in_transit_order: String,
}

/// The demo's tables that `catalog` already has (all of them: a demo database; some: a database that is not
/// a demo, which creating the demo must not clobber).
pub fn existing_tables(catalog: &Catalog) -> Vec<String> {
    TABLES
        .iter()
        .filter(|t| catalog.table(t).is_some())
        .map(|t| (*t).to_owned())
        .collect()
}

/// Whether `catalog` has every demo table (the expenses, orders and tasks agents need them).
pub fn has_schema(catalog: &Catalog) -> bool {
    TABLES.iter().all(|t| catalog.table(t).is_some())
}

/// Creates the schema (dropping the demo tables first) and fills it. `progress` is told `(done, total)` orders.
pub async fn create(
    db: &Database,
    config: DemoConfig,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<DemoSummary, SqlError> {
    seed::prepare(db).await?;
    let mut w = Writer::new(db, db.dialect());
    rows::write_all(&mut w, config, progress).await?;
    seed::finish(db).await?;
    Ok(DemoSummary {
        rows: w.counts,
        in_transit_order: IN_TRANSIT_ORDER.to_owned(),
    })
}

/// Some order codes in a given status (for suggestions and tests).
pub async fn order_codes(
    db: &Database,
    status: &str,
    limit: usize,
) -> Result<Vec<String>, SqlError> {
    let sql = format!("SELECT order_code FROM orders WHERE status = ? ORDER BY id LIMIT {limit}");
    let sql = if db.dialect() == Dialect::Postgres {
        sql.replace('?', "$1")
    } else {
        sql
    };
    let result = db
        .query_read_only(
            &sql,
            &[steward_sql::Param::Text(status.to_owned())],
            &QueryLimits::default(),
        )
        .await?;
    Ok(result
        .rows
        .iter()
        .map(|r| r.first().map(cell_text).unwrap_or_default())
        .collect())
}
