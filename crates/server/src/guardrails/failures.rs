//! Failed sign-ins, counted per client address and per presented identity. After [`DEFAULT_LIMIT`] bad or
//! expired credentials within [`DEFAULT_WINDOW`] from one address, or claiming one identity, further requests
//! from that address or for that identity whose credentials do *not* verify get 429 with `Retry-After` until
//! the window has passed again. A request whose credentials verify is never refused here: not for the failures
//! of others sharing its address (everyone behind one proxy), nor for its own earlier ones.
//!
//! The address is the client's ([`super::proxies`] says which one that is behind a trusted proxy); IPv6 clients
//! are counted per /64 (one host usually has a whole /64 to pick addresses from). The identity is what the
//! credential claims to be ([`Identity::of`]): an OIDC token's issuer and subject, else the SHA-256 of the
//! credential itself. Only a 128-bit hash of it is kept, never a token.
//!
//! Each table holds at most [`MAX_ADDRESSES`] entries: when it is full, entries whose window has passed go
//! first, then the oldest that is not refused, then the oldest. Addresses and identities have a table each, so
//! a flood of made-up identities cannot push an address out of its table (nor the other way round).

use std::collections::HashMap;
use std::hash::Hash;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

/// Failed sign-ins allowed per address (and per identity) within the window.
pub(crate) const DEFAULT_LIMIT: u32 = 10;
/// The window, and how long an address or identity that reached the limit waits.
pub(crate) const DEFAULT_WINDOW: Duration = Duration::from_secs(60);
/// The most entries each table (addresses, identities) holds.
pub(crate) const MAX_ADDRESSES: usize = 10_000;

/// Where a request comes from, as counted: an IPv4 address, an IPv6 /64, or unknown (no peer address).
pub(crate) type Client = Option<IpAddr>;

/// The client `ip` is counted as.
pub(crate) fn client(ip: Option<IpAddr>) -> Client {
    ip.map(|ip| match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let [a, b, c, d, ..] = v6.segments();
            IpAddr::V6(Ipv6Addr::new(a, b, c, d, 0, 0, 0, 0))
        }
        v4 => v4,
    })
}

/// Who a presented credential claims to be, as counted: a hash, never the credential.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Identity([u8; 16]);

/// An [`Identity`] with how the logs name it.
#[derive(Clone, Debug)]
pub(crate) struct Claimed {
    pub(crate) identity: Identity,
    /// `the OIDC subject "alice"`, or `one presented credential` (a credential is never shown).
    pub(crate) shown: String,
}

impl Identity {
    /// Who the `Authorization` header value `authorization` claims to be: for a JWT, its `iss` and `sub` (read
    /// without verifying anything: the claim is what is being guessed at); for anything else (an API token,
    /// a JWT without a `sub`, a header that is not `Bearer`), the credential itself.
    pub(crate) fn of(authorization: &str) -> Claimed {
        let text = authorization.trim();
        let token = text
            .get(..7)
            .filter(|scheme| scheme.eq_ignore_ascii_case("bearer "))
            .and_then(|_| text.get(7..))
            .map_or(text, str::trim);
        if token.matches('.').count() == 2
            && let Ok(claims) =
                jsonwebtoken::dangerous::insecure_decode_claims::<serde_json::Value>(token)
            && let Some(sub) = claims.get("sub").and_then(serde_json::Value::as_str)
        {
            let iss = claims
                .get("iss")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default();
            return Claimed {
                identity: Self::hash(&["oidc", iss, sub]),
                shown: format!("the OIDC subject {:?}", shown(sub)),
            };
        }
        Claimed {
            identity: Self::hash(&["credential", token]),
            shown: "one presented credential".to_owned(),
        }
    }

    fn hash(parts: &[&str]) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(b"steward failed sign-ins");
        for part in parts {
            // Length-prefixed, so that no two lists of parts hash alike.
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part.as_bytes());
        }
        let digest = hasher.finalize();
        let mut out = [0u8; 16];
        out.copy_from_slice(digest.get(..16).unwrap_or(&[0u8; 16]));
        Self(out)
    }
}

