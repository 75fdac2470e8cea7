//! Reading an HTTP tool's response: a status that is not 2xx quoted short and scrubbed, a body read up to its
//! cap (streamed, never more), the part the model sees taken by JSON pointer, and transport failures told
//! apart (time limit, unreachable).

use std::time::Duration;

use reqwest::Response;
use reqwest::header::CONTENT_TYPE;
use serde_json::Value;
use steward_core::redact::{redact_secrets, redact_urls};
use steward_core::{ToolData, ToolError, ToolOutput};

/// The most of an error response read.
const ERROR_READ: usize = 4096;
/// The most of an error response quoted.
const ERROR_QUOTE: usize = 300;

/// How one tool reads responses.
#[derive(Clone, Copy, Debug)]
pub(super) struct Reading<'a> {
    /// The host, as the messages name it.
    pub(super) host: &'a str,
    /// The largest body read.
    pub(super) max_bytes: usize,
    /// The time limit (for messages).
    pub(super) timeout: Duration,
    /// Values never shown.
    pub(super) secrets: &'a [String],
    /// The JSON pointer of the part the model sees.
    pub(super) extract: Option<&'a str>,
}

impl Reading<'_> {
    /// The tool's output from a response, or the error the model is told.
    pub(super) async fn response(&self, response: Response) -> Result<ToolOutput, ToolError> {
        let host = self.host;
        let status = response.status();
        if !status.is_success() {
            let text = self.snippet(response).await;
            return Err(ToolError::new(format!(
                "{host} answered HTTP {}{}{}",
                status.as_u16(),
                status
                    .canonical_reason()
                    .map(|r| format!(" {r}"))
                    .unwrap_or_default(),
                if text.is_empty() {
                    ".".to_owned()
                } else {
                    format!(": {text}")
                }
            )));
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let bytes = self.read(response).await?;
        self.output(&bytes, &content_type)
    }

    /// Text safe to show: no header secret, no URL password or key.
    fn scrub(&self, text: &str) -> String {
        redact_urls(&redact_secrets(text, self.secrets))
    }

    /// Reads the body up to the cap, streaming: a larger body is an error, not a cut.
    async fn read(&self, mut response: Response) -> Result<Vec<u8>, ToolError> {
        let host = self.host;
        let too_large = || {
            let fact = format!(
                "The response from {host} was larger than {} bytes, so it was not read",
                self.max_bytes
            );
            ToolError::new(format!(
                "{fact}; ask for less (narrower values) or tell the user."
            ))
            .for_people(format!("{fact}; ask for less (narrower values)."))
        };
        if response
            .content_length()
            .is_some_and(|n| n > self.max_bytes as u64)
        {
            return Err(too_large());
        }
        let mut out = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.transport(&e))? {
            if out.len() + chunk.len() > self.max_bytes {
                return Err(too_large());
            }
            out.extend_from_slice(&chunk);
        }
        Ok(out)
    }

    fn output(&self, bytes: &[u8], content_type: &str) -> Result<ToolOutput, ToolError> {
        let parsed: Option<Value> = serde_json::from_slice(bytes).ok();
        let Some(pointer) = self.extract else {
            return Ok(match parsed {
                Some(value) => ToolOutput::json(value),
                None => ToolOutput::text(String::from_utf8_lossy(bytes)),
            });
        };
        let Some(value) = parsed else {
            let shown = if content_type.is_empty() {
                "no content type"
            } else {
                content_type
            };
            let fact = format!(
                "The response is not JSON ({shown}), so the part at `{pointer}` cannot be taken from it"
            );
            return Err(
                ToolError::new(format!("{fact}; tell the user.")).for_people(format!(
                    "{fact}; the service may have answered differently than expected."
                )),
            );
        };
        match value.pointer(pointer) {
            Some(Value::String(s)) => Ok(ToolOutput::text(s.clone()).with_data(ToolData::Json {
                value: Value::String(s.clone()),
            })),
            Some(part) => Ok(ToolOutput::json(part.clone())),
            None => {
                let fact = format!(
                    "The response has nothing at `{pointer}`; the service may have answered differently than expected."
                );
                Err(ToolError::new(format!("{fact} Tell the user.")).for_people(fact))
            }
        }
    }

    /// A short, one-line, scrubbed quote of an error response.
    async fn snippet(&self, mut response: Response) -> String {
        let mut raw = Vec::new();
        while raw.len() < ERROR_READ {
            match response.chunk().await {
                Ok(Some(chunk)) => raw.extend_from_slice(&chunk),
                _ => break,
            }
        }
        raw.truncate(ERROR_READ);
        let text = String::from_utf8_lossy(&raw);
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let scrubbed = self.scrub(&flat);
        if scrubbed.chars().count() > ERROR_QUOTE {
            format!(
                "{}…",
                scrubbed.chars().take(ERROR_QUOTE).collect::<String>()
            )
        } else {
            scrubbed
        }
    }

    pub(super) fn transport(&self, error: &reqwest::Error) -> ToolError {
        let host = self.host;
        let diagnostic = self.scrub(&error.to_string());
        let (message, person) = if error.is_timeout() {
            let fact = format!(
                "{host} did not answer within {} ms (time limit), so the request was abandoned; try again later",
                self.timeout.as_millis()
            );
            (format!("{fact} or tell the user."), format!("{fact}."))
        } else if error.is_connect() {
            (
                format!("{host} could not be reached; tell the user the service is unavailable."),
                format!(
                    "{host} could not be reached: the service is unavailable; try again later."
                ),
            )
        } else {
            (
                format!("The request to {host} failed; tell the user the service is unavailable."),
                format!(
                    "The request to {host} failed: the service is unavailable; try again later."
                ),
            )
        };
        ToolError::new(message)
            .for_people(person)
            .with_diagnostic(diagnostic)
    }
}
