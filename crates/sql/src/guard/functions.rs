//! The static function policy: families of functions a read-only query must not call, on any engine (a name
//! refused on one engine is refused on all, so a guard set to the wrong dialect still refuses it). Names are
//! matched on their last part, decoded and case-insensitively, so `pg_catalog.PG_SLEEP` and
//! `U&"pg\005fsleep"` are caught. A rule ending in `*` matches a prefix. On PostgreSQL the engine's own
//! catalog adds to these rules (see `catalog.rs`).

/// Why a family of functions is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    /// Reads or writes files or runs programs on the server.
    Files,
    /// Reaches other servers.
    Network,
    /// Sleeps or waits.
    Sleep,
    /// Takes or releases locks.
    Locks,
    /// Controls the server, replication or other sessions.
    Admin,
    /// Changes settings or session state.
    Settings,
    /// Writes: sequences, transaction ids, notifications, statistics resets.
    SideEffects,
    /// Runs SQL given as a string, which the guard cannot check.
    QueryText,
    /// Reads or writes large objects.
    LargeObjects,
    /// Loads code into the server.
    Extensions,
    /// Reads other sessions' queries, credentials or the server's configuration files (allowed only when
    /// sensitive catalogs are).
    Sensitive,
    /// Allocates memory in proportion to its argument (`randomblob`, `zeroblob`): allowed with a small literal.
    Memory,
}

impl Family {
    /// What the model is told.
    pub(crate) fn why(self) -> &'static str {
        match self {
            Self::Files => "it reads or writes files (or runs programs) on the database server",
            Self::Network => "it connects to other servers",
            Self::Sleep => "it sleeps or waits",
            Self::Locks => "it takes or releases locks",
            Self::Admin => "it controls the server, replication or other sessions",
            Self::Settings => "it changes settings or session state",
            Self::SideEffects => {
                "it has side effects (sequences, transaction ids, notifications, statistics)"
            }
            Self::QueryText => "it runs SQL given as a string, which cannot be checked",
            Self::LargeObjects => "it reads or writes large objects",
            Self::Extensions => "it loads code into the database server",
            Self::Sensitive => {
                "it reads other sessions' queries, credentials or the server's configuration"
            }
            Self::Memory => {
                "with a large or computed size it can exhaust the server's memory; use a literal of at most 1000000"
            }
        }
    }
}

use Family::*;

/// Exact names, sorted (checked by a test) for binary search.
const EXACT: &[(&str, Family)] = &[
    ("benchmark", Sleep),
    ("connectby", QueryText),
    ("cursor_to_xml", QueryText),
    ("cursor_to_xmlschema", QueryText),
    ("database_to_xml", QueryText),
    ("database_to_xml_and_xmlschema", QueryText),
    ("database_to_xmlschema", QueryText),
    ("edit", Files),
    ("fsdir", Files),
    ("fts3_tokenizer", Extensions),
    ("get_lock", Locks),
    ("gin_clean_pending_list", SideEffects),
    ("is_free_lock", Locks),
    ("is_used_lock", Locks),
    ("load_extension", Extensions),
    ("load_file", Files),
    ("loread", LargeObjects),
    ("lowrite", LargeObjects),
    ("master_gtid_wait", Sleep),
    ("master_pos_wait", Sleep),
    ("nextval", SideEffects),
    ("query_to_xml", QueryText),
    ("query_to_xml_and_xmlschema", QueryText),
    ("query_to_xmlschema", QueryText),
    ("randomblob", Memory),
    ("readfile", Files),
    ("release_all_locks", Locks),
    ("release_lock", Locks),
    ("schema_to_xml", QueryText),
    ("schema_to_xml_and_xmlschema", QueryText),
    ("schema_to_xmlschema", QueryText),
    ("set_config", Settings),
    ("setseed", Settings),
    ("setval", SideEffects),
    ("sleep", Sleep),
    ("source_pos_wait", Sleep),
    ("sqlite_dbpage", Files),
    ("table_to_xml", QueryText),
    ("table_to_xml_and_xmlschema", QueryText),
    ("table_to_xmlschema", QueryText),
    ("ts_rewrite", QueryText),
    ("ts_stat", QueryText),
    ("txid_current", SideEffects),
    ("txid_current_if_assigned", SideEffects),
    ("wait_for_executed_gtid_set", Sleep),
    ("wait_until_sql_thread_after_gtids", Sleep),
    ("writefile", Files),
    ("xpath_table", QueryText),
    ("zeroblob", Memory),
    ("zipfile", Files),
];

