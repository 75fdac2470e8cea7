//! Failed sign-ins per client address: after [`DEFAULT_LIMIT`] bad or expired credentials within
//! [`DEFAULT_WINDOW`], every request of that address that needs credentials gets 429 with `Retry-After` until
//! the window has passed again. Guessing tokens, or making the server verify signature after signature, then
//! costs the guesser a minute per ten tries; other addresses are not affected.
//!
//! IPv6 clients are counted per /64 (one host usually has a whole /64 to pick addresses from). The table
//! holds at most [`MAX_ADDRESSES`] addresses: when it is full, entries whose window has passed go first, then
//! the oldest.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Failed sign-ins allowed per address within the window.
pub(crate) const DEFAULT_LIMIT: u32 = 10;
/// The window, and how long an address that reached the limit waits.
pub(crate) const DEFAULT_WINDOW: Duration = Duration::from_secs(60);
/// The most addresses the table holds.
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

/// One address's failures.
struct Entry {
    failures: u32,
    /// When the first failure of the current window happened.
    since: Instant,
    /// Set when the address reached the limit: refused until then.
    blocked_until: Option<Instant>,
}

impl Entry {
    /// Whether the entry says nothing any more at `now` (its window and any block have passed).
    fn stale(&self, now: Instant, window: Duration) -> bool {
        match self.blocked_until {
            Some(until) => now >= until,
            None => now.duration_since(self.since) >= window,
        }
    }
}

struct Table {
    limit: u32,
    window: Duration,
    capacity: usize,
    entries: HashMap<Client, Entry>,
}

/// The failed sign-ins of each client address.
pub(crate) struct FailedSignIns {
    table: Mutex<Table>,
}

impl Default for FailedSignIns {
    fn default() -> Self {
        Self {
            table: Mutex::new(Table {
                limit: DEFAULT_LIMIT,
                window: DEFAULT_WINDOW,
                capacity: MAX_ADDRESSES,
                entries: HashMap::new(),
            }),
        }
    }
}

impl FailedSignIns {
    /// Allows `limit` failures per address within `window` (a `limit` of 0 turns the check off), and keeps at
    /// most `capacity` addresses.
    pub(crate) fn configure(&self, limit: u32, window: Duration, capacity: usize) {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        table.limit = limit;
        table.window = window;
        table.capacity = capacity.max(1);
        table.entries.clear();
    }

    /// `Err(seconds to wait)` while `client` is refused.
    pub(crate) fn check(&self, client: Client) -> Result<(), u64> {
        let now = Instant::now();
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        let window = table.window;
        let Some(entry) = table.entries.get(&client) else {
            return Ok(());
        };
        if entry.stale(now, window) {
            table.entries.remove(&client);
            return Ok(());
        }
        match entry.blocked_until {
            Some(until) => Err(until.duration_since(now).as_secs_f64().ceil().max(1.0) as u64),
            None => Ok(()),
        }
    }

    /// Counts a failed sign-in of `client`.
    pub(crate) fn failed(&self, client: Client) {
        let now = Instant::now();
        let mut guard = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        let table = &mut *guard;
        if table.limit == 0 {
            return;
        }
        let window = table.window;
        if !table.entries.contains_key(&client) && table.entries.len() >= table.capacity {
            table.entries.retain(|_, e| !e.stale(now, window));
            if table.entries.len() >= table.capacity
                && let Some(oldest) = table
                    .entries
                    .iter()
                    .min_by_key(|(_, e)| e.since)
                    .map(|(k, _)| *k)
            {
                table.entries.remove(&oldest);
            }
        }
        let entry = table.entries.entry(client).or_insert(Entry {
            failures: 0,
            since: now,
            blocked_until: None,
        });
        if entry.stale(now, window) {
            *entry = Entry {
                failures: 0,
                since: now,
                blocked_until: None,
            };
        }
        entry.failures = entry.failures.saturating_add(1);
        if entry.failures >= table.limit && entry.blocked_until.is_none() {
            entry.blocked_until = Some(now + window);
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.table
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entries
            .len()
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
            failures.failed(a);
            assert_eq!(failures.check(a), Ok(()));
        }
        failures.failed(a);
        let wait = failures.check(a).err().unwrap_or_default();
        assert!((1..=60).contains(&wait), "{wait}");
        assert_eq!(failures.check(ip("192.0.2.2")), Ok(()));
        assert_eq!(failures.check(None), Ok(()));
    }

    #[test]
    fn ipv6_addresses_of_one_64_count_together() {
        assert_eq!(ip("2001:db8:1:2::1"), ip("2001:db8:1:2:ffff::9"));
        assert_ne!(ip("2001:db8:1:2::1"), ip("2001:db8:1:3::1"));
        assert_eq!(ip("::ffff:192.0.2.1"), ip("192.0.2.1"));
    }

    #[test]
    fn the_table_never_holds_more_than_its_capacity() {
        let failures = FailedSignIns::default();
        failures.configure(5, Duration::from_secs(60), 50);
        for i in 0..1000u32 {
            failures.failed(client(Some(IpAddr::from(i.to_be_bytes()))));
            assert!(failures.len() <= 50);
        }
    }

    #[test]
    fn a_limit_of_zero_turns_the_check_off() {
        let failures = FailedSignIns::default();
        failures.configure(0, Duration::from_secs(60), 50);
        for _ in 0..100 {
            failures.failed(None);
        }
        assert_eq!(failures.check(None), Ok(()));
    }
}
