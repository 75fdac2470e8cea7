//! PostgreSQL's catalog from `pg_catalog`: four queries at once for any number of tables (information_schema is much
//! slower on large schemas).
//!
//! Rows are keyed by the relation's oid and names resolved here, not in SQL: a query that looks up every key
//! column's name or every comment per row, or sorts wide rows by name, costs seconds of server time (and JIT
//! compilation) at 10,000 tables; joins and a sort on oids cost a tenth of it.

use std::collections::{BTreeMap, HashMap};

use futures_util::TryStreamExt as _;
use sqlx::{PgPool, Row};

use crate::catalog::{Column, ForeignKey, Table, TableKind};

const USER_SCHEMAS: &str = "n.nspname NOT IN ('pg_catalog', 'information_schema') \
     AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'";
const RELATIONS: &str = "c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition";
/// The comment of a relation (`objsubid = 0`) or of its column (`objsubid = attnum`), as
/// `obj_description`/`col_description` read it, but joined once instead of looked up per row.
const COMMENTS: &str =
    "pg_description ds ON ds.objoid = c.oid AND ds.classoid = 'pg_class'::regclass";

/// The name queries use: bare in the current schema, qualified elsewhere.
fn display(schema: &str, name: &str, current: &str) -> String {
    if schema == current {
        name.to_owned()
    } else {
        format!("{schema}.{name}")
    }
}

/// A row of the constraints query: the table's oid, `p` or `f`, the key's column numbers, and for a foreign key
/// the referenced table's oid, schema and name and its column numbers.
struct Constraint {
    table: i64,
    kind: String,
    columns: Vec<i16>,
    target: Option<i64>,
    schema: Option<String>,
    name: Option<String>,
    referenced: Vec<i16>,
}

/// A primary or foreign key, its columns named.
enum Key {
    Primary(Vec<String>),
    Foreign(ForeignKey),
}

/// The columns of every relation by its oid, each with its number.
type Columns = HashMap<i64, Vec<(i16, Column)>>;

/// Tables with their columns, keys, comments and row estimates: four catalog queries, run at once on the pool,
/// their rows streamed.
pub(super) async fn tables(pool: &PgPool) -> Result<Vec<Table>, sqlx::Error> {
    let (current, relations, mut columns, constraints) = futures_util::future::try_join4(
        sqlx::query_scalar::<_, String>("SELECT current_schema()::text").fetch_one(pool),
        relations(pool),
        columns(pool),
        constraints(pool),
    )
    .await?;
    // A referenced relation outside `RELATIONS` (a partition) has its key columns' names read apart.
    let mut outside: Vec<i64> = constraints
        .iter()
        .filter_map(|c| c.target)
        .filter(|oid| !columns.contains_key(oid))
        .collect();
    outside.sort_unstable();
    outside.dedup();
    let mut outside_names: HashMap<(i64, i16), String> = HashMap::new();
    if !outside.is_empty() {
        let mut rows = sqlx::query(
            "SELECT attrelid::int8, attnum, attname::text FROM pg_attribute \
             WHERE attrelid = ANY($1::int8[]::oid[]) AND attnum > 0 AND NOT attisdropped",
        )
        .bind(&outside)
        .fetch(pool);
        while let Some(row) = rows.try_next().await? {
            outside_names.insert((row.try_get(0)?, row.try_get(1)?), row.try_get(2)?);
        }
    }
    // Key columns named from the columns read (each relation's sorted by number), before they move into tables.
    let name = |oid: i64, num: i16| -> Option<String> {
        match columns.get(&oid) {
            Some(list) => list
                .binary_search_by_key(&num, |(n, _)| *n)
                .ok()
                .and_then(|i| list.get(i))
                .map(|(_, c)| c.name.clone()),
            None => outside_names.get(&(oid, num)).cloned(),
        }
    };
    let resolve = |oid: i64, nums: &[i16]| -> Vec<String> {
        nums.iter().filter_map(|&n| name(oid, n)).collect()
    };
    let keys: Vec<(i64, Key)> = constraints
        .into_iter()
        .map(|c| {
            let columns = resolve(c.table, &c.columns);
            let key = if c.kind == "p" {
                Key::Primary(columns)
            } else {
                Key::Foreign(ForeignKey {
                    columns,
                    table: display(
                        &c.schema.unwrap_or_default(),
                        &c.name.unwrap_or_default(),
                        &current,
                    ),
                    referenced: c
                        .target
                        .map(|oid| resolve(oid, &c.referenced))
                        .unwrap_or_default(),
                })
            };
            (c.table, key)
        })
        .collect();
    let mut tables: BTreeMap<(String, String), Table> = BTreeMap::new();
    let mut by_oid: HashMap<i64, (String, String)> = HashMap::with_capacity(relations.len());
    for (oid, schema, name, mut table) in relations {
        table.name = display(&schema, &name, &current);
        if let Some(list) = columns.remove(&oid) {
            table.columns = list.into_iter().map(|(_, c)| c).collect();
        }
        by_oid.insert(oid, (schema.clone(), name.clone()));
        tables.insert((schema, name), table);
    }
    for (oid, key) in keys {
        let Some(t) = by_oid.get(&oid).and_then(|key| tables.get_mut(key)) else {
            continue;
        };
        match key {
            Key::Primary(columns) => t.primary_key = columns,
            Key::Foreign(fk) => t.foreign_keys.push(fk),
        }
    }
    Ok(tables.into_values().collect())
}

