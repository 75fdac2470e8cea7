//! SQLite's catalog from `sqlite_schema` and the `pragma_table_info` / `pragma_foreign_key_list` table-valued
//! functions: three queries for any number of tables, their rows streamed (never all held at once).

use std::collections::{BTreeMap, HashMap};

use futures_util::TryStreamExt as _;
use sqlx::{Row, SqlitePool};

use crate::catalog::{Column, ForeignKey, Table, TableKind};

/// A column as `pragma_table_info` gives it: name, type, notnull, default, position in the primary key.
type PragmaColumn = (String, String, i64, Option<String>, i64);

/// Tables with their columns and keys; row counts from `sqlite_stat1`, or counted when there are few tables.
pub(super) async fn tables(pool: &SqlitePool) -> Result<Vec<Table>, sqlx::Error> {
    let mut tables: BTreeMap<String, Table> = BTreeMap::new();
    let mut conn = pool.acquire().await?;
    let mut rows = sqlx::query(
        "SELECT name, type FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
    )
    .fetch(&mut *conn);
    while let Some(row) = rows.try_next().await? {
        let name: String = row.try_get(0)?;
        let kind: String = row.try_get(1)?;
        tables.insert(
            name.clone(),
            Table {
                name,
                kind: if kind == "view" {
                    TableKind::View
                } else {
                    TableKind::Table
                },
                comment: None,
                columns: Vec::new(),
                primary_key: Vec::new(),
                foreign_keys: Vec::new(),
                rows: None,
            },
        );
    }
    drop(rows);
    // One row per table, its columns as a JSON array in order: 20 times fewer rows to carry across sqlx's
    // worker thread than one row per column.
    let mut columns = sqlx::query(
        "SELECT m.name, json_group_array(json_array(p.name, p.type, p.\"notnull\", p.dflt_value, p.pk) ORDER BY p.cid) \
         FROM sqlite_schema m JOIN pragma_table_info(m.name) p \
         WHERE m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\' \
         GROUP BY m.name",
    )
    .fetch(&mut *conn);
    let mut keys: BTreeMap<String, Vec<(i64, String)>> = BTreeMap::new();
    let mut types = super::Types::default();
    while let Some(row) = columns.try_next().await? {
        let table: String = row.try_get(0)?;
        let list: &str = row.try_get(1)?;
        let list: Vec<PragmaColumn> =
            serde_json::from_str(list).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
        let Some(t) = tables.get_mut(&table) else {
            continue;
        };
        t.columns.reserve_exact(list.len());
        for (name, data_type, not_null, default, pk) in list {
            if pk > 0 {
                keys.entry(table.clone())
                    .or_default()
                    .push((pk, name.clone()));
            }
            t.columns.push(Column {
                name,
                data_type: types.get(&data_type),
                nullable: not_null == 0 && pk == 0,
                default: default.map(String::into_boxed_str),
                comment: None,
                samples: Default::default(),
            });
        }
    }
    drop(columns);
    for (table, mut pk) in keys {
        pk.sort();
        if let Some(t) = tables.get_mut(&table) {
            t.primary_key = pk.into_iter().map(|(_, c)| c).collect();
        }
    }
    let mut fks = sqlx::query(
        "SELECT m.name, f.id, f.\"table\", f.\"from\", f.\"to\" \
         FROM sqlite_schema m JOIN pragma_foreign_key_list(m.name) f \
         WHERE m.type = 'table' ORDER BY m.name, f.id, f.seq",
    )
    .fetch(&mut *conn);
    let mut grouped: BTreeMap<(String, i64), ForeignKey> = BTreeMap::new();
    while let Some(row) = fks.try_next().await? {
        let table: String = row.try_get(0)?;
        let id: i64 = row.try_get(1)?;
        let target: String = row.try_get(2)?;
        let from: String = row.try_get(3)?;
        let to: Option<String> = row.try_get(4)?;
        let fk = grouped.entry((table, id)).or_insert_with(|| ForeignKey {
            columns: Vec::new(),
            table: target,
            referenced: Vec::new(),
        });
        fk.columns.push(from);
        fk.referenced.push(to.unwrap_or_default());
    }
    drop(fks);
    drop(conn);
    // Referenced tables by their name in lower case (the first in name order, as SQLite's own lookup).
    let mut by_name: HashMap<String, &Table> = HashMap::with_capacity(tables.len());
    for t in tables.values() {
        by_name.entry(t.name.to_ascii_lowercase()).or_insert(t);
    }
    let mut resolved: Vec<(String, ForeignKey)> = Vec::with_capacity(grouped.len());
    for ((table, _), mut fk) in grouped {
        // `REFERENCES t` without columns means t's primary key; fix the table name's case too.
        if let Some(target) = by_name.get(&fk.table.to_ascii_lowercase()) {
            fk.table.clone_from(&target.name);
            if fk.referenced.iter().any(String::is_empty) {
                fk.referenced.clone_from(&target.primary_key);
            }
        }
        resolved.push((table, fk));
    }
    drop(by_name);
    for (table, fk) in resolved {
        if let Some(t) = tables.get_mut(&table) {
            t.foreign_keys.push(fk);
        }
    }
    row_counts(pool, &mut tables).await?;
    Ok(tables.into_values().collect())
}

/// Most tables counted exactly when `sqlite_stat1` has no estimates (one query for all of them).
const MAX_COUNTED: usize = 200;

async fn row_counts(
    pool: &SqlitePool,
    tables: &mut BTreeMap<String, Table>,
) -> Result<(), sqlx::Error> {
    let has_stats: Option<i64> = sqlx::query_scalar(
        "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'sqlite_stat1'",
    )
    .fetch_optional(pool)
    .await?;
    if has_stats.is_some() {
        let rows = sqlx::query("SELECT tbl, MAX(CAST(substr(stat, 1, instr(stat || ' ', ' ') - 1) AS INTEGER)) FROM sqlite_stat1 GROUP BY tbl")
            .fetch_all(pool)
            .await?;
        for row in rows {
            let name: String = row.try_get(0)?;
            let n: Option<i64> = row.try_get(1)?;
            if let (Some(t), Some(n)) = (tables.get_mut(&name), n) {
                t.rows = u64::try_from(n).ok();
            }
        }
        return Ok(());
    }
    let names: Vec<String> = tables
        .values()
        .filter(|t| t.kind == TableKind::Table)
        .map(|t| t.name.clone())
        .collect();
    if names.is_empty() || names.len() > MAX_COUNTED {
        return Ok(());
    }
    let sql = names
        .iter()
        .enumerate()
        .map(|(i, n)| format!("SELECT {i}, COUNT(*) FROM \"{}\"", n.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" UNION ALL ");
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .fetch_all(pool)
        .await?;
    for row in rows {
        let i: i64 = row.try_get(0)?;
        let n: i64 = row.try_get(1)?;
        if let Some(t) = usize::try_from(i)
            .ok()
            .and_then(|i| names.get(i))
            .and_then(|n| tables.get_mut(n))
        {
            t.rows = u64::try_from(n).ok();
        }
    }
    Ok(())
}
