//! Schema migrations, embedded in the binary: numbered SQL steps, one text per engine, applied in order in one
//! transaction when a store opens. `schema_version` holds the steps applied.
//!
//! Two processes opening the same store at once are safe: on SQLite the transaction starts with
//! `BEGIN IMMEDIATE` (the second waits for the first, then finds nothing to do); on PostgreSQL a transaction
//! advisory lock does the same.

use chrono::Utc;

use super::StoreError;
use super::engine::{Arg, Pool};

/// One step of the schema.
struct Migration {
    version: i64,
    sqlite: &'static str,
    postgres: &'static str,
}

/// Every step, in order. Never edit a released step: add the next one.
const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        sqlite: include_str!("migrations/sqlite_0001_runs.sql"),
        postgres: include_str!("migrations/postgres_0001_runs.sql"),
    },
    Migration {
        version: 2,
        sqlite: include_str!("migrations/sqlite_0002_audit.sql"),
        postgres: include_str!("migrations/postgres_0002_audit.sql"),
    },
    Migration {
        version: 3,
        sqlite: include_str!("migrations/sqlite_0003_approvals.sql"),
        postgres: include_str!("migrations/postgres_0003_approvals.sql"),
    },
    Migration {
        version: 4,
        sqlite: include_str!("migrations/sqlite_0004_conversations.sql"),
        postgres: include_str!("migrations/postgres_0004_conversations.sql"),
    },
    Migration {
        version: 5,
        sqlite: include_str!("migrations/sqlite_0005_pending_taint.sql"),
        postgres: include_str!("migrations/postgres_0005_pending_taint.sql"),
    },
    Migration {
        version: 6,
        sqlite: include_str!("migrations/sqlite_0006_context.sql"),
        postgres: include_str!("migrations/postgres_0006_context.sql"),
    },
    Migration {
        version: 7,
        sqlite: include_str!("migrations/sqlite_0007_run_owner.sql"),
        postgres: include_str!("migrations/postgres_0007_run_owner.sql"),
    },
    Migration {
        version: 8,
        sqlite: include_str!("migrations/sqlite_0008_message_taint.sql"),
        postgres: include_str!("migrations/postgres_0008_message_taint.sql"),
    },
];

/// The schema version this build writes.
pub(crate) fn latest() -> i64 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// The key of the PostgreSQL advisory lock taken while migrating ("STEWARD\0" in ASCII).
const PG_LOCK_KEY: &str = "SELECT pg_advisory_xact_lock(6004253327232123904)";

const VERSION_TABLE: &str = "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL PRIMARY KEY, applied_at TEXT NOT NULL)";

/// Brings the schema up to date; fails on a schema newer than this build knows.
pub(crate) async fn migrate(pool: &Pool, shown: &str) -> Result<(), StoreError> {
    let mut tx = pool.begin().await?;
    if tx.is_postgres() {
        tx.script(PG_LOCK_KEY).await?;
    }
    tx.script(VERSION_TABLE).await?;
    let rows = tx
        .fetch("SELECT MAX(version) FROM schema_version", Vec::new())
        .await?;
    let current = match rows.first() {
        Some(row) => row.int(0)?,
        None => 0,
    };
    if current > latest() {
        return Err(StoreError::TooNew {
            url: shown.to_owned(),
            found: current,
            known: latest(),
        });
    }
    for step in MIGRATIONS.iter().filter(|m| m.version > current) {
        let sql = if tx.is_postgres() {
            step.postgres
        } else {
            step.sqlite
        };
        tx.script(sql).await.map_err(|e| {
            StoreError::Database(format!("migration {} of {shown} failed: {e}", step.version))
        })?;
        tx.execute(
            "INSERT INTO schema_version (version, applied_at) VALUES ($1, $2)",
            vec![
                Arg::Int(Some(step.version)),
                Arg::from(Utc::now().to_rfc3339()),
            ],
        )
        .await?;
    }
    tx.commit().await
}
