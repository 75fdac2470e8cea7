//! The models of the server's runs (`steward serve`, `steward mcp`): chosen as `ask` chooses them (`--model`,
//! `STEWARD_MODEL`, the agent's or the config's model, the environment), connected once per agent and model and
//! shared by every run.

use std::collections::HashMap;

use steward_app::App;
use steward_server::{ModelSource, RunModels};
use tokio::sync::Mutex;

use crate::setup::ModelArgs;

/// Connects models with the command's model flags.
pub(crate) struct CliModels {
    args: ModelArgs,
    connected: Mutex<HashMap<(String, Option<String>), RunModels>>,
}

impl CliModels {
    pub(crate) fn new(args: ModelArgs) -> Self {
        Self {
            args,
            connected: Mutex::new(HashMap::new()),
        }
    }
}

#[async_trait::async_trait]
impl ModelSource for CliModels {
    async fn models_for(
        &self,
        app: &App,
        agent: &str,
        model: Option<&str>,
    ) -> anyhow::Result<RunModels> {
        let key = (agent.to_owned(), model.map(str::to_owned));
        let mut connected = self.connected.lock().await;
        if let Some(models) = connected.get(&key) {
            return Ok(models.clone());
        }
        let mut args = self.args.clone();
        if let Some(name) = model {
            // A caller picks among the config's models; a spec would let it reach any provider.
            if !app.config().models.contains_key(name) {
                anyhow::bail!(
                    "there is no model named `{name}` in the config's `models`; they are: {}",
                    app.config()
                        .models
                        .keys()
                        .map(String::as_str)
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            args.model = Some(name.to_owned());
        }
        let chosen = args
            .connect_for(app.config(), app.agent_def(agent), &app.models_used(agent))
            .await?;
        let models = RunModels {
            model: chosen.model,
            name: chosen.name,
            named: chosen.named,
        };
        connected.insert(key, models.clone());
        Ok(models)
    }
}
