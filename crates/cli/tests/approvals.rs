//! Approvals across processes, as a user meets them: a write deep in a router's run waits for approval,
//! `steward ask` saves the run and exits 4, `steward approvals approve|deny` decides in another process, and
//! `steward runs resume` carries the run on there. Writes are counted with the engine's own client.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::Value;

struct Setup {
    db: String,
    config: String,
    data: String,
}

fn setup() -> Setup {
    let dir = scratch_dir("approvals");
    let db = format!("{dir}/demo.sqlite");
    let out = steward(&["demo", "--db", &db], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        format!(
            r#"databases:
  shop: sqlite://{db}
roles:
  bookkeeper:
    agents: [assistant, expenses]
    tools: [add_expense, list_expenses, expense_summary, current_date, calculator]
    approve: [add_expense]
principals:
  bob: {{role: bookkeeper}}
"#
        ),
    )
    .unwrap();
    Setup {
        db,
        config,
        data: scratch_dir("approvals-data"),
    }
}

const TAXI: &str =
    r#"{"description": "Taxi", "net_amount": 12.5, "tax_rate": 0.2, "date": "2026-11-21"}"#;

/// Asks through the router, whose expenses agent wants to add the taxi ride: the run waits, is saved, exit 4.
async fn ask_and_wait(s: &Setup, server: &wiremock::MockServer) -> (String, String) {
    let base = format!("{}/v1", server.uri());
    let out = steward(
        &[
            "ask",
            "--json",
            "-c",
            &s.config,
            "--principal",
            "bob",
            "Add a 12.50 taxi ride, 20% VAT",
        ],
        &[("OPENAI_BASE_URL", &base), ("XDG_DATA_HOME", &s.data)],
        "",
    );
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(4),
        "{stderr}\n{}",
        text(&out.stdout)
    );
    let waiting: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(waiting["outcome"], "awaiting_approval");
    let pending = &waiting["pending"][0];
    assert_eq!(pending["tool"], "add_expense");
    assert_eq!(
        pending["call_id"], "r1/e1",
        "qualified by the router's call"
    );
    assert!(
        pending["reason"]
            .as_str()
            .unwrap()
            .starts_with("[expenses]"),
        "{pending}"
    );
    assert!(stderr.contains("steward runs resume"), "{stderr}");
    (
        waiting["run_id"].as_str().unwrap().to_owned(),
        pending["approval_id"].as_str().unwrap().to_owned(),
    )
}

fn approvals_json(s: &Setup) -> Vec<Value> {
    let out = steward(
        &["approvals", "list", "--json"],
        &[("XDG_DATA_HOME", &s.data)],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn resume(s: &Setup, server: &wiremock::MockServer, run: &str) -> std::process::Output {
    let base = format!("{}/v1", server.uri());
    steward(
        &["runs", "resume", run, "-c", &s.config],
        &[("OPENAI_BASE_URL", &base), ("XDG_DATA_HOME", &s.data)],
        "",
    )
}

#[tokio::test]
async fn an_approval_given_in_another_process_resumes_the_router_and_its_specialist() {
    let s = setup();
    let before: i64 = sqlite3(&s.db, "SELECT count(*) FROM expenses")
        .parse()
        .unwrap();
    let server = mock_openai(vec![
        tool_reply(
            "r1",
            "expenses",
            r#"{"request": "Add a 12.50 taxi ride, 20% VAT"}"#,
        ),
        tool_reply("e1", "add_expense", TAXI),
        text_reply("Added the taxi ride."),
        text_reply("Done: the taxi ride is recorded."),
    ])
    .await;
    let (run, id) = ask_and_wait(&s, &server).await;
    assert_eq!(
        sqlite3(&s.db, "SELECT count(*) FROM expenses"),
        before.to_string()
    );
    let listed = approvals_json(&s);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["id"], id.as_str());

    // Resuming before deciding says what still waits.
    let out = resume(&s, &server, &run);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(&format!("still waits for: {id} (add_expense)")),
        "{}",
        text(&out.stderr)
    );

    let out = steward(
        &["approvals", "approve", &id[..6]],
        &[("XDG_DATA_HOME", &s.data)],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("steward runs resume"),
        "{}",
        text(&out.stderr)
    );
    assert!(approvals_json(&s).is_empty(), "nothing waits any more");

    let out = resume(&s, &server, &run);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Done: the taxi ride is recorded.\n");
    assert_eq!(
        sqlite3(&s.db, "SELECT count(*) FROM expenses"),
        (before + 1).to_string(),
        "written once, after the approval"
    );
    // A second resume is refused.
    let out = resume(&s, &server, &run);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("was resumed already"),
        "{}",
        text(&out.stderr)
    );
}

