//! MySQL's and MariaDB's catalog from `information_schema`, for the current database: three queries.

use std::collections::BTreeMap;

use sqlx::{MySqlPool, Row};

use steward_sql::{Column, ForeignKey, Table, TableKind};

/// Tables with their columns, keys, comments and row estimates.
pub async fn tables(pool: &MySqlPool) -> Result<Vec<Table>, sqlx::Error> {
    let mut tables: BTreeMap<String, Table> = BTreeMap::new();
    let rows = sqlx::query(
        "SELECT CAST(TABLE_NAME AS CHAR), CAST(TABLE_TYPE AS CHAR), CAST(TABLE_COMMENT AS CHAR), CAST(TABLE_ROWS AS SIGNED) \
         FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()",
    )
    .fetch_all(pool)
    .await?;
    for row in rows {
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
    let rows = sqlx::query(
        "SELECT CAST(TABLE_NAME AS CHAR), CAST(COLUMN_NAME AS CHAR), CAST(COLUMN_TYPE AS CHAR), CAST(IS_NULLABLE AS CHAR), \
                CAST(COLUMN_DEFAULT AS CHAR), CAST(COLUMN_COMMENT AS CHAR) \
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME, ORDINAL_POSITION",
    )
    .fetch_all(pool)
    .await?;
    for row in rows {
        let table: String = row.try_get(0)?;
        let nullable: String = row.try_get(3)?;
        let comment: Option<String> = row.try_get(5)?;
        if let Some(t) = tables.get_mut(&table) {
            t.columns.push(Column {
                name: row.try_get(1)?,
                data_type: row.try_get(2)?,
                nullable: nullable == "YES",
                default: row.try_get(4)?,
                comment: comment
                    .filter(|c| !c.is_empty())
                    .map(String::into_boxed_str),
                samples: Default::default(),
            });
        }
    }
    let rows = sqlx::query(
        "SELECT CAST(TABLE_NAME AS CHAR), CAST(CONSTRAINT_NAME AS CHAR), CAST(COLUMN_NAME AS CHAR), \
                CAST(REFERENCED_TABLE_SCHEMA AS CHAR), CAST(REFERENCED_TABLE_NAME AS CHAR), CAST(REFERENCED_COLUMN_NAME AS CHAR), \
                CAST(DATABASE() AS CHAR) \
         FROM information_schema.KEY_COLUMN_USAGE \
         WHERE TABLE_SCHEMA = DATABASE() AND (CONSTRAINT_NAME = 'PRIMARY' OR REFERENCED_TABLE_NAME IS NOT NULL) \
         ORDER BY TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION",
    )
    .fetch_all(pool)
    .await?;
    let mut fks: BTreeMap<(String, String), ForeignKey> = BTreeMap::new();
    for row in rows {
        let table: String = row.try_get(0)?;
        let constraint: String = row.try_get(1)?;
        let column: String = row.try_get(2)?;
        if constraint == "PRIMARY" {
            if let Some(t) = tables.get_mut(&table) {
                t.primary_key.push(column);
            }
            continue;
        }
        let ref_schema: Option<String> = row.try_get(3)?;
        let ref_table: Option<String> = row.try_get(4)?;
        let ref_column: Option<String> = row.try_get(5)?;
        let current: Option<String> = row.try_get(6)?;
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
