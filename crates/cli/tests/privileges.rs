//! Least privilege as a user meets it: when the database role may do more than read, `steward schema` and
//! `steward sql run` (the first time for a database), `steward init` and the trace of `steward ask` say so once,
//! with the SQL for a read-only role; a SQLite file (no roles) and an answer on stdout never carry the note.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;

const PG: &str = "postgres://postgres@127.0.0.1:5432/test";

fn noted(stderr: &str) -> bool {
    stderr.contains("the database role `postgres` is a superuser")
        && stderr.contains("CREATE ROLE steward_reader LOGIN")
        && stderr.contains("GRANT SELECT ON ALL TABLES IN SCHEMA public TO steward_reader;")
}

#[tokio::test]
async fn a_role_that_may_write_is_named_once_with_the_fix() {
    if !postgres_up() {
        return;
    }
    let out = steward(
        &["sql", "run", "--db", PG, "--json", "SELECT 1 AS one"],
        &[],
        "",
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(noted(&stderr), "{stderr}");
    assert_eq!(stderr.matches("is a superuser").count(), 1, "{stderr}");
    // stdout stays the JSON a script reads.
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["rows"][0][0], 1);

    let out = steward(&["schema", "--db", PG], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(noted(&text(&out.stderr)), "{}", text(&out.stderr));
    assert!(!text(&out.stdout).contains("superuser"));

    // The trace of ask says it; without --trace, ask stays quiet.
    for (trace, expected) in [(true, true), (false, false)] {
        let server = mock_openai(vec![text_reply("Nothing to see.")]).await;
        let base = format!("{}/v1", server.uri());
        let mut args = vec!["ask", "--db", PG, "--agent", "analyst"];
        if trace {
            args.push("--trace");
        }
        args.push("How many tables are there?");
        let out = steward(&args, &[("OPENAI_BASE_URL", &base)], "");
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert_eq!(noted(&stderr), expected, "trace {trace}: {stderr}");
        assert_eq!(text(&out.stdout), "Nothing to see.\n");
    }
}

#[test]
fn sqlite_has_no_roles_and_no_note() {
    let dir = scratch_dir("privileges");
    let file = format!("{dir}/empty.sqlite");
    let out = steward(
        &[
            "sql",
            "run",
            "--db",
            &format!("sqlite://{file}?mode=rwc"),
            "SELECT 1",
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains("note: the database role"));
}

/// `sql run` and `schema` say the note the first time for a database and role, then remember it in the state
/// directory (the marker names no password); `init`, where a database is set up, says it every time.
#[test]
fn the_note_is_said_once_per_database_and_always_by_init() {
    if !postgres_up() {
        return;
    }
    let state = scratch_dir("noted-state");
    let env = [("XDG_STATE_HOME", state.as_str())];
    // A password in the URL (trust ignores it) must not reach the marker.
    let url = "postgres://postgres:hunter2@127.0.0.1:5432/test";
    let said = |args: &[&str]| {
        let out = steward(args, &env, "");
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        (noted(&stderr), stderr)
    };
    let (first, stderr) = said(&["sql", "run", "--db", url, "SELECT 1"]);
    assert!(first, "{stderr}");
    assert!(
        stderr.contains("Steward says this once per database and role; delete "),
        "{stderr}"
    );
    let (again, stderr) = said(&["sql", "run", "--db", url, "SELECT 1"]);
    assert!(!again && !stderr.contains("superuser"), "{stderr}");
    let (schema, stderr) = said(&["schema", "--db", url]);
    assert!(!schema && !stderr.contains("superuser"), "{stderr}");
    // Another database is another note.
    let (other, stderr) = said(&[
        "sql",
        "run",
        "--db",
        "postgres://postgres@127.0.0.1:5432/postgres",
        "SELECT 1",
    ]);
    assert!(
        other && stderr.contains("GRANT CONNECT ON DATABASE \"postgres\""),
        "{stderr}"
    );
    let markers: Vec<_> = std::fs::read_dir(format!("{state}/steward/noted"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert_eq!(markers.len(), 2, "{markers:?}");
    assert!(
        markers.iter().all(|m| !m.contains("hunter2")),
        "{markers:?}"
    );
    // init says it each time, and without the "once" line.
    let dir = scratch_dir("noted-init");
    for _ in 0..2 {
        let (init, stderr) = said(&[
            "init",
            "--db",
            url,
            "--force",
            "--output",
            &format!("{dir}/steward.yaml"),
        ]);
        assert!(init && !stderr.contains("once per database"), "{stderr}");
    }
}