/// At most 100 characters of `text`, for a log line.
fn shown(text: &str) -> String {
    let mut out: String = text.chars().take(100).collect();
    if text.chars().count() > 100 {
        out.push('…');
    }
    out
}

/// Why a request is refused: which limit, and the seconds to wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Too many failures from the request's address.
    Address(u64),
    /// Too many failures claiming the request's identity.
    Identity(u64),
}

impl Refused {
    /// The seconds to wait.
    pub(crate) fn wait(self) -> u64 {
        match self {
            Self::Address(wait) | Self::Identity(wait) => wait,
        }
    }

    /// What the client is told.
    pub(crate) fn message(self) -> String {
        match self {
            Self::Address(wait) => format!(
                "too many failed sign-ins from this address; try again in {wait} s (valid credentials are \
                 still accepted)"
            ),
            Self::Identity(wait) => format!(
                "too many failed sign-ins for this identity; try again in {wait} s (valid credentials are \
                 still accepted)"
            ),
        }
    }
}

/// What one failure did: which limits it reached just now (each is said once per block).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Reached {
    pub(crate) address: bool,
    pub(crate) identity: bool,
}

/// One key's failures.
struct Entry {
    failures: u32,
    /// When the first failure of the current window happened.
    since: Instant,
    /// Set when the key reached the limit: unverified requests refused until then.
    blocked_until: Option<Instant>,
}

impl Entry {
    fn new(now: Instant) -> Self {
        Self {
            failures: 0,
            since: now,
            blocked_until: None,
        }
    }

    /// Whether the entry says nothing any more at `now` (its window and any block have passed).
    fn stale(&self, now: Instant, window: Duration) -> bool {
        match self.blocked_until {
            Some(until) => now >= until,
            None => now.duration_since(self.since) >= window,
        }
    }
}

/// The failures of one kind of key, bounded.
struct Table<K> {
    limit: u32,
    window: Duration,
    capacity: usize,
    entries: HashMap<K, Entry>,
}

impl<K: Copy + Eq + Hash> Table<K> {
    fn new() -> Self {
        Self {
            limit: DEFAULT_LIMIT,
            window: DEFAULT_WINDOW,
            capacity: MAX_ADDRESSES,
            entries: HashMap::new(),
        }
    }

    fn configure(&mut self, limit: u32, window: Duration, capacity: usize) {
        self.limit = limit;
        self.window = window;
        self.capacity = capacity.max(1);
        self.entries.clear();
    }

    /// `Err(seconds to wait)` while `key` is refused.
    fn check(&mut self, key: &K, now: Instant) -> Result<(), u64> {
        let Some(entry) = self.entries.get(key) else {
            return Ok(());
        };
        if entry.stale(now, self.window) {
            self.entries.remove(key);
            return Ok(());
        }
        match entry.blocked_until {
            Some(until) => Err(until.duration_since(now).as_secs_f64().ceil().max(1.0) as u64),
            None => Ok(()),
        }
    }

    /// Counts a failure of `key`; `true` when it reached the limit with this one.
    fn failed(&mut self, key: K, now: Instant) -> bool {
        if self.limit == 0 {
            return false;
        }
        let window = self.window;
        if !self.entries.contains_key(&key) && self.entries.len() >= self.capacity {
            self.make_room(now);
        }
        let entry = self.entries.entry(key).or_insert_with(|| Entry::new(now));
        if entry.stale(now, window) {
            *entry = Entry::new(now);
        }
        entry.failures = entry.failures.saturating_add(1);
        if entry.failures >= self.limit && entry.blocked_until.is_none() {
            entry.blocked_until = Some(now + window);
            return true;
        }
        false
    }

