//! The function policy that comes from the engine's own catalog. PostgreSQL marks every function with its
//! volatility and parallel safety, and knows which are built in (`pg_catalog`, `information_schema`), which
//! belong to an extension, and which a user created. Refused:
//! - user-defined functions (they may do anything), and operators that call them;
//! - volatile functions that are also unsafe in parallel queries (how PostgreSQL marks functions with side
//!   effects: `nextval`, `lo_import`, `pg_create_logical_replication_slot`, …), unless on a small allowlist;
//! - a name if any of its overloads (in any schema, or in the schema written) would be refused.
//!
//! MySQL/MariaDB: every stored function (`information_schema.ROUTINES`) and loadable function (`mysql.func`)
//! is user-defined. Without a catalog (offline) only the static rules apply.

use std::collections::{HashMap, HashSet};

/// Who made a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Part of the engine.
    BuiltIn,
    /// Installed by an extension.
    Extension,
    /// Created by a user.
    User,
}

/// One function overload as the catalog describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CatalogFunction {
    /// Its schema.
    pub(crate) schema: String,
    /// Its name.
    pub(crate) name: String,
    /// Volatile (PostgreSQL `provolatile = 'v'`).
    pub(crate) volatile: bool,
    /// Unsafe in parallel queries (PostgreSQL `proparallel = 'u'`).
    pub(crate) parallel_unsafe: bool,
    /// Who made it.
    pub(crate) origin: Origin,
    /// It takes one row-typed argument, so `t.name` calls it (PostgreSQL's attribute notation).
    pub(crate) row_argument: bool,
}

/// Volatile, parallel-unsafe built-ins that are nevertheless allowed: they only read session state.
const ALLOWED: &[&str] = &["currval", "lastval"];

/// Why the catalog refuses a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Why {
    UserDefined,
    SideEffects,
}

/// The refused functions and operators of one database.
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct FunctionCatalog {
    /// By lowercase name: the lowercase schemas of the refused overloads and why.
    refused: HashMap<String, Vec<(String, Why)>>,
    /// Lowercase names of refused functions that attribute notation (`t.name`) calls.
    attribute: HashSet<String>,
    /// Operators that call refused functions.
    operators: HashSet<String>,
}

impl std::fmt::Debug for FunctionCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FunctionCatalog")
            .field("refused_names", &self.refused.len())
            .field("refused_operators", &self.operators.len())
            .finish()
    }
}

impl FunctionCatalog {
    /// The catalog of these functions and operators (each operator given by its name and whether its
    /// function would be refused).
    pub(crate) fn new(
        functions: impl IntoIterator<Item = CatalogFunction>,
        operators: impl IntoIterator<Item = String>,
    ) -> Self {
        let mut catalog = Self::default();
        for f in functions {
            let name = f.name.to_ascii_lowercase();
            let why = match f.origin {
                Origin::User => Some(Why::UserDefined),
                _ if f.volatile && f.parallel_unsafe && !ALLOWED.contains(&name.as_str()) => {
                    Some(Why::SideEffects)
                }
                _ => None,
            };
            if let Some(why) = why {
                if f.row_argument {
                    catalog.attribute.insert(name.clone());
                }
                catalog
                    .refused
                    .entry(name)
                    .or_default()
                    .push((f.schema.to_ascii_lowercase(), why));
            }
        }
        catalog.operators = operators.into_iter().collect();
        catalog
    }

    /// Why a call of `name` (qualified by `schema` when written so) is refused, if it is.
    pub(crate) fn refusal(&self, schema: Option<&str>, name: &str) -> Option<String> {
        let overloads = self.refused.get(&name.to_ascii_lowercase())?;
        let why = overloads
            .iter()
            .filter(|(s, _)| schema.is_none_or(|w| w.eq_ignore_ascii_case(s)))
            .map(|(_, why)| *why)
            .min_by_key(|w| *w == Why::SideEffects)?;
        let shown = match schema {
            Some(s) => format!("{s}.{name}"),
            None => name.to_owned(),
        };
        Some(match why {
            Why::UserDefined => format!(
                "Function `{shown}` is not allowed: it is user-defined, and such functions may change data or reach outside the database. Use built-in functions."
            ),
            Why::SideEffects => format!(
                "Function `{shown}` is not allowed: the database marks it volatile and unsafe in parallel queries, as it does functions with side effects."
            ),
        })
    }

    /// True when `t.name` calls a refused function (PostgreSQL's attribute notation).
    pub(crate) fn attribute_call(&self, name: &str) -> bool {
        self.attribute.contains(&name.to_ascii_lowercase())
    }

    /// True when this operator calls a refused function.
    pub(crate) fn operator(&self, op: &str) -> bool {
        self.operators.contains(op)
    }

    /// How many names it refuses.
    pub(crate) fn len(&self) -> usize {
        self.refused.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(schema: &str, name: &str, v: bool, u: bool, origin: Origin) -> CatalogFunction {
        CatalogFunction {
            schema: schema.into(),
            name: name.into(),
            volatile: v,
            parallel_unsafe: u,
            origin,
            row_argument: false,
        }
    }

    #[test]
    fn user_defined_and_side_effects_are_refused_by_any_overload() {
        let c = FunctionCatalog::new(
            [
                f("pg_catalog", "nextval", true, true, Origin::BuiltIn),
                f("pg_catalog", "currval", true, true, Origin::BuiltIn),
                f("pg_catalog", "lower", false, false, Origin::BuiltIn),
                f("public", "lower", false, false, Origin::User),
                f("public", "evil", false, false, Origin::User),
                f("ext", "gen_thing", true, false, Origin::Extension),
            ],
            ["+++".to_owned()],
        );
        assert!(c.refusal(None, "NEXTVAL").is_some());
        assert!(c.refusal(None, "currval").is_none());
        assert!(c.refusal(None, "evil").unwrap().contains("user-defined"));
        // `lower` has a user-defined overload: unqualified it could resolve to it.
        assert!(c.refusal(None, "lower").is_some());
        assert!(c.refusal(Some("pg_catalog"), "lower").is_none());
        assert!(c.refusal(Some("PUBLIC"), "lower").is_some());
        assert!(c.refusal(None, "gen_thing").is_none());
        assert!(c.refusal(None, "upper").is_none());
        assert!(c.operator("+++"));
        assert_eq!(c.len(), 3);
    }
}
