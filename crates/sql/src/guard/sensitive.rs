//! Sensitive catalogs: tables and views that hold credentials, other sessions' SQL and data, or the server's
//! configuration. Refused unless the guard allows them ([`crate::Guard::allow_sensitive_catalogs`]). Names
//! are compared decoded and case-insensitively, qualified or not.

use crate::dialect::Dialect;

/// PostgreSQL relations, by their last name part.
const POSTGRES: &[&str] = &[
    "pg_authid", // password hashes
    "pg_backend_memory_contexts",
    "pg_db_role_setting", // per-role settings, which can hold secrets
    "pg_file_settings",   // the configuration files
    "pg_hba_file_rules",  // who may connect from where
    "pg_ident_file_mappings",
    "pg_largeobject", // large objects' contents
    "pg_largeobject_metadata",
    "pg_locks", // other sessions' locks
    "pg_prepared_xacts",
    "pg_shadow",        // password hashes
    "pg_stat_activity", // other sessions' SQL text
    "pg_stat_gssapi",
    "pg_stat_replication", // replicas' addresses
    "pg_stat_ssl",
    "pg_stat_statements", // every session's SQL text
    "pg_stat_statements_info",
    "pg_stat_subscription",
    "pg_stat_wal_receiver", // its conninfo can hold a password
    "pg_statistic",         // sampled values of every column, whatever the privileges
    "pg_statistic_ext_data",
    "pg_subscription", // subconninfo can hold a password
    "pg_user_mapping", // passwords for foreign servers
    "pg_user_mappings",
    "user_mapping_options", // information_schema: the same options
];

/// MySQL/MariaDB schemas refused as a whole.
const MYSQL_SCHEMAS: &[&str] = &["mysql", "performance_schema", "sys"];

/// MySQL/MariaDB `information_schema` tables refused.
const MYSQL_INFORMATION_SCHEMA: &[&str] = &[
    "client_statistics",
    "innodb_lock_waits",
    "innodb_locks",
    "innodb_trx",       // other sessions' SQL text
    "processlist",      // other sessions' SQL text
    "query_cache_info", // cached SQL text
    "user_statistics",
    "users",
];

/// `information_schema` tables distinctive enough to refuse even unqualified.
const MYSQL_UNQUALIFIED: &[&str] = &[
    "innodb_lock_waits",
    "innodb_locks",
    "innodb_trx",
    "processlist",
    "query_cache_info",
];

/// SQLite virtual tables.
const SQLITE: &[&str] = &["sqlite_dbpage"]; // raw pages, deleted rows included

/// Why reading the relation named by `parts` (schema, table; decoded) is refused, if it is.
/// `current_database` is where unqualified MySQL names resolve, when known.
pub(crate) fn sensitive(
    dialect: Dialect,
    parts: &[&str],
    current_database: Option<&str>,
) -> Option<String> {
    let table = *parts.last()?;
    let schema = parts
        .len()
        .checked_sub(2)
        .and_then(|i| parts.get(i))
        .copied();
    let listed = |list: &[&str], name: &str| list.iter().any(|n| n.eq_ignore_ascii_case(name));
    let hit = match dialect {
        Dialect::Postgres => listed(POSTGRES, table),
        Dialect::Sqlite => listed(SQLITE, table),
        Dialect::Mysql => match schema.or(current_database) {
            Some(s) if listed(MYSQL_SCHEMAS, s) => true,
            Some(s) if s.eq_ignore_ascii_case("information_schema") => {
                listed(MYSQL_INFORMATION_SCHEMA, table)
            }
            _ => parts.len() == 1 && listed(MYSQL_UNQUALIFIED, table),
        },
    };
    hit.then(|| {
        let shown = parts.join(".");
        format!(
            "`{shown}` is a sensitive catalog (credentials, other sessions' SQL or data, or server configuration) and may not be read."
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_unqualified_any_case() {
        let pg = |p: &[&str]| sensitive(Dialect::Postgres, p, None).is_some();
        assert!(pg(&["pg_authid"]));
        assert!(pg(&["PG_CATALOG", "PG_SHADOW"]));
        assert!(pg(&["information_schema", "user_mapping_options"]));
        assert!(!pg(&["pg_class"]));
        assert!(!pg(&["public", "orders"]));
        let my = |p: &[&str], db: Option<&str>| sensitive(Dialect::Mysql, p, db).is_some();
        assert!(my(&["mysql", "user"], None));
        assert!(my(&["MySQL", "global_priv"], None));
        assert!(my(&["performance_schema", "threads"], None));
        assert!(my(&["sys", "session"], None));
        assert!(my(&["information_schema", "PROCESSLIST"], None));
        assert!(my(&["processlist"], None));
        assert!(!my(&["information_schema", "TABLES"], None));
        assert!(!my(&["user"], None));
        assert!(!my(&["users"], Some("shop")));
        assert!(my(&["user"], Some("mysql")));
        assert!(!my(&["shop", "user"], Some("mysql")));
    }
}
