//! `kind: http` tools: one HTTP endpoint. Parameter values go into the URL percent-encoded (a path segment
//! or a query value, never more), into `query` pairs, or into a JSON body; headers take secrets from the
//! environment (`${VAR}`) once, at load, and never show them. The response is read up to a byte cap, within
//! a time limit, and the model sees it whole or the part a JSON pointer (`extract`) names.

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::{CONTENT_TYPE, HeaderMap};
use reqwest::{Method, Url};
use serde::Deserialize;
use serde_json::{Map, Value};
use steward_core::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

use super::params::{NamedMap, Parameters};
use super::template::{self, Body, Template, encode_component, value_text};
use super::{ToolDefError, check_name, check_params};

mod response;
mod setup;

use response::Reading;
use setup::{client, headers, split_url};

/// The time limit of a call that does not set `timeout_ms`.
const DEFAULT_TIMEOUT_MS: u64 = 10_000;
/// The longest time limit a tool may set.
const MAX_TIMEOUT_MS: u64 = 600_000;
/// The response cap of a tool that does not set `max_response_bytes`.
const DEFAULT_MAX_BYTES: u64 = 1024 * 1024;
/// The largest response cap a tool may set.
const MAX_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// The HTTP method of a tool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
#[non_exhaustive]
pub enum HttpMethod {
    /// Reads (the default).
    #[default]
    #[serde(alias = "get")]
    Get,
    /// Creates or acts.
    #[serde(alias = "post")]
    Post,
    /// Replaces.
    #[serde(alias = "put")]
    Put,
    /// Changes part of something.
    #[serde(alias = "patch")]
    Patch,
    /// Removes.
    #[serde(alias = "delete")]
    Delete,
}

impl HttpMethod {
    fn method(self) -> Method {
        match self {
            Self::Get => Method::GET,
            Self::Post => Method::POST,
            Self::Put => Method::PUT,
            Self::Patch => Method::PATCH,
            Self::Delete => Method::DELETE,
        }
    }
}

/// A `kind: http` tool as declared in config.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpToolDef {
    /// What it does and when to use it, for the model.
    pub description: String,
    /// GET (default), POST, PUT, PATCH or DELETE.
    #[serde(default)]
    pub method: HttpMethod,
    /// `http(s)://host/path?query` with `{param}` placeholders in the path and query (not the host).
    pub url: String,
    /// Query pairs, name → template; a pair whose parameter was left out is not sent.
    #[serde(default)]
    pub query: NamedMap<String>,
    /// Headers, name → value where `${VAR}` is an environment variable read at load.
    #[serde(default)]
    pub headers: NamedMap<String>,
    /// The JSON body template; POST, PUT and PATCH send the parameters not used in the URL by default.
    #[serde(default)]
    pub body: Option<Value>,
    /// The parameters, in order.
    #[serde(default)]
    pub parameters: Parameters,
    /// The time limit of a call, in milliseconds (default 10000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// The largest response read, in bytes (default 1 MiB).
    #[serde(default)]
    pub max_response_bytes: Option<u64>,
    /// An RFC 6901 JSON pointer to the part of the response the model sees.
    #[serde(default)]
    pub extract: Option<String>,
    /// A human-readable title for UIs.
    #[serde(default)]
    pub title: Option<String>,
}

/// A built `kind: http` tool.
pub struct HttpTool {
    spec: ToolSpec,
    title: Option<String>,
    client: reqwest::Client,
    method: HttpMethod,
    /// `scheme://authority`, as declared.
    origin: String,
    /// Path and query after the origin.
    rest: Template,
    query: Vec<(String, Template)>,
    headers: HeaderMap,
    /// The header values from the environment, scrubbed from every error.
    secrets: Vec<String>,
    body: Option<Body>,
    params: Parameters,
    timeout: Duration,
    max_bytes: usize,
    extract: Option<String>,
}

