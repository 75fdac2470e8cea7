//! Which views a scoped principal may read: a view reads its tables past the principal's scope, so one whose
//! definition names a scoped table (or a view that does, at any depth) is refused, and one that names none may be
//! read. The definition is read from the engine's catalog and lexed as the engine reads it; any name that is a
//! scoped table's counts (a column of that name too: the check errs on the side of refusing).

use crate::database::Database;
use crate::dialect::Dialect;
use crate::error::SqlError;
use crate::guard::{Guard, Scope};
use crate::query::{Param, QueryLimits};

/// How many views deep a definition is followed before the view is taken to read a scoped table.
const MAX_DEPTH: usize = 8;

/// Marks in `scope` the views `sql` reads that read no scoped table (see [`Scope::allow_view`]).
pub(crate) async fn allow_safe_views(
    db: &Database,
    guard: &Guard,
    scope: &mut Scope,
    sql: &str,
) -> Result<(), SqlError> {
    let verdict = guard.check(sql);
    for table in &verdict.tables {
        if scope.is_unscoped_view(table) && !reads_scoped(db, guard, scope, table).await? {
            scope.allow_view(table);
        }
    }
    Ok(())
}

/// True when the view `view`, or a view it reads, names a scoped table (or its definition cannot be read).
async fn reads_scoped(
    db: &Database,
    guard: &Guard,
    scope: &Scope,
    view: &str,
) -> Result<bool, SqlError> {
    let mut pending = vec![(view.to_owned(), 0)];
    let mut seen = std::collections::BTreeSet::new();
    while let Some((view, depth)) = pending.pop() {
        if !seen.insert(view.to_ascii_lowercase()) {
            continue;
        }
        if depth > MAX_DEPTH {
            return Ok(true);
        }
        let Some(definition) = definition(db, &view).await? else {
            return Ok(true);
        };
        for name in guard.names(&definition) {
            if scope.scopes(&name) {
                return Ok(true);
            }
            if scope.is_view(&name) {
                pending.push((name, depth + 1));
            }
        }
    }
    Ok(false)
}

/// A view's definition as the catalog holds it, by its last name part (`None`: no such view).
async fn definition(db: &Database, view: &str) -> Result<Option<String>, SqlError> {
    let name = view.rsplit('.').next().unwrap_or(view);
    let sql = match db.dialect() {
        Dialect::Postgres => {
            "SELECT definition FROM pg_catalog.pg_views WHERE viewname = $1 \
             ORDER BY schemaname = current_schema() DESC LIMIT 1"
        }
        Dialect::Mysql => {
            "SELECT VIEW_DEFINITION FROM information_schema.VIEWS \
             WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?"
        }
        _ => "SELECT sql FROM sqlite_master WHERE type = 'view' AND name = ?1 COLLATE NOCASE",
    };
    let limits = QueryLimits {
        max_rows: 1,
        ..QueryLimits::default()
    };
    let found = db
        .query_prepared(sql, &[Param::Text(name.to_owned())], &limits)
        .await?;
    Ok(found
        .rows
        .first()
        .and_then(|row| row.first())
        .map(crate::query::cell_text)
        .filter(|text| !text.is_empty()))
}
