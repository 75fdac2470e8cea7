//! Choosing a model from a spec (`--model` or `STEWARD_MODEL`) or, when none is given, from the environment.
//!
//! Specs: `openai:<model>`, `azure:<deployment>`, `ollama:<model>`, `anthropic:<model>`,
//! `openai-compatible:<model>@<base-url>`, `replay:<file>`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use steward_core::Model;
use steward_core::redact::{redact_url, redact_urls};

use crate::anthropic::{AnthropicConfig, AnthropicModel};
use crate::error::Error;
use crate::http::{HttpOptions, Secret};
use crate::openai::{Auth, OpenAiConfig, OpenAiModel};
use crate::react::{ReactModel, ReactStyle};
use crate::replay::{Recorder, ReplayModel};

/// Ollama's OpenAI-compatible endpoint on this machine.
pub const OLLAMA_DEFAULT_URL: &str = "http://127.0.0.1:11434/v1";
/// The default OpenAI model when only a key or base URL is set.
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini";
/// The default Anthropic model when only a key is set.
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
/// The Azure `api-version` used for the deployments URL form unless `AZURE_OPENAI_API_VERSION` says otherwise.
pub const DEFAULT_AZURE_API_VERSION: &str = "2024-10-21";

/// A parsed model spec (its `Debug` form hides passwords and keys in a base URL).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelSpec {
    /// `openai:<model>`
    OpenAi(String),
    /// `azure:<deployment>`
    Azure(String),
    /// `ollama:<model>`
    Ollama(String),
    /// `anthropic:<model>`
    Anthropic(String),
    /// `openai-compatible:<model>@<base-url>`
    Compatible {
        /// The model name the server knows.
        model: String,
        /// The server's base URL (ending in `/v1` for most servers).
        base_url: String,
    },
    /// `replay:<file>`
    Replay(PathBuf),
}

impl std::fmt::Debug for ModelSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::OpenAi(model) => f.debug_tuple("OpenAi").field(model).finish(),
            Self::Azure(deployment) => f.debug_tuple("Azure").field(deployment).finish(),
            Self::Ollama(model) => f.debug_tuple("Ollama").field(model).finish(),
            Self::Anthropic(model) => f.debug_tuple("Anthropic").field(model).finish(),
            Self::Compatible { model, base_url } => f
                .debug_struct("Compatible")
                .field("model", model)
                .field("base_url", &redact_url(base_url))
                .finish(),
            Self::Replay(path) => f.debug_tuple("Replay").field(path).finish(),
        }
    }
}

impl ModelSpec {
    /// Parses a spec.
    pub fn parse(text: &str) -> Result<Self, Error> {
        let bad = |reason: &str| Error::BadSpec {
            spec: redact_urls(text),
            reason: reason.to_owned(),
        };
        let (provider, rest) = text.trim().split_once(':').ok_or_else(|| {
            bad("write it as <provider>:<model>, e.g. openai:gpt-4o-mini, ollama:qwen2.5:7b, anthropic:claude-sonnet-4-5")
        })?;
        let rest = rest.trim();
        if rest.is_empty() {
            return Err(bad("the model name after `:` is missing"));
        }
        Ok(match provider {
            "openai" => Self::OpenAi(rest.to_owned()),
            "azure" => Self::Azure(rest.to_owned()),
            "ollama" => Self::Ollama(rest.to_owned()),
            "anthropic" => Self::Anthropic(rest.to_owned()),
            "openai-compatible" => {
                let at = rest
                    .rfind("@http://")
                    .or_else(|| rest.rfind("@https://"))
                    .ok_or_else(|| bad("write it as openai-compatible:<model>@<base-url>, e.g. openai-compatible:llama3@http://127.0.0.1:8000/v1"))?;
                let (model, base_url) = (&rest[..at], &rest[at + 1..]);
                if model.is_empty() {
                    return Err(bad("the model name before `@` is missing"));
                }
                Self::Compatible {
                    model: model.to_owned(),
                    base_url: base_url.to_owned(),
                }
            }
            "replay" => Self::Replay(PathBuf::from(rest)),
            other => {
                return Err(bad(&format!(
                    "unknown provider `{other}`; use openai, azure, ollama, anthropic, openai-compatible or replay"
                )));
            }
        })
    }
}

