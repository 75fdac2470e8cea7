//! Driving a conversation's turn: the runner for the caller (their role's policy, the run store, the client's
//! stream), the lease that says which server runs it, and where it ends — an answer, a failure, or calls that
//! wait for approval (saved so that any server can decide and resume them).

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize as _;
use serde_json::Value;
use steward_app::{Surface, TurnOptions};
use steward_core::{ApprovalRequest, Limits, Message, Outcome, Principal, Run, RunStatus};
use tokio::sync::{OwnedSemaphorePermit, mpsc};
use tracing::Instrument as _;

use steward_app::store::Reply;

use crate::events::Forwarder;
use crate::state::{ApiError, InFlight, Settings, Shared};
use crate::wire::{ApprovalView, ChangeSetView, RunOutcome, ServerEvent};

/// A turn of the run service, with the client's stream and the run slot it holds.
pub(crate) struct Turn {
    pub(crate) turn: steward_app::Turn,
    /// The run this turn drives (its lease names it).
    run_id: String,
    pub(crate) forwarder: Arc<Forwarder>,
    _slot: OwnedSemaphorePermit,
}

/// The events of a turn, as the client reads them.
pub(crate) type Events = mpsc::UnboundedReceiver<ServerEvent>;

/// Where a turn's outcome goes: a conversation (leased), or nowhere but the client (the OpenAI facade).
#[derive(Clone)]
pub(crate) enum Home {
    Conversation(String),
    Detached,
}

impl Home {
    fn id(&self) -> &str {
        match self {
            Self::Conversation(id) => id,
            Self::Detached => "",
        }
    }

    /// The surface a turn of this home comes from.
    fn surface(&self) -> Surface {
        match self {
            Self::Conversation(_) => Surface::Api,
            Self::Detached => Surface::OpenAi,
        }
    }
}

/// The most model calls a turn may make when the settings say nothing.
const DEFAULT_ACTIONS: u32 = 20;

/// Assembles a turn of `agent` for `principal`, with `settings`, through the run service; `tainted_by` is what
/// earlier turns (or the run before it waited) read from outside.
pub(crate) async fn assemble(
    shared: &Arc<Shared>,
    principal: &Principal,
    agent: &str,
    settings: &Settings,
    question: &str,
    home: &Home,
    tainted_by: Option<String>,
) -> Result<(Turn, Events), ApiError> {
    let app = &shared.app;
    app.check_agent(principal, agent)?;
    let slot = shared
        .run_slots
        .clone()
        .try_acquire_owned()
        .map_err(|_| ApiError::Unavailable {
            message: format!(
                "this server is running its most runs at once ({}); try again shortly",
                shared.limits.concurrent_runs
            ),
            retry_after: Some(1),
        })?;
    // The default model, picked by name (`/api/me` lists it with the config's), is no pick at all.
    let pick = settings
        .model
        .as_deref()
        .filter(|m| !shared.is_default_model(m) || app.config().models.contains_key(*m));
    let models = app
        .models(&shared.choice, agent, pick, Some(&shared.models))
        .await
        .map_err(|e| match e {
            steward_app::AppError::Invalid(_) => ApiError::bad(e.to_string()),
            // Not a provider failing (502): this server has no model until someone gives it one.
            _ if shared.no_model.is_some() => ApiError::Unavailable {
                message: format!(
                    "no model is configured for this server, so messages cannot be answered: {}",
                    crate::state::SET_A_MODEL
                ),
                retry_after: None,
            },
            other => ApiError::BadGateway(format!("cannot set up the model: {other}")),
        })?;
    let (sender, receiver) = mpsc::unbounded_channel();
    let forwarder = Arc::new(Forwarder::new(home.id(), sender));
    let mut options = TurnOptions::new(home.surface(), models, shared.choice.clone());
    if let Some(model) = pick {
        options.choice.spec = Some(model.to_owned());
    }
    options.question = Some(question.to_owned());
    options.limits = Limits {
        max_steps: settings.max_actions.unwrap_or(DEFAULT_ACTIONS),
        max_tokens: None,
        time_limit: Some(Duration::from_secs(shared.limits.run_seconds)),
    };
    options.observers = vec![forwarder.clone()];
    options.streaming = true;
    // Writes held for review are staged and saved as one change set at the end of the turn.
    options.staging = true;
    options.tainted_by = tainted_by;
    options.temperature = settings.temperature;
    options.max_output_tokens = settings.max_tokens;
    // Examples another server saved since are seen within a few seconds (one query at most per interval).
    app.refresh_examples().await;
    let turn = app.turn(principal, agent, options)?;
    Ok((
        Turn {
            turn,
            run_id: String::new(),
            forwarder,
            _slot: slot,
        },
        receiver,
    ))
}

