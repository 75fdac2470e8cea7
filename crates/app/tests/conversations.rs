//! Conversations and leases in the run store, on SQLite and PostgreSQL: one turn at a time, a turn ends only
//! under its own lease, a lease that ran out is reaped once, and a waiting run is resumed by exactly one taker.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use chrono::{Duration, Utc};
use common::*;
use serde_json::json;
use steward_app::store::{Deleted, Reply, RunStore, TurnRefused};
use steward_core::{Agent, ApprovalRequest, Principal, ToolCall, Toolbox};

async fn leases_hold(store: RunStore) {
    let soon = Utc::now() + Duration::seconds(30);
    let c = store
        .create_conversation(&unique(), "ada", "", "assistant", &json!({}))
        .await
        .unwrap();
    assert_eq!(
        store
            .begin_turn(&c.id, "one", "run-1", "a", soon)
            .await
            .unwrap(),
        Ok(())
    );
    // One turn at a time, from any server.
    assert_eq!(
        store
            .begin_turn(&c.id, "two", "run-2", "b", soon)
            .await
            .unwrap(),
        Err(TurnRefused::Busy)
    );
    assert_eq!(
        store.delete_conversation(&c.id).await.unwrap(),
        Deleted::Busy
    );
    // Only the lease holder, for its own run, renews or ends it.
    assert!(!store.renew_lease(&c.id, "b", "run-1", soon).await.unwrap());
    assert!(!store.renew_lease(&c.id, "a", "run-2", soon).await.unwrap());
    assert!(store.renew_lease(&c.id, "a", "run-1", soon).await.unwrap());
    assert!(
        !store
            .end_turn(&c.id, "a", "run-2", "idle", None)
            .await
            .unwrap()
    );
    assert!(
        store
            .end_turn(
                &c.id,
                "a",
                "run-1",
                "idle",
                Some(Reply {
                    content: "answer one",
                    events: &json!([]),
                    tainted_by: Some("http_get"),
                })
            )
            .await
            .unwrap()
    );
    // A lease that ran out is reaped once; its server can then end nothing.
    let past = Utc::now() - Duration::seconds(1);
    assert_eq!(
        store
            .begin_turn(&c.id, "two", "run-2", "b", past)
            .await
            .unwrap(),
        Ok(())
    );
    // Its own server still drives it (the store was out when it should have renewed): not reaped there.
    assert!(
        store
            .reap_expired(Utc::now(), "b")
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .reap_expired(Utc::now(), "another-server")
            .await
            .unwrap(),
        vec![c.id.clone()]
    );
    assert!(
        store
            .reap_expired(Utc::now(), "another-server")
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        !store
            .end_turn(
                &c.id,
                "b",
                "run-2",
                "idle",
                Some(Reply {
                    content: "late",
                    events: &json!([]),
                    tainted_by: None,
                })
            )
            .await
            .unwrap()
    );
    let messages = store.conversation_messages(&c.id).await.unwrap();
    let roles: Vec<&str> = messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
    assert!(messages[3].content.contains("stopped before it finished"));
    // The answer that read outside data says so in its own column (the next turn starts tainted from it).
    let taints: Vec<Option<&str>> = messages.iter().map(|m| m.tainted_by.as_deref()).collect();
    assert_eq!(taints, [None, Some("http_get"), None, None]);
    assert_eq!(store.conversation(&c.id).await.unwrap().status, "failed");
    // A failed conversation takes the next message.
    assert_eq!(
        store
            .begin_turn(&c.id, "three", "run-3", "b", soon)
            .await
            .unwrap(),
        Ok(())
    );
}

async fn one_taker_resumes(store: RunStore) {
    let agent = Agent::new("helper", "", Toolbox::new());
    let run = agent.start_with_id("hi", steward_core::Run::generate_id());
    let request = ApprovalRequest {
        call: ToolCall::new("c1", "add_expense", "{}"),
        reason: "needs approval".into(),
    };
    store
        .save_pending(
            &run,
            "helper",
            &Principal::named("ada"),
            std::slice::from_ref(&request),
            &[None],
            Some("run_sql"),
            &Default::default(),
        )
        .await
        .unwrap();
    let first = store.pending_run(run.id()).await.unwrap();
    assert_eq!(first.tainted_by.as_deref(), Some("run_sql"));
    // A run saved before runs kept their taint (only its row says it) comes back tainted.
    assert_eq!(run.tainted_by(), None);
    assert_eq!(first.run.tainted_by(), Some("run_sql"));
    // Saved again (the run waits again after a resume): a taker that read the first save gets nothing.
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    store
        .save_pending(
            &run,
            "helper",
            &Principal::named("ada"),
            &[request],
            &[None],
            None,
            &Default::default(),
        )
        .await
        .unwrap();
    assert!(!store.claim_resume(run.id(), first.saved_at).await.unwrap());
    let second = store.pending_run(run.id()).await.unwrap();
    let (a, b) = tokio::join!(
        store.claim_resume(run.id(), second.saved_at),
        store.claim_resume(run.id(), second.saved_at)
    );
    assert_eq!([a.unwrap(), b.unwrap()].iter().filter(|t| **t).count(), 1);
}

#[tokio::test]
async fn leases_hold_on_sqlite() {
    leases_hold(RunStore::open(Some(&sqlite_url())).await.unwrap()).await;
    one_taker_resumes(RunStore::open(Some(&sqlite_url())).await.unwrap()).await;
}

#[tokio::test]
async fn leases_hold_on_postgres() {
    let Some(url) = pg_url().await else { return };
    leases_hold(RunStore::open(Some(&url)).await.unwrap()).await;
    one_taker_resumes(RunStore::open(Some(&url)).await.unwrap()).await;
}