/// A snapshot of the environment variables that configure models (so tests can pass their own).
#[derive(Clone, Debug, Default)]
pub struct Env {
    vars: HashMap<String, String>,
}

impl Env {
    /// The process environment.
    pub fn from_process() -> Self {
        Self {
            vars: std::env::vars().collect(),
        }
    }

    /// An environment with just these variables.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        Self {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
        }
    }

    /// A variable, when set and not empty.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
    }
}

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

fn build(
    spec: &ModelSpec,
    text: &str,
    env: &Env,
    http: HttpOptions,
) -> Result<Arc<dyn Model>, Error> {
    let missing = |what: &str| Error::Missing {
        spec: redact_urls(text),
        what: what.to_owned(),
    };
    let secret = |name: &str| env.get(name).map(Secret::new);
    Ok(match spec {
        ModelSpec::OpenAi(model) => {
            let base = env.get("OPENAI_BASE_URL").map(str::to_owned);
            let key = secret("OPENAI_API_KEY");
            if key.is_none() && base.as_deref().is_none_or(|b| b.contains("api.openai.com")) {
                return Err(missing(
                    "OPENAI_API_KEY (or OPENAI_BASE_URL for a server that needs no key)",
                ));
            }
            let mut config = OpenAiConfig::openai(model, key, base);
            config.http = http;
            Arc::new(OpenAiModel::new(config)?)
        }
        ModelSpec::Azure(deployment) => {
            let endpoint = env.get("AZURE_OPENAI_ENDPOINT").ok_or_else(|| {
                missing("AZURE_OPENAI_ENDPOINT (https://<resource>.openai.azure.com)")
            })?;
            let auth = match (
                secret("AZURE_OPENAI_API_KEY"),
                secret("AZURE_OPENAI_AD_TOKEN"),
            ) {
                (Some(key), _) => Auth::ApiKey(key),
                (None, Some(token)) => Auth::Bearer(token),
                (None, None) => {
                    return Err(missing(
                        "AZURE_OPENAI_API_KEY, or an Entra ID token in AZURE_OPENAI_AD_TOKEN",
                    ));
                }
            };
            let version = env
                .get("AZURE_OPENAI_API_VERSION")
                .unwrap_or(DEFAULT_AZURE_API_VERSION);
            let version =
                (version != "v1" && !endpoint.contains("/openai/v1")).then(|| version.to_owned());
            let mut config = OpenAiConfig::azure(deployment, endpoint, auth, version);
            config.http = http;
            Arc::new(OpenAiModel::new(config)?)
        }
        ModelSpec::Ollama(model) => {
            let mut config = OpenAiConfig::ollama(model, Some(format!("{}/v1", ollama_host(env))));
            config.http = http;
            Arc::new(OpenAiModel::new(config)?)
        }
        ModelSpec::Compatible { model, base_url } => {
            let mut config = OpenAiConfig::compatible(model, base_url, secret("STEWARD_API_KEY"));
            config.http = http;
            Arc::new(OpenAiModel::new(config)?)
        }
        ModelSpec::Anthropic(model) => {
            let key = secret("ANTHROPIC_API_KEY").ok_or_else(|| missing("ANTHROPIC_API_KEY"))?;
            let mut config =
                AnthropicConfig::new(model, key, env.get("ANTHROPIC_BASE_URL").map(str::to_owned));
            config.http = http;
            Arc::new(AnthropicModel::new(config)?)
        }
        ModelSpec::Replay(path) => Arc::new(ReplayModel::open(path)?),
    })
}

