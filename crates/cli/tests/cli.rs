//! The `steward` binary as a user runs it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::{Command, Output};

fn steward(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_steward"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run steward")
}

#[test]
fn version_prints_the_package_version() {
    let out = steward(&["--version"]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        format!("steward {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn help_says_what_steward_is() {
    let out = steward(&["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("LLM agents that act reliably on business data"),
        "{text}"
    );
    assert!(text.contains("Usage: steward"), "{text}");
}

#[test]
fn no_arguments_prints_help_and_fails() {
    let out = steward(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("Usage: steward")
    );
}

#[test]
fn unknown_argument_is_a_clear_error() {
    let out = steward(&["--frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("unexpected argument '--frobnicate'"), "{err}");
}
