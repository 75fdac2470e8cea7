//! The guard: parses SQL in its dialect, classifies it, and refuses what a read-only policy forbids, with a
//! reason for each refusal.
//!
//! Allowed: exactly one `SELECT`, `WITH`, `VALUES` or `EXPLAIN` (not `ANALYZE`) statement. Refused: several
//! statements, data-modifying CTEs, `SELECT … INTO`, locking reads, `COPY`, `SET`, transaction control,
//! `ATTACH`, `PRAGMA`, MySQL executable comments, and functions with side effects or file, network or admin
//! reach; optionally tables and columns outside an allowlist. Ordinary analytic SQL (window functions,
//! recursive CTEs, subqueries, set operations, casts, date functions, ordered-set aggregates) is allowed.
//!
//! The guard is one of two walls: queries also run in the engine's own read-only mode.

mod classify;
mod functions;
mod walker;

use classify::{classify, lexical_reasons};
use walker::Walker;

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use sqlparser::ast::{ObjectName, ObjectNamePart, Visit};
use sqlparser::parser::Parser;

use crate::dialect::Dialect;

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
    /// `pragma`, `executable_comment`, `forbidden_function`, `table_not_allowed`, `column_not_allowed`.
    pub code: String,
    /// What is wrong and what to do instead.
    pub message: String,
}

fn reason(code: &str, message: impl Into<String>) -> Reason {
    Reason {
        code: code.to_owned(),
        message: message.into(),
    }
}

/// The guard's verdict on one SQL text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
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

impl Verdict {
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

/// Which tables and columns may be read; `None` allows all.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuardPolicy {
    /// Tables that may be read.
    #[serde(default)]
    pub tables: Option<Vec<String>>,
    /// Columns that may be read, by table; tables not listed here allow all their columns.
    #[serde(default)]
    pub columns: Option<BTreeMap<String, Vec<String>>>,
}

/// The guard for one dialect and policy.
#[derive(Clone, Debug)]
pub struct Guard {
    dialect: Dialect,
    policy: GuardPolicy,
}

impl Guard {
    /// The default read-only guard.
    pub fn new(dialect: Dialect) -> Self {
        Self {
            dialect,
            policy: GuardPolicy::default(),
        }
    }