/// Prefixes: every function whose name starts with one of these.
const PREFIXES: &[(&str, Family)] = &[
    ("binary_upgrade_", Admin),
    ("brin_desummarize", SideEffects),
    ("brin_summarize", SideEffects),
    ("crosstab", QueryText),
    ("dblink", Network),
    ("lo_", LargeObjects),
    ("pg_advisory_", Locks),
    ("pg_backup_", Admin),
    ("pg_cancel_backend", Admin),
    ("pg_copy_", Admin),
    ("pg_create_", Admin),
    ("pg_current_logfile", Sensitive),
    ("pg_current_xact_id", SideEffects),
    ("pg_drop_replication_slot", Admin),
    ("pg_export_snapshot", Admin),
    ("pg_extension_config_dump", Admin),
    ("pg_file_", Files),
    ("pg_get_backend_memory_contexts", Sensitive),
    ("pg_hba_file_rules", Sensitive),
    ("pg_ident_file_mappings", Sensitive),
    ("pg_import_system_collations", Admin),
    ("pg_lock_status", Sensitive),
    ("pg_log_backend_memory_contexts", Admin),
    ("pg_logdir_ls", Files),
    ("pg_logical_", Admin),
    ("pg_ls_", Files),
    ("pg_nextoid", SideEffects),
    ("pg_notify", SideEffects),
    ("pg_prepared_xact", Sensitive),
    ("pg_promote", Admin),
    ("pg_read_", Files),
    ("pg_reload_conf", Admin),
    ("pg_replication_", Admin),
    ("pg_rotate_logfile", Admin),
    ("pg_show_all_file_settings", Sensitive),
    ("pg_sleep", Sleep),
    ("pg_start_backup", Admin),
    ("pg_stat_clear_snapshot", SideEffects),
    ("pg_stat_file", Files),
    ("pg_stat_force_next_flush", SideEffects),
    ("pg_stat_get_activity", Sensitive),
    ("pg_stat_get_backend_", Sensitive),
    ("pg_stat_reset", SideEffects),
    ("pg_stat_statements", Sensitive),
    ("pg_stop_backup", Admin),
    ("pg_switch_wal", Admin),
    ("pg_terminate_backend", Admin),
    ("pg_try_advisory_", Locks),
    ("pg_wal_", Admin),
    ("sys_", Files),
];

/// The family a function name belongs to, if it is refused by the static rules. `name` is the last part of
/// the name, decoded; any case.
pub(crate) fn family(name: &str) -> Option<Family> {
    // Lowercase into a buffer on the stack: this runs for every function call of every query.
    let mut buffer = [0u8; 64];
    let lower = match buffer.get_mut(..name.len()) {
        Some(slot) => {
            slot.copy_from_slice(name.as_bytes());
            slot.make_ascii_lowercase();
            std::str::from_utf8(slot).ok()?
        }
        // No refused name is that long.
        None => return None,
    };
    if let Ok(i) = EXACT.binary_search_by(|(n, _)| (*n).cmp(lower)) {
        return EXACT.get(i).map(|(_, f)| *f);
    }
    PREFIXES
        .iter()
        .find(|(p, _)| lower.starts_with(p))
        .map(|(_, f)| *f)
}

/// The largest literal `randomblob`/`zeroblob` may take.
pub(crate) const MAX_BLOB: u64 = 1_000_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_names_are_sorted_and_lowercase() {
        for pair in EXACT.windows(2) {
            if let [a, b] = pair {
                assert!(a.0 < b.0, "{} before {}", a.0, b.0);
            }
        }
        for (n, _) in EXACT.iter().chain(PREFIXES) {
            assert_eq!(*n, n.to_ascii_lowercase());
        }
    }

    #[test]
    fn families_by_name_and_prefix() {
        assert_eq!(family("PG_SLEEP"), Some(Sleep));
        assert_eq!(family("pg_sleep_for"), Some(Sleep));
        assert_eq!(family("pg_stat_reset_shared"), Some(SideEffects));
        assert_eq!(family("lo_import"), Some(LargeObjects));
        assert_eq!(family("dblink_exec"), Some(Network));
        assert_eq!(family("LOAD_FILE"), Some(Files));
        assert_eq!(family("ts_stat"), Some(QueryText));
        assert_eq!(family("lower"), None);
        assert_eq!(family("pg_stat_get_numscans"), None);
        assert_eq!(family("sleepy"), None);
        assert_eq!(family("lower_bound"), None);
    }
}
