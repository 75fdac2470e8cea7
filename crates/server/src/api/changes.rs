//! Change sets a run staged and saved (`steward ask` without a terminal saves them): listing them and deciding
//! them — applied in one transaction, or discarded — exactly once.

use steward_app::Surface;
use steward_app::store::ChangeSet;

use crate::wire::ChangeSetView;

use super::*;

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

/// The change sets that wait (with `?all=true`, decided ones too): the caller's and those their role applies
/// (`approve_by`), or everyone's for administrators.
#[utoipa::path(get, path = "/api/changes", tag = "api", responses((status = 200, body = Vec<ChangeSetView>)))]
pub(crate) async fn list_changes(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Query(query): Query<ChangesQuery>,
) -> Api<Json<Vec<ChangeSetView>>> {
    let sets = shared.store.change_sets(query.all).await?;
    let mut shown = Vec::new();
    for set in &sets {
        if caller.admin || reviews(&shared, set, &caller.principal).await {
            shown.push(ChangeSetView::of(set));
        }
    }
    Ok(Json(shown))
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

/// The change set `id` when the caller may see it (theirs, one their role applies by `approve_by`, or any for
/// an administrator); else not found.
async fn visible(shared: &Shared, caller: &Caller, id: &str) -> Result<ChangeSet, ApiError> {
    let set = match shared.store.change_set(id).await {
        Ok(set) => set,
        // Other people's ids are not listed to someone who may not see them.
        Err(steward_app::store::StoreError::Ambiguous { .. }) if !caller.admin => {
            return Err(ApiError::NotFound(format!(
                "there is nothing with the id `{id}`"
            )));
        }
        Err(e) => return Err(e.into()),
    };
    if caller.admin || reviews(shared, &set, &caller.principal).await {
        Ok(set)
    } else {
        Err(ApiError::NotFound(format!(
            "there is nothing with the id `{id}`"
        )))
    }
}

/// Whether `principal` reviews `set`: theirs, or their role applies the asker's (`approve_by`), and it writes no
/// row their role's filters hide from them.
async fn reviews(shared: &Shared, set: &ChangeSet, principal: &steward_core::Principal) -> bool {
    shared.app.may_review(set, principal) && !shared.app.hides_rows_from(set, principal).await
}
