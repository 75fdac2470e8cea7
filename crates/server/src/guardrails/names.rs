//! Host names and origins as the Host check and the Origin check compare them: lower-case host, IPv6
//! addresses without brackets, a port only where one was given (an origin's missing port is its scheme's).

use std::net::IpAddr;

use axum::http::Uri;
use axum::http::uri::Authority;

/// A host name or address with an optional port: a `server.hosts` entry or a request's `Host`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HostName {
    /// Lower case; an IPv6 address without its brackets.
    pub(crate) host: String,
    /// The port, when one was given.
    pub(crate) port: Option<u16>,
}

impl HostName {
    /// Parses `name` or `name:port` (`[v6]` or `[v6]:port` for an IPv6 address); `None` for anything else
    /// (a scheme, a path, user information, an empty name).
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        if text.is_empty() || text.contains(['@', '/', '?', '#']) {
            return None;
        }
        let authority: Authority = text.parse().ok()?;
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        if host.is_empty() {
            return None;
        }
        // `Authority` accepts an empty or non-numeric port; a Host header with one is malformed.
        let after_host = match text.strip_prefix('[') {
            Some(rest) => rest.split_once(']')?.1,
            None => text.rfind(':').and_then(|i| text.get(i..)).unwrap_or(""),
        };
        if !after_host.is_empty() {
            after_host.strip_prefix(':')?.parse::<u16>().ok()?;
        }
        Some(Self {
            host,
            port: authority.port_u16(),
        })
    }

    /// An address, without a port.
    pub(crate) fn address(ip: IpAddr) -> Self {
        Self {
            host: ip.to_string(),
            port: None,
        }
    }

    /// A name, without a port.
    pub(crate) fn named(name: &str) -> Self {
        Self {
            host: name.to_ascii_lowercase(),
            port: None,
        }
    }

    /// Whether `request` (a request's Host) is this entry: the same host, and the same port unless this
    /// entry names none.
    pub(crate) fn admits(&self, request: &HostName) -> bool {
        self.host == request.host && self.port.is_none_or(|port| request.port == Some(port))
    }
}

impl std::fmt::Display for HostName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]", self.host)?;
        } else {
            f.write_str(&self.host)?;
        }
        match self.port {
            Some(port) => write!(f, ":{port}"),
            None => Ok(()),
        }
    }
}

/// A web origin: `http` or `https`, a host and the port (the scheme's when the origin names none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl Origin {
    /// Parses `scheme://host[:port]` (a trailing `/` is tolerated in config entries); `None` for `null`, other
    /// schemes, paths and anything malformed.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        let uri: Uri = text.strip_suffix('/').unwrap_or(text).parse().ok()?;
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return None,
        };
        if (uri.path() != "/" && !uri.path().is_empty()) || uri.query().is_some() {
            return None;
        }
        let name = HostName::parse(uri.authority()?.as_str())?;
        Some(Self {
            scheme,
            host: name.host,
            port: name.port.unwrap_or(default_port),
        })
    }

    /// Whether this origin is the server's own as reached with `host` (the request's Host): the same host
    /// and port, a Host without a port meaning the origin's scheme's default port.
    pub(crate) fn is_reached_as(&self, host: &HostName) -> bool {
        let default_port = if self.scheme == "https" { 443 } else { 80 };
        self.host == host.host && self.port == host.port.unwrap_or(default_port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(text: &str) -> HostName {
        HostName::parse(text).unwrap_or_else(|| panic!("`{text}` did not parse"))
    }

    #[test]
    fn host_names_parse_with_or_without_a_port() {
        assert_eq!(
            name("Steward.Example.com:8080"),
            HostName {
                host: "steward.example.com".into(),
                port: Some(8080)
            }
        );
        assert_eq!(name("[::1]:80").host, "::1");
        assert_eq!(name("[::1]").port, None);
        assert_eq!(name("127.0.0.1").to_string(), "127.0.0.1");
        assert_eq!(name("[::1]:8080").to_string(), "[::1]:8080");
        for bad in ["", "http://x", "x/y", "user@x", "x:port", "x:", "x:99999"] {
            assert_eq!(HostName::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn an_entry_without_a_port_admits_any_port_one_with_a_port_only_that_one() {
        assert!(name("localhost").admits(&name("localhost:8080")));
        assert!(name("localhost").admits(&name("LOCALHOST")));
        assert!(name("localhost:8080").admits(&name("localhost:8080")));
        assert!(!name("localhost:8080").admits(&name("localhost:9090")));
        assert!(!name("localhost:8080").admits(&name("localhost")));
        assert!(!name("localhost").admits(&name("localhost.evil.example")));
        assert!(!name("localhost").admits(&name("evil.example:8080")));
    }

    #[test]
    fn origins_compare_with_the_schemes_default_port() {
        let origin = |t: &str| Origin::parse(t).unwrap_or_else(|| panic!("`{t}`"));
        assert_eq!(
            origin("https://App.example.test"),
            origin("https://app.example.test:443/")
        );
        assert!(origin("http://127.0.0.1:8080").is_reached_as(&name("127.0.0.1:8080")));
        assert!(origin("https://steward.example.com").is_reached_as(&name("steward.example.com")));
        assert!(!origin("http://127.0.0.1:3000").is_reached_as(&name("127.0.0.1:8080")));
        assert!(!origin("http://evil.example:8080").is_reached_as(&name("127.0.0.1:8080")));
        assert!(
            !origin("https://steward.example.com:8443").is_reached_as(&name("steward.example.com"))
        );
        for bad in ["null", "file://x", "https://x/path", "x", ""] {
            assert_eq!(Origin::parse(bad), None, "{bad}");
        }
    }
}
