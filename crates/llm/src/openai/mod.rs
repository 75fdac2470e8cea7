//! OpenAI chat completions, and everything that speaks it: Azure OpenAI (deployments and v1 URL forms), Ollama,
//! vLLM, llama.cpp's server, LM Studio and any other OpenAI-compatible server.

mod body;
mod stream;
mod wire;

use async_trait::async_trait;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use steward_core::redact::{redact_url, url_secrets};
use steward_core::{
    Capabilities, Model, ModelError, ModelRequest, ModelResponse, SchemaStyle, StreamDelta,
};

use crate::http::{Http, HttpOptions, Secret};
use crate::schemas::SchemaCache;
use crate::sse::SseParser;
use body::Body;
use stream::Accumulator;
use wire::{Completion, Dialect, FormatLevel};

/// Which server an [`OpenAiModel`] talks to.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Flavor {
    /// api.openai.com, or another endpoint given by `OPENAI_BASE_URL`.
    OpenAi,
    /// Azure OpenAI.
    Azure {
        /// The `api-version` for the deployments URL form; `None` selects the v1 form.
        api_version: Option<String>,
    },
    /// A local Ollama server.
    Ollama,
    /// Any other OpenAI-compatible server (vLLM, llama.cpp server, LM Studio, …).
    Compatible,
}

/// How requests are authenticated.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Auth {
    /// No credentials (local servers).
    None,
    /// `Authorization: Bearer …` (OpenAI keys, Azure Entra ID tokens, local servers started with a key).
    Bearer(Secret),
    /// Azure's `api-key: …` header.
    ApiKey(Secret),
}

/// Settings of an OpenAI-compatible model.
#[derive(Clone)]
pub struct OpenAiConfig {
    /// Which server.
    pub flavor: Flavor,
    /// The model name (for Azure: the deployment name).
    pub model: String,
    /// The base URL: `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`, or for Azure the resource
    /// endpoint `https://<resource>.openai.azure.com`.
    pub base_url: String,
    /// Credentials.
    pub auth: Auth,
    /// Send tools with `strict: true` (OpenAI structured outputs).
    pub strict_tools: bool,
    /// Timeouts, retries.
    pub http: HttpOptions,
}

impl std::fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("flavor", &self.flavor)
            .field("model", &self.model)
            .field("base_url", &redact_url(&self.base_url))
            .field("auth", &self.auth)
            .field("strict_tools", &self.strict_tools)
            .field("http", &self.http)
            .finish()
    }
}

impl OpenAiConfig {
    /// A model on api.openai.com (or `base_url` when given).
    pub fn openai(model: impl Into<String>, key: Option<Secret>, base_url: Option<String>) -> Self {
        Self {
            flavor: Flavor::OpenAi,
            model: model.into(),
            base_url: base_url.unwrap_or_else(|| "https://api.openai.com/v1".to_owned()),
            auth: key.map_or(Auth::None, Auth::Bearer),
            strict_tools: false,
            http: HttpOptions::default(),
        }
    }

    /// An Azure OpenAI deployment. With an `api_version` the deployments URL form is used, without one the
    /// v1 form.
    pub fn azure(
        deployment: impl Into<String>,
        endpoint: impl Into<String>,
        auth: Auth,
        api_version: Option<String>,
    ) -> Self {
        Self {
            flavor: Flavor::Azure { api_version },
            model: deployment.into(),
            base_url: endpoint.into(),
            auth,
            strict_tools: false,
            http: HttpOptions::default(),
        }
    }

    /// A model served by Ollama at `base_url` (default `http://127.0.0.1:11434/v1`).
    pub fn ollama(model: impl Into<String>, base_url: Option<String>) -> Self {
        Self {
            flavor: Flavor::Ollama,
            model: model.into(),
            base_url: base_url.unwrap_or_else(|| crate::OLLAMA_DEFAULT_URL.to_owned()),
            auth: Auth::None,
            strict_tools: false,
            http: HttpOptions::default(),
        }
    }

