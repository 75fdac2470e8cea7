//! Idempotent writes keyed by run id, call id, tool and a hash of the canonical arguments, on every engine: a
//! retry is replayed without writing, and a call id reused by another tool or with other arguments is refused
//! with a message for the model and a diagnostic for the operator, and writes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::sync::Arc;

use serde_json::json;
use support::*;

const EXPENSE: &str = "SELECT COUNT(*) FROM expenses WHERE description = 'Keyed coffee'";

#[tokio::test]
async fn a_retry_is_replayed_even_with_its_arguments_reordered_or_renumbered() {
    for (engine, db) in all_demos().await {
        let tools = toolbox(db.clone()).await;
        let first = call_as(&tools, "run-1", "c1", "add_expense", &json!({"description": "Keyed coffee", "net_amount": 5, "tax_rate": 0.2, "date": "2026-11-21"}))
            .await
            .unwrap();
        // The same call as a model would retry it: other key order, 5.0 for 5, an explicit null for an absent
        // parameter.
        let again = call_as(&tools, "run-1", "c1", "add_expense", &json!({"date": "2026-11-21", "tax_rate": 0.20, "category": null, "net_amount": 5.0, "description": "Keyed coffee"}))
            .await
            .unwrap();
        assert_eq!(
            (&first.content, &first.data),
            (&again.content, &again.data),
            "{engine}"
        );
        assert_eq!(count(&db, EXPENSE).await, 1, "{engine}");
        assert_eq!(
            count(&db, "SELECT COUNT(*) FROM audit_log WHERE call_id = 'c1'").await,
            1,
            "{engine}"
        );
        let key = rows(
            &db,
            "SELECT run_id, call_id, tool, arguments_hash, arguments FROM tool_calls",
        )
        .await;
        assert_eq!(key.len(), 1, "{engine}");
        assert_eq!(
            &key[0][..3],
            [json!("run-1"), json!("c1"), json!("add_expense")],
            "{engine}"
        );
        let hash = key[0][3].as_str().unwrap();
        assert!(
            hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()),
            "{engine}: {hash}"
        );
        assert_eq!(
            key[0][4],
            json!(
                r#"{"date":"2026-11-21","description":"Keyed coffee","net_amount":5,"tax_rate":0.2}"#
            ),
            "{engine}"
        );
        // The same call id in another run is another call.
        call_as(&tools, "run-2", "c1", "add_expense", &json!({"description": "Keyed coffee", "net_amount": 5, "tax_rate": 0.2, "date": "2026-11-21"}))
            .await
            .unwrap();
        assert_eq!(count(&db, EXPENSE).await, 2, "{engine}");
    }
}

#[tokio::test]
async fn a_call_id_reused_by_another_tool_is_refused_and_writes_nothing() {
    for (engine, db) in all_demos().await {
        let tools = toolbox(db.clone()).await;
        call_as(&tools, "run", "c1", "add_expense", &json!({"description": "Keyed coffee", "net_amount": 5, "tax_rate": 0.2, "date": "2026-11-21"}))
            .await
            .unwrap();
        let projects = count(&db, "SELECT COUNT(*) FROM projects").await;
        let err = call_as(
            &tools,
            "run",
            "c1",
            "create_project",
            &json!({"name": "Keyed project"}),
        )
        .await
        .unwrap_err();
        assert_eq!(
            err.message,
            "Call id c1 was already used by add_expense; use a new call id for this create_project call.",
            "{engine}"
        );
        let diagnostic = err.diagnostic.unwrap();
        assert!(
            diagnostic.starts_with(
                "run run: call id c1 is recorded for add_expense with arguments {\"date\""
            ) && diagnostic.contains(
                "this call is create_project with arguments {\"name\":\"Keyed project\"}"
            ) && diagnostic.ends_with("nothing was written"),
            "{engine}: {diagnostic}"
        );
        assert_eq!(
            count(&db, "SELECT COUNT(*) FROM projects").await,
            projects,
            "{engine}"
        );
        assert_eq!(
            count(&db, "SELECT COUNT(*) FROM audit_log").await,
            1,
            "{engine}"
        );
        assert_eq!(
            count(&db, "SELECT COUNT(*) FROM tool_calls").await,
            1,
            "{engine}"
        );
        // The first call's result is still what a retry of it gets.
        let again = call_as(&tools, "run", "c1", "add_expense", &json!({"description": "Keyed coffee", "net_amount": 5, "tax_rate": 0.2, "date": "2026-11-21"}))
            .await
            .unwrap();
        assert!(
            again.content.starts_with("Recorded expense #"),
            "{engine}: {}",
            again.content
        );
        assert_eq!(count(&db, EXPENSE).await, 1, "{engine}");
    }
}

