//! Schema migrations, embedded in the binary: numbered SQL steps, one text per engine, run by sqlx's migrator
//! (`_sqlx_migrations` holds the steps applied, each with the checksum of its text, so a released step that
//! was edited is refused) in one transaction when a store opens, each step in a savepoint of it.
//!
//! Two processes opening the same store at once are safe: on SQLite the transaction starts with
//! `BEGIN IMMEDIATE` (the second waits for the first, then finds nothing to do); on PostgreSQL a transaction
//! advisory lock does the same. sqlx's own lock is therefore off.
//!
//! Stores written before this migrator kept their steps in `schema_version`: opening one records those steps
//! as applied (sqlx's `skip`, with this build's checksums) and drops the old table, in the same transaction.
//! Step 8 has a data part that SQL cannot do (see [`fill_message_taint`]): the migrator runs up to step 8,
//! the data part follows in the same transaction, then the rest.

use std::borrow::Cow;

use sqlx::SqlSafeStr as _;
use sqlx::migrate::{MigrateError, Migration, MigrationType, Migrator};

use super::StoreError;
use super::engine::{Arg, MigratorStep, Pool, Tx, plain};

/// One step of the schema.
struct Step {
    version: i64,
    description: &'static str,
    sqlite: &'static str,
    postgres: &'static str,
}

/// Every step, in order. Never edit a released step: add the next one (the migrator refuses a store whose
/// applied step has another checksum).
const STEPS: &[Step] = &[
    Step {
        version: 1,
        description: "runs",
        sqlite: include_str!("migrations/sqlite_0001_runs.sql"),
        postgres: include_str!("migrations/postgres_0001_runs.sql"),
    },
    Step {
        version: 2,
        description: "audit",
        sqlite: include_str!("migrations/sqlite_0002_audit.sql"),
        postgres: include_str!("migrations/postgres_0002_audit.sql"),
    },
    Step {
        version: 3,
        description: "approvals",
        sqlite: include_str!("migrations/sqlite_0003_approvals.sql"),
        postgres: include_str!("migrations/postgres_0003_approvals.sql"),
    },
    Step {
        version: 4,
        description: "conversations",
        sqlite: include_str!("migrations/sqlite_0004_conversations.sql"),
        postgres: include_str!("migrations/postgres_0004_conversations.sql"),
    },
    Step {
        version: 5,
        description: "pending_taint",
        sqlite: include_str!("migrations/sqlite_0005_pending_taint.sql"),
        postgres: include_str!("migrations/postgres_0005_pending_taint.sql"),
    },
    Step {
        version: 6,
        description: "context",
        sqlite: include_str!("migrations/sqlite_0006_context.sql"),
        postgres: include_str!("migrations/postgres_0006_context.sql"),
    },
    Step {
        version: 7,
        description: "run_owner",
        sqlite: include_str!("migrations/sqlite_0007_run_owner.sql"),
        postgres: include_str!("migrations/postgres_0007_run_owner.sql"),
    },
    Step {
        version: 8,
        description: "message_taint",
        sqlite: include_str!("migrations/sqlite_0008_message_taint.sql"),
        postgres: include_str!("migrations/postgres_0008_message_taint.sql"),
    },
    Step {
        version: 9,
        description: "change_sets",
        sqlite: include_str!("migrations/sqlite_0009_change_sets.sql"),
        postgres: include_str!("migrations/postgres_0009_change_sets.sql"),
    },
    Step {
        version: 10,
        description: "applied_calls",
        sqlite: include_str!("migrations/sqlite_0010_applied_calls.sql"),
        postgres: include_str!("migrations/postgres_0010_applied_calls.sql"),
    },
    Step {
        version: 11,
        description: "run_database",
        sqlite: include_str!("migrations/sqlite_0011_run_database.sql"),
        postgres: include_str!("migrations/postgres_0011_run_database.sql"),
    },
    Step {
        version: 12,
        description: "knowledge",
        sqlite: include_str!("migrations/sqlite_0012_knowledge.sql"),
        postgres: include_str!("migrations/postgres_0012_knowledge.sql"),
    },
    Step {
        version: 13,
        description: "examples",
        sqlite: include_str!("migrations/sqlite_0013_examples.sql"),
        postgres: include_str!("migrations/postgres_0013_examples.sql"),
    },
];

