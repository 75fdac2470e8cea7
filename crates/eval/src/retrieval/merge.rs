//! Building the merged schema: every source database's tables renamed `<db>__<table>` with their keys, foreign
//! keys and first rows, plus the distractors, written into one SQLite file; and the questions with their gold
//! SQL rewritten to the new names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use steward_sql::{Database, Dialect, Guard, QueryLimits, TableKind};

use super::{
    Benchmark, RetrievalQuestion, RetrievalSpec, SourceKind, Split, defog_ddl, distractors, gold,
};
use crate::dataset::{Dataset, Format};
use crate::error::EvalError;

/// A table to create: its columns, keys and rows (as SQL literals).
#[derive(Clone, Debug, Default)]
pub(super) struct TableDef {
    pub(super) name: String,
    pub(super) columns: Vec<ColumnDef>,
    pub(super) primary_key: Vec<String>,
    pub(super) foreign_keys: Vec<FkDef>,
    /// The columns the rows give values for, in order.
    pub(super) row_columns: Vec<String>,
    pub(super) rows: Vec<Vec<String>>,
}

/// A column to create.
#[derive(Clone, Debug)]
pub(super) struct ColumnDef {
    pub(super) name: String,
    pub(super) data_type: String,
    pub(super) not_null: bool,
}

/// A foreign key to create.
#[derive(Clone, Debug)]
pub(super) struct FkDef {
    pub(super) columns: Vec<String>,
    pub(super) table: String,
    pub(super) referenced: Vec<String>,
}

/// A source database before renaming.
struct SourceDb {
    name: String,
    tables: Vec<TableDef>,
}

/// A question before its gold SQL is rewritten.
struct RawQuestion {
    id: String,
    db: String,
    question: String,
    gold: String,
    dialect: Dialect,
}

