//! PostgreSQL's catalog from `pg_catalog`: four queries at once for any number of tables (information_schema is much
//! slower on large schemas).

use std::collections::BTreeMap;

use futures_util::TryStreamExt as _;
use sqlx::{PgPool, Row};

use crate::catalog::{Column, ForeignKey, Table, TableKind};

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

/// A row of the constraints query: the table's key, `p` or `f`, the key's columns, and for a foreign key the
/// referenced schema, table and columns.
type Constraint = (
    (String, String),
    String,
    Vec<String>,
    Option<String>,
    Option<String>,
    Vec<String>,
);

/// Tables with their columns, keys, comments and row estimates: four catalog queries, run at once on the pool,
/// their rows streamed.
pub(super) async fn tables(pool: &PgPool) -> Result<Vec<Table>, sqlx::Error> {
    let (current, relations, columns, constraints) = futures_util::future::try_join4(
        sqlx::query_scalar::<_, String>("SELECT current_schema()::text").fetch_one(pool),
        relations(pool),
        columns(pool),
        constraints(pool),
    )
    .await?;
    let mut tables: BTreeMap<(String, String), Table> = relations
        .into_iter()
        .map(|((schema, name), mut table)| {
            table.name = display(&schema, &name, &current);
            ((schema, name), table)
        })
        .collect();
    for (key, list) in columns {
        if let Some(t) = tables.get_mut(&key) {
            t.columns = list;
        }
    }
    for (key, kind, columns, schema, name, referenced) in constraints {
        let Some(t) = tables.get_mut(&key) else {
            continue;
        };
        if kind == "p" {
            t.primary_key = columns;
        } else {
            t.foreign_keys.push(ForeignKey {
                columns,
                table: display(
                    &schema.unwrap_or_default(),
                    &name.unwrap_or_default(),
                    &current,
                ),
                referenced,
            });
        }
    }
    Ok(tables.into_values().collect())
}

/// The relations, by (schema, name); their display names are set by the caller.
async fn relations(pool: &PgPool) -> Result<Vec<((String, String), Table)>, sqlx::Error> {
    let sql = format!(
        "SELECT n.nspname::text, c.relname::text, c.relkind::text, obj_description(c.oid, 'pg_class'), c.reltuples::float8 \
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE {RELATIONS} AND {USER_SCHEMAS}"
    );
    let mut out = Vec::new();
    let mut rows = sqlx::query(sqlx::AssertSqlSafe(sql)).fetch(pool);
    while let Some(row) = rows.try_next().await? {
        let schema: String = row.try_get(0)?;
        let name: String = row.try_get(1)?;
        let kind: String = row.try_get(2)?;
        let estimate: f64 = row.try_get(4)?;
        out.push((
            (schema, name),
            Table {
                name: String::new(),
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
        ));
    }
    Ok(out)
}

/// The columns of every relation, grouped by (schema, name), in order.
async fn columns(pool: &PgPool) -> Result<Vec<((String, String), Vec<Column>)>, sqlx::Error> {
    let sql = format!(
        "SELECT n.nspname::text, c.relname::text, a.attname::text, format_type(a.atttypid, a.atttypmod), \
                NOT a.attnotnull, pg_get_expr(d.adbin, d.adrelid), col_description(c.oid, a.attnum) \
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
         LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
         WHERE a.attnum > 0 AND NOT a.attisdropped AND {RELATIONS} AND {USER_SCHEMAS} \
         ORDER BY n.nspname, c.relname, a.attnum"
    );
    let mut out: Vec<((String, String), Vec<Column>)> = Vec::new();
    let mut rows = sqlx::query(sqlx::AssertSqlSafe(sql)).fetch(pool);
    while let Some(row) = rows.try_next().await? {
        let schema: &str = row.try_get(0)?;
        let table: &str = row.try_get(1)?;
        let column = Column {
            name: row.try_get(2)?,
            data_type: row.try_get(3)?,
            nullable: row.try_get(4)?,
            default: row.try_get(5)?,
            comment: row.try_get(6)?,
            samples: Vec::new(),
        };
        match out.last_mut() {
            Some(((s, t), list)) if s == schema && t == table => list.push(column),
            _ => out.push(((schema.to_owned(), table.to_owned()), vec![column])),
        }
    }
    for (_, list) in &mut out {
        list.shrink_to_fit();
    }
    Ok(out)
}

/// Primary and foreign keys.
async fn constraints(pool: &PgPool) -> Result<Vec<Constraint>, sqlx::Error> {
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
    let mut out = Vec::new();
    let mut rows = sqlx::query(sqlx::AssertSqlSafe(sql)).fetch(pool);
    while let Some(row) = rows.try_next().await? {
        out.push((
            (row.try_get(0)?, row.try_get(1)?),
            row.try_get(2)?,
            row.try_get(3)?,
            row.try_get(4)?,
            row.try_get(5)?,
            row.try_get(6)?,
        ));
    }
    Ok(out)
}