/// The step whose data part runs in Rust after it.
const MESSAGE_TAINT: i64 = 8;

/// The schema version this build writes.
pub(crate) fn latest() -> i64 {
    STEPS.last().map_or(0, |m| m.version)
}

/// sqlx's migrator with the steps of one engine.
fn migrator(postgres: bool) -> Migrator {
    let mut migrator = Migrator::with_migrations(
        STEPS
            .iter()
            .map(|step| {
                let sql = if postgres { step.postgres } else { step.sqlite };
                Migration::new(
                    step.version,
                    Cow::Borrowed(step.description),
                    MigrationType::Simple,
                    sql.into_sql_str(),
                    false,
                )
            })
            .collect(),
    );
    // The transaction it runs in is the lock (see the module's text).
    migrator.set_locking(false);
    migrator
}

/// The key of the PostgreSQL advisory lock taken while migrating ("STEWARD\0" in ASCII).
const PG_LOCK_KEY: &str = "SELECT pg_advisory_xact_lock(6004253327232123904)";

/// Whether the table of the migrator that came before is there.
const LEGACY_TABLE_SQLITE: &str =
    "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'";
const LEGACY_TABLE_POSTGRES: &str = "SELECT COUNT(*) FROM pg_catalog.pg_tables \
     WHERE tablename = 'schema_version' AND schemaname = current_schema()";

/// Brings the schema up to date; fails on a schema newer than this build knows.
pub(crate) async fn migrate(pool: &Pool, shown: &str) -> Result<(), StoreError> {
    let mut tx = pool.begin().await?;
    let postgres = tx.is_postgres();
    if postgres {
        tx.script(PG_LOCK_KEY).await?;
    }
    let migrator = migrator(postgres);
    let failed = |e| migrate_error(e, shown);
    tx.migrator(&migrator, MigratorStep::Ensure)
        .await
        .map_err(failed)?;
    if let Some(earlier) = legacy_version(&mut tx).await? {
        too_new(earlier, shown)?;
        tx.migrator(&migrator, MigratorStep::Skip(earlier))
            .await
            .map_err(failed)?;
        tx.script("DROP TABLE schema_version").await?;
    }
    let rows = tx
        .fetch("SELECT MAX(version) FROM _sqlx_migrations", Vec::new())
        .await?;
    let current = match rows.first() {
        Some(row) => row.int(0)?,
        None => 0,
    };
    too_new(current, shown)?;
    if current < MESSAGE_TAINT {
        tx.migrator(&migrator, MigratorStep::RunTo(MESSAGE_TAINT))
            .await
            .map_err(failed)?;
        fill_message_taint(&mut tx).await?;
    }
    tx.migrator(&migrator, MigratorStep::RunTo(latest()))
        .await
        .map_err(failed)?;
    tx.commit().await
}

/// The version a store written by the earlier migrator reached, when it is one.
async fn legacy_version(tx: &mut Tx) -> Result<Option<i64>, StoreError> {
    let exists = if tx.is_postgres() {
        LEGACY_TABLE_POSTGRES
    } else {
        LEGACY_TABLE_SQLITE
    };
    let rows = tx.fetch(exists, Vec::new()).await?;
    if rows.first().map(|row| row.int(0)).transpose()?.unwrap_or(0) == 0 {
        return Ok(None);
    }
    let rows = tx
        .fetch("SELECT MAX(version) FROM schema_version", Vec::new())
        .await?;
    Ok(Some(match rows.first() {
        Some(row) => row.int(0)?,
        None => 0,
    }))
}

