//! Which process owns a run, and marking the runs whose process died.
//!
//! The writer stores with each run the process writing it (`runs.owner`): `<host>:<pid>:<start>`, where
//! `<start>` tells this process apart from any other that gets the same pid later: its start time in clock
//! ticks since boot (field 22 of `/proc/<pid>/stat`), the first eight hex digits of the boot's id and the pid
//! namespace (`<ticks>.<boot>.<namespace>`). A process that takes up a stored run (a resumed approval, a
//! conversation's next turn) becomes its owner.
//!
//! When a store is opened ([`RunStore::open`]), every run without an outcome whose owner is a process of this
//! host (the same host name and pid namespace) that is gone — no `/proc/<pid>`, another start time (the pid
//! was reused), a zombie, or the host booted since — is marked [`DIED`]; its sub-runs too, as
//! each has the same owner. Left alone: runs of live processes, runs of other hosts or containers (whose
//! processes cannot be seen from here: their own next open marks them), runs parked to wait for an approval
//! (their process ended on purpose), runs written before owners were kept, and everything on a system
//! without `/proc`. A died run that gets another event (its approval resumed elsewhere) is taken by the
//! process that writes it and has no outcome again until it ends.

use std::sync::OnceLock;

use super::engine::Arg;
use super::{DIED, RunStore, StoreError};

/// This process as runs record their owner.
pub(crate) fn this_process() -> &'static str {
    static OWNER: OnceLock<String> = OnceLock::new();
    OWNER.get_or_init(|| {
        let host = host_name();
        let pid = std::process::id();
        match (start_ticks("self"), boot_id(), pid_namespace()) {
            (Some(ticks), Some(boot), Some(namespace)) => {
                format!("{host}:{pid}:{ticks}.{boot}.{namespace}")
            }
            // Without /proc a process cannot be checked: its runs are never marked.
            _ => format!("{host}:{pid}"),
        }
    })
}

/// The host's name, without the `:` that separates an owner's parts.
fn host_name() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "localhost".to_owned());
    name.replace(':', "_")
}

/// The first eight hex digits of this boot's id.
fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let digits: String = id.chars().filter(char::is_ascii_hexdigit).take(8).collect();
    (digits.len() == 8).then_some(digits)
}

/// The inode of this process's pid namespace (`pid:[4026531836]` gives `4026531836`).
fn pid_namespace() -> Option<String> {
    let link = std::fs::read_link("/proc/self/ns/pid").ok()?;
    let text = link.to_string_lossy();
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    (!digits.is_empty()).then_some(digits)
}

/// A process's state letter and start time (clock ticks since boot) from `/proc/<pid>/stat`: `None` when there
/// is no such process. The command name in parentheses may hold spaces and parentheses, so the fields are
/// counted from the last `)`.
fn stat(pid: &str) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = text.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    // Field 3 is the state; field 22 the start time.
    let ticks = fields.nth(18)?.parse().ok()?;
    Some((state, ticks))
}

fn start_ticks(pid: &str) -> Option<u64> {
    stat(pid).map(|(_, ticks)| ticks)
}

/// What can be said of a run's owner from this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owner {
    /// It runs.
    Alive,
    /// It is gone.
    Dead,
    /// It cannot be checked from here (another host or container, or no start marker).
    Unknown,
}

/// Whether the process `owner` names is alive, as seen by the process `me` (both as [`this_process`] writes
/// them); `probe` reads a pid's state and start time.
fn judge(owner: &str, me: &str, probe: &dyn Fn(&str) -> Option<(char, u64)>) -> Owner {
    let mut parts = owner.split(':');
    let (Some(host), Some(pid), Some(start), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Owner::Unknown;
    };
    let mut mine = me.split(':');
    let (Some(my_host), Some(_), Some(my_start)) = (mine.next(), mine.next(), mine.next()) else {
        return Owner::Unknown;
    };
    let split = |s: &'_ str| -> Option<(u64, String, String)> {
        let mut p = s.split('.');
        let ticks = p.next()?.parse().ok()?;
        Some((ticks, p.next()?.to_owned(), p.next()?.to_owned()))
    };
    let (Some((ticks, boot, namespace)), Some((_, my_boot, my_namespace))) =
        (split(start), split(my_start))
    else {
        return Owner::Unknown;
    };
    if host != my_host || namespace != my_namespace || pid.parse::<u32>().is_err() {
        return Owner::Unknown;
    }
    if boot != my_boot {
        // The host booted since: every process of the earlier boot is gone.
        return Owner::Dead;
    }
    match probe(pid) {
        None => Owner::Dead,
        // A zombie has ended; only its parent has not collected it yet.
        Some(('Z' | 'X' | 'x', _)) => Owner::Dead,
        Some((_, started)) if started != ticks => Owner::Dead,
        Some(_) => Owner::Alive,
    }
}

