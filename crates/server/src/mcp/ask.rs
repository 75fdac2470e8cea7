//! `ask_database` over MCP: a question in plain words, answered by a run of the `analyst` agent for the caller
//! — built for its role (only the tools it may use), under its policy, recorded in the run store when the
//! server has one.

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, JsonObject};
use serde_json::{Value, json};
use steward_app::{Surface, TurnOptions};
use steward_core::{ArgumentValidator, Outcome, Principal, RunStatus, ToolSpec, schema_for};
use steward_sql::AskDatabaseArgs;

use super::tools::{error, structured};
use super::{McpServer, log_diagnostic};

/// The tool's name.
pub(super) const NAME: &str = "ask_database";

/// The agent that answers.
const AGENT: &str = "analyst";

/// The spec of `ask_database` for `principal`, when it may ask the analyst (there is a database, the agent
/// exists and its role may run it). Its hints sum up the tools the analyst may use for it.
pub(super) fn spec(server: &McpServer, principal: &Principal) -> Option<ToolSpec> {
    let app = &server.app;
    app.business()?;
    let def = app.agent_def(AGENT)?;
    app.may_run(principal, AGENT).ok()?;
    let policy = app.policy(principal);
    let mut spec = ToolSpec::new(
        NAME,
        "Answers a question about the data in the database, in plain words: Steward's analyst looks at the \
         schema, writes read-only SQL, checks and runs it, fixes it when the database reports an error, and \
         answers with the SQL it ran. For exact queries use run_sql or query_table when they are offered.",
        schema_for::<AskDatabaseArgs>(),
    );
    let mut read_only = true;
    let mut destructive = false;
    let mut open_world = false;
    for name in def.tools.iter().filter(|t| policy.allows_tool(t)) {
        if let Ok(spec) = app.tool_spec(name, None) {
            let a = &spec.annotations;
            read_only &= a.read_only;
            destructive |= a.destructive;
            open_world |= a.open_world;
        }
    }
    // Sub-agents may do anything their own tools do: only an analyst without them is known to only read.
    if !def.sub_agents.is_empty() {
        read_only = false;
    }
    spec.annotations = steward_core::ToolAnnotations::new()
        .read_only(read_only)
        .destructive(destructive)
        .idempotent(read_only)
        .open_world(open_world);
    Some(spec)
}

/// Answers the question in `arguments` for `principal`.
pub(super) async fn call(
    server: &McpServer,
    principal: &Principal,
    arguments: JsonObject,
) -> Result<CallToolResult, ErrorData> {
    let app = &server.app;
    let Some(spec) = spec(server, principal) else {
        let offered = super::tools::list(server, principal);
        return Err(ErrorData::invalid_params(
            steward_core::Rejection::unknown_tool(NAME, offered.iter().map(|t| t.name.as_ref()))
                .observation,
            None,
        ));
    };
    // The same validation a model's call gets.
    let checked = ArgumentValidator::new(&spec.parameters)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
        .check(NAME, &Value::Object(arguments).to_string());
    let question = match checked {
        Ok(args) => args
            .get("question")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        Err(rejection) => return Ok(error(&rejection.observation)),
    };
    let models = match app
        .models(&server.choice, AGENT, None, Some(&server.models))
        .await
    {
        Ok(models) => models,
        Err(e) => {
            log_diagnostic(NAME, &e.to_string());
            return Ok(error(
                "ask_database cannot answer: no model is available to the server for the analyst. Use the SQL \
                 tools (run_sql, query_table) instead, or tell the user.",
            ));
        }
    };
    let mut options = TurnOptions::new(Surface::Mcp, models, server.choice.clone());
    options.question = Some(question.clone());
    options.limits = server.limits;
    // What the session read before counts in the analyst's run, and what the run reads counts after it.
    options.tainted_by = server.tainted_by(principal);
    // Writes held for review are staged, and saved as one change set for a person to apply.
    options.staging = app.store().is_some();
    app.refresh_examples().await;
    let turn = match app.turn(principal, AGENT, options) {
        Ok(turn) => turn,
        Err(e) => {
            log_diagnostic(NAME, &e.to_string());
            return Ok(error(&format!("ask_database cannot answer: {e}")));
        }
    };
    let mut run = turn.start(&question);
    let status = turn.runner().drive(&mut run).await;
    if let Some(by) = run.tainted_by() {
        server.taint(principal, by);
    }
    if let Err(e) = turn.flush().await {
        log_diagnostic(NAME, &format!("the run was not recorded completely: {e}"));
    }
    Ok(match status {
        RunStatus::Done(Outcome::Answered { answer }) => {
            let n = run.staged().len();
            let (text, change_set) = match turn.save_changes(&mut run).await {
                Ok(Some(id)) => (
                    format!(
                        "{answer}\n\nStaged, not written yet: {n} change{s} wait{v} in change set {id} for a \
                         person to apply them together (`steward changes apply {id}`, the web UI, or POST \
                         /api/changes/{id}); nothing is written until then. Tell the user.",
                        s = if n == 1 { "" } else { "s" },
                        v = if n == 1 { "s" } else { "" },
                    ),
                    Some(id),
                ),
                Ok(None) => (answer.clone(), None),
                Err(e) => {
                    log_diagnostic(NAME, &format!("the staged changes could not be saved: {e}"));
                    (
                        format!(
                            "{answer}\n\nThe analyst staged {n} change{} that could not be saved; nothing was \
                             written. Tell the user.",
                            if n == 1 { "" } else { "s" }
                        ),
                        None,
                    )
                }
            };
            structured(
                json!({"kind": "answer", "text": text, "answer": answer, "run_id": run.id(),
                              "change_set_id": change_set}),
            )
        }
        RunStatus::Done(Outcome::ModelFailed { error: cause, .. }) => {
            log_diagnostic(NAME, &cause);
            error(&format!(
                "ask_database could not answer: the analyst's model or database failed (run {}); the operator \
                 has the details. Try again later, or use the SQL tools.",
                run.id()
            ))
        }
        RunStatus::Done(outcome) => error(&format!(
            "ask_database could not answer: the analyst {outcome} (run {}). Ask a narrower question, or use \
             the SQL tools.",
            run.id()
        )),
        RunStatus::AwaitingApproval(requests) => waiting(&turn, &run, &requests).await,
        _ => error(&format!(
            "ask_database could not answer: the analyst's run {} ended in a way this server does not know.",
            run.id()
        )),
    })
}

