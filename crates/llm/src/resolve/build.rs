//! Building the provider a spec names, configured from the environment: base URLs, keys or tokens, the Azure
//! API version; a missing setting is an error that names the variable to set.

use std::sync::Arc;

use steward_core::Model;
use steward_core::redact::redact_urls;

use super::DEFAULT_AZURE_API_VERSION;
use super::env::{Env, ollama_host};
use super::spec::ModelSpec;
use crate::anthropic::{AnthropicConfig, AnthropicModel};
use crate::error::Error;
use crate::http::{HttpOptions, Secret};
use crate::openai::{Auth, OpenAiConfig, OpenAiModel};
use crate::replay::ReplayModel;

/// The model `spec` names (`text` is the spec as given, for errors), with `http`'s timeouts and retries.
pub(super) fn build(
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