/// The runs that may be marked: no outcome, an owner on this host, not parked to wait for an approval.
const CANDIDATES: &str = "SELECT id, owner FROM runs r WHERE outcome IS NULL AND owner IS NOT NULL \
    AND substr(owner, 1, length($1)) = $1 \
    AND NOT EXISTS (SELECT 1 FROM pending_runs p WHERE p.run_id IN (r.id, r.root_id) AND p.resumed_at IS NULL)";

impl RunStore {
    /// Marks as [`DIED`] every run without an outcome whose process, on this host, is gone (see
    /// `store/owner.rs` for what is checked and what is left alone); returns how many. [`RunStore::open`] does
    /// it already.
    pub async fn mark_died(&self) -> Result<u64, StoreError> {
        let me = this_process();
        let Some(host) = me.split(':').next() else {
            return Ok(0);
        };
        let rows = self
            .pool
            .fetch(CANDIDATES, vec![Arg::from(format!("{host}:"))])
            .await?;
        let mut dead = Vec::new();
        for row in &rows {
            let owner = row.string(1)?;
            if judge(&owner, me, &stat) == Owner::Dead {
                dead.push((row.string(0)?, owner));
            }
        }
        if dead.is_empty() {
            return Ok(0);
        }
        let mut tx = self.pool.begin().await?;
        let mut marked = 0;
        for (id, owner) in dead {
            // Only while it still has no outcome and the same owner: another process may have taken it.
            marked += tx
                .execute(
                    "UPDATE runs SET outcome = $1 WHERE id = $2 AND outcome IS NULL AND owner = $3",
                    vec![Arg::from(DIED), Arg::from(id), Arg::from(owner)],
                )
                .await?;
        }
        tx.commit().await?;
        Ok(marked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: &str = "box:100:5000.abcdef01.4026531836";

    fn probe(state: char, ticks: u64) -> impl Fn(&str) -> Option<(char, u64)> {
        move |pid| (pid == "42").then_some((state, ticks))
    }

    #[test]
    fn an_owner_is_judged_by_its_pid_and_start_time() {
        let owner = "box:42:7000.abcdef01.4026531836";
        assert_eq!(judge(owner, ME, &probe('S', 7000)), Owner::Alive);
        assert_eq!(judge(owner, ME, &probe('R', 7000)), Owner::Alive);
        // The pid was taken by another process since.
        assert_eq!(judge(owner, ME, &probe('S', 7001)), Owner::Dead);
        assert_eq!(judge(owner, ME, &probe('Z', 7000)), Owner::Dead);
        assert_eq!(
            judge("box:43:7000.abcdef01.4026531836", ME, &probe('S', 7000)),
            Owner::Dead
        );
        // Another boot: gone, whatever has that pid now.
        assert_eq!(
            judge("box:42:7000.00000000.4026531836", ME, &probe('S', 7000)),
            Owner::Dead
        );
    }

    #[test]
    fn owners_that_cannot_be_checked_from_here_are_left_alone() {
        let gone = |_: &str| None;
        for owner in [
            "other:42:7000.abcdef01.4026531836",
            "box:42:7000.abcdef01.4026532000",
            "box:42",
            "box:42:junk",
            "box:x:7000.abcdef01.4026531836",
            "",
        ] {
            assert_eq!(judge(owner, ME, &gone), Owner::Unknown, "{owner}");
        }
        assert_eq!(
            judge("box:42:7000.abcdef01.4026531836", "box:100", &gone),
            Owner::Unknown
        );
    }

    #[test]
    fn this_process_is_alive() {
        let me = this_process();
        if me.split(':').count() == 3 {
            assert_eq!(judge(me, me, &stat), Owner::Alive, "{me}");
        }
    }
}
