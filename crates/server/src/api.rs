//! The `/api` routes: conversations and their streamed turns, approvals, the caller, charts, and the
//! administrators' runs and audit trail.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use futures_util::Stream;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use steward_app::store::TurnRefused;
use steward_core::{Approval, Run};
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::state::{ApiError, Body, Settings, Shared};
use crate::turns::{self, Events, Home};
use crate::wire::{ApprovalView, ServerEvent};

type Api<T> = Result<T, ApiError>;

/// `POST /api/conversations`.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewConversation {
    /// The agent (default: the caller's default agent).
    #[serde(default)]
    agent: Option<String>,
    /// A title (default: the first message).
    #[serde(default)]
    title: Option<String>,
    /// Settings of its runs.
    #[serde(default)]
    settings: Option<Settings>,
}

/// A new conversation's id.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Created {
    /// The id.
    id: String,
}

/// `POST /api/conversations/{id}/messages`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewMessage {
    /// The user's message.
    content: String,
    /// Settings for this and later messages.
    #[serde(default)]
    settings: Option<Settings>,
}

/// `PATCH /api/conversations/{id}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ChangeConversation {
    /// A new title.
    #[serde(default)]
    title: Option<String>,
    /// Another agent for the next messages.
    #[serde(default)]
    agent: Option<String>,
    /// Settings (replacing the given values).
    #[serde(default)]
    settings: Option<Settings>,
}

/// `POST /api/approvals/{id}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Decision {
    /// `approve`, `deny` or `edit`.
    decision: String,
    /// Why not (with `deny`; the model is told).
    #[serde(default)]
    reason: Option<String>,
    /// The arguments to run the call with instead (with `edit`).
    #[serde(default)]
    arguments: Option<Value>,
}

/// `POST /api/chart`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ChartRequest {
    /// Column names.
    columns: Vec<String>,
    /// Rows, each as long as `columns`.
    #[schema(value_type = Vec<Vec<Object>>)]
    rows: Vec<Vec<Value>>,
    /// `bar` or `line` (default: chosen from the data).
    #[serde(default)]
    kind: Option<String>,
}

/// A conversation in a list.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ConversationSummary {
    /// Its id.
    id: String,
    /// Its title (the first message, shortened, unless set).
    title: String,
    /// The agent that answers.
    agent: String,
    /// `idle`, `running` (a message is being answered), `waiting` (an answer waits for approval) or `failed`
    /// (the last answer failed; a new message may be posted).
    status: String,
    /// The principal who owns it.
    owner: String,
    /// When it was created.
    created_at: chrono::DateTime<chrono::Utc>,
    /// When it last changed.
    updated_at: chrono::DateTime<chrono::Utc>,
}

impl ConversationSummary {
    fn of(c: &steward_app::store::Conversation) -> Self {
        Self {
            id: c.id.clone(),
            title: c.title.clone(),
            agent: c.agent.clone(),
            status: c.status.clone(),
            owner: c.owner.clone(),
            created_at: c.created_at,
            updated_at: c.updated_at,
        }
    }
}

/// A conversation with its messages and the approvals it waits for.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ConversationDetail {
    /// Its id, title, agent, status and times.
    #[serde(flatten)]
    summary: ConversationSummary,
    /// The settings of its runs.
    settings: Settings,
    /// Its messages, oldest first.
    messages: Vec<MessageView>,
    /// The calls its last answer waits for (status `waiting`).
    pending: Vec<ApprovalView>,
}

/// One message of a conversation.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct MessageView {
    /// Its place in the conversation, from 1.
    seq: i64,
    /// `user` or `assistant`.
    role: String,
    /// The text (an answer that failed says what went wrong).
    content: String,
    /// The run that answered (assistant messages) or was started by it (user messages).
    run_id: Option<String>,
    /// The events of the turn that answered, as they streamed but the `delta`s (assistant messages; `null`
    /// for the user's).
    events: Option<Vec<ServerEvent>>,
    /// When it was added.
    at: chrono::DateTime<chrono::Utc>,
}