/// What earlier turns of a conversation read: when one of them read outside data (its message was stored
/// with the tool that brought it in), the next turn's writes wait for approval as if it had read it itself,
/// since that turn's answer is in its history.
pub(crate) fn inherited(messages: &[steward_app::store::ConversationMessage]) -> Option<String> {
    messages.iter().find_map(|m| m.tainted_by.clone())
}

/// The events a conversation keeps for an answer, as the contract reads them (an event this server does not
/// know is left out).
pub(crate) fn kept_events(events: &Value) -> Vec<ServerEvent> {
    match events {
        Value::Array(events) => events
            .iter()
            .filter_map(|e| ServerEvent::deserialize(e).ok())
            .collect(),
        _ => Vec::new(),
    }
}

impl Turn {
    /// A new run for `input` after `history`, with this turn's model settings.
    pub(crate) fn start(&mut self, history: &[Message], input: &str, id: String) -> Run {
        self.run_id = id.clone();
        self.turn.start_after(history, input, id)
    }
}

/// The earlier messages of a conversation the model is sent: the last `keep` questions and answers. After an
/// answer whose turn staged a change set comes a note of what became of it (applied by whom, discarded, or
/// still waiting), so the model knows what was written.
pub(crate) async fn history(
    shared: &Shared,
    messages: &[steward_app::store::ConversationMessage],
    keep: usize,
) -> Vec<Message> {
    let said: Vec<&steward_app::store::ConversationMessage> = messages
        .iter()
        .filter(|m| !m.content.trim().is_empty() && matches!(m.role.as_str(), "user" | "assistant"))
        .collect();
    // Only the messages sent are read further (their change sets looked up).
    let kept = &said[said.len().saturating_sub(keep)..];
    let mut out: Vec<Message> = Vec::new();
    for m in kept {
        if m.role == "user" {
            out.push(Message::user(m.content.clone()));
            continue;
        }
        out.push(Message::assistant(m.content.clone()));
        for set in staged_sets(m) {
            if let Ok(now) = shared.store.change_set(&set).await {
                out.push(Message::system(change_note(&now)));
            }
        }
    }
    out
}

/// The ids of the change sets an answer's turn saved (its `changes` events).
fn staged_sets(message: &steward_app::store::ConversationMessage) -> Vec<String> {
    match &message.events {
        Some(events) => kept_events(events)
            .into_iter()
            .filter_map(|e| match e {
                ServerEvent::Changes { change_set, .. } => Some(change_set.id),
                _ => None,
            })
            .collect(),
        None => Vec::new(),
    }
}

/// What became of a change set, for the model.
fn change_note(set: &steward_app::store::ChangeSet) -> String {
    let n = set.calls.len();
    let by = set.decided_by.as_deref().unwrap_or("someone");
    match set.status.as_str() {
        "applied" => {
            let written = set.applied.as_ref().map_or(n, Vec::len);
            format!(
                "(Steward: change set {} was applied by {by}: {written} of the {n} staged changes were written{}.)",
                set.id,
                set.result
                    .as_deref()
                    .map(|r| format!("; the rows created: {r}"))
                    .unwrap_or_default()
            )
        }
        "discarded" => format!(
            "(Steward: change set {} was discarded by {by}: none of its {n} staged changes was written.)",
            set.id
        ),
        _ => format!(
            "(Steward: change set {} still waits for a person's decision: none of its {n} staged changes is \
             written yet.)",
            set.id
        ),
    }
}

