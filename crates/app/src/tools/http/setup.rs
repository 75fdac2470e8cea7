//! Setting up an HTTP tool: the URL split where placeholders may start, the headers with their environment
//! variables, and the client.

use std::time::Duration;

use reqwest::header::{ACCEPT, HeaderMap, HeaderName, HeaderValue};

use super::super::ToolDefError;
use super::super::params::NamedMap;
use super::super::template::{EnvProblem, expand_env};

/// `(origin, rest)`: the scheme and host, which take no placeholder, and the path and query after them.
pub(super) fn split_url(url: &str) -> Result<(&str, &str), String> {
    let lower = url.to_ascii_lowercase();
    let after = if lower.starts_with("https://") {
        8
    } else if lower.starts_with("http://") {
        7
    } else {
        return Err(format!("`{url}` must start with http:// or https://"));
    };
    if url.contains('#') {
        return Err("a #fragment is never sent to the server; remove it".to_owned());
    }
    let end = url[after..]
        .find(['/', '?'])
        .map_or(url.len(), |i| after + i);
    let (origin, rest) = url.split_at(end);
    if origin.contains(['{', '}']) {
        return Err(format!(
            "`{origin}`: placeholders may be in the path and query only, not in the host"
        ));
    }
    Ok((origin, rest))
}

/// The headers with their environment variables expanded, and those expanded values (secrets).
pub(super) fn headers(
    tool: &str,
    declared: &NamedMap<String>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(HeaderMap, Vec<String>), ToolDefError> {
    let mut map = HeaderMap::new();
    let mut secrets = Vec::new();
    map.insert(ACCEPT, HeaderValue::from_static("application/json"));
    for (name, template) in declared.iter() {
        let invalid =
            |problem: String| ToolDefError::invalid(tool, format!("header `{name}`: {problem}"));
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| invalid("not a valid header name".into()))?;
        let before = secrets.len();
        let value = match expand_env(template, env, &mut secrets) {
            Ok(v) => v,
            Err(EnvProblem::Missing(variable)) => {
                return Err(ToolDefError::MissingEnv {
                    tool: tool.to_owned(),
                    header: name.to_owned(),
                    variable,
                });
            }
            Err(EnvProblem::Syntax) => {
                return Err(invalid(
                    "`${` must be followed by a variable name and `}`, like ${API_TOKEN}".into(),
                ));
            }
        };
        let from_env = template.contains("${");
        let mut header_value = HeaderValue::from_str(&value)
            .map_err(|_| invalid("the value (after ${VAR} expansion) is not a valid header value: no line breaks or control characters".into()))?;
        if from_env {
            header_value.set_sensitive(true);
            if secrets.len() > before {
                secrets.push(value);
            }
        }
        map.insert(header, header_value);
    }
    Ok((map, secrets))
}

/// The client: rustls with ring (installed like steward-llm does), redirects followed only within the same
/// origin so that headers never travel to another host.
pub(super) fn client(timeout: Duration) -> Result<reqwest::Client, reqwest::Error> {
    // reqwest is built without a bundled crypto provider; ring is ours. Installing twice is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let redirects = reqwest::redirect::Policy::custom(|attempt| {
        let same_origin = attempt.previous().first().is_some_and(|first| {
            first.scheme() == attempt.url().scheme()
                && first.host_str() == attempt.url().host_str()
                && first.port_or_known_default() == attempt.url().port_or_known_default()
        });
        if attempt.previous().len() > 5 || !same_origin {
            attempt.stop()
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder()
        .connect_timeout(timeout)
        .redirect(redirects)
        .user_agent(concat!("steward/", env!("CARGO_PKG_VERSION")))
        .build()
}
