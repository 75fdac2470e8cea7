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
    Model(Option<String>),
    Principal {
        name: Option<String>,
        role: Option<String>,
    },
    Cost(Option<CostFn>),
    Flush(oneshot::Sender<()>),
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
    /// An observer writing to `store`; its writer task runs on the current Tokio runtime.
    pub fn new(store: RunStore) -> Result<Self, StoreError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| StoreError::NoRuntime)?;
        let (sender, receiver) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared::default());
        let url = store.url().to_owned();
        runtime.spawn(super::writer::run(store, receiver, shared.clone()));
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

    /// The model that runs started from now on use (stored with each run, and used to price its calls).
    pub fn set_model(&self, model: impl Into<String>) {
        self.send(Message::Model(Some(model.into())));
    }

    /// Who runs started from now on are for (the local user when [`Principal::is_local`]), and the role they
    /// run with: both are stored with each run and in the audit record of each of its tool calls.
    pub fn set_principal(&self, principal: &Principal) {
        let name = (!principal.is_local()).then(|| principal.name.clone());
        self.send(Message::Principal {
            name,
            role: principal.role.clone(),
        });
    }

    /// How model calls are priced from now on (`None`: costs are unknown).
    pub fn set_cost(&self, cost: Option<CostFn>) {
        self.send(Message::Cost(cost));
    }

    /// Prices model calls from a price table from now on.
    pub fn set_prices(&self, prices: PriceTable) {
        let cost: CostFn = Arc::new(move |model: &str, usage: Usage| prices.cost(model, usage));
        self.set_cost(Some(cost));
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
