//! Change sets of the domain tools, on every engine: the inbox sorted into two new projects is staged call by
//! call (each sees the ones before it, nothing is written), then applied in one transaction; applying twice
//! writes once; a change of the data between staging and applying writes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use serde_json::{Value, json};
use steward_domains::changes::{Change, Staged};
use support::*;

fn change(call_id: &str, tool: &str, arguments: Value) -> Change {
    Change {
        run_id: "run-changes".to_owned(),
        call_id: call_id.to_owned(),
        tool: tool.to_owned(),
        arguments,
    }
}

/// Stages each change of `plan` after the ones before it, as a run does.
async fn stage_all(store: &steward_domains::Store, plan: &[Change]) -> Vec<Staged> {
    let mut staged: Vec<Staged> = Vec::new();
    for c in plan {
        let earlier: Vec<Change> = staged.iter().map(|s| s.change.clone()).collect();
        let output = store.stage(&earlier, c).await.unwrap();
        staged.push(Staged {
            change: c.clone(),
            output,
        });
    }
    staged
}

/// What the run would leave in the database, to compare before and after.
async fn snapshot(db: &steward_sql::Database) -> Vec<i64> {
    vec![
        count(db, "SELECT COUNT(*) FROM projects").await,
        count(db, "SELECT COUNT(*) FROM tasks WHERE project_id IS NULL").await,
        count(db, "SELECT COUNT(*) FROM audit_log").await,
        count(db, "SELECT COUNT(*) FROM tool_calls").await,
    ]
}

#[tokio::test]
async fn the_inbox_is_staged_then_applied_once_on_every_engine() {
    for (engine, db) in all_demos().await {
        let store = store(db.clone());
        let inbox: Vec<i64> = rows(
            &db,
            "SELECT id FROM tasks WHERE project_id IS NULL AND status = 'OPEN' ORDER BY id",
        )
        .await
        .iter()
        .take(8)
        .map(|r| r[0].as_i64().unwrap())
        .collect();
        assert_eq!(inbox.len(), 8, "{engine}");
        let before = snapshot(&db).await;

        let mut plan = vec![
            change("p1", "create_project", json!({"name": "Birthday party"})),
            change("p2", "create_project", json!({"name": "Garden"})),
        ];
        for (i, task) in inbox.iter().enumerate() {
            let project = if i % 2 == 0 { -1 } else { -2 };
            plan.push(change(
                &format!("m{i}"),
                "move_task",
                json!({"task_id": task, "project_id": project}),
            ));
        }
        let staged = stage_all(&store, &plan).await;
        // Each staged result is real, with placeholders for the new projects, and nothing was written.
        assert_eq!(
            staged[0].output.content, "Created project #-1 Birthday party.",
            "{engine}"
        );
        assert_eq!(
            staged[1].output.content, "Created project #-2 Garden.",
            "{engine}"
        );
        assert!(
            staged[3].output.content.ends_with("to project #-2 Garden."),
            "{engine}: {}",
            staged[3].output.content
        );
        assert_eq!(
            snapshot(&db).await,
            before,
            "{engine}: staging wrote nothing"
        );

        // Applied in one transaction: exactly those rows.
        let applied = store.apply(&staged, &[]).await.unwrap();
        assert_eq!(applied.outputs.len(), 10, "{engine}");
        assert!(applied.already.is_empty(), "{engine}");
        assert_eq!(applied.created.len(), 2, "{engine}");
        let birthday = applied
            .created
            .iter()
            .find(|c| c.placeholder == -1)
            .unwrap()
            .id;
        let named = rows(
            &db,
            &format!("SELECT name FROM projects WHERE id = {birthday}"),
        )
        .await;
        assert_eq!(named[0][0], json!("Birthday party"), "{engine}");
        let moved = count(
            &db,
            &format!("SELECT COUNT(*) FROM tasks WHERE project_id = {birthday}"),
        )
        .await;
        assert_eq!(moved, 4, "{engine}");
        let after = snapshot(&db).await;
        assert_eq!(
            after,
            vec![before[0] + 2, before[1] - 8, before[2] + 10, before[3] + 10],
            "{engine}"
        );

        // Applying again writes nothing more.
        let again = store.apply(&staged, &[]).await.unwrap();
        assert_eq!(again.already.len(), 10, "{engine}");
        assert_eq!(snapshot(&db).await, after, "{engine}");
    }
}