/// Drives `run` in a task of its own: the client's stream gets every event, and the turn ends in the store
/// even when the client went away. Returns at once.
pub(crate) fn spawn(shared: Arc<Shared>, turn: Turn, run: Run, home: Home) {
    let guard = InFlight::enter(&shared);
    let span = tracing::info_span!("turn", run_id = %run.id(), conversation = %home.id());
    let stop = Arc::new(tokio::sync::Notify::new());
    if let Home::Conversation(id) = &home {
        stops(&shared).insert(id.clone(), stop.clone());
    }
    tokio::spawn(
        async move {
            let _guard = guard;
            let id = match &home {
                Home::Conversation(id) => Some(id.clone()),
                Home::Detached => None,
            };
            drive(&shared, turn, run, home, &stop).await;
            if let Some(id) = id {
                let mut stops = stops(&shared);
                if stops.get(&id).is_some_and(|s| Arc::ptr_eq(s, &stop)) {
                    stops.remove(&id);
                }
            }
        }
        .instrument(span),
    );
}

/// The turns this server runs, by conversation.
fn stops(
    shared: &Shared,
) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, Arc<tokio::sync::Notify>>> {
    shared
        .stops
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Asks the turn of conversation `id` running on this server to stop; false when none runs here.
pub(crate) fn stop(shared: &Shared, id: &str) -> bool {
    match stops(shared).get(id) {
        Some(stop) => {
            stop.notify_one();
            true
        }
        None => false,
    }
}

/// Why driving stopped before the run did.
enum Stopped {
    /// The server is shutting down and its grace period is over.
    Shutdown,
    /// Another server took the conversation: this server's lease ran out and the turn was marked failed.
    LostLease,
    /// The client of a turn with no conversation (`/v1`) went away.
    ClientGone,
    /// The person stopped it (the web UI's Stop).
    ByPerson,
}

async fn drive(
    shared: &Arc<Shared>,
    turn: Turn,
    mut run: Run,
    home: Home,
    stopped: &tokio::sync::Notify,
) {
    let mut stop = shared.stop_runs.clone();
    let mut renew = tokio::time::interval(shared.renew_every());
    renew.tick().await;
    let status = {
        let driving = turn.turn.runner().drive(&mut run);
        tokio::pin!(driving);
        loop {
            tokio::select! {
                status = &mut driving => break Ok(status),
                _ = renew.tick() => {
                    if let Home::Conversation(id) = &home {
                        let until = shared.lease_until();
                        // A store that does not answer is not a lost lease: the run goes on, and so do renewals.
                        if let Ok(false) = shared.store.renew_lease(id, &shared.instance, run_id_of(&home, &turn), until).await {
                            break Err(Stopped::LostLease);
                        }
                    }
                }
                changed = stop.changed() => {
                    if changed.is_err() || *stop.borrow() {
                        break Err(Stopped::Shutdown);
                    }
                }
                // A `/v1` turn has no conversation to keep its answer: when its client goes, the run (and the
                // statement it runs on the database) is cancelled.
                () = turn.forwarder.client_gone(), if matches!(home, Home::Detached) => {
                    break Err(Stopped::ClientGone);
                }
                () = stopped.notified() => break Err(Stopped::ByPerson),
            }
        }
    };
    let status = match status {
        Ok(status) => status,
        Err(Stopped::Shutdown | Stopped::ByPerson) => {
            // The run ends here (the statement it runs on the database too), saved as cancelled.
            turn.turn.runner().cancel(&mut run);
            RunStatus::Done(Outcome::Cancelled)
        }
        Err(Stopped::ClientGone) => {
            turn.turn.runner().cancel(&mut run);
            let _ = turn.turn.flush().await;
            tracing::info!(
                run_id = run.id(),
                "the client went away; the run was cancelled"
            );
            return;
        }
        Err(Stopped::LostLease) => {
            turn.turn.runner().cancel(&mut run);
            let _ = turn.turn.flush().await;
            tracing::warn!(
                "the conversation's lease was lost to another server; the run was stopped"
            );
            turn.forwarder.send(ServerEvent::error(
                run.id(),
                RunOutcome::Interrupted,
                "this server lost the conversation to another one (its lease ran out), so the run was stopped; \
                 send the message again",
            ));
            return;
        }
    };
    let _ = turn.turn.flush().await;
    finish(shared, &turn, &mut run, status, &home).await;
}

/// The run a turn's lease names.
fn run_id_of<'a>(_home: &Home, turn: &'a Turn) -> &'a str {
    &turn.run_id
}

