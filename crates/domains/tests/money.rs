//! Exact money on every engine: amounts outside the columns are refused with the range, sums are exact to the
//! cent, what is stored reads back as written, and a cell that cannot be read is an error naming its column.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use bigdecimal::BigDecimal;
use serde_json::{Value, json};
use steward_core::ToolData;
use support::*;

fn data(output: &steward_core::ToolOutput) -> Value {
    match &output.data {
        Some(ToolData::Json { value }) => value.clone(),
        other => panic!("{other:?}"),
    }
}

fn sum(cells: &[Value]) -> String {
    let total: BigDecimal = decimals(cells)
        .iter()
        .map(|d| d.parse::<BigDecimal>().unwrap())
        .sum();
    total.with_scale(2).to_plain_string()
}

#[tokio::test]
async fn the_schema_shows_the_range() {
    let db = sqlite_demo().await;
    let tools = toolbox(db).await;
    let spec = tools.get("add_expense").unwrap().spec().clone();
    let net = &spec.parameters["properties"]["net_amount"];
    assert_eq!(net["minimum"], json!(0), "{net}");
    assert_eq!(net["maximum"], json!(9_999_999_999.99), "{net}");
    assert_eq!(
        spec.parameters["properties"]["tax_rate"]["maximum"],
        json!(1)
    );
}

#[tokio::test]
async fn amounts_outside_the_columns_are_refused_with_the_range_on_every_engine() {
    for (engine, db) in all_demos().await {
        let tools = toolbox(db.clone()).await;
        let before = count(&db, "SELECT COUNT(*) FROM expenses").await;
        let expense = |net: Value| json!({"description": "Huge", "net_amount": net, "tax_rate": 0.2, "date": "2026-11-21"});
        // Checked before the tool runs, as the model's calls are.
        let err = call(&tools, "r1", "add_expense", expense(json!(1e308)))
            .await
            .unwrap_err();
        assert!(
            err.contains("net_amount: 1e+308 is out of range: it must be at most 9999999999.99"),
            "{engine}: {err}"
        );
        let err = call(&tools, "r2", "add_expense", expense(json!(-1)))
            .await
            .unwrap_err();
        assert!(
            err.contains("net_amount: -1 is out of range: it must be at least 0"),
            "{engine}: {err}"
        );
        let err = call(&tools, "r3", "add_expense", expense(json!("NaN")))
            .await
            .unwrap_err();
        assert!(
            err.contains("net_amount: expected a number, got a string (\"NaN\")"),
            "{engine}: {err}"
        );
        // And by the tool itself, for callers that skip validation.
        for (net, shown) in [
            (json!(1e308), "1e308"),
            (json!(-1), "-1"),
            (json!("NaN"), "`NaN`"),
            (json!("Infinity"), "`Infinity`"),
            (json!(1e-320), "1e-320"),
        ] {
            let err = call_unchecked(&tools, "r4", "add_expense", expense(net)).await;
            if shown == "1e-320" {
                // A tiny amount is 0.00 at cents: recorded, not refused.
                assert!(err.unwrap().content.contains("net 0.00"), "{engine}");
                continue;
            }
            let err = err.unwrap_err();
            assert_eq!(
                err,
                format!(
                    "net_amount: {shown} is out of range: amounts must be from 0 to 9999999999.99 (cents are kept, further decimals are rounded). Send an amount in that range."
                ),
                "{engine}"
            );
        }
        let err = call_unchecked(&tools, "r5", "add_expense", json!({"description": "Huge", "gross_amount": 10, "tax_rate": "NaN", "date": "2026-11-21"}))
            .await
            .unwrap_err();
        assert!(
            err.starts_with(
                "tax_rate: `NaN` is out of range: a tax rate is a fraction from 0 to 1"
            ),
            "{engine}: {err}"
        );
        // A gross amount that would not fit.
        let err = call(
            &tools,
            "r6",
            "add_expense",
            expense(json!(9_999_999_999u64)),
        )
        .await
        .unwrap_err();
        assert!(
            err.contains(
                "gives a gross amount of 11999999998.80, beyond the largest amount, 9999999999.99"
            ),
            "{engine}: {err}"
        );
        assert_eq!(
            count(&db, "SELECT COUNT(*) FROM expenses").await,
            before + 1,
            "{engine}: only the 0.00 one"
        );
        // The largest amount is stored and read back exactly.
        let out = call(&tools, "r7", "add_expense", json!({"description": "Largest", "net_amount": 9_999_999_999.99, "tax_rate": 0, "date": "2026-11-21"}))
            .await
            .unwrap();
        assert!(
            out.content
                .ends_with("net 9999999999.99, tax 0% = 0.00, gross 9999999999.99."),
            "{engine}: {}",
            out.content
        );
        let stored = rows(
            &db,
            "SELECT net_amount, gross_amount FROM expenses WHERE description = 'Largest'",
        )
        .await;
        assert_eq!(
            decimals(&stored[0]),
            ["9999999999.99", "9999999999.99"],
            "{engine}"
        );
        let listed = call(&tools, "r8", "list_expenses", json!({"search": "Largest"}))
            .await
            .unwrap();
        assert!(
            listed
                .content
                .ends_with("Largest (Other): net 9999999999.99, gross 9999999999.99"),
            "{engine}: {}",
            listed.content
        );
        assert_eq!(
            data(&listed)[0]["gross_amount"],
            "9999999999.99",
            "{engine}"
        );
        assert_eq!(data(&listed)[0]["tax_rate"], "0.0000", "{engine}");
    }
}

