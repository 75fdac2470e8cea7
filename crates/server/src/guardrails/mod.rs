//! What every request must pass before any route sees it — the web UI's files, `/api`, `/v1`, `/mcp`, `/health`
//! alike — against a page in someone's browser using the server on that person's behalf:
//!
//! 1. **Host** (421 Misdirected Request): the `Host` header (or the request target's authority) must be a name of
//!    this server: `server.hosts`, `localhost`, `127.0.0.1`, `[::1]` or the address it listens on. A page on
//!    another site whose name was made to resolve to this machine (DNS rebinding) sends its own name and is
//!    refused. A server listening on all interfaces with credentials configured and no `server.hosts` accepts any
//!    name: every request then needs a token anyway.
//! 2. **Origin** (403): a request that names its `Origin` must come from the server's own origin (the scheme, host
//!    and port it was reached at) or one listed in `server.cors`. `Origin: null` (a page that hides its origin: a
//!    sandbox, a `no-referrer` policy) passes only when the browser says `Sec-Fetch-Site: same-origin`; a state-changing request without an `Origin` that the browser marks `same-site` or
//!    `cross-site` is refused. Requests without either header (command-line clients, SDKs) pass.
//! 3. **JSON bodies** (415): POST, PUT and PATCH must send `Content-Type: application/json`, and so must a DELETE
//!    that carries a body or a content type. A cross-site page can send `text/plain`, form and multipart bodies
//!    without asking the browser's permission (no CORS preflight), never JSON. No route takes another type: the
//!    API and `/v1` read JSON, and MCP's streamable HTTP transport posts JSON-RPC as `application/json`.
//!
//! Failed sign-ins are limited per client address and per claimed identity in [`failures`]; which address a
//! request comes from (its peer, or the client a trusted proxy forwarded) is decided in [`proxies`].

