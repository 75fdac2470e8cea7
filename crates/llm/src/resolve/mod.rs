//! Choosing a model from a spec (`--model` or `STEWARD_MODEL`) or, when none is given, from the environment.
//!
//! Specs: `openai:<model>`, `azure:<deployment>`, `ollama:<model>`, `anthropic:<model>`,
//! `openai-compatible:<model>@<base-url>`, `replay:<file>`.
//!
//! - `spec`: reading the text of a spec, and giving a bare model name its provider.
//! - `env`: the environment variables that configure models, and the Ollama address they give.
//! - `detect`: a spec from the environment when none was given, or the guidance for configuring one.
//! - `build`: the provider a spec names, configured from the environment.
//!
//! This module ties them together: [`connect`] and [`connect_spec`] wrap the model in a recorder and a
//! ReAct driver as the setup asks.

mod build;
mod detect;
mod env;
mod spec;

use std::path::PathBuf;
use std::sync::Arc;

use steward_core::Model;

use crate::error::Error;
use crate::http::HttpOptions;
use crate::react::{ReactModel, ReactStyle};
use crate::replay::Recorder;

use build::build;
use detect::detect;
pub use detect::no_model_guidance;
pub use env::Env;
pub use spec::ModelSpec;
use spec::bare;

/// Ollama's OpenAI-compatible endpoint on this machine.
pub const OLLAMA_DEFAULT_URL: &str = "http://127.0.0.1:11434/v1";
/// The default OpenAI model when only a key or base URL is set.
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini";
/// The default Anthropic model when only a key is set.
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
/// The Azure `api-version` used for the deployments URL form unless `AZURE_OPENAI_API_VERSION` says otherwise.
pub const DEFAULT_AZURE_API_VERSION: &str = "2024-10-21";

/// How the model is driven.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mode {
    /// Native tool calling.
    #[default]
    Native,
    /// ReAct with one JSON object per reply.
    ReactJson,
    /// ReAct with Thought / Action / Action Input lines.
    ReactText,
}

/// Everything that decides which model a command gets.
#[derive(Clone, Debug, Default)]
pub struct ModelSetup {
    /// The spec from `--model`; `STEWARD_MODEL` and then the environment are used when absent.
    pub spec: Option<String>,
    /// How to drive the model.
    pub mode: Mode,
    /// Save every exchange to this file.
    pub record: Option<PathBuf>,
    /// Timeouts, retries.
    pub http: HttpOptions,
}

/// Chooses and builds the model.
pub async fn connect(setup: ModelSetup, env: &Env) -> Result<Arc<dyn Model>, Error> {
    let text = match setup
        .spec
        .clone()
        .or_else(|| env.get("STEWARD_MODEL").map(str::to_owned))
    {
        Some(text) => text,
        None => detect(env).await?,
    };
    connect_spec(&text, setup, env)
}

/// Builds the model `text` names (`openai:gpt-4o-mini`, …), with `setup`'s mode, recording and HTTP options
/// (`setup.spec` is not read). Nothing is sent over the network.
pub fn connect_spec(text: &str, setup: ModelSetup, env: &Env) -> Result<Arc<dyn Model>, Error> {
    let full;
    let text = match bare(text, env) {
        Some(with_provider) => {
            full = with_provider;
            full.as_str()
        }
        None => text,
    };
    let spec = ModelSpec::parse(text)?;
    let model = build(&spec, text, env, setup.http)?;
    let model: Arc<dyn Model> = match &setup.record {
        Some(path) => Arc::new(Recorder::create(model, path)?),
        None => model,
    };
    Ok(match setup.mode {
        Mode::Native => model,
        Mode::ReactJson => Arc::new(ReactModel::new(model, ReactStyle::Json)),
        Mode::ReactText => Arc::new(ReactModel::new(model, ReactStyle::Text)),
    })
}
