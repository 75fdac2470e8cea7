//! Change sets at a terminal (a real pseudo-terminal): sorting the inbox stages two new projects and eight
//! moves, nothing is written while the person reads them, and one answer applies (or discards) them all.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;

/// The id of the change set `ask` says it saved.
fn saved_id(stderr: &str) -> String {
    stderr
        .split("as change set ")
        .nth(1)
        .and_then(|rest| rest.split(':').next())
        .unwrap_or_else(|| panic!("{stderr}"))
        .to_owned()
}

fn demo() -> String {
    let dir = scratch_dir("changes");
    let db = format!("{dir}/demo.sqlite");
    let out = steward(&["demo", "--db", &db], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    db
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
    // The rows, by table: the two projects inserted, each task's project before → after.
    assert!(shown.contains("projects:"), "{shown}");
    assert!(shown.contains("+ #-1  name: Birthday party"), "{shown}");
    assert!(shown.contains("tasks:"), "{shown}");
    assert_eq!(shown.matches("project: inbox → #-").count(), 8, "{shown}");
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

/// Without a terminal the change set is saved (exit code 4), listed, shown, and applied once with
/// `steward changes`; a set whose data changed meanwhile writes nothing and waits again, to be discarded.
#[tokio::test]
async fn without_a_terminal_the_change_set_is_saved_and_decided_with_steward_changes() {
    let db = demo();
    let tasks = inbox(&db);
    let data = scratch_dir("changes-saved");
    let env_base = |base: &str| {
        vec![
            ("OPENAI_BASE_URL", base.to_owned()),
            ("XDG_DATA_HOME", data.clone()),
        ]
    };
    let run = |args: &[&str], env: &[(&str, String)]| {
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        steward(args, &env, "")
    };
    let server = mock_openai(inbox_model(&tasks)).await;
    let base = format!("{}/v1", server.uri());
    let projects = sqlite3(&db, "SELECT count(*) FROM projects");
    let out = run(
        &[
            "ask",
            "--db",
            &db,
            "-a",
            "tasks",
            "Sort my inbox into projects",
        ],
        &env_base(&base),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("10 changes wait for your approval"),
        "{stderr}"
    );
    let id = saved_id(&stderr);
    assert_eq!(
        sqlite3(&db, "SELECT count(*) FROM projects"),
        projects,
        "nothing written yet"
    );

    let env = vec![("XDG_DATA_HOME", data.clone())];
    let listed = run(&["changes", "list"], &env);
    let listed_text = text(&listed.stdout);
    assert!(listed_text.contains(&id), "{listed_text}");
    assert!(
        listed_text.contains("2 create_project, 8 move_task"),
        "{listed_text}"
    );
    let shown = run(&["changes", "show", &id[..8]], &env);
    assert!(
        text(&shown.stdout).contains("Created project #-1 Birthday party."),
        "{}",
        text(&shown.stdout)
    );
    assert_eq!(
        text(&shown.stdout).matches("project: inbox → #-").count(),
        8,
        "{}",
        text(&shown.stdout)
    );

    let applied = run(&["changes", "apply", &id[..8]], &env);
    let said = text(&applied.stderr);
    assert_eq!(applied.status.code(), Some(0), "{said}");
    assert!(
        said.contains("10 changes written (project -1 is #"),
        "{said}"
    );
    let birthday = sqlite3(&db, "SELECT id FROM projects WHERE name = 'Birthday party'");
    assert_eq!(
        sqlite3(
            &db,
            &format!("SELECT count(*) FROM tasks WHERE project_id = {birthday}")
        ),
        "4"
    );
    // Once only.
    let again = run(&["changes", "apply", &id], &env);
    assert_eq!(again.status.code(), Some(2), "{}", text(&again.stderr));
    assert!(
        text(&again.stderr).contains("was already applied by"),
        "{}",
        text(&again.stderr)
    );
    assert_eq!(sqlite3(&db, "SELECT count(*) FROM tool_calls"), "10");
    // The decision is in the audit trail, with who made it.
    let audit = run(&["audit", "list", "--all", "--json"], &env);
    let trail = text(&audit.stdout);
    assert!(trail.contains("\"approval\": \"applied\""), "{trail}");

    // A second set, staged on the new projects' neighbours; the data changes before it is applied.
    let task = sqlite3(&db, "SELECT min(id) FROM tasks WHERE status = 'OPEN'");
    let server = mock_openai(vec![
        tool_reply("t1", "get_inbox_tasks", "{}"),
        tool_reply("c1", "complete_task", &format!(r#"{{"task_id": {task}}}"#)),
        text_reply("Done."),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let out = run(
        &["ask", "--db", &db, "-a", "tasks", "Finish the first task"],
        &env_base(&base),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}{}", text(&out.stdout));
    let second = saved_id(&stderr);
    sqlite3(
        &db,
        &format!("UPDATE tasks SET title = 'Renamed meanwhile' WHERE id = {task}"),
    );
    let failed = run(&["changes", "apply", &second], &env);
    let said = text(&failed.stderr);
    assert_eq!(failed.status.code(), Some(2), "{said}");
    assert!(
        said.contains("The data changed since the changes were staged"),
        "{said}"
    );
    assert_eq!(
        sqlite3(&db, &format!("SELECT status FROM tasks WHERE id = {task}")),
        "OPEN"
    );
    let discarded = run(&["changes", "discard", &second], &env);
    assert_eq!(
        discarded.status.code(),
        Some(0),
        "{}",
        text(&discarded.stderr)
    );
    let left = run(&["changes", "list"], &env);
    assert!(
        text(&left.stderr).contains("no change set waits"),
        "{}{}",
        text(&left.stdout),
        text(&left.stderr)
    );
}

/// The person says yes, but the data changed while they read: nothing is written, and `ask` says so with exit
/// code 1.
#[tokio::test(flavor = "multi_thread")]
async fn a_yes_when_the_data_changed_meanwhile_writes_nothing_and_exits_1() {
    let db = demo();
    let tasks = inbox(&db);
    let server = mock_openai(inbox_model(&tasks)).await;
    let base = format!("{}/v1", server.uri());
    let db2 = db.clone();
    let renamed = tasks[2];
    let (shown, code) = tokio::task::spawn_blocking(move || {
        ask_at_a_terminal(&db2, &base, "y\n", || {
            sqlite3(
                &db2,
                &format!("UPDATE tasks SET title = 'Renamed meanwhile' WHERE id = {renamed}"),
            );
        })
    })
    .await
    .unwrap();
    assert_eq!(code, Some(1), "{shown}");
    assert!(
        shown.contains("not applied: The data changed since the changes were staged"),
        "{shown}"
    );
    assert_eq!(
        sqlite3(
            &db,
            "SELECT count(*) FROM projects WHERE name IN ('Birthday party', 'Garden')"
        ),
        "0"
    );
    assert_eq!(sqlite3(&db, "SELECT count(*) FROM tool_calls"), "0");
}

/// Four eyes: a role with `self_approval: false` and `approve_by: [manager]` cannot apply its own change set;
/// a manager can.
#[tokio::test]
async fn four_eyes_the_one_who_asked_cannot_apply_their_own_changes() {
    let db = demo();
    let dir = scratch_dir("changes-four-eyes");
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        format!(
            "databases:\n  shop: sqlite://{db}\nroles:\n  clerk:\n    approve_by: [manager]\n    self_approval: false\n  \
             manager: {{}}\n  intern: {{}}\nprincipals:\n  ada: {{role: clerk}}\n  mia: {{role: manager}}\n  ian: {{role: intern}}\n"
        ),
    )
    .unwrap();
    let data = scratch_dir("changes-four-eyes-data");
    let server = mock_openai(vec![
        tool_reply("t1", "get_inbox_tasks", "{}"),
        tool_reply("p1", "create_project", r#"{"name": "Four eyes"}"#),
        text_reply("Staged."),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let out = steward(
        &[
            "ask",
            "-c",
            &config,
            "--principal",
            "ada",
            "-a",
            "tasks",
            "Make a project",
        ],
        &[("OPENAI_BASE_URL", &base), ("XDG_DATA_HOME", &data)],
        "",
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    let id = saved_id(&stderr);
    let decide = |who: &str| {
        steward(
            &["changes", "apply", "-c", &config, "--principal", who, &id],
            &[("XDG_DATA_HOME", &data)],
            "",
        )
    };
    let own = decide("ada");
    assert_eq!(own.status.code(), Some(2), "{}", text(&own.stderr));
    assert!(
        text(&own.stderr).contains("does not let ada apply their own changes"),
        "{}",
        text(&own.stderr)
    );
    let intern = decide("ian");
    assert_eq!(intern.status.code(), Some(2), "{}", text(&intern.stderr));
    assert!(
        text(&intern.stderr).contains(
            "are applied by a principal with the role manager; ian has the role `intern`"
        ),
        "{}",
        text(&intern.stderr)
    );
    assert_eq!(
        sqlite3(
            &db,
            "SELECT count(*) FROM projects WHERE name = 'Four eyes'"
        ),
        "0"
    );
    let manager = decide("mia");
    assert_eq!(manager.status.code(), Some(0), "{}", text(&manager.stderr));
    assert_eq!(
        sqlite3(
            &db,
            "SELECT count(*) FROM projects WHERE name = 'Four eyes'"
        ),
        "1"
    );
}

/// `steward changes apply ID --only CALL` applies that change and the ones it uses; the rest is discarded.
#[tokio::test]
async fn applying_only_some_changes_brings_what_they_use() {
    let db = demo();
    let tasks = inbox(&db);
    let data = scratch_dir("changes-only");
    let server = mock_openai(inbox_model(&tasks)).await;
    let base = format!("{}/v1", server.uri());
    let out = steward(
        &[
            "ask",
            "--db",
            &db,
            "-a",
            "tasks",
            "Sort my inbox into projects",
        ],
        &[("OPENAI_BASE_URL", &base), ("XDG_DATA_HOME", &data)],
        "",
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    let id = saved_id(&stderr);
    let shown = steward(&["changes", "show", &id], &[("XDG_DATA_HOME", &data)], "");
    assert!(
        text(&shown.stdout).contains("[m1] move_task"),
        "{}",
        text(&shown.stdout)
    );
    // m1 moves the second inbox task into the second new project (-2): that project comes with it.
    let some = steward(
        &["changes", "apply", &id, "--only", "m1"],
        &[("XDG_DATA_HOME", &data)],
        "",
    );
    let said = text(&some.stderr);
    assert_eq!(some.status.code(), Some(0), "{said}");
    assert!(
        said.contains("2 changes written (project -2 is #"),
        "{said}"
    );
    let garden = sqlite3(&db, "SELECT id FROM projects WHERE name = 'Garden'");
    assert_eq!(
        sqlite3(
            &db,
            &format!("SELECT project_id FROM tasks WHERE id = {}", tasks[1])
        ),
        garden
    );
    assert_eq!(
        sqlite3(
            &db,
            "SELECT count(*) FROM projects WHERE name = 'Birthday party'"
        ),
        "0"
    );
    assert_eq!(sqlite3(&db, "SELECT count(*) FROM tool_calls"), "2");
}

/// The first column of `sql`'s rows on the database `db` (any engine), as `steward sql run --json` reads them.
fn column(db: &str, sql: &str) -> Vec<String> {
    let out = steward(&["sql", "run", "--db", db, "--json", sql], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| match &r[0] {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// Runs the write `sql` on the server database `name` (at `url`) with the engine's own client: someone else's
/// change.
fn write(url: &str, name: &str, sql: &str) {
    if url.starts_with("postgres") {
        client(
            "psql",
            &["-h", "127.0.0.1", "-U", "postgres", "-d", name, "-c", sql],
        );
    } else {
        client(
            "mysql",
            &["-h", "127.0.0.1", "-u", "root", "-D", name, "-e", sql],
        );
    }
}

/// The inbox scenario on a server database `url`: `ask` (no terminal) stages two creates and eight moves and
/// writes nothing; the inbox changes (a task moved by someone else) and applying writes nothing and says so;
/// after the task is put back, applying writes exactly those rows, and applying again writes nothing more.
async fn the_inbox_change_set_on(url: &str, name: &str) {
    let out = steward(&["demo", "--db", url], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let inbox_sql =
        "SELECT id FROM tasks WHERE project_id IS NULL AND status = 'OPEN' ORDER BY id LIMIT 8";
    let tasks: Vec<i64> = column(url, inbox_sql)
        .iter()
        .map(|t| t.parse().unwrap())
        .collect();
    assert_eq!(tasks.len(), 8);
    let data = scratch_dir("changes-engine");
    let server = mock_openai(inbox_model(&tasks)).await;
    let base = format!("{}/v1", server.uri());
    let count = |sql: &str| column(url, sql)[0].clone();
    let projects = count("SELECT count(*) FROM projects");
    let out = steward(
        &[
            "ask",
            "--db",
            url,
            "-a",
            "tasks",
            "Sort my inbox into projects",
        ],
        &[("OPENAI_BASE_URL", &base), ("XDG_DATA_HOME", &data)],
        "",
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("10 changes wait for your approval"),
        "{stderr}"
    );
    let id = saved_id(&stderr);
    assert_eq!(
        count("SELECT count(*) FROM projects"),
        projects,
        "nothing written yet"
    );
    assert_eq!(column(url, inbox_sql).len(), 8);

    // Someone files the first task meanwhile: nothing is written, and the message says what changed.
    let env = [("XDG_DATA_HOME", data.as_str())];
    let first = tasks[0];
    let existing = count("SELECT min(id) FROM projects");
    write(
        url,
        name,
        &format!("UPDATE tasks SET project_id = {existing} WHERE id = {first}"),
    );
    let refused = steward(&["changes", "apply", &id], &env, "");
    let said = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert!(
        said.contains("The data changed since the changes were staged"),
        "{said}"
    );
    assert!(said.contains(&format!("finds tasks #{first} ")), "{said}");
    assert!(said.contains("(it was inbox when staged)"), "{said}");
    assert_eq!(
        count("SELECT count(*) FROM projects"),
        projects,
        "nothing written"
    );

    // Put back, the set applies: exactly those rows.
    write(
        url,
        name,
        &format!("UPDATE tasks SET project_id = NULL WHERE id = {first}"),
    );
    let applied = steward(&["changes", "apply", &id], &env, "");
    assert_eq!(applied.status.code(), Some(0), "{}", text(&applied.stderr));
    for (i, task) in tasks.iter().enumerate() {
        let name = if i % 2 == 0 {
            "Birthday party"
        } else {
            "Garden"
        };
        assert_eq!(
            column(
                url,
                &format!(
                    "SELECT p.name FROM tasks t JOIN projects p ON p.id = t.project_id WHERE t.id = {task}"
                )
            ),
            [name]
        );
    }
    let after = count("SELECT count(*) FROM projects");
    assert_eq!(
        after.parse::<i64>().unwrap(),
        projects.parse::<i64>().unwrap() + 2
    );
    // Twice: refused, nothing more written.
    let again = steward(&["changes", "apply", &id], &env, "");
    assert_eq!(again.status.code(), Some(2), "{}", text(&again.stderr));
    assert_eq!(count("SELECT count(*) FROM projects"), after);
}

#[tokio::test]
async fn the_inbox_change_set_on_postgres() {
    if !postgres_up() {
        return;
    }
    let name = fresh_name("steward_changes");
    let (url, _cleanup) = ServerDb::postgres(&name);
    the_inbox_change_set_on(&url, &name).await;
}

#[tokio::test]
async fn the_inbox_change_set_on_mariadb() {
    if !mariadb_up() {
        return;
    }
    let name = fresh_name("steward_changes");
    let (url, _cleanup) = ServerDb::mariadb(&name);
    the_inbox_change_set_on(&url, &name).await;
}

/// Four eyes at a terminal too: a clerk whose changes a manager applies is not asked to apply them; the set is
/// saved for the manager, and nothing is written.
#[tokio::test(flavor = "multi_thread")]
async fn four_eyes_at_a_terminal_saves_the_set_instead_of_asking() {
    let db = demo();
    let dir = scratch_dir("changes-four-eyes-tty");
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        format!(
            "databases:\n  shop: sqlite://{db}\nroles:\n  clerk: {{approve_by: [manager], self_approval: false}}\n  \
             manager: {{}}\nprincipals:\n  ada: {{role: clerk}}\n"
        ),
    )
    .unwrap();
    let data = scratch_dir("changes-four-eyes-tty-data");
    let server = mock_openai(vec![
        tool_reply("p1", "create_project", r#"{"name": "At a terminal"}"#),
        text_reply("Staged."),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let command = format!(
        "{} ask -c '{config}' --principal ada -a tasks 'Make a project'",
        env!("CARGO_BIN_EXE_steward"),
    );
    let out = tokio::task::spawn_blocking(move || {
        let mut child = isolated(
            "script",
            &["-qec", &command, "/dev/null"],
            &[("OPENAI_BASE_URL", &base), ("XDG_DATA_HOME", &data)],
        )
        .spawn()
        .unwrap();
        {
            use std::io::Write as _;
            let mut stdin = child.stdin.take().unwrap();
            std::thread::sleep(std::time::Duration::from_millis(1500));
            let _ = stdin.write_all(b"y\n");
        }
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    let shown = text(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{shown}");
    assert!(shown.contains("four eyes:"), "{shown}");
    assert!(
        shown.contains("does not let ada apply their own changes"),
        "{shown}"
    );
    assert!(!shown.contains("[y]es / [n]o"), "{shown}");
    assert!(shown.contains("saved:"), "{shown}");
    assert_eq!(
        sqlite3(
            &db,
            "SELECT count(*) FROM projects WHERE name = 'At a terminal'"
        ),
        "0"
    );
}

/// Four eyes on a call the clerk's role approves one by one: `steward approvals approve` refuses the clerk
/// (and an intern) and takes a manager's yes.
#[test]
fn four_eyes_hold_for_steward_approvals_approve() {
    let db = demo();
    let dir = scratch_dir("approvals-four-eyes");
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        format!(
            "databases:\n  shop: sqlite://{db}\nroles:\n  clerk: {{approve_by: [manager], self_approval: false, approve: [add_expense]}}\n  \
             manager: {{}}\n  intern: {{}}\nprincipals:\n  ada: {{role: clerk}}\n  mia: {{role: manager}}\n  ian: {{role: intern}}\n"
        ),
    )
    .unwrap();
    let data = scratch_dir("approvals-four-eyes-data");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(mock_openai(vec![
        tool_reply(
            "e1",
            "add_expense",
            r#"{"description": "Four eyes taxi", "net_amount": 10, "tax_rate": 0.2, "date": "2026-11-21"}"#,
        ),
        text_reply("Added."),
    ]));
    let base = format!("{}/v1", server.uri());
    let env = [
        ("OPENAI_BASE_URL", base.as_str()),
        ("XDG_DATA_HOME", data.as_str()),
    ];
    let out = steward(
        &[
            "ask",
            "-c",
            &config,
            "--principal",
            "ada",
            "-a",
            "expenses",
            "Taxi for 10",
        ],
        &env,
        "",
    );
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let listed = steward(&["approvals", "list", "--json"], &env, "");
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let id = listed[0]["id"].as_str().unwrap().to_owned();
    let approve = |who: &str| {
        steward(
            &[
                "approvals",
                "approve",
                "-c",
                &config,
                "--principal",
                who,
                &id,
            ],
            &env,
            "",
        )
    };
    for who in ["ada", "ian"] {
        let refused = approve(who);
        assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
        assert!(
            text(&refused.stderr).contains("role"),
            "{}",
            text(&refused.stderr)
        );
    }
    let taxis = || {
        sqlite3(
            &db,
            "SELECT count(*) FROM expenses WHERE description = 'Four eyes taxi'",
        )
    };
    assert_eq!(taxis(), "0");
    let yes = approve("mia");
    assert_eq!(yes.status.code(), Some(0), "{}", text(&yes.stderr));
    let resumed = steward(
        &[
            "runs",
            "resume",
            "-c",
            &config,
            listed[0]["run_id"].as_str().unwrap(),
        ],
        &env,
        "",
    );
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed.stderr));
    assert_eq!(taxis(), "1");
}

/// An id that names no change set says so, in the words of change sets.
#[test]
fn an_unknown_change_set_is_named_as_one() {
    let data = scratch_dir("changes-unknown");
    let out = steward(
        &["changes", "apply", "nope"],
        &[("XDG_DATA_HOME", &data)],
        "",
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(
            "no change set matches `nope` (`steward changes list` shows the ones that wait)"
        ),
        "{}",
        text(&out.stderr)
    );
}

/// Runs `steward ARGS` at a terminal (a real pseudo-terminal), typing each of `lines` a second apart, and
/// returns what the terminal showed and the exit code.
fn steward_at_a_terminal(
    args: &[&str],
    env: &[(&str, &str)],
    lines: &[&str],
) -> (String, Option<i32>) {
    let quoted: Vec<String> = args
        .iter()
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect();
    let command = format!("{} {}", env!("CARGO_BIN_EXE_steward"), quoted.join(" "));
    let mut child = isolated("script", &["-qec", &command, "/dev/null"], env)
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        for line in lines {
            std::thread::sleep(std::time::Duration::from_millis(1500));
            let _ = stdin.write_all(format!("{line}\n").as_bytes());
        }
        std::thread::sleep(std::time::Duration::from_millis(1000));
    }
    let out = child.wait_with_output().unwrap();
    (text(&out.stdout), out.status.code())
}

/// Four eyes on calls approved one at a time, at a terminal, on every command that asks there: `ask`, `chat`,
/// `tools call` and `runs resume` never ask the clerk `y/n` for their own call; the call waits for a manager
/// (saved), the clerk's typed `y` writes nothing, and the audit trail holds no approval by the clerk.
#[test]
fn four_eyes_at_a_terminal_hold_every_call_approved_one_at_a_time() {
    let db = demo();
    let dir = scratch_dir("four-eyes-calls");
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        format!(
            "databases:\n  shop: sqlite://{db}\nroles:\n  clerk: {{approve_by: [manager], self_approval: false, \
             approve: [add_expense]}}\n  selfless: {{self_approval: false}}\n  manager: {{}}\nprincipals:\n  \
             ada: {{role: clerk}}\n  sam: {{role: selfless}}\n  mia: {{role: manager}}\n"
        ),
    )
    .unwrap();
    let data = scratch_dir("four-eyes-calls-data");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let expense = |what: &str| {
        format!(
            r#"{{"description": "{what}", "net_amount": 10, "tax_rate": 0.2, "date": "2026-11-21"}}"#
        )
    };
    let expenses = |what: &str| {
        sqlite3(
            &db,
            &format!("SELECT count(*) FROM expenses WHERE description = '{what}'"),
        )
    };
    let waiting = |env: &[(&str, &str)]| -> Vec<serde_json::Value> {
        let listed = steward(&["approvals", "list", "--json"], env, "");
        let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
        listed
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["decision"].is_null())
            .cloned()
            .collect()
    };
    let no_prompt = |shown: &str| {
        assert!(!shown.contains("[y]es / [n]o"), "{shown}");
        assert!(shown.contains("four eyes:"), "{shown}");
    };

    // ask: the call waits, saved for a manager; the clerk's `y` is never asked for.
    let server = runtime.block_on(mock_openai(vec![
        tool_reply("e1", "add_expense", &expense("Eyes ask")),
        tool_reply("e2", "add_expense", &expense("Eyes resume")),
        text_reply("Added."),
    ]));
    let base = format!("{}/v1", server.uri());
    let env = [
        ("OPENAI_BASE_URL", base.as_str()),
        ("XDG_DATA_HOME", data.as_str()),
    ];
    let (shown, code) = steward_at_a_terminal(
        &[
            "ask",
            "-c",
            &config,
            "--principal",
            "ada",
            "-a",
            "expenses",
            "Taxi",
        ],
        &env,
        &["y", "y"],
    );
    assert_eq!(code, Some(4), "{shown}");
    no_prompt(&shown);
    assert!(
        shown.contains("does not let ada apply their own changes"),
        "{shown}"
    );
    assert_eq!(expenses("Eyes ask"), "0");
    let pending = waiting(&env);
    assert_eq!(pending.len(), 1, "{pending:?}");
    let run_id = pending[0]["run_id"].as_str().unwrap().to_owned();

    // runs resume: a manager approved the first call, which runs; the next call waits again.
    let id = pending[0]["id"].as_str().unwrap().to_owned();
    let approved = steward(
        &[
            "approvals",
            "approve",
            "-c",
            &config,
            "--principal",
            "mia",
            &id,
        ],
        &env,
        "",
    );
    assert_eq!(
        approved.status.code(),
        Some(0),
        "{}",
        text(&approved.stderr)
    );
    let (shown, code) = steward_at_a_terminal(
        &["runs", "resume", "-c", &config, &run_id],
        &env,
        &["y", "y"],
    );
    assert_eq!(code, Some(4), "{shown}");
    no_prompt(&shown);
    assert_eq!(expenses("Eyes ask"), "1", "{shown}");
    assert_eq!(expenses("Eyes resume"), "0", "{shown}");
    assert_eq!(waiting(&env).len(), 1);

    // chat: the run is saved for a manager and the conversation goes on; nothing written.
    let server = runtime.block_on(mock_openai(vec![
        tool_reply("e3", "add_expense", &expense("Eyes chat")),
        text_reply("Added."),
    ]));
    let base = format!("{}/v1", server.uri());
    let env = [
        ("OPENAI_BASE_URL", base.as_str()),
        ("XDG_DATA_HOME", data.as_str()),
    ];
    let (shown, _) = steward_at_a_terminal(
        &[
            "chat",
            "-c",
            &config,
            "--principal",
            "ada",
            "-a",
            "expenses",
        ],
        &env,
        &["Taxi", "y", "y"],
    );
    no_prompt(&shown);
    assert!(shown.contains("waiting for approval:"), "{shown}");
    assert_eq!(expenses("Eyes chat"), "0", "{shown}");
    assert_eq!(waiting(&env).len(), 2);

    // tools call, a call the role approves one at a time: not run, whatever the clerk types.
    let (shown, code) = steward_at_a_terminal(
        &[
            "tools",
            "call",
            "-c",
            &config,
            "--principal",
            "ada",
            "add_expense",
            &expense("Eyes tool"),
        ],
        &env,
        &["y", "y"],
    );
    assert_eq!(code, Some(4), "{shown}");
    no_prompt(&shown);
    assert_eq!(expenses("Eyes tool"), "0", "{shown}");

    // tools call, a write held for review: staged as a change set a manager applies, the asker may not.
    for who in ["ada", "sam"] {
        let name = format!("Eyes project {who}");
        let (shown, code) = steward_at_a_terminal(
            &[
                "tools",
                "call",
                "-c",
                &config,
                "--principal",
                who,
                "create_project",
                &format!(r#"{{"name": "{name}"}}"#),
            ],
            &env,
            &["y", "y"],
        );
        assert_eq!(code, Some(4), "{shown}");
        no_prompt(&shown);
        let count = || {
            sqlite3(
                &db,
                &format!("SELECT count(*) FROM projects WHERE name = '{name}'"),
            )
        };
        assert_eq!(count(), "0", "{shown}");
        let set = saved_id(&shown);
        let own = steward(
            &["changes", "apply", "-c", &config, "--principal", who, &set],
            &env,
            "",
        );
        assert_ne!(own.status.code(), Some(0), "{}", text(&own.stderr));
        assert_eq!(count(), "0");
        let theirs = steward(
            &[
                "changes",
                "apply",
                "-c",
                &config,
                "--principal",
                "mia",
                &set,
            ],
            &env,
            "",
        );
        assert_eq!(theirs.status.code(), Some(0), "{}", text(&theirs.stderr));
        assert_eq!(count(), "1");
    }

    // A role that may not apply its own changes, taken without a name (`--role`): no one can be told apart
    // from the asker, so its own `y` writes nothing and its own `changes apply` is refused.
    let name = "Eyes project nameless";
    let (shown, code) = steward_at_a_terminal(
        &[
            "tools",
            "call",
            "-c",
            &config,
            "--role",
            "selfless",
            "create_project",
            &format!(r#"{{"name": "{name}"}}"#),
        ],
        &env,
        &["y", "y"],
    );
    assert_eq!(code, Some(4), "{shown}");
    no_prompt(&shown);
    let set = saved_id(&shown);
    let own = steward(
        &[
            "changes", "apply", "-c", &config, "--role", "selfless", &set,
        ],
        &env,
        "",
    );
    assert_ne!(own.status.code(), Some(0), "{}", text(&own.stderr));
    assert!(
        text(&own.stderr).contains("no name"),
        "{}",
        text(&own.stderr)
    );
    assert_eq!(
        sqlite3(
            &db,
            &format!("SELECT count(*) FROM projects WHERE name = '{name}'")
        ),
        "0"
    );

    // The audit trail records no call approved by the clerk.
    let audit = steward(&["audit", "list", "--json"], &env, "");
    let audit = text(&audit.stdout);
    assert!(!audit.contains(r#""approved_by": "ada""#), "{audit}");
    assert!(audit.contains(r#""approved_by": "mia""#), "{audit}");
}

/// A role's row filters bind the built-in writes and their change sets: with `rows: {tasks: "project_id = 1"}`
/// a hidden task cannot be completed, moved or named (its title never printed), a visible one cannot be moved
/// out of sight, no task is added outside it; and a reviewer whose role hides a row a change set writes may not
/// apply it. Judged by the rows and by what was printed.
fn row_filters_bind_the_built_in_writes_on(url: &str) {
    let dir = scratch_dir("rows-writes");
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        format!(
            "databases:\n  shop: '{url}'\nroles:\n  clerk:\n    sql:\n      rows: {{tasks: \"project_id = 1\"}}\n  \
             asker: {{approve_by: [manager, boss], approve: [complete_task]}}\n  manager:\n    sql:\n      rows: {{tasks: \"project_id = 1\"}}\n  \
             boss: {{}}\nprincipals:\n  bob: {{role: clerk}}\n  ada: {{role: asker}}\n  mia: {{role: manager}}\n  \
             max: {{role: boss}}\n"
        ),
    )
    .unwrap();
    let data = scratch_dir("rows-writes-data");
    let env = [("XDG_DATA_HOME", data.as_str())];
    let one = |sql: &str| column(url, sql).first().cloned().unwrap_or_default();
    let hidden_id =
        &one("SELECT id FROM tasks WHERE project_id = 3 AND status = 'OPEN' ORDER BY id LIMIT 1");
    let hidden_title = &one(&format!("SELECT title FROM tasks WHERE id = {hidden_id}"));
    let visible_id =
        one("SELECT id FROM tasks WHERE project_id = 1 AND status = 'OPEN' ORDER BY id LIMIT 1");
    let state = |id: &str| {
        format!(
            "{} {}",
            one(&format!("SELECT project_id FROM tasks WHERE id = {id}")),
            one(&format!("SELECT status FROM tasks WHERE id = {id}"))
        )
    };
    let (hidden_before, visible_before) = (state(hidden_id), state(&visible_id));
    let call = |who: &str, tool: &str, args: String| {
        let out = steward(
            &[
                "tools",
                "call",
                "-c",
                &config,
                "--principal",
                who,
                tool,
                &args,
            ],
            &env,
            "",
        );
        (
            format!("{}{}", text(&out.stdout), text(&out.stderr)),
            out.status.code(),
        )
    };
    for (tool, args) in [
        ("complete_task", format!(r#"{{"task_id": {hidden_id}}}"#)),
        (
            "move_task",
            format!(r#"{{"task_id": {hidden_id}, "project_id": 1}}"#),
        ),
        (
            "move_task",
            format!(r#"{{"task_id": {hidden_id}, "project_id": 3}}"#),
        ),
    ] {
        let (shown, code) = call("bob", tool, args.clone());
        assert_ne!(code, Some(0), "{tool} {args}: {shown}");
        assert!(!shown.contains(hidden_title), "{tool} {args}: {shown}");
        assert!(
            shown.contains(&format!("There is no task with id {hidden_id}")),
            "{shown}"
        );
    }
    // A visible task moved out of sight, a task added outside it: refused, nothing written.
    let (shown, code) = call(
        "bob",
        "move_task",
        format!(r#"{{"task_id": {visible_id}, "project_id": 3}}"#),
    );
    assert_ne!(code, Some(0), "{shown}");
    assert!(
        shown.contains("outside the rows your role may see"),
        "{shown}"
    );
    let (shown, code) = call(
        "bob",
        "add_task",
        r#"{"title": "Out of sight", "project_id": 3}"#.to_owned(),
    );
    assert_ne!(code, Some(0), "{shown}");
    assert_eq!(
        one("SELECT count(*) FROM tasks WHERE title = 'Out of sight'"),
        "0"
    );
    assert_eq!(state(hidden_id), hidden_before);
    assert_eq!(state(&visible_id), visible_before);
    // The clerk still writes what they see.
    let (shown, code) = call(
        "bob",
        "complete_task",
        format!(r#"{{"task_id": {visible_id}}}"#),
    );
    assert_eq!(code, Some(0), "{shown}");
    assert!(state(&visible_id).ends_with("DONE"));

    // A change set that moves the hidden task, staged by someone who sees it: a manager whose role hides the
    // task may not apply it; one who sees it may.
    let (shown, code) = call(
        "ada",
        "move_task",
        format!(r#"{{"task_id": {hidden_id}, "project_id": 2}}"#),
    );
    assert_eq!(code, Some(4), "{shown}");
    let set = saved_id(&shown);
    let apply = |who: &str| {
        steward(
            &["changes", "apply", "-c", &config, "--principal", who, &set],
            &env,
            "",
        )
    };
    let refused = apply("mia");
    let said = format!("{}{}", text(&refused.stdout), text(&refused.stderr));
    assert_ne!(refused.status.code(), Some(0), "{said}");
    assert!(said.contains("rows your role does not see"), "{said}");
    assert!(!said.contains(hidden_title), "{said}");
    assert_eq!(state(hidden_id), hidden_before);

    // A call on the hidden task waiting for approval one at a time: not listed to the manager whose role hides
    // it, nor approved by them; a reviewer who sees it approves it.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(mock_openai(vec![
        tool_reply(
            "c1",
            "complete_task",
            &format!(r#"{{"task_id": {hidden_id}}}"#),
        ),
        text_reply("Done."),
    ]));
    let base = format!("{}/v1", server.uri());
    let model_env = [
        ("OPENAI_BASE_URL", base.as_str()),
        ("XDG_DATA_HOME", data.as_str()),
    ];
    let asked = steward(
        &[
            "ask",
            "-c",
            &config,
            "--principal",
            "ada",
            "-a",
            "tasks",
            "Finish it",
        ],
        &model_env,
        "",
    );
    assert_eq!(asked.status.code(), Some(4), "{}", text(&asked.stderr));
    let listed = steward(&["approvals", "list", "--json"], &env, "");
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let id = listed[0]["id"].as_str().unwrap().to_owned();
    let approve = |who: &str| {
        steward(
            &[
                "approvals",
                "approve",
                "-c",
                &config,
                "--principal",
                who,
                &id,
            ],
            &env,
            "",
        )
    };
    let refused = approve("mia");
    let said = format!("{}{}", text(&refused.stdout), text(&refused.stderr));
    assert_ne!(refused.status.code(), Some(0), "{said}");
    assert!(said.contains("rows your role does not see"), "{said}");
    let approved = approve("max");
    assert_eq!(
        approved.status.code(),
        Some(0),
        "{}",
        text(&approved.stderr)
    );
    assert_eq!(state(hidden_id), hidden_before, "approved, not yet resumed");
}

#[test]
fn row_filters_bind_the_built_in_writes_and_who_applies_them() {
    let db = demo();
    row_filters_bind_the_built_in_writes_on(&format!("sqlite://{db}"));
}

#[test]
fn row_filters_bind_the_built_in_writes_on_postgres() {
    if !postgres_up() {
        return;
    }
    let name = fresh_name("steward_rows_writes");
    let (url, _cleanup) = ServerDb::postgres(&name);
    let out = steward(&["demo", "--db", &url], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    row_filters_bind_the_built_in_writes_on(&url);
}

#[test]
fn row_filters_bind_the_built_in_writes_on_mariadb() {
    if !mariadb_up() {
        return;
    }
    let name = fresh_name("steward_rows_writes");
    let (url, _cleanup) = ServerDb::mariadb(&name);
    let out = steward(&["demo", "--db", &url], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    row_filters_bind_the_built_in_writes_on(&url);
}