/// The Ollama server's root URL from `OLLAMA_HOST` (Ollama's own variable), default `http://127.0.0.1:11434`.
fn ollama_host(env: &Env) -> String {
    let Some(host) = env.get("OLLAMA_HOST") else {
        return "http://127.0.0.1:11434".to_owned();
    };
    let host = host.trim_end_matches('/');
    let with_scheme = if host.contains("://") {
        host.to_owned()
    } else {
        format!("http://{host}")
    };
    let with_scheme = with_scheme.replace("://0.0.0.0", "://127.0.0.1");
    let after_scheme = with_scheme.split_once("://").map_or("", |(_, rest)| rest);
    if after_scheme.contains(':') {
        with_scheme
    } else {
        format!("{with_scheme}:11434")
    }
}

/// A spec from the environment when none was given, or the guidance for configuring one.
/// A bare model name (`gpt-4o-mini`, `claude-sonnet-4-5`, `qwen2.5:7b`) with the provider the name and the
/// environment point to: `claude…` on Anthropic; OpenAI's model families on OpenAI (Azure when only Azure is
/// configured); any other name on the provider the environment configures (an OpenAI-compatible
/// `OPENAI_BASE_URL`, then Anthropic, then Ollama). `None` when `text` already names a known provider.
fn bare(text: &str, env: &Env) -> Option<String> {
    let text = text.trim();
    let provider = text.split_once(':').map(|(p, _)| p);
    if matches!(
        provider,
        Some("openai" | "azure" | "ollama" | "anthropic" | "openai-compatible" | "replay")
    ) {
        return None;
    }
    let has = |name: &str| env.get(name).is_some();
    let openai_family = ["gpt-", "o1", "o3", "o4", "chatgpt"]
        .iter()
        .any(|p| text.starts_with(p));
    let provider = if text.starts_with("claude") {
        "anthropic"
    } else if openai_family {
        if !has("OPENAI_API_KEY") && !has("OPENAI_BASE_URL") && has("AZURE_OPENAI_ENDPOINT") {
            "azure"
        } else {
            "openai"
        }
    } else if has("OPENAI_BASE_URL") {
        "openai"
    } else if has("ANTHROPIC_API_KEY") && !has("OPENAI_API_KEY") {
        "anthropic"
    } else if has("OPENAI_API_KEY") && provider.is_none() && !has("OLLAMA_HOST") {
        "openai"
    } else {
        "ollama"
    };
    Some(format!("{provider}:{text}"))
}

async fn detect(env: &Env) -> Result<String, Error> {
    if env.get("OPENAI_API_KEY").is_some() || env.get("OPENAI_BASE_URL").is_some() {
        return Ok(format!(
            "openai:{}",
            env.get("OPENAI_MODEL").unwrap_or(DEFAULT_OPENAI_MODEL)
        ));
    }
    if env.get("ANTHROPIC_API_KEY").is_some() {
        return Ok(format!(
            "anthropic:{}",
            env.get("ANTHROPIC_MODEL")
                .unwrap_or(DEFAULT_ANTHROPIC_MODEL)
        ));
    }
    if let (Some(_), Some(deployment)) = (
        env.get("AZURE_OPENAI_ENDPOINT"),
        env.get("AZURE_OPENAI_DEPLOYMENT"),
    ) {
        return Ok(format!("azure:{deployment}"));
    }
    let host = ollama_host(env);
    let shown = redact_url(&host);
    let ollama = match ollama_models(&host).await {
        Some(models) => match env
            .get("OLLAMA_MODEL")
            .map(str::to_owned)
            .or_else(|| models.into_iter().next())
        {
            Some(model) => return Ok(format!("ollama:{model}")),
            None => format!(
                "Ollama is running at {shown} but has no models; pull one (`ollama pull qwen2.5:7b`) and it is picked up."
            ),
        },
        None => format!(
            "No Ollama server answered at {shown}; when one runs there, its first model is picked up."
        ),
    };
    Err(Error::NoModel(no_model_guidance(&ollama)))
}

