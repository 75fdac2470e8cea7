//! The models of runs that a server starts (`steward mcp`, and `steward serve`): connected per run from the
//! model flags, `STEWARD_MODEL` and the config, exactly as `ask` connects them.

use steward_app::App;
use steward_server::{ModelSource, RunModels};

use crate::setup::ModelArgs;

/// Connects each run's models from the command's model flags.
pub(crate) struct CliModels {
    args: ModelArgs,
}

impl CliModels {
    /// Models chosen by `args` (`--model`, `--mode`, `--record`, …).
    pub(crate) fn new(args: ModelArgs) -> Self {
        Self { args }
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
        Ok(RunModels {
            model: chosen.model,
            name: chosen.name,
            named: chosen.named,
        })
    }
}
