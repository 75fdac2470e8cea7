//! Events a runner reports while it drives a run, and the observers that receive them.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::approval::Approval;
use crate::message::ToolCall;
use crate::model::{FinishReason, StreamDelta, Usage};
use crate::outcome::Outcome;

use crate::tool::ToolData;
use crate::validate::Rejection;

/// Something that happened in a run. Events carry everything needed to rebuild the transcript, including the
/// full tool outputs (the model may have been shown a cut version) and operator diagnostics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// A run began.
    RunStarted {
        /// The run.
        run_id: String,
        /// The agent running it.
        agent: String,
        /// The user's input.
        input: String,
    },
    /// The user added a message to a run that had ended (the next question of a conversation); the run goes
    /// on from here.
    FollowUp {
        /// The run.
        run_id: String,
        /// The user's message.
        input: String,
    },
    /// A request is about to be sent to the model.
    ModelRequest {
        /// The run.
        run_id: String,
        /// The step number (1 for the first model call).
        step: u32,
        /// How many messages are sent.
        messages: usize,
        /// How many tools are offered.
        tools: usize,
    },
    /// A piece of the model's reply arrived (only when the runner streams).
    ModelDelta {
        /// The run.
        run_id: String,
        /// The step number.
        step: u32,
        /// The piece.
        delta: StreamDelta,
    },
    /// The model replied.
    ModelResponse {
        /// The run.
        run_id: String,
        /// The step number.
        step: u32,
        /// The text of the reply.
        content: Option<String>,
        /// The tool calls of the reply.
        tool_calls: Vec<ToolCall>,
        /// Tokens used by this call.
        usage: Usage,
        /// Why the model stopped.
        finish_reason: FinishReason,
        /// How long the call took.
        duration_ms: u64,
    },
    /// A tool call passed validation and policy and is about to run.
    ToolCall {
        /// The run.
        run_id: String,
        /// The call.
        call: ToolCall,
    },
    /// A tool call was refused before it ran: unknown tool, invalid JSON or invalid arguments.
    ValidationError {
        /// The run.
        run_id: String,
        /// The call.
        call: ToolCall,
        /// What was wrong; its observation is what the model is shown.
        rejection: Rejection,
    },
    /// The policy denied a tool call.
    ToolDenied {
        /// The run.
        run_id: String,
        /// The call.
        call: ToolCall,
        /// The reason the model is shown.
        reason: String,
    },
    /// A tool call finished.
    ToolResult {
        /// The run.
        run_id: String,
        /// The call id.
        call_id: String,
        /// The tool.
        tool: String,
        /// The full output (or error message) before any cut.
        content: String,
        /// True when the tool failed.
        is_error: bool,
        /// Structured data for UIs.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<ToolData>,
        /// The operator's diagnostic, when the tool failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diagnostic: Option<String>,
        /// The error as a person reads it, when the tool failed and `content` speaks to the model
        /// (see [`crate::ToolError::person`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        person: Option<String>,
        /// How long the call took.
        duration_ms: u64,
    },
    /// A tool call needs approval and is staged in the run's change set instead of waiting: it runs as a dry
    /// run (nothing is kept) and is written only when a person applies the change set.
    CallStaged {
        /// The run.
        run_id: String,
        /// The call.
        call: ToolCall,
        /// Why it needs approval.
        reason: String,
    },
    /// A tool call waits for a person's approval; the run is suspended.
    ApprovalRequested {
        /// The run.
        run_id: String,
        /// The call.
        call: ToolCall,
        /// What the person is asked.
        reason: String,
    },
    /// A person approved or rejected a call.
    ApprovalDecided {
        /// The run.
        run_id: String,
        /// The call id.
        call_id: String,
        /// The decision.
        approval: Approval,
    },
    /// The run ended.
    Finished {
        /// The run.
        run_id: String,
        /// How it ended.
        outcome: Outcome,
        /// Tokens used by the whole run.
        usage: Usage,
        /// Model calls made.
        steps: u32,
    },
}

/// An event with when it happened and where its run sits in the run tree. Runners report records; observers
/// that only need the event implement [`Observer::on_event`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EventRecord {
    /// When the event happened (UTC).
    pub at: DateTime<Utc>,
    /// The run that started this event's run (a router's run for its specialists), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_run_id: Option<String>,
    /// The event.
    #[serde(flatten)]
    pub event: Event,
}

impl EventRecord {
    /// The event, stamped now.
    pub fn now(event: Event, parent_run_id: Option<String>) -> Self {
        Self {
            at: Utc::now(),
            parent_run_id,
            event,
        }
    }
}

/// Receives the events of runs. Closures `Fn(&Event)` are observers too.
pub trait Observer: Send + Sync {
    /// Called for every event, in order.
    fn on_event(&self, event: &Event);

    /// Called for every event with its time and parent run; by default passes the event to
    /// [`Observer::on_event`].
    fn on_record(&self, record: &EventRecord) {
        self.on_event(&record.event);
    }
}

impl<F> Observer for F
where
    F: Fn(&Event) + Send + Sync,
{
    fn on_event(&self, event: &Event) {
        self(event)
    }
}

/// An observer that ignores everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoObserver;

impl Observer for NoObserver {
    fn on_event(&self, _event: &Event) {}
}

/// An observer that keeps every event in memory (for tests and small tools).
#[derive(Clone, Debug, Default)]
pub struct EventLog {
    records: Arc<Mutex<Vec<EventRecord>>>,
}

impl EventLog {
    /// An empty log.
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy of the events so far.
    pub fn events(&self) -> Vec<Event> {
        self.records().into_iter().map(|r| r.event).collect()
    }

    /// A copy of the records (events with their times and parent runs) so far.
    pub fn records(&self) -> Vec<EventRecord> {
        match self.records.lock() {
            Ok(records) => records.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

impl Observer for EventLog {
    fn on_event(&self, event: &Event) {
        self.on_record(&EventRecord::now(event.clone(), None));
    }

    fn on_record(&self, record: &EventRecord) {
        let mut records = self
            .records
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        records.push(record.clone());
    }
}

/// Several observers as one: each record goes to every one, in order.
#[derive(Clone, Default)]
pub struct Fanout(pub Vec<Arc<dyn Observer>>);

impl std::fmt::Debug for Fanout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Fanout({} observers)", self.0.len())
    }
}

impl Observer for Fanout {
    fn on_event(&self, event: &Event) {
        for observer in &self.0 {
            observer.on_event(event);
        }
    }

    fn on_record(&self, record: &EventRecord) {
        for observer in &self.0 {
            observer.on_record(record);
        }
    }
}