pub(crate) mod failures;
mod names;
pub(crate) mod proxies;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE, HOST, ORIGIN, TRANSFER_ENCODING};
use axum::http::{HeaderMap, Method, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use steward_app::Config;

use crate::ServerError;
use crate::state::ApiError;
pub(crate) use names::HostName;
use names::Origin;

/// The `server.hosts` entries of `config`, or which one is malformed and what a good one looks like.
pub(crate) fn configured_hosts(config: &Config) -> Result<Vec<HostName>, ServerError> {
    let Some(server) = &config.server else {
        return Ok(Vec::new());
    };
    server
        .hosts
        .iter()
        .map(|entry| {
            HostName::parse(entry).ok_or_else(|| {
                ServerError::Config(format!(
                    "{}: `{entry}` is not a host name or address: give the name clients use to reach the \
                     server, optionally with a port, without a scheme or a path (`steward.example.com`, \
                     `10.0.0.5:8080`, `[::1]:8080`)",
                    config.locate(&["server", "hosts"])
                ))
            })
        })
        .collect()
}

/// The checks of one server.
#[derive(Debug)]
pub(crate) struct Guardrails {
    /// The names the server answers to; `None`: any.
    hosts: Option<Vec<HostName>>,
    /// `server.cors`: other origins allowed.
    origins: Vec<Origin>,
}

impl Guardrails {
    /// The checks for a server listening on `local` (when known) with `configured` as `server.hosts`, `cors` as
    /// `server.cors`, and credentials `required` or not.
    pub(crate) fn new(
        configured: &[HostName],
        cors: &[String],
        local: Option<SocketAddr>,
        required: bool,
    ) -> Self {
        let all_interfaces = local.is_some_and(|a| a.ip().is_unspecified());
        let hosts = if configured.is_empty() && all_interfaces && required {
            None
        } else {
            let mut hosts: Vec<HostName> = configured.to_vec();
            hosts.extend(
                ["localhost", "127.0.0.1", "::1"]
                    .into_iter()
                    .map(HostName::named),
            );
            if let Some(local) = local.filter(|a| !a.ip().is_unspecified()) {
                hosts.push(HostName::address(local.ip().to_canonical()));
            }
            Some(hosts)
        };
        Self {
            hosts,
            origins: cors.iter().filter_map(|o| Origin::parse(o)).collect(),
        }
    }

    /// Checks a request's method and headers: `Err` is the answer that refuses it.
    pub(crate) fn admit(
        &self,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
    ) -> Result<(), ApiError> {
        let host = self.check_host(uri, headers)?;
        let changes = !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
        self.check_origin(host.as_ref(), headers, changes)?;
        if changes {
            check_json(method, headers)?;
        }
        Ok(())
    }

    /// The request's Host, when it is one of the server's names.
    fn check_host(&self, uri: &Uri, headers: &HeaderMap) -> Result<Option<HostName>, ApiError> {
        // Several `Host` headers: each is a name the request claims; all are judged below.
        let headers_named: Vec<String> = headers
            .get_all(HOST)
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect();
        // HTTP/2's `:authority`, or an absolute-form request target: also a name the client used.
        let target = uri.authority().map(|a| a.as_str().to_owned());
        let named: Vec<&str> = headers_named
            .iter()
            .map(String::as_str)
            .chain(target.as_deref())
            .collect();
        let Some(hosts) = &self.hosts else {
            return Ok(named.first().and_then(|n| HostName::parse(n)));
        };
        if named.is_empty() {
            return Err(ApiError::Misdirected(
                "the request names no host: send a `Host` header with a name of this server \
                 (`localhost`, its address, or one listed under `server.hosts` in steward.yaml)"
                    .to_owned(),
            ));
        }
        let mut first = None;
        for name in named {
            match HostName::parse(name).filter(|n| hosts.iter().any(|h| h.admits(n))) {
                Some(parsed) => {
                    first.get_or_insert(parsed);
                }
                None => {
                    return Err(ApiError::Misdirected(format!(
                        "this server does not answer to the host `{}`: if that is one of its names, list \
                             it under `server.hosts` in steward.yaml (other names are refused against DNS \
                             rebinding)",
                        shown(name)
                    )));
                }
            }
        }
        Ok(first)
    }

    /// Refuses a request from a page of another origin that `server.cors` does not list.
    fn check_origin(
        &self,
        host: Option<&HostName>,
        headers: &HeaderMap,
        changes: bool,
    ) -> Result<(), ApiError> {
        let fetch_site = headers
            .get("sec-fetch-site")
            .and_then(|v| v.to_str().ok())
            .map(str::to_ascii_lowercase);
        let Some(origin) = headers.get(ORIGIN) else {
            // No Origin: a command-line client or SDK, or an old browser's request, which says where it
            // comes from in Sec-Fetch-Site if anything.
            let cross = matches!(fetch_site.as_deref(), Some("cross-site" | "same-site"));
            return if changes && cross {
                Err(ApiError::forbidden(
                    "the request comes from a page of another site; list that site's origin under \
                     `server.cors` in steward.yaml to let it call this server",
                ))
            } else {
                Ok(())
            };
        };
        let text = String::from_utf8_lossy(origin.as_bytes());
        if text.trim() == "null" {
            // A page that hides its origin (a `no-referrer` policy, a sandbox): its own pages only.
            return if fetch_site.as_deref() == Some("same-origin") {
                Ok(())
            } else {
                Err(ApiError::forbidden(
                    "the request comes from a page that hides its origin (`Origin: null`) and not from \
                     this server's own pages; it is refused",
                ))
            };
        }
        let parsed = Origin::parse(&text);
        let own = parsed
            .as_ref()
            .zip(host)
            .is_some_and(|(o, h)| o.is_reached_as(h));
        let listed = parsed.as_ref().is_some_and(|o| self.origins.contains(o));
        if own || listed {
            Ok(())
        } else {
            Err(ApiError::forbidden(format!(
                "the request comes from a page at `{}`, which is not this server's own origin; list it under \
                 `server.cors` in steward.yaml to let that site call this server",
                shown(&text)
            )))
        }
    }
}

/// Refuses a state-changing request whose body is not declared as JSON.
fn check_json(method: &Method, headers: &HeaderMap) -> Result<(), ApiError> {
    let content_type = headers
        .get(CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let has_body = headers.contains_key(TRANSFER_ENCODING)
        || headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim() != "0");
    // A DELETE without a body declares no type; browsers never send one across sites without a preflight.
    if *method == Method::DELETE && content_type.is_none() && !has_body {
        return Ok(());
    }
    let essence = content_type
        .as_deref()
        .and_then(|t| t.split(';').next())
        .map(str::trim);
    if essence.is_some_and(|e| e.eq_ignore_ascii_case("application/json")) {
        return Ok(());
    }
    Err(ApiError::UnsupportedMediaType(format!(
        "a {method} must send its body as JSON, with `Content-Type: application/json` ({}); other types \
             are refused, since any web page can send them to this server",
        match essence {
            Some(e) => format!("this one is `{}`", shown(e)),
            None => "this one names no type".to_owned(),
        }
    )))
}

/// A header value fit for a message: at most 100 characters, control characters escaped.
fn shown(text: &str) -> String {
    let mut shown: String = text
        .chars()
        .take(100)
        .flat_map(char::escape_debug)
        .collect();
    if text.chars().count() > 100 {
        shown.push('…');
    }
    shown
}

/// The address a request comes from, as the failed sign-in limit and the logs use it: the TCP peer, or the
/// client a trusted proxy forwarded (see [`proxies`]); `None` when the server was not told the peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ClientAddress(pub(crate) Option<IpAddr>);

impl ClientAddress {
    /// The client of `request`, behind `proxies`.
    pub(crate) fn of(request: &Request, proxies: &proxies::TrustedProxies) -> Self {
        let peer = request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip());
        Self(proxies.client(peer, request.headers()))
    }
}

impl std::fmt::Display for ClientAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(ip) => ip.fmt(f),
            None => f.write_str("unknown"),
        }
    }
}

/// The middleware that finds each request's [`ClientAddress`] once and puts it in the request's extensions,
/// for the request's log span and the failed sign-in limit.
pub(crate) async fn client_address(
    State(proxies): State<Arc<proxies::TrustedProxies>>,
    mut request: Request,
    next: Next,
) -> Response {
    let client = ClientAddress::of(&request, &proxies);
    request.extensions_mut().insert(client);
    next.run(request).await
}

/// The middleware: refuses what [`Guardrails::admit`] refuses.
pub(crate) async fn check(
    State(guardrails): State<Arc<Guardrails>>,
    request: Request,
    next: Next,
) -> Response {
    match guardrails.admit(request.method(), request.uri(), request.headers()) {
        Ok(()) => next.run(request).await,
        Err(refusal) => refusal.into_response(),
    }
}

#[cfg(test)]
mod tests;
