//! Reading result cells as what they should be: text, integers, exact decimals, days. A cell that cannot be
//! read as its kind is an error naming its column, never a silent 0 or empty value.
//!
//! Exact decimals come as text from PostgreSQL and MySQL/MariaDB (`"12.50"`) and as REAL or INTEGER numbers
//! from SQLite, which has no decimal type: those are read through their shortest text and rounded to the
//! column's scale.

use std::str::FromStr;

use bigdecimal::BigDecimal;
use chrono::NaiveDate;
use serde_json::{Map, Value};
use steward_core::ToolError;
use steward_sql::{Dialect, QueryResult, ResultColumn};

use crate::money::{AMOUNT_SCALE, RATE_SCALE, amount_text, rate_text, round};

/// A cell that is not what its column should hold.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CellError {
    /// The row is shorter than the query's columns.
    #[error("the result has no column {index} (the row has {len} cells)")]
    Missing {
        /// The position asked for.
        index: usize,
        /// The cells the row has.
        len: usize,
    },
    /// The cell holds something else.
    #[error("column `{column}` holds {value}, which is not {expected}")]
    Unreadable {
        /// The column's name in the result.
        column: String,
        /// The value, as JSON.
        value: String,
        /// What it should have been.
        expected: &'static str,
    },
}

impl From<CellError> for ToolError {
    fn from(error: CellError) -> Self {
        ToolError::new(format!(
            "The stored data could not be read: {error}. Tell the user that this data needs fixing; do not guess \
             the value."
        ))
        .for_people(format!(
            "The stored data could not be read: {error}. This data needs fixing in the database."
        ))
        .with_diagnostic(error.to_string())
    }
}

/// How a column of structured data is normalised (the same on every engine).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An amount, as text with two decimals.
    Amount,
    /// A tax rate, as text with four decimals.
    Rate,
    /// An integer.
    Int,
}

/// One row of a result, read cell by cell.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cells<'a> {
    columns: &'a [ResultColumn],
    row: &'a [Value],
}

/// The rows of a result.
pub(crate) fn rows(result: &QueryResult) -> impl Iterator<Item = Cells<'_>> {
    result.rows.iter().map(|row| Cells {
        columns: &result.columns,
        row,
    })
}

/// The first row of a result, if any.
pub(crate) fn first(result: &QueryResult) -> Option<Cells<'_>> {
    rows(result).next()
}

