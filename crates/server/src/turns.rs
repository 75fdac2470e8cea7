//! Driving a conversation's turn: the runner for the caller (their role's policy, the run store, the client's
//! stream), the lease that says which server runs it, and where it ends — an answer, a failure, or calls that
//! wait for approval (saved so that any server can decide and resume them).

use std::collections::BTreeMap;
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
    pub(crate) fn start(&self, history: &[Message], input: &str, id: String) -> Run {
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

async fn drive(shared: &Arc<Shared>, turn: Turn, mut run: Run, home: Home) {
    let mut stop = shared.stop_runs.clone();
    let mut renew = tokio::time::interval(shared.renew_every());
    renew.tick().await;
    let status = {
        let driving = turn.runner.drive(&mut run);
        tokio::pin!(driving);
        loop {
            tokio::select! {
                status = &mut driving => break Some(status),
                _ = renew.tick() => {
                    if let Home::Conversation(id) = &home {
                        let until = shared.lease_until();
                        let _ = shared.store.renew_lease(id, &shared.instance, until).await;
                    }
                }
                changed = stop.changed() => {
                    if changed.is_err() || *stop.borrow() {
                        break None;
                    }
                }
            }
        }
    };
    let status = match status {
        Some(status) => status,
        None => {
            // The server is shutting down and its grace period is over: the run ends here, saved as cancelled.
            turn.runner.cancel(&mut run);
            RunStatus::Done(Outcome::Cancelled)
        }
    };
    let _ = turn.recorder.flush().await;
    finish(shared, &turn, &run, status, &home).await;
}

/// Ends a turn: the last event to the client, the conversation's message and status.
async fn finish(shared: &Arc<Shared>, turn: &Turn, run: &Run, status: RunStatus, home: &Home) {
    let (event, state, text) = match status {
        RunStatus::AwaitingApproval(requests) => {
            match wait(shared, turn, run, &requests, home).await {
                Ok(event) => {
                    let text = waiting_text(&requests);
                    (event, "waiting", text)
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
    let mut event = event;
    if let Some(by) = turn.policy.tainted_by() {
        event["tainted_by"] = json!(by);
    }
    turn.forwarder.send(event);
    if let Home::Conversation(id) = home {
        let events = Value::Array(turn.forwarder.kept());
        let _ = shared
            .store
            .end_turn(id, &shared.instance, state, Some((&text, &events)))
            .await;
    }
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
) -> Result<Value, ApiError> {
    let mut previews = Vec::new();
    for request in requests {
        previews.push(preview(shared, &turn.agent, &turn.principal, request).await);
    }
    let ids = shared
        .store
        .save_pending(run, &turn.agent, &turn.principal, requests, &previews)
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
    Ok(json!({"type": "approval", "run_id": run.id(), "approvals": approvals}))
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

/// Resumes the run `run_id` once every call it waits for is decided: the conversation is leased to this
/// server (exactly one server resumes a run), the decisions are handed to a fresh runner and the run is driven
/// on. `Ok(None)` when calls still wait or another server took it.
pub(crate) async fn resume(shared: &Arc<Shared>, run_id: &str) -> Result<Option<Events>, ApiError> {
    let pending = shared.store.pending_run(run_id).await?;
    if pending.resumed_at.is_some() || pending.approvals.iter().any(|a| a.decision.is_none()) {
        return Ok(None);
    }
    let conversation = shared.store.conversation_of_run(&pending.run_id).await?;
    let home = match &conversation {
        Some(c) => Home::Conversation(c.id.clone()),
        None => Home::Detached,
    };
    let settings: Settings = conversation
        .as_ref()
        .and_then(|c| serde_json::from_value(c.settings.clone()).ok())
        .unwrap_or_default();
    let question = first_input(&pending.run);
    let (turn, events) = assemble(
        shared,
        &pending.principal,
        &pending.agent,
        &settings,
        &question,
        &home,
    )
    .await?;
    if let Home::Conversation(_) = &home {
        let until = shared.lease_until();
        if !shared
            .store
            .lease_waiting(&pending.run_id, &shared.instance, until)
            .await?
        {
            return Ok(None);
        }
    }
    if let Some(c) = &conversation {
        turn.inherit(&shared.store.conversation_messages(&c.id).await?);
    }
    let mut run = pending.run;
    let mut decided = BTreeMap::new();
    for a in &pending.approvals {
        if let Some(approval) = a.approval()? {
            decided.insert(a.call_id.clone(), approval);
        }
    }
    for (call_id, approval) in decided {
        if let Err(e) = turn.runner.decide(&mut run, &call_id, approval) {
            // A decision the run no longer waits for: say so on the stream and go on with the others.
            turn.forwarder.send(json!({"type": "error", "run_id": run.id(), "outcome": "failed",
                "message": format!("the decision on {call_id} could not be applied: {e}"), "final": false}));
        }
    }
    shared.store.mark_resumed(&pending.run_id).await?;
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
