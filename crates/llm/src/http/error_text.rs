//! The errors a call ends in: the status with a hint, the provider's own error text from its JSON body (in
//! every provider's shape), connection errors with their causes, and every text redacted before it is cut
//! and quoted, so no piece of a secret survives.

use reqwest::{Response, StatusCode};
use serde_json::Value;
use steward_core::ModelError;
use steward_core::redact::{redact_secrets, redact_urls};

use super::client::Http;
use super::secret::Secret;

/// The most of an error body quoted in an error.
const MAX_ERROR_TEXT: usize = 600;

impl Http {
    /// An error for a reply that could not be understood.
    pub(crate) fn invalid(&self, message: impl Into<String>) -> ModelError {
        ModelError::InvalidResponse {
            provider: self.provider.clone(),
            message: self.redact(&message.into()),
        }
    }

    pub(super) fn status_error(&self, status: StatusCode, message: String) -> ModelError {
        let hint = match status.as_u16() {
            401 => " Check the API key.",
            403 => " Check that the key may use this model.",
            404 => " Check the model or deployment name and the base URL.",
            _ => "",
        };
        ModelError::Status {
            provider: self.provider.clone(),
            status: status.as_u16(),
            message: self.redact(&format!("{message}{hint}")),
        }
    }

    /// The provider's own error text from an error response.
    pub(super) async fn error_text(&self, mut response: Response) -> String {
        let mut raw = Vec::new();
        while let Ok(Some(chunk)) = response.chunk().await {
            raw.extend_from_slice(&chunk);
            if raw.len() > 64 * 1024 {
                break;
            }
        }
        let text = String::from_utf8_lossy(&raw);
        let message = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| provider_message(&v))
            .unwrap_or_else(|| text.trim().to_owned());
        let message = if message.is_empty() {
            "no error text".to_owned()
        } else {
            message
        };
        self.quote(&message, MAX_ERROR_TEXT)
    }

    pub(super) fn describe(&self, error: &reqwest::Error) -> String {
        let mut text = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            let cause_text = cause.to_string();
            if !text.contains(&cause_text) {
                text.push_str(": ");
                text.push_str(&cause_text);
            }
            source = cause.source();
        }
        if error.is_connect() {
            text.push_str(". Is the server running and the base URL right?");
        }
        self.redact(&text)
    }

    /// Removes every secret from a text: the keys and URL credentials this client knows, and passwords and
    /// keys in any URL quoted in it.
    pub(crate) fn redact(&self, text: &str) -> String {
        let secrets: Vec<&str> = self.secrets.iter().map(Secret::expose).collect();
        redact_urls(&redact_secrets(text, &secrets))
    }

    /// A text to quote in an error, at most `max` characters: redacted first, then cut, so that no piece of a
    /// secret survives the cut.
    pub(crate) fn quote(&self, text: &str, max: usize) -> String {
        cut(&self.redact(text), max)
    }
}

/// The error message inside a provider's JSON error body, for the shapes OpenAI, Azure, Anthropic, Ollama and
/// the local servers use.
pub(crate) fn provider_message(body: &Value) -> Option<String> {
    let error = body.get("error").unwrap_or(body);
    if let Some(s) = error.as_str() {
        return Some(s.to_owned());
    }
    let message = ["message", "detail", "msg"]
        .iter()
        .find_map(|k| error.get(*k).and_then(Value::as_str))?;
    let kind = ["type", "code"]
        .iter()
        .find_map(|k| error.get(*k).and_then(Value::as_str));
    Some(match kind {
        Some(kind) if !message.contains(kind) => format!("{message} ({kind})"),
        _ => message.to_owned(),
    })
}

/// Cuts a text to at most `max` characters.
pub(crate) fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let head: String = text.chars().take(max).collect();
        format!("{head}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::HttpOptions;
    use serde_json::json;

    #[test]
    fn provider_messages_of_every_shape() {
        let openai = json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}});
        assert_eq!(
            provider_message(&openai).unwrap(),
            "Rate limit reached (requests)"
        );
        let anthropic = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
        assert_eq!(
            provider_message(&anthropic).unwrap(),
            "Overloaded (overloaded_error)"
        );
        let ollama = json!({"error": "model \"qwen\" not found, try pulling it first"});
        assert_eq!(
            provider_message(&ollama).unwrap(),
            "model \"qwen\" not found, try pulling it first"
        );
        let vllm = json!({"object": "error", "message": "bad request", "type": "BadRequestError", "code": 400});
        assert_eq!(
            provider_message(&vllm).unwrap(),
            "bad request (BadRequestError)"
        );
        assert!(provider_message(&json!({"foo": 1})).is_none());
    }

    #[test]
    fn quoting_redacts_before_cutting() {
        let key = "sk-live-0123456789";
        let http = Http::new("p", HttpOptions::default(), vec![Secret::new(key)]).unwrap();
        for offset in 0..30 {
            let text = format!("{}{key} tail", "x".repeat(offset));
            let quoted = http.quote(&text, 20);
            assert!(!quoted.contains("sk-l"), "{offset}: {quoted}");
        }
        assert_eq!(
            http.redact("see https://u:pw@h/v1?token=abc"),
            "see https://u:***@h/v1?token=***"
        );
    }

    #[test]
    fn secrets_are_redacted_from_error_text() {
        let http = Http::new(
            "p",
            HttpOptions::default(),
            vec![Secret::new("sk-live-123")],
        )
        .unwrap();
        assert_eq!(
            http.redact("bad key sk-live-123 given"),
            "bad key [redacted] given"
        );
    }
}
