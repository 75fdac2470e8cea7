//! `query_table`: a structured, injection-free query of one table. Table and column names are offered to the
//! model as enums from the catalog; filters are typed; values are bound as parameters, never spliced in.

use std::collections::BTreeSet;
use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use steward_core::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec, parse_args};

use super::{SqlToolkit, table_output, tool_error};
use crate::catalog::{Catalog, Table};
use crate::dialect::Dialect;
use crate::query::{Param, QueryLimits};

/// Above these sizes names are offered as plain strings (an enum would bloat every request); the tool still
/// checks them.
const MAX_ENUM_TABLES: usize = 300;
const MAX_ENUM_COLUMNS: usize = 1500;
/// Most rows one call returns.
const MAX_LIMIT: u64 = 500;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    table: String,
    #[serde(default)]
    columns: Vec<String>,
    #[serde(default)]
    filters: Vec<Filter>,
    #[serde(default)]
    order_by: Vec<Order>,
    #[serde(default)]
    limit: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Filter {
    column: String,
    op: Op,
    #[serde(default)]
    value: Value,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Like,
    In,
    IsNull,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Order {
    column: String,
    #[serde(default)]
    descending: bool,
}

/// The `query_table` tool.
pub(super) struct QueryTable {
    kit: Arc<SqlToolkit>,
    spec: ToolSpec,
}

impl QueryTable {
    /// The tool offering every table and column of the toolkit's catalog.
    pub(super) fn new(kit: Arc<SqlToolkit>) -> Self {
        let catalog = kit.catalog.clone();
        Self::with_catalog(kit, &catalog)
    }

    /// The tool offering the tables and columns of `catalog` (the toolkit's, as one principal may see it).
    pub(super) fn with_catalog(kit: Arc<SqlToolkit>, catalog: &Catalog) -> Self {
        let spec = ToolSpec::new(
            "query_table",
            "Reads rows of one table with optional filters, ordering and a limit, without writing SQL. \
             Filters: eq, ne, lt, le, gt, ge, like (% wildcards), in (a list), is_null (true or false).",
            schema(&catalog.tables),
        );
        let mut spec = spec;
        spec.annotations.read_only = true;
        spec.annotations.idempotent = true;
        Self { kit, spec }
    }

    /// The query for `args` over `catalog` (as the principal of the call may see it: the names it lists and
    /// the columns read when none are named are only those).
    fn build(&self, catalog: &Catalog, args: &Args) -> Result<(String, Vec<Param>), ToolError> {
        let dialect = catalog.dialect;
        let table = catalog.table(&args.table).ok_or_else(|| {
            ToolError::new(format!(
                "No table named `{}`. The tables are: {}.",
                args.table,
                catalog.names().collect::<Vec<_>>().join(", ")
            ))
        })?;
        let column = |name: &str| -> Result<&crate::catalog::Column, ToolError> {
            table.column(name).ok_or_else(|| {
                ToolError::new(format!(
                    "Table `{}` has no column `{name}`. Its columns are: {}.",
                    table.name,
                    table
                        .columns
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })
        };
        let selected: Vec<String> = if args.columns.is_empty() {
            table
                .columns
                .iter()
                .map(|c| dialect.quote(&c.name))
                .collect()
        } else {
            args.columns
                .iter()
                .map(|c| column(c).map(|c| dialect.quote(&c.name)))
                .collect::<Result<_, _>>()?
        };
        let mut params = Vec::new();
        let mut conditions = Vec::new();
        for filter in &args.filters {
            let col = column(&filter.column)?;
            let name = dialect.quote(&col.name);
            let mut placeholder = |value: &Value| -> Result<String, ToolError> {
                params.push(param(value, &filter.column)?);
                Ok(cast(
                    dialect,
                    &dialect.placeholder(params.len()),
                    &col.data_type,
                ))
            };
            let condition = match filter.op {
                Op::IsNull => match filter.value {
                    Value::Bool(false) => format!("{name} IS NOT NULL"),
                    _ => format!("{name} IS NULL"),
                },
                Op::In => {
                    let Value::Array(items) = &filter.value else {
                        return Err(ToolError::new(format!(
                            "The `in` filter on `{}` needs a list of values, e.g. [\"a\", \"b\"].",
                            filter.column
                        )));
                    };
                    if items.is_empty() || items.len() > 200 {
                        return Err(ToolError::new(
                            "An `in` filter needs between 1 and 200 values.",
                        ));
                    }
                    let list: Vec<String> = items
                        .iter()
                        .map(&mut placeholder)
                        .collect::<Result<_, _>>()?;
                    format!("{name} IN ({})", list.join(", "))
                }
                Op::Like => {
                    let text = match &filter.value {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    params.push(Param::Text(text));
                    let p = dialect.placeholder(params.len());
                    match dialect {
                        Dialect::Postgres => format!("CAST({name} AS text) ILIKE {p}"),
                        _ => format!("{name} LIKE {p}"),
                    }
                }
                op => {
                    if filter.value.is_null() {
                        return Err(ToolError::new(format!(
                            "The `{}` filter on `{}` needs a value; use is_null to find NULLs.",
                            op_name(op),
                            filter.column
                        )));
                    }
                    let p = placeholder(&filter.value)?;
                    format!("{name} {} {p}", sql_op(op))
                }
            };
            conditions.push(condition);
        }
        let mut sql = format!(
            "SELECT {} FROM {}",
            selected.join(", "),
            dialect.quote_table(&table.name)
        );
        if !conditions.is_empty() {
            sql.push_str(" WHERE ");
            sql.push_str(&conditions.join(" AND "));
        }
        if !args.order_by.is_empty() {
            let orders: Vec<String> = args
                .order_by
                .iter()
                .map(|o| {
                    column(&o.column).map(|c| {
                        format!(
                            "{}{}",
                            dialect.quote(&c.name),
                            if o.descending { " DESC" } else { "" }
                        )
                    })
                })
                .collect::<Result<_, _>>()?;
            sql.push_str(" ORDER BY ");
            sql.push_str(&orders.join(", "));
        }
        let limit = args
            .limit
            .unwrap_or(self.kit.limits.max_rows as u64)
            .clamp(1, MAX_LIMIT);
        sql.push_str(&format!(" LIMIT {limit}"));
        Ok((sql, params))
    }
}

fn op_name(op: Op) -> &'static str {
    match op {
        Op::Eq => "eq",
        Op::Ne => "ne",
        Op::Lt => "lt",
        Op::Le => "le",
        Op::Gt => "gt",
        Op::Ge => "ge",
        Op::Like => "like",
        Op::In => "in",
        Op::IsNull => "is_null",
    }
}

fn sql_op(op: Op) -> &'static str {
    match op {
        Op::Ne => "<>",
        Op::Lt => "<",
        Op::Le => "<=",
        Op::Gt => ">",
        Op::Ge => ">=",
        _ => "=",
    }
}

/// A JSON value as a bound parameter. PostgreSQL gets text cast to the column's type (so `"5"` works for an
/// integer column and `"2024-05-01"` for a date); SQLite and MySQL get the value's own type.
fn param(value: &Value, column: &str) -> Result<Param, ToolError> {
    Ok(match value {
        Value::Bool(b) => Param::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Param::Int(i),
            None => Param::Float(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => Param::Text(s.clone()),
        _ => {
            return Err(ToolError::new(format!(
                "The value for `{column}` must be a string, a number or a boolean."
            )));
        }
    })
}

fn cast(dialect: Dialect, placeholder: &str, data_type: &str) -> String {
    match dialect {
        Dialect::Postgres => format!("CAST(CAST({placeholder} AS text) AS {data_type})"),
        _ => placeholder.to_owned(),
    }
}

/// The argument schema, with the catalog's names as enums when there are not too many.
fn schema(tables: &[Table]) -> Value {
    let table_names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
    let columns: BTreeSet<&str> = tables
        .iter()
        .flat_map(|t| t.columns.iter().map(|c| c.name.as_str()))
        .collect();
    let table = if table_names.len() <= MAX_ENUM_TABLES && !table_names.is_empty() {
        json!({"type": "string", "enum": table_names, "description": "The table to read."})
    } else {
        json!({"type": "string", "description": "The table to read (see list_tables)."})
    };
    let column = if columns.len() <= MAX_ENUM_COLUMNS && !columns.is_empty() {
        json!({"type": "string", "enum": columns.into_iter().collect::<Vec<_>>()})
    } else {
        json!({"type": "string"})
    };
    json!({
        "type": "object",
        "properties": {
            "table": table,
            "columns": {"type": "array", "items": column, "description": "The columns to return; all when omitted."},
            "filters": {
                "type": "array",
                "description": "Conditions that must all hold.",
                "items": {
                    "type": "object",
                    "properties": {
                        "column": column,
                        "op": {"type": "string", "enum": ["eq", "ne", "lt", "le", "gt", "ge", "like", "in", "is_null"]},
                        "value": {"description": "A string, number or boolean; a list for `in`; true or false for `is_null`."}
                    },
                    "required": ["column", "op"],
                    "additionalProperties": false
                }
            },
            "order_by": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"column": column, "descending": {"type": "boolean"}},
                    "required": ["column"],
                    "additionalProperties": false
                }
            },
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "description": "Most rows to return."}
        },
        "required": ["table"],
        "additionalProperties": false
    })
}

#[async_trait]
impl Tool for QueryTable {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(args)?;
        let catalog = self
            .kit
            .catalog_as(&ctx.principal)
            .map_err(|why| ToolError::new(format!("Not allowed: {why}.")))?;
        let (sql, params) = self.build(&catalog, &args)?;
        let limits = QueryLimits {
            max_rows: usize::try_from(
                args.limit
                    .unwrap_or(self.kit.limits.max_rows as u64)
                    .clamp(1, MAX_LIMIT),
            )
            .unwrap_or(self.kit.limits.max_rows),
            ..self.kit.limits
        };
        let (result, filtered) = self
            .kit
            .read_as(&ctx.principal, &sql, &params, &limits)
            .await
            .map_err(tool_error)?;
        let note = super::filtered_note(&filtered);
        Ok(table_output(&result, &format!("{note}SQL: {sql}")))
    }
}