/// The relations: oid, schema, name, and the table (its display name is set by the caller).
async fn relations(pool: &PgPool) -> Result<Vec<(i64, String, String, Table)>, sqlx::Error> {
    let sql = format!(
        "SELECT c.oid::int8, n.nspname::text, c.relname::text, c.relkind::text, ds.description, c.reltuples::float8 \
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace LEFT JOIN {COMMENTS} AND ds.objsubid = 0 \
         WHERE {RELATIONS} AND {USER_SCHEMAS}"
    );
    let mut out = Vec::new();
    let mut rows = sqlx::query(sqlx::AssertSqlSafe(sql)).fetch(pool);
    while let Some(row) = rows.try_next().await? {
        let kind: &str = row.try_get(3)?;
        let estimate: f64 = row.try_get(5)?;
        out.push((
            row.try_get(0)?,
            row.try_get(1)?,
            row.try_get(2)?,
            Table {
                name: String::new(),
                kind: if kind == "v" || kind == "m" {
                    TableKind::View
                } else {
                    TableKind::Table
                },
                comment: row.try_get(4)?,
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

/// The columns of every relation, by its oid, in order.
async fn columns(pool: &PgPool) -> Result<Columns, sqlx::Error> {
    let sql = format!(
        "SELECT a.attrelid::int8, a.attnum, a.attname::text, format_type(a.atttypid, a.atttypmod), \
                NOT a.attnotnull, pg_get_expr(d.adbin, d.adrelid), ds.description \
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
         LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
         LEFT JOIN {COMMENTS} AND ds.objsubid = a.attnum \
         WHERE a.attnum > 0 AND NOT a.attisdropped AND {RELATIONS} AND {USER_SCHEMAS} \
         ORDER BY a.attrelid, a.attnum"
    );
    let mut out: Columns = HashMap::new();
    let mut last: Option<(i64, Vec<(i16, Column)>)> = None;
    let mut types = super::Types::default();
    let mut rows = sqlx::query(sqlx::AssertSqlSafe(sql)).fetch(pool);
    while let Some(row) = rows.try_next().await? {
        let oid: i64 = row.try_get(0)?;
        let column = Column {
            name: row.try_get(2)?,
            data_type: types.get(row.try_get(3)?),
            nullable: row.try_get(4)?,
            default: row.try_get(5)?,
            comment: row.try_get(6)?,
            samples: Default::default(),
        };
        let num: i16 = row.try_get(1)?;
        match &mut last {
            Some((o, list)) if *o == oid => list.push((num, column)),
            _ => {
                if let Some((o, mut list)) = last.replace((oid, vec![(num, column)])) {
                    list.shrink_to_fit();
                    out.insert(o, list);
                }
            }
        }
    }
    if let Some((o, mut list)) = last {
        list.shrink_to_fit();
        out.insert(o, list);
    }
    Ok(out)
}

/// Primary and foreign keys, each table's in the order of their names.
async fn constraints(pool: &PgPool) -> Result<Vec<Constraint>, sqlx::Error> {
    let sql = format!(
        "SELECT con.conrelid::int8, con.contype::text, con.conkey, \
                CASE WHEN con.contype = 'f' THEN con.confrelid::int8 END, rn.nspname::text, rc.relname::text, \
                con.confkey \
         FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
         LEFT JOIN pg_class rc ON rc.oid = con.confrelid LEFT JOIN pg_namespace rn ON rn.oid = rc.relnamespace \
         WHERE con.contype IN ('p', 'f') AND {USER_SCHEMAS} ORDER BY con.conrelid, con.conname"
    );
    let mut out = Vec::new();
    let mut rows = sqlx::query(sqlx::AssertSqlSafe(sql)).fetch(pool);
    while let Some(row) = rows.try_next().await? {
        out.push(Constraint {
            table: row.try_get(0)?,
            kind: row.try_get(1)?,
            columns: row.try_get::<Option<Vec<i16>>, _>(2)?.unwrap_or_default(),
            target: row.try_get(3)?,
            schema: row.try_get(4)?,
            name: row.try_get(5)?,
            referenced: row.try_get::<Option<Vec<i16>>, _>(6)?.unwrap_or_default(),
        });
    }
    Ok(out)
}
