//! Who is asking: the principal's SQL access (table and column allowlists, row filters) applied to every
//! query the SQL tools run for it, and said in the observation when rows were filtered.

use std::sync::Arc;

use steward_core::Principal;

use crate::database::Database;
use crate::dialect::Dialect;
use crate::error::SqlError;
use crate::guard::{Guard, GuardPolicy, Scope};

use crate::query::{Param, QueryLimits, QueryResult};

/// What one principal may do with SQL.
#[derive(Clone, Debug, Default)]
pub struct Access {
    /// The tables and columns it may read.
    pub read: GuardPolicy,
    /// The columns and rows of each table it sees (and, for UPDATE and DELETE, may change).
    pub scope: Scope,
    /// The tables it may write, each with the columns it may set (`None`: every column); `None`: any table.
    pub write: Option<std::collections::BTreeMap<String, Option<Vec<String>>>>,
    /// Most rows one query returns for it (below the tool's own cap).
    pub max_rows: Option<usize>,
}

impl Access {
    /// True when the principal reads every column of `table` as it is: the table is one it may read, with no
    /// column list and no mask on it (row filters aside).
    pub fn reads_whole(&self, table: &str) -> bool {
        let listed = self
            .read
            .tables
            .as_ref()
            .is_none_or(|tables| tables.iter().any(|t| crate::guard::same_table(t, table)));
        listed && !self.scope.narrows_columns(table)
    }

    /// `result`, rows of `table` that a write returned (a preview), as a read of `table` would show them to
    /// this principal: only the columns it may read, masked ones masked; `false` (and no rows) when it may
    /// not read `table` at all.
    pub fn limit_returned(&self, table: &str, result: &mut QueryResult) -> bool {
        if let Some(tables) = &self.read.tables
            && !tables.iter().any(|t| crate::guard::same_table(t, table))
        {
            result.rows.clear();
            result.columns.clear();
            return false;
        }
        self.scope.limit_returned(table, result);
        true
    }
}

/// A principal's SQL access: `None` when nothing limits it (the database's own rights apply), else its
/// [`Access`]; an error when its access cannot be worked out (a row filter needs an attribute the principal
/// lacks): then it reads nothing.
#[derive(Clone)]
pub struct AccessFn(Arc<AccessFnInner>);

type AccessFnInner = dyn Fn(&Principal, Dialect) -> Result<Option<Access>, String> + Send + Sync;

impl AccessFn {
    /// Access worked out by `f` for each principal and dialect.
    pub fn new(
        f: impl Fn(&Principal, Dialect) -> Result<Option<Access>, String> + Send + Sync + 'static,
    ) -> Self {
        Self(Arc::new(f))
    }

    /// The access of `principal` on a database of `dialect`.
    pub fn of(&self, principal: &Principal, dialect: Dialect) -> Result<Option<Access>, String> {
        (self.0)(principal, dialect)
    }
}

impl std::fmt::Debug for AccessFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AccessFn")
    }
}

/// A read as the principal may do it: `sql` checked against its allowlists, rewritten to its scope, the
/// rewritten text checked again and run. Returns the rows and the filters that applied, by table.
pub async fn read_as(
    db: &Database,
    guard: &Guard,
    access: Option<&AccessFn>,
    principal: &Principal,
    sql: &str,
    params: &[Param],
    limits: &QueryLimits,
) -> Result<(QueryResult, Vec<(String, String)>), SqlError> {
    let scoped = match access.map(|f| f.of(principal, db.dialect())) {
        None | Some(Ok(None)) => None,
        Some(Ok(Some(access))) => Some(access),
        Some(Err(why)) => return Err(SqlError::refused(format!("Not allowed: {why}."))),
    };
    let Some(access) = scoped else {
        return Ok((db.query_with(guard, sql, params, limits).await?, Vec::new()));
    };
    let limits = &QueryLimits {
        max_rows: access
            .max_rows
            .map_or(limits.max_rows, |cap| cap.clamp(1, limits.max_rows)),
        ..*limits
    };
    let guard = guard.clone().with_policy(access.read.clone());
    let mut scope = access.scope.clone();
    scope.complete(&*db.catalog().await?);
    // Views that read no scoped table may be read; the others stay refused.
    super::views::allow_safe_views(db, &guard, &mut scope, sql).await?;
    let scoped = guard
        .scoped(sql, &scope)
        .map_err(|verdict| SqlError::refused(verdict.explanation()))?;
    // The scoped text lists the allowed columns itself; it is checked again, as it runs, with the principal's
    // values bound as parameters after (or, for `?`, among) the caller's.
    // Errors are explained from what the principal may see: no other table or column is named.
    let result = db
        .query_seen_by(
            &guard.without_columns(),
            &scoped.sql,
            &scoped.bind(params).map_err(SqlError::refused)?,
            limits,
            Some(&access),
        )
        .await?;
    Ok((result, scoped.filtered))
}

/// The words that tell the model rows were filtered (so it does not take "no rows" for "none exist").
pub fn filtered_note(filtered: &[(String, String)]) -> String {
    if filtered.is_empty() {
        return String::new();
    }
    let tables: Vec<String> = filtered
        .iter()
        .map(|(table, filter)| format!("{table} ({filter})"))
        .collect();
    format!(
        "Rows were filtered by access policy: you see only the rows of {} that this user may see; rows you \
         do not see may exist.\n",
        tables.join(", ")
    )
}
