//! Least privilege as a user meets it: when the database role may do more than read, `steward schema`,
//! `steward sql run` and the trace of `steward ask` say so once, with the SQL for a read-only role; a SQLite
//! file (no roles) and an answer on stdout never carry the note.
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
