//! The observer that writes runs to the store as they happen.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use steward_core::{Event, EventRecord, Observer, Principal, Usage};
use steward_llm::PriceTable;
use tokio::sync::{mpsc, oneshot};

use super::{RunStore, StoreError};

/// Prices a model call: the model's name and the tokens it used give US dollars, or `None` when the price is
/// unknown.
pub type CostFn = Arc<dyn Fn(&str, Usage) -> Option<f64> + Send + Sync>;

/// How long [`StoreObserver::flush`] waits for records that the store could not take yet.
pub const FLUSH_WAIT: Duration = Duration::from_secs(10);

/// What the observer sends its writer, in order.
pub(crate) enum Message {
    Record(Box<EventRecord>),
    /// Answer once everything sent before is written, or, while the store cannot be written, at the deadline.
    Flush {
        done: oneshot::Sender<Result<(), StoreError>>,
        deadline: tokio::time::Instant,
    },
}

/// What every run an observer stores is recorded with: its model, who it is for, where it came from, and how
/// its model calls are priced.
#[derive(Clone, Default)]
pub struct Recording {
    /// The model (stored with each run, and used to price its calls).
    pub model: Option<String>,
    /// The principal's name (`None`: the local user).
    pub principal: Option<String>,
    /// The role it runs with.
    pub role: Option<String>,
    /// Where the runs come from (`cli`, `api`, `v1`, `mcp`, `eval`), in the audit trail.
    pub surface: Option<String>,
    /// The database the runs use, as its identity (no password; a SQLite path made absolute).
    pub database: Option<String>,
    /// How model calls are priced (`None`: costs are unknown).
    pub cost: Option<CostFn>,
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("model", &self.model)
            .field("principal", &self.principal)
            .field("role", &self.role)
            .field("surface", &self.surface)
            .finish_non_exhaustive()
    }
}

impl Recording {
    /// Runs of `principal` (its name unless it is the local user, and its role).
    pub fn for_principal(principal: &Principal) -> Self {
        Self {
            principal: (!principal.is_local()).then(|| principal.name.clone()),
            role: principal.role.clone(),
            ..Self::default()
        }
    }

    /// The same, priced from `prices`.
    pub fn priced(mut self, prices: PriceTable) -> Self {
        self.cost = Some(Arc::new(move |model: &str, usage: Usage| {
            prices.cost(model, usage)
        }));
        self
    }
}

/// What the observer and its writer share: what was lost, and why what is held is not written yet.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    errors: Mutex<Errors>,
}

#[derive(Debug, Default)]
struct Errors {
    /// Records given up for good.
    lost: u64,
    /// The first reason records were given up (or the writer stopped).
    first_lost: Option<StoreError>,
    /// Why the records held now are not written yet, and how many there are.
    waiting: Option<(StoreError, usize)>,
}

