//! What a store writer holds until it is written: the records it took from its observer, in order, and the
//! flushes waiting for them.
//!
//! While the store answers, a writer takes one batch at a time and holds nothing for long. Once a write fails
//! because the store cannot be written (not because of one bad record), the records are held and tried again,
//! in order; the writer then takes every record as it comes, so that what is held is counted. All the writers
//! of a process together hold at most [`MAX_RECORDS`] records and [`MAX_BYTES`] bytes (of their JSON): a record
//! that does not fit is dropped, and counted in its observer's error.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};

use steward_core::EventRecord;
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::StoreError;

/// Most records held for a store that cannot be written, over every writer of the process.
pub(crate) const MAX_RECORDS: usize = 5_000;

/// Most bytes (the records' JSON) held for a store that cannot be written, over every writer of the process.
pub(crate) const MAX_BYTES: usize = 8 * 1024 * 1024;

/// What held records may take, shared by writers.
#[derive(Debug)]
pub(crate) struct Budget {
    records: AtomicUsize,
    bytes: AtomicUsize,
    max_records: usize,
    max_bytes: usize,
}

/// The budget of every writer of this process.
pub(crate) static PROCESS: Budget = Budget::new(MAX_RECORDS, MAX_BYTES);

impl Budget {
    /// A budget of `max_records` records and `max_bytes` bytes.
    pub(crate) const fn new(max_records: usize, max_bytes: usize) -> Self {
        Self {
            records: AtomicUsize::new(0),
            bytes: AtomicUsize::new(0),
            max_records,
            max_bytes,
        }
    }

    /// Takes one record of `bytes` from the budget; false when it does not fit.
    fn take(&self, bytes: usize) -> bool {
        if self.records.fetch_add(1, Ordering::AcqRel) >= self.max_records {
            self.records.fetch_sub(1, Ordering::AcqRel);
            return false;
        }
        if self.bytes.fetch_add(bytes, Ordering::AcqRel) + bytes > self.max_bytes {
            self.bytes.fetch_sub(bytes, Ordering::AcqRel);
            self.records.fetch_sub(1, Ordering::AcqRel);
            return false;
        }
        true
    }

    /// Gives back one record of `bytes`.
    fn give(&self, bytes: usize) {
        self.records.fetch_sub(1, Ordering::AcqRel);
        self.bytes.fetch_sub(bytes, Ordering::AcqRel);
    }

    /// The records held now.
    #[cfg(test)]
    fn records(&self) -> usize {
        self.records.load(Ordering::Acquire)
    }
}

/// One record taken from the observer.
#[derive(Debug)]
struct Held {
    /// Its place among every record the writer took.
    index: u64,
    record: EventRecord,
    /// The bytes taken from the budget, once it is held for a failing store.
    charged: Option<usize>,
}

/// A flush waiting for the records taken before it.
#[derive(Debug)]
pub(crate) struct Flush {
    /// The records with a lower index are the ones it waits for.
    upto: u64,
    /// When it stops waiting for a store that cannot be written.
    pub(crate) deadline: Instant,
    /// Where its answer goes.
    pub(crate) done: oneshot::Sender<Result<(), StoreError>>,
}

/// The records a writer holds, oldest first, and the flushes that wait for them.
#[derive(Debug)]
pub(crate) struct Backlog {
    queue: VecDeque<Held>,
    next: u64,
    budget: &'static Budget,
    flushes: Vec<Flush>,
}

impl Drop for Backlog {
    fn drop(&mut self) {
        self.clear();
    }
}

/// The size a record is counted for.
fn size(record: &EventRecord) -> usize {
    serde_json::to_vec(record).map_or(0, |json| json.len())
}

impl Backlog {
    /// An empty backlog counted against `budget`.
    pub(crate) fn new(budget: &'static Budget) -> Self {
        Self {
            queue: VecDeque::new(),
            next: 0,
            budget,
            flushes: Vec::new(),
        }
    }

    /// Records held.
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    /// True when nothing is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Takes `record`; `counted` (the store is failing) takes it from the budget too. False when it does not fit:
    /// it is dropped.
    pub(crate) fn push(&mut self, record: EventRecord, counted: bool) -> bool {
        let index = self.next;
        self.next += 1;
        let charged = if counted {
            let bytes = size(&record);
            if !self.budget.take(bytes) {
                return false;
            }
            Some(bytes)
        } else {
            None
        };
        self.queue.push_back(Held {
            index,
            record,
            charged,
        });
        true
    }

