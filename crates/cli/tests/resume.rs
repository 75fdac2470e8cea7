//! `steward runs resume ID` with no flags: the parked run knows the database, model and principal it ran under,
//! so the command Steward itself prints works in a new process as printed; a config changed since is reported.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::Value;

#[tokio::test]
async fn a_waiting_run_resumes_with_no_flags_in_a_new_process() {
    let (dir, db) = demo_in("resume");
    // The config names no database and no model: only the flags of `ask` did.
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        "roles:\n  bookkeeper:\n    agents: [expenses]\n    approve: [add_expense]\nprincipals:\n  bob: {role: bookkeeper}\n",
    )
    .unwrap();
    let data = scratch_dir("resume-data");
    let server = mock_openai(vec![
        tool_reply(
            "e1",
            "add_expense",
            r#"{"description": "Resumed taxi", "net_amount": 12.5, "tax_rate": 0.2, "date": "2026-11-21"}"#,
        ),
        text_reply("Added the taxi ride."),
    ])
    .await;
    let model = format!("openai-compatible:gpt-4o-mini@{}/v1", server.uri());
    let out = steward(
        &[
            "ask",
            "--json",
            "-c",
            &config,
            "--db",
            &db,
            "--model",
            &model,
            "--principal",
            "bob",
            "--agent",
            "expenses",
            "Add a 12.50 taxi ride, 20% VAT",
        ],
        &[("XDG_DATA_HOME", &data)],
        "",
    );
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let waiting: Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = waiting["run_id"].as_str().unwrap().to_owned();
    let approval = waiting["pending"][0]["approval_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let said = text(&out.stderr);
    assert!(
        said.contains(&format!("steward runs resume {run}")),
        "{said}"
    );
    let out = steward(
        &["approvals", "approve", &approval, "-c", &config],
        &[("XDG_DATA_HOME", &data)],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        sqlite3(
            &db,
            "SELECT count(*) FROM expenses WHERE description = 'Resumed taxi'"
        ),
        "0"
    );

    // The config changes meanwhile (a role it does not use is added): resuming says so, and goes on.
    std::fs::write(
        &config,
        "roles:\n  bookkeeper:\n    agents: [expenses]\n    approve: [add_expense]\n  auditor:\n    agents: [expenses]\nprincipals:\n  bob: {role: bookkeeper}\n",
    )
    .unwrap();
    // As printed: no --db, no --model, no --principal, and nothing in the environment names them.
    let out = steward(
        &["runs", "resume", &run, "-c", &config],
        &[("XDG_DATA_HOME", &data)],
        "",
    );
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        text(&out.stdout).contains("Added the taxi ride."),
        "{}",
        text(&out.stdout)
    );
    assert!(
        said.contains("the config changed since the run waited"),
        "{said}"
    );
    assert_eq!(
        sqlite3(
            &db,
            "SELECT count(*) FROM expenses WHERE description = 'Resumed taxi'"
        ),
        "1"
    );
    // The write went through the same trail, for the run's principal.
    let out = steward(
        &["audit", "list", "--json", "-c", &config],
        &[("XDG_DATA_HOME", &data)],
        "",
    );
    let records: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let write = records
        .iter()
        .find(|r| r["tool"] == "add_expense" && r["status"] == "ok")
        .unwrap_or_else(|| panic!("{records:#?}"));
    assert_eq!(write["principal"], "bob");
    assert_eq!(write["approval"], "approved");
}