/// A store written before messages kept their taint in a column: upgrading fills it from the events each
/// message kept, so a conversation that read outside data still makes its next turn's writes wait.
async fn upgrade_fills_the_taint_of_earlier_messages(url: &str, undo: &[&'static str]) {
    let store = RunStore::open(Some(url)).await.unwrap();
    let c = store
        .create_conversation(&unique(), "ada", "", "assistant", &json!({}))
        .await
        .unwrap();
    let soon = Utc::now() + Duration::seconds(30);
    let events = json!([
        {"type": "tool_result", "run_id": "r1", "tool": "http_get"},
        {"type": "answer", "run_id": "r1", "outcome": "answered", "content": "it's 'odd' \\ \"x\"",
         "tainted_by": "http_get"}
    ]);
    for (i, (events, tainted_by)) in [(json!([]), None), (events, Some("http_get"))]
        .iter()
        .enumerate()
    {
        let run = format!("run-{i}");
        store
            .begin_turn(&c.id, "q", &run, "a", soon)
            .await
            .unwrap()
            .unwrap();
        let reply = Reply {
            content: "a",
            events,
            tainted_by: *tainted_by,
        };
        assert!(
            store
                .end_turn(&c.id, "a", &run, "idle", Some(reply))
                .await
                .unwrap()
        );
    }
    store.close().await;
    // Back to the schema before step 8, the column gone.
    {
        use sqlx::Connection as _;
        if url.starts_with("sqlite:") {
            let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
            for &sql in undo {
                sqlx::query(sql).execute(&mut conn).await.unwrap();
            }
        } else {
            let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
            for &sql in undo {
                sqlx::query(sql).execute(&mut conn).await.unwrap();
            }
        }
    }
    // Events PostgreSQL's jsonb refuses (an escaped NUL), and events Steward never writes (not an array of
    // events): the upgrade goes through, and reads the first as it did before and the others as untainted.
    let odd = [
        (
            5,
            r#"[{"type":"answer","content":"a\u0000b","tainted_by":"list_expenses"}]"#,
        ),
        (6, r#"{"tainted_by":"x"}"#),
        (7, r#"["tainted_by",{"type":"answer"}]"#),
    ];
    {
        use sqlx::Connection as _;
        let insert = "INSERT INTO conversation_messages (conversation_id, seq, role, content, events, at) \
                      VALUES ($1, $2, 'assistant', 'a', $3, $4)";
        let at = Utc::now();
        if url.starts_with("sqlite:") {
            let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
            for (seq, events) in odd {
                sqlx::query(insert)
                    .bind(&c.id)
                    .bind(seq)
                    .bind(events)
                    .bind(at.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string())
                    .execute(&mut conn)
                    .await
                    .unwrap();
            }
        } else {
            let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
            for (seq, events) in odd {
                sqlx::query(insert)
                    .bind(&c.id)
                    .bind(i64::from(seq))
                    .bind(events)
                    .bind(at)
                    .execute(&mut conn)
                    .await
                    .unwrap();
            }
        }
    }
    let store = RunStore::open(Some(url)).await.unwrap();
    let messages = store.conversation_messages(&c.id).await.unwrap();
    let taints: Vec<Option<&str>> = messages.iter().map(|m| m.tainted_by.as_deref()).collect();
    assert_eq!(
        taints,
        [
            None,
            None,
            None,
            Some("http_get"),
            Some("list_expenses"),
            None,
            None
        ]
    );
    store.close().await;
}

/// Back to the schema before step 8 (and the steps after it).
const UNDO_STEP_8: &[&str] = &[
    "DELETE FROM _sqlx_migrations WHERE version = 13",
    "DROP TABLE verified_examples",
    "DELETE FROM _sqlx_migrations WHERE version = 12",
    "DROP TABLE knowledge",
    "DELETE FROM _sqlx_migrations WHERE version = 11",
    "ALTER TABLE runs DROP COLUMN database",
    "DELETE FROM _sqlx_migrations WHERE version = 10",
    "DROP TABLE change_sets",
    "DELETE FROM _sqlx_migrations WHERE version = 9",
    "ALTER TABLE conversation_messages DROP COLUMN tainted_by",
    "DELETE FROM _sqlx_migrations WHERE version = 8",
];

/// Back to the schema before step 8, as the migrator before sqlx's recorded it (in `schema_version`).
const LEGACY_BEFORE_STEP_8: &[&str] = &[
    "DROP TABLE verified_examples",
    "DROP TABLE knowledge",
    "ALTER TABLE runs DROP COLUMN database",
    "DROP TABLE change_sets",
    "ALTER TABLE conversation_messages DROP COLUMN tainted_by",
    "DROP TABLE _sqlx_migrations",
    "CREATE TABLE schema_version (version BIGINT NOT NULL PRIMARY KEY, applied_at TEXT NOT NULL)",
    "INSERT INTO schema_version VALUES (1, 'then'), (2, 'then'), (3, 'then'), (4, 'then'), (5, 'then'), \
     (6, 'then'), (7, 'then')",
];

#[tokio::test]
async fn upgrade_fills_message_taint_on_sqlite() {
    upgrade_fills_the_taint_of_earlier_messages(&sqlite_url(), UNDO_STEP_8).await;
    upgrade_fills_the_taint_of_earlier_messages(&sqlite_url(), LEGACY_BEFORE_STEP_8).await;
}

#[tokio::test]
async fn upgrade_fills_message_taint_on_postgres() {
    let Some(url) = pg_url().await else { return };
    upgrade_fills_the_taint_of_earlier_messages(&url, UNDO_STEP_8).await;
    let Some(url) = pg_url().await else { return };
    upgrade_fills_the_taint_of_earlier_messages(&url, LEGACY_BEFORE_STEP_8).await;
}