/// The answer to a decision sent without `Accept: text/event-stream`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct DecisionResult {
    /// The approval decided.
    id: String,
    /// The decision sent.
    decision: String,
    /// Whether the run went on (every call it waited for is decided).
    resumed: bool,
    /// The resumed run's last event (`answer`, `approval` or `error`), or `null`.
    result: Option<ServerEvent>,
}

/// Paging.
#[derive(Debug, Deserialize)]
pub(crate) struct Page {
    #[serde(default)]
    limit: Option<u32>,
    #[serde(default)]
    offset: Option<u32>,
}

/// A turn's events as server-sent events: `event: TYPE`, `data: JSON`.
fn sse(events: Events) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
    let stream = futures_util::stream::unfold(events, |mut events| async move {
        let event = events.recv().await?;
        let sse = SseEvent::default()
            .event(event.kind())
            .json_data(&event)
            .unwrap_or_else(|e| {
                tracing::error!("an event could not be encoded: {e}");
                SseEvent::default().comment("an event could not be encoded")
            });
        Some((Ok(sse), events))
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

/// Waits for the last event of a turn (for clients that asked for JSON, not a stream).
async fn last_event(mut events: Events) -> Option<ServerEvent> {
    let mut last = None;
    while let Some(event) = events.recv().await {
        if event.is_last() {
            last = Some(event);
        }
    }
    last
}

fn wants_stream(headers: &HeaderMap) -> bool {
    headers
        .get("accept")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/event-stream"))
}

/// The conversation `id` if the caller may see it (its owner, or an administrator) — or, with `write`, change
/// it (its owner only: an administrator's run would read with the administrator's rights where the owner
/// sees the transcript).
async fn owned(
    shared: &Shared,
    caller: &Caller,
    id: &str,
    write: bool,
) -> Api<steward_app::store::Conversation> {
    let conversation = match shared.store.conversation(id).await {
        Ok(c) => c,
        Err(steward_app::store::StoreError::NotFound(_)) => {
            return Err(ApiError::not_found("such conversation"));
        }
        Err(e) => return Err(e.into()),
    };
    let mine = conversation.owner == caller.principal.name;
    if !mine && !caller.admin {
        return Err(ApiError::not_found("such conversation"));
    }
    if write && !mine {
        return Err(ApiError::forbidden(
            "only the conversation's owner may post to it or change it (administrators may read it)",
        ));
    }
    Ok(conversation)
}

/// The caller: who they are, their role, and the agents and models they may choose.
#[utoipa::path(get, path = "/api/me", tag = "api", responses((status = 200, description = "The caller")))]
pub(crate) async fn me(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
) -> Json<Value> {
    let app = &shared.app;
    let agents: Vec<Value> = app
        .agent_names()
        .filter(|name| app.may_run(&caller.principal, name).is_ok())
        .map(|name| {
            json!({"name": name, "description": app.agent_def(name).map(|d| d.description.clone()).unwrap_or_default()})
        })
        .collect();
    let models: Vec<&String> = app.config().models.keys().collect();
    Json(json!({
        "principal": caller.principal.name,
        "role": caller.principal.role,
        "admin": caller.admin,
        "agents": agents,
        "models": models,
        "defaults": {
            "agent": app.default_agent_for(&caller.principal),
            "model": app.config().defaults.model,
        },
        "auth": shared.auth.required(),
    }))
}

/// Starts a conversation.
#[utoipa::path(post, path = "/api/conversations", tag = "api", request_body = NewConversation,
    responses((status = 201, body = Created), (status = 400, body = crate::state::ErrorBody), (status = 403, body = crate::state::ErrorBody)))]
