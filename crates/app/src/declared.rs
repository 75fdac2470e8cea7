//! Tools declared in the config (`kind: sql`, `kind: http`), added to the registry.

use std::collections::BTreeMap;
use std::sync::Arc;

use steward_sql::Database;

use crate::config::Config;
use crate::error::AppError;
use crate::registry::ToolRegistry;

/// Registers every tool of the config's `tools`.
pub(crate) fn register(
    config: &Config,
    _databases: &BTreeMap<String, Arc<Database>>,
    _registry: &mut ToolRegistry,
) -> Result<(), AppError> {
    if let Some(name) = config.tools.keys().next() {
        return Err(AppError::Config(format!(
            "{}: declarative tools are not built yet",
            config.locate(&["tools", name])
        )));
    }
    Ok(())
}
