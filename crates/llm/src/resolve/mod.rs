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
use steward_core::redact::redact_url;

use crate::error::Error;
use crate::http::HttpOptions;
use crate::react::{ReactModel, ReactStyle};
use crate::replay::Recorder;

use build::build;
pub use detect::no_model_guidance;
use detect::{detect, ollama_models};
pub use env::Env;
use env::ollama_host;
pub use spec::ModelSpec;
use spec::{Picked, bare, bare_picked};

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

/// Chooses and builds the model: a bare name gets its provider as [`resolve`] gives it (failing at once when
/// it would go to an Ollama server that is not there).
pub async fn connect(setup: ModelSetup, env: &Env) -> Result<Arc<dyn Model>, Error> {
    let text = match setup
        .spec
        .clone()
        .or_else(|| env.get("STEWARD_MODEL").map(str::to_owned))
    {
        Some(text) => resolve(&text, env).await?.spec,
        None => detect(env).await?,
    };
    connect_spec(&text, setup, env)
}

/// A model text as a full spec, and when the environment (not the name) chose a bare name's provider, a note
/// that says which and why.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Resolved {
    /// The spec with its provider (`text` as given when it had one).
    pub spec: String,
    /// `` `llama3.1` names no provider: using openai:llama3.1, … `` for people; `None` when the text named its
    /// provider or the name alone decided it (`gpt-…` is OpenAI's, `claude…` Anthropic's).
    pub note: Option<String>,
}

/// Gives a bare model name (`gpt-4o-mini`, `qwen2.5:7b`) the provider its name and the environment point to
/// (see [`connect_spec`]), saying why when the environment decided. A name that would go to Ollama is checked
/// there first: when no Ollama server answers, or it lacks the model, this fails at once with what would
/// work (a provider prefix, the likely model name) instead of letting the first request retry against nothing.
pub async fn resolve(text: &str, env: &Env) -> Result<Resolved, Error> {
    let Some((spec, picked)) = bare_picked(text, env) else {
        return Ok(Resolved {
            spec: text.to_owned(),
            note: None,
        });
    };
    let name = text.trim();
    let using = |why: &str| Some(format!("`{name}` names no provider: using {spec}, {why}"));
    let note = match picked {
        Picked::Name => None,
        Picked::Azure => {
            using("as Azure OpenAI is the only OpenAI configured (AZURE_OPENAI_ENDPOINT)")
        }
        Picked::BaseUrl => using(&format!(
            "on the OpenAI-compatible server of OPENAI_BASE_URL ({})",
            redact_url(env.get("OPENAI_BASE_URL").unwrap_or_default())
        )),
        Picked::AnthropicKey => {
            using("as ANTHROPIC_API_KEY is set (and no OpenAI key or base URL)")
        }
        Picked::OpenAiKey => using("as OPENAI_API_KEY is set"),
        Picked::Ollama => {
            let host = ollama_host(env);
            let shown = redact_url(&host);
            let Some(models) = ollama_models(&host).await else {
                return Err(Error::NoModel(format!(
                    "`{name}` names no provider, so it went to Ollama, and no Ollama server answered at \
                     {shown}. {BARE_RULE}{} Or give the provider: {PROVIDERS}",
                    did_you_mean(name, &[])
                )));
            };
            if !models
                .iter()
                .any(|m| m == name || *m == format!("{name}:latest"))
            {
                return Err(Error::NoModel(format!(
                    "`{name}` names no provider, so it went to Ollama, and the Ollama server at {shown} does \
                     not have it ({}). {BARE_RULE}{} Or pull it (`ollama pull {name}`), or give the provider: \
                     {PROVIDERS}",
                    if models.is_empty() {
                        "it has no models".to_owned()
                    } else {
                        format!("it has {}", models.join(", "))
                    },
                    did_you_mean(name, &models)
                )));
            }
            using(&format!(
                "the model of that name on the Ollama server at {shown}"
            ))
        }
    };
    Ok(Resolved { spec, note })
}

/// How a bare name gets its provider, for errors.
const BARE_RULE: &str = "(A name without a provider goes to Anthropic if it starts with claude, to OpenAI if it \
     is an OpenAI model name: gpt-…, o1…, o3…, o4…, chatgpt…; any other name to the server of OPENAI_BASE_URL, \
     else to Anthropic when ANTHROPIC_API_KEY is set, else to OpenAI when OPENAI_API_KEY is, else to Ollama.)";

/// The providers a spec may name, for errors.
const PROVIDERS: &str = "openai:<model>, anthropic:<model>, ollama:<model>, azure:<deployment>, \
     openai-compatible:<model>@<base-url>.";

/// ` Did you mean `gpt-4o`?` when `name` looks like a mistyped well-known model or one of `others`.
fn did_you_mean(name: &str, others: &[String]) -> String {
    let mut known: Vec<&str> = crate::pricing::known_models().collect();
    known.extend(others.iter().map(String::as_str));
    known
        .into_iter()
        .map(|n| (strsim::damerau_levenshtein(name, n), n))
        .filter(|(d, n)| *d <= 2.max(n.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| format!(" Did you mean `{n}`?"))
        .unwrap_or_default()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_bare_name_is_resolved_with_a_note_or_fails_at_once() {
        // A spec with its provider, or a name that decides alone: nothing to say.
        let openai = Env::from_pairs([("OPENAI_API_KEY", "k")]);
        for (text, spec) in [
            ("openai:llama3", "openai:llama3"),
            ("gpt-4o", "openai:gpt-4o"),
        ] {
            let resolved = resolve(text, &openai).await.unwrap();
            assert_eq!((resolved.spec.as_str(), resolved.note), (spec, None));
        }
        // The environment decides: said.
        let resolved = resolve("llama3", &openai).await.unwrap();
        assert_eq!(resolved.spec, "openai:llama3");
        assert_eq!(
            resolved.note.as_deref(),
            Some("`llama3` names no provider: using openai:llama3, as OPENAI_API_KEY is set")
        );
        // Ollama is not there: an error at once, with the likely name.
        let nothing = Env::from_pairs([("OLLAMA_HOST", "127.0.0.1:9")]);
        let error = resolve("gpt4o", &nothing).await.unwrap_err().to_string();
        assert!(
            error.starts_with(
                "`gpt4o` names no provider, so it went to Ollama, and no Ollama server answered"
            ),
            "{error}"
        );
        assert!(error.contains("Did you mean `gpt-4o`?"), "{error}");
        let error = resolve("mistral", &nothing).await.unwrap_err().to_string();
        assert!(!error.contains("Did you mean"), "{error}");
    }
}