pub(crate) async fn create_conversation(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    body: axum::body::Bytes,
) -> Api<(StatusCode, Json<Created>)> {
    let body: NewConversation = if body.iter().all(u8::is_ascii_whitespace) {
        NewConversation::default()
    } else {
        serde_json::from_slice(&body)
            .map_err(|e| ApiError::bad(format!("the body is not a valid conversation: {e}")))?
    };
    let settings = body.settings.unwrap_or_default();
    settings.check()?;
    let agent = body
        .agent
        .or_else(|| settings.agent.clone())
        .unwrap_or_else(|| shared.app.default_agent_for(&caller.principal));
    if shared.app.agent_def(&agent).is_none() {
        let known = shared.app.agent_names().collect::<Vec<_>>().join(", ");
        return Err(ApiError::bad(format!(
            "there is no agent named `{agent}`; the agents are: {known}"
        )));
    }
    shared
        .app
        .may_run(&caller.principal, &agent)
        .map_err(|e| ApiError::forbidden(e.to_string()))?;
    let id = Run::generate_id();
    let settings = serde_json::to_value(&settings).map_err(ApiError::internal)?;
    shared
        .store
        .create_conversation(
            &id,
            &caller.principal.name,
            body.title.as_deref().unwrap_or(""),
            &agent,
            &settings,
        )
        .await?;
    Ok((StatusCode::CREATED, Json(Created { id })))
}

/// The caller's conversations, newest first (everyone's for administrators with `?all=true`).
#[utoipa::path(get, path = "/api/conversations", tag = "api", responses((status = 200, body = Vec<ConversationSummary>)))]
pub(crate) async fn list_conversations(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Query(all): Query<std::collections::HashMap<String, String>>,
) -> Api<Json<Vec<ConversationSummary>>> {
    let everyone = caller.admin && all.get("all").is_some_and(|v| v == "true");
    let owner = (!everyone).then_some(caller.principal.name.as_str());
    let list = shared.store.conversations(owner, 200).await?;
    Ok(Json(list.iter().map(ConversationSummary::of).collect()))
}

/// A conversation with its messages and the approvals it waits for.
#[utoipa::path(get, path = "/api/conversations/{id}", tag = "api", params(("id" = String, Path)),
    responses((status = 200, body = ConversationDetail), (status = 404, body = crate::state::ErrorBody)))]
pub(crate) async fn get_conversation(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Api<Json<ConversationDetail>> {
    let conversation = owned(&shared, &caller, &id, false).await?;
    let messages = shared.store.conversation_messages(&id).await?;
    let pending: Vec<ApprovalView> = match (&conversation.run_id, conversation.status.as_str()) {
        (Some(run_id), "waiting") => match shared.store.pending_run(run_id).await {
            Ok(p) => p
                .approvals
                .iter()
                .filter(|a| a.decision.is_none())
                .map(|a| ApprovalView::of(a, Some(&id)))
                .collect(),
            Err(_) => Vec::new(),
        },
        _ => Vec::new(),
    };
    let messages = messages
        .into_iter()
        .map(|m| MessageView {
            events: m.events.as_ref().map(turns::kept_events),
            seq: m.seq,
            role: m.role,
            content: m.content,
            run_id: m.run_id,
            at: m.at,
        })
        .collect();
    Ok(Json(ConversationDetail {
        summary: ConversationSummary::of(&conversation),
        settings: serde_json::from_value(conversation.settings.clone()).unwrap_or_default(),
        messages,
        pending,
    }))
}

/// Changes a conversation's title or settings.
#[utoipa::path(patch, path = "/api/conversations/{id}", tag = "api", params(("id" = String, Path)), request_body = ChangeConversation,
    responses((status = 200, body = ConversationSummary), (status = 404, body = crate::state::ErrorBody)))]
