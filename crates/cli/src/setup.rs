//! The flags every agent command shares: which model, how to drive it, limits, recording and prices.

use crate::out::note;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use std::collections::{BTreeMap, BTreeSet};

use steward_app::Config;
use steward_app::{AgentDef, ModeDef};
use steward_core::{Limits, Model};
use steward_domains::common::Clock;
use steward_llm::{Env, HttpOptions, Mode, ModelSetup, PriceTable, RetryNotice};

use crate::style::Style;

/// How the model is driven.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ModeArg {
    /// Native tool calling (OpenAI, Anthropic, most local models).
    Native,
    /// ReAct with one JSON object per reply, for models without tool calling.
    ReactJson,
    /// ReAct with Thought / Action / Action Input lines.
    ReactText,
}

/// Model and run settings.
#[derive(Args, Debug, Clone)]
pub(crate) struct ModelArgs {
    // This text is `--help`, where `<model>` is a placeholder, not an HTML tag.
    #[allow(rustdoc::invalid_html_tags)]
    /// The model for every agent: a name from the config's `models`, openai:<model>, azure:<deployment>,
    /// anthropic:<model>, ollama:<model>, openai-compatible:<model>@<base-url>, replay:<file>, or a bare model
    /// name (gpt-4o-mini, claude-sonnet-4-5, qwen2.5:7b) on the provider the environment configures. Without
    /// it: each agent's `model` from the config, else the config's default, else OPENAI_API_KEY,
    /// ANTHROPIC_API_KEY, Azure settings or a local Ollama.
    #[arg(
        short,
        long,
        env = "STEWARD_MODEL",
        hide_env_values = true,
        value_name = "SPEC"
    )]
    pub(crate) model: Option<String>,

    /// How to drive the model (default: the config's `mode` for the model, else native).
    #[arg(long, value_enum)]
    pub(crate) mode: Option<ModeArg>,

    /// Save every model exchange of the run to FILE (JSON lines); replay it with --model replay:FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) record: Option<PathBuf>,

    /// Most model calls per question (1 to 10000).
    #[arg(
        long,
        default_value_t = 20,
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = bounded::<u32, 1, MAX_STEPS>
    )]
    pub(crate) max_steps: u32,

    /// Most tokens per question, input plus output (1 to 1000000000).
    #[arg(
        long,
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = bounded::<u64, 1, MAX_TOKENS>
    )]
    pub(crate) max_tokens: Option<u64>,

    /// Most seconds per question (1 to 86400, a day).
    #[arg(
        long,
        default_value_t = 600,
        value_name = "SECONDS",
        allow_negative_numbers = true,
        value_parser = bounded::<u64, 1, MAX_TIME_LIMIT>
    )]
    pub(crate) time_limit: u64,

    /// Model prices as JSON, {"model": {"input": 0.15, "output": 0.6}} in USD per million tokens, added to or
    /// replacing the built-in table.
    #[arg(
        long,
        env = "STEWARD_PRICES",
        hide_env_values = true,
        value_name = "FILE"
    )]
    pub(crate) prices: Option<PathBuf>,
}

/// The most model calls `--max-steps` allows.
const MAX_STEPS: u64 = 10_000;
/// The most tokens `--max-tokens` allows.
const MAX_TOKENS: u64 = 1_000_000_000;
/// The most seconds `--time-limit` allows: a day.
const MAX_TIME_LIMIT: u64 = 24 * 60 * 60;

/// A clap value parser for a whole number from `MIN` to `MAX` (as `T`): anything else, including numbers too
/// large for `T`, is a usage error that names the allowed range.
pub(crate) fn bounded<T: TryFrom<u64>, const MIN: u64, const MAX: u64>(
    text: &str,
) -> Result<T, String> {
    text.parse::<u64>()
        .ok()
        .filter(|n| (MIN..=MAX).contains(n))
        .and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| format!("expected a whole number from {MIN} to {MAX}"))
}

impl ModelArgs {
    /// The run limits (each already within its range: see [`bounded`]).
    pub(crate) fn limits(&self) -> Limits {
        Limits {
            max_steps: self.max_steps,
            max_tokens: self.max_tokens,
            time_limit: Some(Duration::from_secs(self.time_limit)),
        }
    }