#[tokio::test]
async fn sums_are_exact_to_the_cent_on_every_engine() {
    for (engine, db) in all_demos().await {
        let tools = toolbox(db.clone()).await;
        // 0.1 + 0.2 is 0.3, and 2.50 × 1.07 = 2.675 is 2.68 (a float gives 0.30000000000000004 and 2.67).
        for (i, (gross, rate)) in [(json!(0.1), json!(0)), (json!(0.2), json!(0))]
            .into_iter()
            .enumerate()
        {
            call(&tools, &format!("s{i}"), "add_expense", json!({"description": "Tiny", "gross_amount": gross, "tax_rate": rate, "date": "2030-01-01"}))
                .await
                .unwrap();
        }
        let out = call(&tools, "s2", "add_expense", json!({"description": "Half", "net_amount": 2.5, "tax_rate": 0.07, "date": "2030-01-02"}))
            .await
            .unwrap();
        assert!(
            out.content
                .ends_with("net 2.50, tax 7% = 0.18, gross 2.68."),
            "{engine}: {}",
            out.content
        );
        let out = call(
            &tools,
            "s3",
            "expense_summary",
            json!({"from": "2030-01-01", "to": "2030-01-01", "group_by": "none"}),
        )
        .await
        .unwrap();
        assert_eq!(
            out.content,
            "Total from 2030-01-01 to 2030-01-01: 2 expenses, net 0.30, tax 0.00, gross 0.30.",
            "{engine}"
        );
        assert_eq!(
            (&data(&out)["net"], &data(&out)["gross"]),
            (&json!("0.30"), &json!("0.30")),
            "{engine}"
        );
        // Every expense and every order, to the cent, against the exact sum of the stored rows.
        let all = all_rows(
            &db,
            "SELECT net_amount, tax_amount, gross_amount FROM expenses",
        )
        .await;
        let column = |i: usize| all.iter().map(|r| r[i].clone()).collect::<Vec<_>>();
        let out = call(
            &tools,
            "s4",
            "expense_summary",
            json!({"from": "2000-01-01", "to": "2100-01-01", "group_by": "none"}),
        )
        .await
        .unwrap();
        let d = data(&out);
        assert_eq!(
            [&d["net"], &d["tax"], &d["gross"]],
            [
                &json!(sum(&column(0))),
                &json!(sum(&column(1))),
                &json!(sum(&column(2)))
            ],
            "{engine}"
        );
        assert_eq!(d["count"], json!(all.len()), "{engine}");
        let by_month = call(
            &tools,
            "s5",
            "expense_summary",
            json!({"from": "2000-01-01", "to": "2100-01-01", "group_by": "month"}),
        )
        .await
        .unwrap();
        let months: BigDecimal = data(&by_month)["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["gross"].as_str().unwrap().parse::<BigDecimal>().unwrap())
            .sum();
        assert_eq!(
            months.with_scale(2).to_plain_string(),
            sum(&column(2)),
            "{engine}"
        );
        let totals = all_rows(&db, "SELECT total FROM orders WHERE status <> 'CANCELLED'").await;
        let totals: Vec<Value> = totals.into_iter().map(|mut r| r.remove(0)).collect();
        let out = call(&tools, "s6", "order_stats", json!({})).await.unwrap();
        assert_eq!(data(&out)["revenue"], json!(sum(&totals)), "{engine}");
        assert_eq!(data(&out)["orders"], json!(totals.len()), "{engine}");
        assert!(
            out.content.contains(&format!("revenue {}", sum(&totals))),
            "{engine}: {}",
            out.content
        );
    }
}

/// Makes one stored cell unreadable, in the way each engine allows; returns its column and `list_expenses`
/// arguments that list it.
async fn corrupt(engine: &str, db: &steward_sql::Database) -> (&'static str, Value) {
    let day = rows(db, "SELECT spent_on FROM expenses WHERE id = 1").await;
    let day: String = day[0][0].as_str().unwrap().chars().take(10).collect();
    let that_day = json!({"from": day, "to": day, "limit": 50});
    match engine {
        // SQLite keeps any value in any column.
        "sqlite" => {
            db.execute_script("UPDATE expenses SET net_amount = 'abc' WHERE id = 1")
                .await
                .unwrap();
            ("net_amount", that_day)
        }
        // PostgreSQL's NUMERIC holds NaN.
        "postgres" => {
            db.execute_script("UPDATE expenses SET net_amount = 'NaN' WHERE id = 1")
                .await
                .unwrap();
            ("net_amount", that_day)
        }
        // MariaDB keeps a zero date unless its SQL mode forbids it.
        _ => {
            db.execute_script("SET SESSION sql_mode = ''; UPDATE expenses SET spent_on = '0000-00-00' WHERE id = 1")
                .await
                .unwrap();
            ("spent_on", json!({"to": "0001-01-01"}))
        }
    }
}

#[tokio::test]
async fn an_unreadable_cell_is_an_error_naming_its_column_on_every_engine() {
    for (engine, db) in all_demos().await {
        let tools = toolbox(db.clone()).await;
        let (column, args) = corrupt(engine, &db).await;
        let err = call(&tools, "u1", "list_expenses", args).await.unwrap_err();
        assert!(
            err.starts_with(&format!(
                "The stored data could not be read: column `{column}` holds"
            )),
            "{engine}: {err}"
        );
        if column == "net_amount" {
            // A total over it is refused too, never computed with the value as 0.
            let err = call(
                &tools,
                "u2",
                "expense_summary",
                json!({"from": "2000-01-01", "to": "2100-01-01", "group_by": "none"}),
            )
            .await
            .unwrap_err();
            assert!(
                err.starts_with("The stored data could not be read: column `net` holds"),
                "{engine}: {err}"
            );
            if engine == "sqlite" {
                assert!(
                    err.contains("e.net_amount has a value that is not a number"),
                    "{err}"
                );
            }
        }
    }
}

#[tokio::test]
async fn a_value_the_database_rejects_is_the_input_s_fault_not_an_outage() {
    for (engine, db) in all_demos().await {
        if engine != "postgres" {
            // SQLite and MariaDB store a NUL character in text; PostgreSQL refuses it.
            continue;
        }
        let tools = toolbox(db.clone()).await;
        let before = count(&db, "SELECT COUNT(*) FROM expenses").await;
        let err = call(
            &tools,
            "r-nul",
            "add_expense",
            json!({"description": "Coffee\u{0}beans", "net_amount": 5, "tax_rate": 0.2, "date": "2026-11-21"}),
        )
        .await
        .unwrap_err();
        assert!(
            err.contains("The database rejected a value"),
            "{engine}: {err}"
        );
        assert!(!err.contains("just now"), "{engine}: {err}");
        assert_eq!(count(&db, "SELECT COUNT(*) FROM expenses").await, before);
    }
}
