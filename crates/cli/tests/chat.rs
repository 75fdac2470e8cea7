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
