//! `list_tables` and `describe_tables`, each as the principal of the call may see the catalog (its tables and
//! columns, no values of rows it may not read: see [`super::visible_catalog`]).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use steward_core::{Tool, ToolData, ToolError, ToolOutput, TypedTool};

use super::SqlToolkit;
use crate::context::describe_tables as describe;

/// The refusal of a principal whose access cannot be worked out (it may read nothing).
fn not_allowed(why: String) -> ToolError {
    ToolError::new(format!("Not allowed: {why}."))
}

/// Arguments of `list_tables` (none).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTablesArgs {}

pub(super) fn list_tables(kit: Arc<SqlToolkit>) -> impl Tool {
    TypedTool::with_state(
        "list_tables",
        "Lists the database's tables and views with their approximate row counts and comments.",
        kit,
        |kit, ctx, _args: ListTablesArgs| async move {
            let catalog = kit.catalog_as(&ctx.principal).map_err(not_allowed)?;
            let mut lines = Vec::new();
            let mut rows = Vec::new();
            for t in &catalog.tables {
                let mut line = t.name.clone();
                if t.kind == crate::TableKind::View {
                    line.push_str(" (view)");
                }
                if let Some(n) = t.rows {
                    line.push_str(&format!(" ~{n} rows"));
                }
                if let Some(c) = &t.comment {
                    line.push_str(&format!(" — {c}"));
                }
                lines.push(line);
                rows.push(vec![json!(t.name), json!(t.rows), json!(t.comment)]);
            }
            if lines.is_empty() {
                lines.push("The database has no tables you may read.".to_owned());
            }
            Ok(
                ToolOutput::text(lines.join("\n")).with_data(ToolData::Table {
                    columns: vec!["table".into(), "rows".into(), "comment".into()],
                    rows,
                    truncated: false,
                    note: None,
                }),
            )
        },
    )
    .read_only()
    .idempotent()
}

/// Arguments of `describe_tables`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DescribeTablesArgs {
    /// The tables to describe, by name.
    #[schemars(length(min = 1, max = 20))]
    pub tables: Vec<String>,
}

pub(super) fn describe_tables(kit: Arc<SqlToolkit>) -> impl Tool {
    TypedTool::with_state(
        "describe_tables",
        "Describes tables: columns with types, keys, foreign keys (how to join) and sample values.",
        kit,
        |kit, ctx, args: DescribeTablesArgs| async move {
            let catalog = kit.catalog_as(&ctx.principal).map_err(not_allowed)?;
            let mut found = Vec::new();
            let mut unknown = Vec::new();
            for name in &args.tables {
                match catalog.table(name) {
                    Some(t) => found.push(t),
                    None => unknown.push(name.as_str()),
                }
            }
            if !unknown.is_empty() {
                let all: Vec<&str> = catalog.names().collect();
                return Err(ToolError::new(format!(
                    "No table named {}. The tables are: {}.",
                    unknown
                        .iter()
                        .map(|u| format!("`{u}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    all.join(", ")
                )));
            }
            Ok(ToolOutput::text(describe(&catalog, &found)))
        },
    )
    .read_only()
    .idempotent()
}
