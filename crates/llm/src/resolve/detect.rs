//! A spec from the environment when none was given: OpenAI, Anthropic or Azure variables, else the first
//! model of a local Ollama server; or, when nothing is configured, the guidance that names every way to
//! configure a model.

use std::time::Duration;

use steward_core::redact::redact_url;

use super::env::{Env, ollama_host};
use super::{DEFAULT_ANTHROPIC_MODEL, DEFAULT_OPENAI_MODEL};
use crate::error::Error;

/// A spec from the environment when none was given, or the guidance for configuring one.
pub(super) async fn detect(env: &Env) -> Result<String, Error> {
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
pub(super) async fn ollama_models(host: &str) -> Option<Vec<String>> {
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
