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

mod admin;
mod approvals;
mod changes;
mod conversations;
mod examples;
mod messages;

pub(crate) use admin::*;
pub(crate) use approvals::*;
pub(crate) use changes::*;
pub(crate) use conversations::*;
pub(crate) use examples::*;
pub(crate) use messages::*;

type Api<T> = Result<T, ApiError>;

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

fn who(caller: &Caller) -> String {
    if caller.principal.name.is_empty() {
        "the user".to_owned()
    } else {
        caller.principal.name.clone()
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