#[tokio::test]
async fn a_change_of_the_data_since_staging_writes_nothing_on_every_engine() {
    for (engine, db) in all_demos().await {
        let store = store(db.clone());
        let task = rows(
            &db,
            "SELECT id FROM tasks WHERE project_id IS NULL AND status = 'OPEN' ORDER BY id",
        )
        .await[0][0]
            .as_i64()
            .unwrap();
        let plan = [
            change("q1", "create_project", json!({"name": "Errands"})),
            change(
                "q2",
                "move_task",
                json!({"task_id": task, "project_id": -1}),
            ),
            change("q3", "complete_task", json!({"task_id": task})),
        ];
        let staged = stage_all(&store, &plan).await;
        let before = snapshot(&db).await;
        // Someone renames the task meanwhile: the move no longer gives what was approved.
        db.execute_script(&format!(
            "UPDATE tasks SET title = 'Renamed meanwhile' WHERE id = {task}"
        ))
        .await
        .unwrap();
        let error = store.apply(&staged, &[]).await.unwrap_err();
        assert!(
            error
                .message
                .starts_with("The data changed since the changes were staged: move_task (q2)"),
            "{engine}: {}",
            error.message
        );
        assert!(error.message.contains("Nothing was written"), "{engine}");
        assert_eq!(snapshot(&db).await, before, "{engine}");
        assert_eq!(
            count(&db, "SELECT COUNT(*) FROM projects WHERE name = 'Errands'").await,
            0,
            "{engine}"
        );
        // A placeholder the change set never created is refused with what it means.
        let stray = change(
            "q4",
            "move_task",
            json!({"task_id": task, "project_id": -3}),
        );
        let refused = store.stage(&plan[..1], &stray).await.unwrap_err();
        assert!(
            refused.message.starts_with("There is no project -3"),
            "{engine}: {}",
            refused.message
        );
    }
}

#[tokio::test]
async fn a_call_id_used_again_for_other_rows_is_not_taken_for_a_retry_on_every_engine() {
    for (engine, db) in all_demos().await {
        let store = store(db.clone());
        let task = rows(
            &db,
            "SELECT id FROM tasks WHERE status = 'OPEN' ORDER BY id",
        )
        .await[0][0]
            .as_i64()
            .unwrap();
        let first = stage_all(
            &store,
            &[
                change("p1", "create_project", json!({"name": "Birthday"})),
                change(
                    "m1",
                    "move_task",
                    json!({"task_id": task, "project_id": -1}),
                ),
            ],
        )
        .await;
        store.apply(&first, &[]).await.unwrap();
        // The next set reuses call id m1 with the same arguments: -1 is another project now.
        let second = stage_all(
            &store,
            &[
                change("p2", "create_project", json!({"name": "Garden"})),
                change(
                    "m1",
                    "move_task",
                    json!({"task_id": task, "project_id": -1}),
                ),
            ],
        )
        .await;
        assert!(
            second[1].output.content.ends_with("to project #-1 Garden."),
            "{engine}"
        );
        let before = snapshot(&db).await;
        let error = store.apply(&second, &[]).await.unwrap_err();
        assert!(
            error
                .message
                .contains("was applied before with another result"),
            "{engine}: {}",
            error.message
        );
        assert_eq!(snapshot(&db).await, before, "{engine}: nothing written");
        // A placeholder out of every range is refused, not a panic.
        let stray = change(
            "m9",
            "move_task",
            json!({"task_id": task, "project_id": i64::MIN}),
        );
        let refused = store.stage(&[], &stray).await.unwrap_err();
        assert!(
            refused.message.starts_with("There is no project"),
            "{engine}: {}",
            refused.message
        );
    }
}

