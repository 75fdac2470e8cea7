//! A replay changes nothing: `--model replay:FILE` plays a recorded run back, and a tool that writes is never
//! run again; the recorded result is shown to the model instead, and the trace says so. Checked on the
//! database itself with the engine's own client (`sqlite3`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;

/// Rows in the demo's expenses table, as the `sqlite3` client counts them.
fn expenses(db: &str) -> i64 {
    sqlite3(db, "SELECT count(*) FROM expenses")
        .parse()
        .unwrap()
}

#[tokio::test]
async fn replaying_a_run_that_wrote_through_a_sub_agent_leaves_the_database_unchanged() {
    let db = format!("{}/demo.sqlite", scratch_dir("replay-demo"));
    let out = steward(&["demo", "--db", &db], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The router hands the request to the expenses agent, which adds the expense.
    let server = mock_openai(vec![
        tool_reply("r1", "expenses", r#"{"request": "Add a 12.50 taxi ride today, 20% VAT"}"#),
        tool_reply(
            "r1",
            "add_expense",
            r#"{"description": "Taxi ride", "net_amount": 12.5, "tax_rate": 0.2, "date": "2026-11-21"}"#,
        ),
        text_reply("Added the taxi ride: 12.50 net, 15.00 gross."),
        text_reply("Done: the taxi ride is recorded."),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let recording = format!("{}/taxi.jsonl", scratch_dir("replay"));
    let question = "Add a 12.50 taxi ride today, 20% VAT";
    let before = expenses(&db);
    let out = steward(
        &["ask", "--db", &db, "--record", &recording, question],
        &[("OPENAI_BASE_URL", &base)],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(expenses(&db), before + 1, "the recorded run wrote once");

    for _ in 0..2 {
        let out = steward(
            &[
                "ask",
                "--trace",
                "--db",
                &db,
                "--model",
                &format!("replay:{recording}"),
                question,
            ],
            &[],
            "",
        );
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert_eq!(text(&out.stdout), "Done: the taxi ride is recorded.\n");
        assert!(
            stderr.contains("diagnostic replayed: the recorded result; the tool did not run"),
            "{stderr}"
        );
        assert!(
            stderr.contains("[expenses]   result add_expense: "),
            "{stderr}"
        );
        assert_eq!(expenses(&db), before + 1, "a replay wrote nothing");
    }
}