fn too_new(found: i64, shown: &str) -> Result<(), StoreError> {
    if found > latest() {
        return Err(StoreError::TooNew {
            url: shown.to_owned(),
            found,
            known: latest(),
        });
    }
    Ok(())
}

/// The migrator's error, said of the store (`shown`).
fn migrate_error(e: MigrateError, shown: &str) -> StoreError {
    let (message, source) = match e {
        MigrateError::ExecuteMigration(e, version) => (
            format!("migration {version} of {shown} failed: {}", plain(&e)),
            Some(e),
        ),
        MigrateError::Execute(e) => (format!("migrating {shown} failed: {}", plain(&e)), Some(e)),
        MigrateError::VersionMismatch(version) => (
            format!(
                "step {version} of the schema of {shown} is not the one this steward ships (its checksum in \
                 _sqlx_migrations differs): the store was made by a build whose step {version} was edited; \
                 use the steward that made it, or a new store"
            ),
            None,
        ),
        MigrateError::Dirty(version) => (
            format!(
                "step {version} of the schema of {shown} is marked as failed half-way in _sqlx_migrations; \
                 restore the store from a backup"
            ),
            None,
        ),
        other => (format!("migrating {shown} failed: {other}"), None),
    };
    StoreError::Database {
        message,
        source: source.map(std::sync::Arc::new),
    }
}

/// Step 8's data: each assistant message written before gets the tool that tainted its turn from the events it
/// kept (the first event object with a `tainted_by` text), as the server found it before by reading them back.
/// Parsed here rather than in SQL: PostgreSQL's `jsonb` refuses text that JSON allows (`\u0000`), and events
/// that do not parse (never written by Steward) are left without, as they were read before.
async fn fill_message_taint(tx: &mut super::engine::Tx) -> Result<(), StoreError> {
    let rows = tx
        .fetch(
            "SELECT conversation_id, seq, events FROM conversation_messages \
             WHERE events LIKE '%tainted_by%' AND tainted_by IS NULL",
            Vec::new(),
        )
        .await?;
    for row in rows {
        let Some(tool) = row.text(2)?.as_deref().and_then(taint_in) else {
            continue;
        };
        tx.execute(
            "UPDATE conversation_messages SET tainted_by = $1 WHERE conversation_id = $2 AND seq = $3",
            vec![Arg::from(tool), Arg::from(row.string(0)?), Arg::Int(Some(row.int(1)?))],
        )
        .await?;
    }
    Ok(())
}

/// The first `tainted_by` text among a message's events (a JSON array of event objects).
fn taint_in(events: &str) -> Option<String> {
    let events: serde_json::Value = serde_json::from_str(events).ok()?;
    events.as_array()?.iter().find_map(|event| {
        event
            .get("tainted_by")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    })
}

#[cfg(test)]
mod tests {
    use super::taint_in;

    #[test]
    fn the_taint_of_a_message_is_read_from_its_events_whatever_they_hold() {
        let answer = r#"[{"type":"tool_result","tool":"http_get"},{"type":"answer","content":"a\u0000b \"q\" \\","tainted_by":"http_get"}]"#;
        assert_eq!(taint_in(answer).as_deref(), Some("http_get"));
        for none in [
            "not json",
            r#"{"tainted_by":"x"}"#,
            r#"["tainted_by",{"type":"answer"}]"#,
            r#""tainted_by""#,
            r#"[{"tainted_by":5}]"#,
            r#"[{"nested":{"tainted_by":"x"}}]"#,
            r#"[{"type":"answer"}]"#,
        ] {
            assert_eq!(taint_in(none), None, "{none}");
        }
        assert_eq!(
            taint_in(r#"["x",{"tainted_by":"list_expenses"}]"#).as_deref(),
            Some("list_expenses")
        );
    }
}