/// The message shown when no model is configured.
pub fn no_model_guidance(ollama: &str) -> String {
    format!(
        "no model is configured. Configure one with --model SPEC or STEWARD_MODEL=SPEC, where SPEC is one of:
  openai:gpt-4o-mini                     needs OPENAI_API_KEY (OPENAI_BASE_URL for another endpoint)
  azure:<deployment>                     needs AZURE_OPENAI_ENDPOINT and AZURE_OPENAI_API_KEY (or AZURE_OPENAI_AD_TOKEN);
                                         AZURE_OPENAI_API_VERSION=v1 selects the v1 URL form
  anthropic:claude-sonnet-4-5            needs ANTHROPIC_API_KEY
  ollama:qwen2.5:7b                      a local Ollama server (OLLAMA_HOST, default 127.0.0.1:11434)
  openai-compatible:<model>@<base-url>   vLLM, llama.cpp server, LM Studio (STEWARD_API_KEY if the server needs a key)
  replay:<file>                          plays back a run recorded with --record
Or just set OPENAI_API_KEY (uses openai:{DEFAULT_OPENAI_MODEL}, or OPENAI_MODEL), ANTHROPIC_API_KEY (anthropic:{DEFAULT_ANTHROPIC_MODEL}, or ANTHROPIC_MODEL),
or AZURE_OPENAI_ENDPOINT with AZURE_OPENAI_DEPLOYMENT.
{ollama}"
    )
}

