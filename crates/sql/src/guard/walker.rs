//! The walk over a parsed statement: nested statements, CTE names, `INTO`, locks, functions (the static
//! families and the engine's catalog), sensitive catalogs, tables, columns. Names are the decoded ones the
//! lexer wrote into the canonical text; nothing is printed back to SQL.

use std::collections::BTreeSet;
use std::ops::ControlFlow;

use sqlparser::ast::{
    AccessExpr, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, ObjectName, ObjectNamePart,
    Query, Select, SelectItem, SetExpr, Statement, TableFactor, Value, Visitor,
};

use super::catalog::FunctionCatalog;
use super::functions::{self, Family, MAX_BLOB};
use super::lexical::function_refusal;
use super::sensitive::sensitive;
use super::{Reason, object_name, reason};
use crate::dialect::Dialect;

/// What the walk needs to know about the guard.
#[derive(Clone, Copy)]
pub(super) struct Context<'a> {
    pub(super) dialect: Dialect,
    pub(super) catalog: Option<&'a FunctionCatalog>,
    pub(super) allow_sensitive: bool,
    pub(super) current_database: Option<&'a str>,
}

/// Walks a statement: nested statements, CTE names, `INTO`, locks, functions, tables, columns.
pub(super) struct Walker<'a> {
    context: Context<'a>,
    depth: usize,
    pub(super) modifying: bool,
    pub(super) reasons: Vec<Reason>,
    relations: Vec<String>,
    /// The next relation visited is a table function's name (`generate_series(…)`, `json_each(…)`): judged
    /// as a function, not as a table by the allowlists (SQLite's `pragma_…` catalogs stay tables).
    function_next: bool,
    ctes: BTreeSet<String>,
    pub(super) columns: BTreeSet<String>,
    /// Qualified column references: (qualifier, column), e.g. `c.email`.
    pub(super) qualified: BTreeSet<(String, String)>,
    pub(super) aliases: BTreeSet<String>,
    pub(super) aliased: Vec<(String, String)>,
    pub(super) wildcard: bool,
}

impl<'a> Walker<'a> {
    pub(super) fn new(context: Context<'a>) -> Self {
        Self {
            context,
            depth: 0,
            modifying: false,
            reasons: Vec::new(),
            relations: Vec::new(),
            function_next: false,
            ctes: BTreeSet::new(),
            columns: BTreeSet::new(),
            qualified: BTreeSet::new(),
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
    pub(super) fn tables(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in &self.relations {
            let is_cte = !r.contains('.') && self.ctes.contains(&r.to_ascii_lowercase());
            if !is_cte && !out.iter().any(|o| o.eq_ignore_ascii_case(r)) {
                out.push(r.clone());
            }
        }
        out
    }

    fn function(&mut self, name: &ObjectName, args: &[FunctionArg], any_args: bool) {
        let parts = parts(name);
        let Some(last) = parts.last().copied() else {
            return;
        };
        match functions::family(last) {
            Some(Family::Memory) if small_literal(args) => {}
            Some(Family::Sensitive) if self.context.allow_sensitive => {}
            Some(family) => self.push_once(function_refusal(last, family)),
            None => {}
        }
        if last.eq_ignore_ascii_case("last_insert_id") && any_args {
            self.push_once(function_refusal(last, Family::Settings));
        }
        let schema = parts
            .len()
            .checked_sub(2)
            .and_then(|i| parts.get(i))
            .copied();
        if let Some(refusal) = self.context.catalog.and_then(|c| c.refusal(schema, last)) {
            self.push_once(reason("forbidden_function", refusal));
        }
    }

    fn relation(&mut self, name: &ObjectName) {
        let parts = parts(name);
        if !self.context.allow_sensitive
            && let Some(message) =
                sensitive(self.context.dialect, &parts, self.context.current_database)
        {
            self.push_once(reason("sensitive_catalog", message));
        }
        self.relations.push(object_name(name));
    }

    /// `TABLE t` inside this query's body (set operations included; nested queries have their own visit).
    fn table_statements(&mut self, body: &SetExpr) {
        let mut pending = vec![body];
        while let Some(set) = pending.pop() {
            match set {
                SetExpr::SetOperation { left, right, .. } => {
                    pending.push(left);
                    pending.push(right);
                }
                SetExpr::Table(table) => {
                    let mut parts: Vec<sqlparser::ast::Ident> = Vec::new();
                    if let Some(schema) = &table.schema_name {
                        parts.push(sqlparser::ast::Ident::new(schema.clone()));
                    }
                    if let Some(name) = &table.table_name {
                        parts.push(sqlparser::ast::Ident::new(name.clone()));
                    }
                    self.relation(&ObjectName::from(parts));
                }
                _ => {}
            }
        }
    }

    fn attribute_call(&mut self, name: &str) {
        if self.context.catalog.is_some_and(|c| c.attribute_call(name)) {
            self.push_once(reason(
                "forbidden_function",
                format!("`….{name}` calls the function `{name}` (attribute notation), which is not allowed."),
            ));
        }
    }
}

/// The decoded parts of a name.
fn parts(name: &ObjectName) -> Vec<&str> {
    name.0
        .iter()
        .filter_map(|part| match part {
            ObjectNamePart::Identifier(ident) => Some(ident.value.as_str()),
            _ => None,
        })
        .collect()
}

/// One integer literal argument of at most [`MAX_BLOB`].
fn small_literal(args: &[FunctionArg]) -> bool {
    match args {
        [FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(v)))] => match &v.value {
            Value::Number(n, _) => n.parse::<u64>().is_ok_and(|n| n <= MAX_BLOB),
            _ => false,
        },
        _ => false,
    }
}

