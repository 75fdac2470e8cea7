//! Demo databases for the domain tests: SQLite files, and fresh PostgreSQL and MariaDB databases when those
//! servers answer (SKIPPED otherwise; a failure under CI=true).
#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

#[path = "../../../sql/tests/common/mod.rs"]
pub mod sql_common;

use std::sync::Arc;

use chrono::NaiveDate;
use serde_json::Value;
use steward_core::{ToolCall, ToolContext, ToolOutput, Toolbox};
use steward_domains::common::Clock;
use steward_domains::demo::{self, DemoConfig};
use steward_domains::{Domain, Store};
use steward_sql::{Database, QueryLimits};

pub const TODAY: &str = "2026-11-21T10:00:00+00:00";

pub fn clock() -> Clock {
    Clock::parse(TODAY).unwrap()
}

pub fn config() -> DemoConfig {
    DemoConfig {
        seed: 42,
        scale: 1,
        today: NaiveDate::from_ymd_opt(2026, 11, 21).unwrap(),
    }
}

/// A fresh SQLite demo database.
pub async fn sqlite_demo() -> Arc<Database> {
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "domain-{}-{}.sqlite",
        std::process::id(),
        sql_common::unique()
    ));
    let db = Database::connect(&format!("sqlite://{}?mode=rwc", path.display()))
        .await
        .unwrap();
    demo::create(&db, config(), &|_, _| {}).await.unwrap();
    Arc::new(db)
}

/// Fresh demo databases on every engine that answers, with their names.
pub async fn all_demos() -> Vec<(&'static str, Arc<Database>)> {
    let mut out = vec![("sqlite", sqlite_demo().await)];
    for (name, admin, mysql) in [
        ("postgres", sql_common::PG_ADMIN, false),
        ("mariadb", sql_common::MARIA_ADMIN, true),
    ] {
        match sql_common::fresh(admin, "", mysql).await {
            Ok(url) => {
                let db = Database::connect(&url).await.unwrap();
                demo::create(&db, config(), &|_, _| {}).await.unwrap();
                out.push((name, Arc::new(db)));
            }
            Err(e) => sql_common::skip(&format!("{name} is not usable: {e}")),
        }
    }
    out
}

pub async fn domain(db: Arc<Database>) -> Domain {
    Domain::open(db, clock()).await.unwrap()
}

pub fn store(db: Arc<Database>) -> Store {
    Store::new(db, clock(), None)
}

/// All the domain tools in one toolbox (as the agents have them).
pub async fn toolbox(db: Arc<Database>) -> Toolbox {
    use steward_domains::common::{calculator, current_date};
    use steward_domains::{expenses, orders, tasks};
    let s = domain(db).await.store;
    Toolbox::new()
        .with(expenses::add_expense(s.clone()))
        .and_then(|t| t.with(expenses::list_expenses(s.clone())))
        .and_then(|t| t.with(expenses::expense_summary(s.clone())))
        .and_then(|t| t.with(orders::get_order(s.clone())))
        .and_then(|t| t.with(orders::find_orders(s.clone())))
        .and_then(|t| t.with(orders::order_stats(s.clone())))
        .and_then(|t| t.with(tasks::get_inbox_tasks(s.clone())))
        .and_then(|t| t.with(tasks::get_projects(s.clone())))
        .and_then(|t| t.with(tasks::get_tasks(s.clone())))
        .and_then(|t| t.with(tasks::create_project(s.clone())))
        .and_then(|t| t.with(tasks::move_task(s.clone())))
        .and_then(|t| t.with(tasks::add_task(s.clone())))
        .and_then(|t| t.with(tasks::complete_task(s.clone())))
        .and_then(|t| t.with(current_date(clock())))
        .and_then(|t| t.with(calculator()))
        .unwrap()
}

/// Calls a tool as the runner does (validation first) in run `test`.
pub async fn call(
    tools: &Toolbox,
    call_id: &str,
    name: &str,
    args: Value,
) -> Result<ToolOutput, String> {
    let call = ToolCall::new(call_id, name, args.to_string());
    let (tool, args) = tools.check(&call).map_err(|r| r.observation)?;
    tool.call(&ToolContext::new("test", call_id, "test"), args)
        .await
        .map_err(|e| {
            if let Some(d) = &e.diagnostic {
                eprintln!("diagnostic of {name}: {d}");
            }
            e.message
        })
}

/// Calls a tool as the runner does (validation first) in run `run`; the whole error, diagnostic included.
pub async fn call_as(
    tools: &Toolbox,
    run: &str,
    call_id: &str,
    name: &str,
    args: &Value,
) -> Result<ToolOutput, steward_core::ToolError> {
    let call = ToolCall::new(call_id, name, args.to_string());
    let (tool, args) = tools
        .check(&call)
        .map_err(|r| steward_core::ToolError::new(r.observation))?;
    tool.call(&ToolContext::new(run, call_id, "test"), args)
        .await
}

/// Calls a tool without validating the arguments first (as a caller that skips the validator would).
pub async fn call_unchecked(
    tools: &Toolbox,
    call_id: &str,
    name: &str,
    args: Value,
) -> Result<ToolOutput, String> {
    let tool = tools.get(name).unwrap();
    tool.call(&ToolContext::new("test", call_id, "test"), args)
        .await
        .map_err(|e| e.message)
}

pub async fn count(db: &Database, sql: &str) -> i64 {
    let rows = db
        .query_read_only(sql, &[], &QueryLimits::default())
        .await
        .unwrap();
    rows.rows[0][0]
        .as_i64()
        .unwrap_or_else(|| rows.rows[0][0].as_str().unwrap().parse().unwrap())
}

pub async fn rows(db: &Database, sql: &str) -> Vec<Vec<Value>> {
    db.query_read_only(sql, &[], &QueryLimits::default())
        .await
        .unwrap()
        .rows
}

/// Every row of a query (no row cap).
pub async fn all_rows(db: &Database, sql: &str) -> Vec<Vec<Value>> {
    let limits = QueryLimits {
        max_rows: 1_000_000,
        max_bytes: usize::MAX,
        ..QueryLimits::default()
    };
    let result = db.query_read_only(sql, &[], &limits).await.unwrap();
    assert!(!result.truncated, "{sql}");
    result.rows
}

/// Exact decimals from cells of any engine (text, or SQLite's numbers through their shortest text), without
/// trailing zeros: `"6.00"`, `6` and `6.0` are all `"6"`.
pub fn decimals(cells: &[Value]) -> Vec<String> {
    cells
        .iter()
        .map(|v| {
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                other => panic!("not a decimal: {other}"),
            };
            let d: bigdecimal::BigDecimal = text.parse().unwrap();
            d.normalized().to_plain_string()
        })
        .collect()
}
