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
