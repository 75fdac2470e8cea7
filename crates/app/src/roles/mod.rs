//! Roles and principals: which agents and tools a role may use, which SQL it may read and write, which rows it
//! sees, and which calls wait for a person's approval; and the policy that enforces this for every call of a
//! run, a router's sub-agents included.
//!
//! ```yaml
//! roles:
//!   bookkeeper:
//!     tools: [add_expense, list_expenses, expense_summary, run_sql, current_date, calculator]
//!     sql:
//!       read: {expenses: "*", expense_categories: "*"}
//!     approve: [add_expense]
//! principals:
//!   bob: {role: bookkeeper}
//! ```
//!
//! A run that has read data (rows from a database, a response from an HTTP tool) may have read instructions
//! planted in it; from then on any call that writes waits for approval, whatever the role says ("write after
//! untrusted data"), unless the tool that read the data is named `trusted`.

mod access;
mod marking;
mod policy;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use steward_core::Principal;
use steward_sql::Mask;

pub use access::access_fn;
pub(crate) use access::check_sql;
pub use marking::unmark_data;
pub(crate) use marking::{MarkedData, reads_data};
pub use policy::RolePolicy;

/// What a role may do.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleDef {
    /// The agents the role may run (all when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<Vec<String>>,
    /// The tools the role may use (all when absent); the model sees only these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// What the role may read and write with SQL, and the rows it sees.
    #[serde(default, skip_serializing_if = "SqlRules::is_empty")]
    pub sql: SqlRules,
    /// Tools whose every call waits for approval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approve: Vec<String>,
    /// Write tools declared in the config that this role may call without approval (they need it otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skip_approval: Vec<String>,
    /// Tools whose results are trusted: reading them does not make later writes wait for approval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trusted: Vec<String>,
    /// Most rows one query returns for this role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rows: Option<usize>,
    /// Whether the role administers the server: every run, the audit trail and everyone's approvals.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub admin: bool,
    /// The roles whose principals may apply this role's change sets (anyone who may see them when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approve_by: Option<Vec<String>>,
    /// Whether the principal who asked may apply their own change set (`false`: four eyes).
    #[serde(default = "yes", skip_serializing_if = "Clone::clone")]
    pub self_approval: bool,
}

fn yes() -> bool {
    true
}

impl Default for RoleDef {
    fn default() -> Self {
        Self {
            agents: None,
            tools: None,
            sql: SqlRules::default(),
            approve: Vec::new(),
            skip_approval: Vec::new(),
            trusted: Vec::new(),
            max_rows: None,
            admin: false,
            approve_by: None,
            self_approval: true,
        }
    }
}

/// SQL allowlists and row filters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SqlRules {
    /// Tables the role may read: `"*"` for every column, or the columns.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub read: BTreeMap<String, Columns>,
    /// Tables the role may write: `"*"` for every column, or the columns.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub write: BTreeMap<String, Columns>,
    /// Row filters by table: a condition with `{principal.ATTRIBUTE}` placeholders, bound to the principal's
    /// values.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rows: BTreeMap<String, String>,
    /// Columns the role reads only masked, as `table.column: partial | hash | null`; a masked column may be
    /// read (and filtered, joined, counted) but only its masked value ever leaves the database.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub masks: BTreeMap<String, Mask>,
}

impl SqlRules {
    /// True when the role has no SQL rules (it may read what the database lets it read).
    pub fn is_empty(&self) -> bool {
        self.read.is_empty()
            && self.write.is_empty()
            && self.rows.is_empty()
            && self.masks.is_empty()
    }
}

/// The columns of a table a role may use.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Columns {
    /// `"*"`: every column.
    All(String),
    /// These columns.
    Some(Vec<String>),
}

/// Read by hand, so that a wrong shape says what the entry may be (serde's untagged enums say only "did not
/// match any variant").
impl<'de> Deserialize<'de> for Columns {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Shape;
        impl<'de> serde::de::Visitor<'de> for Shape {
            type Value = Columns;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("\"*\" (every column) or a list of column names, such as [id, name]")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Columns, E> {
                Ok(Columns::All(text.to_owned()))
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Columns, A::Error> {
                let mut names = Vec::new();
                while let Some(name) = seq.next_element::<String>().map_err(|_| {
                    serde::de::Error::custom(
                        "each column in the list is a name (text), such as [id, name]",
                    )
                })? {
                    names.push(name);
                }
                Ok(Columns::Some(names))
            }
        }
        deserializer.deserialize_any(Shape)
    }
}

/// A local identity for the CLI: its role and attributes (`customer_id`, `department`, …).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PrincipalDef {
    /// The role.
    pub role: String,
    /// Everything else: attributes that row filters can use as `{principal.NAME}`.
    #[serde(flatten)]
    pub attributes: BTreeMap<String, Value>,
}

/// role, no attributes), else the config's `defaults`, else the local user (no role: everything allowed).
/// The principal a command runs for: `principal` (a name from the config's `principals`), else `role` (a bare
pub fn resolve_principal(
    config: &crate::Config,
    principal: Option<&str>,
    role: Option<&str>,
) -> Result<Principal, crate::AppError> {
    let principal = principal.or(config.defaults.principal.as_deref());
    if let Some(name) = principal {
        let Some(def) = config.principals.get(name) else {
            let known: Vec<_> = config.principals.keys().map(String::as_str).collect();
            return Err(crate::AppError::Config(format!(
                "there is no principal named `{name}`{}",
                if known.is_empty() {
                    "; define one under `principals:` in steward.yaml".to_owned()
                } else {
                    format!("; the principals are: {}", known.join(", "))
                }
            )));
        };
        if let Some(role) = role
            && role != def.role
        {
            return Err(crate::AppError::Config(format!(
                "the principal `{name}` has the role `{}`, not `{role}`: pass one of --principal and --role",
                def.role
            )));
        }
        let mut p = Principal::named(name);
        p.role = Some(def.role.clone());
        p.attributes = def.attributes.clone();
        return Ok(p);
    }
    match role.or(config.defaults.role.as_deref()) {
        Some(role) => {
            if !config.roles.contains_key(role) {
                let known: Vec<_> = config.roles.keys().map(String::as_str).collect();
                return Err(crate::AppError::Config(format!(
                    "there is no role named `{role}`{}",
                    if known.is_empty() {
                        "; define one under `roles:` in steward.yaml".to_owned()
                    } else {
                        format!("; the roles are: {}", known.join(", "))
                    }
                )));
            }
            let mut p = Principal::local();
            p.role = Some(role.to_owned());
            Ok(p)
        }
        None => Ok(Principal::local()),
    }
}
