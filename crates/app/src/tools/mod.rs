//! Declarative tools: tools defined in config instead of code. A `sql` tool runs one fixed statement with
//! bound parameters (read through the guard and the read-only path, or one idempotent write); an `http` tool
//! calls one HTTP endpoint. Their parameters are declared with JSON Schema's words and validated by core
//! before every call, like any other tool's.
//!
//! ```
//! use std::collections::BTreeMap;
//! use steward_app::tools::ToolDef;
//!
//! let defs: BTreeMap<String, ToolDef> = serde_yaml::from_str(
//!     "customers_by_city:
//!        kind: sql
//!        database: shop
//!        description: Customers living in a city.
//!        statement: SELECT name, email FROM customers WHERE city = :city ORDER BY name
//!        parameters:
//!          city: {type: string, description: The city, maxLength: 80}",
//! )
//! .unwrap();
//! assert!(matches!(defs["customers_by_city"], ToolDef::Sql(_)));
//! ```

mod http;
mod ledger;
mod named_map;
mod params;
mod sql;
mod template;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;
use steward_core::Tool;
use steward_sql::Database;

pub use http::{HttpMethod, HttpTool, HttpToolDef};
pub use ledger::LEDGER_TABLE;
pub use params::{NamedMap, ParamSpec, ParamType, Parameters};
pub use sql::{DEFAULT_MAX_ROWS, SqlMode, SqlTool, SqlToolDef};

/// A tool declared in config, tagged by its `kind`.
#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
#[non_exhaustive]
pub enum ToolDef {
    /// One SQL statement with bound parameters.
    Sql(SqlToolDef),
    /// One HTTP endpoint.
    Http(HttpToolDef),
}

impl ToolDef {
    /// Builds the tool named `name`; a SQL tool takes its database from `databases` by the name it declares.
    /// Every problem of the declaration is found here, before any call.
    pub async fn build(
        self,
        name: &str,
        databases: &BTreeMap<String, Arc<Database>>,
    ) -> Result<Arc<dyn Tool>, ToolDefError> {
        self.build_with_access(name, databases, None).await
    }

    /// [`ToolDef::build`], where a SQL tool reads for each call's principal only what `access` allows it
    /// (its roles' table and column allowlists and row filters).
    pub async fn build_with_access(
        self,
        name: &str,
        databases: &BTreeMap<String, Arc<Database>>,
        access: Option<steward_sql::AccessFn>,
    ) -> Result<Arc<dyn Tool>, ToolDefError> {
        match self {
            Self::Sql(def) => {
                let Some(db) = databases.get(&def.database) else {
                    let known = if databases.is_empty() {
                        "no database is configured".to_owned()
                    } else {
                        format!(
                            "the configured databases are: {}",
                            databases.keys().cloned().collect::<Vec<_>>().join(", ")
                        )
                    };
                    return Err(ToolDefError::UnknownDatabase {
                        tool: name.to_owned(),
                        database: def.database,
                        known,
                    });
                };
                let mut tool = SqlTool::build(name, def, db.clone()).await?;
                tool.access = access;
                Ok(Arc::new(tool))
            }
            Self::Http(def) => Ok(Arc::new(HttpTool::build(name, def)?)),
        }
    }
}

/// A declarative tool that cannot be built, with what to fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolDefError {
    /// Something in the declaration is wrong.
    #[error("tool `{tool}`: {problem}")]
    Invalid {
        /// The tool.
        tool: String,
        /// What is wrong and what to do.
        problem: String,
    },
    /// A parameter's declaration is wrong.
    #[error("tool `{tool}`, parameter `{param}`: {problem}")]
    Parameter {
        /// The tool.
        tool: String,
        /// The parameter.
        param: String,
        /// What is wrong and what to do.
        problem: String,
    },
    /// The SQL statement cannot be used as declared.
    #[error("tool `{tool}`: {problem}")]
    Statement {
        /// The tool.
        tool: String,
        /// What is wrong with the statement and what to do.
        problem: String,
    },
    /// The tool names a database that is not configured.
    #[error("tool `{tool}` uses database `{database}`, which is not configured; {known}")]
    UnknownDatabase {
        /// The tool.
        tool: String,
        /// The name it uses.
        database: String,
        /// The databases there are.
        known: String,
    },
    /// The database could not be read while the tool was built.
    #[error("tool `{tool}`: the database could not be used: {message}")]
    Database {
        /// The tool.
        tool: String,
        /// Why (one line, no secrets).
        message: String,
    },
    /// A header needs an environment variable that is not set.
    #[error(
        "tool `{tool}`: header `{header}` needs the environment variable `{variable}`, which is not set; set it or remove the header"
    )]
    MissingEnv {
        /// The tool.
        tool: String,
        /// The header.
        header: String,
        /// The variable.
        variable: String,
    },
}

impl ToolDefError {
    pub(crate) fn invalid(tool: &str, problem: impl Into<String>) -> Self {
        Self::Invalid {
            tool: tool.to_owned(),
            problem: problem.into(),
        }
    }
}

/// Checks a tool name (`^[a-zA-Z0-9_-]{1,64}$`, what every provider accepts).
pub(crate) fn check_name(name: &str) -> Result<(), ToolDefError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(ToolDefError::invalid(
            name,
            "a tool name must be 1 to 64 letters, digits, _ or -",
        ))
    }
}

/// Checks the parameters of tool `name`.
pub(crate) fn check_params(name: &str, params: &Parameters) -> Result<(), ToolDefError> {
    params
        .check()
        .map_err(|(param, problem)| ToolDefError::Parameter {
            tool: name.to_owned(),
            param,
            problem,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_kinds_and_fields_are_config_errors() {
        let e = serde_yaml::from_str::<ToolDef>(
            "{kind: sql, database: d, description: x, statement: SELECT 1, rows: 5}",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("unknown field `rows`"), "{e}");
        let e = serde_yaml::from_str::<ToolDef>("{kind: graphql, url: x}")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown variant `graphql`"), "{e}");
        let def = serde_yaml::from_str::<ToolDef>(
            "{kind: http, description: x, url: 'https://example.org/a', method: post, parameters: {a: {type: string}}}",
        )
        .unwrap();
        assert!(matches!(
            def,
            ToolDef::Http(HttpToolDef {
                method: HttpMethod::Post,
                ..
            })
        ));
        assert!(check_name("ok_name-1").is_ok());
        assert!(check_name("no spaces").is_err());
    }
}
