//! Conversations: the caller, starting, listing, reading, changing and deleting conversations.

use super::*;

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

/// The caller: who they are, their role, and the agents and models they may choose.
#[utoipa::path(get, path = "/api/me", tag = "api", responses((status = 200, description = "The caller")))]
pub(crate) async fn me(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
) -> Json<Value> {
    let app = &shared.app;
    let agents: Vec<Value> = app
        .agents_for(&caller.principal)
        .map(|name| {
            let def = app.agent_def(name);
            json!({"name": name,
                   "description": def.map(|d| d.description.clone()).unwrap_or_default(),
                   "starters": def.map(|d| d.starters.clone()).unwrap_or_default()})
        })
        .collect();
    // The models a person may pick: the config's named ones and the default (picking it is picking none).
    // Shown with a password or key in its base URL masked: the spec is the server's, not every user's.
    let default_model = shared.default_model_shown();
    let mut models: Vec<String> = app.config().models.keys().cloned().collect();
    if let Some(spec) = &default_model
        && !models.contains(spec)
    {
        models.insert(0, spec.clone());
    }
    Json(json!({
        "principal": caller.principal.name,
        "role": caller.principal.role,
        "admin": caller.admin,
        "agents": agents,
        "models": models,
        "defaults": {
            "agent": app.default_agent_for(&caller.principal),
            "model": default_model,
        },
        "auth": shared.auth.required(),
        "model_status": shared.model_status(),
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
        // Only the agents the caller may use are named: the others' names are not its business.
        let known = shared
            .app
            .agents_for(&caller.principal)
            .collect::<Vec<_>>()
            .join(", ");
        return Err(ApiError::bad(format!(
            "there is no agent named `{agent}`; the agents you may use are: {known}"
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
