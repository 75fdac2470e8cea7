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

mod functions;

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;

use serde::{Deserialize, Serialize};
use sqlparser::ast::{
    Expr, ObjectName, ObjectNamePart, Query, Select, SelectItem, Statement, TableFactor, Visit,
    Visitor,
};
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer};

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

    /// Parses the SQL (exactly one statement) for callers that go on to rewrite it.
    pub(crate) fn parse_one(&self, sql: &str) -> Option<Statement> {
        let mut statements = Parser::parse_sql(self.dialect.parser().as_ref(), sql).ok()?;
        (statements.len() == 1).then(|| statements.remove(0))
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

/// The class of a top-level statement and the reasons it is not a read.
fn classify(statement: &Statement) -> (StatementClass, Vec<Reason>) {
    match statement {
        Statement::Query(_) => (StatementClass::Read, Vec::new()),
        Statement::Explain {
            analyze,
            statement: inner,
            options,
            ..
        } => {
            let analyze = *analyze
                || options.as_ref().is_some_and(|o| {
                    o.iter()
                        .any(|opt| opt.name.value.eq_ignore_ascii_case("analyze"))
                });
            let (class, mut reasons) = classify(inner);
            if analyze {
                reasons.push(reason(
                    "explain_analyze",
                    "EXPLAIN ANALYZE runs the statement; use EXPLAIN without ANALYZE.",
                ));
            }
            (class, reasons)
        }
        other => {
            let text = other.to_string();
            let first = text
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_ascii_uppercase();
            let (class, code, what) = keyword_class(&first);
            (class, vec![refusal(code, &what)])
        }
    }
}

fn refusal(code: &str, what: &str) -> Reason {
    reason(
        code,
        format!(
            "{what} is not allowed: only one SELECT, WITH, VALUES or EXPLAIN statement may run."
        ),
    )
}

/// The class, reason code and description of a statement by its first keyword.
fn keyword_class(first: &str) -> (StatementClass, &'static str, String) {
    match first {
        "INSERT" | "UPDATE" | "DELETE" | "MERGE" | "REPLACE" | "UPSERT" => (
            StatementClass::Write,
            "not_read_only",
            format!("{first} (it changes data)"),
        ),
        "CREATE" | "ALTER" | "DROP" | "TRUNCATE" | "RENAME" | "COMMENT" => (
            StatementClass::Ddl,
            "not_read_only",
            format!("{first} (it changes the schema)"),
        ),
        "COPY" | "UNLOAD" => (
            StatementClass::Admin,
            "copy",
            "COPY (it reads or writes files)".to_owned(),
        ),
        "SET" | "RESET" => (
            StatementClass::Admin,
            "set",
            "SET (it changes the session)".to_owned(),
        ),
        "BEGIN" | "START" | "COMMIT" | "ROLLBACK" | "SAVEPOINT" | "RELEASE" | "END" | "ABORT" => (
            StatementClass::Admin,
            "transaction_control",
            "Transaction control".to_owned(),
        ),
        "ATTACH" | "DETACH" => (
            StatementClass::Admin,
            "attach",
            "ATTACH (it opens other databases)".to_owned(),
        ),
        "PRAGMA" => (
            StatementClass::Admin,
            "pragma",
            "PRAGMA (it changes or reveals settings)".to_owned(),
        ),
        "GRANT" | "REVOKE" | "KILL" | "LOAD" | "LOCK" | "UNLOCK" | "VACUUM" | "ANALYZE"
        | "CALL" | "EXECUTE" | "EXEC" | "PREPARE" | "DEALLOCATE" | "DECLARE" | "FETCH"
        | "CLOSE" | "LISTEN" | "NOTIFY" | "UNLISTEN" | "DISCARD" | "REINDEX" | "CLUSTER"
        | "CHECKPOINT" | "USE" | "FLUSH" | "INSTALL" | "UNINSTALL" | "DO" | "SHUTDOWN"
        | "OPTIMIZE" | "HANDLER" => (
            StatementClass::Admin,
            "not_read_only",
            format!("{first} (an administrative statement)"),
        ),
        _ => (StatementClass::Other, "not_read_only", format!("`{first}`")),
    }
}

/// For SQL the parser could not read: what its words show (a write, a locking read, a file, a forbidden
/// function), so the refusal still says why.
fn lexical_reasons(dialect: Dialect, sql: &str) -> (StatementClass, Vec<Reason>) {
    let Ok(tokens) = Tokenizer::new(dialect.parser().as_ref(), sql).tokenize() else {
        return (StatementClass::Other, Vec::new());
    };
    let words: Vec<(String, bool)> = tokens
        .iter()
        .filter_map(|t| match t {
            Token::Word(w) => Some((w.value.to_ascii_uppercase(), w.quote_style.is_some())),
            Token::LParen => Some(("(".to_owned(), false)),
            _ => None,
        })
        .collect();
    let mut class = StatementClass::Other;
    let mut reasons = Vec::new();
    if let Some((first, false)) = words.first()
        && !matches!(
            first.as_str(),
            "SELECT" | "WITH" | "VALUES" | "EXPLAIN" | "("
        )
    {
        let (c, code, what) = keyword_class(first);
        class = c;
        reasons.push(refusal(code, &what));
    }
    for window in words.windows(2) {
        let (a, b) = (&window[0].0, &window[1].0);
        match (a.as_str(), b.as_str()) {
            ("FOR", "UPDATE" | "SHARE" | "NO" | "KEY") | ("LOCK", "IN") => reasons.push(reason(
                "locking_read",
                "Locking reads (FOR UPDATE / FOR SHARE / LOCK IN SHARE MODE) are not allowed; remove that clause.",
            )),
            ("INTO", "OUTFILE" | "DUMPFILE") => reasons.push(reason(
                "select_into",
                "SELECT … INTO OUTFILE/DUMPFILE writes a file; remove INTO.",
            )),
            (name, "(") if !window[0].1 && functions::forbidden(dialect, name) => reasons.push(reason(
                "forbidden_function",
                format!("Function `{}` is not allowed: it has side effects or reaches files, the network or the server.", name.to_ascii_lowercase()),
            )),
            _ => {}
        }
    }
    reasons.dedup();
    (class, reasons)
}

/// Walks a statement: nested statements, CTE names, `INTO`, locks, functions, tables, columns.
struct Walker {
    dialect: Dialect,
    depth: usize,
    modifying: bool,
    reasons: Vec<Reason>,
    relations: Vec<String>,
    ctes: BTreeSet<String>,
    columns: BTreeSet<String>,
    aliases: BTreeSet<String>,
    aliased: Vec<(String, String)>,
    wildcard: bool,
}

impl Walker {
    fn new(dialect: Dialect) -> Self {
        Self {
            dialect,
            depth: 0,
            modifying: false,
            reasons: Vec::new(),
            relations: Vec::new(),
            ctes: BTreeSet::new(),
            columns: BTreeSet::new(),
            aliases: BTreeSet::new(),
            aliased: Vec::new(),
            wildcard: false,
        }
    }

    fn push_once(&mut self, r: Reason) {
        if !self.reasons.contains(&r) {
            self.reasons.push(r);
        }
    }

    /// The tables read: relations that are not CTEs, each once, in order.
    fn tables(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in &self.relations {
            let is_cte = !r.contains('.') && self.ctes.contains(&r.to_ascii_lowercase());
            if !is_cte && !out.iter().any(|o| o.eq_ignore_ascii_case(r)) {
                out.push(r.clone());
            }
        }
        out
    }

    fn function(&mut self, name: &ObjectName) {
        let name = object_name(name);
        if functions::forbidden(self.dialect, &name) {
            self.push_once(reason(
                "forbidden_function",
                format!("Function `{name}` is not allowed: it has side effects or reaches files, the network or the server."),
            ));
        }
    }
}

impl Visitor for Walker {
    type Break = ();

    fn pre_visit_statement(&mut self, statement: &Statement) -> ControlFlow<()> {
        if self.depth > 0 && !matches!(statement, Statement::Query(_)) {
            self.modifying = true;
            let first = statement
                .to_string()
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_ascii_uppercase();
            self.push_once(reason(
                "data_modifying_cte",
                format!("A data-modifying {first} is inside the query (e.g. WITH x AS ({first} …)); only reads are allowed."),
            ));
        }
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_statement(&mut self, _statement: &Statement) -> ControlFlow<()> {
        self.depth = self.depth.saturating_sub(1);
        ControlFlow::Continue(())
    }

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        if let Some(with) = &query.with {
            for cte in &with.cte_tables {
                self.ctes.insert(cte.alias.name.value.to_ascii_lowercase());
                for column in &cte.alias.columns {
                    self.aliases.insert(column.name.value.to_ascii_lowercase());
                }
            }
        }
        if !query.locks.is_empty() {
            self.push_once(reason(
                "locking_read",
                "Locking reads (FOR UPDATE / FOR SHARE) are not allowed; remove the FOR … clause.",
            ));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, select: &Select) -> ControlFlow<()> {
        if select.into.is_some() {
            self.push_once(reason(
                "select_into",
                "SELECT … INTO creates a table or writes variables; remove INTO.",
            ));
        }
        for item in &select.projection {
            match item {
                SelectItem::ExprWithAlias { alias, .. } => {
                    self.aliases.insert(alias.value.to_ascii_lowercase());
                }
                SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => self.wildcard = true,
                _ => {}
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        match factor {
            TableFactor::Table {
                name,
                args: Some(_),
                ..
            }
            | TableFactor::Function { name, .. } => self.function(name),
            TableFactor::Table {
                name,
                alias: Some(alias),
                ..
            } => {
                self.aliased
                    .push((alias.name.value.clone(), object_name(name)));
            }
            TableFactor::Derived {
                alias: Some(alias), ..
            } => {
                for column in &alias.columns {
                    self.aliases.insert(column.name.value.to_ascii_lowercase());
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_relation(&mut self, relation: &ObjectName) -> ControlFlow<()> {
        self.relations.push(object_name(relation));
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        match expr {
            Expr::Function(f) => self.function(&f.name),
            Expr::Identifier(ident) => {
                self.columns.insert(ident.value.clone());
            }
            Expr::CompoundIdentifier(parts) => {
                if let Some(last) = parts.last() {
                    self.columns.insert(last.value.clone());
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
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
