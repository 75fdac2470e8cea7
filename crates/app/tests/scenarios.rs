//! The source material's scenarios as scripted runs through the router `assistant`: the coffee expense with the
//! gross amount derived, sorting the inbox into projects (recovering from a duplicate project), and asking when
//! an order in transit arrives.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use serde_json::json;
use steward_app::roles::unmark_data;
use steward_app::{App, AppOptions, Config};
use steward_core::{
    Event, EventLog, ModelResponse, Outcome, RunStatus, Runner, ScriptedModel, ToolCall,
};
use steward_domains::common::Clock;
use steward_domains::demo::{self, DemoConfig, IN_TRANSIT_ORDER};
use steward_sql::Database;

/// A fresh demo database in a file of its own.
async fn sqlite_demo() -> Arc<Database> {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "scenario-{}-{}.sqlite",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let _ = std::fs::remove_file(&path);
    let db = Database::connect(&format!("sqlite://{}?mode=rwc", path.display()))
        .await
        .unwrap();
    let config = DemoConfig {
        seed: 42,
        scale: 1,
        today: chrono::NaiveDate::from_ymd_opt(2026, 11, 21).unwrap(),
    };
    demo::create(&db, config, &|_, _| {}).await.unwrap();
    Arc::new(db)
}

fn calls(list: &[(&str, &str, serde_json::Value)]) -> ModelResponse {
    ModelResponse::tool_calls(
        list.iter()
            .map(|(id, name, args)| ToolCall::new(*id, *name, args.to_string()))
            .collect(),
    )
}

/// Every tool result the observer saw, as (tool, content, is_error), across the router and its sub-agents.
fn results(log: &EventLog) -> Vec<(String, String, bool)> {
    log.events()
        .into_iter()
        .filter_map(|e| match e {
            Event::ToolResult {
                tool,
                content,
                is_error,
                ..
            } => Some((tool, unmark_data(&content).to_owned(), is_error)),
            _ => None,
        })
        .collect()
}

async fn run(
    script: Vec<ModelResponse>,
    input: &str,
) -> (
    Arc<steward_sql::Database>,
    Arc<ScriptedModel>,
    EventLog,
    RunStatus,
    String,
) {
    let db = sqlite_demo().await;
    let url = db.url().to_owned();
    let app = App::build(
        Config::default(),
        AppOptions {
            db: Some(url),
            demo: None,
            clock: Clock::parse("2026-11-21T10:00:00+00:00").unwrap(),
            store: None,
        },
    )
    .await
    .unwrap();
    let model = Arc::new(ScriptedModel::new(script));
    let log = EventLog::new();
    let assistant = app
        .agent("assistant", model.clone(), Some(input), Default::default())
        .unwrap();
    let runner =
        Runner::new(Arc::new(assistant), model.clone()).with_observer(Arc::new(log.clone()));
    let (run, status) = runner.run(input).await;
    (db, model, log, status, run.id().to_owned())
}

#[tokio::test]
async fn coffee_expense_with_the_gross_amount_derived() {
    let input = "I spent $5 on a coffee today, tax rate 0.2, please track it";
    let (db, model, log, status, run_id) = run(
        vec![
            calls(&[("r1", "expenses", json!({"request": input}))]),
            calls(&[("e1", "current_date", json!({}))]),
            calls(&[("e2", "add_expense", json!({"description": "Coffee", "category": "Coffee", "net_amount": 5, "tax_rate": 0.2, "date": "2026-11-21"}))]),
            ModelResponse::text("Recorded: coffee on 2026-11-21, 5.00 net + 1.00 tax = 6.00 gross."),
            ModelResponse::text("Tracked your coffee: 6.00 including 20% tax."),
        ],
        input,
    )
    .await;
    assert_eq!(
        status,
        RunStatus::Done(Outcome::Answered {
            answer: "Tracked your coffee: 6.00 including 20% tax.".into()
        })
    );
    // The router's tools are the agents, plus the common tools.
    let requests = model.requests();
    let names: Vec<&str> = requests[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "expenses",
            "orders",
            "tasks",
            "analyst",
            "current_date",
            "calculator"
        ]
    );
    // The sub-agent got the request and its own tools.
    let sub = &requests[1];
    assert_eq!(sub.messages[1].text(), Some(input));
    assert!(sub.tools.iter().any(|t| t.name == "add_expense"));
    let results = results(&log);
    assert_eq!(results[0].0, "current_date");
    assert!(
        results[1]
            .1
            .ends_with("net 5.00, tax 20% = 1.00, gross 6.00."),
        "{:?}",
        results[1]
    );
    let stored = rows(
        &db,
        "SELECT gross_amount, spent_on FROM expenses ORDER BY id DESC LIMIT 1",
    )
    .await;
    assert_eq!(stored[0][0].as_f64(), Some(6.0));
    assert_eq!(stored[0][1], "2026-11-21");
    let audit = rows(&db, "SELECT run_id, call_id, tool FROM audit_log").await;
    assert_eq!(
        audit,
        vec![vec![
            json!(format!("{run_id}/r1")),
            json!("e2"),
            json!("add_expense")
        ]]
    );
}

