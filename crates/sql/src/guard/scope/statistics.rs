//! What a principal whose reads are limited may not read even in tables it may see: the planner's statistics
//! and the catalogs' row counts and sizes (they describe every row, other principals' included), plans
//! (`EXPLAIN` shows the statistics' estimates), and views that are not themselves scoped (a view can read a
//! scoped table past its filter). A role may still read a catalog it names in its `read` list.

use super::super::lex::Kind;
use super::super::policy::same_table;
use super::super::{Guard, Verdict};
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
];

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
    /// Refuses what a principal limited by `scope` (or by a `read` list) may not read beyond its tables.
    pub(super) fn statistics(
        &self,
        sql: &str,
        first: &Verdict,
        scope: &Scope,
    ) -> Result<(), String> {
        let named = |table: &str| {
            self.policy
                .tables
                .as_ref()
                .is_some_and(|list| list.iter().any(|t| same_table(t, table)))
        };
        for table in &first.tables {
            if statistics_catalog(self.dialect, table) && !named(table) {
                return Err(format!(
                    "`{table}` holds statistics or sizes of every row, other users' rows included; it may not be read here."
                ));
            }
            if scope.filters_rows()
                && scope.views.contains(&key(table))
                && scope.get(table).is_none()
                && !named(table)
            {
                return Err(format!(
                    "`{table}` is a view, which can read rows you may not see; read the tables themselves."
                ));
            }
        }
        let Ok(lexed) = self.one_reading(sql) else {
            return Ok(());
        };
        let code: Vec<_> = lexed.code().collect();
        if scope.filters_rows() && code.first().is_some_and(|t| t.is_word(sql, "EXPLAIN")) {
            return Err(
                "EXPLAIN shows the planner's estimates over every row, other users' included; run the query itself."
                    .to_owned(),
            );
        }
        if self.dialect == Dialect::Postgres {
            for pair in code.windows(2) {
                if let [name, open] = pair
                    && matches!(name.kind, Kind::Word | Kind::Quoted)
                    && open.is_punct(sql, "(")
                    && let Some(function) = name.ident(sql).map(str::to_ascii_lowercase)
                    && (POSTGRES_FUNCTIONS.contains(&function.as_str())
                        || function.starts_with("pg_stat_get_"))
                {
                    return Err(format!(
                        "`{function}` reads statistics or sizes of every row, other users' rows included; it may not be used here."
                    ));
                }
            }
        }
        Ok(())
    }
}