/// A run that waits for approval: saved (through the run service) to be decided and resumed elsewhere.
async fn waiting(
    turn: &steward_app::Turn,
    run: &steward_core::Run,
    requests: &[steward_core::ApprovalRequest],
) -> CallToolResult {
    let what: Vec<String> = requests
        .iter()
        .map(|r| format!("`{}` {} ({})", r.call.name, r.call.arguments, r.reason))
        .collect();
    match turn.park(run, requests).await {
        Ok(parked) => {
            let ids = parked.ids;
            let text = format!(
                "Not answered yet: the analyst's run {} waits for a person's approval of {}. Tell the user: \
                 approve with `steward approvals approve ID` (or deny with `steward approvals deny ID --reason \
                 TEXT`; the ids: {}), then `steward runs resume {}` carries the run on.",
                run.id(),
                what.join("; "),
                ids.join(", "),
                run.id()
            );
            structured(json!({
                "kind": "waiting",
                "text": text,
                "run_id": run.id(),
                "approval_ids": ids,
            }))
        }
        Err(e) => {
            log_diagnostic(NAME, &format!("the waiting run could not be saved: {e}"));
            error(&format!(
                "ask_database did not finish: the analyst's run {} waits for a person's approval of {}, and it \
                 could not be saved ({e}); nothing was done. Tell the user.",
                run.id(),
                what.join("; ")
            ))
        }
    }
}

/// `ask_database`'s `outputSchema`: an answer, or a run that waits for approval.
pub(super) fn output_schema() -> rmcp::model::JsonObject {
    let schema = json!({
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": ["answer", "waiting"],
                     "description": "answer: the analyst answered; waiting: its run waits for a person's approval."},
            "text": {"type": "string", "description": "The result in words, with what to tell the user."},
            "answer": {"type": "string", "description": "answer: the analyst's answer alone."},
            "run_id": {"type": "string", "description": "The analyst's run (`steward runs show ID`)."},
            "change_set_id": {"type": ["string", "null"],
                              "description": "answer: the change set its staged writes wait in, if any."},
            "approval_ids": {"type": "array", "items": {"type": "string"},
                             "description": "waiting: the approvals it waits for."},
        },
        "required": ["kind", "text", "run_id"],
    });
    match schema {
        serde_json::Value::Object(map) => map,
        _ => rmcp::model::JsonObject::new(),
    }
}
