//! MySQL's and MariaDB's catalog from `information_schema`, for the current database: three queries, run at
//! once on the pool, their rows streamed.

use std::collections::BTreeMap;

use futures_util::TryStreamExt as _;
use sqlx::{MySqlPool, Row};

use crate::catalog::{Column, ForeignKey, Table, TableKind};

/// Tables with their columns, keys, comments and row estimates.
pub(super) async fn tables(pool: &MySqlPool) -> Result<Vec<Table>, sqlx::Error> {
    let (mut tables, columns, keys) =
        futures_util::future::try_join3(relations(pool), columns(pool), keys(pool)).await?;
    for (table, list) in columns {
        if let Some(t) = tables.get_mut(&table) {
            t.columns = list;
        }
    }
    let mut fks: BTreeMap<(String, String), ForeignKey> = BTreeMap::new();
    for key in keys {
        let (table, constraint, column, ref_schema, ref_table, ref_column, current) = key;
        if constraint == "PRIMARY" {
            if let Some(t) = tables.get_mut(&table) {
                t.primary_key.push(column);
            }
            continue;
        }
        let ref_table = ref_table.unwrap_or_default();
        let target = match ref_schema {
            Some(s) if Some(&s) != current.as_ref() => format!("{s}.{ref_table}"),
            _ => ref_table,
        };
        let fk = fks
            .entry((table, constraint))
            .or_insert_with(|| ForeignKey {
                columns: Vec::new(),
                table: target,
                referenced: Vec::new(),
            });
        fk.columns.push(column);
        fk.referenced.push(ref_column.unwrap_or_default());
    }
    for ((table, _), fk) in fks {
        if let Some(t) = tables.get_mut(&table) {
            t.foreign_keys.push(fk);
        }
    }
    Ok(tables.into_values().collect())
}

/// A row of `KEY_COLUMN_USAGE`: table, constraint, column, referenced schema, table and column, and the
/// current database.
type KeyColumn = (
    String,
    String,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// The tables and views, by name, without columns or keys.
async fn relations(pool: &MySqlPool) -> Result<BTreeMap<String, Table>, sqlx::Error> {
    let mut tables: BTreeMap<String, Table> = BTreeMap::new();
    let mut rows = sqlx::query(
        "SELECT CAST(TABLE_NAME AS CHAR), CAST(TABLE_TYPE AS CHAR), CAST(TABLE_COMMENT AS CHAR), CAST(TABLE_ROWS AS SIGNED) \
         FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()",
    )
    .fetch(pool);
    while let Some(row) = rows.try_next().await? {
        let name: String = row.try_get(0)?;
        let kind: String = row.try_get(1)?;
        let comment: Option<String> = row.try_get(2)?;
        let rows: Option<i64> = row.try_get(3)?;
        let view = kind.contains("VIEW");
        tables.insert(
            name.clone(),
            Table {
                name,
                kind: if view {
                    TableKind::View
                } else {
                    TableKind::Table
                },
                // Views carry the comment "VIEW"; that says nothing.
                comment: comment.filter(|c| !c.is_empty() && !view),
                columns: Vec::new(),
                primary_key: Vec::new(),
                foreign_keys: Vec::new(),
                rows: rows.and_then(|n| u64::try_from(n).ok()),
            },
        );
    }
    Ok(tables)
}

/// The columns of every table, grouped by table, in order.
async fn columns(pool: &MySqlPool) -> Result<Vec<(String, Vec<Column>)>, sqlx::Error> {
    let mut out: Vec<(String, Vec<Column>)> = Vec::new();
    let mut types = super::Types::default();
    let mut rows = sqlx::query(
        "SELECT CAST(TABLE_NAME AS CHAR), CAST(COLUMN_NAME AS CHAR), CAST(COLUMN_TYPE AS CHAR), CAST(IS_NULLABLE AS CHAR), \
                CAST(COLUMN_DEFAULT AS CHAR), CAST(COLUMN_COMMENT AS CHAR) \
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME, ORDINAL_POSITION",
    )
    .fetch(pool);
    while let Some(row) = rows.try_next().await? {
        let table: &str = row.try_get(0)?;
        let nullable: &str = row.try_get(3)?;
        let comment: Option<String> = row.try_get(5)?;
        let column = Column {
            name: row.try_get(1)?,
            data_type: types.get(row.try_get(2)?),
            nullable: nullable == "YES",
            default: row.try_get(4)?,
            comment: comment
                .filter(|c| !c.is_empty())
                .map(String::into_boxed_str),
            samples: Default::default(),
        };
        match out.last_mut() {
            Some((t, list)) if t == table => list.push(column),
            _ => out.push((table.to_owned(), vec![column])),
        }
    }
    for (_, list) in &mut out {
        list.shrink_to_fit();
    }
    Ok(out)
}

/// Primary key and foreign key columns, in order.
async fn keys(pool: &MySqlPool) -> Result<Vec<KeyColumn>, sqlx::Error> {
    let mut out = Vec::new();
    let mut rows = sqlx::query(
        "SELECT CAST(TABLE_NAME AS CHAR), CAST(CONSTRAINT_NAME AS CHAR), CAST(COLUMN_NAME AS CHAR), \
                CAST(REFERENCED_TABLE_SCHEMA AS CHAR), CAST(REFERENCED_TABLE_NAME AS CHAR), CAST(REFERENCED_COLUMN_NAME AS CHAR), \
                CAST(DATABASE() AS CHAR) \
         FROM information_schema.KEY_COLUMN_USAGE \
         WHERE TABLE_SCHEMA = DATABASE() AND (CONSTRAINT_NAME = 'PRIMARY' OR REFERENCED_TABLE_NAME IS NOT NULL) \
         ORDER BY TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION",
    )
    .fetch(pool);
    while let Some(row) = rows.try_next().await? {
        out.push((
            row.try_get(0)?,
            row.try_get(1)?,
            row.try_get(2)?,
            row.try_get(3)?,
            row.try_get(4)?,
            row.try_get(5)?,
            row.try_get(6)?,
        ));
    }
    Ok(out)
}