/// The models of an Ollama server, or `None` when none answers quickly.
async fn ollama_models(host: &str) -> Option<Vec<String>> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_millis(300))
        .timeout(Duration::from_millis(1500))
        .build()
        .ok()?;
    let response = client.get(format!("{host}/api/tags")).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let body: serde_json::Value = serde_json::from_slice(&response.bytes().await.ok()?).ok()?;
    Some(
        body.get("models")?
            .as_array()?
            .iter()
            .filter_map(|m| m.get("name").and_then(|n| n.as_str()).map(str::to_owned))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        assert_eq!(
            ModelSpec::parse("openai:gpt-4o-mini").unwrap(),
            ModelSpec::OpenAi("gpt-4o-mini".into())
        );
        assert_eq!(
            ModelSpec::parse("ollama:qwen2.5:7b").unwrap(),
            ModelSpec::Ollama("qwen2.5:7b".into())
        );
        assert_eq!(
            ModelSpec::parse("openai-compatible:org/model@v2@http://127.0.0.1:8000/v1").unwrap(),
            ModelSpec::Compatible {
                model: "org/model@v2".into(),
                base_url: "http://127.0.0.1:8000/v1".into()
            }
        );
        assert_eq!(
            ModelSpec::parse("replay:run.jsonl").unwrap(),
            ModelSpec::Replay("run.jsonl".into())
        );
        for bad in [
            "gpt-4o",
            "openai:",
            "gemini:pro",
            "openai-compatible:llama3",
            "openai-compatible:@http://x",
        ] {
            assert!(ModelSpec::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ollama_host_forms() {
        let host = |v: &str| ollama_host(&Env::from_pairs([("OLLAMA_HOST", v)]));
        assert_eq!(ollama_host(&Env::default()), "http://127.0.0.1:11434");
        assert_eq!(host("0.0.0.0"), "http://127.0.0.1:11434");
        assert_eq!(host("gpu-box:8080"), "http://gpu-box:8080");
        assert_eq!(
            host("https://ollama.example.com/"),
            "https://ollama.example.com:11434"
        );
    }

    #[tokio::test]
    async fn missing_settings_name_the_variable() {
        let http = HttpOptions::default();
        let err = build(
            &ModelSpec::OpenAi("gpt-4o".into()),
            "openai:gpt-4o",
            &Env::default(),
            http.clone(),
        )
        .err()
        .unwrap();
        assert!(err.to_string().contains("OPENAI_API_KEY"), "{err}");
        let err = build(
            &ModelSpec::Azure("d".into()),
            "azure:d",
            &Env::default(),
            http.clone(),
        )
        .err()
        .unwrap();
        assert!(err.to_string().contains("AZURE_OPENAI_ENDPOINT"), "{err}");
        let env = Env::from_pairs([("AZURE_OPENAI_ENDPOINT", "https://r.openai.azure.com")]);
        let err = build(&ModelSpec::Azure("d".into()), "azure:d", &env, http.clone())
            .err()
            .unwrap();
        assert!(err.to_string().contains("AZURE_OPENAI_AD_TOKEN"), "{err}");
        let err = build(
            &ModelSpec::Anthropic("c".into()),
            "anthropic:c",
            &Env::default(),
            http,
        )
        .err()
        .unwrap();
        assert!(err.to_string().contains("ANTHROPIC_API_KEY"), "{err}");
    }

    #[test]
    fn a_bare_model_name_gets_the_provider_its_name_and_the_environment_point_to() {
        let none = Env::from_pairs([]);
        let openai = Env::from_pairs([("OPENAI_API_KEY", "k")]);
        let azure = Env::from_pairs([("AZURE_OPENAI_ENDPOINT", "https://x.openai.azure.com")]);
        let compatible = Env::from_pairs([("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")]);
        let anthropic = Env::from_pairs([("ANTHROPIC_API_KEY", "a")]);
        let cases = [
            ("gpt-4o-mini", &openai, "openai:gpt-4o-mini"),
            ("gpt-4o-mini", &none, "openai:gpt-4o-mini"),
            ("o3-mini", &azure, "azure:o3-mini"),
            ("claude-sonnet-4-5", &openai, "anthropic:claude-sonnet-4-5"),
            ("llama3.1", &compatible, "openai:llama3.1"),
            ("llama3.1", &anthropic, "anthropic:llama3.1"),
            ("qwen2.5:7b", &none, "ollama:qwen2.5:7b"),
            ("qwen2.5:7b", &openai, "ollama:qwen2.5:7b"),
        ];
        for (text, env, expected) in cases {
            assert_eq!(bare(text, env).as_deref(), Some(expected), "{text}");
        }
        assert_eq!(bare("openai:gpt-4o", &none), None);
        assert_eq!(bare("replay:run.jsonl", &none), None);
    }

    #[tokio::test]
    async fn detection_order() {
        let env = Env::from_pairs([("OPENAI_API_KEY", "k"), ("ANTHROPIC_API_KEY", "a")]);
        assert_eq!(detect(&env).await.unwrap(), "openai:gpt-4o-mini");
        let env = Env::from_pairs([
            ("ANTHROPIC_API_KEY", "a"),
            ("ANTHROPIC_MODEL", "claude-haiku-4-5"),
        ]);
        assert_eq!(detect(&env).await.unwrap(), "anthropic:claude-haiku-4-5");
        let env = Env::from_pairs([
            ("AZURE_OPENAI_ENDPOINT", "https://x"),
            ("AZURE_OPENAI_DEPLOYMENT", "gpt4"),
        ]);
        assert_eq!(detect(&env).await.unwrap(), "azure:gpt4");
        // Nothing set, and no Ollama on an unused port: the guidance names every way to configure a model.
        let env = Env::from_pairs([("OLLAMA_HOST", "127.0.0.1:9")]);
        let err = detect(&env).await.unwrap_err().to_string();
        for needle in [
            "--model",
            "STEWARD_MODEL",
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "AZURE_OPENAI_ENDPOINT",
            "ollama:",
            "No Ollama server answered at http://127.0.0.1:9",
        ] {
            assert!(err.contains(needle), "{needle} missing from {err}");
        }
    }
}
