//! What a principal whose reads are limited may not read even in tables it may see: the planner's statistics
//! and the catalogs' row counts and sizes (they describe every row, other principals' included), plans
//! (`EXPLAIN` shows the statistics' estimates), and views that are not themselves scoped (a view can read a
//! scoped table past its filter). A role may still read a catalog it names in its `read` list.

use super::super::lex::Kind;
use super::super::policy::same_table;
use super::super::{Guard, GuardVerdict};
use super::{Scope, key};
use crate::dialect::Dialect;

/// PostgreSQL statistics and size catalogs, by last name part (besides every `pg_stat_*` and `pg_statio_*`).
const POSTGRES: &[&str] = &[
    "pg_stats",
    "pg_stats_ext",
    "pg_stats_ext_exprs",
    "pg_statistic",
    "pg_statistic_ext",
    "pg_statistic_ext_data",
    "pg_class",
    "pg_sequences",
    "pg_partitioned_table",
];

/// MySQL/MariaDB `information_schema` tables with row counts, sizes, cardinalities or histograms.
const MYSQL: &[&str] = &[
    "tables",
    "statistics",
    "partitions",
    "column_statistics",
    "table_statistics",
    "index_statistics",
    "tablespaces",
    "files",
];

/// SQLite's statistics and page catalogs.
const SQLITE: &[&str] = &[
    "sqlite_stat1",
    "sqlite_stat2",
    "sqlite_stat3",
    "sqlite_stat4",
    "dbstat",
    "sqlite_sequence",
];

/// PostgreSQL functions that read statistics or sizes of a relation (besides every `pg_stat_get_*`).
const POSTGRES_FUNCTIONS: &[&str] = &[
    "pg_relation_size",
    "pg_total_relation_size",
    "pg_table_size",
    "pg_indexes_size",
    "pg_stat_file",
    "pg_database_size",
    "pg_tablespace_size",
    "pg_sequence_last_value",
    "pg_sequence_parameters",
];

/// MySQL/MariaDB functions that tell what an earlier statement on the connection (another principal's, in a
/// pool) found.
const MYSQL_FUNCTIONS: &[&str] = &["found_rows", "row_count"];

/// SQLite's table-valued pragmas that tell the database's size.
const SQLITE_FUNCTIONS: &[&str] = &["pragma_page_count", "pragma_freelist_count", "pragma_stats"];

/// True when `table` (as written) is the engine's own: a system catalog, which the statistics list above
/// judges, not one of the database's relations.
fn system_relation(dialect: Dialect, table: &str) -> bool {
    let parts: Vec<String> = table.split('.').map(str::to_ascii_lowercase).collect();
    let last = parts.last().map_or("", String::as_str);
    let schema = parts
        .len()
        .checked_sub(2)
        .and_then(|i| parts.get(i))
        .map(String::as_str);
    match dialect {
        Dialect::Postgres => {
            matches!(schema, Some("pg_catalog" | "information_schema")) || last.starts_with("pg_")
        }
        Dialect::Mysql => {
            matches!(
                schema,
                Some("information_schema" | "mysql" | "performance_schema" | "sys")
            ) || (schema.is_none() && last == "dual")
        }
        _ => last.starts_with("sqlite_") || last.starts_with("pragma_"),
    }
}

/// True when `table` (as written) is a statistics or size catalog on `dialect`.
fn statistics_catalog(dialect: Dialect, table: &str) -> bool {
    let parts: Vec<String> = table.split('.').map(str::to_ascii_lowercase).collect();
    let last = parts.last().map_or("", String::as_str);
    match dialect {
        Dialect::Postgres => {
            POSTGRES.contains(&last)
                || last.starts_with("pg_stat_")
                || last.starts_with("pg_statio_")
        }
        Dialect::Mysql => {
            let schema = parts.len().checked_sub(2).and_then(|i| parts.get(i));
            schema.is_some_and(|s| s == "information_schema")
                && (MYSQL.contains(&last) || last.starts_with("innodb_"))
        }
        Dialect::Sqlite => SQLITE.contains(&last),
    }
}

