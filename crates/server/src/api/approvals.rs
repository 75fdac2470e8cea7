//! Calls that wait for approval: listing them and deciding them (which resumes their run).

use super::*;

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

/// The approvals waiting: the caller's, those their role approves (`approve_by`), or everyone's for
/// administrators.
#[utoipa::path(get, path = "/api/approvals", tag = "api", responses((status = 200, body = Vec<ApprovalView>)))]
pub(crate) async fn list_approvals(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
) -> Api<Json<Vec<ApprovalView>>> {
    let mut out = Vec::new();
    for approval in shared.store.approvals(false).await? {
        let conversation = shared.store.conversation_of_run(&approval.run_id).await?;
        let mine = caller.admin
            || conversation
                .as_ref()
                .is_some_and(|c| c.owner == caller.principal.name);
        // The run is read only when the conversation does not settle it: another principal's run, which the
        // caller sees when their role approves the asker's (`approve_by`).
        let visible = mine
            || match shared.store.pending_run(&approval.run_id).await {
                Ok(p) => {
                    shared.app.config().reviews(&p.principal, &caller.principal)
                        && !shared
                            .app
                            .call_hides_rows_from(
                                &p.principal,
                                &approval.tool,
                                &approval.arguments,
                                &caller.principal,
                            )
                            .await
                }
                Err(_) => false,
            };
        if visible {
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
    if owner != caller.principal.name
        && !caller.admin
        && (!shared
            .app
            .config()
            .reviews(&pending.principal, &caller.principal)
            || shared
                .app
                .call_hides_rows_from(
                    &pending.principal,
                    &found.tool,
                    &found.arguments,
                    &caller.principal,
                )
                .await)
    {
        return Err(ApiError::not_found("such approval"));
    }
    // Four eyes: letting the call run is for the roles the asker's role names (denying writes nothing).
    if !matches!(approval, Approval::Reject { .. }) {
        shared
            .app
            .may_apply_for(&pending.principal, &caller.principal)?;
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
