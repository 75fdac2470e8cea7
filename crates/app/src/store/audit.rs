//! The audit trail: one record per settled tool call of every run (sub-runs included), in one hash chain for
//! the whole store.
//!
//! Each record holds the hash of the one before it: `hash = sha256(prev_hash || canonical)`, where `prev_hash`
//! is the previous record's hash as lower-case hex ([`GENESIS`] for the first record) and `canonical` is this
//! record's fields, `seq` included, as a JSON array in a fixed order (see [`AuditRecord::canonical`]). A record
//! edited in place no longer matches its hash; one deleted or inserted leaves the next record's `prev_hash`
//! pointing at something else. [`RunStore::verify_audit`] walks the chain and names the first break.
//!
//! The chain is tamper-evident, not tamper-proof: someone who can rewrite the whole table can compute a new
//! chain, and dropping the newest records leaves a shorter chain that is still whole. Keeping the head's hash
//! somewhere else (the report gives it) closes both gaps.
//!
//! Appending is safe with several processes on one store: the head is read and the records are written in the
//! writer's transaction, which on SQLite holds the write lock from its first statement (`BEGIN IMMEDIATE`) and
//! on PostgreSQL takes a transaction advisory lock before reading the head.

use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::engine::{Arg, Row, Tx, sqlite_time};
use super::{RunStore, StoreError};

/// The `prev_hash` of the first record.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The PostgreSQL advisory lock held while appending ("STEWARD\x01" in ASCII; migrations use "STEWARD\0").
const PG_AUDIT_LOCK: &str = "SELECT pg_advisory_xact_lock(6004253327232123905)";

/// Records read per query while verifying, so memory stays flat over a long trail.
const PAGE: i64 = 1000;

/// Hex digits kept of a SQL fingerprint.
const FINGERPRINT_DIGITS: usize = 16;

/// The trail's columns, in the order [`audit_record`] reads them.
macro_rules! columns {
    () => {
        "seq, at, principal, role, run_id, agent_path, call_id, tool, arguments, sql_fingerprint, decision, \
         decision_reason, approval, approval_reason, approved_by, status, prev_hash, hash, surface"
    };
}

/// The newest records first, a page at a time.
const LIST: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM audit_trail ORDER BY seq DESC LIMIT $1 OFFSET $2"
);

/// The newest records first, a page at a time, without the intents of calls that settled since (a call is one
/// row: how it ended; one that never settled shows as `started`).
const SETTLED: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM audit_trail a WHERE a.status <> 'started' OR NOT EXISTS (SELECT 1 FROM audit_trail b \
     WHERE b.run_id = a.run_id AND b.call_id = a.call_id AND b.seq > a.seq) ORDER BY seq DESC LIMIT $1 OFFSET $2"
);

/// The records after a seq, oldest first.
const CHAIN: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM audit_trail WHERE seq > $1 ORDER BY seq LIMIT $2"
);

/// The head of the chain.
const HEAD: &str = "SELECT seq, hash FROM audit_trail ORDER BY seq DESC LIMIT 1";