pub(crate) async fn patch_conversation(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    Body(body): Body<ChangeConversation>,
) -> Api<Json<ConversationSummary>> {
    let conversation = owned(&shared, &caller, &id, true).await?;
    let settings = match &body.settings {
        Some(s) => {
            s.check()?;
            let current: Settings =
                serde_json::from_value(conversation.settings.clone()).unwrap_or_default();
            Some(serde_json::to_value(current.overlay(s)).map_err(ApiError::internal)?)
        }
        None => None,
    };
    let agent = body
        .agent
        .clone()
        .or_else(|| body.settings.as_ref().and_then(|s| s.agent.clone()));
    if let Some(agent) = &agent {
        if shared.app.agent_def(agent).is_none() {
            return Err(ApiError::bad(format!("there is no agent named `{agent}`")));
        }
        shared
            .app
            .may_run(&caller.principal, agent)
            .map_err(|e| ApiError::forbidden(e.to_string()))?;
    }
    let changed = shared
        .store
        .update_conversation(
            &id,
            body.title.as_deref(),
            agent.as_deref(),
            settings.as_ref(),
        )
        .await?;
    Ok(Json(ConversationSummary::of(&changed)))
}

/// Deletes a conversation.
#[utoipa::path(delete, path = "/api/conversations/{id}", tag = "api", params(("id" = String, Path)),
    responses((status = 204, description = "Deleted"), (status = 404, body = crate::state::ErrorBody)))]
pub(crate) async fn delete_conversation(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Api<StatusCode> {
    owned(&shared, &caller, &id, true).await?;
    match shared.store.delete_conversation(&id).await? {
        steward_app::store::Deleted::Deleted => {}
        steward_app::store::Deleted::NotFound => {
            return Err(ApiError::not_found("such conversation"));
        }
        steward_app::store::Deleted::Busy => {
            return Err(ApiError::conflict(
                "a message of this conversation is being answered; delete it when the answer is in",
            ));
        }
    }
    Ok(StatusCode::NO_CONTENT)
}

/// Posts a message: the answer streams as server-sent events, ending with `answer`, `approval` or `error`.
#[utoipa::path(post, path = "/api/conversations/{id}/messages", tag = "api", params(("id" = String, Path)), request_body = NewMessage,
    responses((status = 200, description = "Server-sent events of the run (`event: TYPE`, `data: JSON`), one `ServerEvent` each", body = ServerEvent, content_type = "text/event-stream"),
        (status = 404, body = crate::state::ErrorBody), (status = 409, body = crate::state::ErrorBody),
        (status = 503, body = crate::state::ErrorBody)))]
pub(crate) async fn post_message(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    Body(body): Body<NewMessage>,
) -> Api<Response> {
    let content = body.content.trim();
    if content.is_empty() {
        return Err(ApiError::bad("the message is empty"));
    }
    let conversation = owned(&shared, &caller, &id, true).await?;
    let saved: Settings = serde_json::from_value(conversation.settings.clone()).unwrap_or_default();
    let settings = match &body.settings {
        Some(s) => {
            s.check()?;
            saved.overlay(s)
        }
        None => saved.clone(),
    };
    let agent = settings
        .agent
        .clone()
        .unwrap_or_else(|| conversation.agent.clone());
    let home = Home::Conversation(id.clone());
    let messages = shared.store.conversation_messages(&id).await?;
    let (mut turn, events) = turns::assemble(
        &shared,
        &caller.principal,
        &agent,
        &settings,
        content,
        &home,
        turns::inherited(&messages),
    )
    .await?;
    let history = turns::history(&messages, settings.history.unwrap_or(20));
    let run_id = Run::generate_id();
    let until = shared.lease_until();
    match shared
        .store
        .begin_turn(&id, content, &run_id, &shared.instance, until)
        .await?
    {
        Ok(()) => {}
        Err(TurnRefused::NotFound) => return Err(ApiError::not_found("such conversation")),
        Err(TurnRefused::Busy) => {
            return Err(ApiError::conflict(
                "a message of this conversation is being answered; send this one when the answer is in",
            ));
        }
        Err(TurnRefused::Waiting) => {
            return Err(ApiError::conflict(
                "this conversation waits for an approval: approve or deny it first (GET /api/approvals)",
            ));
        }
    }
    // Settings are kept once the message was taken (a refused message changes nothing).
    if settings != saved || conversation.title.is_empty() {
        let value = serde_json::to_value(&settings).map_err(ApiError::internal)?;
        let title: String = content.chars().take(60).collect();
        let _ = shared
            .store
            .update_conversation(
                &id,
                conversation.title.is_empty().then_some(title.as_str()),
                settings.agent.as_deref(),
                Some(&value),
            )
            .await;
    }
    let run = turn.start(&history, content, run_id);
    turns::spawn(shared.clone(), turn, run, home);
    Ok(sse(events).into_response())
}