#[tokio::test]
async fn applying_some_changes_brings_the_ones_they_use_and_keeps_placeholders_on_every_engine() {
    for (engine, db) in all_demos().await {
        let store = store(db.clone());
        let tasks: Vec<i64> = rows(
            &db,
            "SELECT id FROM tasks WHERE status = 'OPEN' ORDER BY id",
        )
        .await
        .iter()
        .take(3)
        .map(|r| r[0].as_i64().unwrap())
        .collect();
        let plan = [
            change("s1", "create_project", json!({"name": "Some birthday"})),
            change("s2", "create_project", json!({"name": "Some garden"})),
            change(
                "s3",
                "move_task",
                json!({"task_id": tasks[0], "project_id": -1}),
            ),
            change(
                "s4",
                "move_task",
                json!({"task_id": tasks[1], "project_id": -2}),
            ),
            change(
                "s5",
                "move_task",
                json!({"task_id": tasks[2], "project_id": -1}),
            ),
        ];
        let staged = stage_all(&store, &plan).await;
        let selected =
            steward_domains::changes::with_dependencies(&staged, &["s4".to_owned()]).unwrap();
        // The move into the second new project brings that project, and nothing else.
        assert_eq!(selected, [false, true, false, true, false], "{engine}");
        let applied = store.apply_selected(&staged, &selected, &[]).await.unwrap();
        assert_eq!(applied.outputs.len(), 2, "{engine}");
        assert_eq!(applied.created.len(), 1, "{engine}");
        assert_eq!(
            applied.created[0].placeholder, -2,
            "{engine}: numbering kept"
        );
        let garden = applied.created[0].id;
        assert_eq!(
            count(
                &db,
                &format!(
                    "SELECT COUNT(*) FROM tasks WHERE project_id = {garden} AND id = {}",
                    tasks[1]
                )
            )
            .await,
            1,
            "{engine}"
        );
        assert_eq!(
            count(
                &db,
                "SELECT COUNT(*) FROM projects WHERE name = 'Some birthday'"
            )
            .await,
            0,
            "{engine}"
        );
        let unknown = steward_domains::changes::with_dependencies(&staged, &["nope".to_owned()]);
        assert!(unknown.is_err(), "{engine}");
    }
}

/// The first open inbox tasks of the demo.
async fn inbox_tasks(db: &steward_sql::Database, n: usize) -> Vec<i64> {
    rows(
        db,
        "SELECT id FROM tasks WHERE project_id IS NULL AND status = 'OPEN' ORDER BY id",
    )
    .await
    .iter()
    .take(n)
    .map(|r| r[0].as_i64().unwrap())
    .collect()
}

/// Lost updates: someone else's commit lands while the apply runs, under a row lock they hold (a real
/// concurrent transaction); the apply waits for it, sees what it wrote and is refused with the task's name,
/// and the other writer's value stays. A move, a completion and a move whose source changed.
#[tokio::test]
async fn a_commit_that_lands_while_applying_is_not_overwritten_on_every_engine() {
    for (engine, db) in all_demos().await {
        let store = store(db.clone());
        let tasks = inbox_tasks(&db, 3).await;
        let projects: Vec<i64> = rows(&db, "SELECT id FROM projects ORDER BY id LIMIT 2")
            .await
            .iter()
            .map(|r| r[0].as_i64().unwrap())
            .collect();
        let (mine, theirs) = (projects[0], projects[1]);
        let cases = [
            (
                change(
                    "r1",
                    "move_task",
                    json!({"task_id": tasks[0], "project_id": mine}),
                ),
                format!(
                    "UPDATE tasks SET project_id = {theirs} WHERE id = {}",
                    tasks[0]
                ),
                format!("SELECT project_id FROM tasks WHERE id = {}", tasks[0]),
                theirs,
            ),
            (
                change("r2", "complete_task", json!({"task_id": tasks[1]})),
                format!(
                    "UPDATE tasks SET status = 'DONE', title = 'Done by them' WHERE id = {}",
                    tasks[1]
                ),
                format!(
                    "SELECT COUNT(*) FROM tasks WHERE title = 'Done by them' AND id = {}",
                    tasks[1]
                ),
                1,
            ),
            (
                change(
                    "r3",
                    "move_task",
                    json!({"task_id": tasks[2], "project_id": mine}),
                ),
                format!(
                    "UPDATE tasks SET project_id = {mine} WHERE id = {}",
                    tasks[2]
                ),
                format!("SELECT project_id FROM tasks WHERE id = {}", tasks[2]),
                mine,
            ),
        ];
        for (c, theirs_sql, check, expected) in cases {
            let staged = stage_all(&store, std::slice::from_ref(&c)).await;
            let title = rows(
                &db,
                &format!(
                    "SELECT title FROM tasks WHERE id = {}",
                    c.arguments["task_id"]
                ),
            )
            .await[0][0]
                .as_str()
                .unwrap()
                .to_owned();
            let before = count(&db, "SELECT COUNT(*) FROM audit_log").await;
            // Their transaction holds the row (on SQLite: the database) while the apply starts.
            let mut other = db.begin_write().await.unwrap();
            other.execute(&theirs_sql, &[]).await.unwrap();
            let applying = {
                let store = store.clone();
                let staged = staged.clone();
                tokio::spawn(async move { store.apply(&staged, &[]).await })
            };
            tokio::time::sleep(std::time::Duration::from_millis(400)).await;
            other.commit().await.unwrap();
            let result = applying.await.unwrap();
            let error = result.expect_err(&format!(
                "{engine} {}: applied over their commit",
                c.call_id
            ));
            assert!(
                error
                    .message
                    .starts_with("The data changed since the changes were staged"),
                "{engine}: {}",
                error.message
            );
            assert!(
                error.message.contains(&title) || error.message.contains("Done by them"),
                "{engine}: the refusal names the task: {}",
                error.message
            );
            assert_eq!(
                count(&db, &check).await,
                expected,
                "{engine} {}: their value stays",
                c.call_id
            );
            assert_eq!(
                count(&db, "SELECT COUNT(*) FROM audit_log").await,
                before,
                "{engine}"
            );
        }
    }
}