impl<'a> Cells<'a> {
    fn get(&self, index: usize) -> Result<&'a Value, CellError> {
        self.row.get(index).ok_or(CellError::Missing {
            index,
            len: self.row.len(),
        })
    }

    fn unreadable(&self, index: usize, value: &Value, expected: &'static str) -> CellError {
        let column = self
            .columns
            .get(index)
            .map_or_else(|| format!("#{index}"), |c| c.name.clone());
        let mut shown = value.to_string();
        if shown.len() > 60 {
            shown = format!("{}…", shown.chars().take(60).collect::<String>());
        }
        CellError::Unreadable {
            column,
            value: shown,
            expected,
        }
    }

    /// Text that must be there (numbers are shown as text; NULL is an error).
    pub(crate) fn text(&self, index: usize) -> Result<String, CellError> {
        self.opt_text(index)?
            .ok_or_else(|| self.unreadable(index, &Value::Null, "text"))
    }

    /// Text that may be NULL.
    pub(crate) fn opt_text(&self, index: usize) -> Result<Option<String>, CellError> {
        Ok(match self.get(index)? {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            other => Some(other.to_string()),
        })
    }

    /// An integer (integers, or integer text as MySQL sums are).
    pub(crate) fn int(&self, index: usize) -> Result<i64, CellError> {
        let value = self.get(index)?;
        let read = match value {
            Value::Number(n) => n.as_i64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        };
        read.ok_or_else(|| self.unreadable(index, value, "an integer"))
    }

    /// An integer that may be NULL.
    pub(crate) fn opt_int(&self, index: usize) -> Result<Option<i64>, CellError> {
        match self.get(index)? {
            Value::Null => Ok(None),
            _ => self.int(index).map(Some),
        }
    }

    /// An exact decimal rounded to `scale` places.
    pub(crate) fn decimal(&self, index: usize, scale: i64) -> Result<BigDecimal, CellError> {
        let value = self.get(index)?;
        decimal(value, scale).ok_or_else(|| self.unreadable(index, value, "a decimal number"))
    }

    /// An amount, at cents.
    pub(crate) fn amount(&self, index: usize) -> Result<BigDecimal, CellError> {
        self.decimal(index, AMOUNT_SCALE)
    }

    /// A tax rate, at four decimals.
    pub(crate) fn rate(&self, index: usize) -> Result<BigDecimal, CellError> {
        self.decimal(index, RATE_SCALE)
    }

    /// A sum of amounts made by [`amount_sum`] in `dialect`.
    pub(crate) fn amount_sum(
        &self,
        index: usize,
        dialect: Dialect,
    ) -> Result<BigDecimal, CellError> {
        if dialect == Dialect::Sqlite {
            let value = self.get(index)?;
            value
                .as_i64()
                .map(|cents| BigDecimal::new(cents.into(), AMOUNT_SCALE))
                .ok_or_else(|| self.unreadable(index, value, "a sum of amounts"))
        } else {
            self.amount(index)
        }
    }

    /// A day (a date, or the day of a timestamp) that must be there.
    pub(crate) fn day(&self, index: usize) -> Result<NaiveDate, CellError> {
        let value = self.get(index)?;
        self.opt_day(index)?
            .ok_or_else(|| self.unreadable(index, value, "a date"))
    }

    /// A day that may be NULL.
    pub(crate) fn opt_day(&self, index: usize) -> Result<Option<NaiveDate>, CellError> {
        let value = self.get(index)?;
        match value {
            Value::Null => Ok(None),
            Value::String(s) => s
                .get(..10)
                .and_then(|head| NaiveDate::parse_from_str(head, "%Y-%m-%d").ok())
                .filter(|_| {
                    s.get(10..)
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with(['T', ' ']))
                })
                .map(Some)
                .ok_or_else(|| self.unreadable(index, value, "a date")),
            _ => Err(self.unreadable(index, value, "a date")),
        }
    }
}

/// A decimal from a cell: exact text as it is, a number through its shortest text; rounded to `scale`.
pub(crate) fn decimal(value: &Value, scale: i64) -> Option<BigDecimal> {
    let text = match value {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.trim().to_owned(),
        _ => return None,
    };
    // Exact decimals only: no NaN, no infinities, nothing absurdly long.
    if text.len() > 100
        || !text
            .bytes()
            .all(|b| b.is_ascii_digit() || b".-+eE".contains(&b))
    {
        return None;
    }
    let parsed = BigDecimal::from_str(&text).ok()?;
    // Refuse exponents that would expand into millions of digits when rescaled.
    let (_, exponent) = parsed.as_bigint_and_exponent();
    if exponent.abs() > 1000 {
        return None;
    }
    Some(round(&parsed, scale))
}

/// `SUM` of an amount column, exact on every engine: SQLite stores REAL values, so it sums whole cents as
/// integers; the others sum their exact `NUMERIC`. No rows give 0. On SQLite, where a column may hold any
/// value and arithmetic reads text as 0, a value that is no number turns the sum into a text naming the column,
/// which [`Cells::amount_sum`] refuses.
pub(crate) fn amount_sum(dialect: Dialect, column: &str) -> String {
    if dialect == Dialect::Sqlite {
        format!(
            "CASE WHEN MIN(typeof({column}) IN ('integer', 'real')) = 0 THEN '{} has a value that is not a number' \
             ELSE COALESCE(SUM(CAST(ROUND({column} * 100) AS INTEGER)), 0) END",
            column.replace('\'', "")
        )
    } else {
        format!("COALESCE(SUM({column}), 0)")
    }
}

