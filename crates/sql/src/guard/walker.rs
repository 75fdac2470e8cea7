//! The walk over a parsed statement: nested statements, CTE names, `INTO`, locks, functions, tables, columns.

use std::collections::BTreeSet;
use std::ops::ControlFlow;

use sqlparser::ast::{
    Expr, ObjectName, Query, Select, SelectItem, Statement, TableFactor, Visitor,
};

use super::functions;
use super::{Reason, object_name, reason};
use crate::dialect::Dialect;

/// Walks a statement: nested statements, CTE names, `INTO`, locks, functions, tables, columns.
pub(super) struct Walker {
    pub(super) dialect: Dialect,
    pub(super) depth: usize,
    pub(super) modifying: bool,
    pub(super) reasons: Vec<Reason>,
    pub(super) relations: Vec<String>,
    pub(super) ctes: BTreeSet<String>,
    pub(super) columns: BTreeSet<String>,
    pub(super) aliases: BTreeSet<String>,
    pub(super) aliased: Vec<(String, String)>,
    pub(super) wildcard: bool,
}

impl Walker {
    pub(super) fn new(dialect: Dialect) -> Self {
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