    /// A model on any OpenAI-compatible server.
    pub fn compatible(
        model: impl Into<String>,
        base_url: impl Into<String>,
        key: Option<Secret>,
    ) -> Self {
        Self {
            flavor: Flavor::Compatible,
            model: model.into(),
            base_url: base_url.into(),
            auth: key.map_or(Auth::None, Auth::Bearer),
            strict_tools: false,
            http: HttpOptions::default(),
        }
    }

    /// The chat-completions URL. A query string in the base URL (`…/v1?api-key=…`, for gateways that take a
    /// key there) stays at the end.
    pub fn url(&self) -> String {
        let (base, query) = match self.base_url.split_once('?') {
            Some((base, query)) => (base, Some(query)),
            None => (self.base_url.as_str(), None),
        };
        let base = base.trim_end_matches('/');
        let (path, version) = match &self.flavor {
            Flavor::Azure {
                api_version: Some(version),
            } if !base.contains("/openai/v1") => (
                format!("/openai/deployments/{}/chat/completions", self.model),
                Some(version.as_str()),
            ),
            Flavor::Azure { .. } if base.ends_with("/openai/v1") => {
                ("/chat/completions".to_owned(), None)
            }
            Flavor::Azure { .. } => ("/openai/v1/chat/completions".to_owned(), None),
            _ => ("/chat/completions".to_owned(), None),
        };
        let mut url = format!("{base}{path}");
        let mut separator = '?';
        if let Some(version) = version {
            url.push(separator);
            url.push_str("api-version=");
            url.push_str(version);
            separator = '&';
        }
        if let Some(query) = query.filter(|q| !q.is_empty()) {
            url.push(separator);
            url.push_str(query);
        }
        url
    }

    fn name(&self) -> String {
        match self.flavor {
            Flavor::OpenAi => format!("openai:{}", self.model),
            Flavor::Azure { .. } => format!("azure:{}", self.model),
            Flavor::Ollama => format!("ollama:{}", self.model),
            Flavor::Compatible => {
                format!(
                    "openai-compatible:{}@{}",
                    self.model,
                    redact_url(&self.base_url)
                )
            }
        }
    }
}

/// A model behind the OpenAI chat-completions API.
pub struct OpenAiModel {
    name: String,
    model: String,
    url: String,
    headers: HeaderMap,
    dialect: Dialect,
    /// What this server was found to refuse, kept for the model's life (see [`Learned`]).
    learned: Learned,
    schemas: SchemaCache,
    capabilities: Capabilities,
    http: Http,
}

/// What a server was found to take, learned from its refusals once and kept: whether a tool-calling assistant
/// message carries `"content": ""`, and how far the reply's JSON schema falls back.
#[derive(Debug)]
struct Learned {
    assistant_content: std::sync::atomic::AtomicBool,
    format: std::sync::atomic::AtomicU8,
    /// The server refuses to stream a reply that may call tools (llama-cpp-python's function-calling chat
    /// formats): such requests are sent whole.
    no_stream_with_tools: std::sync::atomic::AtomicBool,
}

impl Learned {
    fn dialect(&self, base: Dialect) -> Dialect {
        use std::sync::atomic::Ordering::Relaxed;
        Dialect {
            assistant_content: self.assistant_content.load(Relaxed),
            format: FormatLevel::from_u8(self.format.load(Relaxed)),
            ..base
        }
    }

    /// Learns from a refusal of `request` what to send instead; `false` when there is nothing to change.
    fn adapt(&self, request: &ModelRequest, error: &ModelError) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        let ModelError::Status {
            status, message, ..
        } = error
        else {
            return false;
        };
        if !(400..600).contains(status) || *status == 429 {
            return false;
        }
        let text = message.to_ascii_lowercase();
        let format = self.format.load(Relaxed);
        if request.response_format.is_some()
            && format < 3
            && ["response_format", "json_schema", "json_object", "schema"]
                .iter()
                .any(|w| text.contains(w))
        {
            // Only from the level that was refused: two calls refused at once step down once (and both try
            // the level reached).
            let _ = self
                .format
                .compare_exchange(format, format + 1, Relaxed, Relaxed);
            return true;
        }
        let calls = request.messages.iter().any(|m| {
            matches!(m, steward_core::Message::Assistant { content: None, tool_calls } if !tool_calls.is_empty())
        });
        if calls && text.contains("content") {
            let was = self.assistant_content.load(Relaxed);
            return self
                .assistant_content
                .compare_exchange(was, !was, Relaxed, Relaxed)
                .is_ok();
        }
        false
    }
}