/// Ends a turn: the conversation's message and status first, then the last event to the client (so that a
/// client acting on it — deciding an approval, posting again — finds the conversation settled).
async fn finish(shared: &Arc<Shared>, turn: &Turn, run: &mut Run, status: RunStatus, home: &Home) {
    let mut saved_at = None;
    // The writes the run staged are saved as one change set (a run that waits keeps them until it ends).
    let mut changes = None;
    let mut unsaved = None;
    if let RunStatus::Done(outcome) = &status {
        changes = save_changes(shared, turn, run, outcome, home).await;
        // Staged changes that could not be kept end the turn as a failure: the answer would speak of them.
        if let Some(ServerEvent::Error { message, .. }) = &changes {
            unsaved = Some(message.clone());
            changes = None;
        }
    }
    let (event, state, text) = match status {
        RunStatus::AwaitingApproval(requests) => match wait(turn, run, &requests, home).await {
            Ok((event, at)) => {
                saved_at = Some(at);
                (event, "waiting", waiting_text(&requests))
            }
            Err(e) => {
                let message = format!(
                    "the run waits for approval but could not be saved: {}",
                    e.message()
                );
                tracing::error!("{message}");
                (
                    ServerEvent::error(run.id(), RunOutcome::Failed, message.clone()),
                    "failed",
                    message,
                )
            }
        },
        RunStatus::Done(Outcome::Answered { answer }) => (
            ServerEvent::Answer {
                run_id: run.id().to_owned(),
                parent_run_id: None,
                outcome: RunOutcome::Answered,
                content: answer.clone(),
                tainted_by: None,
            },
            "idle",
            answer,
        ),
        RunStatus::Done(outcome) => {
            let message = outcome.to_string();
            (
                ServerEvent::error(run.id(), RunOutcome::from(&outcome), message.clone()),
                "idle",
                message,
            )
        }
        _ => {
            let message = "the run stopped for an unknown reason".to_owned();
            (
                ServerEvent::error(run.id(), RunOutcome::Failed, message.clone()),
                "failed",
                message,
            )
        }
    };
    let (event, state, text) = match unsaved {
        Some(message) => (
            ServerEvent::error(run.id(), RunOutcome::Failed, message.clone()),
            "idle",
            message,
        ),
        None => (event, state, text),
    };
    let tainted_by = run.tainted_by().map(str::to_owned);
    let mut event = event.tainted(tainted_by.clone());
    if let Some(changes) = &changes {
        turn.forwarder.send(changes.clone());
    }
    if let Home::Conversation(id) = home {
        // The `changes` event was sent, and so kept, just before.
        let mut events = turn.forwarder.kept();
        events.push(event.clone());
        let events = serde_json::to_value(&events).unwrap_or_else(|_| Value::Array(Vec::new()));
        let ended = shared
            .store
            .end_turn(
                id,
                &shared.instance,
                run.id(),
                state,
                Some(Reply {
                    content: &text,
                    events: &events,
                    tainted_by: tainted_by.as_deref(),
                }),
            )
            .await;
        if !matches!(ended, Ok(true)) {
            // The conversation is no longer this turn's (another server marked it failed, or the store failed):
            // a run waiting for approval there could never be resumed, so it is withdrawn.
            if let Some(at) = saved_at {
                let _ = shared.store.claim_resume(run.id(), at).await;
            }
            let message = match ended {
                Ok(_) => "the conversation was taken over by another server before this turn ended; send the \
                          message again"
                    .to_owned(),
                Err(e) => format!("the turn could not be saved: {e}"),
            };
            tracing::warn!("{message}");
            event = ServerEvent::error(run.id(), RunOutcome::Interrupted, message);
        }
    }
    turn.forwarder.send(event);
}

