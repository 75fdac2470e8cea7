//! Sample values: up to five distinct values per column (binary columns excepted), from the first rows of each table (one
//! small query per table, a few at a time, each with a short time limit).

use std::time::Duration;

use futures_util::StreamExt as _;

use crate::catalog::{Catalog, MAX_SAMPLES, TableKind, cut_sample, is_binary};
use crate::database::Database;
use crate::query::{QueryLimits, cell_text};

/// Rows read per table to find samples.
const ROWS_READ: usize = 200;
/// Tables sampled at once.
const CONCURRENCY: usize = 4;

pub(super) async fn gather(db: &Database, catalog: &mut Catalog) {
    let dialect = catalog.dialect;
    let jobs: Vec<(usize, Vec<usize>, String)> = catalog
        .tables
        .iter()
        .enumerate()
        .filter(|(_, t)| t.kind == TableKind::Table && t.rows != Some(0))
        .filter_map(|(ti, t)| {
            let columns: Vec<usize> = (0..t.columns.len())
                .filter(|&ci| !is_binary(&t.columns[ci].data_type))
                .collect();
            if columns.is_empty() {
                return None;
            }
            let list: Vec<String> = columns
                .iter()
                .map(|&ci| dialect.quote(&t.columns[ci].name))
                .collect();
            let sql = format!(
                "SELECT {} FROM {} LIMIT {ROWS_READ}",
                list.join(", "),
                dialect.quote_table(&t.name)
            );
            Some((ti, columns, sql))
        })
        .collect();
    let limits = QueryLimits {
        max_rows: ROWS_READ,
        max_bytes: 4_000_000,
        timeout: Duration::from_secs(2),
    };
    let results: Vec<_> = futures_util::stream::iter(jobs)
        .map(|(ti, columns, sql)| async move {
            let result = db.query_trusted(&sql, &limits).await;
            (ti, columns, result)
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    for (ti, columns, result) in results {
        // A table that cannot be sampled (permissions, a slow view) simply has no samples.
        let Ok(result) = result else { continue };
        for (position, &ci) in columns.iter().enumerate() {
            let mut samples: Vec<String> = Vec::new();
            for row in &result.rows {
                let Some(value) = row.get(position).filter(|v| !v.is_null()) else {
                    continue;
                };
                let text = cut_sample(&cell_text(value));
                if !text.is_empty() && !samples.contains(&text) {
                    samples.push(text);
                    if samples.len() == MAX_SAMPLES {
                        break;
                    }
                }
            }
            if let Some(column) = catalog
                .tables
                .get_mut(ti)
                .and_then(|t| t.columns.get_mut(ci))
            {
                column.samples = samples;
            }
        }
    }
}