impl Guard {
    /// True when `table` (as written) is one the catalog lists (`known`, lowercase): a bare name, or a name
    /// qualified with its own schema or the database's home (PostgreSQL `public`, MySQL the current database,
    /// SQLite `main`).
    fn listed(&self, known: &std::collections::BTreeSet<String>, table: &str) -> bool {
        let lower = table.to_ascii_lowercase();
        if known.contains(&lower) {
            return true;
        }
        let Some((qualifier, name)) = lower.split_once('.') else {
            return false;
        };
        if name.contains('.') || !known.contains(name) {
            return false;
        }
        match self.dialect {
            Dialect::Postgres => qualifier == "public",
            Dialect::Mysql => self
                .settings
                .current_database
                .as_deref()
                .is_some_and(|db| db.eq_ignore_ascii_case(qualifier)),
            _ => qualifier == "main",
        }
    }

    /// Refuses what a principal limited by `scope` (or by a `read` list) may not read beyond its tables.
    pub(super) fn statistics(
        &self,
        sql: &str,
        first: &GuardVerdict,
        scope: &Scope,
    ) -> Result<(), String> {
        let named = |table: &str| {
            self.policy
                .tables
                .as_ref()
                .is_some_and(|list| list.iter().any(|t| same_table(t, table)))
        };
        let Ok(lexed) = self.one_reading(sql) else {
            return Ok(());
        };
        let code: Vec<_> = lexed.code().collect();
        // Names called as functions (`generate_series(…)` in FROM is a relation to the parse, not a table).
        let called: std::collections::BTreeSet<String> = code
            .windows(2)
            .filter_map(|w| match w {
                [name, open] if open.is_punct(sql, "(") => {
                    name.ident(sql).map(str::to_ascii_lowercase)
                }
                _ => None,
            })
            .collect();
        let limited = !scope.is_empty();
        for table in &first.tables {
            if statistics_catalog(self.dialect, table) && !named(table) {
                return Err(format!(
                    "`{table}` holds statistics or sizes of every row, other users' rows included; it may not be read here."
                ));
            }
            if limited
                && scope.views.contains(&key(table))
                && scope.get(table).is_none()
                && !scope.readable_views.contains(&table.to_ascii_lowercase())
                && !named(table)
            {
                return Err(format!(
                    "`{table}` is a view that reads tables whose rows or columns are limited for you, past those limits; read the tables themselves."
                ));
            }
            if scope.denied.contains(&table.to_ascii_lowercase()) {
                return Err(format!(
                    "`{table}` reads tables whose rows or columns are limited for you, past those limits; read the tables themselves."
                ));
            }
            // Default deny: only the database's own tables and views as the catalog lists them (in this
            // database: `other_db.orders` is another table), and the engine's catalogs; a sequence
            // (`orders_id_seq`) counts every row.
            if let Some(known) = &scope.known
                && !called.contains(&key(table))
                && !system_relation(self.dialect, table)
                && !self.listed(known, table)
                && !self
                    .policy
                    .tables
                    .as_ref()
                    .is_some_and(|list| list.iter().any(|t| t.eq_ignore_ascii_case(table)))
            {
                return Err(format!(
                    "`{table}` is not a table or view of this database's catalog; only those may be read here."
                ));
            }
        }
        if scope.filters_rows()
            && code.first().is_some_and(|t| {
                ["EXPLAIN", "DESC", "DESCRIBE"]
                    .iter()
                    .any(|w| t.is_word(sql, w))
            })
        {
            return Err(
                "EXPLAIN shows the planner's estimates over every row, other users' included; run the query itself."
                    .to_owned(),
            );
        }
        let (functions, prefix, called_only): (&[&str], Option<&str>, bool) = match self.dialect {
            Dialect::Postgres => (POSTGRES_FUNCTIONS, Some("pg_stat_get_"), true),
            Dialect::Mysql => (MYSQL_FUNCTIONS, None, true),
            // A table-valued pragma may be named without parentheses.
            _ => (SQLITE_FUNCTIONS, None, false),
        };
        for (i, name) in code.iter().enumerate() {
            if !matches!(name.kind, Kind::Word | Kind::Quoted) {
                continue;
            }
            let called = code.get(i + 1).is_some_and(|t| t.is_punct(sql, "("));
            if let Some(function) = name.ident(sql).map(str::to_ascii_lowercase)
                && (called || !called_only)
                && (functions.contains(&function.as_str())
                    || prefix.is_some_and(|p| function.starts_with(p)))
            {
                return Err(format!(
                    "`{function}` tells about every row or another statement's, other users' included; it may not be used here."
                ));
            }
        }
        Ok(())
    }
}