    /// Frees one place at least: stale entries first, then the oldest one not refused, then the oldest.
    fn make_room(&mut self, now: Instant) {
        let window = self.window;
        self.entries.retain(|_, e| !e.stale(now, window));
        if self.entries.len() < self.capacity {
            return;
        }
        let oldest = |blocked_too: bool| {
            self.entries
                .iter()
                .filter(|(_, e)| blocked_too || e.blocked_until.is_none())
                .min_by_key(|(_, e)| e.since)
                .map(|(k, _)| *k)
        };
        if let Some(key) = oldest(false).or_else(|| oldest(true)) {
            self.entries.remove(&key);
        }
    }
}

/// The failed sign-ins of each client address and each claimed identity.
pub(crate) struct FailedSignIns {
    addresses: Mutex<Table<Client>>,
    identities: Mutex<Table<Identity>>,
}

impl Default for FailedSignIns {
    fn default() -> Self {
        Self {
            addresses: Mutex::new(Table::new()),
            identities: Mutex::new(Table::new()),
        }
    }
}

impl FailedSignIns {
    /// Allows `limit` failures per address and per identity within `window` (a `limit` of 0 turns the check
    /// off), and keeps at most `capacity` addresses and `capacity` identities.
    pub(crate) fn configure(&self, limit: u32, window: Duration, capacity: usize) {
        self.addresses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .configure(limit, window, capacity);
        self.identities
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .configure(limit, window, capacity);
    }

    /// `Err` while unverified credentials from `client`, or claiming `identity`, are refused. Ask only for a
    /// request whose credentials did not verify.
    pub(crate) fn check(&self, client: Client, identity: Option<Identity>) -> Result<(), Refused> {
        let now = Instant::now();
        self.addresses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .check(&client, now)
            .map_err(Refused::Address)?;
        if let Some(identity) = identity {
            self.identities
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .check(&identity, now)
                .map_err(Refused::Identity)?;
        }
        Ok(())
    }

    /// Counts a failed sign-in of `client` claiming `identity`.
    pub(crate) fn failed(&self, client: Client, identity: Option<Identity>) -> Reached {
        let now = Instant::now();
        let address = self
            .addresses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .failed(client, now);
        let identity = identity.is_some_and(|identity| {
            self.identities
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .failed(identity, now)
        });
        Reached { address, identity }
    }

