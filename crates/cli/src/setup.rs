//! The flags every agent command shares: which model, how to drive it, limits, recording and prices.

use crate::out::note;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, ValueEnum};

use steward_app::{ModeDef, ModelChoice};
use steward_core::{Limits, Model};
use steward_domains::common::Clock;
use steward_llm::{HttpOptions, PriceTable, RetryNotice};

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

    /// The command's model flags as plain values for the app (see [`steward_app::App::models`]).
    pub(crate) fn choice(&self) -> ModelChoice {
        ModelChoice {
            spec: self.model.clone(),
            mode: self.mode.map(|m| match m {
                ModeArg::Native => ModeDef::Native,
                ModeArg::ReactJson => ModeDef::ReactJson,
                ModeArg::ReactText => ModeDef::ReactText,
            }),
            record: self.record.clone(),
            http: self.http(),
            fixed: None,
            on_note: Some(Arc::new(|note: &str| {
                note!("{}", Style::stderr().dim(&format!("note: {note}")));
            })),
        }
    }
}

/// Builds the model `choice` names (`--model`, `STEWARD_MODEL`, else the environment's), keeping the provider's
/// own error so that callers can tell "no model configured" from the others.
pub(crate) async fn connect(choice: &ModelChoice) -> anyhow::Result<Arc<dyn Model>> {
    match steward_app::models::connect_as(choice, None).await {
        Ok(model) => Ok(model),
        Err(steward_app::AppError::Model(e)) => Err(e.into()),
        Err(e) => Err(e.into()),
    }
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
