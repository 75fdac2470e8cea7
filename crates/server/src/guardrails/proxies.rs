//! Which address a request comes from. Its TCP peer, unless that peer is one of `server.trusted_proxies`: then
//! the client the proxy forwarded, from `X-Forwarded-For` or, without that header, RFC 7239's `Forwarded: for=`.
//!
//! Each proxy appends the address it received the request from, so the list is read from the right: proxies of
//! `server.trusted_proxies` are skipped and the first address that is not one is the client. Everything to its
//! left was written by the client (or by proxies nobody vouches for) and is ignored, so a client cannot choose
//! the address it is counted as. When that entry is not an address (garbage, `unknown`, an obfuscated
//! identifier such as `_hidden`), the peer is the client. When every entry is a trusted proxy, the left-most one
//! is. Several headers of one name are one list, in order. Entries may carry a port (`192.0.2.1:4711`,
//! `[2001:db8::1]:4711`) and IPv6 addresses brackets and quotes.
//!
//! Only a listed proxy's headers are read: from any other peer they are ignored, whatever they say. A proxy
//! must therefore append to (or set) the header it uses; one that uses `Forwarded` should drop a client's
//! `X-Forwarded-For`, which would otherwise be read first.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};

use axum::http::HeaderMap;
use steward_app::Config;

use crate::ServerError;

/// An address range: an address and how many leading bits of it count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Net {
    addr: IpAddr,
    prefix: u8,
}

impl Net {
    /// `10.0.0.7`, `10.0.0.0/8`, `fd00::/8`, `::1`; `Err` says what is wrong.
    fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let (addr_text, prefix_text) = match text.split_once('/') {
            Some((addr, prefix)) => (addr.trim(), Some(prefix.trim())),
            None => (text, None),
        };
        let addr: IpAddr = addr_text.parse().map_err(|_| {
            format!(
                "`{addr_text}` is not an IPv4 or IPv6 address (no brackets, no port, no host name)"
            )
        })?;
        let bits: u8 = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix_text {
            None => bits,
            Some(p) => match p.parse::<u8>() {
                Ok(prefix) if prefix <= bits => prefix,
                _ => {
                    return Err(format!(
                        "`/{p}` is not a prefix length of an {} range: give 0 to {bits}",
                        if addr.is_ipv4() { "IPv4" } else { "IPv6" }
                    ));
                }
            },
        };
        let net = Self { addr, prefix };
        let network = net.network();
        if network != addr {
            return Err(format!(
                "`{text}` has bits set past its /{prefix} prefix: the range is written `{network}/{prefix}`"
            ));
        }
        // An IPv4 range written as IPv4-mapped IPv6 (`::ffff:10.0.0.0/104`) is that IPv4 range: addresses are
        // compared in their canonical form.
        Ok(match addr {
            IpAddr::V6(v6) if prefix >= 96 => match v6.to_ipv4_mapped() {
                Some(v4) => Self {
                    addr: IpAddr::V4(v4),
                    prefix: prefix - 96,
                },
                None => net,
            },
            _ => net,
        })
    }

    /// The address with the bits past the prefix cleared.
    fn network(&self) -> IpAddr {
        match self.addr {
            IpAddr::V4(v4) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                IpAddr::V4((u32::from(v4) & mask).into())
            }
            IpAddr::V6(v6) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                IpAddr::V6((u128::from(v6) & mask).into())
            }
        }
    }

    /// Whether `ip` (canonical: an IPv4-mapped IPv6 address as IPv4) is in the range.
    fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, ip) {
            (IpAddr::V4(_), IpAddr::V4(_)) | (IpAddr::V6(_), IpAddr::V6(_)) => {
                Self {
                    addr: ip,
                    prefix: self.prefix,
                }
                .network()
                    == self.addr
            }
            _ => false,
        }
    }
}

/// `server.trusted_proxies`: the peers whose forwarding headers are believed.
#[derive(Clone, Debug, Default)]
pub(crate) struct TrustedProxies {
    nets: Vec<Net>,
}

