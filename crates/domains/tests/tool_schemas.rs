//! The domain tools' argument schemas describe their own tool, never another: a copied doc comment once told
//! the model that `get_inbox_tasks` and `get_projects` took the "Arguments of `current_date`".
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use steward_core::{Tool, ToolSpec};

/// Whether `name` occurs in `text` as a whole tool name (not inside a longer one).
fn names(text: &str, name: &str) -> bool {
    let part_of_name = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    text.match_indices(name).any(|(at, _)| {
        !text[..at].chars().next_back().is_some_and(part_of_name)
            && !text[at + name.len()..]
                .chars()
                .next()
                .is_some_and(part_of_name)
    })
}

#[tokio::test]
async fn no_argument_schema_names_another_tool() {
    let tools = support::toolbox(support::sqlite_demo().await).await;
    let mut specs: Vec<ToolSpec> = tools.specs().to_vec();
    specs.push(steward_domains::common::final_answer().spec().clone());
    let all: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    let mut described = 0;
    let mut problems = Vec::new();
    for spec in &specs {
        let Some(description) = spec.parameters.get("description") else {
            continue;
        };
        let description = description
            .as_str()
            .expect("a schema's description is text");
        described += 1;
        for other in all.iter().filter(|n| **n != spec.name) {
            if names(description, other) {
                problems.push(format!(
                    "the arguments of `{}` are described as {description:?}, which names `{other}`",
                    spec.name
                ));
            }
        }
    }
    assert!(
        described >= 10,
        "only {described} schemas have a description"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_tool_name_is_found_only_whole() {
    assert!(names("Arguments of `current_date` (none).", "current_date"));
    assert!(!names("Arguments of `get_inbox_tasks`.", "get_tasks"));
    assert!(!names("Arguments of `add_tasks`.", "add_task"));
    assert!(!names("Arguments of `get_tasks`.", "get_task"));
}
