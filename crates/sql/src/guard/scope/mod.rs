//! What one principal may see: the tables and columns it may read, the rows of each table and the columns it
//! reads only masked, applied to a query **without re-printing it**.
//!
//! The text that runs is the user's text byte for byte, except at the spans of the references to scoped
//! tables, which the parse located (see `locate`): each is replaced by a derived table Steward generates from
//! names it quotes itself — `FROM orders o` becomes `FROM (SELECT "id", … FROM "orders" WHERE customer_id = $1)
//! o` — and a `TABLE orders` query by `SELECT * FROM (…) AS "orders"`. The principal's values are bound
//! parameters, never text. Then the final text is checked again (`splice`): it must lex exactly as the user's
//! text outside the generated spans, every reference to a scoped table must lie inside a generated span, and the
//! guard must allow it. Anything the scoper cannot place is refused (default deny).

mod filter;
mod locate;
mod splice;
mod statistics;
mod verify;
mod write;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value as Json;

pub(crate) use filter::{Filter, Numbering};

use super::{Guard, GuardVerdict, Mask, reason, verdict};
use crate::catalog::{Catalog, TableKind};
use crate::dialect::Dialect;
use crate::query::Param;

/// What a principal may see of each table it is scoped on (tables not named here are not touched).
#[derive(Clone, Debug, Default)]
pub struct Scope {
    tables: BTreeMap<String, TableScope>,
    /// Views (by lowercase name) of the database: a principal whose rows are filtered may not read one that is
    /// not itself scoped, since a view can read a scoped table past its filter.
    views: BTreeSet<String>,
    /// Views found to read no scoped table (lowercase, as written): readable despite the scope.
    readable_views: BTreeSet<String>,
    /// Relations found to read a scoped table (SQLite virtual tables; lowercase, as written): refused.
    denied: BTreeSet<String>,
    /// The database's own tables and views, lowercase as the catalog names them (bare in the current schema),
    /// once the catalog is known (see [`Scope::complete`]).
    known: Option<BTreeSet<String>>,
}

/// One table's scope.
#[derive(Clone, Debug, Default)]
struct TableScope {
    /// The columns the principal may read (`None`: all).
    columns: Option<Vec<String>>,
    /// The row filter, bound to the principal's values.
    filter: Option<Filter>,
    /// Columns the principal reads only masked, by column name (lowercase).
    masks: BTreeMap<String, Mask>,
}

impl Scope {
    /// No scope: queries run as they are.
    pub fn new() -> Self {
        Self::default()
    }

    /// True when nothing is scoped.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// True when some table's rows are filtered.
    pub fn filters_rows(&self) -> bool {
        self.tables.values().any(|s| s.filter.is_some())
    }

    /// Lets the principal read only `columns` of `table`.
    pub fn columns(&mut self, table: &str, columns: Vec<String>) {
        self.tables.entry(key(table)).or_default().columns = Some(columns);
    }

    /// Lets the principal see only the rows of `table` where `condition` holds; `{principal.NAME}` in it
    /// stands for the principal's attribute `NAME`, bound as a parameter (a missing attribute is an error: the
    /// table would otherwise show every row).
    pub fn filter(
        &mut self,
        dialect: Dialect,
        table: &str,
        condition: &str,
        attributes: &BTreeMap<String, Json>,
    ) -> Result<(), String> {
        let filter = Filter::parse(dialect, condition, attributes)?;
        self.tables.entry(key(table)).or_default().filter = Some(filter);
        Ok(())
    }

    /// Lets the principal read `column` of `table` only masked.
    pub fn mask(&mut self, table: &str, column: &str, mask: Mask) {
        self.tables
            .entry(key(table))
            .or_default()
            .masks
            .insert(column.to_ascii_lowercase(), mask);
    }

    /// The masked columns: (table, column, mask), tables and columns in lowercase.
    pub fn masks(&self) -> Vec<(String, String, Mask)> {
        self.tables
            .iter()
            .flat_map(|(t, s)| s.masks.iter().map(|(c, m)| (t.clone(), c.clone(), *m)))
            .collect()
    }

    /// Fills in what the scope needs from the database's catalog: the columns of masked tables that list none
    /// (their derived table must name every column to mask one) and the database's views.
    pub fn complete(&mut self, catalog: &Catalog) {
        let mut known = BTreeSet::new();
        for table in &catalog.tables {
            if table.kind == TableKind::View {
                self.views.insert(key(&table.name));
            }
            known.insert(table.name.to_ascii_lowercase());
        }
        self.known = Some(known);
        for (name, scope) in &mut self.tables {
            if scope.columns.is_none()
                && !scope.masks.is_empty()
                && let Some(table) = catalog
                    .tables
                    .iter()
                    .find(|t| key(&t.name) == *name && t.kind == TableKind::Table)
            {
                scope.columns = Some(table.columns.iter().map(|c| c.name.clone()).collect());
            }
        }
    }

