//! What goes into a SQL tool's statement and what comes out: arguments as typed bound values, rows as the
//! text table the model reads, a write's count in words, and database errors as errors the model can act on.

use serde_json::Value;
use steward_core::{ToolData, ToolError, ToolOutput};
use steward_sql::{Param, QueryResult, SqlError, SqlErrorKind, WriteKind};

use super::super::params::ParamType;

/// A validated argument as a bound value; a parameter left out is a NULL of its type.
pub(super) fn to_param(
    name: &str,
    kind: ParamType,
    value: Option<&Value>,
) -> Result<Param, ToolError> {
    let wrong = || {
        ToolError::new(format!(
            "`{name}` must be {}; correct it and call again.",
            match kind {
                ParamType::String => "a string",
                ParamType::Integer =>
                    "a whole number between -9223372036854775808 and 9223372036854775807",
                ParamType::Number => "a number",
                ParamType::Boolean => "true or false",
            }
        ))
    };
    Ok(match (kind, value) {
        (ParamType::String, None) => Param::Null,
        (ParamType::Integer, None) => Param::NullInt,
        (ParamType::Number, None) => Param::NullFloat,
        (ParamType::Boolean, None) => Param::NullBool,
        (ParamType::String, Some(Value::String(s))) => Param::Text(s.clone()),
        (ParamType::Integer, Some(v)) => Param::Int(v.as_i64().ok_or_else(wrong)?),
        (ParamType::Number, Some(v)) => Param::Float(v.as_f64().ok_or_else(wrong)?),
        (ParamType::Boolean, Some(Value::Bool(b))) => Param::Bool(*b),
        _ => return Err(wrong()),
    })
}

/// Rows as the text table the model reads (the SQL tools' renderer) and as data for UIs.
pub(super) fn table_output(result: &QueryResult) -> ToolOutput {
    ToolOutput::text(result.to_text()).with_data(ToolData::Table {
        columns: result.columns.iter().map(|c| c.name.clone()).collect(),
        rows: result.rows.clone(),
        truncated: result.truncated,
        note: None,
    })
}

/// What a write did, in words.
pub(super) fn changed(kind: WriteKind, rows: u64) -> String {
    let s = if rows == 1 { "" } else { "s" };
    match (kind, rows) {
        (WriteKind::Insert, _) => format!("Done: {rows} row{s} added."),
        (WriteKind::Delete, 0) => "No row matched, so nothing was deleted.".to_owned(),
        (WriteKind::Delete, _) => format!("Done: {rows} row{s} deleted."),
        (_, 0) => "No row matched, so nothing was changed.".to_owned(),
        _ => format!("Done: {rows} row{s} changed."),
    }
}

/// A database error as a tool error: a value the database rejected is the model's to fix; an outage says
/// the database is unavailable; a fault of the declared statement is the operator's.
pub(super) fn sql_error(error: SqlError, write: bool) -> ToolError {
    let nothing = if write {
        "the change was not made"
    } else {
        "nothing was read"
    };
    let m = error.message();
    match error.kind() {
        SqlErrorKind::Invalid => ToolError::new(format!(
            "The database rejected a value: {m}. Correct that value (its type, range or characters) and try again."
        )),
        SqlErrorKind::Constraint => ToolError::new(format!(
            "The change conflicts with existing data: {m}. Nothing was changed."
        )),
        SqlErrorKind::Timeout => {
            let stopped = format!(
                "The database stopped the statement after {} ms (time limit), so {nothing}",
                error.timeout_ms().unwrap_or_default()
            );
            ToolError::new(format!("{stopped}; try narrower values or tell the user."))
                .for_people(format!("{stopped}; try narrower values."))
        }
        SqlErrorKind::Unavailable | SqlErrorKind::Connect => {
            let down = format!("The database is unavailable right now, so {nothing}");
            ToolError::new(format!("{down}; tell the user and try again later."))
                .for_people(format!("{down}; try again later."))
                .with_diagnostic(m)
        }
        // A refusal is about who asks (their role's tables, columns and rows), not the tool: say why.
        SqlErrorKind::Refused => ToolError::new(format!(
            "Not allowed, so {nothing}: {m} Tell the user what they may not see."
        ))
        .for_people(format!("Not allowed, so {nothing}: {m}")),
        _ => ToolError::new(format!(
            "The database refused this tool's statement, so {nothing}; tell the user the tool is misconfigured."
        ))
        .for_people(format!(
            "The database refused this tool's statement, so {nothing}: the tool's SQL does not fit the database. \
             The operator has the details (`steward config check` checks the tools against the database)."
        ))
        .with_diagnostic(error.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_bind_by_declared_type_and_absent_ones_as_typed_nulls() {
        assert_eq!(
            to_param("a", ParamType::String, Some(&json!("O'Brien"))).unwrap(),
            Param::Text("O'Brien".into())
        );
        assert_eq!(
            to_param("a", ParamType::Integer, Some(&json!(7))).unwrap(),
            Param::Int(7)
        );
        assert_eq!(
            to_param("a", ParamType::Number, Some(&json!(2.5))).unwrap(),
            Param::Float(2.5)
        );
        assert_eq!(
            to_param("a", ParamType::Boolean, None).unwrap(),
            Param::NullBool
        );
        let e = to_param("n", ParamType::Integer, Some(&json!(u64::MAX))).unwrap_err();
        assert!(e.message.contains("`n` must be a whole number"), "{e}");
        assert!(to_param("s", ParamType::String, Some(&json!(1))).is_err());
    }

    #[test]
    fn outages_and_values_are_told_apart() {
        let e = sql_error(SqlError::unavailable("connection reset"), true);
        assert!(e.message.contains("unavailable"), "{e}");
        assert!(!e.message.contains("reset"));
        let e = sql_error(SqlError::invalid("value too long"), false);
        assert!(e.message.contains("value too long"), "{e}");
        assert_eq!(changed(WriteKind::Insert, 1), "Done: 1 row added.");
        assert_eq!(
            changed(WriteKind::Update, 0),
            "No row matched, so nothing was changed."
        );
    }
}