/// The approvals waiting: the caller's, or everyone's for administrators.
#[utoipa::path(get, path = "/api/approvals", tag = "api", responses((status = 200, body = Vec<ApprovalView>)))]
pub(crate) async fn list_approvals(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
) -> Api<Json<Vec<ApprovalView>>> {
    let mut out = Vec::new();
    for approval in shared.store.approvals(false).await? {
        let conversation = shared.store.conversation_of_run(&approval.run_id).await?;
        let owner = match &conversation {
            Some(c) => c.owner.clone(),
            None => match shared.store.pending_run(&approval.run_id).await {
                Ok(p) => p.principal.name,
                Err(_) => continue,
            },
        };
        if owner == caller.principal.name || caller.admin {
            out.push(ApprovalView::of(
                &approval,
                conversation.as_ref().map(|c| c.id.as_str()),
            ));
        }
    }
    Ok(Json(out))
}

/// Decides a call that waits for approval; once every call of its run is decided, the run goes on (streamed
/// with `Accept: text/event-stream`).
#[utoipa::path(post, path = "/api/approvals/{id}", tag = "api", params(("id" = String, Path)), request_body = Decision,
    responses((status = 200, description = "The decision, and the resumed run's last event (JSON) or its event stream (`Accept: text/event-stream`)",
            content((DecisionResult = "application/json"), (ServerEvent = "text/event-stream"))),
        (status = 404, body = crate::state::ErrorBody), (status = 409, body = crate::state::ErrorBody)))]
pub(crate) async fn decide(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Body(body): Body<Decision>,
) -> Api<Response> {
    let approval = match body.decision.as_str() {
        "approve" => Approval::Approve,
        "deny" => Approval::Reject {
            reason: Some(
                body.reason
                    .clone()
                    .filter(|r| !r.trim().is_empty())
                    .unwrap_or_else(|| format!("{} said no", who(&caller))),
            ),
        },
        "edit" => match &body.arguments {
            Some(arguments) if arguments.is_object() => Approval::Edit {
                arguments: arguments.clone(),
            },
            _ => {
                return Err(ApiError::bad(
                    "an edit needs `arguments`: the JSON object to run the call with",
                ));
            }
        },
        other => {
            return Err(ApiError::bad(format!(
                "`decision` must be approve, deny or edit, not `{other}`"
            )));
        }
    };
    let found = shared
        .store
        .approval(&id)
        .await
        .map_err(|_| ApiError::not_found("such approval"))?;
    let pending = shared.store.pending_run(&found.run_id).await?;
    let conversation = shared.store.conversation_of_run(&found.run_id).await?;
    let owner = conversation
        .as_ref()
        .map_or(pending.principal.name.clone(), |c| c.owner.clone());
    if owner != caller.principal.name && !caller.admin {
        return Err(ApiError::not_found("such approval"));
    }
    // Decided and resumed in a task of its own: a client that goes away mid-request cannot leave the decision
    // saved and the run not resumed.
    let task = {
        let shared = shared.clone();
        let by = who(&caller);
        let found_id = found.id.clone();
        tokio::spawn(async move { turns::decide(&shared, &found_id, approval, &by).await })
    };
    let resumed = task
        .await
        .map_err(|e| ApiError::internal(format!("deciding failed: {e}")))??;
    match resumed {
        Some(events) if wants_stream(&headers) => Ok(sse(events).into_response()),
        Some(events) => {
            let result = last_event(events).await;
            Ok(Json(DecisionResult {
                id: found.id,
                decision: body.decision,
                resumed: true,
                result,
            })
            .into_response())
        }
        None => Ok(Json(DecisionResult {
            id: found.id,
            decision: body.decision,
            resumed: false,
            result: None,
        })
        .into_response()),
    }
}