/// One tool call as the audit trail keeps it: who made it, through which agents, with what, what the policy
/// and a person decided, and how it ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// Its place in the chain, from 1.
    pub seq: u64,
    /// When the call was settled (UTC, to the microsecond).
    pub at: DateTime<Utc>,
    /// Who asked: the principal's name, empty for the local user.
    pub principal: String,
    /// The principal's role, when one applied.
    pub role: Option<String>,
    /// The run that made the call (a sub-run's id is `<parent id>/<call id>`).
    pub run_id: String,
    /// The agents from the top run down to the one that called, `/`-separated (`assistant/expenses`).
    pub agent_path: String,
    /// The call's id within its run.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The arguments exactly as the model sent them.
    pub arguments: String,
    /// For arguments with a `sql` field: a short hash of that SQL with its whitespace collapsed, so that the
    /// same statement can be found across runs (see [`sql_fingerprint`]).
    pub sql_fingerprint: Option<String>,
    /// The policy's decision: `allowed`, `denied`, `invalid` (the arguments failed validation) or `approval`
    /// (the call waited for a person).
    pub decision: String,
    /// Why it was denied, or what was invalid, or what the person was asked.
    pub decision_reason: Option<String>,
    /// For a call that waited: `approved` or `rejected`; `None` when no decision came.
    pub approval: Option<String>,
    /// Why it was rejected, when the person said.
    pub approval_reason: Option<String>,
    /// Who gave the decision (the run's principal for an approval given at a terminal; empty for the local
    /// user).
    pub approved_by: Option<String>,
    /// How it ended: `ok`, `error`, `denied`, `invalid` or `rejected`. A call whose run ended before its
    /// result came is `error`, as the model was told. `started` is the intent written before a tool runs (the
    /// call's settled record follows it; a call with only `started` ran, or was about to, when its process
    /// died), and `waiting` a call saved to wait for a person's approval.
    pub status: String,
    /// Where the call came from: `cli`, `api`, `v1`, `mcp`, `eval` (`None` in records written before Steward
    /// kept it).
    #[serde(default)]
    pub surface: Option<String>,
    /// The previous record's hash ([`GENESIS`] for the first).
    pub prev_hash: String,
    /// SHA-256 of `prev_hash` followed by [`AuditRecord::canonical`], in lower-case hex.
    pub hash: String,
}

impl AuditRecord {
    /// The record's fields (all but the two hashes) as one JSON array in a fixed order: seq, at (RFC 3339 UTC
    /// with six fraction digits), principal, role, run id, agent path, call id, tool, arguments, SQL
    /// fingerprint, decision, decision reason, approval, approval reason, approved by, status, and the surface
    /// when the record has one.
    pub fn canonical(&self) -> String {
        let mut fields = Value::Array(vec![
            Value::from(self.seq),
            Value::from(sqlite_time(self.at)),
            Value::from(self.principal.as_str()),
            Value::from(self.role.as_deref()),
            Value::from(self.run_id.as_str()),
            Value::from(self.agent_path.as_str()),
            Value::from(self.call_id.as_str()),
            Value::from(self.tool.as_str()),
            Value::from(self.arguments.as_str()),
            Value::from(self.sql_fingerprint.as_deref()),
            Value::from(self.decision.as_str()),
            Value::from(self.decision_reason.as_deref()),
            Value::from(self.approval.as_deref()),
            Value::from(self.approval_reason.as_deref()),
            Value::from(self.approved_by.as_deref()),
            Value::from(self.status.as_str()),
        ]);
        // Added after the first release: records without it keep the canonical form they were hashed with.
        if let (Value::Array(fields), Some(surface)) = (&mut fields, &self.surface) {
            fields.push(Value::from(surface.as_str()));
        }
        fields.to_string()
    }