    /// The price table.
    pub(crate) fn prices(&self) -> anyhow::Result<PriceTable> {
        let table = PriceTable::builtin();
        match &self.prices {
            None => Ok(table),
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read the price file {}", path.display()))?;
                table
                    .with_overrides(&text)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
            }
        }
    }

    /// The options every model is built with: retries reported on standard error as they happen.
    fn http(&self) -> HttpOptions {
        let style = Style::stderr();
        let on_retry = Arc::new(move |n: &RetryNotice| {
            note!(
                "{}",
                style.warn(&format!(
                    "  retrying {} in {:.1} s (attempt {}): {}",
                    n.provider,
                    n.delay.as_secs_f64(),
                    n.attempt + 1,
                    n.reason
                ))
            );
        });
        HttpOptions {
            on_retry: Some(on_retry),
            ..HttpOptions::default()
        }
    }

    fn mode(&self, configured: Option<ModeDef>) -> Mode {
        match (self.mode, configured) {
            (Some(ModeArg::ReactJson), _) | (None, Some(ModeDef::ReactJson)) => Mode::ReactJson,
            (Some(ModeArg::ReactText), _) | (None, Some(ModeDef::ReactText)) => Mode::ReactText,
            _ => Mode::Native,
        }
    }

    /// Chooses and builds the model from `--model`, `STEWARD_MODEL` or the environment.
    pub(crate) async fn connect(&self) -> anyhow::Result<Arc<dyn Model>> {
        self.connect_as(None).await
    }

    /// [`ModelArgs::connect`], driven as `mode` says unless `--mode` is given.
    async fn connect_as(&self, mode: Option<ModeDef>) -> anyhow::Result<Arc<dyn Model>> {
        let setup = ModelSetup {
            spec: self.model.clone(),
            mode: self.mode(mode),
            record: self.record.clone(),
            http: self.http(),
        };
        Ok(steward_llm::connect(setup, &Env::from_process()).await?)
    }

    /// Builds a model the config names, with its mode and timeout.
    fn connect_entry(
        &self,
        name: &str,
        config: &Config,
        mode: Option<ModeDef>,
    ) -> anyhow::Result<Arc<dyn Model>> {
        let Some(entry) = config.models.get(name) else {
            anyhow::bail!(
                "{}: there is no model named `{name}` in `models`",
                config.locate(&["models"])
            );
        };
        let def = entry.def();
        let mut http = self.http();
        if let Some(seconds) = def.timeout {
            http.timeouts.first_byte = Duration::from_secs(seconds);
            http.timeouts.total = Duration::from_secs(seconds);
        }
        let setup = ModelSetup {
            spec: Some(def.spec.clone()),
            mode: self.mode(mode.or(def.mode)),
            record: self.record.clone(),
            http,
        };
        steward_llm::connect_spec(&def.spec, setup, &Env::from_process()).map_err(|e| {
            anyhow::anyhow!(
                "the model `{name}` ({}): {e}",
                config.locate(&["models", name])
            )
        })
    }

    /// The models of a run: the one `--model` (or `STEWARD_MODEL`) names drives every agent; without it, each
    /// agent that names a model in the config gets that one (`named`, by name) and the others the agent's
    /// own, the config's default, or the one the environment configures. The agent's `mode` drives its model
    /// unless `--mode` is given.
    pub(crate) async fn connect_for(
        &self,
        config: &Config,
        agent: Option<&AgentDef>,
        used: &BTreeSet<String>,
    ) -> anyhow::Result<ChosenModels> {
        let agent_mode = agent.and_then(|a| a.mode);
        let agent_model = agent.and_then(|a| a.model.as_deref());
        if let Some(text) = &self.model {
            if config.models.contains_key(text) {
                return Ok(ChosenModels {
                    model: self.connect_entry(text, config, agent_mode)?,
                    name: Some(text.clone()),
                    named: BTreeMap::new(),
                });
            }
            return Ok(ChosenModels {
                model: self.connect_as(agent_mode).await?,
                name: None,
                named: BTreeMap::new(),
            });
        }
        let top = agent_model.or(config.defaults.model.as_deref());
        let mut wanted: BTreeSet<String> = used.clone();
        wanted.extend(top.map(str::to_owned));
        if self.record.is_some() && wanted.len() > 1 {
            let names: Vec<_> = wanted.into_iter().collect();
            anyhow::bail!(
                "--record records one model, and this agent's sub-agents use the models {}: pass --model to \
                 drive them all with one",
                names.join(", ")
            );
        }
        let mut named = BTreeMap::new();
        for name in &wanted {
            named.insert(name.clone(), self.connect_entry(name, config, None)?);
        }
        let model = match top {
            Some(name) if agent_mode.is_some() => self.connect_entry(name, config, agent_mode)?,
            Some(name) => named
                .get(name)
                .cloned()
                .map_or_else(|| self.connect_entry(name, config, None), Ok)?,
            None => self.connect_as(agent_mode).await?,
        };
        Ok(ChosenModels {
            model,
            name: top.map(str::to_owned),
            named,
        })
    }
}

/// The models of a run (see [`ModelArgs::connect_for`]).
pub(crate) struct ChosenModels {
    /// The top agent's model.
    pub(crate) model: Arc<dyn Model>,
    /// Its name in the config's `models`, if it has one.
    pub(crate) name: Option<String>,
    /// The config's models the agents name.
    pub(crate) named: BTreeMap<String, Arc<dyn Model>>,
}

/// The clock for `current_date`: `STEWARD_NOW` (a date or an RFC 3339 time) fixes it, for reproducible
/// recordings; otherwise the system clock.
pub(crate) fn clock() -> anyhow::Result<Clock> {
    match std::env::var("STEWARD_NOW") {
        Ok(text) if !text.trim().is_empty() => {
            Clock::parse(&text).map_err(|e| anyhow::anyhow!("STEWARD_NOW: {e}"))
        }
        _ => Ok(Clock::System),
    }
}