/// Builds the benchmark of `spec` into the SQLite file `out` (replaced if it exists). `demo_db` is the demo
/// database's SQLite file, needed when the spec has a `demo` source (the caller generates it: the generator
/// lives in steward-domains).
pub async fn build_benchmark(
    spec: &RetrievalSpec,
    demo_db: Option<&Path>,
    out: &Path,
) -> Result<Benchmark, EvalError> {
    let mut dbs: Vec<SourceDb> = Vec::new();
    let mut raw: Vec<RawQuestion> = Vec::new();
    let rows = spec.rows_per_table;
    for source in &spec.sources {
        let path = source.path.as_ref().map(|p| spec.base_dir.join(p));
        match source.kind {
            SourceKind::Spider => {
                let dir = need_path(path, "spider")?;
                let format = match Format::guess(&dir)? {
                    Format::Bird => Format::Bird,
                    _ => Format::Spider,
                };
                let dataset = Dataset::load(&dir, Some(format))?;
                let mut names: Vec<String> = Vec::new();
                for item in &dataset.items {
                    if !names.contains(&item.db) {
                        names.push(item.db.clone());
                    }
                    push_question(&mut raw, "spider", item, &item.db, Dialect::Sqlite);
                }
                for name in names {
                    let tried: Vec<PathBuf> = ["database", "dev_databases"]
                        .iter()
                        .map(|d| {
                            dataset
                                .base_dir
                                .join(d)
                                .join(&name)
                                .join(format!("{name}.sqlite"))
                        })
                        .collect();
                    let Some(file) = tried
                        .iter()
                        .find(|p| p.is_file())
                        .or(tried.first())
                        .cloned()
                    else {
                        continue;
                    };
                    dbs.push(from_sqlite(&name, &file, rows).await?);
                }
            }
            SourceKind::Defog => {
                let dir = need_path(path, "defog")?;
                let mut names: Vec<String> = Vec::new();
                for file in &source.questions {
                    let dataset = Dataset::load(&dir.join(file), Some(Format::Defog))?;
                    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("defog");
                    for item in &dataset.items {
                        if !names.contains(&item.db) {
                            names.push(item.db.clone());
                        }
                        let label = format!("defog-{stem}");
                        push_question(&mut raw, &label, item, &item.db, Dialect::Postgres);
                    }
                }
                for name in names {
                    let file = dir
                        .join("databases")
                        .join(&name)
                        .join(format!("{name}.sql"));
                    let text =
                        std::fs::read_to_string(&file).map_err(|e| EvalError::io(&file, e))?;
                    let tables = defog_ddl::parse(&text, rows)
                        .map_err(|m| EvalError::malformed(&file, None, m))?;
                    dbs.push(SourceDb { name, tables });
                }
            }
            SourceKind::Sqlite | SourceKind::Demo => {
                let name = source.name.clone().ok_or_else(|| {
                    EvalError::Format(format!(
                        "a `{}` source needs a `name`",
                        if source.kind == SourceKind::Demo {
                            "demo"
                        } else {
                            "sqlite"
                        }
                    ))
                })?;
                let file = if source.kind == SourceKind::Demo {
                    demo_db.map(Path::to_owned).ok_or_else(|| {
                        EvalError::Database(
                            "the spec has a demo source but no demo database was generated".into(),
                        )
                    })?
                } else {
                    need_path(path, "sqlite")?
                };
                dbs.push(from_sqlite(&name, &file, rows).await?);
                for file in &source.questions {
                    let dataset = Dataset::load(&spec.base_dir.join(file), None)?;
                    for item in &dataset.items {
                        push_question(&mut raw, &name, item, &name, Dialect::Sqlite);
                    }
                }
            }
        }
    }

    // Rename: `<db>__<table>`, foreign keys pointing at the renamed tables.
    let mut tables: Vec<TableDef> = Vec::new();
    let mut renames: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for db in &dbs {
        let map: BTreeMap<String, String> = db
            .tables
            .iter()
            .map(|t| (t.name.to_lowercase(), format!("{}__{}", db.name, t.name)))
            .collect();
        for t in &db.tables {
            let mut renamed = t.clone();
            renamed.name = format!("{}__{}", db.name, t.name);
            renamed.foreign_keys = t
                .foreign_keys
                .iter()
                .filter_map(|fk| {
                    let target = map.get(&fk.table.to_lowercase())?;
                    Some(FkDef {
                        table: target.clone(),
                        ..fk.clone()
                    })
                })
                .collect();
            tables.push(renamed);
        }
        renames.insert(db.name.clone(), map);
    }
    let source_tables = tables.len();
    let taken: BTreeSet<String> = tables.iter().map(|t| t.name.to_lowercase()).collect();
    let extra = distractors::generate(spec.seed, spec.distractors, &taken);
    let distractor_tables = extra.len();
    tables.extend(extra);

    write_sqlite(out, &tables).await?;

    // Questions: gold SQL rewritten, its tables checked against the merged schema.
    let names: BTreeSet<String> = tables.iter().map(|t| t.name.to_lowercase()).collect();
    let mut questions = Vec::new();
    let mut skipped = Vec::new();
    for q in raw {
        let Some(map) = renames.get(&q.db) else {
            skipped.push(format!("{}: no database `{}`", q.id, q.db));
            continue;
        };
        match rewrite_checked(&q, map, &names) {
            Ok((gold_sql, gold_tables)) => questions.push(RetrievalQuestion {
                split: if spec.is_heldout(&q.db) {
                    Split::Heldout
                } else {
                    Split::Tune
                },
                id: q.id,
                db: q.db,
                question: q.question,
                gold_sql,
                gold_tables,
            }),
            Err(why) => skipped.push(format!("{}: {why}", q.id)),
        }
    }
    Ok(Benchmark {
        schema: out.to_owned(),
        tables: tables.len(),
        source_tables,
        distractor_tables,
        databases: dbs.into_iter().map(|d| d.name).collect(),
        questions,
        skipped,
    })
}

fn need_path(path: Option<PathBuf>, kind: &str) -> Result<PathBuf, EvalError> {
    path.ok_or_else(|| EvalError::Format(format!("a `{kind}` source needs a `path`")))
}

