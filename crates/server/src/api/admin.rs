//! Charts of result rows, and the administrators' runs and audit trail.

use super::*;

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
