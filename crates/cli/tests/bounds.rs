//! Every numeric flag is range-checked when the command line is read: its bounds work, and a value just outside
//! them (or far outside: 2^64 - 1, 2^64, negative, not a number) is a usage error naming the range, never a
//! panic or a silent wrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::OnceLock;

use common::*;

const U64_MAX: &str = "18446744073709551615";
const U64_MAX_PLUS_1: &str = "18446744073709551616";

/// A demo database made once for this file's tests.
fn demo_db() -> &'static str {
    static DB: OnceLock<String> = OnceLock::new();
    DB.get_or_init(|| {
        let db = format!("{}/demo.sqlite", scratch_dir("bounds-demo"));
        let out = steward(&["demo", "--db", &db], &[], "");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        db
    })
}

/// `args` with `flag value` appended before the last argument (the question or the SQL, when `positional`).
fn with(args: &[&str], flag: &str, value: &str, positional: bool) -> Vec<String> {
    let mut out: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let at = if positional { out.len() - 1 } else { out.len() };
    out.insert(at, format!("{flag}={value}"));
    out
}

fn run(args: &[String], env: &[(&str, &str)]) -> std::process::Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    steward(&args, env, "")
}

/// Each of `values` is refused when the command line is read: exit code 2, and the error names the flag, the
/// value and the allowed range.
fn refused(
    args: &[&str],
    positional: bool,
    env: &[(&str, &str)],
    flag: &str,
    range: &str,
    values: &[&str],
) {
    for value in values {
        let args = with(args, flag, value, positional);
        let out = run(&args, env);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("invalid value '{value}' for '{flag} <")),
            "{args:?}: {stderr}"
        );
        assert!(
            stderr.contains(&format!("expected a whole number from {range}")),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// Each of `values` is accepted: the command runs and ends with `code`.
fn accepted(
    args: &[&str],
    positional: bool,
    env: &[(&str, &str)],
    flag: &str,
    values: &[&str],
    code: i32,
) {
    for value in values {
        let args = with(args, flag, value, positional);
        let out = run(&args, env);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(!stderr.contains("invalid value"), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn sql_run_max_rows_and_timeout() {
    let db = demo_db();
    let args = ["sql", "run", "--db", db, "SELECT order_code FROM orders"];
    accepted(&args, true, &[], "--max-rows", &["1", "1000000"], 0);
    refused(
        &args,
        true,
        &[],
        "--max-rows",
        "1 to 1000000",
        &["0", "1000001", U64_MAX, U64_MAX_PLUS_1, "-1", "ten", ""],
    );
    // One name for time limits everywhere; the old `--timeout` still works.
    accepted(&args, true, &[], "--time-limit", &["1", "86400"], 0);
    accepted(&args, true, &[], "--timeout", &["1"], 0);
    refused(
        &args,
        true,
        &[],
        "--time-limit",
        "1 to 86400",
        &["0", "86401", U64_MAX, U64_MAX_PLUS_1, "-30", "1.5"],
    );
    // The row cap really is the one asked for (it once wrapped to LIMIT 0).
    let out = steward(
        &[
            "sql",
            "run",
            "--db",
            db,
            "--json",
            "--max-rows",
            "1000000",
            "SELECT order_code FROM orders",
        ],
        &[],
        "",
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["rows"].as_array().unwrap().len(), 1000);
    assert_eq!(json["truncated"], false);
}

#[test]
fn schema_budget() {
    let db = demo_db();
    let args = ["schema", "--db", db];
    accepted(&args, false, &[], "--budget", &["1", "1000000"], 0);
    refused(
        &args,
        false,
        &[],
        "--budget",
        "1 to 1000000",
        &["0", "1000001", U64_MAX, U64_MAX_PLUS_1, "-5"],
    );
}

#[test]
fn demo_scale_and_seed() {
    let db = demo_db();
    // On a database that is already the demo, nothing is generated: the flags are only read.
    let args = ["demo", "--db", db];
    accepted(&args, false, &[], "--scale", &["1", "10000"], 0);
    refused(
        &args,
        false,
        &[],
        "--scale",
        "1 to 10000",
        &["0", "10001", U64_MAX, U64_MAX_PLUS_1, "-1"],
    );
    accepted(&args, false, &[], "--seed", &["0", U64_MAX], 0);
    refused(
        &args,
        false,
        &[],
        "--seed",
        &format!("0 to {U64_MAX}"),
        &[U64_MAX_PLUS_1, "-1", "0x10"],
    );
    // The largest seed generates a whole database.
    let fresh = format!("{}/demo.sqlite", scratch_dir("bounds-seed"));
    let out = steward(&["demo", "--db", &fresh, "--seed", U64_MAX], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[tokio::test]
async fn ask_and_chat_steps_tokens_and_time_limit() {
    let server = mock_openai(vec![text_reply("Hello!")]).await;
    let base = format!("{}/v1", server.uri());
    let env = [("OPENAI_BASE_URL", base.as_str())];
    let ask = ["ask", "hi"];
    accepted(&ask, true, &env, "--max-steps", &["1", "10000"], 0);
    refused(
        &ask,
        true,
        &env,
        "--max-steps",
        "1 to 10000",
        &["0", "10001", "4294967296", U64_MAX, U64_MAX_PLUS_1, "-1"],
    );
    accepted(&ask, true, &env, "--max-tokens", &["1", "1000000000"], 0);
    refused(
        &ask,
        true,
        &env,
        "--max-tokens",
        "1 to 1000000000",
        &["0", "1000000001", U64_MAX, U64_MAX_PLUS_1, "-1"],
    );
    accepted(&ask, true, &env, "--time-limit", &["1", "86400"], 0);
    refused(
        &ask,
        true,
        &env,
        "--time-limit",
        "1 to 86400",
        &["0", "86401", U64_MAX, U64_MAX_PLUS_1, "-600"],
    );
    // chat shares the flags (and ends at the end of its input).
    let chat = ["chat"];
    for flag in ["--max-steps", "--max-tokens", "--time-limit"] {
        accepted(&chat, false, &env, flag, &["1"], 0);
        refused(&chat, false, &env, flag, "1 to ", &["0", U64_MAX]);
    }
    accepted(&chat, false, &env, "--time-limit", &["86400"], 0);
    // demo takes them too, for the chat it opens.
    refused(
        &["demo", "--db", demo_db()],
        false,
        &env,
        "--time-limit",
        "1 to 86400",
        &["0", U64_MAX],
    );
}

#[tokio::test]
async fn a_huge_retry_after_is_an_error_not_a_panic() {
    let server = mock_openai(vec![
        wiremock::ResponseTemplate::new(429)
            .insert_header("retry-after", "1e300")
            .set_body_raw(r#"{"error": {"message": "slow down"}}"#, "application/json"),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let out = steward(&["ask", "hi"], &[("OPENAI_BASE_URL", &base)], "");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("HTTP 429: slow down (the provider asks to retry after"),
        "{stderr}"
    );
}

#[test]
fn numbers_in_environment_variables_never_panic() {
    // A port no machine has: no Ollama answers there, and the guidance says so.
    let out = steward(
        &["ask", "hi"],
        &[("OLLAMA_HOST", "127.0.0.1:99999999999999999999")],
        "",
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no model is configured"), "{stderr}");
    // The first and last days a clock can be fixed to.
    for now in ["0000-01-01", "9999-12-31T23:59:59-23:59"] {
        let out = steward(
            &["tools", "call", "current_date"],
            &[("STEWARD_NOW", now)],
            "",
        );
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{now}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let out = steward(
        &["tools", "call", "current_date"],
        &[("STEWARD_NOW", "10000-01-01")],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("STEWARD_NOW"),
        "{}",
        text(&out.stderr)
    );
}