    /// Counts every record held against the budget (a write just failed for the store); drops, from the first
    /// that does not fit, that one and every newer one. Returns how many were dropped.
    pub(crate) fn count_all(&mut self) -> usize {
        let mut fits = self.queue.len();
        for (i, held) in self.queue.iter_mut().enumerate() {
            if held.charged.is_some() {
                continue;
            }
            let bytes = size(&held.record);
            if !self.budget.take(bytes) {
                fits = i;
                break;
            }
            held.charged = Some(bytes);
        }
        let dropped = self.queue.len() - fits;
        for held in self.queue.drain(fits..) {
            if let Some(bytes) = held.charged {
                self.budget.give(bytes);
            }
        }
        dropped
    }

    /// The oldest `n` records (fewer when fewer are held).
    pub(crate) fn front(&self, n: usize) -> Vec<&EventRecord> {
        self.queue.iter().take(n).map(|h| &h.record).collect()
    }

    /// Forgets the oldest `n` records: written, or given up.
    pub(crate) fn pop(&mut self, n: usize) {
        for _ in 0..n {
            let Some(held) = self.queue.pop_front() else {
                break;
            };
            if let Some(bytes) = held.charged {
                self.budget.give(bytes);
            }
        }
    }

    /// Forgets every record; returns how many there were.
    pub(crate) fn clear(&mut self) -> usize {
        let n = self.queue.len();
        self.pop(n);
        n
    }

    /// A flush of everything taken so far, until `deadline`.
    pub(crate) fn flush(
        &mut self,
        done: oneshot::Sender<Result<(), StoreError>>,
        deadline: Instant,
    ) {
        self.flushes.push(Flush {
            upto: self.next,
            deadline,
            done,
        });
    }

    /// The flushes whose records are all written (or given up).
    pub(crate) fn flushed(&mut self) -> Vec<Flush> {
        let oldest = self.queue.front().map_or(u64::MAX, |h| h.index);
        let (done, waiting) = std::mem::take(&mut self.flushes)
            .into_iter()
            .partition(|f| f.upto <= oldest);
        self.flushes = waiting;
        done
    }

    /// The flushes past their deadline at `now` (their records are not written).
    pub(crate) fn overdue(&mut self, now: Instant) -> Vec<Flush> {
        let (late, waiting) = std::mem::take(&mut self.flushes)
            .into_iter()
            .partition(|f| f.deadline <= now);
        self.flushes = waiting;
        late
    }

    /// The earliest deadline of a waiting flush.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.flushes.iter().map(|f| f.deadline).min()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use steward_core::Event;

    use super::*;

    fn record(text: &str) -> EventRecord {
        EventRecord::now(
            Event::RunStarted {
                run_id: text.to_owned(),
                agent: "a".to_owned(),
                input: text.to_owned(),
            },
            None,
        )
    }

    #[test]
    fn records_held_for_a_failing_store_are_bounded_in_number() {
        static BUDGET: Budget = Budget::new(3, 1 << 20);
        let mut backlog = Backlog::new(&BUDGET);
        // While the store answers nothing is counted.
        for i in 0..5 {
            assert!(backlog.push(record(&format!("r{i}")), false));
        }
        // A write failed: the oldest three fit, the two newest are dropped.
        assert_eq!(backlog.count_all(), 2);
        assert_eq!(backlog.len(), 3);
        assert_eq!(BUDGET.records(), 3);
        assert!(!backlog.push(record("r5"), true), "the budget is full");
        backlog.pop(1);
        assert!(backlog.push(record("r6"), true));
        assert_eq!(BUDGET.records(), 3);
        drop(backlog);
        assert_eq!(
            BUDGET.records(),
            0,
            "a dropped backlog gives its budget back"
        );
    }

    #[test]
    fn records_held_for_a_failing_store_are_bounded_in_bytes() {
        static BUDGET: Budget = Budget::new(100, 2_000);
        let mut backlog = Backlog::new(&BUDGET);
        // About 1,250 bytes: the text is in the record twice.
        let big = "x".repeat(600);
        assert!(backlog.push(record(&big), true));
        assert!(!backlog.push(record(&big), true));
        assert!(backlog.push(record("small"), true));
        assert_eq!(backlog.clear(), 2);
        assert_eq!(BUDGET.records(), 0);
    }

    #[test]
    fn a_flush_waits_for_the_records_before_it_only() {
        static BUDGET: Budget = Budget::new(100, 1 << 20);
        let mut backlog = Backlog::new(&BUDGET);
        let later = Instant::now() + Duration::from_secs(60);
        let (first, _) = oneshot::channel();
        let (second, _) = oneshot::channel();
        backlog.push(record("a"), false);
        backlog.flush(first, later);
        backlog.push(record("b"), false);
        backlog.flush(second, Instant::now());
        assert!(backlog.flushed().is_empty());
        backlog.pop(1);
        assert_eq!(
            backlog.flushed().len(),
            1,
            "the first flush's record is written"
        );
        assert_eq!(
            backlog.overdue(Instant::now()).len(),
            1,
            "the second is overdue"
        );
        assert!(backlog.next_deadline().is_none());
    }
}
