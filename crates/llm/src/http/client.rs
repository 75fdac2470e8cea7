//! A provider's HTTP client: one POST with its retry loop (timeouts, retries, `Retry-After`, the retry hook),
//! and the reading of reply bodies, whole or piece by piece.

use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use reqwest::Response;
use reqwest::header::{HeaderMap, HeaderValue};
use serde::Serialize;
use steward_core::ModelError;

use super::policy::{
    HttpOptions, RetryNotice, backoff, request_error, retry_after, retryable_status,
    retryable_transport,
};
use super::secret::Secret;

/// The largest response body read (error bodies are cut far shorter).
const MAX_BODY: usize = 64 * 1024 * 1024;

/// A provider's HTTP client.
pub(crate) struct Http {
    client: reqwest::Client,
    /// The provider's name, in every error.
    pub(super) provider: String,
    options: HttpOptions,
    /// Scrubbed from every error text (see `error_text`).
    pub(super) secrets: Vec<Secret>,
    /// The size the next request body is expected to reach: the last one's, with room to grow.
    last_body: AtomicUsize,
}

impl Http {
    /// A client for `provider`; `secrets` are scrubbed from every error text.
    pub(crate) fn new(
        provider: impl Into<String>,
        options: HttpOptions,
        secrets: Vec<Secret>,
    ) -> Result<Self, ModelError> {
        let provider = provider.into();
        // reqwest is built without a bundled crypto provider; ring is ours. Installing twice is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .connect_timeout(options.timeouts.connect)
            .user_agent(concat!("steward/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ModelError::Transport {
                provider: provider.clone(),
                message: format!("could not set up the HTTP client: {e}"),
            })?;
        Ok(Self {
            client,
            provider,
            options,
            secrets: secrets
                .into_iter()
                .filter(|s| !s.expose().is_empty())
                .collect(),
            last_body: AtomicUsize::new(0),
        })
    }

    /// The provider's name.
    pub(crate) fn provider(&self) -> &str {
        &self.provider
    }

    /// Posts a JSON body and returns the successful response (its body not read yet), retrying what is worth
    /// retrying.
    pub(crate) async fn post(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &(impl Serialize + Sync),
    ) -> Result<Response, ModelError> {
        let body = self.encode(body)?;
        let retry = self.options.retry;
        let mut attempt = 0u32;
        // The last error status and text: the same again after a retry will not change with more.
        let mut last: Option<(u16, String)> = None;
        loop {
            let request = self
                .client
                .post(url)
                .headers(headers.clone())
                .header(
                    reqwest::header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                )
                .body(body.clone())
                .timeout(self.options.timeouts.total);
            let sent = tokio::time::timeout(self.options.timeouts.first_byte, request.send()).await;
            let (reason, delay) = match sent {
                Err(_) => {
                    return Err(self.timeout("first byte", self.options.timeouts.first_byte));
                }
                Ok(Err(error)) => {
                    let message = self.describe(&error);
                    if !retryable_transport(&error) || attempt >= retry.max_retries {
                        return Err(if error.is_timeout() {
                            if error.is_connect() {
                                self.timeout("connect", self.options.timeouts.connect)
                            } else {
                                self.timeout("total", self.options.timeouts.total)
                            }
                        } else {
                            ModelError::Transport {
                                provider: self.provider.clone(),
                                message,
                            }
                        });
                    }
                    (message, backoff(&retry, attempt))
                }
                Ok(Ok(response)) if response.status().is_success() => return Ok(response),
                Ok(Ok(response)) => {
                    let status = response.status();
                    let asked = retry_after(response.headers());
                    let message = self.error_text(response).await;
                    // A 500 with the same text after a retry is the request's doing (an overloaded server
                    // says so with 503, 529 or 429, and those are tried to the end).
                    let seen = (status == reqwest::StatusCode::INTERNAL_SERVER_ERROR)
                        .then(|| (status.as_u16(), message.clone()));
                    if !retryable_status(status)
                        || request_error(status, &message)
                        || (seen.is_some() && last == seen)
                        || attempt >= retry.max_retries
                    {
                        return Err(self.status_error(status, message));
                    }
                    last = seen;
                    let delay = match asked {
                        Some(asked) if asked > retry.max_retry_after => {
                            return Err(self.status_error(
                                status,
                                format!(
                                    "{message} (the provider asks to retry after {} s, more than the {} s allowed)",
                                    asked.as_secs(),
                                    retry.max_retry_after.as_secs()
                                ),
                            ));
                        }
                        Some(asked) => asked,
                        None => backoff(&retry, attempt),
                    };
                    (format!("HTTP {}: {message}", status.as_u16()), delay)
                }
            };
            attempt += 1;
            if let Some(hook) = &self.options.on_retry {
                hook(&RetryNotice {
                    provider: self.provider.clone(),
                    attempt,
                    delay,
                    reason,
                });
            }
            tokio::time::sleep(delay).await;
        }
    }

    /// A request body as JSON bytes, written into a buffer the size of the last body (a conversation grows
    /// by a message or two per call) instead of one grown by doubling.
    fn encode(&self, body: &impl Serialize) -> Result<Bytes, ModelError> {
        let mut out = Vec::with_capacity(self.last_body.load(Ordering::Relaxed).max(256));
        serde_json::to_writer(&mut out, body)
            .map_err(|e| self.invalid(format!("could not encode the request: {e}")))?;
        self.last_body
            .store(out.len() + out.len() / 8, Ordering::Relaxed);
        Ok(Bytes::from(out))
    }

    /// Reads a whole (successful) body.
    pub(crate) async fn body(&self, mut response: Response) -> Result<Vec<u8>, ModelError> {
        let mut out = Vec::new();
        while let Some(chunk) = self.chunk(&mut response).await? {
            if out.len() + chunk.len() > MAX_BODY {
                return Err(self.invalid(format!("the reply is larger than {MAX_BODY} bytes")));
            }
            out.extend_from_slice(&chunk);
        }
        Ok(out)
    }

    /// A timeout error naming the `limit` that ran out after `after`.
    fn timeout(&self, limit: &str, after: std::time::Duration) -> ModelError {
        ModelError::Timeout {
            provider: self.provider.clone(),
            limit: limit.to_owned(),
            after,
        }
    }

    /// The next piece of a body; `None` at its end. A connection that breaks is an error that says so, and a
    /// wait that runs out names its limit: `idle` between two pieces, `total` for the whole call.
    pub(crate) async fn chunk(&self, response: &mut Response) -> Result<Option<Bytes>, ModelError> {
        let idle = self.options.timeouts.idle;
        let Ok(next) = tokio::time::timeout(idle, response.chunk()).await else {
            return Err(self.timeout("idle", idle));
        };
        next.map_err(|error| {
            if error.is_timeout() {
                self.timeout("total", self.options.timeouts.total)
            } else {
                ModelError::Transport {
                    provider: self.provider.clone(),
                    message: format!("the reply was cut off: {}", self.describe(&error)),
                }
            }
        })
    }
}
