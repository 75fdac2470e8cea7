//! Functions a read-only query must not call: side effects, file, network or admin reach, sleeping and locks.
//! Checked by the function's last name part, case-insensitively, so `pg_catalog.pg_sleep` is caught too.

use crate::dialect::Dialect;

/// PostgreSQL.
const POSTGRES: &[&str] = &[
    // files and programs
    "pg_read_file",
    "pg_read_binary_file",
    "pg_ls_dir",
    "pg_ls_logdir",
    "pg_ls_waldir",
    "pg_ls_tmpdir",
    "pg_ls_archive_statusdir",
    "pg_stat_file",
    "pg_file_write",
    "pg_file_rename",
    "pg_file_unlink",
    "pg_logdir_ls",
    "lo_import",
    "lo_export",
    "lo_from_bytea",
    "lo_put",
    "lo_create",
    "lo_creat",
    "lo_unlink",
    "lo_truncate",
    // network
    "dblink",
    "dblink_exec",
    "dblink_connect",
    "dblink_connect_u",
    "dblink_send_query",
    "dblink_open",
    "dblink_fetch",
    "dblink_get_result",
    // sessions, settings and the server
    "set_config",
    "pg_terminate_backend",
    "pg_cancel_backend",
    "pg_reload_conf",
    "pg_rotate_logfile",
    "pg_promote",
    "pg_switch_wal",
    "pg_create_restore_point",
    "pg_backup_start",
    "pg_backup_stop",
    "pg_start_backup",
    "pg_stop_backup",
    "pg_logical_emit_message",
    "pg_create_logical_replication_slot",
    "pg_create_physical_replication_slot",
    "pg_drop_replication_slot",
    "pg_replication_origin_create",
    "pg_notify",
    "pg_import_system_collations",
    // time and locks
    "pg_sleep",
    "pg_sleep_for",
    "pg_sleep_until",
    "pg_advisory_lock",
    "pg_advisory_lock_shared",
    "pg_advisory_xact_lock",
    "pg_advisory_xact_lock_shared",
    "pg_try_advisory_lock",
    "pg_try_advisory_lock_shared",
    "pg_try_advisory_xact_lock",
    "pg_try_advisory_xact_lock_shared",
    // writes and queries hidden in a string
    "nextval",
    "setval",
    "txid_current",
    "pg_current_xact_id",
    "query_to_xml",
    "query_to_xml_and_xmlschema",
    "query_to_xmlschema",
    "cursor_to_xml",
    "table_to_xml",
    "table_to_xml_and_xmlschema",
    "schema_to_xml",
    "database_to_xml",
    "database_to_xml_and_xmlschema",
];

/// MySQL and MariaDB.
const MYSQL: &[&str] = &[
    "load_file",
    "sleep",
    "benchmark",
    "get_lock",
    "release_lock",
    "release_all_locks",
    "is_used_lock",
    "master_pos_wait",
    "source_pos_wait",
    "wait_for_executed_gtid_set",
    "wait_until_sql_thread_after_gtids",
    "sys_exec",
    "sys_eval",
    "load_data",
];

/// SQLite (core and common extensions).
const SQLITE: &[&str] = &[
    "load_extension",
    "readfile",
    "writefile",
    "edit",
    "fts3_tokenizer",
    "sqlite_dbpage",
    "zipfile",
];

/// Why a function is refused, when it is.
pub(crate) fn forbidden(dialect: Dialect, name: &str) -> bool {
    let name = name
        .rsplit('.')
        .next()
        .unwrap_or(name)
        .trim_matches(['"', '`'])
        .to_ascii_lowercase();
    let list = match dialect {
        Dialect::Postgres => POSTGRES,
        Dialect::Mysql => MYSQL,
        Dialect::Sqlite => SQLITE,
    };
    // Sleeping and reading files are refused whatever the dialect says it is.
    list.contains(&name.as_str())
        || [
            "pg_sleep",
            "sleep",
            "benchmark",
            "load_file",
            "load_extension",
            "pg_read_file",
        ]
        .contains(&name.as_str())
}
