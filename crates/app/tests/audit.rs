//! The audit trail: every settled tool call of every run (sub-runs included) is one record with who made it,
//! through which agents, what the policy and a person decided and how it ended; the records form one hash
//! chain that concurrent writers keep whole (SQLite and PostgreSQL) and that `verify_audit` checks, naming the
//! first record edited, deleted or inserted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use sqlx::Connection as _;
use steward_app::store::{
    AuditRecord, ChainBreak, GENESIS, Recording, RunStore, StoreObserver, sql_fingerprint,
};
use steward_core::{
    Agent, AgentTool, Approval, Decision, ModelResponse, Principal, Run, RunStatus, Runner,
    ScriptedModel, Tool, ToolCall, ToolError, ToolOutput, ToolSpec, Toolbox, TypedTool,
};

async fn open(url: &str) -> RunStore {
    RunStore::open(Some(url)).await.unwrap()
}

fn observer(store: &RunStore) -> Arc<StoreObserver> {
    Arc::new(StoreObserver::new(store.clone()).unwrap())
}

/// Arguments of `query`.
#[derive(Deserialize, JsonSchema)]
struct QueryArgs {
    /// The SQL.
    sql: String,
}

/// Arguments of `drop_table`.
#[derive(Deserialize, JsonSchema)]
struct DropArgs {
    /// The table.
    name: String,
}

/// Arguments of `delete_project`.
#[derive(Deserialize, JsonSchema)]
struct DeleteArgs {
    /// The project.
    id: u32,
}

/// Arguments of `fail`.
#[derive(Deserialize, JsonSchema)]
struct FailArgs {}

fn query() -> impl Tool {
    TypedTool::new("query", "Runs SQL.", |_ctx, a: QueryArgs| async move {
        Ok(ToolOutput::text(format!("1 row for {}", a.sql.len())))
    })
    .read_only()
}

fn drop_table() -> impl Tool {
    TypedTool::new(
        "drop_table",
        "Drops a table.",
        |_ctx, a: DropArgs| async move { Ok(ToolOutput::text(format!("dropped {}", a.name))) },
    )
    .destructive()
}

fn delete_project() -> impl Tool {
    TypedTool::new(
        "delete_project",
        "Deletes a project.",
        |_ctx, a: DeleteArgs| async move { Ok(ToolOutput::text(format!("deleted {}", a.id))) },
    )
    .destructive()
    .needs_approval()
}

fn fail() -> impl Tool {
    // Not read-only, so the calls of its reply run in call order.
    TypedTool::new("fail", "Always fails.", |_ctx, _a: FailArgs| async move {
        Err::<ToolOutput, _>(ToolError::new("the disk is full"))
    })
}

/// The `clerk` agent: every kind of tool.
fn clerk() -> Agent {
    let tools = Toolbox::new()
        .with(echo())
        .unwrap()
        .with(query())
        .unwrap()
        .with(drop_table())
        .unwrap()
        .with(delete_project())
        .unwrap()
        .with(fail())
        .unwrap();
    Agent::new("clerk", "You keep the books.", tools).with_description("Keeps the books.")
}

/// Denies `drop_table`, holds what needs approval, allows the rest.
fn policy() -> Arc<dyn steward_core::Policy> {
    Arc::new(|call: &ToolCall, spec: &ToolSpec, _args: &Value| {
        if call.name == "drop_table" {
            Decision::Deny {
                reason: "role `bookkeeper` may not call `drop_table`".into(),
            }
        } else if spec.annotations.needs_approval {
            Decision::NeedsApproval {
                reason: format!("`{}` needs approval", call.name),
            }
        } else {
            Decision::Allow
        }
    })
}

fn bob() -> Principal {
    let mut bob = Principal::named("bob");
    bob.role = Some("bookkeeper".into());
    bob
}

fn calls(list: &[(&str, &str, &str)]) -> ModelResponse {
    ModelResponse::tool_calls(
        list.iter()
            .map(|(id, name, args)| ToolCall::new(*id, *name, *args))
            .collect(),
    )
}