/// Saves the change set `run` staged, if it staged any: its `changes` event. A run that was cancelled writes
/// nothing: its staged calls are discarded.
async fn save_changes(
    shared: &Arc<Shared>,
    turn: &Turn,
    run: &mut Run,
    outcome: &Outcome,
    home: &Home,
) -> Option<ServerEvent> {
    if run.staged().is_empty() {
        return None;
    }
    if matches!(outcome, Outcome::Cancelled) {
        let staged = run.take_staged();
        let _ = shared
            .app
            .discard_staged(
                home.surface(),
                turn.turn.principal(),
                turn.turn.agent(),
                &staged,
                "nobody (the run was cancelled)",
            )
            .await;
        return None;
    }
    let saved = match turn.turn.save_changes(run).await {
        Ok(Some(id)) => shared.store.change_set(&id).await.map_err(ApiError::from),
        Ok(None) => return None,
        Err(e) => Err(ApiError::from(e)),
    };
    match saved {
        Ok(set) => Some(ServerEvent::Changes {
            run_id: run.id().to_owned(),
            parent_run_id: None,
            change_set: ChangeSetView::of(&set),
        }),
        Err(e) => {
            let message = format!(
                "the changes this run staged could not be saved, so nothing was written: {}",
                e.message()
            );
            tracing::error!(run_id = %run.id(), "{message}");
            Some(ServerEvent::error(run.id(), RunOutcome::Failed, message))
        }
    }
}

fn waiting_text(requests: &[ApprovalRequest]) -> String {
    let calls: Vec<String> = requests
        .iter()
        .map(|r| format!("{} {}", r.call.name, r.call.arguments))
        .collect();
    format!("Waiting for approval: {}", calls.join("; "))
}

/// Saves a run that waits for approval (through the run service) and says what it waits for.
async fn wait(
    turn: &Turn,
    run: &Run,
    requests: &[ApprovalRequest],
    home: &Home,
) -> Result<(ServerEvent, chrono::DateTime<chrono::Utc>), ApiError> {
    let parked = turn.turn.park(run, requests).await?;
    let conversation = match home {
        Home::Conversation(id) => Some(id.as_str()),
        Home::Detached => None,
    };
    let approvals: Vec<ApprovalView> = parked
        .pending
        .approvals
        .iter()
        .filter(|a| parked.ids.contains(&a.id))
        .map(|a| ApprovalView::of(a, conversation))
        .collect();
    Ok((
        ServerEvent::Approval {
            run_id: run.id().to_owned(),
            parent_run_id: None,
            approvals,
            tainted_by: None,
        },
        parked.pending.saved_at,
    ))
}