/// Two change sets that move the same task out of the inbox, applied at once: one wins, the other is refused,
/// and the task ends where the winner put it. Several rounds, each racing for real.
#[tokio::test]
async fn two_sets_moving_one_task_apply_once_on_every_engine() {
    for (engine, db) in all_demos().await {
        let store = store(db.clone());
        let projects: Vec<i64> = rows(&db, "SELECT id FROM projects ORDER BY id LIMIT 2")
            .await
            .iter()
            .map(|r| r[0].as_i64().unwrap())
            .collect();
        for task in inbox_tasks(&db, 4).await {
            let a = stage_all(
                &store,
                &[change(
                    &format!("a{task}"),
                    "move_task",
                    json!({"task_id": task, "project_id": projects[0]}),
                )],
            )
            .await;
            let mut b = stage_all(
                &store,
                &[change(
                    &format!("b{task}"),
                    "move_task",
                    json!({"task_id": task, "project_id": projects[1]}),
                )],
            )
            .await;
            b[0].change.run_id = "run-other".to_owned();
            let (ra, rb) = tokio::join!(store.apply(&a, &[]), store.apply(&b, &[]));
            assert!(
                ra.is_ok() != rb.is_ok(),
                "{engine}: task {task}: exactly one set applies: {ra:?} / {rb:?}"
            );
            let winner = if ra.is_ok() { projects[0] } else { projects[1] };
            assert_eq!(
                count(
                    &db,
                    &format!("SELECT project_id FROM tasks WHERE id = {task}")
                )
                .await,
                winner,
                "{engine}"
            );
        }
    }
}