    /// A record of `call`, made in `run_id` by `agent_path` for `principal`, from `surface`, with `status` and
    /// the decision `allowed` (its seq, time and hashes are given when it is appended).
    pub fn of_call(
        principal: &steward_core::Principal,
        run_id: &str,
        agent_path: &str,
        call: &steward_core::ToolCall,
        surface: Option<String>,
        status: &str,
    ) -> Self {
        Self {
            seq: 0,
            at: Utc::now(),
            principal: if principal.is_local() {
                String::new()
            } else {
                principal.name.clone()
            },
            role: principal.role.clone(),
            run_id: run_id.to_owned(),
            agent_path: agent_path.to_owned(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
            sql_fingerprint: sql_fingerprint(&call.arguments),
            decision: "allowed".to_owned(),
            decision_reason: None,
            approval: None,
            approval_reason: None,
            approved_by: None,
            status: status.to_owned(),
            surface,
            prev_hash: String::new(),
            hash: String::new(),
        }
    }

    /// The hash this record's content and `prev_hash` give; equal to [`AuditRecord::hash`] unless the record
    /// was changed.
    pub fn computed_hash(&self) -> String {
        let mut digest = Sha256::new();
        digest.update(self.prev_hash.as_bytes());
        digest.update(self.canonical().as_bytes());
        hex(&digest.finalize())
    }
}

/// The fingerprint of the SQL in a call's arguments: the first 16 hex digits of SHA-256 of the `sql` field's
/// text with every run of whitespace made one space and the ends trimmed. `None` when the arguments are not a
/// JSON object (or a JSON string holding one) with a `sql` string.
pub fn sql_fingerprint(arguments: &str) -> Option<String> {
    let value: Value = serde_json::from_str(arguments).ok()?;
    let value = match value {
        Value::String(inner) => serde_json::from_str(&inner).ok()?,
        other => other,
    };
    let sql = value.get("sql")?.as_str()?;
    let collapsed = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut digits = hex(&Sha256::digest(collapsed.as_bytes()));
    digits.truncate(FINGERPRINT_DIGITS);
    Some(digits)
}

fn hex(bytes: &[u8]) -> String {
    use fmt::Write as _;
    bytes.iter().fold(String::with_capacity(64), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// The time as the trail keeps it: to the microsecond, as both engines store it.
pub(crate) fn audit_time(at: DateTime<Utc>) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(at.timestamp_micros()).unwrap_or(at)
}

/// What [`RunStore::verify_audit`] found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditReport {
    /// Records checked: all of them for an intact chain, else those up to and including the first bad one.
    pub checked: u64,
    /// The newest record's seq and hash when the chain is intact (keep them elsewhere to notice a trail cut
    /// short or rewritten as a whole); `None` for an empty trail or a broken one.
    pub head: Option<(u64, String)>,
    /// The first record that breaks the chain, if any.
    pub broken: Option<ChainBreak>,
}

impl AuditReport {
    /// True when every record matches its hash and follows the one before it.
    pub fn is_intact(&self) -> bool {
        self.broken.is_none()
    }
}

/// The first record at which the chain breaks, and how.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "problem", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ChainBreak {
    /// The record's content no longer gives its hash: it was edited in place (or its hash was).
    Edited {
        /// The record.
        seq: u64,
    },
    /// The record's `prev_hash` is not the hash of the record before it: a record was deleted or inserted
    /// between them (or, for the first record, before it).
    Unlinked {
        /// The record.
        seq: u64,
        /// The record before it in the table, `None` when it is the first.
        previous: Option<u64>,
    },
}

impl ChainBreak {
    /// The seq of the record where the chain breaks.
    pub fn seq(&self) -> u64 {
        match self {
            Self::Edited { seq } | Self::Unlinked { seq, .. } => *seq,
        }
    }
}

impl fmt::Display for ChainBreak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Edited { seq } => write!(
                f,
                "record {seq} was changed: its content does not give its hash"
            ),
            Self::Unlinked {
                seq,
                previous: Some(previous),
            } => {
                let gap = match seq.saturating_sub(*previous) {
                    0 | 1 => String::new(),
                    2 => format!(" (record {} is missing)", previous + 1),
                    _ => format!(" (records {} to {} are missing)", previous + 1, seq - 1),
                };
                write!(
                    f,
                    "record {seq} does not follow record {previous}: its prev_hash is not that record's hash, so a \
                     record was deleted or inserted between them{gap}"
                )
            }
            Self::Unlinked {
                seq,
                previous: None,
            } => write!(
                f,
                "record {seq} is the first, but its prev_hash is not the start of a chain: records before it were \
                 deleted"
            ),
        }
    }
}

