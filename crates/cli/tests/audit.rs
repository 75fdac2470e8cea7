//! The audit trail as a user meets it: every tool call of a recorded run is in `steward audit list` with who
//! made it and what was decided, and `steward audit verify` says whether the chain is intact, naming the first
//! record changed or deleted behind its back (with the engine's own client, `sqlite3`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::Value;

fn audit_json(data: &str) -> Vec<Value> {
    let out = steward(&["audit", "list", "--json"], &[("XDG_DATA_HOME", data)], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[tokio::test]
async fn ask_s_calls_are_listed_and_verify_finds_a_record_changed_or_deleted() {
    let data = scratch_dir("data");
    let server = mock_openai(vec![
        tool_reply("call_date", "current_date", "{}"),
        tool_reply("call_calc", "calculator", r#"{"expression": "5 * 1.2"}"#),
        text_reply("Today is Saturday 21 November 2026; 5 * 1.2 = 6."),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let env = [("OPENAI_BASE_URL", base.as_str()), ("XDG_DATA_HOME", &data)];
    let out = steward(
        &["ask", "--json", "What's the date, and what is 5 * 1.2?"],
        &env,
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let asked: Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = asked["run_id"].as_str().unwrap();

    // Newest first, every field.
    let records = audit_json(&data);
    let calls: Vec<(&str, &str)> = records
        .iter()
        .map(|r| {
            (
                r["tool"].as_str().unwrap(),
                r["arguments"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("calculator", r#"{"expression": "5 * 1.2"}"#),
            ("current_date", "{}")
        ]
    );
    for r in &records {
        assert_eq!(r["run_id"], id);
        assert_eq!(r["agent_path"], "assistant");
        assert_eq!(r["principal"], "", "the local user");
        assert_eq!(r["role"], Value::Null);
        assert_eq!(r["decision"], "allowed");
        assert_eq!(r["status"], "ok");
        assert_eq!(r["surface"], "cli");
        assert_eq!(r["hash"].as_str().unwrap().len(), 64);
    }
    // The whole chain: each call's intent, written before its tool ran, then how it ended.
    let out = steward(
        &["audit", "list", "--all", "--json"],
        &[("XDG_DATA_HOME", &data)],
        "",
    );
    let chain: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(chain.len(), 4, "{chain:#?}");
    for tool in ["current_date", "calculator"] {
        let statuses: Vec<&str> = chain
            .iter()
            .rev()
            .filter(|r| r["tool"] == tool)
            .map(|r| r["status"].as_str().unwrap())
            .collect();
        assert_eq!(statuses, ["started", "ok"], "{tool}: {chain:#?}");
    }
    for pair in chain.windows(2) {
        assert_eq!(pair[0]["prev_hash"], pair[1]["hash"]);
    }

    // The terminal table.
    let out = steward(&["audit", "list"], &[("XDG_DATA_HOME", &data)], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 4, "{table}");
    for column in [
        "seq",
        "time",
        "principal",
        "role",
        "agents",
        "tool",
        "decision",
        "status",
        "arguments",
    ] {
        assert!(lines[0].contains(column), "{table}");
    }
    for cell in [
        "assistant",
        "calculator",
        "allowed",
        " ok ",
        r#"{"expression": "5 * 1.2"}"#,
    ] {
        assert!(lines[2].contains(cell), "missing {cell:?}: {table}");
    }
    assert!(lines[3].contains("current_date"), "{table}");
    let out = steward(
        &["audit", "list", "-n", "1"],
        &[("XDG_DATA_HOME", &data)],
        "",
    );
    assert_eq!(text(&out.stdout).lines().count(), 3, "one record");

    let verify = || {
        let out = steward(&["audit", "verify"], &[("XDG_DATA_HOME", &data)], "");
        (out.status.code(), text(&out.stdout))
    };
    let (code, said) = verify();
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.starts_with("4 records, the chain is intact\n"),
        "{said}"
    );
    let head = chain[0]["hash"].as_str().unwrap();
    assert!(
        said.contains(&format!("head: record 4, hash {head}")),
        "{said}"
    );

    // Changed in place with the engine's own client: the arguments say something else now.
    let db = format!("{data}/steward/store.sqlite");
    sqlite3(
        &db,
        r#"UPDATE audit_trail SET arguments = '{"expression": "5 * 2"}' WHERE seq = 2"#,
    );
    let (code, said) = verify();
    assert_eq!(code, Some(1), "{said}");
    assert_eq!(
        said,
        "the chain is broken: record 2 was changed: its content does not give its hash (2 records checked)\n"
    );

    // The first record deleted: the next one no longer starts the chain.
    sqlite3(&db, "DELETE FROM audit_trail WHERE seq = 1");
    let (code, said) = verify();
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains("record 2 is the first, but its prev_hash is not the start of a chain"),
        "{said}"
    );
}

#[tokio::test]
async fn a_principal_s_role_and_a_rejected_approval_are_in_the_trail() {
    let data = scratch_dir("data");
    let config = format!("{}/steward.yaml", scratch_dir("audit"));
    std::fs::write(
        &config,
        "roles:\n  clerk:\n    tools: [current_date, calculator]\n    approve: [calculator]\nprincipals:\n  bob: {role: clerk}\n",
    )
    .unwrap();
    let server = mock_openai(vec![
        tool_reply("c1", "current_date", "{}"),
        tool_reply("c2", "calculator", r#"{"expression": "2 + 2"}"#),
        text_reply("I could not calculate it."),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    // No terminal: the approval cannot be given, so chat rejects the call and the model is told why.
    let out = steward(
        &["chat", "-c", &config, "--principal", "bob"],
        &[("OPENAI_BASE_URL", &base), ("XDG_DATA_HOME", &data)],
        "What is 2 + 2 today?\n/exit\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let records = audit_json(&data);
    assert_eq!(records.len(), 2, "{records:#?}");
    let (calc, date) = (&records[0], &records[1]);
    for r in &records {
        assert_eq!(r["principal"], "bob");
        assert_eq!(r["role"], "clerk");
    }
    assert_eq!(
        (&date["tool"], &date["decision"], &date["status"]),
        (
            &Value::from("current_date"),
            &Value::from("allowed"),
            &Value::from("ok")
        )
    );
    assert_eq!(calc["tool"], "calculator");
    assert_eq!(calc["decision"], "approval");
    assert!(
        calc["decision_reason"]
            .as_str()
            .unwrap()
            .contains("the role `clerk` needs approval for `calculator`"),
        "{calc}"
    );
    assert_eq!(calc["approval"], "rejected");
    assert_eq!(
        calc["approval_reason"],
        "no one could approve it: steward is not running in an interactive terminal"
    );
    assert_eq!(calc["approved_by"], "bob");
    assert_eq!(calc["status"], "rejected");

    let out = steward(&["audit", "list"], &[("XDG_DATA_HOME", &data)], "");
    let table = text(&out.stdout);
    let row = table.lines().nth(2).unwrap();
    for cell in [
        "bob",
        "clerk",
        "calculator",
        "approval (rejected)",
        "rejected",
    ] {
        assert!(row.contains(cell), "missing {cell:?}: {table}");
    }
    let out = steward(&["audit", "verify"], &[("XDG_DATA_HOME", &data)], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

#[test]
fn an_empty_trail_says_where_it_looked_and_is_intact() {
    let data = scratch_dir("data");
    let out = steward(&["audit", "list"], &[("XDG_DATA_HOME", &data)], "");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("(no tool calls audited in sqlite://"),
        "{}",
        text(&out.stderr)
    );
    let out = steward(&["audit", "verify"], &[("XDG_DATA_HOME", &data)], "");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), "0 records, the chain is intact\n");
}

#[tokio::test]
async fn the_trail_of_a_postgres_store_is_listed_and_verified() {
    if !postgres_up() {
        return;
    }
    let name = fresh_name("audit");
    let (url, _drop) = ServerDb::postgres(&name);
    let admin = steward_sql::Database::connect("postgres://postgres@127.0.0.1:5432/postgres")
        .await
        .unwrap();
    admin
        .execute_script(&format!("CREATE DATABASE \"{name}\""))
        .await
        .unwrap();
    admin.close().await;
    let server = mock_openai(vec![
        tool_reply("call_date", "current_date", "{}"),
        text_reply("It is Saturday."),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let out = steward(
        &["ask", "--store", &url, "What day is it?"],
        &[("OPENAI_BASE_URL", &base)],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = steward(&["audit", "list", "--json", "--store", &url], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let records: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(records.as_array().unwrap().len(), 1);
    assert_eq!(records[0]["tool"], "current_date");
    assert_eq!(records[0]["status"], "ok");
    let out = steward(&["audit", "verify"], &[("STEWARD_STORE", &url)], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("2 records, the chain is intact\n"),
        "the call's intent and its outcome: {}",
        text(&out.stdout)
    );

    let store = steward_sql::Database::connect(&url).await.unwrap();
    store
        .execute_script("UPDATE audit_trail SET principal = 'mallory' WHERE seq = 1")
        .await
        .unwrap();
    store.close().await;
    let out = steward(&["audit", "verify", "--store", &url], &[], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("record 1 was changed"),
        "{}",
        text(&out.stdout)
    );
}

/// No tool declared in steward.yaml may change the run store: a write tool on the store's own database that
/// targets its audit trail is a config error.
#[test]
fn a_tool_that_would_change_the_audit_trail_is_refused_at_load() {
    let dir = scratch_dir("audit-guard");
    let store = format!("sqlite://{dir}/store.sqlite");
    let out = steward(&["runs", "list", "--store", &store], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        format!(
            r#"databases:
  store: {store}
store: {store}
tools:
  wipe_audit:
    kind: sql
    database: store
    mode: write
    description: Wipes the trail.
    statement: DELETE FROM audit_trail WHERE seq > :n
    parameters:
      n: {{type: integer, description: From here}}
"#
        ),
    )
    .unwrap();
    let out = steward(&["config", "check", "-c", &config], &[], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("writes to `audit_trail`, a table of the run store"),
        "{}",
        text(&out.stderr)
    );
}