/// The first keyword of a statement nested in a query, for the message.
fn statement_word(statement: &Statement) -> &'static str {
    match statement {
        Statement::Insert(_) => "INSERT",
        Statement::Update { .. } => "UPDATE",
        Statement::Delete(_) => "DELETE",
        Statement::Merge { .. } => "MERGE",
        _ => "statement",
    }
}

impl Visitor for Walker<'_> {
    type Break = ();

    fn pre_visit_statement(&mut self, statement: &Statement) -> ControlFlow<()> {
        if self.depth > 0 && !matches!(statement, Statement::Query(_)) {
            self.modifying = true;
            let first = statement_word(statement);
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
        self.table_statements(&query.body);
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, select: &Select) -> ControlFlow<()> {
        if select.into.is_some() {
            self.push_once(reason(
                "select_into",
                "SELECT … INTO creates a table, writes a file or sets variables; remove INTO.",
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
                args: Some(args),
                ..
            } => {
                self.function_next = true;
                self.function(name, &args.args, !args.args.is_empty());
            }
            TableFactor::Function { name, args, .. } => {
                self.function(name, args, !args.is_empty());
            }
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
        self.relation(relation);
        if std::mem::take(&mut self.function_next)
            && !object_name(relation)
                .to_ascii_lowercase()
                .starts_with("pragma_")
        {
            self.relations.pop();
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        match expr {
            Expr::Function(f) => match &f.args {
                FunctionArguments::List(list) => {
                    self.function(&f.name, &list.args, !list.args.is_empty());
                }
                FunctionArguments::Subquery(_) => self.function(&f.name, &[], true),
                FunctionArguments::None => self.function(&f.name, &[], false),
            },
            Expr::Identifier(ident) => {
                self.columns.insert(ident.value.clone());
            }
            Expr::CompoundIdentifier(parts) => {
                if let Some(last) = parts.last() {
                    self.columns.insert(last.value.clone());
                    if parts.len() > 1 {
                        self.attribute_call(&last.value);
                        let qualifier = &parts[parts.len() - 2].value;
                        self.qualified
                            .insert((qualifier.clone(), last.value.clone()));
                    }
                }
            }
            Expr::CompoundFieldAccess { access_chain, .. } => {
                for access in access_chain {
                    if let AccessExpr::Dot(Expr::Identifier(ident)) = access {
                        self.attribute_call(&ident.value);
                    }
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}