#[tokio::test]
async fn the_inbox_is_sorted_into_projects_over_several_steps() {
    let input = "Move all the tasks in my inbox into projects, create projects if needed";
    let (db, _model, log, status, _) = run(
        vec![
            calls(&[("r1", "tasks", json!({"request": input}))]),
            calls(&[("t1", "get_inbox_tasks", json!({})), ("t2", "get_projects", json!({}))]),
            calls(&[
                ("t3", "create_project", json!({"name": "Birthday", "description": "Mum's birthday"})),
                ("t4", "create_project", json!({"name": "Personal website"})),
                ("t5", "create_project", json!({"name": "Home"})),
            ]),
            // The duplicate project was refused with its id: use 2.
            calls(&[
                ("t6", "move_task", json!({"task_id": 1, "project_id": 5})),
                ("t7", "move_task", json!({"task_id": 2, "project_id": 5})),
                ("t8", "move_task", json!({"task_id": 3, "project_id": 6})),
                ("t9", "move_task", json!({"task_id": 4, "project_id": 6})),
                ("t10", "move_task", json!({"task_id": 5, "project_id": 2})),
                ("t11", "move_task", json!({"task_id": 6, "project_id": 4})),
                ("t12", "move_task", json!({"task_id": 7, "project_id": 3})),
                ("t13", "move_task", json!({"task_id": 8, "project_id": 2})),
            ]),
            calls(&[("t14", "get_inbox_tasks", json!({}))]),
            ModelResponse::text("All 8 inbox tasks are filed; I created Birthday and Personal website and used Home."),
            ModelResponse::text("Your inbox is empty: 8 tasks filed into projects."),
        ],
        input,
    )
    .await;
    assert_eq!(
        status,
        RunStatus::Done(Outcome::Answered {
            answer: "Your inbox is empty: 8 tasks filed into projects.".into()
        })
    );
    let results = results(&log);
    // The two reads ran concurrently, so their results may arrive in either order.
    let inbox = results
        .iter()
        .find(|(tool, ..)| tool == "get_inbox_tasks")
        .unwrap();
    assert!(inbox.1.starts_with("8 tasks in the inbox:"), "{inbox:?}");
    let duplicate = results
        .iter()
        .find(|(tool, _, error)| tool == "create_project" && *error)
        .unwrap();
    assert_eq!(
        duplicate.1,
        "A project named \"Home\" already exists (id 2). Use project_id 2 instead of creating it again."
    );
    assert_eq!(
        results
            .iter()
            .filter(|(tool, _, error)| tool == "move_task" && !*error)
            .count(),
        8
    );
    let last = results
        .iter()
        .rev()
        .find(|(tool, ..)| tool == "get_inbox_tasks")
        .unwrap();
    assert_eq!(last.1, "The inbox is empty.");
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM tasks WHERE project_id IS NULL AND status = 'OPEN'"
        )
        .await,
        0
    );
    assert_eq!(count(&db, "SELECT COUNT(*) FROM projects").await, 6);
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM audit_log").await,
        10,
        "two projects and eight moves"
    );
}

#[tokio::test]
async fn when_is_my_order_arriving() {
    let input = format!("When is my order {IN_TRANSIT_ORDER} arriving?");
    let (_db, _model, log, status, _) = run(
        vec![
            calls(&[("r1", "orders", json!({"request": input}))]),
            calls(&[("o1", "get_order", json!({"order_code": IN_TRANSIT_ORDER}))]),
            ModelResponse::text("Order QZKDLWPRTM is in transit (last seen at the Leipzig hub); expected delivery 2026-11-23."),
            ModelResponse::text("Your order is on its way and should arrive on 23 November 2026."),
        ],
        &input,
    )
    .await;
    assert_eq!(
        status,
        RunStatus::Done(Outcome::Answered {
            answer: "Your order is on its way and should arrive on 23 November 2026.".into()
        })
    );
    let (tool, content, is_error) = &results(&log)[0];
    assert_eq!(tool, "get_order");
    assert!(!is_error);
    assert!(
        content.starts_with("Order QZKDLWPRTM: IN TRANSIT."),
        "{content}"
    );
    assert!(
        content.contains("estimated delivery (ETA) 2026-11-23"),
        "{content}"
    );
}

async fn count(db: &Database, sql: &str) -> i64 {
    let rows = rows(db, sql).await;
    rows[0][0]
        .as_i64()
        .unwrap_or_else(|| rows[0][0].as_str().unwrap().parse().unwrap())
}

async fn rows(db: &Database, sql: &str) -> Vec<Vec<serde_json::Value>> {
    db.query_read_only(sql, &[], &steward_sql::QueryLimits::default())
        .await
        .unwrap()
        .rows
}