#[tokio::test]
async fn a_denial_reaches_the_specialist_with_its_reason_and_nothing_is_written() {
    let s = setup();
    let before = sqlite3(&s.db, "SELECT count(*) FROM expenses");
    let server = mock_openai(vec![
        tool_reply(
            "r1",
            "expenses",
            r#"{"request": "Add a 12.50 taxi ride, 20% VAT"}"#,
        ),
        tool_reply("e1", "add_expense", TAXI),
        text_reply("The taxi ride was not added: the approver said no."),
        text_reply("It was not recorded."),
    ])
    .await;
    let (run, id) = ask_and_wait(&s, &server).await;
    let out = steward(
        &[
            "approvals",
            "deny",
            &id,
            "--reason",
            "taxis go on the travel card",
        ],
        &[("XDG_DATA_HOME", &s.data)],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = resume(&s, &server, &run);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "It was not recorded.\n");
    assert_eq!(sqlite3(&s.db, "SELECT count(*) FROM expenses"), before);
    // The specialist's model was shown the reason.
    let bodies = bodies(&server).await;
    let shown = bodies[2]["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(shown.contains("taxis go on the travel card"), "{shown}");
    // Deciding twice is refused.
    let out = steward(
        &["approvals", "approve", &id],
        &[("XDG_DATA_HOME", &s.data)],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("was already decided (deny"),
        "{}",
        text(&out.stderr)
    );
}

/// At a terminal (a real pseudo-terminal), the person edits the arguments and the call runs with theirs.
#[tokio::test]
async fn at_a_terminal_the_arguments_can_be_edited_before_the_call_runs() {
    let s = setup();
    let server = mock_openai(vec![
        tool_reply("e1", "add_expense", TAXI),
        text_reply("Added the taxi ride."),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let command = format!(
        "{} ask -c '{}' --principal bob -a expenses --no-store 'Add a 12.50 taxi ride, 20% VAT'",
        env!("CARGO_BIN_EXE_steward"),
        s.config
    );
    let mut child = isolated(
        "script",
        &["-qec", &command, "/dev/null"],
        &[("OPENAI_BASE_URL", &base), ("XDG_DATA_HOME", &s.data)],
    )
    .spawn()
    .unwrap();
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        // Wait for the question before answering it.
        std::thread::sleep(std::time::Duration::from_millis(1500));
        stdin
            .write_all(b"e\n{\"description\": \"Taxi\", \"net_amount\": 10, \"tax_rate\": 0.2, \"date\": \"2026-11-21\"}\n")
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1500));
    }
    let out = child.wait_with_output().unwrap();
    let shown = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(shown.contains("[y]es / [n]o / [e]dit"), "{shown}");
    assert!(shown.contains("Added the taxi ride."), "{shown}");
    assert_eq!(
        sqlite3(
            &s.db,
            "SELECT count(*) FROM expenses WHERE description = 'Taxi' AND net_amount = 10"
        ),
        "1",
        "the edited arguments ran"
    );
}

