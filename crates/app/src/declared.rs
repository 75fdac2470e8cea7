//! Tools declared in the config (`kind: sql`, `kind: http`), built when the config loads (so a read tool
//! whose statement writes is a config error) and added to the registry.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use steward_sql::Database;

use crate::config::Config;
use crate::error::AppError;
use crate::registry::{Needs, ToolRegistry};
use crate::tools::ToolDef;

/// Builds and registers every tool of the config's `tools`; returns the names of those that write (not
/// read-only), which need approval unless a role says otherwise.
pub(crate) async fn register(
    config: &Config,
    databases: &BTreeMap<String, Arc<Database>>,
    registry: &mut ToolRegistry,
    access: &steward_sql::AccessFn,
    running: Option<&str>,
) -> Result<BTreeSet<String>, AppError> {
    let mut writes = BTreeSet::new();
    // Every store the runs may be recorded in: the one this process uses (`--store`, `STEWARD_STORE`), the
    // config's, and the default file.
    let stores: Vec<String> = running
        .map(str::to_owned)
        .into_iter()
        .chain(config.store.clone())
        .chain([format!(
            "sqlite://{}",
            crate::store::default_path().display()
        )])
        .collect();
    for (name, value) in &config.tools {
        let place = config.locate(&["tools", name]);
        let def: ToolDef = serde_yaml::from_value(value.clone())
            .map_err(|e| AppError::Config(format!("{place}: tools.{name}: {e}")))?;
        // Nothing an agent can call changes the run store (runs, audit trail, approvals).
        if let ToolDef::Sql(sql) = &def
            && sql.mode == crate::tools::SqlMode::Write
            && config
                .databases
                .get(&sql.database)
                .is_some_and(|url| stores.iter().any(|store| same_database(url, store)))
            && let Some(db) = databases.get(&sql.database)
            && let Ok(guard) = db.guard().await
            && let Ok(named) = guard.bind_named(&sql.statement)
            && let Some(table) = guard.write_table(&named.sql)
            && STORE_TABLES.contains(&table.to_ascii_lowercase().as_str())
        {
            return Err(AppError::Config(format!(
                "{place}: the tool `{name}` writes to `{table}`, a table of the run store (runs, the audit trail, \
                 approvals); no tool may change it"
            )));
        }
        let tool = def
            .build_with_access(name, databases, Some(access.clone()))
            .await
            .map_err(|e| AppError::Config(format!("{place}: {e}")))?;
        if !tool.spec().annotations.read_only {
            writes.insert(name.clone());
        }
        registry.register(name.clone(), Needs::Nothing, move |_| Ok(tool.clone()));
    }
    Ok(writes)
}

/// The run store's tables.
const STORE_TABLES: &[&str] = &[
    "runs",
    "events",
    "tool_calls",
    "audit_trail",
    "pending_runs",
    "approvals",
    "conversations",
    "conversation_messages",
    "change_sets",
    "knowledge",
    "verified_examples",
    "_sqlx_migrations",
    "schema_version",
];

/// True when two database URLs name the same database (scheme and path or authority, case, a password and a
/// trailing `/` aside; SQLite paths made absolute).
fn same_database(a: &str, b: &str) -> bool {
    database_identity(a) == database_identity(b)
}

/// What names a database whatever the spelling of its URL (scheme and path or authority, case, a password and
/// a trailing `/` aside; SQLite paths made absolute): two URLs with one identity open the same database.
pub fn database_identity(url: &str) -> String {
    let norm = |url: &str| {
        let url = steward_core::redact_url(url);
        let url = url.trim().trim_end_matches('/');
        match url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
        {
            Some(path) => {
                let path = path.split('?').next().unwrap_or(path);
                let path = std::path::Path::new(path);
                let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
                format!("sqlite:{}", absolute.display())
            }
            None if !url.contains("://") => {
                let path = std::path::Path::new(url);
                let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
                format!("sqlite:{}", absolute.display())
            }
            None => url.to_ascii_lowercase(),
        }
    };
    norm(url)
}