/// The `server.trusted_proxies` of `config`, or which entry is malformed and what a good one looks like.
pub(crate) fn configured_proxies(config: &Config) -> Result<TrustedProxies, ServerError> {
    let Some(server) = &config.server else {
        return Ok(TrustedProxies::default());
    };
    let nets = server
        .trusted_proxies
        .iter()
        .map(|entry| {
            Net::parse(entry).map_err(|why| {
                ServerError::Config(format!(
                    "{}: `{entry}` in `server.trusted_proxies` is not a proxy's address or range: {why}. Give IP \
                     addresses or CIDR ranges (`10.0.0.7`, `10.0.0.0/8`, `fd00::/8`)",
                    config.locate(&["server", "trusted_proxies"])
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(TrustedProxies { nets })
}

impl TrustedProxies {
    /// Proxies trusted: `entries` as `server.trusted_proxies` gives them.
    #[cfg(test)]
    fn of(entries: &[&str]) -> Self {
        Self {
            nets: entries
                .iter()
                .map(|e| Net::parse(e).unwrap_or_else(|why| panic!("{e}: {why}")))
                .collect(),
        }
    }

    /// Whether `ip` is a trusted proxy.
    fn trusts(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.nets.iter().any(|net| net.contains(ip))
    }

    /// The client of a request from `peer` (the TCP peer, when known) with `headers`.
    pub(crate) fn client(&self, peer: Option<IpAddr>, headers: &HeaderMap) -> Option<IpAddr> {
        let peer = peer.map(|p| p.to_canonical());
        if !peer.is_some_and(|p| self.trusts(p)) {
            return peer;
        }
        let hops = match forwarded_for(headers) {
            Some(hops) => hops,
            None => match forwarded(headers) {
                Some(hops) => hops,
                None => return peer,
            },
        };
        for hop in hops.iter().rev() {
            match hop {
                Some(ip) if self.trusts(*ip) => {}
                Some(ip) => return Some(*ip),
                // The proxy did not know, or hid, where the request came from: it is the client as far as
                // anyone can tell.
                None => return peer,
            }
        }
        hops.first().copied().flatten().or(peer)
    }
}

/// The values of every `name` header, in order, as one comma-separated list (`None`: no such header).
fn joined(headers: &HeaderMap, name: &str) -> Option<String> {
    let values: Vec<String> = headers
        .get_all(name)
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .collect();
    (!values.is_empty()).then(|| values.join(","))
}

/// The hops of `X-Forwarded-For`, left to right (`None` for an entry that is not an address); `None` without
/// the header or with only empty entries.
fn forwarded_for(headers: &HeaderMap) -> Option<Vec<Option<IpAddr>>> {
    let text = joined(headers, "x-forwarded-for")?;
    let hops: Vec<Option<IpAddr>> = text
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(node)
        .collect();
    (!hops.is_empty()).then_some(hops)
}

/// The hops of `Forwarded` (RFC 7239), left to right: each element's `for=` (`None` when it has none, more
/// than one, or one that is not an address); `None` without the header. A value whose quotes do not close is
/// one hop that names no address.
fn forwarded(headers: &HeaderMap) -> Option<Vec<Option<IpAddr>>> {
    let text = joined(headers, "forwarded")?;
    let Some(elements) = split_quoted(&text, ',') else {
        return Some(vec![None]);
    };
    let hops: Vec<Option<IpAddr>> = elements
        .iter()
        .filter(|e| !e.trim().is_empty())
        .map(|element| {
            let pairs = split_quoted(element, ';')?;
            let mut fors = pairs.iter().filter_map(|pair| {
                let (key, value) = pair.split_once('=')?;
                key.trim()
                    .eq_ignore_ascii_case("for")
                    .then(|| unquote(value.trim()))
            });
            let value = fors.next()?;
            if fors.next().is_some() {
                return None;
            }
            node(&value?)
        })
        .collect();
    (!hops.is_empty()).then_some(hops)
}

/// `text` split at each `separator` outside double quotes (a backslash escapes the next character inside
/// them); `None` when a quote does not close.
fn split_quoted(text: &str, separator: char) -> Option<Vec<&str>> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in text.char_indices() {
        if escaped {
            escaped = false;
        } else if quoted && c == '\\' {
            escaped = true;
        } else if c == '"' {
            quoted = !quoted;
        } else if c == separator && !quoted {
            parts.push(text.get(start..i)?);
            start = i + c.len_utf8();
        }
    }
    if quoted {
        return None;
    }
    parts.push(text.get(start..)?);
    Some(parts)
}

/// A parameter's value: a token as it is, a quoted string without its quotes and escapes; `None` when it is
/// neither.
fn unquote(value: &str) -> Option<String> {
    let Some(inner) = value.strip_prefix('"') else {
        return (!value.contains('"')).then(|| value.to_owned());
    };
    let inner = inner.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(chars.next()?),
            '"' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

/// The address a node names: `192.0.2.1`, `192.0.2.1:4711`, `2001:db8::1`, `[2001:db8::1]`,
/// `[2001:db8::1]:4711`, optionally quoted; `None` for anything else (`unknown`, `_hidden`, a name, garbage).
fn node(text: &str) -> Option<IpAddr> {
    let text = text.trim();
    let text = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(text)
        .trim();
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Some(ip.to_canonical());
    }
    if let Ok(socket) = text.parse::<SocketAddr>() {
        return Some(socket.ip().to_canonical());
    }
    let inner = text.strip_prefix('[')?.strip_suffix(']')?;
    inner
        .parse::<Ipv6Addr>()
        .ok()
        .map(|v6| IpAddr::V6(v6).to_canonical())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap_or_else(|_| panic!("{text}"))
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                axum::http::HeaderName::from_bytes(name.as_bytes())
                    .unwrap_or_else(|_| panic!("{name}")),
                value.parse().unwrap_or_else(|_| panic!("{value}")),
            );
        }
        map
    }

    /// The client of a request from `peer` with `pairs`, behind the proxies 10.0.0.0/8 and fd00::/8.
    fn client(peer: &str, pairs: &[(&str, &str)]) -> IpAddr {
        TrustedProxies::of(&["10.0.0.0/8", "fd00::/8"])
            .client(Some(ip(peer)), &headers(pairs))
            .unwrap_or_else(|| panic!("no client"))
    }

    #[test]
    fn ranges_parse_and_match() {
        let proxies =
            TrustedProxies::of(&["10.0.0.0/8", "192.0.2.7", "fd00::/8", "::1", "0.0.0.0/0"]);
        assert!(proxies.trusts(ip("10.255.1.2")));
        assert!(proxies.trusts(ip("::ffff:10.1.1.1")));
        assert!(proxies.trusts(ip("fd12::1")));
        assert!(proxies.trusts(ip("::1")));
        assert!(proxies.trusts(ip("203.0.113.9")));
        assert!(!proxies.trusts(ip("fe80::1")));
        let narrow = TrustedProxies::of(&["192.0.2.7", "::ffff:198.51.100.0/120"]);
        assert!(narrow.trusts(ip("192.0.2.7")));
        assert!(!narrow.trusts(ip("192.0.2.8")));
        assert!(narrow.trusts(ip("198.51.100.200")));
        assert!(TrustedProxies::default().nets.is_empty());
    }

    #[test]
    fn malformed_ranges_say_what_is_wrong() {
        for (entry, says) in [
            ("10.0.0.0/33", "0 to 32"),
            ("fd00::/129", "0 to 128"),
            ("10.0.0.0/", "prefix length"),
            ("10.0.0.0/x", "prefix length"),
            ("10.0.0.1/8", "10.0.0.0/8"),
            ("10.0.0", "not an IPv4 or IPv6 address"),
            ("proxy.internal", "not an IPv4 or IPv6 address"),
            ("[::1]", "not an IPv4 or IPv6 address"),
            ("10.0.0.1:80", "not an IPv4 or IPv6 address"),
            ("", "not an IPv4 or IPv6 address"),
        ] {
            let why = Net::parse(entry)
                .err()
                .unwrap_or_else(|| panic!("{entry} parsed"));
            assert!(why.contains(says), "{entry}: {why}");
        }
    }

    #[test]
    fn an_untrusted_peers_headers_are_ignored() {
        let spoofed = [
            ("x-forwarded-for", "192.0.2.1"),
            ("forwarded", "for=192.0.2.1"),
        ];
        assert_eq!(client("203.0.113.5", &spoofed), ip("203.0.113.5"));
        let none = TrustedProxies::default();
        assert_eq!(
            none.client(Some(ip("10.0.0.1")), &headers(&spoofed)),
            Some(ip("10.0.0.1"))
        );
        assert_eq!(none.client(None, &headers(&spoofed)), None);
        assert_eq!(
            TrustedProxies::of(&["10.0.0.0/8"]).client(None, &headers(&spoofed)),
            None
        );
    }

    #[test]
    fn x_forwarded_for_is_read_from_the_right_past_trusted_proxies() {
        let from = |value: &str| client("10.0.0.1", &[("x-forwarded-for", value)]);
        assert_eq!(from("192.0.2.1"), ip("192.0.2.1"));
        // What the client wrote itself, on the left, does not count.
        assert_eq!(from("198.51.100.9, 192.0.2.1"), ip("192.0.2.1"));
        assert_eq!(from("198.51.100.9, 192.0.2.1, 10.0.0.2"), ip("192.0.2.1"));
        assert_eq!(from("garbage, 192.0.2.1"), ip("192.0.2.1"));
        assert_eq!(from("192.0.2.1, fd00::5"), ip("192.0.2.1"));
        // Ports, brackets, quotes, IPv4-mapped IPv6.
        assert_eq!(from("192.0.2.1:4711"), ip("192.0.2.1"));
        assert_eq!(from("[2001:db8::1]:4711"), ip("2001:db8::1"));
        assert_eq!(from("[2001:db8::1]"), ip("2001:db8::1"));
        assert_eq!(from("2001:db8::1"), ip("2001:db8::1"));
        assert_eq!(from("\"2001:db8::1\""), ip("2001:db8::1"));
        assert_eq!(from("::ffff:192.0.2.1"), ip("192.0.2.1"));
        // Only trusted proxies: the left-most.
        assert_eq!(from("10.0.0.3, 10.0.0.2"), ip("10.0.0.3"));
        // Not an address where the client should be: the peer.
        for malformed in [
            "garbage",
            "192.0.2.1, garbage",
            "unknown",
            "_hidden",
            "2001:db8::1:4711:9:9:9:9:9",
            "[2001:db8::1",
            "192.0.2.300",
            "192.0.2.1 198.51.100.2",
            "",
            " , ",
        ] {
            assert_eq!(from(malformed), ip("10.0.0.1"), "{malformed:?}");
        }
    }

    #[test]
    fn several_headers_are_one_list() {
        assert_eq!(
            client(
                "10.0.0.1",
                &[
                    ("x-forwarded-for", "198.51.100.9"),
                    ("x-forwarded-for", "192.0.2.1, 10.0.0.7")
                ]
            ),
            ip("192.0.2.1")
        );
        assert_eq!(
            client(
                "10.0.0.1",
                &[
                    ("forwarded", "for=198.51.100.9"),
                    ("forwarded", "for=192.0.2.1")
                ]
            ),
            ip("192.0.2.1")
        );
    }

    #[test]
    fn forwarded_is_read_when_there_is_no_x_forwarded_for() {
        let from = |value: &str| client("10.0.0.1", &[("forwarded", value)]);
        assert_eq!(from("for=192.0.2.1"), ip("192.0.2.1"));
        assert_eq!(
            from("For=192.0.2.1;proto=https;by=10.0.0.1"),
            ip("192.0.2.1")
        );
        assert_eq!(from("for=\"192.0.2.1:4711\""), ip("192.0.2.1"));
        assert_eq!(
            from("for=\"[2001:db8:cafe::17]:4711\""),
            ip("2001:db8:cafe::17")
        );
        assert_eq!(from("for=\"[::1]:80\""), ip("::1"));
        assert_eq!(from("for=[::1]"), ip("::1"));
        assert_eq!(
            from("for=198.51.100.9, for=192.0.2.1;proto=http, for=10.0.0.2"),
            ip("192.0.2.1")
        );
        // A quoted comma or semicolon does not split.
        assert_eq!(
            from("for=192.0.2.1;ext=\"a,b;c\", for=10.0.0.2"),
            ip("192.0.2.1")
        );
        // Not an address where the client should be: the peer.
        for malformed in [
            "for=unknown",
            "for=_hidden",
            "for=\"_gazonk\"",
            "for=192.0.2.1;for=198.51.100.2",
            "proto=https",
            "for=\"192.0.2.1",
            "for=192.0.2.1, by=10.0.0.1",
            "garbage",
            "for=\"[::1]:80\"x",
            "",
        ] {
            assert_eq!(from(malformed), ip("10.0.0.1"), "{malformed:?}");
        }
        // X-Forwarded-For first, when both are sent.
        assert_eq!(
            client(
                "10.0.0.1",
                &[
                    ("forwarded", "for=198.51.100.9"),
                    ("x-forwarded-for", "192.0.2.1")
                ]
            ),
            ip("192.0.2.1")
        );
    }
}
