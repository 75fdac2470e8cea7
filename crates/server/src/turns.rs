//! Driving a conversation's turn: the runner for the caller (their role's policy, the run store, the client's
//! stream), the lease that says which server runs it, and where it ends — an answer, a failure, or calls that
//! wait for approval (saved so that any server can decide and resume them).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use steward_app::store::{PendingApproval, StoreObserver};
use steward_core::{
    ApprovalRequest, Fanout, Limits, Message, ModelSettings, Observer, Outcome, Principal, Run,
    RunStatus, Runner,
};
use tokio::sync::{OwnedSemaphorePermit, mpsc};

use crate::events::Forwarder;
use crate::state::{ApiError, InFlight, Settings, Shared};

/// A runner assembled for one turn.
pub(crate) struct Turn {
    pub(crate) runner: Runner,
    /// The run this turn drives (its lease names it).
    run_id: String,
    policy: Arc<steward_app::RolePolicy>,
    pub(crate) forwarder: Arc<Forwarder>,
    recorder: Arc<StoreObserver>,
    agent: String,
    principal: Principal,
    settings: ModelSettings,
    _slot: OwnedSemaphorePermit,
}

/// The events of a turn, as the client reads them.
pub(crate) type Events = mpsc::UnboundedReceiver<Value>;

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
}

/// The most model calls a turn may make when the settings say nothing.
const DEFAULT_ACTIONS: u32 = 20;

/// Assembles the runner of a turn of `agent` for `principal`, with `settings`.
pub(crate) async fn assemble(
    shared: &Arc<Shared>,
    principal: &Principal,
    agent: &str,
    settings: &Settings,
    question: &str,
    home: &Home,
) -> Result<(Turn, Events), ApiError> {
    let app = &shared.app;
    if app.agent_def(agent).is_none() {
        let known = app.agent_names().collect::<Vec<_>>().join(", ");
        return Err(ApiError::bad(format!(
            "there is no agent named `{agent}`; the agents are: {known}"
        )));
    }
    app.may_run(principal, agent)
        .map_err(|e| ApiError::forbidden(e.to_string()))?;
    if let Some(model) = &settings.model
        && !app.config().models.contains_key(model)
    {
        let known = app
            .config()
            .models
            .keys()
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        return Err(ApiError::bad(format!(
            "there is no model named `{model}` in the config's `models`{}",
            if known.is_empty() {
                String::new()
            } else {
                format!("; the models are: {known}")
            }
        )));
    }
    let slot = shared.run_slots.clone().try_acquire_owned().map_err(|_| {
        let mut e = ApiError::new(
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "this server is running its most runs at once ({}); try again shortly",
                shared.limits.concurrent_runs
            ),
        );
        e.retry_after = Some(1);
        e
    })?;
    let models = shared
        .models
        .models_for(app, agent, settings.model.as_deref())
        .await
        .map_err(|e| {
            ApiError::new(
                axum::http::StatusCode::BAD_GATEWAY,
                format!("cannot set up the model: {e:#}"),
            )
        })?;
    let limits = Limits {
        max_steps: settings.max_actions.unwrap_or(DEFAULT_ACTIONS),
        max_tokens: None,
        time_limit: Some(Duration::from_secs(shared.limits.run_seconds)),
    };
    let built = app.agent_for(
        principal,
        agent,
        models.model.clone(),
        models.name.as_deref(),
        &models.named,
        Some(question),
        limits,
    )?;
    let mut model_settings = built.settings;
    if settings.temperature.is_some() {
        model_settings.temperature = settings.temperature;
    }
    if settings.max_tokens.is_some() {
        model_settings.max_output_tokens = settings.max_tokens;
    }
    let recorder = Arc::new(StoreObserver::new(shared.store.clone())?);
    recorder.set_model(models.model.name().to_owned());
    recorder.set_principal(principal);
    let (sender, receiver) = mpsc::unbounded_channel();
    let forwarder = Arc::new(Forwarder::new(home.id(), sender));
    let policy = app.policy(principal);
    let policy_for_turn = policy.clone();
    let observers: Vec<Arc<dyn Observer>> =
        vec![policy.clone(), recorder.clone(), forwarder.clone()];
    let runner = Runner::new(Arc::new(built), models.model)
        .with_observer(Arc::new(Fanout(observers)))
        .with_policy(policy)
        .with_principal(Arc::new(principal.clone()))
        .with_streaming(true);
    Ok((
        Turn {
            runner,
            run_id: String::new(),
            policy: policy_for_turn,
            forwarder,
            recorder,
            agent: agent.to_owned(),
            principal: principal.clone(),
            settings: model_settings,
            _slot: slot,
        },
        receiver,
    ))
}

impl Turn {
    /// Carries over what earlier turns read: when one of them read outside data (its last event says
    /// `tainted_by`), this turn's writes wait for approval as if it had read it itself, since that turn's
    /// answer is in this one's history.
    pub(crate) fn inherit(&self, messages: &[steward_app::store::ConversationMessage]) {
        let by = messages
            .iter()
            .filter_map(|m| m.events.as_ref())
            .find_map(|events| {
                events
                    .as_array()?
                    .iter()
                    .find_map(|e| e.get("tainted_by").and_then(Value::as_str))
                    .map(str::to_owned)
            });
        if let Some(by) = by {
            self.policy.taint(&by);
        }
    }

