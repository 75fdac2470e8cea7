//! Model specs: the text `--model` or `STEWARD_MODEL` gives (`<provider>:<model>`), parsed; and a bare model
//! name given the provider its name and the environment point to.

use std::path::PathBuf;

use steward_core::redact::{redact_url, redact_urls};

use super::env::Env;
use crate::error::Error;

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

/// What gave a bare model name its provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Picked {
    /// The name itself: `claude…` is Anthropic's, `gpt-…`, `o1…` and the like OpenAI's.
    Name,
    /// An OpenAI model name, on Azure because only Azure is configured.
    Azure,
    /// `OPENAI_BASE_URL`: an OpenAI-compatible server.
    BaseUrl,
    /// `ANTHROPIC_API_KEY` without an OpenAI key.
    AnthropicKey,
    /// `OPENAI_API_KEY`.
    OpenAiKey,
    /// Nothing else: a local (or `OLLAMA_HOST`'s) Ollama.
    Ollama,
}

/// A bare model name (`gpt-4o-mini`, `claude-sonnet-4-5`, `qwen2.5:7b`) with the provider the name and the
/// environment point to: `claude…` on Anthropic; OpenAI's model families on OpenAI (Azure when only Azure is
/// configured); any other name on the provider the environment configures (an OpenAI-compatible
/// `OPENAI_BASE_URL`, then Anthropic, then Ollama). `None` when `text` already names a known provider.
pub(super) fn bare(text: &str, env: &Env) -> Option<String> {
    bare_picked(text, env).map(|(spec, _)| spec)
}

/// [`bare`], with what decided the provider.
pub(super) fn bare_picked(text: &str, env: &Env) -> Option<(String, Picked)> {
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
    let (provider, picked) = if text.starts_with("claude") {
        ("anthropic", Picked::Name)
    } else if openai_family {
        if !has("OPENAI_API_KEY") && !has("OPENAI_BASE_URL") && has("AZURE_OPENAI_ENDPOINT") {
            ("azure", Picked::Azure)
        } else {
            ("openai", Picked::Name)
        }
    } else if has("OPENAI_BASE_URL") {
        ("openai", Picked::BaseUrl)
    } else if has("ANTHROPIC_API_KEY") && !has("OPENAI_API_KEY") {
        ("anthropic", Picked::AnthropicKey)
    } else if has("OPENAI_API_KEY") && provider.is_none() && !has("OLLAMA_HOST") {
        ("openai", Picked::OpenAiKey)
    } else {
        ("ollama", Picked::Ollama)
    };
    Some((format!("{provider}:{text}"), picked))
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
}