fn who(caller: &Caller) -> String {
    if caller.principal.name.is_empty() {
        "the user".to_owned()
    } else {
        caller.principal.name.clone()
    }
}

/// Renders a chart of rows as SVG.
#[utoipa::path(post, path = "/api/chart", tag = "api", request_body = ChartRequest,
    responses((status = 200, description = "The chart", content_type = "image/svg+xml"), (status = 422, body = crate::state::ErrorBody)))]
pub(crate) async fn chart(Body(body): Body<ChartRequest>) -> Api<Response> {
    let kind = match body.kind.as_deref() {
        None => None,
        Some("bar") => Some(crate::chart::ChartKind::Bar),
        Some("line") => Some(crate::chart::ChartKind::Line),
        Some(other) => {
            return Err(ApiError::bad(format!(
                "`kind` must be bar or line, not `{other}`"
            )));
        }
    };
    match crate::chart::chart(&body.columns, &body.rows, kind) {
        Some(chart) => Ok((
            [(axum::http::header::CONTENT_TYPE, "image/svg+xml")],
            chart.svg,
        )
            .into_response()),
        None => Err(ApiError::Unprocessable(
            "nothing to chart: the rows need a numeric column and at least two rows".to_owned(),
        )),
    }
}

fn admin_only(caller: &Caller) -> Api<()> {
    if caller.admin {
        Ok(())
    } else {
        Err(ApiError::forbidden(
            "only an administrator's role (`admin: true`) may read runs and the audit trail",
        ))
    }
}

/// Stored runs, newest first (administrators).
#[utoipa::path(get, path = "/api/runs", tag = "admin", responses((status = 200, description = "Runs"), (status = 403, body = crate::state::ErrorBody)))]
pub(crate) async fn runs(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Query(page): Query<Page>,
) -> Api<Json<Value>> {
    admin_only(&caller)?;
    let list = shared
        .store
        .list(page.limit.unwrap_or(50).min(1000), page.offset.unwrap_or(0))
        .await?;
    Ok(Json(json!(list)))
}

/// One stored run with its events (administrators).
#[utoipa::path(get, path = "/api/runs/{id}", tag = "admin", params(("id" = String, Path)),
    responses((status = 200, description = "The run"), (status = 403, body = crate::state::ErrorBody), (status = 404, body = crate::state::ErrorBody)))]
pub(crate) async fn run(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Api<Json<Value>> {
    admin_only(&caller)?;
    let detail = shared.store.get(&id).await?;
    Ok(Json(json!(detail)))
}

/// The audit trail, newest first, and whether its chain is intact (administrators).
#[utoipa::path(get, path = "/api/audit", tag = "admin", responses((status = 200, description = "Audit records"), (status = 403, body = crate::state::ErrorBody)))]
pub(crate) async fn audit(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Query(page): Query<Page>,
) -> Api<Json<Value>> {
    admin_only(&caller)?;
    let records = shared
        .store
        .audit(
            page.limit.unwrap_or(100).min(1000),
            page.offset.unwrap_or(0),
        )
        .await?;
    let report = shared.store.verify_audit().await?;
    Ok(Json(
        json!({"records": records, "intact": report.is_intact(), "checked": report.checked}),
    ))
}