/// Appends `records` to the chain in `tx`, giving each its seq and hashes. On SQLite the transaction holds the
/// write lock already (`BEGIN IMMEDIATE`); on PostgreSQL an advisory lock is taken before the head is read.
pub(crate) async fn append(tx: &mut Tx, records: &mut [AuditRecord]) -> Result<(), StoreError> {
    if records.is_empty() {
        return Ok(());
    }
    if tx.is_postgres() {
        tx.script(PG_AUDIT_LOCK).await?;
    }
    let head = tx.fetch(HEAD, Vec::new()).await?;
    let (mut seq, mut prev): (u64, String) = match head.first() {
        Some(row) => (row.count(0)?, row.string(1)?),
        None => (0, GENESIS.to_owned()),
    };
    for record in records.iter_mut() {
        seq += 1;
        record.seq = seq;
        record.at = audit_time(record.at);
        record.prev_hash = prev;
        record.hash = record.computed_hash();
        tx.execute(
            "INSERT INTO audit_trail (seq, at, principal, role, run_id, agent_path, call_id, tool, arguments, \
             sql_fingerprint, decision, decision_reason, approval, approval_reason, approved_by, status, \
             prev_hash, hash, surface) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)",
            vec![
                Arg::from(record.seq),
                Arg::from(record.at),
                Arg::from(record.principal.as_str()),
                Arg::from(record.role.clone()),
                Arg::from(record.run_id.as_str()),
                Arg::from(record.agent_path.as_str()),
                Arg::from(record.call_id.as_str()),
                Arg::from(record.tool.as_str()),
                Arg::from(record.arguments.as_str()),
                Arg::from(record.sql_fingerprint.clone()),
                Arg::from(record.decision.as_str()),
                Arg::from(record.decision_reason.clone()),
                Arg::from(record.approval.clone()),
                Arg::from(record.approval_reason.clone()),
                Arg::from(record.approved_by.clone()),
                Arg::from(record.status.as_str()),
                Arg::from(record.prev_hash.as_str()),
                Arg::from(record.hash.as_str()),
                Arg::from(record.surface.clone()),
            ],
        )
        .await?;
        prev = record.hash.clone();
    }
    Ok(())
}

fn audit_record(row: &Row) -> Result<AuditRecord, StoreError> {
    Ok(AuditRecord {
        seq: row.count(0)?,
        at: row.instant(1)?,
        principal: row.string(2)?,
        role: row.text(3)?,
        run_id: row.string(4)?,
        agent_path: row.string(5)?,
        call_id: row.string(6)?,
        tool: row.string(7)?,
        arguments: row.string(8)?,
        sql_fingerprint: row.text(9)?,
        decision: row.string(10)?,
        decision_reason: row.text(11)?,
        approval: row.text(12)?,
        approval_reason: row.text(13)?,
        approved_by: row.text(14)?,
        status: row.string(15)?,
        prev_hash: row.string(16)?,
        hash: row.string(17)?,
        surface: row.text(18)?,
    })
}

impl RunStore {
    /// Appends `records` to the chain now, in a transaction of their own, and returns them as written (with
    /// their seq and hashes): the intent of a call before its tool runs, and what a call made outside a run
    /// came to.
    pub async fn append_audit(
        &self,
        mut records: Vec<AuditRecord>,
    ) -> Result<Vec<AuditRecord>, StoreError> {
        let mut tx = self.pool.begin().await?;
        append(&mut tx, &mut records).await?;
        tx.commit().await?;
        Ok(records)
    }

    /// The audit trail, newest record first: `limit` records after skipping `offset`. A call is one record,
    /// how it ended: the intent chained before its tool ran is left out once the call settled (a call that
    /// never settled, because its process died, shows as `started`). [`RunStore::audit_chain`] has every
    /// record.
    pub async fn audit(&self, limit: u32, offset: u32) -> Result<Vec<AuditRecord>, StoreError> {
        self.audit_page(SETTLED, limit, offset).await
    }

    /// Every record of the audit trail, intents included, newest first: `limit` records after `offset`.
    pub async fn audit_chain(
        &self,
        limit: u32,
        offset: u32,
    ) -> Result<Vec<AuditRecord>, StoreError> {
        self.audit_page(LIST, limit, offset).await
    }

    async fn audit_page(
        &self,
        sql: &'static str,
        limit: u32,
        offset: u32,
    ) -> Result<Vec<AuditRecord>, StoreError> {
        let rows = self
            .pool
            .fetch(
                sql,
                vec![Arg::Int(Some(limit.into())), Arg::Int(Some(offset.into()))],
            )
            .await?;
        rows.iter().map(audit_record).collect()
    }