/// A date said in words is resolved when staged and shown resolved; applied on another day, the change set
/// would write another date, so it is refused, naming both, and nothing is written. Applied the same day, the
/// row holds exactly the date shown. Every word the tools take ("today", "tomorrow", "yesterday") and both
/// writes that take a date.
#[tokio::test]
async fn a_date_in_words_is_written_as_shown_or_refused_on_every_engine() {
    use steward_domains::Store;
    use steward_domains::common::Clock;
    for (engine, db) in all_demos().await {
        let staged_on = Clock::parse("2026-11-01T10:00:00+01:00").unwrap();
        let applied_on = Clock::parse("2026-11-05T10:00:00+01:00").unwrap();
        let staging = Store::new(db.clone(), staged_on.clone(), None);
        let later = Store::new(db.clone(), applied_on, None);
        for (i, word) in ["tomorrow", "Today", " yesterday "].into_iter().enumerate() {
            let title = format!("Dated {i} {engine}");
            let plan = [change(
                &format!("d{i}"),
                "add_task",
                json!({"title": title, "due_date": word}),
            )];
            let staged = stage_all(&staging, &plan).await;
            let shown = &staged[0].output.content;
            assert!(shown.contains(", due 2026-1"), "{engine}: {shown}");
            assert!(!shown.contains(word.trim()), "{engine}: {shown}");
            let due = staged[0].output.changes[0]
                .fields
                .iter()
                .find(|f| f.column == "due_date")
                .and_then(|f| f.after.clone())
                .unwrap();
            assert!(
                due.starts_with("2026-1"),
                "{engine}: the preview shows the day: {due}"
            );
            let refused = later.apply(&staged, &[]).await.unwrap_err();
            assert!(
                refused
                    .message
                    .contains(&format!("where {due} was shown when staged")),
                "{engine}: {}",
                refused.message
            );
            let written = format!("SELECT COUNT(*) FROM tasks WHERE title = '{title}'");
            assert_eq!(count(&db, &written).await, 0, "{engine}");
            staging.apply(&staged, &[]).await.unwrap();
            let on = rows(
                &db,
                &format!("SELECT due_date FROM tasks WHERE title = '{title}'"),
            )
            .await;
            assert!(
                on[0][0].as_str().unwrap().starts_with(&due),
                "{engine}: {:?} vs {due}",
                on[0][0]
            );
        }
        // An expense dated in words: its day is in the approved result, and another day is refused.
        let plan = [change(
            "x1",
            "add_expense",
            json!({"description": "Dated taxi", "net_amount": 10, "tax_rate": 0.2, "date": "yesterday"}),
        )];
        let staged = stage_all(&staging, &plan).await;
        assert!(
            staged[0].output.content.contains("2026-10-31"),
            "{engine}: {}",
            staged[0].output.content
        );
        assert!(later.apply(&staged, &[]).await.is_err(), "{engine}");
        assert_eq!(
            count(
                &db,
                "SELECT COUNT(*) FROM expenses WHERE description = 'Dated taxi'"
            )
            .await,
            0,
            "{engine}"
        );
    }
}

/// Choosing the second of two changes of one task brings the first (the second was staged after it), so the
/// chosen change applies; the same for a completion after a move. A change of another task stays out.
#[tokio::test]
async fn choosing_a_later_change_of_a_task_brings_the_earlier_ones_on_every_engine() {
    for (engine, db) in all_demos().await {
        let store = store(db.clone());
        let tasks = inbox_tasks(&db, 2).await;
        let projects: Vec<i64> = rows(&db, "SELECT id FROM projects ORDER BY id LIMIT 2")
            .await
            .iter()
            .map(|r| r[0].as_i64().unwrap())
            .collect();
        let plan = [
            change(
                "t1",
                "move_task",
                json!({"task_id": tasks[0], "project_id": projects[0]}),
            ),
            change(
                "t2",
                "move_task",
                json!({"task_id": tasks[1], "project_id": projects[0]}),
            ),
            change(
                "t3",
                "move_task",
                json!({"task_id": tasks[0], "project_id": projects[1]}),
            ),
            change("t4", "complete_task", json!({"task_id": tasks[0]})),
        ];
        let staged = stage_all(&store, &plan).await;
        let selected =
            steward_domains::changes::with_dependencies(&staged, &["t3".to_owned()]).unwrap();
        assert_eq!(selected, [true, false, true, false], "{engine}");
        let selected =
            steward_domains::changes::with_dependencies(&staged, &["t4".to_owned()]).unwrap();
        assert_eq!(selected, [true, false, true, true], "{engine}");
        store.apply_selected(&staged, &selected, &[]).await.unwrap();
        assert_eq!(
            count(
                &db,
                &format!("SELECT project_id FROM tasks WHERE id = {}", tasks[0])
            )
            .await,
            projects[1],
            "{engine}"
        );
        assert_eq!(
            count(
                &db,
                &format!(
                    "SELECT COUNT(*) FROM tasks WHERE id = {} AND project_id IS NULL",
                    tasks[1]
                )
            )
            .await,
            1,
            "{engine}: the other task stays"
        );
    }
}
