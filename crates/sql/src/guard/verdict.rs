//! The guard's answer: the verdict, its class and its reasons.

use serde::{Deserialize, Serialize};

/// What kind of statement it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StatementClass {
    /// Reads only.
    Read,
    /// Changes rows.
    Write,
    /// Changes the schema.
    Ddl,
    /// Changes sessions, transactions, settings, files or the server.
    Admin,
    /// Anything else, or SQL that could not be parsed.
    Other,
}

/// One reason a statement was refused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reason {
    /// A stable code: `parse_error`, `empty`, `multiple_statements`, `not_read_only`, `data_modifying_cte`,
    /// `select_into`, `locking_read`, `explain_analyze`, `copy`, `set`, `transaction_control`, `attach`,
    /// `pragma`, `executable_comment`, `optimizer_hint`, `variable_assignment`, `forbidden_function`,
    /// `sensitive_catalog`, `ambiguous_text`, `too_long`, `too_deep`, `table_not_allowed`,
    /// `column_not_allowed`, `scope` (a query that cannot be limited to what the principal may see); for statements written by people ([`crate::Guard::bind_named`],
    /// [`crate::Guard::check_write`]) also `positional_placeholder` and `not_a_write`.
    pub code: String,
    /// What is wrong and what to do instead.
    pub message: String,
}

pub(crate) fn reason(code: &str, message: impl Into<String>) -> Reason {
    Reason {
        code: code.to_owned(),
        message: message.into(),
    }
}

/// The guard's verdict on one SQL text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuardVerdict {
    /// True when the SQL may run.
    pub allowed: bool,
    /// What kind of statement it is.
    pub class: StatementClass,
    /// Why it was refused (empty when allowed).
    pub reasons: Vec<Reason>,
    /// The tables it reads (CTE names excluded), as written.
    pub tables: Vec<String>,
    /// Table aliases as (alias, table), for explaining errors.
    #[serde(skip)]
    pub aliases: Vec<(String, String)>,
}

impl GuardVerdict {
    /// The reasons as one sentence for the model.
    pub fn explanation(&self) -> String {
        self.reasons
            .iter()
            .map(|r| r.message.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Whether a reason with this code was given.
    pub fn has(&self, code: &str) -> bool {
        self.reasons.iter().any(|r| r.code == code)
    }
}

/// A verdict from its class and reasons: allowed when it is a read with no reason against it.
pub(crate) fn verdict(
    class: StatementClass,
    reasons: Vec<Reason>,
    tables: Vec<String>,
) -> GuardVerdict {
    GuardVerdict {
        allowed: reasons.is_empty() && class == StatementClass::Read,
        class,
        reasons,
        tables,
        aliases: Vec::new(),
    }
}