fn runner(model: Arc<ScriptedModel>, obs: Arc<StoreObserver>) -> Runner {
    Runner::new(Arc::new(clerk()), model)
        .with_policy(policy())
        .with_observer(obs)
        .with_principal(Arc::new(bob()))
}

/// The whole trail, oldest first.
async fn trail(store: &RunStore) -> Vec<AuditRecord> {
    let mut records = store.audit(10_000, 0).await.unwrap();
    records.reverse();
    records
}

fn sha16(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()[..16]
        .to_owned()
}

/// One run with an invalid call, a denied one, two allowed ones that succeed, one that fails, one approved
/// and one rejected.
async fn every_kind_of_call(url: &str) {
    let store = open(url).await;
    let obs = Arc::new(
        StoreObserver::recording(store.clone(), Recording::for_principal(&bob())).unwrap(),
    );
    let model = Arc::new(ScriptedModel::new([
        calls(&[
            ("x1", "echo", r#"{"txt": 1}"#),
            ("d1", "drop_table", r#"{"name": "expenses"}"#),
            ("e1", "echo", r#"{"text": "hi"}"#),
            (
                "q1",
                "query",
                "{\"sql\": \"SELECT  amount\\n  FROM expenses \"}",
            ),
            ("f1", "fail", "{}"),
        ]),
        calls(&[("a1", "delete_project", r#"{"id": 7}"#)]),
        calls(&[("a2", "delete_project", r#"{"id": 8}"#)]),
        ModelResponse::text("Done."),
    ]));
    let runner = runner(model, obs.clone());
    let (mut run, status) = runner.run("tidy up").await;
    assert!(
        matches!(status, RunStatus::AwaitingApproval(_)),
        "{status:?}"
    );
    let status = runner
        .resume(&mut run, "a1", Approval::Approve)
        .await
        .unwrap();
    assert!(
        matches!(status, RunStatus::AwaitingApproval(_)),
        "{status:?}"
    );
    let reject = Approval::Reject {
        reason: Some("it is still in use".into()),
    };
    let status = runner.resume(&mut run, "a2", reject).await.unwrap();
    assert!(matches!(status, RunStatus::Done(_)), "{status:?}");
    obs.flush().await.unwrap();

    let records = trail(&store).await;
    let summary: Vec<_> = records
        .iter()
        .map(|r| {
            (
                r.seq,
                r.call_id.as_str(),
                r.tool.as_str(),
                r.decision.as_str(),
                r.approval.as_deref(),
                r.status.as_str(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (1, "x1", "echo", "invalid", None, "invalid"),
            (2, "d1", "drop_table", "denied", None, "denied"),
            (3, "e1", "echo", "allowed", None, "ok"),
            (4, "q1", "query", "allowed", None, "ok"),
            (5, "f1", "fail", "allowed", None, "error"),
            (
                6,
                "a1",
                "delete_project",
                "approval",
                Some("approved"),
                "ok"
            ),
            (
                7,
                "a2",
                "delete_project",
                "approval",
                Some("rejected"),
                "rejected"
            ),
        ]
    );
    for r in &records {
        assert_eq!(r.principal, "bob");
        assert_eq!(r.role.as_deref(), Some("bookkeeper"));
        assert_eq!(r.run_id, run.id());
        assert_eq!(r.agent_path, "clerk");
    }
    let by_call = |id: &str| records.iter().find(|r| r.call_id == id).unwrap();

    let invalid = by_call("x1");
    assert_eq!(invalid.arguments, r#"{"txt": 1}"#, "exactly as sent");
    assert!(
        invalid.decision_reason.as_deref().unwrap().contains("text"),
        "{invalid:?}"
    );
    let denied = by_call("d1");
    assert_eq!(
        denied.decision_reason.as_deref(),
        Some("role `bookkeeper` may not call `drop_table`")
    );
    assert_eq!(
        (denied.approval.as_deref(), denied.approved_by.as_deref()),
        (None, None)
    );
    let allowed = by_call("e1");
    assert_eq!(allowed.decision_reason, None);
    assert_eq!(allowed.sql_fingerprint, None, "no sql field");
    let sql = by_call("q1");
    assert_eq!(
        sql.sql_fingerprint.as_deref(),
        Some(sha16("SELECT amount FROM expenses").as_str()),
        "whitespace collapsed"
    );
    assert_eq!(
        sql.arguments,
        "{\"sql\": \"SELECT  amount\\n  FROM expenses \"}"
    );
    let approved = by_call("a1");
    assert_eq!(
        approved.decision_reason.as_deref(),
        Some("`delete_project` needs approval")
    );
    assert_eq!(approved.approved_by.as_deref(), Some("bob"));
    assert_eq!(approved.approval_reason, None);
    let rejected = by_call("a2");
    assert_eq!(rejected.arguments, r#"{"id": 8}"#);
    assert_eq!(
        rejected.approval_reason.as_deref(),
        Some("it is still in use")
    );
    assert_eq!(rejected.approved_by.as_deref(), Some("bob"));

    // One chain: each record holds the hash of the one before it, and its own hash is its content's.
    assert_eq!(records[0].prev_hash, GENESIS);
    for pair in records.windows(2) {
        assert_eq!(pair[1].prev_hash, pair[0].hash);
    }
    for r in &records {
        assert_eq!(r.hash, r.computed_hash());
        assert_eq!(r.hash.len(), 64);
    }
    let report = store.verify_audit().await.unwrap();
    assert!(report.is_intact(), "{report:?}");
    assert_eq!(report.checked, 7);
    assert_eq!(report.head, Some((7, records[6].hash.clone())));

    // Newest first, in pages.
    let page: Vec<u64> = store
        .audit(2, 1)
        .await
        .unwrap()
        .iter()
        .map(|r| r.seq)
        .collect();
    assert_eq!(page, [6, 5]);
    // The run keeps the role it ran with.
    assert_eq!(
        store.get(run.id()).await.unwrap().run.role.as_deref(),
        Some("bookkeeper")
    );
    store.close().await;
}

#[tokio::test]
async fn every_kind_of_call_is_recorded_on_sqlite() {
    every_kind_of_call(&sqlite_url()).await;
}

#[tokio::test]
async fn every_kind_of_call_is_recorded_on_postgres() {
    let Some(url) = pg_url().await else { return };
    every_kind_of_call(&url).await;
}

#[tokio::test]
async fn a_sub_run_s_calls_name_the_agents_down_to_the_one_that_called() {
    let store = open(&sqlite_url()).await;
    let obs = observer(&store);
    let run = ask_router(obs.clone(), "what did the helper say?").await;
    obs.flush().await.unwrap();
    let records = trail(&store).await;
    let rows: Vec<_> = records
        .iter()
        .map(|r| {
            (
                r.run_id.clone(),
                r.agent_path.as_str(),
                r.tool.as_str(),
                r.arguments.as_str(),
                r.status.as_str(),
            )
        })
        .collect();
    // The helper's call settles first: the router's call returns only once the helper has answered.
    assert_eq!(
        rows,
        [
            (
                format!("{}/r1", run.id()),
                "router/helper",
                "echo",
                r#"{"text": "hi"}"#,
                "ok"
            ),
            (
                run.id().to_owned(),
                "router",
                "helper",
                r#"{"request": "say hi"}"#,
                "ok"
            ),
        ]
    );
    for r in &records {
        assert_eq!(
            (r.principal.as_str(), r.role.as_deref()),
            ("", None),
            "the local user"
        );
        assert_eq!(r.decision, "allowed");
    }
}

#[tokio::test]
async fn a_sub_agent_s_call_that_waits_pauses_the_tree_and_its_rejection_is_recorded_with_its_caller()
 {
    let store = open(&sqlite_url()).await;
    let obs = observer(&store);
    let model = Arc::new(ScriptedModel::new([
        calls(&[("r1", "clerk", r#"{"request": "delete project 7"}"#)]),
        calls(&[("s1", "delete_project", r#"{"id": 7}"#)]),
        ModelResponse::text("The project was not deleted."),
        ModelResponse::text("The clerk did not delete it."),
    ]));
    let router = Agent::new(
        "router",
        "Route.",
        Toolbox::new()
            .with(AgentTool::new(Arc::new(clerk()), model.clone()))
            .unwrap(),
    );
    let runner = Runner::new(Arc::new(router), model)
        .with_policy(policy())
        .with_observer(obs.clone());
    let (mut run, status) = runner.run("delete project 7").await;
    // The whole tree waits; nothing has settled, so nothing is recorded yet.
    let RunStatus::AwaitingApproval(requests) = status else {
        panic!("{status:?}")
    };
    assert_eq!(requests[0].call.id, "r1/s1");
    obs.flush().await.unwrap();
    assert!(trail(&store).await.is_empty());

    runner
        .decide(
            &mut run,
            "r1/s1",
            steward_core::Approval::Reject {
                reason: Some("not today".into()),
            },
        )
        .unwrap();
    let status = runner.drive(&mut run).await;
    assert!(matches!(status, RunStatus::Done(_)), "{status:?}");
    obs.flush().await.unwrap();
    let records = trail(&store).await;
    assert_eq!(records.len(), 2, "{records:#?}");
    let (sub, top) = (&records[0], &records[1]);
    assert_eq!(sub.run_id, format!("{}/r1", run.id()));
    assert_eq!(sub.agent_path, "router/clerk");
    assert_eq!(
        (
            sub.tool.as_str(),
            sub.decision.as_str(),
            sub.status.as_str()
        ),
        ("delete_project", "approval", "rejected"),
        "it waited, was rejected, never ran"
    );
    assert!(
        sub.approval
            .as_deref()
            .is_some_and(|a| a.contains("rejected")),
        "{sub:?}"
    );
    assert_eq!(
        (
            top.tool.as_str(),
            top.agent_path.as_str(),
            top.status.as_str()
        ),
        ("clerk", "router", "ok")
    );
}

#[tokio::test]
async fn an_approval_given_in_another_process_is_recorded_with_the_request() {
    let url = sqlite_url();
    // First process: the run waits for approval and is saved.
    let saved = {
        let store = open(&url).await;
        let obs = Arc::new(
            StoreObserver::recording(store.clone(), Recording::for_principal(&bob())).unwrap(),
        );
        let model = Arc::new(ScriptedModel::new([calls(&[(
            "a1",
            "delete_project",
            r#"{"id": 7}"#,
        )])]));
        let (run, status) = runner(model, obs.clone()).run("delete project 7").await;
        assert!(matches!(status, RunStatus::AwaitingApproval(_)));
        obs.flush().await.unwrap();
        store.close().await;
        serde_json::to_string(&run).unwrap()
    };
    let store = open(&url).await;
    assert!(trail(&store).await.is_empty(), "nothing is settled yet");

    // Second process: a fresh writer, no principal set; it reads who the run is for from the store.
    let obs = observer(&store);
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("Deleted.")]));
    let runner = Runner::new(Arc::new(clerk()), model)
        .with_policy(policy())
        .with_observer(obs.clone());
    let mut run: Run = serde_json::from_str(&saved).unwrap();
    runner
        .resume(&mut run, "a1", Approval::Approve)
        .await
        .unwrap();
    obs.flush().await.unwrap();
    let records = trail(&store).await;
    assert_eq!(records.len(), 1, "{records:#?}");
    let r = &records[0];
    assert_eq!(
        (
            r.tool.as_str(),
            r.arguments.as_str(),
            r.decision.as_str(),
            r.decision_reason.as_deref(),
            r.approval.as_deref(),
            r.approved_by.as_deref(),
            r.status.as_str()
        ),
        (
            "delete_project",
            r#"{"id": 7}"#,
            "approval",
            Some("`delete_project` needs approval"),
            Some("approved"),
            Some("bob"),
            "ok"
        )
    );
    assert_eq!(
        (r.principal.as_str(), r.role.as_deref()),
        ("bob", Some("bookkeeper"))
    );
    assert_eq!(r.agent_path, "clerk");
}

#[tokio::test]
async fn a_call_still_waiting_when_its_run_is_cancelled_is_recorded_as_an_error() {
    let store = open(&sqlite_url()).await;
    let obs = observer(&store);
    let model = Arc::new(ScriptedModel::new([calls(&[(
        "a1",
        "delete_project",
        r#"{"id": 7}"#,
    )])]));
    let runner = runner(model, obs.clone());
    let (mut run, _) = runner.run("delete project 7").await;
    runner.cancel(&mut run);
    obs.flush().await.unwrap();
    let records = trail(&store).await;
    assert_eq!(records.len(), 1);
    assert_eq!(
        (
            records[0].decision.as_str(),
            records[0].approval.as_deref(),
            records[0].status.as_str()
        ),
        ("approval", None, "error")
    );
}

const RUNS: usize = 40;

/// Two writers, each with its own handle, runtime and thread, append at the same time: one chain, every call
/// in it once.
fn concurrent_writers(url: &str) {
    let mut ids = write_concurrently(url, RUNS);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let store = open(url).await;
        let records = trail(&store).await;
        let seqs: Vec<u64> = records.iter().map(|r| r.seq).collect();
        let expected: Vec<u64> = (1..=(4 * RUNS) as u64).collect();
        assert_eq!(seqs, expected, "two calls per run, no gap");
        let mut runs: Vec<String> = records
            .iter()
            .filter(|r| r.tool == "helper")
            .map(|r| r.run_id.clone())
            .collect();
        runs.sort();
        ids.sort();
        assert_eq!(runs, ids, "every run's call, once");
        let report = store.verify_audit().await.unwrap();
        assert!(report.is_intact(), "{report:?}");
        assert_eq!(report.checked, (4 * RUNS) as u64);
        store.close().await;
    });
}

#[test]
fn concurrent_writers_on_one_sqlite_file_keep_one_chain() {
    concurrent_writers(&sqlite_url());
}

#[test]
fn concurrent_writers_on_postgres_keep_one_chain() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let Some(url) = rt.block_on(pg_url()) else {
        return;
    };
    concurrent_writers(&url);
}

/// Runs a statement against the store with the engine's own sqlx driver, behind the store's back.
async fn tamper(url: &str, sql: &str) -> u64 {
    let sql = sqlx::AssertSqlSafe(sql.to_owned());
    if url.starts_with("postgres") {
        let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
        sqlx::query(sql)
            .execute(&mut conn)
            .await
            .unwrap()
            .rows_affected()
    } else {
        let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
        sqlx::query(sql)
            .execute(&mut conn)
            .await
            .unwrap()
            .rows_affected()
    }
}

/// A store with five runs of one echo call each: records 1 to 5.
async fn five_records(url: &str) -> RunStore {
    let store = open(url).await;
    let obs = observer(&store);
    for i in 0..5 {
        ask(obs.clone(), &format!("question {i}")).await;
    }
    obs.flush().await.unwrap();
    let report = store.verify_audit().await.unwrap();
    assert!(report.is_intact());
    assert_eq!(report.checked, 5);
    store
}

async fn tampering_is_found(edited: &str, deleted: &str) {
    let store = five_records(edited).await;
    assert_eq!(
        tamper(
            edited,
            r#"UPDATE audit_trail SET arguments = '{"text": "bye"}' WHERE seq = 3"#
        )
        .await,
        1
    );
    let report = store.verify_audit().await.unwrap();
    assert_eq!(report.broken, Some(ChainBreak::Edited { seq: 3 }));
    assert_eq!((report.checked, report.head.clone()), (3, None));
    assert_eq!(
        report.broken.unwrap().to_string(),
        "record 3 was changed: its content does not give its hash"
    );
    store.close().await;

    let store = five_records(deleted).await;
    assert_eq!(
        tamper(deleted, "DELETE FROM audit_trail WHERE seq = 3").await,
        1
    );
    let report = store.verify_audit().await.unwrap();
    let broken = report.broken.clone().unwrap();
    assert_eq!(
        broken,
        ChainBreak::Unlinked {
            seq: 4,
            previous: Some(2)
        }
    );
    assert_eq!(report.checked, 3, "records 1, 2 and 4");
    assert_eq!(broken.seq(), 4);
    assert!(
        broken.to_string().starts_with(
            "record 4 does not follow record 2: its prev_hash is not that record's hash"
        ) && broken.to_string().ends_with("(record 3 is missing)"),
        "{broken}"
    );

    // The first record deleted: the next one does not start a chain.
    assert_eq!(
        tamper(deleted, "DELETE FROM audit_trail WHERE seq = 1").await,
        1
    );
    let report = store.verify_audit().await.unwrap();
    assert_eq!(
        report.broken,
        Some(ChainBreak::Unlinked {
            seq: 2,
            previous: None
        })
    );
    store.close().await;
}

#[tokio::test]
async fn verify_finds_a_record_edited_in_place_or_deleted_on_sqlite() {
    tampering_is_found(&sqlite_url(), &sqlite_url()).await;
}

#[tokio::test]
async fn verify_finds_a_record_edited_in_place_or_deleted_on_postgres() {
    let Some(edited) = pg_url().await else { return };
    let Some(deleted) = pg_url().await else {
        return;
    };
    tampering_is_found(&edited, &deleted).await;
}

#[tokio::test]
async fn an_empty_trail_is_intact() {
    let store = open(&sqlite_url()).await;
    let report = store.verify_audit().await.unwrap();
    assert!(report.is_intact());
    assert_eq!((report.checked, report.head), (0, None));
    assert!(store.audit(10, 0).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_store_made_before_the_audit_trail_is_upgraded_and_keeps_its_runs() {
    let url = sqlite_url();
    let path = url.trim_start_matches("sqlite://");
    std::fs::create_dir_all(std::path::Path::new(path).parent().unwrap()).unwrap();
    {
        let options = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true);
        let mut conn = sqlx::SqliteConnection::connect_with(&options)
            .await
            .unwrap();
        sqlx::raw_sql(include_str!("../src/store/migrations/sqlite_0001_runs.sql"))
            .execute(&mut conn)
            .await
            .unwrap();
        sqlx::raw_sql(
            "CREATE TABLE schema_version (version BIGINT NOT NULL PRIMARY KEY, applied_at TEXT NOT NULL);
             INSERT INTO schema_version VALUES (1, 'then');
             INSERT INTO runs (id, root_id, agent, input, started_at, last_event_at, outcome, principal)
             VALUES ('old', 'old', 'helper', 'from before', '2026-01-01T00:00:00.000000Z',
                     '2026-01-01T00:00:00.000000Z', 'answered', 'bob');",
        )
        .execute(&mut conn)
        .await
        .unwrap();
    }
    let store = open(&url).await;
    let runs = store.list(10, 0).await.unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].input, "from before");
    let old = store.get("old").await.unwrap().run;
    assert_eq!((old.principal.as_deref(), old.role), (Some("bob"), None));
    // New runs are audited from here on.
    let obs = observer(&store);
    ask(obs.clone(), "after the upgrade").await;
    obs.flush().await.unwrap();
    assert_eq!(trail(&store).await.len(), 1);
    assert!(store.verify_audit().await.unwrap().is_intact());
}

#[test]
fn sql_fingerprints_ignore_whitespace_and_need_a_sql_string() {
    let a = sql_fingerprint(r#"{"sql": "SELECT 1\n\tFROM t"}"#).unwrap();
    assert_eq!(a, sha16("SELECT 1 FROM t"));
    assert_eq!(
        sql_fingerprint(r#"{"sql": "  SELECT 1 FROM   t "}"#),
        Some(a.clone())
    );
    // A JSON string holding the object, as some models send it.
    assert_eq!(
        sql_fingerprint(r#""{\"sql\": \"SELECT 1 FROM t\"}""#),
        Some(a)
    );
    assert_ne!(
        sql_fingerprint(r#"{"sql": "SELECT 2 FROM t"}"#),
        sql_fingerprint(r#"{"sql": "SELECT 1 FROM t"}"#)
    );
    for none in [r#"{"text": "SELECT 1"}"#, r#"{"sql": 1}"#, "not json", "[]"] {
        assert_eq!(sql_fingerprint(none), None, "{none}");
    }
}