#[tokio::test]
async fn a_call_id_reused_with_other_arguments_is_refused_and_writes_nothing() {
    for (engine, db) in all_demos().await {
        let tools = toolbox(db.clone()).await;
        call_as(&tools, "run", "c1", "add_expense", &json!({"description": "Keyed coffee", "net_amount": 5, "tax_rate": 0.2, "date": "2026-11-21"}))
            .await
            .unwrap();
        let err = call_as(&tools, "run", "c1", "add_expense", &json!({"description": "Keyed coffee", "net_amount": 6, "tax_rate": 0.2, "date": "2026-11-21"}))
            .await
            .unwrap_err();
        assert_eq!(
            err.message,
            "Call id c1 was already used by add_expense with other arguments; use a new call id.",
            "{engine}"
        );
        assert_eq!(count(&db, EXPENSE).await, 1, "{engine}");
        assert_eq!(
            count(&db, "SELECT COUNT(*) FROM audit_log").await,
            1,
            "{engine}"
        );
        // Task writes too: moving another task under a used id moves nothing.
        call_as(
            &tools,
            "run",
            "m1",
            "move_task",
            &json!({"task_id": 1, "project_id": 1}),
        )
        .await
        .unwrap();
        let err = call_as(
            &tools,
            "run",
            "m1",
            "move_task",
            &json!({"task_id": 2, "project_id": 1}),
        )
        .await
        .unwrap_err();
        assert_eq!(
            err.message,
            "Call id m1 was already used by move_task with other arguments; use a new call id."
        );
        assert_eq!(
            count(
                &db,
                "SELECT COUNT(*) FROM tasks WHERE id = 2 AND project_id IS NULL"
            )
            .await,
            1,
            "{engine}"
        );
        assert_eq!(
            count(&db, "SELECT COUNT(*) FROM audit_log").await,
            2,
            "{engine}"
        );
    }
}

#[tokio::test]
async fn concurrent_duplicates_write_once() {
    for (engine, db) in all_demos().await {
        let tools = Arc::new(toolbox(db.clone()).await);
        let args = json!({"description": "Keyed coffee", "gross_amount": 3.5, "tax_rate": 0.07, "date": "2026-11-21"});
        let calls: Vec<_> = (0..4)
            .map(|_| {
                let (tools, args) = (tools.clone(), args.clone());
                tokio::spawn(
                    async move { call_as(&tools, "run", "same", "add_expense", &args).await },
                )
            })
            .collect();
        let mut contents = Vec::new();
        for call in calls {
            contents.push(
                call.await
                    .unwrap()
                    .map(|o| o.content)
                    .map_err(|e| format!("{} ({:?})", e.message, e.diagnostic)),
            );
        }
        assert!(
            contents.iter().all(|c| c == &contents[0] && c.is_ok()),
            "{engine}: {contents:?}"
        );
        assert_eq!(count(&db, EXPENSE).await, 1, "{engine}");
        assert_eq!(
            count(&db, "SELECT COUNT(*) FROM audit_log").await,
            1,
            "{engine}"
        );
        // Concurrent calls under one id with different arguments: one is written, the others are refused.
        let calls: Vec<_> = (0..4)
            .map(|i| {
                let tools = tools.clone();
                let args = json!({"description": "Keyed coffee", "gross_amount": 10 + i, "tax_rate": 0.07, "date": "2026-11-21"});
                tokio::spawn(async move { call_as(&tools, "run", "raced", "add_expense", &args).await })
            })
            .collect();
        let mut outcomes = Vec::new();
        for call in calls {
            outcomes.push(
                call.await
                    .unwrap()
                    .map(|o| o.content)
                    .map_err(|e| e.message),
            );
        }
        assert_eq!(
            outcomes.iter().filter(|o| o.is_ok()).count(),
            1,
            "{engine}: {outcomes:?}"
        );
        assert!(
            outcomes.iter().filter_map(|o| o.as_ref().err()).all(|e| e == "Call id raced was already used by add_expense with other arguments; use a new call id."),
            "{engine}: {outcomes:?}"
        );
        assert_eq!(count(&db, EXPENSE).await, 2, "{engine}");
    }
}
