//! Order and task tools on the demo data: happy paths and every refusal; the task writes on every engine.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use serde_json::json;
use steward_domains::demo::IN_TRANSIT_ORDER;
use support::*;

#[tokio::test]
async fn get_order_shows_status_eta_shipment_items_and_customer() {
    let db = sqlite_demo().await;
    let tools = toolbox(db.clone()).await;
    let out = call(
        &tools,
        "o1",
        "get_order",
        json!({"order_code": IN_TRANSIT_ORDER}),
    )
    .await
    .unwrap();
    let text = out.content;
    assert!(text.starts_with("Order QZKDLWPRTM: IN TRANSIT. Ordered on 2026-11-18 by Ada Lovelace <ada.lovelace@example.com>"), "{text}");
    assert!(
        text.contains("estimated delivery (ETA) 2026-11-23; last seen: Leipzig hub."),
        "{text}"
    );
    assert!(text.contains("- 1 × Espresso machine at"), "{text}");
    let delivered = rows(
        &db,
        "SELECT order_code FROM orders WHERE status = 'DELIVERED' ORDER BY id LIMIT 1",
    )
    .await;
    let out = call(
        &tools,
        "o2",
        "get_order",
        json!({"order_code": delivered[0][0]}),
    )
    .await
    .unwrap();
    assert!(
        out.content.contains("DELIVERED") && out.content.contains("Delivered on"),
        "{}",
        out.content
    );
    let err = call(
        &tools,
        "o3",
        "get_order",
        json!({"order_code": "ABCDEFGHIJ"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.starts_with("There is no order with code ABCDEFGHIJ."),
        "{err}"
    );
    let err = call(
        &tools,
        "o4",
        "get_order",
        json!({"order_code": "qzkdlwprtm"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("does not match the pattern ^[A-Z]{10}$"),
        "{err}"
    );
    let err = call(
        &tools,
        "o5",
        "get_order",
        json!({"order_number": "QZKDLWPRTM"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("unknown field `order_number`. The fields are: order_code"),
        "{err}"
    );
}

#[tokio::test]
async fn find_orders_pages_and_order_stats() {
    let db = sqlite_demo().await;
    let tools = toolbox(db.clone()).await;
    let out = call(
        &tools,
        "f1",
        "find_orders",
        json!({"customer": "ada.lovelace", "page_size": 2}),
    )
    .await
    .unwrap();
    let first = out.content.lines().next().unwrap().to_owned();
    assert!(first.starts_with("Orders 1–2 of "), "{first}");
    assert!(
        out.content
            .lines()
            .skip(1)
            .all(|l| l.contains("<ada.lovelace")),
        "{}",
        out.content
    );
    let out = call(
        &tools,
        "f2",
        "find_orders",
        json!({"status": "IN TRANSIT", "page": 1, "page_size": 25}),
    )
    .await
    .unwrap();
    assert!(
        out.content
            .lines()
            .skip(1)
            .all(|l| l.contains(" IN TRANSIT ")),
        "{}",
        out.content
    );
    let out = call(
        &tools,
        "f3",
        "find_orders",
        json!({"customer": "nobody-at-all"}),
    )
    .await
    .unwrap();
    assert_eq!(out.content, "No orders match.");
    let err = call(&tools, "f4", "find_orders", json!({"status": "LOST"}))
        .await
        .unwrap_err();
    assert!(
        err.contains("status: \"LOST\" is not one of the allowed values"),
        "{err}"
    );
    let expected = count(
        &db,
        "SELECT COUNT(*) FROM orders WHERE status <> 'CANCELLED'",
    )
    .await;
    let out = call(&tools, "st", "order_stats", json!({})).await.unwrap();
    assert!(
        out.content.starts_with(&format!(
            "all time: {expected} orders (not cancelled), revenue "
        )),
        "{}",
        out.content
    );
    assert!(out.content.contains("Best sellers: "), "{}", out.content);
}

#[tokio::test]
async fn task_tools_read_and_refuse_with_the_tool_to_use() {
    let db = sqlite_demo().await;
    let tools = toolbox(db.clone()).await;
    let out = call(&tools, "t1", "get_inbox_tasks", json!({}))
        .await
        .unwrap();
    assert!(
        out.content.starts_with("8 tasks in the inbox:"),
        "{}",
        out.content
    );
    assert!(
        out.content.contains("#1 Buy a birthday present for Mum"),
        "{}",
        out.content
    );
    let out = call(&tools, "t2", "get_projects", json!({})).await.unwrap();
    assert!(
        out.content.starts_with("#1 Work — Everything for the job."),
        "{}",
        out.content
    );
    let err = call(&tools, "t3", "get_tasks", json!({"project_id": 99}))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        "There is no project with id 99. Call get_projects to see the valid ids."
    );
    let out = call(
        &tools,
        "t4",
        "get_tasks",
        json!({"project_id": 2, "include_done": true}),
    )
    .await
    .unwrap();
    assert!(out.content.contains("[done]"), "{}", out.content);
    let err = call(&tools, "t5", "create_project", json!({"name": "home"}))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        "A project named \"Home\" already exists (id 2). Use project_id 2 instead of creating it again."
    );
    let err = call(
        &tools,
        "t6",
        "move_task",
        json!({"task_id": 999, "project_id": 1}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err,
        "There is no task with id 999. Call get_inbox_tasks (or get_tasks for a project) to see the valid ids."
    );
    let err = call(
        &tools,
        "t7",
        "move_task",
        json!({"task_id": 1, "project_id": 999}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err,
        "There is no project with id 999. Call get_projects to see the valid ids, or create_project."
    );
    let err = call(&tools, "t8", "complete_task", json!({"task_id": 999}))
        .await
        .unwrap_err();
    assert!(err.starts_with("There is no task with id 999."), "{err}");
    assert!(tools.get("delete_task").is_none() && tools.get("delete_project").is_none());
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM audit_log").await,
        0,
        "refusals write nothing"
    );
}

#[tokio::test]
async fn task_writes_on_every_engine() {
    for (engine, db) in all_demos().await {
        let tools = toolbox(db.clone()).await;
        let out = call(
            &tools,
            "w1",
            "create_project",
            json!({"name": "Birthday", "description": "Mum's birthday"}),
        )
        .await
        .unwrap();
        assert_eq!(out.content, "Created project #5 Birthday.", "{engine}");
        let out = call(
            &tools,
            "w2",
            "move_task",
            json!({"task_id": 1, "project_id": 5}),
        )
        .await
        .unwrap();
        assert_eq!(
            out.content, "Moved task #1 \"Buy a birthday present for Mum\" to project #5 Birthday.",
            "{engine}"
        );
        let out = call(
            &tools,
            "w3",
            "add_task",
            json!({"title": "Order flowers", "project_id": 5, "due_date": "2026-11-28"}),
        )
        .await
        .unwrap();
        assert_eq!(
            out.content, "Added task #31 \"Order flowers\" to project #5, due 2026-11-28.",
            "{engine}"
        );
        let out = call(&tools, "w4", "add_task", json!({"title": "Call the bank"}))
            .await
            .unwrap();
        assert_eq!(
            out.content, "Added task #32 \"Call the bank\" to the inbox.",
            "{engine}"
        );
        let out = call(&tools, "w5", "complete_task", json!({"task_id": 31}))
            .await
            .unwrap();
        assert_eq!(
            out.content, "Task #31 \"Order flowers\" is done.",
            "{engine}"
        );
        let out = call(&tools, "w6", "complete_task", json!({"task_id": 31}))
            .await
            .unwrap();
        assert_eq!(
            out.content, "Task #31 \"Order flowers\" was already done.",
            "{engine}"
        );
        // Replays of the same calls change nothing; the same ids with other arguments are refused.
        let again = call(
            &tools,
            "w1",
            "create_project",
            json!({"description": "Mum's birthday", "name": "Birthday"}),
        )
        .await
        .unwrap();
        assert_eq!(again.content, "Created project #5 Birthday.", "{engine}");
        call(
            &tools,
            "w3",
            "add_task",
            json!({"title": "Order flowers", "project_id": 5, "due_date": "2026-11-28"}),
        )
        .await
        .unwrap();
        let err = call(&tools, "w1", "create_project", json!({"name": "Birthday"}))
            .await
            .unwrap_err();
        assert_eq!(
            err,
            "Call id w1 was already used by create_project with other arguments; use a new call id.",
            "{engine}"
        );
        assert_eq!(
            count(&db, "SELECT COUNT(*) FROM projects").await,
            5,
            "{engine}"
        );
        assert_eq!(
            count(&db, "SELECT COUNT(*) FROM tasks").await,
            32,
            "{engine}"
        );
        assert_eq!(
            count(&db, "SELECT COUNT(*) FROM tasks WHERE project_id = 5").await,
            2,
            "{engine}"
        );
        assert_eq!(
            count(&db, "SELECT COUNT(*) FROM audit_log").await,
            5,
            "{engine}"
        );
        let due = rows(&db, "SELECT due_date, status FROM tasks WHERE id = 31").await;
        assert!(
            due[0][0].as_str().unwrap().starts_with("2026-11-28"),
            "{engine}: {due:?}"
        );
        assert_eq!(due[0][1], "DONE");
    }
}