    /// A new run for `input` after `history`, with this turn's model settings.
    pub(crate) fn start(&mut self, history: &[Message], input: &str, id: String) -> Run {
        self.run_id = id.clone();
        self.runner
            .start_after(history, input, id)
            .with_settings(self.settings)
    }
}

/// The earlier messages of a conversation the model is sent: the last `keep` questions and answers.
pub(crate) fn history(
    messages: &[steward_app::store::ConversationMessage],
    keep: usize,
) -> Vec<Message> {
    let mut out: Vec<Message> = messages
        .iter()
        .filter(|m| !m.content.trim().is_empty())
        .filter_map(|m| match m.role.as_str() {
            "user" => Some(Message::user(m.content.clone())),
            "assistant" => Some(Message::assistant(m.content.clone())),
            _ => None,
        })
        .collect();
    let skip = out.len().saturating_sub(keep);
    out.drain(..skip);
    out
}

/// Drives `run` in a task of its own: the client's stream gets every event, and the turn ends in the store
/// even when the client went away. Returns at once.
pub(crate) fn spawn(shared: Arc<Shared>, turn: Turn, run: Run, home: Home) {
    let guard = InFlight::enter(&shared);
    tokio::spawn(async move {
        let _guard = guard;
        drive(&shared, turn, run, home).await;
    });
}

/// Why driving stopped before the run did.
enum Stopped {
    /// The server is shutting down and its grace period is over.
    Shutdown,
    /// Another server took the conversation: this server's lease ran out and the turn was marked failed.
    LostLease,
}

async fn drive(shared: &Arc<Shared>, turn: Turn, mut run: Run, home: Home) {
    let mut stop = shared.stop_runs.clone();
    let mut renew = tokio::time::interval(shared.renew_every());
    renew.tick().await;
    let status = {
        let driving = turn.runner.drive(&mut run);
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
            }
        }
    };
    let status = match status {
        Ok(status) => status,
        Err(Stopped::Shutdown) => {
            // The run ends here, saved as cancelled.
            turn.runner.cancel(&mut run);
            RunStatus::Done(Outcome::Cancelled)
        }
        Err(Stopped::LostLease) => {
            turn.runner.cancel(&mut run);
            let _ = turn.recorder.flush().await;
            turn.forwarder.send(json!({"type": "error", "run_id": run.id(), "outcome": "interrupted",
                "message": "this server lost the conversation to another one (its lease ran out), so the run was stopped; send the message again"}));
            return;
        }
    };
    let _ = turn.recorder.flush().await;
    finish(shared, &turn, &run, status, &home).await;
}

/// The run a turn's lease names.
fn run_id_of<'a>(_home: &Home, turn: &'a Turn) -> &'a str {
    &turn.run_id
}

/// Ends a turn: the conversation's message and status first, then the last event to the client (so that a
/// client acting on it — deciding an approval, posting again — finds the conversation settled).
async fn finish(shared: &Arc<Shared>, turn: &Turn, run: &Run, status: RunStatus, home: &Home) {
    let mut saved_at = None;
    let (mut event, state, text) = match status {
        RunStatus::AwaitingApproval(requests) => {
            match wait(shared, turn, run, &requests, home).await {
                Ok((event, at)) => {
                    saved_at = Some(at);
                    (event, "waiting", waiting_text(&requests))
                }
                Err(e) => {
                    let message = format!(
                        "the run waits for approval but could not be saved: {}",
                        e.message
                    );
                    (
                        json!({"type": "error", "run_id": run.id(), "outcome": "failed", "message": message}),
                        "failed",
                        message,
                    )
                }
            }
        }
        RunStatus::Done(Outcome::Answered { answer }) => (
            json!({"type": "answer", "run_id": run.id(), "outcome": "answered", "content": answer}),
            "idle",
            answer,
        ),
        RunStatus::Done(outcome) => {
            let message = outcome.to_string();
            (
                json!({"type": "error", "run_id": run.id(), "outcome": outcome.name(), "message": message}),
                "idle",
                message,
            )
        }
        _ => {
            let message = "the run stopped for an unknown reason".to_owned();
            (
                json!({"type": "error", "run_id": run.id(), "outcome": "failed", "message": message}),
                "failed",
                message,
            )
        }
    };
    if let Some(by) = turn.policy.tainted_by() {
        event["tainted_by"] = json!(by);
    }
    if let Home::Conversation(id) = home {
        let mut events = turn.forwarder.kept();
        events.push(event.clone());
        let ended = shared
            .store
            .end_turn(
                id,
                &shared.instance,
                run.id(),
                state,
                Some((&text, &Value::Array(events))),
            )
            .await;
        if !matches!(ended, Ok(true)) {
            // The conversation is no longer this turn's (another server marked it failed, or the store failed):
            // a run waiting for approval there could never be resumed, so it is withdrawn.
            if let Some(at) = saved_at {
                let _ = shared.store.claim_resume(run.id(), at).await;
            }
            event = json!({"type": "error", "run_id": run.id(), "outcome": "interrupted",
            "message": match ended {
                Ok(_) => "the conversation was taken over by another server before this turn ended; send the message again".to_owned(),
                Err(e) => format!("the turn could not be saved: {e}"),
            }});
        }
    }
    turn.forwarder.send(event);
}

