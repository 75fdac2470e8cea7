//! `steward chat` driven through standard input, against a local OpenAI-compatible mock.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;

#[tokio::test]
async fn a_conversation_with_follow_ups_trace_toggle_and_reset() {
    let server = mock_openai(vec![
        tool_reply("c1", "current_date", "{}"),
        text_reply("It is Saturday."),
        text_reply("Still Saturday."),
        text_reply("Hello again."),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let input = "What day is it?\n/trace on\nAnd now?\n/reset\nhello\n/nonsense\n/exit\n";
    let out = steward(&["chat"], &[("OPENAI_BASE_URL", &base)], input);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "It is Saturday.\nStill Saturday.\nHello again.\n");
    assert!(
        stderr.starts_with("steward chat · openai:gpt-4o-mini"),
        "{stderr}"
    );
    // The trace was off for the first question and on after /trace on.
    assert!(
        !stderr.contains("call current_date"),
        "the first turn was not traced: {stderr}"
    );
    // Step counters restart with each question: the follow-up's one step is step 1, not step 3.
    assert!(stderr.contains("step 1 · openai:gpt-4o-mini"), "{stderr}");
    assert!(!stderr.contains("step 3"), "{stderr}");
    assert!(stderr.contains("(new conversation)"));
    assert!(stderr.contains("unknown command `/nonsense`"));

    let bodies = bodies(&server).await;
    assert_eq!(bodies.len(), 4);
    let count = |i: usize| bodies[i]["messages"].as_array().unwrap().len();
    // The follow-up carries the whole conversation; after /reset it starts over.
    assert_eq!((count(0), count(1), count(2), count(3)), (2, 4, 6, 2));
    assert_eq!(bodies[2]["messages"][5]["content"], "And now?");
    assert_eq!(bodies[3]["messages"][1]["content"], "hello");
}

#[tokio::test]
async fn end_of_input_leaves_cleanly() {
    let server = mock_openai(vec![text_reply("Hi.")]).await;
    let base = format!("{}/v1", server.uri());
    let out = steward(&["chat"], &[("OPENAI_BASE_URL", &base)], "hi\n");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), "Hi.\n");
}

#[test]
fn chat_without_a_model_explains_how_to_configure_one() {
    let out = steward(&["chat"], &[], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no model is configured"));
}

/// A follow-up question after a turn that read outside data (the inbox) hands its request to another agent:
/// that is not a write, so nothing waits for approval, and the analyst's read runs.
#[tokio::test]
async fn a_read_only_follow_up_after_a_read_never_waits() {
    let dir = scratch_dir("chat-follow-up");
    let db = format!("{dir}/demo.sqlite");
    assert_eq!(
        steward(&["demo", "--db", &db], &[], "").status.code(),
        Some(0)
    );
    let monthly =
        "SELECT strftime('%Y-%m', ordered_at) AS month, count(*) AS n FROM orders GROUP BY 1";
    let server = mock_openai(vec![
        // first question: router → tasks → get_inbox_tasks
        tool_reply("r1", "tasks", r#"{"request": "What is in my inbox?"}"#),
        tool_reply("t1", "get_inbox_tasks", "{}"),
        text_reply("The inbox has ten tasks."),
        text_reply("You have ten tasks in your inbox."),
        // follow-up: router → analyst → run_sql
        tool_reply("r2", "analyst", r#"{"request": "Orders per month"}"#),
        tool_reply(
            "a1",
            "run_sql",
            &serde_json::json!({"sql": monthly}).to_string(),
        ),
        text_reply("Orders per month are listed."),
        text_reply("Here are the orders per month."),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let input = "What is in my inbox?\nHow many orders per month?\n";
    let out = steward(
        &["chat", "--db", &db, "--no-store"],
        &[("OPENAI_BASE_URL", &base)],
        input,
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        stdout, "You have ten tasks in your inbox.\nHere are the orders per month.\n",
        "{stderr}"
    );
    assert!(!stderr.to_lowercase().contains("approv"), "{stderr}");
    let bodies = bodies(&server).await;
    assert_eq!(bodies.len(), 8, "{stderr}");
    // The analyst's query ran: its rows reached the analyst's model.
    let observation = bodies[6]["messages"].to_string();
    assert!(observation.contains("month"), "{observation}");
    assert!(!observation.contains("Not allowed"), "{observation}");
    assert!(!observation.contains("no such column"), "{observation}");
}