/// Rows of a result as JSON objects keyed by column name, for structured data; the columns in `kinds` are
/// normalised (amounts and rates as exact text with their scale, integers as numbers) so that every engine
/// gives the same data.
pub(crate) fn objects(result: &QueryResult, kinds: &[(&str, Kind)]) -> Result<Value, CellError> {
    let mut out = Vec::with_capacity(result.rows.len());
    for cells in rows(result) {
        let mut object = Map::new();
        for (index, column) in result.columns.iter().enumerate() {
            let kind = kinds
                .iter()
                .find(|(name, _)| *name == column.name)
                .map(|(_, kind)| *kind);
            let raw = cells.get(index)?;
            let value = match kind {
                _ if raw.is_null() => Value::Null,
                Some(Kind::Amount) => Value::String(amount_text(&cells.amount(index)?)),
                Some(Kind::Rate) => Value::String(rate_text(&cells.rate(index)?)),
                Some(Kind::Int) => Value::from(cells.int(index)?),
                None => raw.clone(),
            };
            object.insert(column.name.clone(), value);
        }
        out.push(Value::Object(object));
    }
    Ok(Value::Array(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(columns: &[&str], rows: Vec<Vec<Value>>) -> QueryResult {
        QueryResult {
            columns: columns
                .iter()
                .map(|c| ResultColumn {
                    name: (*c).to_owned(),
                    type_name: String::new(),
                })
                .collect(),
            rows,
            truncated: false,
        }
    }

    #[test]
    fn decimals_from_every_engine_read_the_same() {
        let r = result(
            &["a", "b", "c", "d"],
            vec![vec![
                json!("12.50"),
                json!(12.5),
                json!(12),
                json!(0.30000000000000004),
            ]],
        );
        let c = first(&r).unwrap();
        for i in 0..3 {
            assert_eq!(
                c.amount(i).unwrap().to_string(),
                if i == 2 { "12.00" } else { "12.50" }
            );
        }
        assert_eq!(c.amount(3).unwrap().to_string(), "0.30");
        assert_eq!(c.rate(1).unwrap().to_string(), "12.5000");
    }

    #[test]
    fn unreadable_cells_are_errors_naming_the_column() {
        let r = result(
            &["net_amount", "spent_on", "quantity", "eta"],
            vec![vec![
                json!("abc"),
                json!("21.11.2026"),
                json!("x"),
                Value::Null,
            ]],
        );
        let c = first(&r).unwrap();
        assert_eq!(
            c.amount(0).unwrap_err().to_string(),
            "column `net_amount` holds \"abc\", which is not a decimal number"
        );
        assert_eq!(
            c.day(1).unwrap_err().to_string(),
            "column `spent_on` holds \"21.11.2026\", which is not a date"
        );
        assert!(
            c.int(2)
                .unwrap_err()
                .to_string()
                .starts_with("column `quantity`")
        );
        assert_eq!(c.opt_day(3).unwrap(), None);
        assert!(c.day(3).is_err());
        assert!(c.text(7).is_err());
        for bad in [json!("inf"), json!("NaN"), json!("1e99999"), json!(true)] {
            assert_eq!(decimal(&bad, 2), None, "{bad}");
        }
        let err = ToolError::from(c.amount(0).unwrap_err());
        assert!(err.message.contains("`net_amount`"), "{}", err.message);
    }

    #[test]
    fn structured_rows_are_normalised() {
        let r = result(
            &["id", "total", "tax_rate", "units"],
            vec![vec![json!(1), json!(6), json!(0.2), json!("12")]],
        );
        let kinds = [
            ("total", Kind::Amount),
            ("tax_rate", Kind::Rate),
            ("units", Kind::Int),
        ];
        assert_eq!(
            objects(&r, &kinds).unwrap(),
            json!([{"id": 1, "total": "6.00", "tax_rate": "0.2000", "units": 12}])
        );
    }
}