    /// The same scope with its row filters and masks only (no column limits): for the application's own tools,
    /// whose SQL is fixed and whose output the role's `tools` list governs, but which must not show other
    /// principals' rows or masked values.
    pub fn rows_only(&self) -> Self {
        let tables = self
            .tables
            .iter()
            .filter(|(_, s)| s.filter.is_some() || !s.masks.is_empty())
            .map(|(t, s)| {
                // The columns the tools' own SQL names, every one of the catalog's where masks apply
                // (`Scope::complete` lists them).
                let scope = TableScope {
                    columns: None,
                    filter: s.filter.clone(),
                    masks: s.masks.clone(),
                };
                (t.clone(), scope)
            })
            .collect();
        Self {
            tables,
            views: self.views.clone(),
            readable_views: self.readable_views.clone(),
            denied: self.denied.clone(),
            known: self.known.clone(),
        }
    }

    /// The row filters, as configured, by table (for telling the model that rows were filtered).
    pub fn filters(&self) -> Vec<(String, String)> {
        self.tables
            .iter()
            .filter_map(|(t, s)| s.filter.as_ref().map(|f| (t.clone(), f.configured.clone())))
            .collect()
    }

    /// True when the database has views (once [`Scope::complete`] read the catalog).
    pub fn has_views(&self) -> bool {
        !self.views.is_empty()
    }

    /// True when `name` is one of the database's views (once [`Scope::complete`] read the catalog).
    pub fn is_view(&self, name: &str) -> bool {
        self.views.contains(&key(name))
    }

    /// True when `name` is a view without a scope of its own, while something else is scoped: the guard
    /// refuses it unless [`Scope::allow_view`] said it reads no scoped table.
    pub fn is_unscoped_view(&self, name: &str) -> bool {
        !self.is_empty() && self.is_view(name) && !self.scopes(name)
    }

    /// Lets the principal read the view `name` (as written), whose definition reads no scoped table.
    pub fn allow_view(&mut self, name: &str) {
        self.readable_views.insert(name.to_ascii_lowercase());
    }

    /// Refuses the relation `name` (as written), which reads a scoped table past the scope.
    pub fn deny(&mut self, name: &str) {
        self.denied.insert(name.to_ascii_lowercase());
    }

    /// True when the principal reads `table` only in part: some of its columns, or some masked.
    pub fn narrows_columns(&self, table: &str) -> bool {
        self.tables
            .get(&key(table))
            .is_some_and(|s| s.columns.is_some() || !s.masks.is_empty())
    }

    /// `result`, rows of `table` that Steward got from a write (a preview's `RETURNING *`), limited as a read of
    /// `table` is: only the columns the principal may read, masked ones masked.
    pub fn limit_returned(&self, table: &str, result: &mut crate::query::QueryResult) {
        let Some(scope) = self.tables.get(&key(table)) else {
            return;
        };
        let keep: Vec<bool> = result
            .columns
            .iter()
            .map(|c| {
                scope.columns.as_ref().is_none_or(|list| {
                    list.iter()
                        .any(|allowed| allowed.eq_ignore_ascii_case(&c.name))
                })
            })
            .collect();
        let masks: Vec<Option<Mask>> = result
            .columns
            .iter()
            .map(|c| scope.masks.get(&c.name.to_ascii_lowercase()).copied())
            .collect();
        for row in &mut result.rows {
            let cells = std::mem::take(row);
            *row = cells
                .into_iter()
                .enumerate()
                .filter(|(i, _)| keep.get(*i).copied().unwrap_or(false))
                .map(|(i, cell)| match masks.get(i).copied().flatten() {
                    Some(mask) => mask.apply(&cell),
                    None => cell,
                })
                .collect();
        }
        let mut i = 0;
        result.columns.retain(|_| {
            let kept = keep.get(i).copied().unwrap_or(false);
            i += 1;
            kept
        });
    }

    /// The scoped tables' names (lowercase).
    pub fn scoped_tables(&self) -> Vec<String> {
        self.tables.keys().cloned().collect()
    }

    /// True when `table` has a scope of its own (its columns, rows or masks are limited).
    pub fn scopes(&self, table: &str) -> bool {
        self.get(table).is_some()
    }

    fn get(&self, table: &str) -> Option<&TableScope> {
        self.tables.get(&key(table))
    }
}

