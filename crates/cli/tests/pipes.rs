//! Closed pipes: `steward … | head -c0`, `steward … 2>&-`-like readers that went away, `2>&1 | head -1`. Every
//! command ends quietly with the exit code it would have had, and never panics.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use common::*;

/// Which of the output streams has no reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Closed {
    Stdout,
    Stderr,
    Both,
}

const EVERY: [Closed; 3] = [Closed::Stdout, Closed::Stderr, Closed::Both];

/// What a run with a closed stream gave: its exit code and what the open stream (if any) received.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// `steward` with the environment the other tests use (see `common::steward`).
fn command(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_steward"));
    command
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", env!("CARGO_TARGET_TMPDIR"))
        .env("NO_COLOR", "1")
        .env("STEWARD_NOW", "2026-11-21T09:30:00+01:00")
        .env("OLLAMA_HOST", "127.0.0.1:9")
        .env("XDG_DATA_HOME", scratch_dir("data"))
        .env("XDG_CACHE_HOME", scratch_dir("cache"))
        .env("XDG_STATE_HOME", scratch_dir("state"))
        .stdin(Stdio::null());
    for (k, v) in env {
        command.env(k, v);
    }
    command
}

/// A pipe whose reading end is already closed: every write to it fails with EPIPE.
fn closed_pipe() -> Stdio {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    writer.into()
}

/// Runs `steward` with `closed` having no reader from the start, reading the other stream to its end.
fn run_closed(args: &[&str], env: &[(&str, &str)], closed: Closed) -> Ran {
    let mut command = command(args, env);
    let (out_closed, err_closed) = match closed {
        Closed::Stdout => (true, false),
        Closed::Stderr => (false, true),
        Closed::Both => (true, true),
    };
    command.stdout(if out_closed {
        closed_pipe()
    } else {
        Stdio::piped()
    });
    command.stderr(if err_closed {
        closed_pipe()
    } else {
        Stdio::piped()
    });
    let out = command.spawn().unwrap().wait_with_output().unwrap();
    let ran = Ran {
        code: out.status.code(),
        stdout: text(&out.stdout),
        stderr: text(&out.stderr),
    };
    assert!(
        !ran.stdout.contains("panicked") && !ran.stderr.contains("panicked"),
        "{args:?} with {closed:?} closed panicked:\n{}{}",
        ran.stdout,
        ran.stderr
    );
    ran
}

/// A demo database made once for this file's tests.
fn demo_db() -> &'static str {
    static DB: OnceLock<String> = OnceLock::new();
    DB.get_or_init(|| {
        let db = format!("{}/demo.sqlite", scratch_dir("pipes-demo"));
        let out = steward(&["demo", "--db", &db], &[], "");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        db
    })
}

#[test]
fn sql_run_ends_quietly_with_its_own_exit_code() {
    let db = demo_db();
    for closed in EVERY {
        let ran = run_closed(
            &["sql", "run", "--db", db, "SELECT * FROM orders"],
            &[],
            closed,
        );
        assert_eq!(ran.code, Some(0), "{closed:?}: {}", ran.stderr);
        if closed == Closed::Stderr {
            assert!(ran.stdout.starts_with("id "), "{}", ran.stdout);
            assert_eq!(ran.stdout.lines().count(), 102, "header, rule and 100 rows");
        }
        if closed == Closed::Stdout {
            assert!(ran.stderr.contains("100 rows shown"), "{}", ran.stderr);
        }
        // A failing query still exits 1, with or without anyone reading.
        let ran = run_closed(
            &["sql", "run", "--db", db, "SELECT nope FROM orders"],
            &[],
            closed,
        );
        assert_eq!(ran.code, Some(1), "{closed:?}: {}", ran.stderr);
        let ran = run_closed(
            &[
                "sql",
                "run",
                "--db",
                db,
                "--json",
                "SELECT nope FROM orders",
            ],
            &[],
            closed,
        );
        assert_eq!(ran.code, Some(1), "{closed:?}: {}", ran.stderr);
    }
}

