//! `run_sql`: one guarded, read-only SQL query.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use steward_core::{Tool, TypedTool};

use super::{SqlToolkit, table_output, tool_error};

/// Arguments of `run_sql`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunSqlArgs {
    /// One SELECT (or WITH … SELECT) statement in the database's dialect.
    #[schemars(length(min = 1, max = 20000))]
    pub sql: String,
}

pub(super) fn run_sql(kit: Arc<SqlToolkit>) -> impl Tool {
    let description = format!(
        "Runs one read-only SQL query ({}) and returns at most {} rows. Only SELECT / WITH / VALUES / EXPLAIN; \
         anything else is refused with the reason.",
        kit.db.dialect().name(),
        kit.limits.max_rows
    );
    TypedTool::with_state(
        "run_sql",
        description,
        kit,
        |kit, ctx, args: RunSqlArgs| async move {
            let (result, filtered) = kit
                .read_as(&ctx.principal, &args.sql, &[], &kit.limits)
                .await
                .map_err(tool_error)?;
            Ok(table_output(&result, &super::filtered_note(&filtered)))
        },
    )
    .read_only()
    .idempotent()
}
