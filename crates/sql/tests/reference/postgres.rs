//! PostgreSQL's catalog from `pg_catalog`: three queries for any number of tables (information_schema is much
//! slower on large schemas).

use std::collections::BTreeMap;

use sqlx::{PgPool, Row};

use steward_sql::{Column, ForeignKey, Table, TableKind};

const USER_SCHEMAS: &str = "n.nspname NOT IN ('pg_catalog', 'information_schema') \
     AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'";
const RELATIONS: &str = "c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition";

/// The name queries use: bare in the current schema, qualified elsewhere.
fn display(schema: &str, name: &str, current: &str) -> String {
    if schema == current {
        name.to_owned()
    } else {
        format!("{schema}.{name}")
    }
}

/// Tables with their columns, keys, comments and row estimates.
pub async fn tables(pool: &PgPool) -> Result<Vec<Table>, sqlx::Error> {
    let current: String = sqlx::query_scalar("SELECT current_schema()::text")
        .fetch_one(pool)
        .await?;
    let mut tables: BTreeMap<(String, String), Table> = BTreeMap::new();
    let sql = format!(
        "SELECT n.nspname::text, c.relname::text, c.relkind::text, obj_description(c.oid, 'pg_class'), c.reltuples::float8 \
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE {RELATIONS} AND {USER_SCHEMAS}"
    );
    for row in sqlx::query(sqlx::AssertSqlSafe(sql))
        .fetch_all(pool)
        .await?
    {
        let schema: String = row.try_get(0)?;
        let name: String = row.try_get(1)?;
        let kind: String = row.try_get(2)?;
        let estimate: f64 = row.try_get(4)?;
        tables.insert(
            (schema.clone(), name.clone()),
            Table {
                name: display(&schema, &name, &current),
                kind: if kind == "v" || kind == "m" {
                    TableKind::View
                } else {
                    TableKind::Table
                },
                comment: row.try_get(3)?,
                columns: Vec::new(),
                primary_key: Vec::new(),
                foreign_keys: Vec::new(),
                // -1 means never analysed.
                rows: (estimate >= 0.0).then_some(estimate as u64),
            },
        );
    }
    let sql = format!(
        "SELECT n.nspname::text, c.relname::text, a.attname::text, format_type(a.atttypid, a.atttypmod), \
                NOT a.attnotnull, pg_get_expr(d.adbin, d.adrelid), col_description(c.oid, a.attnum) \
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
         LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
         WHERE a.attnum > 0 AND NOT a.attisdropped AND {RELATIONS} AND {USER_SCHEMAS} \
         ORDER BY n.nspname, c.relname, a.attnum"
    );
    for row in sqlx::query(sqlx::AssertSqlSafe(sql))
        .fetch_all(pool)
        .await?
    {
        let key: (String, String) = (row.try_get(0)?, row.try_get(1)?);
        if let Some(t) = tables.get_mut(&key) {
            t.columns.push(Column {
                name: row.try_get(2)?,
                data_type: row.try_get(3)?,
                nullable: row.try_get(4)?,
                default: row.try_get(5)?,
                comment: row.try_get(6)?,
                samples: Default::default(),
            });
        }
    }
    let sql = format!(
        "SELECT n.nspname::text, c.relname::text, con.contype::text, \
           ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(num, ord) \
                 JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.num ORDER BY k.ord), \
           rn.nspname::text, rc.relname::text, \
           ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(num, ord) \
                 JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.num ORDER BY k.ord) \
         FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
         LEFT JOIN pg_class rc ON rc.oid = con.confrelid LEFT JOIN pg_namespace rn ON rn.oid = rc.relnamespace \
         WHERE con.contype IN ('p', 'f') AND {USER_SCHEMAS} ORDER BY n.nspname, c.relname, con.conname"
    );
    for row in sqlx::query(sqlx::AssertSqlSafe(sql))
        .fetch_all(pool)
        .await?
    {
        let key: (String, String) = (row.try_get(0)?, row.try_get(1)?);
        let kind: String = row.try_get(2)?;
        let columns: Vec<String> = row.try_get(3)?;
        let Some(t) = tables.get_mut(&key) else {
            continue;
        };
        if kind == "p" {
            t.primary_key = columns;
        } else {
            let schema: Option<String> = row.try_get(4)?;
            let name: Option<String> = row.try_get(5)?;
            t.foreign_keys.push(ForeignKey {
                columns,
                table: display(
                    &schema.unwrap_or_default(),
                    &name.unwrap_or_default(),
                    &current,
                ),
                referenced: row.try_get(6)?,
            });
        }
    }
    Ok(tables.into_values().collect())
}