impl std::fmt::Debug for OpenAiModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiModel")
            .field("name", &self.name)
            .field("url", &redact_url(&self.url))
            .finish_non_exhaustive()
    }
}

impl OpenAiModel {
    /// A model with these settings.
    pub fn new(config: OpenAiConfig) -> Result<Self, ModelError> {
        let name = config.name();
        let provider = match config.flavor {
            Flavor::OpenAi => "openai",
            Flavor::Azure { .. } => "azure",
            Flavor::Ollama => "ollama",
            Flavor::Compatible => "openai-compatible",
        };
        let mut headers = HeaderMap::new();
        let mut secrets = Vec::new();
        let invalid = |what: &str| ModelError::Transport {
            provider: provider.to_owned(),
            message: format!("the {what} contains characters that cannot go in an HTTP header"),
        };
        match &config.auth {
            Auth::None => {}
            Auth::Bearer(secret) => {
                let mut value = HeaderValue::from_str(&format!("Bearer {}", secret.expose()))
                    .map_err(|_| invalid("API key"))?;
                value.set_sensitive(true);
                headers.insert(AUTHORIZATION, value);
                secrets.push(secret.clone());
            }
            Auth::ApiKey(secret) => {
                let mut value =
                    HeaderValue::from_str(secret.expose()).map_err(|_| invalid("API key"))?;
                value.set_sensitive(true);
                headers.insert(HeaderName::from_static("api-key"), value);
                secrets.push(secret.clone());
            }
        }
        let url = config.url();
        // Credentials in the URL itself (`https://user:pass@host/v1?api-key=…`) are secrets too.
        secrets.extend(url_secrets(&url).into_iter().map(Secret::new));
        let hosted = matches!(config.flavor, Flavor::OpenAi | Flavor::Azure { .. });
        Ok(Self {
            url,
            name,
            model: config.model.clone(),
            headers,
            dialect: Dialect {
                max_completion_tokens: hosted,
                strict_tools: config.strict_tools,
                assistant_content: !hosted,
                format: FormatLevel::JsonSchema,
            },
            // Local servers' chat templates read an assistant message's `content`; hosted APIs take it absent.
            learned: Learned {
                assistant_content: std::sync::atomic::AtomicBool::new(!hosted),
                format: std::sync::atomic::AtomicU8::new(0),
                no_stream_with_tools: std::sync::atomic::AtomicBool::new(false),
            },
            schemas: SchemaCache::new(if config.strict_tools {
                SchemaStyle::Strict
            } else {
                SchemaStyle::Standard
            }),
            capabilities: Capabilities::new()
                .native_tools(true)
                .strict_schemas(hosted)
                .json_schema_output(true)
                .parallel_tool_calls(true),
            http: Http::new(provider, config.http, secrets)?,
        })
    }

    /// Posts `request` in the form this server takes; a refusal that names a field it does not take (the
    /// reply's JSON schema, an assistant message's `content`) is learned once and the request sent again.
    async fn post(
        &self,
        request: &ModelRequest,
        stream: bool,
    ) -> Result<reqwest::Response, ModelError> {
        let schemas = self.schemas.rendered(&request.tools);
        let mut tries = 0;
        loop {
            let dialect = self.learned.dialect(self.dialect);
            let body = Body::new(&self.model, request, &schemas, dialect, stream);
            match self.http.post(&self.url, &self.headers, &body).await {
                Err(error) if tries < 4 && self.learned.adapt(request, &error) => tries += 1,
                other => return other,
            }
        }
    }

