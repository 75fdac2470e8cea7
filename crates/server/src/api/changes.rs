//! Change sets a run staged and saved (`steward ask` without a terminal saves them): listing them and deciding
//! them — applied in one transaction, or discarded — exactly once.

use chrono::{DateTime, Utc};
use steward_app::Surface;
use steward_app::store::ChangeSet;

use super::*;

/// One staged change of a change set.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ChangeView {
    /// The call's id (in the run, or the sub-run, that made it).
    call_id: String,
    /// The tool.
    tool: String,
    /// Its arguments, as it was called.
    arguments: Value,
    /// What it returned when staged (tried in a transaction that was rolled back).
    result: String,
    /// Why it needs approval.
    reason: String,
}

/// A change set.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ChangeSetView {
    /// Its id (`POST /api/changes/{id}` decides it).
    id: String,
    /// The run that staged it.
    run_id: String,
    /// The agent of that run.
    agent: String,
    /// Who asked.
    asked_by: String,
    /// `waiting`, `applied` or `discarded`.
    status: String,
    /// When it was saved.
    saved_at: DateTime<Utc>,
    /// Who decided, once someone did.
    decided_by: Option<String>,
    /// When.
    decided_at: Option<DateTime<Utc>>,
    /// The rows applying it created (`project -1 is #13`), when it did.
    result: Option<String>,
    /// The changes, in order.
    changes: Vec<ChangeView>,
}

impl ChangeSetView {
    fn of(set: &ChangeSet) -> Self {
        Self {
            id: set.id.clone(),
            run_id: set.run_id.clone(),
            agent: set.agent.clone(),
            asked_by: set.principal.name.clone(),
            status: set.status.clone(),
            saved_at: set.saved_at,
            decided_by: set.decided_by.clone(),
            decided_at: set.decided_at,
            result: set.result.clone(),
            changes: set
                .calls
                .iter()
                .map(|s| ChangeView {
                    call_id: s.call.id.clone(),
                    tool: s.call.name.clone(),
                    arguments: s.args.clone(),
                    result: s.output.content.clone(),
                    reason: s.reason.clone(),
                })
                .collect(),
        }
    }
}

/// `GET /api/changes` query.
#[derive(Debug, Deserialize)]
pub(crate) struct ChangesQuery {
    /// Also the sets decided already.
    #[serde(default)]
    all: bool,
}

/// `POST /api/changes/{id}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ChangeDecision {
    /// `apply` or `discard`.
    decision: String,
    /// With `apply`: only these changes (call ids), with the earlier ones whose results they use; the others
    /// are discarded.
    #[serde(default)]
    calls: Option<Vec<String>>,
}

/// What deciding a change set did.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ChangeDecided {
    /// The change set, as decided.
    change_set: ChangeSetView,
    /// How many changes were written (0 when discarded).
    written: usize,
    /// The rows created: `project -1 is #13`.
    created: Vec<String>,
}

/// The change sets that wait (with `?all=true`, decided ones too): the caller's, or everyone's for
/// administrators.
#[utoipa::path(get, path = "/api/changes", tag = "api", responses((status = 200, body = Vec<ChangeSetView>)))]
pub(crate) async fn list_changes(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Query(query): Query<ChangesQuery>,
) -> Api<Json<Vec<ChangeSetView>>> {
    let sets = shared.store.change_sets(query.all).await?;
    Ok(Json(
        sets.iter()
            .filter(|s| caller.admin || s.principal.name == caller.principal.name)
            .map(ChangeSetView::of)
            .collect(),
    ))
}

/// One change set (the caller's, or any for administrators).
#[utoipa::path(get, path = "/api/changes/{id}", tag = "api", params(("id" = String, Path)),
    responses((status = 200, body = ChangeSetView), (status = 404)))]
pub(crate) async fn get_change_set(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Api<Json<ChangeSetView>> {
    let set = visible(&shared, &caller, &id).await?;
    Ok(Json(ChangeSetView::of(&set)))
}

/// Applies (in one transaction, each change checked against its staged result) or discards a change set, once.
#[utoipa::path(post, path = "/api/changes/{id}", tag = "api", params(("id" = String, Path)), request_body = ChangeDecision,
    responses((status = 200, body = ChangeDecided), (status = 404), (status = 409)))]
pub(crate) async fn decide_changes(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    Body(body): Body<ChangeDecision>,
) -> Api<Json<ChangeDecided>> {
    let apply = match body.decision.as_str() {
        "apply" => true,
        "discard" => false,
        other => {
            return Err(ApiError::bad(format!(
                "`decision` is `apply` or `discard`, not `{other}`"
            )));
        }
    };
    let set = visible(&shared, &caller, &id).await?;
    let decided = shared
        .app
        .decide_change_set(
            Surface::Api,
            &set.id,
            apply,
            &caller.principal,
            body.calls.as_deref(),
        )
        .await?;
    let (written, created) = match &decided.applied {
        Some(a) => (a.outputs.len() - a.already, a.created.clone()),
        None => (0, Vec::new()),
    };
    Ok(Json(ChangeDecided {
        change_set: ChangeSetView::of(&decided.set),
        written,
        created,
    }))
}

/// The change set `id` when the caller may see it (theirs, or any for an administrator); else not found.
async fn visible(shared: &Shared, caller: &Caller, id: &str) -> Result<ChangeSet, ApiError> {
    let set = shared.store.change_set(id).await?;
    if caller.admin || set.principal.name == caller.principal.name {
        Ok(set)
    } else {
        Err(ApiError::NotFound(format!(
            "there is nothing with the id `{id}`"
        )))
    }
}
