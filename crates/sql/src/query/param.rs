//! Parameters bound to a query: typed values, and NULLs typed like their column (PostgreSQL wants them so).

/// A parameter bound to a query.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Param {
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// An exact decimal (money): bound as `NUMERIC`/`DECIMAL`; as text on SQLite, which has no decimal type
    /// and applies the column's affinity.
    Decimal(bigdecimal::BigDecimal),
    /// Text.
    Text(String),
    /// A boolean.
    Bool(bool),
    /// A date.
    Date(chrono::NaiveDate),
    /// A date and time without time zone.
    Timestamp(chrono::NaiveDateTime),
    /// A text NULL.
    Null,
    /// An integer NULL (PostgreSQL wants NULLs typed like their column).
    NullInt,
    /// A date NULL.
    NullDate,
    /// A float NULL.
    NullFloat,
    /// A boolean NULL.
    NullBool,
}
