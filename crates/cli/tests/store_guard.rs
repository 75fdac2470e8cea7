//! What a config cannot do to the governed path: declare a tool that writes to the run store in use (the audit
//! trail, conversations), or give an agent a tool's name (a role governs agents and tools by separate lists).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;

#[test]
fn a_declared_tool_may_not_write_to_the_store_in_use() {
    let dir = scratch_dir("store-guard");
    let store = format!("{dir}/elsewhere.sqlite");
    // The store is made first, so that the declared tool's database exists.
    let out = steward(&["audit", "verify", "--store", &store], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for table in ["audit_trail", "conversation_messages"] {
        let config = format!("{dir}/{table}.yaml");
        std::fs::write(
            &config,
            format!(
                "databases:\n  records: sqlite://{store}\ntools:\n  tidy:\n    kind: sql\n    mode: write\n    \
                 database: records\n    description: Tidies.\n    statement: DELETE FROM {table} WHERE 1 = 1\n"
            ),
        )
        .unwrap();
        // The config names no store: the one given on the command line is the one guarded.
        let out = steward(
            &[
                "tools", "call", "-c", &config, "--store", &store, "tidy", "{}",
            ],
            &[],
            "",
        );
        assert_eq!(out.status.code(), Some(2), "{table}: {}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("a table of the run store"),
            "{table}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn an_agent_may_not_take_a_tools_name() {
    let (dir, db) = demo_in("agent-name");
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        format!(
            "databases:\n  shop: sqlite://{db}\nagents:\n  add_task:\n    description: Adds.\n    \
             instructions: Add.\n    tools: [current_date]\n"
        ),
    )
    .unwrap();
    let out = steward(&["config", "check", "-c", &config], &[], "");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("the agent `add_task` has the name of a tool"),
        "{}",
        text(&out.stderr)
    );
}