/// Records `approval` of the waiting call `approval_id` by `by`, and once every call its run waits for is
/// decided, resumes the run on this server: `Ok(None)` when calls still wait (or another server resumed it).
///
/// Nothing is saved unless the run can go on: a run slot is taken and the decision tried on a copy of the run
/// first (an edit must fit the tool's schema), so a refusal (400, 503, …) leaves the call waiting. Exactly one
/// server resumes a run (`claim_resume` compares and sets), and only the decisions of the calls the run waits
/// for now are applied. The caller's right to decide was checked by the route.
pub(crate) async fn decide(
    shared: &Arc<Shared>,
    approval_id: &str,
    approval: steward_core::Approval,
    by: &str,
) -> Result<Option<Events>, ApiError> {
    let found = shared.store.approval(approval_id).await?;
    if let Some(taken) = &found.decision {
        return Err(ApiError::conflict(format!(
            "approval {} was already decided ({taken}{})",
            found.id,
            found
                .decided_by
                .as_deref()
                .map(|b| format!(" by {b}"))
                .unwrap_or_default()
        )));
    }
    let pending = shared.store.pending_run(&found.run_id).await?;
    if pending.resumed_at.is_some() {
        return Err(ApiError::conflict(format!(
            "the run of approval {} no longer waits (it was resumed or withdrawn)",
            found.id
        )));
    }
    let conversation = shared.store.conversation_of_run(&pending.run_id).await?;
    let mut home = match &conversation {
        Some(c) => Home::Conversation(c.id.clone()),
        None => Home::Detached,
    };
    let settings: Settings = conversation
        .as_ref()
        .and_then(|c| serde_json::from_value(c.settings.clone()).ok())
        .unwrap_or_default();
    // A run parked on another database (by `steward ask --db …`) is resumed where it ran, not here.
    shared.app.check_same_database(&pending.context)?;
    for change in shared.app.changes_since(&pending.context) {
        tracing::warn!(run_id = %pending.run_id, "resuming: {change}");
    }
    let question = first_input(&pending.run);
    // What the run had read before it waited (and what earlier turns had, which it started with) is in the
    // saved run.
    let (mut turn, events) = assemble(
        shared,
        &pending.principal,
        &pending.agent,
        &settings,
        &question,
        &home,
        None,
    )
    .await?;
    turn.run_id = pending.run_id.clone();
    if !pending
        .run
        .awaiting_approval()
        .iter()
        .any(|r| r.call.id == found.call_id)
    {
        return Err(ApiError::conflict(format!(
            "the run of approval {} no longer waits for that call",
            found.id
        )));
    }
    // The decisions to apply: the calls the run waits for now, with this one.
    let (decisions, undecided) =
        steward_app::App::decisions(&pending, Some((found.call_id.as_str(), &approval)))?;
    // Tried on a copy: an edit that does not fit the tool's schema is refused here, before anything is saved.
    let mut trial = pending.run.clone();
    turn.turn
        .apply(&mut trial, vec![(found.call_id.clone(), approval.clone())])
        .map_err(|e| ApiError::bad(e.to_string()))?;
    shared
        .store
        .decide_approval(&found.id, &approval, by)
        .await
        .map_err(|e| ApiError::conflict(e.to_string()))?;
    if !undecided.is_empty()
        || !shared
            .store
            .claim_resume(&pending.run_id, pending.saved_at)
            .await?
    {
        return Ok(None);
    }
    if let Home::Conversation(_) = &home
        && !shared
            .store
            .lease_waiting(&pending.run_id, &shared.instance, shared.lease_until())
            .await?
    {
        // The conversation no longer waits for this run (it was marked failed): the run goes on, its result
        // reaches this client and the run store.
        home = Home::Detached;
    }
    let mut run = pending.run.clone();
    for (call_id, decision) in decisions {
        if let Err(e) = turn.turn.apply(&mut run, vec![(call_id.clone(), decision)]) {
            tracing::warn!(
                run_id = %run.id(),
                "the decision on {call_id} was not applied: {e}"
            );
        }
    }
    spawn(shared.clone(), turn, run, home);
    Ok(Some(events))
}

fn first_input(run: &Run) -> String {
    run.messages()
        .iter()
        .rev()
        .find_map(|m| match m {
            Message::User { content } => Some(content.clone()),
            _ => None,
        })
        .unwrap_or_default()
}
