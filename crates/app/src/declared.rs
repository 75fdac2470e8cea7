//! Tools declared in the config (`kind: sql`, `kind: http`), built when the config loads (so a read tool
//! whose statement writes is a config error) and added to the registry.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use steward_sql::Database;

use crate::config::Config;
use crate::error::AppError;
use crate::registry::{Needs, ToolRegistry};
use crate::tools::ToolDef;

/// Builds and registers every tool of the config's `tools`; returns the names of those that write (not
/// read-only), which need approval unless a role says otherwise.
pub(crate) async fn register(
    config: &Config,
    databases: &BTreeMap<String, Arc<Database>>,
    registry: &mut ToolRegistry,
    access: &steward_sql::AccessFn,
) -> Result<BTreeSet<String>, AppError> {
    let mut writes = BTreeSet::new();
    for (name, value) in &config.tools {
        let place = config.locate(&["tools", name]);
        let def: ToolDef = serde_yaml::from_value(value.clone())
            .map_err(|e| AppError::Config(format!("{place}: tools.{name}: {e}")))?;
        let tool = def
            .build_with_access(name, databases, Some(access.clone()))
            .await
            .map_err(|e| AppError::Config(format!("{place}: {e}")))?;
        if !tool.spec().annotations.read_only {
            writes.insert(name.clone());
        }
        registry.register(name.clone(), Needs::Nothing, move |_| Ok(tool.clone()));
    }
    Ok(writes)
}
