//! The observer that writes runs to the store as they happen.

use std::sync::{Arc, Mutex, PoisonError};

use steward_core::{Event, EventRecord, Observer, Principal, Usage};
use steward_llm::PriceTable;
use tokio::sync::{mpsc, oneshot};

use super::{RunStore, StoreError};

/// Prices a model call: the model's name and the tokens it used give US dollars, or `None` when the price is
/// unknown.
pub type CostFn = Arc<dyn Fn(&str, Usage) -> Option<f64> + Send + Sync>;

/// What the observer sends its writer, in order.
pub(crate) enum Message {
    Record(Box<EventRecord>),
    Flush(oneshot::Sender<()>),
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

/// What the observer and its writer share: the first error.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    error: Mutex<Option<StoreError>>,
}

impl Shared {
    /// Keeps `error` unless an earlier one is kept already.
    pub(crate) fn fail(&self, error: StoreError) {
        let mut slot = self.error.lock().unwrap_or_else(PoisonError::into_inner);
        slot.get_or_insert(error);
    }

    fn error(&self) -> Option<StoreError> {
        self.error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// An [`Observer`] that stores every run it sees (a router's sub-runs included) with its events and tool
/// calls, each record written as it happens: a run whose process dies keeps everything up to its last event.
/// Each tool call, once settled, is also appended to the store's audit trail (see [`RunStore::audit`]).
///
/// Observers are called synchronously by the runner, so records go over an unbounded channel to one writer
/// task that writes them in order (several at a time, in one transaction, when they come quickly). Reporting a
/// record never blocks the run and never fails it: the first write error is kept for [`StoreObserver::error`]
/// and [`StoreObserver::flush`]. Call [`StoreObserver::flush`] before the process ends.
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
        if self.sender.send(message).is_err() {
            self.shared.fail(StoreError::WriterStopped);
        }
    }

    /// Waits until everything reported so far is written; then returns the first write error, if any.
    pub async fn flush(&self) -> Result<(), StoreError> {
        let (done, written) = oneshot::channel();
        self.send(Message::Flush(done));
        if written.await.is_err() {
            self.shared.fail(StoreError::WriterStopped);
        }
        self.error().map_or(Ok(()), Err)
    }

    /// The first error met while writing, if any.
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
