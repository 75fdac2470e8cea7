//! Which views a scoped principal may read: a view reads its tables past the principal's scope, so one whose
//! definition reads a scoped table (or a view that does, at any depth) is refused, and one that reads none may be
//! read. The definition is read from the engine's catalog (every view of that name, whatever its case); it must
//! pass the guard itself (a function that runs SQL or a user-defined function could read anything) and name no
//! scoped table, as a relation or as any other name (a column of that name too: the check errs on the side of
//! refusing). A name with a qualifier that is not the database's own schema is looked up there, so `other.v` is
//! never judged by `public.v`. On SQLite a virtual table (FTS5 with `content='orders'`, …) is judged by its
//! definition the same way.

use std::collections::BTreeSet;

use crate::database::Database;
use crate::dialect::Dialect;
use crate::error::SqlError;
use crate::guard::{Guard, Scope};
use crate::query::{Param, QueryLimits, cell_text};

/// How many views deep a definition is followed before the view is taken to read a scoped table.
const MAX_DEPTH: usize = 8;

/// Marks in `scope` the views `sql` reads that read no scoped table (see [`Scope::allow_view`]), and refuses
/// SQLite virtual tables that read one (see [`Scope::deny`]).
pub(crate) async fn allow_safe_views(
    db: &Database,
    guard: &Guard,
    scope: &mut Scope,
    sql: &str,
) -> Result<(), SqlError> {
    // Nothing to judge: no view in the database, and no virtual table (SQLite's only).
    if scope.is_empty() || (!scope.has_views() && db.dialect() != Dialect::Sqlite) {
        return Ok(());
    }
    let verdict = guard.check(sql);
    for table in &verdict.tables {
        if scope.is_unscoped_view(table) && !reads_scoped(db, guard, scope, table).await? {
            scope.allow_view(table);
        }
        if db.dialect() == Dialect::Sqlite && !scope.scopes(table) {
            let virtual_sql = definitions(db, table, true).await?;
            let lower: Vec<String> = virtual_sql.iter().map(|d| d.to_ascii_lowercase()).collect();
            if lower
                .iter()
                .any(|d| scope.scoped_tables().iter().any(|t| d.contains(t.as_str())))
            {
                scope.deny(table);
            }
        }
    }
    Ok(())
}

/// True when the view `view`, or a view it reads, reads a scoped table (or its definition cannot be read or
/// judged).
async fn reads_scoped(
    db: &Database,
    guard: &Guard,
    scope: &Scope,
    view: &str,
) -> Result<bool, SqlError> {
    let mut pending = vec![(view.to_owned(), 0)];
    let mut seen = BTreeSet::new();
    while let Some((view, depth)) = pending.pop() {
        if !seen.insert(view.to_ascii_lowercase()) {
            continue;
        }
        if depth > MAX_DEPTH {
            return Ok(true);
        }
        let found = definitions(db, &view, false).await?;
        if found.is_empty() {
            return Ok(true);
        }
        for definition in found {
            // SQLite keeps `CREATE VIEW … AS SELECT …`; the other engines the query alone, which the guard
            // must allow as it would allow the user's own (no function that runs SQL, no user function).
            let mut names: Vec<String> = guard.names(&definition);
            if db.dialect() != Dialect::Sqlite {
                let verdict = guard.check(&definition);
                if !verdict.allowed {
                    return Ok(true);
                }
                names.extend(verdict.tables.iter().map(|t| t.to_ascii_lowercase()));
            }
            for name in names {
                if scope.scopes(&name) {
                    return Ok(true);
                }
                if scope.is_view(&name) {
                    pending.push((name, depth + 1));
                }
            }
        }
    }
    Ok(false)
}

/// The definitions of the views (or, with `virtual_tables`, SQLite's virtual tables) named `name` in its schema:
/// the current one for a bare name, the named one for `schema.name`; every case of the name counts. None for a
/// name of more parts, or qualified by a schema that is not SQLite's `main`.
async fn definitions(
    db: &Database,
    name: &str,
    virtual_tables: bool,
) -> Result<Vec<String>, SqlError> {
    let parts: Vec<&str> = name.split('.').collect();
    let (schema, bare) = match parts.as_slice() {
        [bare] => (None, *bare),
        [schema, bare] => (Some(*schema), *bare),
        _ => return Ok(Vec::new()),
    };
    let (sql, params) = match (db.dialect(), schema) {
        (Dialect::Postgres, None) => (
            "SELECT definition FROM pg_catalog.pg_views \
             WHERE lower(viewname) = lower($1) AND schemaname = current_schema()",
            vec![Param::Text(bare.to_owned())],
        ),
        (Dialect::Postgres, Some(schema)) => (
            "SELECT definition FROM pg_catalog.pg_views \
             WHERE lower(viewname) = lower($1) AND lower(schemaname) = lower($2)",
            vec![Param::Text(bare.to_owned()), Param::Text(schema.to_owned())],
        ),
        (Dialect::Mysql, None) => (
            "SELECT VIEW_DEFINITION FROM information_schema.VIEWS \
             WHERE TABLE_SCHEMA = DATABASE() AND lower(TABLE_NAME) = lower(?)",
            vec![Param::Text(bare.to_owned())],
        ),
        (Dialect::Mysql, Some(schema)) => (
            "SELECT VIEW_DEFINITION FROM information_schema.VIEWS \
             WHERE lower(TABLE_SCHEMA) = lower(?) AND lower(TABLE_NAME) = lower(?)",
            vec![Param::Text(schema.to_owned()), Param::Text(bare.to_owned())],
        ),
        (_, Some(schema)) if !schema.eq_ignore_ascii_case("main") => return Ok(Vec::new()),
        _ if virtual_tables => (
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1 COLLATE NOCASE \
             AND sql LIKE 'CREATE VIRTUAL TABLE%'",
            vec![Param::Text(bare.to_owned())],
        ),
        _ => (
            "SELECT sql FROM sqlite_master WHERE type = 'view' AND name = ?1 COLLATE NOCASE",
            vec![Param::Text(bare.to_owned())],
        ),
    };
    if virtual_tables && db.dialect() != Dialect::Sqlite {
        return Ok(Vec::new());
    }
    let limits = QueryLimits {
        max_rows: 16,
        ..QueryLimits::default()
    };
    let found = db.query_prepared(sql, &params, &limits).await?;
    Ok(found
        .rows
        .iter()
        .filter_map(|row| row.first())
        .map(cell_text)
        .filter(|text| !text.is_empty())
        .collect())
}
