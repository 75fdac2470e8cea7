//! Expense tools: amounts computed in code, every refusal, idempotent writes with an audit row — on SQLite,
//! and the writes also on PostgreSQL and MariaDB.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use serde_json::{Value, json};
use steward_core::ToolData;
use support::*;

fn data(output: &steward_core::ToolOutput) -> Value {
    match &output.data {
        Some(ToolData::Json { value }) => value.clone(),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn add_expense_derives_the_missing_amount_on_every_engine() {
    for (engine, db) in all_demos().await {
        let tools = toolbox(db.clone()).await;
        let before = count(&db, "SELECT COUNT(*) FROM expenses").await;
        let out = call(&tools, "c1", "add_expense", json!({"description": "Coffee", "category": "coffee", "net_amount": 5, "tax_rate": 0.2, "date": "2026-11-21"}))
            .await
            .unwrap();
        assert!(
            out.content
                .ends_with("Coffee (Coffee) on 2026-11-21: net 5.00, tax 20% = 1.00, gross 6.00."),
            "{engine}: {}",
            out.content
        );
        let id = data(&out)["id"].as_i64().unwrap();
        assert_eq!(
            [
                &data(&out)["net_amount"],
                &data(&out)["tax_amount"],
                &data(&out)["gross_amount"],
                &data(&out)["tax_rate"]
            ],
            [
                &json!("5.00"),
                &json!("1.00"),
                &json!("6.00"),
                &json!("0.2000")
            ],
            "{engine}"
        );
        let stored = rows(&db, &format!("SELECT net_amount, tax_amount, gross_amount, tax_rate, spent_on FROM expenses WHERE id = {id}")).await;
        assert_eq!(
            decimals(&stored[0][..4]),
            ["5", "1", "6", "0.2"],
            "{engine}"
        );
        assert!(
            stored[0][4].as_str().unwrap().starts_with("2026-11-21"),
            "{engine}: {:?}",
            stored[0][4]
        );
        // Gross and rate give the net; net and gross give the rate.
        let out = call(&tools, "c2", "add_expense", json!({"description": "Taxi", "category": "Travel", "gross_amount": 23.8, "tax_rate": 0.19, "date": "yesterday"})).await.unwrap();
        assert_eq!(
            (&data(&out)["net_amount"], &data(&out)["date"]),
            (&json!("20.00"), &json!("2026-11-20")),
            "{engine}"
        );
        let out = call(&tools, "c3", "add_expense", json!({"description": "Notebooks", "category": "Office supplies", "net_amount": 10, "gross_amount": 11.9, "date": "21.11.2026"})).await.unwrap();
        assert_eq!(data(&out)["tax_rate"], "0.1900", "{engine}");
        assert_eq!(
            count(&db, "SELECT COUNT(*) FROM expenses").await,
            before + 3,
            "{engine}"
        );
        assert_eq!(
            count(
                &db,
                "SELECT COUNT(*) FROM audit_log WHERE tool = 'add_expense'"
            )
            .await,
            3,
            "{engine}"
        );
    }
}

#[tokio::test]
async fn the_same_call_id_twice_writes_once_on_every_engine() {
    for (engine, db) in all_demos().await {
        let tools = toolbox(db.clone()).await;
        let args = json!({"description": "Flat white", "category": "Coffee", "gross_amount": 3.5, "tax_rate": 0.07, "date": "2026-11-21"});
        let first = call(&tools, "same-id", "add_expense", args.clone())
            .await
            .unwrap();
        let again = call(&tools, "same-id", "add_expense", args.clone())
            .await
            .unwrap();
        assert_eq!(first.content, again.content, "{engine}");
        assert_eq!(first.data, again.data, "{engine}");
        assert_eq!(count(&db, "SELECT COUNT(*) FROM expenses WHERE description = 'Flat white' AND spent_on >= '2026-11-21'").await, 1, "{engine}");
        assert_eq!(
            count(
                &db,
                "SELECT COUNT(*) FROM audit_log WHERE call_id = 'same-id'"
            )
            .await,
            1,
            "{engine}"
        );
        let audit = rows(
            &db,
            "SELECT run_id, call_id, tool FROM audit_log WHERE call_id = 'same-id'",
        )
        .await;
        assert_eq!(
            audit[0],
            vec![json!("test"), json!("same-id"), json!("add_expense")],
            "{engine}"
        );
        // Another id is another expense.
        call(&tools, "other-id", "add_expense", args).await.unwrap();
        assert_eq!(count(&db, "SELECT COUNT(*) FROM expenses WHERE description = 'Flat white' AND spent_on >= '2026-11-21'").await, 2, "{engine}");
    }
}

#[tokio::test]
async fn add_expense_refusals_say_what_to_do() {
    let db = sqlite_demo().await;
    let tools = toolbox(db.clone()).await;
    let before = count(&db, "SELECT COUNT(*) FROM expenses").await;
    let err = call(&tools, "e1", "add_expense", json!({"description": "Coffee", "net_amount": 5, "gross_amount": 7, "tax_rate": 0.2, "date": "2026-11-21"})).await.unwrap_err();
    assert!(err.starts_with("The amounts do not agree: net 5.00 with a tax rate of 0.2 gives a gross amount of 6.00, not 7.00."), "{err}");
    let err = call(
        &tools,
        "e2",
        "add_expense",
        json!({"net_amount": 5, "tax_rate": 0.2}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err,
        "Missing values: description, date. Ask the user for them or use a tool that provides them."
    );
    let err = call(
        &tools,
        "e3",
        "add_expense",
        json!({"description": "Coffee", "net_amount": 5, "date": "2026-11-21"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.starts_with("Missing values: gross_amount or tax_rate"),
        "{err}"
    );
    let err = call(&tools, "e4", "add_expense", json!({"description": "Coffee", "net_amount": 5, "tax_rate": 0.2, "date": "next Tuesday-ish"})).await.unwrap_err();
    assert!(
        err.starts_with(
            "`next Tuesday-ish` is not a date that can be read. Use one of: YYYY-MM-DD"
        ),
        "{err}"
    );
    let err = call(&tools, "e5", "add_expense", json!({"description": "Coffee", "category": "Snacks", "net_amount": 5, "tax_rate": 0.2, "date": "2026-11-21"})).await.unwrap_err();
    assert!(
        err.starts_with("Unknown category `Snacks`. The categories are: Coffee,"),
        "{err}"
    );
    let err = call(
        &tools,
        "e6",
        "add_expense",
        json!({"description": "Coffee", "net_amount": 5, "tax_rate": 20, "date": "2026-11-21"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("tax_rate: 20 is out of range: it must be at most 1"),
        "{err}"
    );
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM expenses").await,
        before,
        "nothing was written"
    );
    assert_eq!(count(&db, "SELECT COUNT(*) FROM audit_log").await, 0);
}

#[tokio::test]
async fn listing_and_summaries() {
    let db = sqlite_demo().await;
    let tools = toolbox(db.clone()).await;
    let out = call(
        &tools,
        "l1",
        "list_expenses",
        json!({"category": "Coffee", "limit": 3}),
    )
    .await
    .unwrap();
    assert_eq!(out.content.lines().count(), 3, "{}", out.content);
    assert!(
        out.content.lines().all(|l| l.contains("(Coffee)")),
        "{}",
        out.content
    );
    let out = call(
        &tools,
        "l2",
        "list_expenses",
        json!({"search": "taxi", "from": "2026-01-01", "to": "2026-06-30"}),
    )
    .await
    .unwrap();
    assert!(
        out.content
            .lines()
            .all(|l| l.contains("Taxi") && l.contains(" 2026-0")),
        "{}",
        out.content
    );
    let expected = rows(&db, "SELECT COUNT(*), ROUND(SUM(gross_amount), 2) FROM expenses e JOIN expense_categories c ON c.id = e.category_id WHERE c.name = 'Coffee' AND spent_on BETWEEN '2026-10-01' AND '2026-10-31'").await;
    let out = call(
        &tools,
        "s1",
        "expense_summary",
        json!({"from": "2026-10-01", "to": "2026-10-31", "category": "Coffee", "group_by": "none"}),
    )
    .await
    .unwrap();
    let d = data(&out);
    assert_eq!(d["count"], expected[0][0]);
    assert_eq!(
        decimals(&[d["gross"].clone()]),
        decimals(&[expected[0][1].clone()]),
        "{d} vs {expected:?}"
    );
    assert!(
        out.content
            .starts_with("Total in Coffee from 2026-10-01 to 2026-10-31:"),
        "{}",
        out.content
    );
    let out = call(
        &tools,
        "s2",
        "expense_summary",
        json!({"from": "2026-01-01", "to": "2026-03-31", "group_by": "month"}),
    )
    .await
    .unwrap();
    assert!(out.content.starts_with("2026-01: "), "{}", out.content);
    assert_eq!(out.content.lines().count(), 4, "{}", out.content);
    let err = call(&tools, "s3", "expense_summary", json!({"to": "2026-03-31"}))
        .await
        .unwrap_err();
    assert!(err.contains("Missing values: from"), "{err}");
}

/// A preview is a dry run: the person sees the resolved date and the computed amounts, and nothing is kept —
/// no expense, no audit row, no idempotency key, so the real call afterwards writes (once).
#[tokio::test]
async fn a_preview_computes_everything_and_keeps_nothing_on_every_engine() {
    for (engine, db) in all_demos().await {
        let tools = toolbox(db.clone()).await;
        let args = json!({"description": "Preview latte", "category": "Coffee", "net_amount": 5, "tax_rate": 0.2, "date": "2026-11-20"});
        let call = steward_core::ToolCall::new("pv-1", "add_expense", args.to_string());
        let (tool, checked) = tools.check(&call).unwrap();
        let ctx = steward_core::ToolContext::new("test", "pv-1", "test");
        let expenses = "SELECT COUNT(*) FROM expenses WHERE description = 'Preview latte'";
        let kept = "SELECT COUNT(*) FROM audit_log WHERE call_id = 'pv-1'";
        let keys = "SELECT COUNT(*) FROM tool_calls WHERE call_id = 'pv-1'";
        for _ in 0..2 {
            let preview = tool.preview(&ctx, checked.clone()).await.unwrap();
            assert!(
                preview.starts_with("If approved now: Recorded expense #"),
                "{engine}: {preview}"
            );
            assert!(
                preview.contains("on 2026-11-20: net 5.00, tax 20% = 1.00, gross 6.00"),
                "{engine}: {preview}"
            );
            assert_eq!(count(&db, expenses).await, 0, "{engine}");
            assert_eq!(count(&db, kept).await, 0, "{engine}");
            assert_eq!(count(&db, keys).await, 0, "{engine}");
        }
        // A call that would fail says so.
        let bad = json!({"description": "Preview latte", "category": "Nope", "net_amount": 5, "tax_rate": 0.2, "date": "2026-11-20"});
        let preview = tool.preview(&ctx, bad).await.unwrap();
        assert!(
            preview.starts_with("If approved now, it would fail: Unknown category `Nope`"),
            "{engine}: {preview}"
        );
        // The real call writes once.
        tool.call(&ctx, checked).await.unwrap();
        assert_eq!(count(&db, expenses).await, 1, "{engine}");
        assert_eq!(count(&db, kept).await, 1, "{engine}");
    }
}
