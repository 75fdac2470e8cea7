//! A straightforward reference reader of the catalog, to hold the fast one to: the catalog readers as they were
//! before introspection was made fast (three queries per engine, every row fetched, foreign keys resolved by a
//! search), and samples from one capped query per table through the public read path.
#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

mod mysql;
mod postgres;
mod sqlite;

use std::str::FromStr;
use std::time::Duration;

use steward_sql::{
    Catalog, Database, Dialect, MAX_SAMPLE_CHARS, MAX_SAMPLES, QueryLimits, TableKind, cell_text,
};

/// The catalog of the database at `url`, read the slow, plain way; `db` is used for the samples.
pub async fn catalog(url: &str, db: &Database) -> Catalog {
    let (dialect, tables) = if url.starts_with("sqlite:") {
        let options = sqlx::sqlite::SqliteConnectOptions::from_str(url)
            .unwrap()
            .read_only(true);
        let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
        let tables = sqlite::tables(&pool).await.unwrap();
        pool.close().await;
        (Dialect::Sqlite, tables)
    } else if url.starts_with("postgres:") {
        let pool = sqlx::PgPool::connect(url).await.unwrap();
        let tables = postgres::tables(&pool).await.unwrap();
        pool.close().await;
        (Dialect::Postgres, tables)
    } else {
        let pool = sqlx::MySqlPool::connect(url).await.unwrap();
        let tables = mysql::tables(&pool).await.unwrap();
        pool.close().await;
        (Dialect::Mysql, tables)
    };
    let mut catalog = Catalog::new(dialect, tables);
    samples(db, &mut catalog).await;
    catalog
}

/// Samples as they were gathered: per table, `SELECT <columns> FROM t LIMIT 200` with at most 4 MB of text;
/// per column the first five distinct non-empty values, each cut to 30 characters.
async fn samples(db: &Database, catalog: &mut Catalog) {
    let dialect = catalog.dialect;
    let limits = QueryLimits {
        max_rows: 200,
        max_bytes: 4_000_000,
        timeout: Duration::from_secs(2),
    };
    for table in &mut catalog.tables {
        if table.kind != TableKind::Table || table.rows == Some(0) {
            continue;
        }
        let columns: Vec<usize> = (0..table.columns.len())
            .filter(|&ci| !is_binary(&table.columns[ci].data_type))
            .collect();
        if columns.is_empty() {
            continue;
        }
        let list: Vec<String> = columns
            .iter()
            .map(|&ci| dialect.quote(&table.columns[ci].name))
            .collect();
        let sql = format!(
            "SELECT {} FROM {} LIMIT 200",
            list.join(", "),
            dialect.quote_table(&table.name)
        );
        let Ok(result) = db.query_read_only(&sql, &[], &limits).await else {
            continue;
        };
        for (position, &ci) in columns.iter().enumerate() {
            let mut samples: Vec<String> = Vec::new();
            for row in &result.rows {
                let Some(value) = row.get(position).filter(|v| !v.is_null()) else {
                    continue;
                };
                let text = cut(&cell_text(value));
                if !text.is_empty() && !samples.contains(&text) {
                    samples.push(text);
                    if samples.len() == MAX_SAMPLES {
                        break;
                    }
                }
            }
            table.columns[ci].samples = samples.into();
        }
    }
}

fn cut(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= MAX_SAMPLE_CHARS {
        text.to_owned()
    } else {
        let head: String = text.chars().take(MAX_SAMPLE_CHARS - 1).collect();
        format!("{head}…")
    }
}

fn is_binary(data_type: &str) -> bool {
    let t = data_type.to_ascii_lowercase();
    ["blob", "bytea", "binary", "geometry", "geography", "raster"]
        .iter()
        .any(|k| t.contains(k))
}
