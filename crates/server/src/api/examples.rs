//! Verified examples: a person's thumbs-up on an answer saves its question with the SQL it ran, through the
//! app's one governed path (the caller's guard must allow the SQL, and it must run as the caller). The list
//! shows what the app's one rule lets the caller see ([`steward_app::App::examples_for`]).

use steward_app::ShownExample;
use steward_app::store::{ExampleSource, SavedExample};

use super::*;

/// `POST /api/examples`: a run's id (its question and the last SQL it ran), or a question with its SQL.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewExample {
    /// A run of the caller's: its question and the last SQL it ran successfully are saved.
    #[serde(default)]
    run_id: Option<String>,
    /// The question (with `sql`, instead of `run_id`).
    #[serde(default)]
    question: Option<String>,
    /// The SQL that answers it.
    #[serde(default)]
    sql: Option<String>,
    /// Where it comes from: `api` (the default) or `web` (the web UI's thumbs-up).
    #[serde(default)]
    source: Option<String>,
}

/// A saved example.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ExampleView {
    /// Its id.
    id: String,
    /// The database it is for (its identity: no password).
    database: String,
    /// The question.
    question: String,
    /// The SQL that answers it, without comments.
    sql: String,
    /// Who saved it (empty: the local user); absent unless the caller administers or saved it.
    #[serde(skip_serializing_if = "Option::is_none")]
    saved_by: Option<String>,
    /// When (RFC 3339).
    saved_at: String,
    /// `cli`, `web`, `api` or `import`.
    source: String,
    /// The run it was taken from, when it was (told only to an administrator and the one who saved it).
    run_id: Option<String>,
}

impl From<SavedExample> for ExampleView {
    fn from(e: SavedExample) -> Self {
        Self {
            id: e.id,
            database: e.database,
            question: e.question,
            sql: e.sql,
            saved_by: Some(e.saved_by),
            saved_at: e.saved_at.to_rfc3339(),
            source: e.source.as_str().to_owned(),
            run_id: e.run_id,
        }
    }
}

impl From<ShownExample> for ExampleView {
    fn from(e: ShownExample) -> Self {
        Self {
            id: e.id,
            database: e.database,
            question: e.question,
            sql: e.sql,
            saved_by: e.saved_by,
            saved_at: e.saved_at.to_rfc3339(),
            source: e.source.as_str().to_owned(),
            run_id: e.run_id,
        }
    }
}

/// Saves a verified example for the caller: from one of its runs (`run_id`: the run's question with the last
/// SQL it ran successfully), or a question with its SQL. The SQL must be allowed by the caller's guard and run
/// as the caller. 400 when the run ran no SQL or the SQL fails, 403 when the guard refuses it, 404 for a run
/// that is not the caller's, 409 when it is saved already.
#[utoipa::path(post, path = "/api/examples", tag = "api", request_body = NewExample,
    responses((status = 201, body = ExampleView), (status = 400, body = crate::state::ErrorBody),
        (status = 403, body = crate::state::ErrorBody), (status = 404, body = crate::state::ErrorBody),
        (status = 409, body = crate::state::ErrorBody)))]
pub(crate) async fn add_example(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Body(body): Body<NewExample>,
) -> Api<Response> {
    let source = match body.source.as_deref() {
        None | Some("api") => ExampleSource::Api,
        Some("web") => ExampleSource::Web,
        Some(other) => {
            return Err(ApiError::bad(format!(
                "`source` must be api or web, not `{other}`"
            )));
        }
    };
    let saved = match (&body.run_id, &body.question, &body.sql) {
        (Some(run), None, None) => {
            shared
                .app
                .example_from_run(&caller.principal, run, source)
                .await?
        }
        (None, Some(question), Some(sql)) => {
            shared
                .app
                .add_example(&caller.principal, question, sql, source, None)
                .await?
        }
        _ => {
            return Err(ApiError::bad(
                "send {\"run_id\": …} (a run of yours) or {\"question\": …, \"sql\": …}",
            ));
        }
    };
    Ok((StatusCode::CREATED, Json(ExampleView::from(saved))).into_response())
}

/// The examples saved for the server's database that the caller may see, oldest first: those its guard allows
/// that hold no data of rows it does not see (literals, made-up names, a question that may name rows, over a
/// table its role filters or masks), without comments; who saved each and from which run only for an
/// administrator and the one who saved it.
#[utoipa::path(get, path = "/api/examples", tag = "api", responses((status = 200, body = Vec<ExampleView>)))]
pub(crate) async fn list_examples(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
) -> Api<Json<Vec<ExampleView>>> {
    let saved = shared.app.examples_for(&caller.principal).await?;
    Ok(Json(saved.into_iter().map(ExampleView::from).collect()))
}
