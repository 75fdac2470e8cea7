//! Change sets at a terminal (a real pseudo-terminal): sorting the inbox stages two new projects and eight
//! moves, nothing is written while the person reads them, and one answer applies (or discards) them all.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;

/// The inbox scenario of the source material, scripted: read the inbox, create two projects, move eight
/// tasks (the moves name the new projects by their placeholders, -1 and -2), answer.
fn inbox_model(inbox: &[i64]) -> Vec<wiremock::ResponseTemplate> {
    let mut replies = vec![
        tool_reply("t1", "get_inbox_tasks", "{}"),
        tool_reply("p1", "create_project", r#"{"name": "Birthday party"}"#),
        tool_reply("p2", "create_project", r#"{"name": "Garden"}"#),
    ];
    for (i, task) in inbox.iter().enumerate() {
        let project = if i % 2 == 0 { -1 } else { -2 };
        replies.push(tool_reply(
            &format!("m{i}"),
            "move_task",
            &json!({"task_id": task, "project_id": project}).to_string(),
        ));
    }
    replies.push(text_reply("Your inbox is sorted into two projects."));
    replies
}

fn demo() -> String {
    let dir = scratch_dir("changes");
    let db = format!("{dir}/demo.sqlite");
    let out = steward(&["demo", "--db", &db], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    db
}

fn inbox(db: &str) -> Vec<i64> {
    sqlite3(
        db,
        "SELECT id FROM tasks WHERE project_id IS NULL AND status = 'OPEN' ORDER BY id LIMIT 8",
    )
    .lines()
    .map(|l| l.parse().unwrap())
    .collect()
}

/// Runs `ask` at a terminal, answers `answer` to the change set once it is shown, and returns what the
/// terminal showed and the exit code; `while_waiting` runs while the question waits.
fn ask_at_a_terminal(
    db: &str,
    base: &str,
    answer: &str,
    while_waiting: impl FnOnce(),
) -> (String, Option<i32>) {
    let data = scratch_dir("changes-data");
    let command = format!(
        "{} ask --db '{db}' -a tasks 'Sort my inbox into projects'",
        env!("CARGO_BIN_EXE_steward"),
    );
    let mut child = isolated(
        "script",
        &["-qec", &command, "/dev/null"],
        &[("OPENAI_BASE_URL", base), ("XDG_DATA_HOME", &data)],
    )
    .spawn()
    .unwrap();
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2500));
        while_waiting();
        stdin.write_all(answer.as_bytes()).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1500));
    }
    let out = child.wait_with_output().unwrap();
    (text(&out.stdout), out.status.code())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_inbox_needs_one_decision_and_is_applied_in_one_transaction() {
    let db = demo();
    let tasks = inbox(&db);
    assert_eq!(tasks.len(), 8);
    let projects = sqlite3(&db, "SELECT count(*) FROM projects");
    let server = mock_openai(inbox_model(&tasks)).await;
    let base = format!("{}/v1", server.uri());
    let db2 = db.clone();
    let (shown, code) = tokio::task::spawn_blocking(move || {
        ask_at_a_terminal(&db2, &base, "y\n", || {
            // The whole plan is staged and shown; nothing is written yet.
            assert_eq!(sqlite3(&db2, "SELECT count(*) FROM projects"), projects);
            let open = sqlite3(
                &db2,
                "SELECT count(*) FROM tasks WHERE project_id IS NULL AND status = 'OPEN'",
            );
            assert!(open.parse::<i64>().unwrap() >= 8, "{open}");
        })
    })
    .await
    .unwrap();
    println!("{shown}");
    assert_eq!(code, Some(0), "{shown}");
    assert!(
        shown.contains("10 changes wait for your approval"),
        "{shown}"
    );
    assert!(
        shown.contains("Created project #-1 Birthday party."),
        "{shown}"
    );
    assert!(shown.contains("to project #-2 Garden."), "{shown}");
    assert!(
        shown.contains("Apply all 10 changes together? [y]es / [n]o"),
        "{shown}"
    );
    // One question, not ten.
    assert_eq!(shown.matches("[y]es / [n]o").count(), 1, "{shown}");
    assert!(
        shown.contains("applied: 10 changes written (project -1 is #"),
        "{shown}"
    );
    assert!(
        shown.contains("Your inbox is sorted into two projects."),
        "{shown}"
    );
    let birthday = sqlite3(&db, "SELECT id FROM projects WHERE name = 'Birthday party'");
    let garden = sqlite3(&db, "SELECT id FROM projects WHERE name = 'Garden'");
    let moved = |project: &str| {
        sqlite3(
            &db,
            &format!(
                "SELECT group_concat(id) FROM (SELECT id FROM tasks WHERE project_id = {project} ORDER BY id)"
            ),
        )
    };
    let expected = |parity: usize| {
        tasks
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 2 == parity)
            .map(|(_, t)| t.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    assert_eq!(moved(&birthday), expected(0));
    assert_eq!(moved(&garden), expected(1));
    // Each write once, with its key, in the database's own audit log.
    assert_eq!(sqlite3(&db, "SELECT count(*) FROM tool_calls"), "10");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_discarded_change_set_writes_nothing() {
    let db = demo();
    let tasks = inbox(&db);
    let before = sqlite3(
        &db,
        "SELECT (SELECT count(*) FROM projects) || ' ' || (SELECT count(*) FROM tasks WHERE project_id IS NULL) || ' ' || (SELECT count(*) FROM tool_calls)",
    );
    let server = mock_openai(inbox_model(&tasks)).await;
    let base = format!("{}/v1", server.uri());
    let db2 = db.clone();
    let (shown, code) =
        tokio::task::spawn_blocking(move || ask_at_a_terminal(&db2, &base, "n\n", || {}))
            .await
            .unwrap();
    assert_eq!(code, Some(0), "{shown}");
    assert!(
        shown.contains("discarded: the 10 staged changes were discarded; nothing was written"),
        "{shown}"
    );
    let after = sqlite3(
        &db,
        "SELECT (SELECT count(*) FROM projects) || ' ' || (SELECT count(*) FROM tasks WHERE project_id IS NULL) || ' ' || (SELECT count(*) FROM tool_calls)",
    );
    assert_eq!(after, before);
}