fn push_question(
    raw: &mut Vec<RawQuestion>,
    label: &str,
    item: &crate::dataset::Item,
    db: &str,
    dialect: Dialect,
) {
    if let Some(gold) = item.gold.first() {
        raw.push(RawQuestion {
            id: format!("{label}/{}", item.id),
            db: db.to_owned(),
            question: item.question.clone(),
            gold: gold.clone(),
            dialect,
        });
    }
}

/// The rewritten gold SQL and its tables, every one of which the original read from its database and the
/// merged schema has.
fn rewrite_checked(
    q: &RawQuestion,
    map: &BTreeMap<String, String>,
    names: &BTreeSet<String>,
) -> Result<(String, Vec<String>), String> {
    let guard = Guard::new(q.dialect);
    let before = guard.check(&q.gold).tables;
    if before.is_empty() {
        return Err("the gold SQL reads no table".into());
    }
    for t in &before {
        let bare = t
            .rsplit('.')
            .next()
            .unwrap_or(t)
            .trim_matches('"')
            .to_lowercase();
        if !map.contains_key(&bare) {
            return Err(format!(
                "the gold SQL reads `{t}`, not a table of `{}`",
                q.db
            ));
        }
    }
    let sql = gold::rewrite(&q.gold, q.dialect, map)?;
    let mut after: Vec<String> = Vec::new();
    for t in guard.check(&sql).tables {
        if !names.contains(&t.to_lowercase()) {
            return Err(format!(
                "the rewritten gold SQL reads `{t}`, not in the merged schema"
            ));
        }
        if !after.iter().any(|a| a.eq_ignore_ascii_case(&t)) {
            after.push(t);
        }
    }
    let distinct_before: BTreeSet<String> = before
        .iter()
        .map(|t| t.rsplit('.').next().unwrap_or(t).to_lowercase())
        .collect();
    if after.len() != distinct_before.len() {
        return Err(format!(
            "the rewritten gold SQL reads {} tables, the original {}",
            after.len(),
            distinct_before.len()
        ));
    }
    Ok((sql, after))
}

/// Reads a SQLite database's tables (not views), keys and first rows.
async fn from_sqlite(name: &str, file: &Path, rows: usize) -> Result<SourceDb, EvalError> {
    if !file.is_file() {
        return Err(EvalError::Database(format!(
            "no SQLite file {} for `{name}`",
            file.display()
        )));
    }
    let connect = |source| EvalError::Connect {
        db: name.to_owned(),
        source,
    };
    let db = Database::connect(&format!("sqlite://{}?mode=ro", file.display()))
        .await
        .map_err(connect)?;
    let catalog = db.catalog().await.map_err(connect)?;
    let limits = QueryLimits {
        max_rows: rows.max(1),
        max_bytes: 16_000_000,
        timeout: Duration::from_secs(30),
    };
    let mut tables = Vec::new();
    for t in catalog.tables.iter().filter(|t| t.kind == TableKind::Table) {
        let quoted: Vec<String> = t.columns.iter().map(|c| quote(&c.name)).collect();
        let sql = format!(
            "SELECT {} FROM {} LIMIT {rows}",
            quoted.join(", "),
            quote(&t.name)
        );
        let result = db
            .query_read_only(&sql, &[], &limits)
            .await
            .map_err(connect)?;
        tables.push(TableDef {
            name: t.name.clone(),
            columns: t
                .columns
                .iter()
                .map(|c| ColumnDef {
                    name: c.name.clone(),
                    data_type: c.data_type.to_string(),
                    not_null: !c.nullable && !t.primary_key.contains(&c.name),
                })
                .collect(),
            primary_key: t.primary_key.clone(),
            foreign_keys: t
                .foreign_keys
                .iter()
                .map(|fk| FkDef {
                    columns: fk.columns.clone(),
                    table: fk.table.clone(),
                    referenced: fk.referenced.clone(),
                })
                .collect(),
            row_columns: t.columns.iter().map(|c| c.name.clone()).collect(),
            rows: result
                .rows
                .iter()
                .map(|row| row.iter().map(json_literal).collect())
                .collect(),
        });
    }
    db.close().await;
    Ok(SourceDb {
        name: name.to_owned(),
        tables,
    })
}