    /// The same guard with table and column allowlists.
    pub fn with_policy(mut self, policy: GuardPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The dialect.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The verdict on a SQL text.
    pub fn check(&self, sql: &str) -> Verdict {
        let mut reasons = Vec::new();
        if self.dialect == Dialect::Mysql && sql.contains("/*!") {
            reasons.push(reason(
                "executable_comment",
                "MySQL runs the code inside /*! … */ comments; remove them.",
            ));
        }
        let statements = match Parser::parse_sql(self.dialect.parser().as_ref(), sql) {
            Ok(s) => s,
            Err(e) => {
                let (class, lexical) = lexical_reasons(self.dialect, sql);
                reasons.extend(lexical);
                reasons.push(reason(
                    "parse_error",
                    format!(
                        "The SQL could not be parsed as {}: {e}. Write a single standard SELECT statement.",
                        self.dialect.name()
                    ),
                ));
                return verdict(class, reasons, Vec::new());
            }
        };
        match statements.len() {
            0 => {
                reasons.push(reason("empty", "There is no SQL statement. Write one SELECT statement."));
                return verdict(StatementClass::Other, reasons, Vec::new());
            }
            1 => {}
            n => reasons.push(reason(
                "multiple_statements",
                format!("{n} statements were given; send exactly one SELECT statement, without `;` in between."),
            )),
        }
        let mut class = StatementClass::Read;
        let mut walker = Walker::new(self.dialect);
        for statement in &statements {
            let (c, r) = classify(statement);
            if class == StatementClass::Read {
                class = c;
            }
            reasons.extend(r);
            let _ = statement.visit(&mut walker);
        }
        if walker.modifying {
            class = StatementClass::Write;
        }
        reasons.append(&mut walker.reasons);
        let tables = walker.tables();
        self.check_policy(&tables, &walker, &mut reasons);
        let mut result = verdict(class, reasons, tables);
        result.aliases = std::mem::take(&mut walker.aliased);
        result
    }

    fn check_policy(&self, tables: &[String], walker: &Walker, reasons: &mut Vec<Reason>) {
        if let Some(allowed) = &self.policy.tables {
            for table in tables {
                if !allowed.iter().any(|a| same_table(a, table)) {
                    reasons.push(reason(
                        "table_not_allowed",
                        format!(
                            "Table `{table}` may not be read. Tables you may read: {}.",
                            allowed.join(", ")
                        ),
                    ));
                }
            }
        }
        let Some(columns) = &self.policy.columns else {
            return;
        };
        let restricted: Vec<(&String, &Vec<String>)> = columns
            .iter()
            .filter(|(t, _)| tables.iter().any(|used| same_table(t, used)))
            .collect();
        if restricted.is_empty() {
            return;
        }
        if walker.wildcard {
            reasons.push(reason(
                "column_not_allowed",
                "`*` would read columns outside the allowed ones; name the columns.".to_owned(),
            ));
        }
        // A column is fine when an alias defines it, when a referenced table without a column list may have
        // it, or when one of the restricted tables allows it.
        let unrestricted = tables
            .iter()
            .any(|t| !columns.keys().any(|k| same_table(k, t)));
        if unrestricted {
            return;
        }
        for column in &walker.columns {
            let ok = walker.aliases.contains(&column.to_ascii_lowercase())
                || restricted
                    .iter()
                    .any(|(_, cols)| cols.iter().any(|c| c.eq_ignore_ascii_case(column)));
            if !ok {
                let allowed: BTreeSet<&str> = restricted
                    .iter()
                    .flat_map(|(_, c)| c.iter().map(String::as_str))
                    .collect();
                reasons.push(reason(
                    "column_not_allowed",
                    format!(
                        "Column `{column}` may not be read. Columns you may read: {}.",
                        allowed.into_iter().collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
        }
    }
}

fn verdict(class: StatementClass, reasons: Vec<Reason>, tables: Vec<String>) -> Verdict {
    Verdict {
        allowed: reasons.is_empty() && class == StatementClass::Read,
        class,
        reasons,
        tables,
        aliases: Vec::new(),
    }
}

fn same_table(a: &str, b: &str) -> bool {
    let last = |s: &str| s.rsplit('.').next().unwrap_or(s).to_ascii_lowercase();
    a.eq_ignore_ascii_case(b) || (!a.contains('.') || !b.contains('.')) && last(a) == last(b)
}

/// A name as written, without quotes: `schema.table`.
pub(crate) fn object_name(name: &ObjectName) -> String {
    name.0
        .iter()
        .map(|part| match part {
            ObjectNamePart::Identifier(ident) => ident.value.clone(),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(dialect: Dialect, sql: &str) -> Verdict {
        Guard::new(dialect).check(sql)
    }

    #[test]
    fn plain_select_is_read_with_tables() {
        let v = check(
            Dialect::Postgres,
            "WITH t AS (SELECT * FROM orders) SELECT c.name FROM t JOIN public.customers c ON c.id = t.customer_id",
        );
        assert!(v.allowed, "{v:?}");
        assert_eq!(v.class, StatementClass::Read);
        assert_eq!(v.tables, ["orders", "public.customers"]);
    }

    #[test]
    fn refusals_carry_their_code() {
        let cases: &[(Dialect, &str, &str, StatementClass)] = &[
            (
                Dialect::Postgres,
                "WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d",
                "data_modifying_cte",
                StatementClass::Write,
            ),
            (
                Dialect::Sqlite,
                "SELECT 1; DROP TABLE x",
                "multiple_statements",
                StatementClass::Ddl,
            ),
            (
                Dialect::Postgres,
                "COMMIT",
                "transaction_control",
                StatementClass::Admin,
            ),
            (
                Dialect::Postgres,
                "SELECT * INTO backup FROM orders",
                "select_into",
                StatementClass::Read,
            ),
            (
                Dialect::Postgres,
                "SELECT * FROM orders FOR UPDATE",
                "locking_read",
                StatementClass::Read,
            ),
            (
                Dialect::Postgres,
                "SELECT pg_sleep(10)",
                "forbidden_function",
                StatementClass::Read,
            ),
            (
                Dialect::Postgres,
                "SELECT pg_catalog.pg_read_file('/etc/passwd')",
                "forbidden_function",
                StatementClass::Read,
            ),
            (
                Dialect::Postgres,
                "EXPLAIN ANALYZE SELECT 1",
                "explain_analyze",
                StatementClass::Read,
            ),
            (
                Dialect::Postgres,
                "SET statement_timeout = 0",
                "set",
                StatementClass::Admin,
            ),
            (
                Dialect::Sqlite,
                "ATTACH DATABASE '/tmp/x.db' AS x",
                "attach",
                StatementClass::Admin,
            ),
            (
                Dialect::Sqlite,
                "PRAGMA query_only = 0",
                "pragma",
                StatementClass::Admin,
            ),
            (
                Dialect::Mysql,
                "SELECT LOAD_FILE('/etc/passwd')",
                "forbidden_function",
                StatementClass::Read,
            ),
            (
                Dialect::Mysql,
                "SELECT 1 /*! ; DROP TABLE x */",
                "executable_comment",
                StatementClass::Ddl,
            ),
            (
                Dialect::Sqlite,
                "DeLeTe FROM orders",
                "not_read_only",
                StatementClass::Write,
            ),
            (
                Dialect::Sqlite,
                "SELEC 1",
                "parse_error",
                StatementClass::Other,
            ),
            (Dialect::Sqlite, "  ", "empty", StatementClass::Other),
        ];
        for (dialect, sql, code, class) in cases {
            let v = check(*dialect, sql);
            assert!(!v.allowed, "{sql} was allowed");
            assert!(v.has(code), "{sql}: expected {code}, got {:?}", v.reasons);
            assert_eq!(v.class, *class, "{sql}");
        }
    }

    #[test]
    fn aliases_are_collected() {
        let v = check(
            Dialect::Sqlite,
            "SELECT COUNT(*) FROM Track t JOIN Genre g ON g.GenreId = t.GenreId WHERE g.Nme = 'Rock'",
        );
        assert_eq!(
            v.aliases,
            vec![
                ("t".to_owned(), "Track".to_owned()),
                ("g".to_owned(), "Genre".to_owned())
            ]
        );
    }

    #[test]
    fn allowlists() {
        let mut columns = BTreeMap::new();
        columns.insert(
            "customers".to_owned(),
            vec!["id".to_owned(), "name".to_owned()],
        );
        let guard = Guard::new(Dialect::Sqlite).with_policy(GuardPolicy {
            tables: Some(vec!["customers".into(), "orders".into()]),
            columns: Some(columns),
        });
        assert!(
            guard
                .check("SELECT id, name AS n FROM customers ORDER BY n")
                .allowed
        );
        let v = guard.check("SELECT email FROM customers");
        assert!(v.has("column_not_allowed"), "{v:?}");
        assert!(
            guard
                .check("SELECT * FROM customers")
                .has("column_not_allowed")
        );
        let v = guard.check("SELECT * FROM salaries");
        assert!(v.has("table_not_allowed"), "{v:?}");
        // orders has no column list: anything goes there.
        assert!(
            guard
                .check(
                    "SELECT o.total, c.name FROM orders o JOIN customers c ON c.id = o.customer_id"
                )
                .allowed
        );
    }
}