/// A SQL write tool declared in `steward.yaml` waits for approval; its preview shows the rows it would change,
/// found in a transaction that is rolled back, and the database is unchanged.
#[tokio::test]
async fn a_sql_write_waiting_for_approval_shows_the_rows_it_would_change_and_changes_nothing() {
    let s = setup();
    let code = sqlite3(
        &s.db,
        "SELECT order_code FROM orders WHERE status = 'IN TRANSIT' ORDER BY id LIMIT 1",
    );
    let mut config = std::fs::read_to_string(&s.config).unwrap();
    config.push_str(
        r#"tools:
  cancel_order:
    kind: sql
    database: shop
    mode: write
    description: Cancels an order.
    statement: UPDATE orders SET status = 'CANCELLED' WHERE order_code = :code
    parameters:
      code: {type: string, description: The order code}
"#,
    );
    std::fs::write(&s.config, config).unwrap();
    let before = sqlite3(&s.db, "SELECT group_concat(status) FROM orders ORDER BY id");
    let out = steward(
        &[
            "tools",
            "call",
            "-c",
            &s.config,
            "cancel_order",
            &format!(r#"{{"code": "{code}"}}"#),
        ],
        &[("XDG_DATA_HOME", &s.data)],
        "",
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("Would change 1 row:"), "{stderr}");
    assert!(
        stderr.contains(&code) && stderr.contains("CANCELLED"),
        "{stderr}"
    );
    assert!(
        stderr.contains("write tools declared in steward.yaml need approval"),
        "{stderr}"
    );
    assert_eq!(
        sqlite3(&s.db, "SELECT group_concat(status) FROM orders ORDER BY id"),
        before
    );

    // A run that waits saves the preview with the approval.
    let server = mock_openai(vec![
        tool_reply("c1", "cancel_order", &format!(r#"{{"code": "{code}"}}"#)),
        text_reply("Cancelled."),
    ])
    .await;
    let path = format!("{}/desk.yaml", scratch_dir("approvals-desk"));
    let mut desk = std::fs::read_to_string(&s.config).unwrap();
    desk.push_str(
        "agents:\n  desk:\n    instructions: Cancel orders.\n    tools: [cancel_order]\n",
    );
    std::fs::write(&path, desk).unwrap();
    let base = format!("{}/v1", server.uri());
    let out = steward(
        &[
            "ask",
            "--json",
            "-c",
            &path,
            "-a",
            "desk",
            "Cancel my order",
        ],
        &[("OPENAI_BASE_URL", &base), ("XDG_DATA_HOME", &s.data)],
        "",
    );
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let listed = approvals_json(&s);
    let preview = listed[0]["preview"].as_str().unwrap();
    assert!(preview.starts_with("Would change 1 row:"), "{preview}");
    assert_eq!(
        sqlite3(&s.db, "SELECT group_concat(status) FROM orders ORDER BY id"),
        before
    );
}

/// The preview of an UPDATE on the servers: the rows it would change (PostgreSQL) or their count (MariaDB,
/// whose UPDATE returns no rows), and nothing changed, as the engine's own client sees it.
#[test]
fn the_preview_of_an_update_changes_nothing_on_the_servers() {
    for engine in ["postgres", "mariadb"] {
        let up = if engine == "postgres" {
            postgres_up()
        } else {
            mariadb_up()
        };
        if !up {
            continue;
        }
        let name = fresh_name("preview");
        let (url, _cleanup) = if engine == "postgres" {
            ServerDb::postgres(&name)
        } else {
            ServerDb::mariadb(&name)
        };
        let out = steward(&["demo", "--db", &url], &[], "");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let client = |sql: &str| -> String {
            let out = if engine == "postgres" {
                std::process::Command::new("psql")
                    .args([
                        "-h",
                        "127.0.0.1",
                        "-U",
                        "postgres",
                        "-d",
                        &name,
                        "-At",
                        "-c",
                        sql,
                    ])
                    .output()
            } else {
                std::process::Command::new("mariadb")
                    .args([
                        "-h",
                        "127.0.0.1",
                        "-u",
                        "root",
                        "-N",
                        "-B",
                        "-D",
                        &name,
                        "-e",
                        sql,
                    ])
                    .output()
            }
            .unwrap();
            assert!(out.status.success(), "{}", text(&out.stderr));
            text(&out.stdout).trim().to_owned()
        };
        let code =
            client("SELECT order_code FROM orders WHERE status = 'IN TRANSIT' ORDER BY id LIMIT 1");
        let before = client("SELECT count(*) FROM orders WHERE status = 'CANCELLED'");
        let config = format!("{}/steward.yaml", scratch_dir("preview"));
        std::fs::write(
            &config,
            format!(
                r#"databases:
  shop: "{url}"
tools:
  cancel_order:
    kind: sql
    database: shop
    mode: write
    description: Cancels an order.
    statement: UPDATE orders SET status = 'CANCELLED' WHERE order_code = :code
    parameters:
      code: {{type: string, description: The order code}}
"#
            ),
        )
        .unwrap();
        let out = steward(
            &[
                "tools",
                "call",
                "-c",
                &config,
                "cancel_order",
                &format!(r#"{{"code": "{code}"}}"#),
            ],
            &[],
            "",
        );
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{engine}: {stderr}");
        if engine == "postgres" {
            assert!(stderr.contains("Would change 1 row:"), "{stderr}");
            assert!(
                stderr.contains(&code) && stderr.contains("CANCELLED"),
                "{stderr}"
            );
        } else {
            assert!(stderr.contains("Would change 1 row."), "{stderr}");
        }
        assert_eq!(
            client("SELECT count(*) FROM orders WHERE status = 'CANCELLED'"),
            before,
            "{engine}"
        );
    }
}

#[tokio::test]
async fn an_edit_given_in_another_process_runs_the_call_with_the_new_arguments() {
    let s = setup();
    let server = mock_openai(vec![
        tool_reply(
            "r1",
            "expenses",
            r#"{"request": "Add a 12.50 taxi ride, 20% VAT"}"#,
        ),
        tool_reply("e1", "add_expense", TAXI),
        text_reply("Added the taxi ride at 10.00 net, as edited."),
        text_reply("Done."),
    ])
    .await;
    let taxis = sqlite3(
        &s.db,
        "SELECT count(*) FROM expenses WHERE description = 'Taxi'",
    );
    let (run, id) = ask_and_wait(&s, &server).await;
    let edit = r#"{"description": "Taxi (edited)", "net_amount": 10, "tax_rate": 0.2, "date": "2026-11-21"}"#;
    let out = steward(
        &["approvals", "approve", &id, "--edit", edit],
        &[("XDG_DATA_HOME", &s.data)],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = resume(&s, &server, &run);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Done.\n");
    assert_eq!(
        sqlite3(
            &s.db,
            "SELECT count(*) FROM expenses WHERE description = 'Taxi (edited)' AND net_amount = 10"
        ),
        "1"
    );
    assert_eq!(
        sqlite3(
            &s.db,
            "SELECT count(*) FROM expenses WHERE description = 'Taxi'"
        ),
        taxis,
        "the model's own arguments never ran"
    );
}

/// `approvals list --tool/--since/--older-than` narrow the list; `approvals expire --older-than` denies what
/// nobody decided (`--dry-run` denies nothing), the run resumes with the model told it expired, nothing is
/// written.
#[tokio::test]
async fn approvals_nobody_decides_are_filtered_and_expired() {
    let s = setup();
    let before = sqlite3(&s.db, "SELECT count(*) FROM expenses");
    let server = mock_openai(vec![
        tool_reply(
            "r1",
            "expenses",
            r#"{"request": "Add a 12.50 taxi ride, 20% VAT"}"#,
        ),
        tool_reply("e1", "add_expense", TAXI),
        text_reply("The taxi ride was not added: the approval expired."),
        text_reply("It was not recorded."),
    ])
    .await;
    let (run, id) = ask_and_wait(&s, &server).await;
    let env = [("XDG_DATA_HOME", s.data.as_str())];
    let listed = |filters: &[&str]| {
        let mut args = vec!["approvals", "list", "--json"];
        args.extend_from_slice(filters);
        let out = steward(&args, &env, "");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(listed(&[]), 1);
    assert_eq!(listed(&["--tool", "add_expense"]), 1);
    assert_eq!(listed(&["--tool", "move_task"]), 0);
    assert_eq!(listed(&["--since", "1h"]), 1);
    assert_eq!(listed(&["--older-than", "1h"]), 0, "it is minutes old");
    assert_eq!(listed(&["--older-than", "2099-01-01"]), 1);
    // By the run's agent and database (a name from the config, or a URL), and by state.
    let runs = steward(&["runs", "list", "--json"], &env, "");
    let runs: Value = serde_json::from_slice(&runs.stdout).unwrap();
    let agent = runs[0]["agent"].as_str().unwrap().to_owned();
    let config = s.config.as_str();
    assert_eq!(listed(&["--agent", &agent]), 1);
    assert_eq!(listed(&["--agent", "nobody"]), 0);
    assert_eq!(listed(&["-c", config, "--db", "shop"]), 1);
    assert_eq!(listed(&["--db", &format!("sqlite://{}", s.db)]), 1);
    assert_eq!(listed(&["--db", "sqlite:///elsewhere.sqlite"]), 0);
    assert_eq!(listed(&["--status", "waiting"]), 1);
    assert_eq!(listed(&["--status", "denied"]), 0);
    let out = steward(
        &[
            "approvals",
            "list",
            "--agent",
            "nobody",
            "--status",
            "waiting",
        ],
        &env,
        "",
    );
    assert!(
        text(&out.stderr).contains("(no call matches --agent and --status as given)"),
        "{}",
        text(&out.stderr)
    );
    let out = steward(&["approvals", "list", "--status", "lost"], &env, "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("waiting"),
        "{}",
        text(&out.stderr)
    );

    // A week-old cutoff leaves it; a cutoff in the future expires it (a dry run first).
    let out = steward(&["approvals", "expire", "--older-than", "7d"], &env, "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("expired 0 calls"),
        "{}",
        text(&out.stderr)
    );
    let out = steward(
        &[
            "approvals",
            "expire",
            "--older-than",
            "2099-01-01",
            "--dry-run",
        ],
        &env,
        "",
    );
    assert!(text(&out.stdout).contains(&id), "{}", text(&out.stdout));
    assert_eq!(approvals_json(&s)[0]["decision"], Value::Null);
    let out = steward(
        &["approvals", "expire", "--older-than", "2099-01-01"],
        &env,
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("expired 1 call"),
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stderr).contains(&run), "{}", text(&out.stderr));
    assert_eq!(listed(&["--status", "waiting"]), 0);
    assert_eq!(listed(&["--status", "denied"]), 1);
    assert_eq!(listed(&["--status", "decided", "--agent", &agent]), 1);
    assert_eq!(listed(&["--status", "approved"]), 0);
    let out = resume(&s, &server, &run);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(sqlite3(&s.db, "SELECT count(*) FROM expenses"), before);
    let bodies = bodies(&server).await;
    let shown = bodies[2]["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(shown.contains("expired: nobody decided it"), "{shown}");
}

/// A write's preview is a result like any other: the asker sees only the columns their role reads, masked ones
/// masked, and only the count for a table they do not read — for an UPDATE, an INSERT and a DELETE, on every
/// engine that returns the rows (MariaDB's UPDATE returns only a count).
fn previews_are_limited_and_masked_on(url: &str, engine: &str) {
    let config = format!("{}/steward.yaml", scratch_dir("preview-masked"));
    std::fs::write(
        &config,
        format!(
            r#"databases:
  shop: "{url}"
roles:
  desk:
    sql:
      read: {{customers: [id, name, city]}}
      masks: {{customers.name: partial}}
      write: {{customers: [city, name, email, created_at]}}
  blind:
    sql:
      read: {{orders: "*"}}
      write: {{customers: [city, name, email, created_at]}}
principals:
  bob: {{role: desk}}
  eve: {{role: blind}}
tools:
  move_customer:
    kind: sql
    database: shop
    mode: write
    description: Moves a customer.
    statement: UPDATE customers SET city = :city WHERE id = 1
    parameters:
      city: {{type: string, description: The city}}
  add_customer:
    kind: sql
    database: shop
    mode: write
    description: Adds a customer.
    statement: INSERT INTO customers (name, email, city, created_at) VALUES ('Zelda Secretname', 'zelda.secret@example.com', :city, '2026-11-21 10:00:00')
    parameters:
      city: {{type: string, description: The city}}
  drop_customer:
    kind: sql
    database: shop
    mode: write
    description: Removes customers of a city.
    statement: DELETE FROM customers WHERE city = :city AND id NOT IN (SELECT customer_id FROM orders)
    parameters:
      city: {{type: string, description: The city}}
"#
        ),
    )
    .unwrap();
    let data = scratch_dir("preview-masked-data");
    let (name, email) = {
        let out = steward(
            &[
                "sql",
                "run",
                "--db",
                url,
                "--json",
                "SELECT name, email FROM customers WHERE id = 1",
            ],
            &[],
            "",
        );
        let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let row = &rows["rows"][0];
        (
            row[0].as_str().unwrap().to_owned(),
            row[1].as_str().unwrap().to_owned(),
        )
    };
    let previews = |who: &str, tool: &str| {
        let out = steward(
            &[
                "tools",
                "call",
                "-c",
                &config,
                "--principal",
                who,
                tool,
                r#"{"city": "Nowhere Town"}"#,
            ],
            &[("XDG_DATA_HOME", &data)],
            "",
        );
        let stderr = text(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(4),
            "{engine} {who} {tool}: {stderr}"
        );
        stderr
    };
    for tool in ["move_customer", "add_customer"] {
        let shown = previews("bob", tool);
        if engine == "mariadb" && tool == "move_customer" {
            assert!(shown.contains("Would change 1 row."), "{shown}");
            continue;
        }
        assert!(shown.contains("Would "), "{engine} {tool}: {shown}");
        assert!(shown.contains("Nowhere Town"), "{engine} {tool}: {shown}");
        for secret in [
            name.as_str(),
            email.as_str(),
            "Zelda Secretname",
            "zelda.secret",
            "created_at",
        ] {
            assert!(
                !shown.contains(secret),
                "{engine} {tool}: {secret} in {shown}"
            );
        }
        assert!(
            shown.contains("***"),
            "{engine} {tool}: the name masked: {shown}"
        );
        let shown = previews("eve", tool);
        assert!(
            shown.contains("of a table your role does not read"),
            "{engine} {tool}: {shown}"
        );
        for secret in [
            name.as_str(),
            email.as_str(),
            "Zelda Secretname",
            "zelda.secret",
        ] {
            assert!(
                !shown.contains(secret),
                "{engine} {tool}: {secret} in {shown}"
            );
        }
    }
    // A DELETE of no row shows no values either way.
    let shown = previews("bob", "drop_customer");
    assert!(
        shown.contains("Would delete 0 rows") || shown.contains("Would change 0 rows"),
        "{engine}: {shown}"
    );
}

#[test]
fn previews_are_limited_and_masked() {
    let s = setup();
    previews_are_limited_and_masked_on(&format!("sqlite://{}", s.db), "sqlite");
}

#[test]
fn previews_are_limited_and_masked_on_the_servers() {
    for engine in ["postgres", "mariadb"] {
        let up = if engine == "postgres" {
            postgres_up()
        } else {
            mariadb_up()
        };
        if !up {
            continue;
        }
        let name = fresh_name("steward_preview_masked");
        let (url, _cleanup) = if engine == "postgres" {
            ServerDb::postgres(&name)
        } else {
            ServerDb::mariadb(&name)
        };
        let out = steward(&["demo", "--db", &url], &[], "");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        previews_are_limited_and_masked_on(&url, engine);
    }
}

/// A reviewer who reads the written table only in part (a column list, a mask) is not shown the waiting call's
/// preview, which holds the asker's view of the rows, and may not approve it; one who reads it whole may.
#[tokio::test]
async fn a_reviewer_who_reads_the_table_in_part_neither_sees_nor_approves_the_preview() {
    let s = setup();
    let mut config = format!("databases:\n  shop: sqlite://{}\n", s.db);
    config.push_str(
        r#"tools:
  move_customer:
    kind: sql
    database: shop
    mode: write
    description: Moves a customer.
    statement: UPDATE customers SET city = :city WHERE id = 2
    parameters:
      city: {type: string, description: The city}
agents:
  desk:
    instructions: Move customers.
    tools: [move_customer]
roles:
  clerk: {approve_by: [manager, boss]}
  manager:
    sql:
      read: {customers: [id, city]}
      masks: {customers.city: partial}
  boss: {}
principals:
  ada: {role: clerk}
  mia: {role: manager}
  max: {role: boss}
"#,
    );
    std::fs::write(&s.config, config).unwrap();
    let server = mock_openai(vec![
        tool_reply("m1", "move_customer", r#"{"city": "Nowhere"}"#),
        text_reply("Moved."),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let env = [
        ("OPENAI_BASE_URL", base.as_str()),
        ("XDG_DATA_HOME", s.data.as_str()),
    ];
    let out = steward(
        &[
            "ask",
            "-c",
            &s.config,
            "--principal",
            "ada",
            "-a",
            "desk",
            "Move her",
        ],
        &env,
        "",
    );
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let listed = approvals_json(&s);
    let id = listed[0]["id"].as_str().unwrap().to_owned();
    let city = sqlite3(&s.db, "SELECT city FROM customers WHERE id = 2");
    let approve = |who: &str| {
        steward(
            &[
                "approvals",
                "approve",
                "-c",
                &s.config,
                "--principal",
                who,
                &id,
            ],
            &env,
            "",
        )
    };
    let refused = approve("mia");
    let said = text(&refused.stderr);
    assert_ne!(refused.status.code(), Some(0), "{said}");
    assert!(said.contains("sees only in part"), "{said}");
    assert_eq!(
        sqlite3(&s.db, "SELECT city FROM customers WHERE id = 2"),
        city
    );
    let approved = approve("max");
    assert_eq!(
        approved.status.code(),
        Some(0),
        "{}",
        text(&approved.stderr)
    );
}