/// A JSON cell as a SQLite literal.
fn json_literal(value: &Value) -> String {
    match value {
        Value::Null => "NULL".into(),
        Value::Bool(b) => if *b { "1" } else { "0" }.into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string_literal(s),
        other => string_literal(&other.to_string()),
    }
}

/// A quoted SQL string.
pub(super) fn string_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A quoted identifier.
pub(super) fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The DDL and rows of `tables` as one SQLite script: every table, then the rows (foreign keys are not
/// enforced: the first rows of a table may reference rows that were not copied).
pub(super) fn script(tables: &[TableDef]) -> String {
    let mut sql = String::from("PRAGMA foreign_keys = OFF;\nBEGIN;\n");
    for t in tables {
        let mut parts: Vec<String> = t
            .columns
            .iter()
            .map(|c| {
                let mut line = format!("{} {}", quote(&c.name), c.data_type);
                if c.not_null {
                    line.push_str(" NOT NULL");
                }
                line
            })
            .collect();
        if !t.primary_key.is_empty() {
            let cols: Vec<String> = t.primary_key.iter().map(|c| quote(c)).collect();
            parts.push(format!("PRIMARY KEY ({})", cols.join(", ")));
        }
        for fk in &t.foreign_keys {
            let cols: Vec<String> = fk.columns.iter().map(|c| quote(c)).collect();
            let refs: Vec<String> = fk.referenced.iter().map(|c| quote(c)).collect();
            parts.push(format!(
                "FOREIGN KEY ({}) REFERENCES {}({})",
                cols.join(", "),
                quote(&fk.table),
                refs.join(", ")
            ));
        }
        sql.push_str(&format!(
            "CREATE TABLE {} (\n  {}\n);\n",
            quote(&t.name),
            parts.join(",\n  ")
        ));
    }
    for t in tables.iter().filter(|t| !t.rows.is_empty()) {
        let cols: Vec<String> = t.row_columns.iter().map(|c| quote(c)).collect();
        for chunk in t.rows.chunks(100) {
            let values: Vec<String> = chunk
                .iter()
                .map(|row| format!("({})", row.join(", ")))
                .collect();
            sql.push_str(&format!(
                "INSERT OR IGNORE INTO {} ({}) VALUES\n{};\n",
                quote(&t.name),
                cols.join(", "),
                values.join(",\n")
            ));
        }
    }
    sql.push_str("COMMIT;\nANALYZE;\n");
    sql
}

/// Writes `tables` into a new SQLite file at `out`.
async fn write_sqlite(out: &Path, tables: &[TableDef]) -> Result<(), EvalError> {
    if out.exists() {
        std::fs::remove_file(out).map_err(|e| EvalError::io(out, e))?;
    }
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| EvalError::io(parent, e))?;
    }
    let failed = |source| EvalError::Connect {
        db: out.display().to_string(),
        source,
    };
    let db = Database::connect(&format!("sqlite://{}?mode=rwc", out.display()))
        .await
        .map_err(failed)?;
    db.execute_script(&script(tables)).await.map_err(failed)?;
    db.close().await;
    Ok(())
}

/// A defog database's PostgreSQL load script (`databases/<db>/<db>.sql`) as a new SQLite file at `out`, read
/// as the merged schema reads it (the first `rows` rows of each table): for a catalog without PostgreSQL.
pub async fn defog_sqlite(script: &Path, out: &Path, rows: usize) -> Result<(), EvalError> {
    let text = std::fs::read_to_string(script).map_err(|e| EvalError::io(script, e))?;
    let tables =
        defog_ddl::parse(&text, rows).map_err(|m| EvalError::malformed(script, None, m))?;
    write_sqlite(out, &tables).await
}
