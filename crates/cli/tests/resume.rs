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

/// Parks a run of `bob` (bookkeeper, whose add_expense waits) asked in `cwd` with `db` as given; approves it.
async fn parked(
    config: &str,
    data: &str,
    cwd: &str,
    db: &str,
    description: &str,
) -> (wiremock::MockServer, String) {
    let server = mock_openai(vec![
        tool_reply(
            "e1",
            "add_expense",
            &serde_json::json!({"description": description, "net_amount": 3, "tax_rate": 0.2, "date": "2026-11-21"})
                .to_string(),
        ),
        text_reply("Added."),
    ])
    .await;
    let model = format!("openai-compatible:gpt-4o-mini@{}/v1", server.uri());
    let out = steward_command(
        &[
            "ask",
            "--json",
            "-c",
            config,
            "--db",
            db,
            "--model",
            &model,
            "--principal",
            "bob",
            "--agent",
            "expenses",
            "Add it",
        ],
        &[("XDG_DATA_HOME", data)],
    )
    .current_dir(cwd)
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let waiting: Value = serde_json::from_slice(&out.stdout).unwrap();
    let approval = waiting["pending"][0]["approval_id"].as_str().unwrap();
    let out = steward(
        &["approvals", "approve", approval, "-c", config],
        &[("XDG_DATA_HOME", data)],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    (server, waiting["run_id"].as_str().unwrap().to_owned())
}

#[tokio::test]
async fn a_resume_never_lands_on_another_database_or_loses_its_role() {
    let (dir, db) = demo_in("resume-where");
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        "roles:\n  bookkeeper:\n    agents: [expenses]\n    tools: [add_expense, current_date]\n    approve: [add_expense]\nprincipals:\n  bob: {role: bookkeeper}\n",
    )
    .unwrap();
    let data = scratch_dir("resume-where-data");
    let count = |d: &str| {
        sqlite3(
            &db,
            &format!("SELECT count(*) FROM expenses WHERE description = '{d}'"),
        )
    };

    // A relative --db, resumed from another directory: the run goes on in the database it ran on.
    let (_model, run) = parked(&config, &data, &dir, "demo.sqlite", "Relative").await;
    let elsewhere = scratch_dir("resume-elsewhere");
    let (_, other_db) = demo_in("resume-other");
    std::fs::copy(&other_db, format!("{elsewhere}/demo.sqlite")).unwrap();
    let out = steward_command(
        &["runs", "resume", &run, "-c", &config],
        &[("XDG_DATA_HOME", &data)],
    )
    .current_dir(&elsewhere)
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        count("Relative"),
        "1",
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );

    // Resumed on another database: refused, naming both, and nothing is written anywhere.
    let (_model, run) = parked(&config, &data, &dir, &db, "Moved").await;
    let out = steward(
        &["runs", "resume", &run, "-c", &config, "--db", &other_db],
        &[("XDG_DATA_HOME", &data)],
        "",
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("the run waited on the database"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(count("Moved"), "0");

    // Resumed under a config without its role: nothing is allowed for that role, rather than everything.
    let bare = format!("{dir}/bare.yaml");
    std::fs::write(&bare, "defaults: {}\n").unwrap();
    let out = steward(
        &["runs", "resume", &run, "-c", &bare],
        &[("XDG_DATA_HOME", &data)],
        "",
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("the role `bookkeeper` is not defined in this config"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(count("Moved"), "0");
}