#[test]
fn sql_check_ends_quietly_with_its_own_exit_code() {
    for closed in EVERY {
        for (sql, code) in [("SELECT 1", 0), ("DELETE FROM t", 1)] {
            for json in [false, true] {
                let mut args = vec!["sql", "check", "--dialect", "sqlite", sql];
                if json {
                    args.push("--json");
                }
                let ran = run_closed(&args, &[], closed);
                assert_eq!(ran.code, Some(code), "{args:?} {closed:?}: {}", ran.stderr);
                if closed == Closed::Stderr {
                    assert!(!ran.stdout.is_empty());
                }
            }
        }
    }
}

#[test]
fn tools_list_ends_quietly() {
    let db = demo_db();
    for closed in EVERY {
        for args in [
            vec!["tools", "list", "--db", db],
            vec!["tools", "list", "--db", db, "--json"],
            vec!["tools", "list"],
        ] {
            let ran = run_closed(&args, &[], closed);
            assert_eq!(ran.code, Some(0), "{args:?} {closed:?}: {}", ran.stderr);
            if closed == Closed::Stderr {
                assert!(ran.stdout.contains("current_date"), "{}", ran.stdout);
            }
        }
    }
}

#[test]
fn help_version_and_usage_errors_end_quietly() {
    for closed in EVERY {
        assert_eq!(run_closed(&["--help"], &[], closed).code, Some(0));
        assert_eq!(run_closed(&["--version"], &[], closed).code, Some(0));
        assert_eq!(run_closed(&["--frobnicate"], &[], closed).code, Some(2));
        // No model: a configuration error written to a closed stderr.
        assert_eq!(run_closed(&["ask", "hi"], &[], closed).code, Some(2));
    }
}