    #[cfg(test)]
    fn len(&self) -> (usize, usize) {
        (
            self.addresses
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entries
                .len(),
            self.identities
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entries
                .len(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> Client {
        client(Some(text.parse().unwrap_or_else(|_| panic!("{text}"))))
    }

    #[test]
    fn an_address_is_refused_after_the_limit_and_others_are_not() {
        let failures = FailedSignIns::default();
        failures.configure(3, Duration::from_secs(60), 100);
        let a = ip("192.0.2.1");
        for _ in 0..2 {
            assert_eq!(failures.failed(a, None), Reached::default());
            assert_eq!(failures.check(a, None), Ok(()));
        }
        assert!(failures.failed(a, None).address);
        let wait = match failures.check(a, None) {
            Err(Refused::Address(wait)) => wait,
            other => panic!("{other:?}"),
        };
        assert!((1..=60).contains(&wait), "{wait}");
        assert_eq!(failures.check(ip("192.0.2.2"), None), Ok(()));
        assert_eq!(failures.check(None, None), Ok(()));
    }

    #[test]
    fn an_identity_is_refused_after_the_limit_from_any_address() {
        let failures = FailedSignIns::default();
        failures.configure(3, Duration::from_secs(60), 100);
        let alice = Identity::of("Bearer x.y.z").identity;
        let bob = Identity::of("Bearer other").identity;
        for i in 1..=3u8 {
            failures.failed(client(Some(IpAddr::from([192, 0, 2, i]))), Some(alice));
        }
        let fresh = ip("198.51.100.1");
        assert!(matches!(
            failures.check(fresh, Some(alice)),
            Err(Refused::Identity(1..=60))
        ));
        assert_eq!(failures.check(fresh, Some(bob)), Ok(()));
        assert_eq!(failures.check(fresh, None), Ok(()));
    }

    #[test]
    fn identities_are_claims_hashed_never_credentials() {
        // The signature is not checked here (that is the verifier's job): any key makes a token that claims.
        let token = |claims: serde_json::Value, key: &[u8]| {
            let token = jsonwebtoken::encode(
                &jsonwebtoken::Header::default(),
                &claims,
                &jsonwebtoken::EncodingKey::from_secret(key),
            )
            .unwrap_or_else(|e| panic!("{e}"));
            format!("Bearer {token}")
        };
        let carol = token(
            serde_json::json!({"sub": "carol", "iss": "https://i/"}),
            b"one",
        );
        let carol_again = token(
            serde_json::json!({"sub": "carol", "iss": "https://i/", "exp": 1}),
            b"two",
        );
        let dave = token(
            serde_json::json!({"sub": "dave", "iss": "https://i/"}),
            b"one",
        );
        let elsewhere = token(
            serde_json::json!({"sub": "carol", "iss": "https://j/"}),
            b"one",
        );
        let claimed = Identity::of(&carol);
        assert_eq!(claimed.identity, Identity::of(&carol_again).identity);
        assert_ne!(claimed.identity, Identity::of(&dave).identity);
        assert_ne!(claimed.identity, Identity::of(&elsewhere).identity);
        assert!(claimed.shown.contains("carol"), "{}", claimed.shown);
        // A credential that names nobody is its own identity, and is never shown.
        let opaque = Identity::of("Bearer stw_secret");
        assert_eq!(
            opaque.identity,
            Identity::of("bearer  stw_secret ").identity
        );
        assert_ne!(opaque.identity, Identity::of("Bearer stw_other").identity);
        assert!(!opaque.shown.contains("secret"));
        // Three parts that are not a JWT's: the credential too.
        assert_eq!(
            Identity::of("Bearer a.b.c").identity,
            Identity::of("Bearer a.b.c").identity
        );
        assert_ne!(
            Identity::of("Bearer a.b.c").identity,
            Identity::of("Bearer a.b.d").identity
        );
    }

    #[test]
    fn ipv6_addresses_of_one_64_count_together() {
        assert_eq!(ip("2001:db8:1:2::1"), ip("2001:db8:1:2:ffff::9"));
        assert_ne!(ip("2001:db8:1:2::1"), ip("2001:db8:1:3::1"));
        assert_eq!(ip("::ffff:192.0.2.1"), ip("192.0.2.1"));
    }

    #[test]
    fn the_tables_never_hold_more_than_their_capacity() {
        let failures = FailedSignIns::default();
        failures.configure(5, Duration::from_secs(60), 50);
        for i in 0..1000u32 {
            let identity = Identity::of(&format!("Bearer guess-{i}")).identity;
            failures.failed(client(Some(IpAddr::from(i.to_be_bytes()))), Some(identity));
            let (addresses, identities) = failures.len();
            assert!(addresses <= 50 && identities <= 50);
        }
    }

    #[test]
    fn a_refused_identity_outlives_a_flood_of_new_ones() {
        let failures = FailedSignIns::default();
        failures.configure(3, Duration::from_secs(60), 20);
        let target = Identity::of("Bearer target").identity;
        for _ in 0..3 {
            failures.failed(None, Some(target));
        }
        for i in 0..500u32 {
            let identity = Identity::of(&format!("Bearer guess-{i}")).identity;
            failures.failed(None, Some(identity));
        }
        assert!(matches!(
            failures.check(ip("192.0.2.9"), Some(target)),
            Err(Refused::Identity(_))
        ));
    }

    #[test]
    fn a_limit_of_zero_turns_the_check_off() {
        let failures = FailedSignIns::default();
        failures.configure(0, Duration::from_secs(60), 50);
        let identity = Identity::of("Bearer x").identity;
        for _ in 0..100 {
            failures.failed(None, Some(identity));
        }
        assert_eq!(failures.check(None, Some(identity)), Ok(()));
    }
}