    /// `request` sent whole, for a caller that asked for a stream: its text reaches `on_delta` in one piece.
    async fn whole(
        &self,
        request: &ModelRequest,
        on_delta: &(dyn Fn(StreamDelta) + Send + Sync),
    ) -> Result<ModelResponse, ModelError> {
        let reply = self.complete(request).await?;
        if let Some(text) = &reply.content {
            on_delta(StreamDelta::Text(text.clone()));
        }
        Ok(reply)
    }

    fn parse(&self, bytes: &[u8], request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let completion: Completion = serde_json::from_slice(bytes).map_err(|e| {
            self.http.invalid(format!(
                "the body is not a chat completion ({e}): {}",
                self.http.quote(&String::from_utf8_lossy(bytes), 300)
            ))
        })?;
        wire::response(completion, &request.tools).map_err(|m| self.http.invalid(m))
    }
}

#[async_trait]
impl Model for OpenAiModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn capabilities(&self) -> Capabilities {
        self.capabilities
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let response = self.post(request, false).await?;
        let bytes = self.http.body(response).await?;
        self.parse(&bytes, request)
    }

    async fn stream(
        &self,
        request: &ModelRequest,
        on_delta: &(dyn Fn(StreamDelta) + Send + Sync),
    ) -> Result<ModelResponse, ModelError> {
        use std::sync::atomic::Ordering::Relaxed;
        let whole = !request.tools.is_empty() && self.learned.no_stream_with_tools.load(Relaxed);
        let streamed = if whole {
            None
        } else {
            match self.post(request, true).await {
                Err(ModelError::Status { message, .. })
                    if !request.tools.is_empty()
                        && message.to_ascii_lowercase().contains("stream") =>
                {
                    self.learned.no_stream_with_tools.store(true, Relaxed);
                    None
                }
                other => Some(other?),
            }
        };
        let Some(mut response) = streamed else {
            return self.whole(request, on_delta).await;
        };
        let is_sse = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_none_or(|v| v.contains("event-stream"));
        if !is_sse {
            // A server that ignored `stream: true` and sent the whole reply.
            let bytes = self.http.body(response).await?;
            let reply = self.parse(&bytes, request)?;
            if let Some(text) = &reply.content {
                on_delta(StreamDelta::Text(text.clone()));
            }
            return Ok(reply);
        }
        let mut parser = SseParser::default();
        let mut acc = Accumulator::default();
        let mut done = false;
        let mut got_any = false;
        while !done {
            let events = match self.http.chunk(&mut response).await? {
                Some(bytes) => parser.feed(&bytes),
                None => {
                    done = true;
                    parser.finish().into_iter().collect()
                }
            };
            for event in events {
                let data = event.data.trim();
                if data == "[DONE]" {
                    return Ok(acc.finish(&request.tools));
                }
                if data.is_empty() {
                    continue;
                }
                let chunk: Completion = serde_json::from_str(data).map_err(|e| {
                    self.http.invalid(format!(
                        "a stream event is not a chat-completion chunk ({e}): {}",
                        self.http.quote(data, 300)
                    ))
                })?;
                if let Some(error) = &chunk.error {
                    return Err(self.http.invalid(format!(
                        "the stream reported an error: {}",
                        crate::http::provider_message(&serde_json::json!({ "error": error }))
                            .unwrap_or_else(|| error.to_string())
                    )));
                }
                got_any = true;
                acc.push(chunk, on_delta);
            }
        }
        if acc.finished() {
            // Some servers end the stream without `[DONE]`; a finish reason is enough.
            Ok(acc.finish(&request.tools))
        } else if !got_any && !request.tools.is_empty() {
            // A server that fails a streamed reply with tools before its first piece (llama-cpp-python: "Automatic
            // streaming tool choice is not supported", raised after the headers): sent whole from now on.
            self.learned.no_stream_with_tools.store(true, Relaxed);
            self.whole(request, on_delta).await
        } else {
            Err(ModelError::Transport {
                provider: self.http.provider().to_owned(),
                message:
                    "the stream ended before the reply was complete (no finish reason, no [DONE])"
                        .to_owned(),
            })
        }
    }
}