fn three_steps() -> Vec<wiremock::ResponseTemplate> {
    vec![
        tool_reply("call_date", "current_date", "{}"),
        tool_reply("call_calc", "calculator", r#"{"expression": "5 * 1.2"}"#),
        text_reply("Saturday; 6."),
    ]
}

#[tokio::test]
async fn ask_with_its_trace_ends_quietly_with_its_own_exit_code() {
    for closed in EVERY {
        for extra in [&["--trace"][..], &["--trace", "--json"][..], &[][..]] {
            let server = mock_openai(three_steps()).await;
            let base = format!("{}/v1", server.uri());
            let mut args = vec!["ask"];
            args.extend_from_slice(extra);
            args.push("What's the date, and 5 * 1.2?");
            let ran = run_closed(&args, &[("OPENAI_BASE_URL", &base)], closed);
            assert_eq!(ran.code, Some(0), "{args:?} {closed:?}: {}", ran.stderr);
            assert_eq!(bodies(&server).await.len(), 3, "the run went on to its end");
            match closed {
                Closed::Stderr if extra.contains(&"--json") => {
                    assert!(ran.stdout.contains("\"outcome\": \"answered\""))
                }
                Closed::Stderr => assert_eq!(ran.stdout, "Saturday; 6.\n"),
                Closed::Stdout if extra.contains(&"--trace") => {
                    assert!(ran.stderr.contains("call calculator"), "{}", ran.stderr);
                    assert!(ran.stderr.contains("answered · 3 steps"), "{}", ran.stderr);
                }
                _ => {}
            }
        }
    }
}

#[tokio::test]
async fn ask_that_fails_still_exits_3_with_nobody_reading() {
    for closed in EVERY {
        let server = mock_openai(vec![wiremock::ResponseTemplate::new(404).set_body_raw(
            r#"{"error": {"message": "The model `gpt-9` does not exist", "type": "invalid_request_error"}}"#,
            "application/json",
        )])
        .await;
        let base = format!("{}/v1", server.uri());
        let ran = run_closed(
            &["ask", "--trace", "--model", "openai:gpt-9", "hi"],
            &[("OPENAI_BASE_URL", &base)],
            closed,
        );
        assert_eq!(ran.code, Some(3), "{closed:?}: {}", ran.stderr);
        if closed == Closed::Stdout {
            assert!(ran.stderr.contains("HTTP 404"), "{}", ran.stderr);
        }
    }
}

/// `steward ask --trace … 2>&1 | head -1`: one pipe for both streams, whose reader takes one line and leaves
/// while the run still has steps to go.
#[tokio::test]
async fn ask_2_to_1_piped_into_head_1_exits_as_the_run_ended() {
    let server = mock_openai(
        three_steps()
            .into_iter()
            .map(|r| r.set_delay(Duration::from_millis(300)))
            .collect(),
    )
    .await;
    let base = format!("{}/v1", server.uri());
    let (reader, writer) = std::io::pipe().unwrap();
    let mut command = command(
        &["ask", "--trace", "What's the date, and 5 * 1.2?"],
        &[("OPENAI_BASE_URL", &base)],
    );
    command.stdout(writer.try_clone().unwrap()).stderr(writer);
    let mut child = command.spawn().unwrap();
    drop(command);
    let mut first = String::new();
    BufReader::new(reader).read_line(&mut first).unwrap();
    // The reader is gone now (BufReader dropped): the next trace line meets a closed pipe.
    assert!(first.starts_with("step 1 · openai:gpt-4o-mini"), "{first}");
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    assert_eq!(status.code(), Some(0));
    assert_eq!(bodies(&server).await.len(), 3);
}

/// `steward sql run … | head -1` on a result longer than a pipe holds.
#[test]
fn sql_run_piped_into_head_1_exits_0() {
    let db = demo_db();
    let (reader, writer) = std::io::pipe().unwrap();
    let mut command = command(
        &[
            "sql",
            "run",
            "--db",
            db,
            "--max-rows",
            "5000",
            "SELECT o.*, c.* FROM orders o CROSS JOIN customers c",
        ],
        &[],
    );
    command.stdout(writer).stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    drop(command);
    let mut first = String::new();
    BufReader::new(reader).read_line(&mut first).unwrap();
    assert!(first.starts_with("id "), "{first}");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[tokio::test]
async fn chat_leaves_when_nobody_reads_its_answers() {
    let server = mock_openai(vec![text_reply("Hello!")]).await;
    let base = format!("{}/v1", server.uri());
    for closed in EVERY {
        let mut command = command(&["chat"], &[("OPENAI_BASE_URL", &base)]);
        command
            .stdin(Stdio::piped())
            .stdout(if closed == Closed::Stderr {
                Stdio::piped()
            } else {
                closed_pipe()
            })
            .stderr(if closed == Closed::Stdout {
                Stdio::piped()
            } else {
                closed_pipe()
            });
        let mut child = command.spawn().unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"hi\nhello again\n").unwrap();
        let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
            .await
            .unwrap();
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(0), "{closed:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        if closed == Closed::Stderr {
            assert_eq!(stdout, "Hello!\nHello!\n");
        }
    }
    // Twice with stderr closed; once each with stdout closed (it leaves after the first answer).
    assert_eq!(bodies(&server).await.len(), 4);
}

#[tokio::test]
async fn demo_does_not_open_chat_when_nobody_reads() {
    let server = mock_openai(vec![text_reply("Hello!")]).await;
    let base = format!("{}/v1", server.uri());
    let mut command = command(&["demo", "--db", demo_db()], &[("OPENAI_BASE_URL", &base)]);
    command
        .stdin(Stdio::piped())
        .stdout(closed_pipe())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    // Chat would ask the model about this line.
    let _ = std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"hi\n");
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains("steward chat"), "chat opened: {stderr}");
    assert!(bodies(&server).await.is_empty());
}

/// A write that fails for another reason than a closed pipe (a full disk) is an error, said at the end.
#[test]
fn a_full_disk_is_an_error() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("SKIPPED: no /dev/full on this system");
        return;
    };
    let out = command(&["sql", "check", "--dialect", "sqlite", "SELECT 1"], &[])
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("error: cannot write the output: No space left on device"),
        "{stderr}"
    );
}
