//! Where the server's runs get their models: the binary connects them (from `--model`, `STEWARD_MODEL` or the
//! config, as `ask` does), so the server knows no provider.

use std::collections::BTreeMap;
use std::sync::Arc;

use steward_app::App;
use steward_core::Model;

/// The models of one run.
#[derive(Clone)]
pub struct RunModels {
    /// The top agent's model.
    pub model: Arc<dyn Model>,
    /// Its name in the config's `models`, if it has one.
    pub name: Option<String>,
    /// The config's models the agents name, by name.
    pub named: BTreeMap<String, Arc<dyn Model>>,
}

/// Connects the models of a run of an agent.
#[async_trait::async_trait]
pub trait ModelSource: Send + Sync {
    /// The models for a run of `agent`; `model` is a name from the config's `models` the caller chose (the
    /// settings panel), if any.
    async fn models_for(
        &self,
        app: &App,
        agent: &str,
        model: Option<&str>,
    ) -> anyhow::Result<RunModels>;
}

/// One model for every run (tests, and the binary when `--model` is given).
pub struct FixedModel(pub Arc<dyn Model>);

#[async_trait::async_trait]
impl ModelSource for FixedModel {
    async fn models_for(
        &self,
        _app: &App,
        _agent: &str,
        _model: Option<&str>,
    ) -> anyhow::Result<RunModels> {
        Ok(RunModels {
            model: self.0.clone(),
            name: None,
            named: BTreeMap::new(),
        })
    }
}