fn waiting_text(requests: &[ApprovalRequest]) -> String {
    let calls: Vec<String> = requests
        .iter()
        .map(|r| format!("{} {}", r.call.name, r.call.arguments))
        .collect();
    format!("Waiting for approval: {}", calls.join("; "))
}

/// Saves a run that waits for approval and says what it waits for.
async fn wait(
    shared: &Arc<Shared>,
    turn: &Turn,
    run: &Run,
    requests: &[ApprovalRequest],
    home: &Home,
) -> Result<(Value, chrono::DateTime<chrono::Utc>), ApiError> {
    let mut previews = Vec::new();
    for request in requests {
        previews.push(preview(shared, &turn.agent, &turn.principal, request).await);
    }
    let ids = shared
        .store
        .save_pending(
            run,
            &turn.agent,
            &turn.principal,
            requests,
            &previews,
            turn.policy.tainted_by().as_deref(),
        )
        .await?;
    let pending = shared.store.pending_run(run.id()).await?;
    let conversation = match home {
        Home::Conversation(id) => Some(id.as_str()),
        Home::Detached => None,
    };
    let approvals: Vec<Value> = pending
        .approvals
        .iter()
        .filter(|a| ids.contains(&a.id))
        .map(|a| approval_json(a, conversation))
        .collect();
    Ok((
        json!({"type": "approval", "run_id": run.id(), "approvals": approvals}),
        pending.saved_at,
    ))
}

/// What a call waiting for approval would do, when its tool can tell.
pub(crate) async fn preview(
    shared: &Shared,
    agent: &str,
    principal: &Principal,
    request: &ApprovalRequest,
) -> Option<String> {
    let models = shared
        .models
        .models_for(&shared.app, agent, None)
        .await
        .ok()?;
    let tool = shared.app.tool(&request.call.name, models.model).ok()?;
    let args = serde_json::from_str(&request.call.arguments).ok()?;
    let ctx = steward_core::ToolContext::new("preview", request.call.id.as_str(), "preview")
        .with_tool(request.call.name.as_str())
        .with_principal(Arc::new(principal.clone()));
    tool.preview(&ctx, args).await
}

/// An approval as the API shows it.
pub(crate) fn approval_json(a: &PendingApproval, conversation_id: Option<&str>) -> Value {
    let arguments = serde_json::from_str::<Value>(&a.arguments)
        .unwrap_or_else(|_| Value::String(a.arguments.clone()));
    json!({
        "id": a.id,
        "run_id": a.run_id,
        "conversation_id": conversation_id,
        "call_id": a.call_id,
        "tool": a.tool,
        "arguments": arguments,
        "reason": a.reason,
        "preview": a.preview,
        "created_at": a.requested_at,
        "decision": a.decision,
        "decided_by": a.decided_by,
    })
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
    let question = first_input(&pending.run);
    let (mut turn, events) = assemble(
        shared,
        &pending.principal,
        &pending.agent,
        &settings,
        &question,
        &home,
    )
    .await?;
    turn.run_id = pending.run_id.clone();
    // The decisions to apply: the calls the run waits for now, with this one.
    let mut run = pending.run.clone();
    let waiting = run.awaiting_approval();
    let mut decisions = Vec::new();
    let mut undecided = 0;
    for request in &waiting {
        let id = &request.call.id;
        if *id == found.call_id {
            decisions.push((id.clone(), approval.clone()));
            continue;
        }
        match pending
            .approvals
            .iter()
            .find(|a| a.call_id == *id)
            .map(steward_app::store::PendingApproval::approval)
            .transpose()?
            .flatten()
        {
            Some(decision) => decisions.push((id.clone(), decision)),
            None => undecided += 1,
        }
    }
    if !waiting.iter().any(|r| r.call.id == found.call_id) {
        return Err(ApiError::conflict(format!(
            "the run of approval {} no longer waits for that call",
            found.id
        )));
    }
    // Tried on a copy: an edit that does not fit the tool's schema is refused here, before anything is saved.
    let mut trial = pending.run.clone();
    trial
        .decide(&found.call_id, &approval, &turn.runner.agent().tools)
        .map_err(|e| ApiError::bad(e.to_string()))?;
    shared
        .store
        .decide_approval(&found.id, &approval, by)
        .await
        .map_err(|e| ApiError::conflict(e.to_string()))?;
    if undecided > 0
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
    if let Some(c) = &conversation {
        turn.inherit(&shared.store.conversation_messages(&c.id).await?);
    }
    if let Some(by) = &pending.tainted_by {
        turn.policy.taint(by);
    }
    for (call_id, decision) in decisions {
        if let Err(e) = turn.runner.decide(&mut run, &call_id, decision) {
            eprintln!(
                "steward serve: the decision on {call_id} of run {} was not applied: {e}",
                run.id()
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