impl fmt::Debug for HttpTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpTool")
            .field("name", &self.spec.name)
            .field("method", &self.method)
            .field("origin", &self.origin)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl HttpTool {
    /// Builds the tool, reading `${VAR}`s from the process environment.
    pub fn build(name: &str, def: HttpToolDef) -> Result<Self, ToolDefError> {
        Self::build_with_env(name, def, &|var| std::env::var(var).ok())
    }

    /// Builds the tool, reading `${VAR}`s through `env`.
    pub fn build_with_env(
        name: &str,
        def: HttpToolDef,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ToolDefError> {
        check_name(name)?;
        check_params(name, &def.parameters)?;
        let invalid = |problem: String| ToolDefError::invalid(name, problem);
        if def.description.trim().is_empty() {
            return Err(invalid(
                "the description is empty; say what the tool does, for the model".into(),
            ));
        }
        let (origin, rest) = split_url(&def.url).map_err(|p| invalid(format!("url: {p}")))?;
        let rest = template::parse(rest).map_err(|p| invalid(format!("url: {p}")))?;
        let mut used: Vec<String> = Vec::new();
        for p in rest.names() {
            let required = def
                .parameters
                .get(p)
                .is_some_and(|s| s.is_required() || s.default.is_some());
            if def.parameters.get(p).is_some() && !required {
                return Err(invalid(format!(
                    "url: `{{{p}}}` is an optional parameter without a default; a URL placeholder needs a value: make it required or give it a default"
                )));
            }
            used.push(p.to_owned());
        }
        let probe = rest.render(|_| Some("x".to_owned())).unwrap_or_default();
        Url::parse(&format!("{origin}{probe}"))
            .map_err(|e| invalid(format!("url: `{}` is not a valid URL: {e}", def.url)))?;
        let mut query = Vec::new();
        for (key, value) in def.query.iter() {
            let t = template::parse(value).map_err(|p| invalid(format!("query `{key}`: {p}")))?;
            used.extend(t.names().map(str::to_owned));
            query.push((key.to_owned(), t));
        }
        let sends_body = matches!(
            def.method,
            HttpMethod::Post | HttpMethod::Put | HttpMethod::Patch
        );
        let body = match (&def.body, def.method) {
            (Some(_), HttpMethod::Get) => {
                return Err(invalid(
                    "a GET request carries no body; remove `body` or use POST".into(),
                ));
            }
            (Some(b), _) => {
                let b = Body::parse(b).map_err(|p| invalid(format!("body: {p}")))?;
                b.params(&mut used);
                Some(b)
            }
            (None, _) if sends_body => {
                let members = def
                    .parameters
                    .names()
                    .filter(|p| !used.iter().any(|u| u == p))
                    .map(|p| (p.to_owned(), Body::Param(p.to_owned())))
                    .collect::<Vec<_>>();
                members.iter().for_each(|(p, _)| used.push(p.clone()));
                Some(Body::Object(members))
            }
            (None, _) => None,
        };
        if let Some(unknown) = used.iter().find(|u| def.parameters.get(u).is_none()) {
            return Err(invalid(format!(
                "`{{{unknown}}}` is used but not declared under `parameters`; declare it or fix the name"
            )));
        }
        if let Some(unused) = def
            .parameters
            .names()
            .find(|p| !used.iter().any(|u| u == p))
        {
            return Err(ToolDefError::Parameter {
                tool: name.to_owned(),
                param: unused.to_owned(),
                problem: "it is declared but used neither in the url, the query nor the body; use it or remove it".into(),
            });
        }
        let (headers, secrets) = headers(name, &def.headers, env)?;
        if let Some(pointer) = &def.extract
            && !(pointer.is_empty() || pointer.starts_with('/'))
        {
            return Err(invalid(format!(
                "extract: `{pointer}` is not a JSON pointer; write it like /data/items (RFC 6901)"
            )));
        }
        let timeout_ms = def.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
        if !(1..=MAX_TIMEOUT_MS).contains(&timeout_ms) {
            return Err(invalid(format!(
                "timeout_ms must be between 1 and {MAX_TIMEOUT_MS}, not {timeout_ms}"
            )));
        }
        let max_bytes = def.max_response_bytes.unwrap_or(DEFAULT_MAX_BYTES);
        let max_bytes = usize::try_from(max_bytes)
            .ok()
            .filter(|n| (1..=MAX_MAX_BYTES as usize).contains(n))
            .ok_or_else(|| {
                invalid(format!(
                    "max_response_bytes must be between 1 and {MAX_MAX_BYTES}, not {max_bytes}"
                ))
            })?;
        let timeout = Duration::from_millis(timeout_ms);
        let client = client(timeout)
            .map_err(|e| invalid(format!("the HTTP client could not be set up: {e}")))?;
        let mut spec = ToolSpec::new(name, def.description.clone(), def.parameters.schema());
        let a = &mut spec.annotations;
        a.open_world = true;
        a.read_only = def.method == HttpMethod::Get;
        a.idempotent = matches!(
            def.method,
            HttpMethod::Get | HttpMethod::Put | HttpMethod::Delete
        );
        a.destructive = matches!(
            def.method,
            HttpMethod::Put | HttpMethod::Patch | HttpMethod::Delete
        );
        Ok(Self {
            spec,
            title: def.title,
            client,
            method: def.method,
            origin: origin.to_owned(),
            rest,
            query,
            headers,
            secrets,
            body,
            params: def.parameters,
            timeout,
            max_bytes,
            extract: def.extract,
        })
    }

    /// The title for UIs, when declared.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// The URL of a call: values percent-encoded into the path and query, query pairs appended.
    fn url(&self, args: &Map<String, Value>) -> Result<Url, ToolError> {
        let missing = |p: &str| ToolError::new(format!("`{p}` is missing; give a value for it."));
        if let Some(p) = self.rest.names().find(|p| !args.contains_key(*p)) {
            return Err(missing(p));
        }
        let rest = self
            .rest
            .render(|p| args.get(p).map(|v| encode_component(&value_text(v))))
            .unwrap_or_default();
        let path = rest.split(['?']).next().unwrap_or("");
        if path.split('/').any(|s| s == "." || s == "..") {
            return Err(ToolError::new(
                "A value would make a URL path segment `.` or `..`; use the real name or id.",
            ));
        }
        let mut url = Url::parse(&format!("{}{rest}", self.origin)).map_err(|e| {
            ToolError::internal(format!(
                "tool {}: the URL cannot be built: {e}",
                self.spec.name
            ))
        })?;
        let pairs: Vec<(&str, String)> = self
            .query
            .iter()
            .filter_map(|(k, t)| Some((k.as_str(), t.render(|p| args.get(p).map(value_text))?)))
            .collect();
        if !pairs.is_empty() {
            let mut q = url.query_pairs_mut();
            for (k, v) in pairs {
                q.append_pair(k, &v);
            }
        }
        Ok(url)
    }

    async fn send(&self, args: &Map<String, Value>) -> Result<ToolOutput, ToolError> {
        let url = self.url(args)?;
        let host = url.host_str().unwrap_or("the service").to_owned();
        let mut request = self
            .client
            .request(self.method.method(), url)
            .headers(self.headers.clone())
            .timeout(self.timeout);
        if let Some(body) = &self.body {
            let bytes = serde_json::to_vec(&body.render(args))
                .map_err(|e| ToolError::internal(format!("the body cannot be encoded: {e}")))?;
            request = request.header(CONTENT_TYPE, "application/json").body(bytes);
        }
        let reading = Reading {
            host: &host,
            max_bytes: self.max_bytes,
            timeout: self.timeout,
            secrets: &self.secrets,
            extract: self.extract.as_deref(),
        };
        let response = request.send().await.map_err(|e| reading.transport(&e))?;
        reading.response(response).await
    }
}

#[async_trait]
impl Tool for HttpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, _ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args = self.params.apply_defaults(args);
        // The client's own limit covers the whole exchange; this is the backstop.
        match tokio::time::timeout(self.timeout + Duration::from_millis(500), self.send(&args))
            .await
        {
            Ok(result) => result,
            Err(_) => {
                let fact = format!(
                    "The service did not answer within {} ms (time limit), so the request was abandoned; try again later",
                    self.timeout.as_millis()
                );
                Err(ToolError::new(format!("{fact} or tell the user."))
                    .for_people(format!("{fact}.")))
            }
        }
    }
}
