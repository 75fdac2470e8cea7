//! A role's SQL rules as the SQL tools apply them: table and column allowlists, masks, and row filters bound to
//! the principal's attributes.

use std::collections::BTreeMap;

use serde_json::Value;
use steward_core::Principal;
use steward_sql::{Access, AccessFn, Dialect, GuardPolicy, Scope};

use super::{Columns, RoleDef, SqlRules};

/// How the SQL tools find each principal's access: its role's `sql.read` tables and columns (allowlists) and
/// `sql.rows` filters bound to its attributes. A principal without a role, or whose role has no `sql` rules,
/// is limited by nothing but the guard.
pub fn access_fn(roles: &BTreeMap<String, RoleDef>) -> AccessFn {
    let roles = roles.clone();
    AccessFn::new(move |principal: &Principal, dialect: Dialect| {
        let Some(role) = principal.role.as_ref().and_then(|r| roles.get(r)) else {
            return Ok(None);
        };
        let mut access = access(&role.sql, &principal.attributes, dialect)?;
        access.max_rows = role.max_rows;
        Ok(Some(access))
    })
}

/// The allowlists and scope of one role's SQL rules for a principal with `attributes`.
fn access(
    sql: &SqlRules,
    attributes: &BTreeMap<String, Value>,
    dialect: Dialect,
) -> Result<Access, String> {
    let mut policy = GuardPolicy::default();
    let mut scope = Scope::new();
    if !sql.read.is_empty() {
        policy.tables = Some(sql.read.keys().cloned().collect());
        let mut columns = BTreeMap::new();
        for (table, allowed) in &sql.read {
            if let Columns::Some(list) = allowed {
                columns.insert(table.clone(), list.clone());
                scope.columns(table, list.clone());
            }
        }
        if !columns.is_empty() {
            policy.columns = Some(columns);
        }
    }
    for (table, condition) in &sql.rows {
        scope.filter(dialect, table, condition, attributes)?;
    }
    for (column, mask) in &sql.masks {
        let Some((table, column)) = column.rsplit_once('.') else {
            return Err(format!(
                "the mask `{column}` names no table; write it as table.column"
            ));
        };
        scope.mask(table, column, *mask);
        // A masked column may be named in queries: it reads as its masked value.
        if let Some(columns) = policy.columns.as_mut()
            && let Some(list) = columns
                .iter_mut()
                .find(|(t, _)| t.eq_ignore_ascii_case(table))
                .map(|(_, l)| l)
            && !list.iter().any(|c| c.eq_ignore_ascii_case(column))
        {
            list.push(column.to_owned());
            scope.columns(table, list.clone());
        }
    }
    let write = (!sql.write.is_empty()).then(|| {
        sql.write
            .iter()
            .map(|(table, columns)| {
                let columns = match columns {
                    Columns::All(_) => None,
                    Columns::Some(list) => Some(list.clone()),
                };
                (table.clone(), columns)
            })
            .collect()
    });
    Ok(Access {
        read: policy,
        scope,
        write,
        max_rows: None,
    })
}

/// Checks a role's SQL rules: each row filter parses as a condition (attributes stand in as 0).
pub(crate) fn check_sql(sql: &SqlRules) -> Result<(), String> {
    let mut attributes = BTreeMap::new();
    for condition in sql.rows.values() {
        for part in condition.split("{principal.").skip(1) {
            if let Some((name, _)) = part.split_once('}') {
                attributes.insert(name.to_owned(), Value::from(0));
            }
        }
    }
    for dialect in [Dialect::Sqlite, Dialect::Postgres, Dialect::Mysql] {
        access(sql, &attributes, dialect)?;
    }
    Ok(())
}
