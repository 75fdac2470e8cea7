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
    Migration {
        version: 9,
        sqlite: include_str!("migrations/sqlite_0009_change_sets.sql"),
        postgres: include_str!("migrations/postgres_0009_change_sets.sql"),
    },
    Migration {
        version: 10,
        sqlite: include_str!("migrations/sqlite_0010_applied_calls.sql"),
        postgres: include_str!("migrations/postgres_0010_applied_calls.sql"),
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
        tx.script(sql).await.map_err(|e| match e {
            StoreError::Database { message, source } => StoreError::Database {
                message: format!("migration {} of {shown} failed: {message}", step.version),
                source,
            },
            other => other,
        })?;
        if step.version == 8 {
            fill_message_taint(&mut tx).await?;
        }
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