/// The message of an error, without the prefix its display adds.
fn detail(error: &StoreError) -> String {
    match error {
        StoreError::Database { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

impl Shared {
    fn errors(&self) -> std::sync::MutexGuard<'_, Errors> {
        self.errors.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `count` records were given up because of `error` (the first such error is kept, with the count).
    pub(crate) fn lose(&self, count: u64, error: StoreError) {
        let mut errors = self.errors();
        errors.lost += count;
        errors.first_lost.get_or_insert(error);
    }

    /// Why the `held` records held now are not written yet; `None` once the store takes writes again.
    pub(crate) fn waiting(&self, why: Option<(StoreError, usize)>) {
        self.errors().waiting = why;
    }

    /// What was given up, as one error: the first reason, with how many records.
    pub(crate) fn lost(&self) -> Option<StoreError> {
        let errors = self.errors();
        let first = errors.first_lost.clone()?;
        Some(match first {
            StoreError::Database { message, source } if errors.lost > 0 => StoreError::Database {
                message: format!(
                    "{message} ({} record{} of the run not written)",
                    errors.lost,
                    if errors.lost == 1 { "" } else { "s" }
                ),
                source,
            },
            other => other,
        })
    }

    /// Why records are held and not written yet, when they are.
    pub(crate) fn unwritten(&self) -> Option<StoreError> {
        let errors = self.errors();
        let (error, held) = errors.waiting.as_ref()?;
        Some(StoreError::database(format!(
            "{held} {} not written yet: {}; they are kept and written in order once the store takes writes \
             again, while this process runs",
            if *held == 1 {
                "record of the run is"
            } else {
                "records of the run are"
            },
            detail(error)
        )))
    }

    fn error(&self) -> Option<StoreError> {
        self.lost().or_else(|| self.unwritten())
    }
}

/// An [`Observer`] that stores every run it sees (a router's sub-runs included) with its events and tool
/// calls, each record written as it happens: a run whose process dies keeps everything up to its last event.
/// Each tool call, once settled, is also appended to the store's audit trail (see [`RunStore::audit`]).
///
/// Observers are called synchronously by the runner, so records go over an unbounded channel to one writer
/// task that writes them in order (several at a time, in one transaction, when they come quickly). Reporting a
/// record never blocks the run and never fails it. When the store cannot be written (unreachable, read-only,
/// locked), the records are kept and tried again in order, with backoff, until they are written: all the
/// observers of a process keep at most 5,000 records and 8 MiB together, and drop what does not fit. A record
/// the store refuses while it takes others is dropped alone. What was dropped is counted in
/// [`StoreObserver::error`] and [`StoreObserver::flush`]. Call [`StoreObserver::flush`] before the process
/// ends; a writer whose observer is gone keeps trying for ten minutes while its runtime runs.
#[derive(Debug)]
pub struct StoreObserver {
    sender: mpsc::UnboundedSender<Message>,
    shared: Arc<Shared>,
    url: String,
}

impl StoreObserver {
    /// An observer writing to `store` the runs of the local user, model and surface unknown; its writer task runs
    /// on the current Tokio runtime.
    pub fn new(store: RunStore) -> Result<Self, StoreError> {
        Self::recording(store, Recording::default())
    }

    /// An observer writing to `store` runs recorded as `recording` says; its writer task runs on the current
    /// Tokio runtime.
    pub fn recording(store: RunStore, recording: Recording) -> Result<Self, StoreError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| StoreError::NoRuntime)?;
        let (sender, receiver) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared::default());
        let url = store.url().to_owned();
        runtime.spawn(super::writer::run(
            store,
            receiver,
            shared.clone(),
            recording,
        ));
        Ok(Self {
            sender,
            shared,
            url,
        })
    }

    fn send(&self, message: Message) {
        let record = matches!(message, Message::Record(_));
        if self.sender.send(message).is_err() {
            self.shared
                .lose(u64::from(record), StoreError::WriterStopped);
        }
    }

    /// Waits until everything reported so far is written, or, while the store cannot be written, for
    /// [`FLUSH_WAIT`] at most (and the write being tried then); see [`StoreObserver::flush_within`].
    pub async fn flush(&self) -> Result<(), StoreError> {
        self.flush_within(FLUSH_WAIT).await
    }

    /// Waits until everything reported so far is written, or, while the store cannot be written, for `limit`
    /// at most (and the write being tried then). Returns the first reason records were dropped, with how
    /// many, when any were; otherwise, when what was reported is still not written, why (it is still kept and
    /// tried again).
    pub async fn flush_within(&self, limit: Duration) -> Result<(), StoreError> {
        let (done, written) = oneshot::channel();
        self.send(Message::Flush {
            done,
            deadline: tokio::time::Instant::now() + limit,
        });
        match written.await {
            Ok(result) => result,
            Err(_) => {
                self.shared.lose(0, StoreError::WriterStopped);
                Err(self.error().unwrap_or(StoreError::WriterStopped))
            }
        }
    }

    /// The first reason records were dropped (with how many), or else why records are not written yet, if
    /// either.
    pub fn error(&self) -> Option<StoreError> {
        self.shared.error()
    }

    /// The store's URL, secrets redacted.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Observer for StoreObserver {
    fn on_event(&self, event: &Event) {
        self.on_record(&EventRecord::now(event.clone(), None));
    }

    fn on_record(&self, record: &EventRecord) {
        // Streamed pieces are in the reply that follows them; storing each would multiply the writes.
        if matches!(record.event, Event::ModelDelta { .. }) {
            return;
        }
        self.send(Message::Record(Box::new(record.clone())));
    }
}