/// A query made to fit a scope.
#[derive(Clone, Debug, PartialEq)]
pub struct Scoped {
    /// The text to run (already checked by the guard): the user's text with generated derived tables in place
    /// of the scoped tables' references.
    pub sql: String,
    /// The tables whose rows were filtered, with their filters as configured.
    pub filtered: Vec<(String, String)>,
    /// The principal's values the generated text binds, each with the number of the text's own positional
    /// placeholders (`?`) that come before it (`None`: numbered placeholders, bound after the caller's).
    values: Vec<(Option<usize>, Param)>,
    /// How many values the text's own placeholders take (the count of `?`, or the highest `$N`/`?N`).
    own: usize,
}

impl Scoped {
    /// The text unchanged, with no values.
    fn unchanged(sql: &str) -> Self {
        Self {
            sql: sql.to_owned(),
            filtered: Vec::new(),
            values: Vec::new(),
            own: 0,
        }
    }

    /// The parameters to bind: the caller's own (`caller`, for the text's placeholders) with the principal's
    /// values in their places. An error when the text has placeholders the caller gives no values for (free
    /// SQL with a `?` or `$1`): the principal's values would otherwise take their places.
    pub fn bind(&self, caller: &[Param]) -> Result<Vec<Param>, String> {
        if self.values.is_empty() {
            return Ok(caller.to_vec());
        }
        if caller.len() != self.own {
            return Err(format!(
                "The SQL has placeholders for {} value{} but {} {} given; write the values into the query.",
                self.own,
                if self.own == 1 { "" } else { "s" },
                caller.len(),
                if caller.len() == 1 { "was" } else { "were" }
            ));
        }
        let mut out = Vec::with_capacity(caller.len() + self.values.len());
        let mut values = self.values.iter().peekable();
        for (i, param) in caller.iter().enumerate() {
            while let Some((_, value)) = values.next_if(|(at, _)| at.is_some_and(|at| at <= i)) {
                out.push(value.clone());
            }
            out.push(param.clone());
        }
        out.extend(values.map(|(_, v)| v.clone()));
        Ok(out)
    }

    /// True when the generated text binds values of its own.
    pub fn binds(&self) -> bool {
        !self.values.is_empty()
    }
}

/// A table's name as a scope key: its last part, unquoted, lowercase.
pub(crate) fn key(table: &str) -> String {
    table
        .rsplit('.')
        .next()
        .unwrap_or(table)
        .trim_matches(['"', '`', '[', ']'])
        .to_ascii_lowercase()
}

/// A name quoted for `dialect` by Steward itself.
pub(crate) fn quote(dialect: Dialect, name: &str) -> String {
    let q = if dialect == Dialect::Mysql { '`' } else { '"' };
    let mut out = String::with_capacity(name.len() + 2);
    out.push(q);
    for c in name.chars() {
        if c == q {
            out.push(q);
        }
        out.push(c);
    }
    out.push(q);
    out
}

impl Guard {
    /// The text of `sql` limited to `scope`: checked as it is first (the refusals name the tables and columns
    /// that may not be read), then each reference to a scoped table replaced, at its located span, by a
    /// generated derived table of only the allowed columns (masked where masked) and rows, and the result checked
    /// again. Returns the text to run with the values it binds, or the refusal.
    pub fn scoped(&self, sql: &str, scope: &Scope) -> Result<Scoped, GuardVerdict> {
        let first = self.with_columns_scoped(scope).check(sql);
        if !first.allowed {
            return Err(first);
        }
        let refuse = |why: String| verdict(first.class, vec![reason("scope", why)], Vec::new());
        if scope.is_empty() && self.policy.tables.is_none() {
            return Ok(Scoped::unchanged(sql));
        }
        self.statistics(sql, &first, scope).map_err(refuse)?;
        if scope.is_empty() {
            return Ok(Scoped::unchanged(sql));
        }
        splice::scoped(self, sql, scope).map_err(|e| match e {
            splice::Refusal::Scope(why) => refuse(why),
            splice::Refusal::GuardVerdict(v) => v,
        })
    }

    /// The guard that checks a text about to be scoped: `*` is fine on a table whose columns the scope limits
    /// (the derived table lists only the allowed ones).
    fn with_columns_scoped(&self, scope: &Scope) -> Guard {
        let mut guard = self.clone();
        if let Some(columns) = &guard.policy.columns {
            guard.wildcard_scoped = columns
                .keys()
                .all(|t| scope.get(t).is_some_and(|s| s.columns.is_some()));
        }
        guard
    }
}

#[cfg(test)]
mod tests;
