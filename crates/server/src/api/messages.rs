//! A conversation's turns: posting a message starts a run whose events stream back.

use super::*;

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
    let history = turns::history(&shared, &messages, settings.history.unwrap_or(20)).await;
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

/// Stops the answer being written in conversation `id` (the web UI's Stop): its run is cancelled, the statement
/// it runs on the database too, and the stream of the message ends with an `error` event of outcome
/// `cancelled`; what it staged is discarded. 409 when nothing runs here.
#[utoipa::path(post, path = "/api/conversations/{id}/stop", tag = "api", params(("id" = String, Path)),
    responses((status = 202, description = "The run is being stopped"),
        (status = 404, body = crate::state::ErrorBody), (status = 409, body = crate::state::ErrorBody)))]
pub(crate) async fn stop_turn(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Api<Response> {
    let conversation = owned(&shared, &caller, &id, true).await?;
    if turns::stop(&shared, &id) {
        return Ok((
            axum::http::StatusCode::ACCEPTED,
            Json(json!({"stopping": true})),
        )
            .into_response());
    }
    Err(ApiError::conflict(if conversation.status == "running" {
        "this conversation's answer is being written by another server; stop it there, or wait for it"
    } else {
        "nothing is being answered in this conversation"
    }))
}