    /// Walks the audit trail in seq order and checks that every record gives its hash and links to the one
    /// before it; reports the first that does not, and how many records were checked.
    pub async fn verify_audit(&self) -> Result<AuditReport, StoreError> {
        let mut checked = 0;
        let mut previous: Option<(u64, String)> = None;
        loop {
            let after = previous.as_ref().map_or(0, |(seq, _)| *seq);
            let rows = self
                .pool
                .fetch(
                    CHAIN,
                    vec![
                        Arg::Int(Some(i64::try_from(after).unwrap_or(i64::MAX))),
                        Arg::Int(Some(PAGE)),
                    ],
                )
                .await?;
            if rows.is_empty() {
                return Ok(AuditReport {
                    checked,
                    head: previous,
                    broken: None,
                });
            }
            for row in &rows {
                checked += 1;
                let seq = row.count(0)?;
                // A value that cannot be read back was changed too.
                let Ok(record) = audit_record(row) else {
                    return Ok(broken(checked, ChainBreak::Edited { seq }));
                };
                let expected = previous.as_ref().map_or(GENESIS, |(_, hash)| hash.as_str());
                if record.prev_hash != expected {
                    return Ok(broken(
                        checked,
                        ChainBreak::Unlinked {
                            seq,
                            previous: previous.map(|(seq, _)| seq),
                        },
                    ));
                }
                if record.computed_hash() != record.hash {
                    return Ok(broken(checked, ChainBreak::Edited { seq }));
                }
                previous = Some((seq, record.hash));
            }
        }
    }
}

fn broken(checked: u64, problem: ChainBreak) -> AuditReport {
    AuditReport {
        checked,
        head: None,
        broken: Some(problem),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> AuditRecord {
        AuditRecord {
            seq: 1,
            at: DateTime::from_timestamp_micros(1_795_000_000_123_456).unwrap_or_default(),
            principal: "bob".into(),
            role: Some("bookkeeper".into()),
            run_id: "r".into(),
            agent_path: "assistant/expenses".into(),
            call_id: "c1".into(),
            tool: "add_expense".into(),
            arguments: r#"{"amount": 5}"#.into(),
            sql_fingerprint: None,
            decision: "approval".into(),
            decision_reason: Some("needs approval".into()),
            approval: Some("approved".into()),
            approval_reason: None,
            approved_by: Some("bob".into()),
            status: "ok".into(),
            surface: None,
            prev_hash: GENESIS.into(),
            hash: String::new(),
        }
    }

    /// The canonical form is what an outside verifier recomputes: it must never change.
    #[test]
    fn the_canonical_form_and_hash_are_fixed() {
        let r = record();
        assert_eq!(
            r.canonical(),
            r#"[1,"2026-11-18T11:06:40.123456Z","bob","bookkeeper","r","assistant/expenses","c1","add_expense","{\"amount\": 5}",null,"approval","needs approval","approved",null,"bob","ok"]"#
        );
        // sha256(GENESIS || canonical), as Python's hashlib computes it.
        assert_eq!(
            r.computed_hash(),
            "d42da7d8d4bc8b3ef391cd07bb5daf5b16aaa81ae34087c68530dcac2767a09e"
        );
    }

    /// A record with a surface hashes it as one more field; one without keeps the form it was hashed with.
    #[test]
    fn the_surface_is_hashed_when_the_record_has_one() {
        let mut r = record();
        r.surface = Some("mcp".into());
        assert!(r.canonical().ends_with(r#""bob","ok","mcp"]"#));
        assert_ne!(r.computed_hash(), record().computed_hash());
    }

    #[test]
    fn every_field_is_in_the_hash() {
        let base = record().computed_hash();
        let changes: Vec<fn(&mut AuditRecord)> = vec![
            |r| r.seq = 2,
            |r| r.at += chrono::Duration::microseconds(1),
            |r| r.principal.clear(),
            |r| r.role = None,
            |r| r.run_id.push('x'),
            |r| r.agent_path = "assistant".into(),
            |r| r.call_id.push('x'),
            |r| r.tool.push('x'),
            |r| r.arguments = r#"{"amount": 6}"#.into(),
            |r| r.sql_fingerprint = Some(String::new()),
            |r| r.decision = "allowed".into(),
            |r| r.decision_reason = None,
            |r| r.approval = Some("rejected".into()),
            |r| r.approval_reason = Some(String::new()),
            |r| r.approved_by = Some(String::new()),
            |r| r.status = "error".into(),
            |r| r.prev_hash = "1".repeat(64),
        ];
        for (i, change) in changes.into_iter().enumerate() {
            let mut r = record();
            change(&mut r);
            assert_ne!(r.computed_hash(), base, "change {i}");
        }
    }
}
