//! A terminal session of `ask` and `chat`: the app, model and agent it runs, the observers that watch it (the
//! trace, the event log, the run store), and driving a run to its end (approvals asked at the terminal,
//! Ctrl-C cancels).

use crate::out::note;
use std::io::{BufRead, IsTerminal};
use std::sync::Arc;

use steward_app::{App, Surface, Turn, TurnOptions};
use steward_core::{Approval, ApprovalRequest, EventLog, Outcome, Run, RunStatus};

use crate::agents::{AgentArgs, ConfigFile, build_app_with};
use crate::style::Style;

/// How driving a run ended.
pub(crate) enum Driven {
    /// The run ended.
    Done(Outcome),
    /// The run waits for approval of these calls, and no one at a terminal can give it.
    Waiting(Vec<ApprovalRequest>),
    /// The run ended, and the changes it staged were saved or decided.
    Staged(Outcome, Changes),
}

/// True when a person at this terminal can answer approval requests.
pub(crate) fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Drives `turn`'s `run` until it ends. Calls that need approval are put to the person at the terminal;
/// without one the run stops waiting when `stop_for_approval` (`ask`: exit code 4), else the calls are rejected
/// (the model is told why). Ctrl-C cancels the run (and the statement it runs on the database), keeping its
/// transcript.
pub(crate) async fn drive(turn: &Turn, run: &mut Run, stop_for_approval: bool) -> Driven {
    let runner = turn.runner();
    loop {
        let status = {
            let driving = runner.drive(run);
            tokio::pin!(driving);
            tokio::select! {
                status = &mut driving => Some(status),
                _ = tokio::signal::ctrl_c() => None,
            }
        };
        let requests = match status {
            None => {
                runner.cancel(run);
                // The statement the run had on the database is cancelled there before the process exits.
                steward_sql::settle_cancellations().await;
                return Driven::Done(Outcome::Cancelled);
            }
            Some(RunStatus::Done(outcome)) => {
                return match decide_changes(turn, run, &outcome).await {
                    Some(changes) => Driven::Staged(outcome, changes),
                    None => Driven::Done(outcome),
                };
            }
            Some(RunStatus::AwaitingApproval(requests)) => requests,
            Some(_) => return Driven::Done(Outcome::Cancelled),
        };
        // Four eyes: the person at this terminal may not let their own calls run; they wait for one who may
        // (saved with the run), or, when nothing can save them, are refused with the reason.
        if let Some(why) = turn.own_apply_refused() {
            if stop_for_approval || turn.app().store().is_some() {
                note!("{} {why}", Style::stderr().warn("four eyes:"));
                return Driven::Waiting(requests);
            }
            for request in requests {
                let refusal = Approval::Reject {
                    reason: Some(format!("no one here may approve it: {why}")),
                };
                if let Err(e) = runner.decide(run, &request.call.id, refusal) {
                    note!("{} {e}", Style::stderr().error("error:"));
                }
            }
            continue;
        }
        if stop_for_approval && !interactive() {
            return Driven::Waiting(requests);
        }
        for request in requests {
            if let Some(preview) = turn.preview(&request).await {
                crate::out::err_line(&preview);
            }
            let approval = tokio::task::spawn_blocking(move || {
                ask_approval(&request).map(|a| (request.call.id, a))
            })
            .await
            .ok()
            .flatten();
            let Some((call_id, approval)) = approval else {
                runner.cancel(run);
                return Driven::Done(Outcome::Cancelled);
            };
            if let Err(e) = turn.decide_here(run, &call_id, approval) {
                note!("{} {e}", Style::stderr().error("error:"));
            }
        }
    }
}

/// What became of a run's change set.
pub(crate) enum Changes {
    /// Saved to be decided later (no one at a terminal): its id.
    Saved(String),
    /// Decided at the terminal: what to tell the model next turn, and whether applying failed.
    Decided { note: String, failed: bool },
}

/// Puts the run's change set to the person at the terminal, once: applied together, in one transaction, or
/// discarded (also when the run was cancelled). Without a terminal it is saved to be decided later. Either way
/// the run goes on without it.
async fn decide_changes(turn: &Turn, run: &mut Run, outcome: &Outcome) -> Option<Changes> {
    if run.staged().is_empty() {
        return None;
    }
    let style = Style::stderr();
    // Four eyes: a role whose changes someone else applies saves them, at a terminal too.
    let refused = turn.own_apply_refused();
    if (!interactive() || refused.is_some()) && !matches!(outcome, Outcome::Cancelled) {
        let n = run.staged().len();
        show_changes(run.staged());
        if let Some(why) = &refused {
            note!("{} {why}", style.warn("four eyes:"));
        }
        return match turn.save_changes(run).await {
            Ok(Some(id)) => {
                note!(
                    "{} the {n} change{} wait{} as change set {id}: `steward changes apply {id}` writes them, \
                     `steward changes discard {id}` drops them",
                    style.warn("saved:"),
                    if n == 1 { "" } else { "s" },
                    if n == 1 { "s" } else { "" },
                );
                Some(Changes::Saved(id))
            }
            Ok(None) => None,
            Err(e) => {
                note!(
                    "{} the staged changes could not be saved: {e}",
                    style.error("error:")
                );
                None
            }
        };
    }
    let staged = run.take_staged();
    let principal = turn.principal();
    let by = if principal.name.is_empty() {
        "the local user".to_owned()
    } else {
        principal.name.clone()
    };
    let apply = if matches!(outcome, Outcome::Cancelled) {
        false
    } else {
        show_changes(&staged);
        let n = staged.len();
        tokio::task::spawn_blocking(move || ask_apply(n))
            .await
            .unwrap_or(false)
    };
    let app = turn.app();
    let n = staged.len();
    if apply {
        match app
            .apply_staged(Surface::Cli, principal, turn.agent(), &staged, &by, None)
            .await
        {
            Ok(applied) => {
                let written = applied.outputs.len() - applied.already;
                let created = if applied.created.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", applied.created.join(", "))
                };
                note!(
                    "{} {written} change{} written{created}",
                    style.good("applied:"),
                    if written == 1 { "" } else { "s" },
                );
                Some(Changes::Decided {
                    note: format!(
                        "The person applied the {n} staged change{}{created}; they are made. Negative ids of \
                         those changes mean nothing any more: use the real ids.",
                        if n == 1 { "" } else { "s" }
                    ),
                    failed: false,
                })
            }
            Err(e) => {
                note!("{} {e}", style.error("not applied:"));
                Some(Changes::Decided {
                    note: format!(
                        "Applying the staged changes failed, so none of them was made: {e}"
                    ),
                    failed: true,
                })
            }
        }
    } else {
        if let Err(e) = app
            .discard_staged(Surface::Cli, principal, turn.agent(), &staged, &by)
            .await
        {
            note!("{} {e}", style.error("error:"));
        }
        note!(
            "{} the {n} staged change{} discarded; nothing was written",
            style.warn("discarded:"),
            if n == 1 { " was" } else { "s were" }
        );
        Some(Changes::Decided {
            note: format!(
                "The person discarded the {n} staged change{}: none of them was made.",
                if n == 1 { "" } else { "s" }
            ),
            failed: false,
        })
    }
}

/// The change set as the person reads it: each call with its arguments as fields and its staged result.
fn show_changes(staged: &[steward_core::StagedCall]) {
    let style = Style::stderr();
    note!(
        "{}",
        style.warn(&format!(
            "{} change{} wait{} for your approval (tried in a transaction that was rolled back; nothing is written yet):",
            staged.len(),
            if staged.len() == 1 { "" } else { "s" },
            if staged.len() == 1 { "s" } else { "" }
        ))
    );
    for line in change_lines(staged, false) {
        note!("{line}");
    }
}

/// A change set as people read it: each call (`[call id]` with `ids`) with its arguments as fields and its
/// staged result, the rows it writes by table, and why it needs approval.
pub(crate) fn change_lines(staged: &[steward_core::StagedCall], ids: bool) -> Vec<String> {
    let style = Style::stderr();
    let mut out = Vec::new();
    for (i, s) in staged.iter().enumerate() {
        let id = if ids {
            format!("[{}] ", s.call.id)
        } else {
            String::new()
        };
        out.push(format!(
            "  {}. {id}{}  {}",
            i + 1,
            style.bold(&s.call.name),
            fields(&s.args)
        ));
        out.push(format!("     {}", s.output.content));
    }
    out.extend(diff_lines(staged));
    let mut reasons: Vec<&str> = staged.iter().map(|s| s.reason.as_str()).collect();
    reasons.dedup();
    for reason in reasons {
        out.push(style.dim(&format!("why: {reason}")));
    }
    out
}

/// The rows a change set writes, by table: `+` a row inserted, `~` changed (before → after), `-` deleted, each
/// with the number of the change that writes it.
fn diff_lines(staged: &[steward_core::StagedCall]) -> Vec<String> {
    let style = Style::stderr();
    let mut out = Vec::new();
    for table in steward_app::changes::diff_by_table(staged) {
        out.push(format!("  {}", style.bold(&format!("{}:", table.table))));
        for row in &table.rows {
            let mark = match row.change.op {
                steward_core::RowOp::Insert => "+",
                steward_core::RowOp::Update => "~",
                _ => "-",
            };
            // Each column as it changes: `name: Garden`, or `project: inbox → #-1 Birthday party`.
            let fields: Vec<String> = row
                .change
                .fields
                .iter()
                .map(|f| match (&f.before, &f.after) {
                    (Some(before), Some(after)) => format!("{}: {before} → {after}", f.column),
                    (Some(value), None) | (None, Some(value)) => format!("{}: {value}", f.column),
                    (None, None) => format!("{}:", f.column),
                })
                .collect();
            out.push(format!(
                "    {mark} {}  {}  {}",
                row.change.row,
                fields.join(", "),
                style.dim(&format!("({})", row.step))
            ));
        }
    }
    out
}

/// A call's arguments as labelled fields: `name: Garden, project_id: -1`.
pub(crate) fn fields(args: &serde_json::Value) -> String {
    match args {
        serde_json::Value::Object(map) => map
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| match v {
                serde_json::Value::String(text) => format!("{k}: {text}"),
                other => format!("{k}: {other}"),
            })
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}

/// Asks whether to apply the change set of `n` writes; no (and end of input) discards it.
fn ask_apply(n: usize) -> bool {
    let style = Style::stderr();
    crate::out::err_text(&format!(
        "{} [y]es / [n]o: ",
        style.warn(&format!(
            "Apply {} change{} together?",
            if n == 1 {
                "this".to_owned()
            } else {
                format!("all {n}")
            },
            if n == 1 { "" } else { "s" }
        ))
    ));
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => false,
        Ok(_) => matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes"),
    }
}

/// Says on standard error that `request` waits for approval (with its saved `id`, when it has one) and what it
/// would do.
pub(crate) fn note_waiting(request: &ApprovalRequest, id: Option<&str>, preview: Option<&str>) {
    let style = Style::stderr();
    let id = id.map(|id| format!("[{id}] ")).unwrap_or_default();
    note!(
        "{} {id}{} {}: {}",
        style.warn("waiting for approval:"),
        style.bold(&request.call.name),
        request.call.arguments,
        request.reason
    );
    if let Some(preview) = preview {
        note!("{preview}");
    }
}

/// Asks the person at the terminal; `None` when they end input.
pub(crate) fn ask_approval(request: &ApprovalRequest) -> Option<Approval> {
    if !interactive() {
        return Some(Approval::Reject {
            reason: Some(
                "no one could approve it: steward is not running in an interactive terminal"
                    .to_owned(),
            ),
        });
    }
    let style = Style::stderr();
    crate::out::err_line(&style.dim(&request.reason));
    let read = || {
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim().to_owned()),
        }
    };
    loop {
        crate::out::err_text(&format!(
            "{} {} {} [y]es / [n]o / [e]dit: ",
            style.warn("Allow"),
            style.bold(&request.call.name),
            request.call.arguments
        ));
        match read()?.to_ascii_lowercase().as_str() {
            "y" | "yes" => return Some(Approval::Approve),
            "e" | "edit" => {
                crate::out::err_text("New arguments (a JSON object): ");
                let text = read()?;
                match serde_json::from_str::<serde_json::Value>(&text) {
                    Ok(arguments) if arguments.is_object() => {
                        return Some(Approval::Edit { arguments });
                    }
                    _ => crate::out::err_line(&style.error(
                        "not a JSON object, e.g. {\"net_amount\": 10}; nothing was changed",
                    )),
                }
            }
            "" | "n" | "no" => {
                crate::out::err_text("Why not? (the model is told; Enter to skip): ");
                let why = read()?;
                return Some(Approval::Reject {
                    reason: Some(if why.is_empty() {
                        "the user said no".to_owned()
                    } else {
                        why
                    }),
                });
            }
            _ => crate::out::err_line(&style.dim("answer y, n or e")),
        }
    }
}

/// What `ask`, `chat` and `runs resume` run: a turn of the run service, and the trace that watches it.
pub(crate) struct Session {
    pub(crate) turn: Turn,
    pub(crate) trace: Arc<crate::trace::Trace>,
    pub(crate) model_name: String,
    /// Every event of the run tree (sub-agents included), for `--json`.
    pub(crate) log: EventLog,
    /// The app the turn runs in (its run store saves a run that waits for approval).
    pub(crate) app: Arc<App>,
}

/// What a session is opened with beyond the flags: set by `runs resume` from the parked run.
#[derive(Default)]
pub(crate) struct Resuming {
    /// The principal the run was for. (What it had read from outside is in the saved run.)
    pub(crate) principal: Option<steward_core::Principal>,
}

impl Session {
    /// Ends the session: the turn is dropped (the spans of a run that waits end with it) and the spans are
    /// sent, two seconds at most, when runs are traced. After the answer is shown, so that a slow collector
    /// never holds it back.
    pub(crate) async fn close(self) {
        let app = self.app.clone();
        drop(self);
        app.flush_traces().await;
    }

    /// Builds the app, connects the model and assembles the turn; `question` ranks the analyst's schema.
    pub(crate) async fn open(
        config: &ConfigFile,
        agents: &AgentArgs,
        model: &crate::setup::ModelArgs,
        trace: bool,
        stream: bool,
        question: Option<&str>,
    ) -> anyhow::Result<Self> {
        Self::open_as(
            config,
            agents,
            model,
            trace,
            stream,
            question,
            Resuming::default(),
        )
        .await
    }

    /// [`Session::open`] for a resumed run's principal and taint, when given.
    pub(crate) async fn open_as(
        config: &ConfigFile,
        agents: &AgentArgs,
        model: &crate::setup::ModelArgs,
        trace: bool,
        stream: bool,
        question: Option<&str>,
        resuming: Resuming,
    ) -> anyhow::Result<Self> {
        let prices = model.prices()?;
        let store = crate::runs::store_for_runs(config, &agents.store, agents.no_store).await?;
        let app = Arc::new(build_app_with(config, agents.db.as_deref(), store).await?);
        // Where each write is recorded, said once per database before the first write creates it.
        crate::db::note_ledgers(&app).await;
        let principal = match resuming.principal {
            Some(principal) => principal,
            None => agents.identity.principal(app.config())?,
        };
        let name = agents
            .agent
            .clone()
            .unwrap_or_else(|| app.default_agent_for(&principal));
        // A wrong agent name is found before the model is set up.
        if app.agent_def(&name).is_none()
            && ["expenses", "orders", "tasks"].contains(&name.as_str())
        {
            match app.business() {
                Some(b) => anyhow::bail!(
                    "the {name} agent needs the demo's tables (expenses, orders, tasks), which {} does not have; \
                     use --agent analyst for questions over this database, or run `steward demo`",
                    steward_core::redact_url(&b.url)
                ),
                None => anyhow::bail!(
                    "the {name} agent needs a database: run `steward demo` to create the demo database, or pass --db URL"
                ),
            }
        }
        app.check_agent(&principal, &name)?;
        let choice = model.choice();
        let models = app.models(&choice, &name, None, None).await?;
        let model_name = models.model.name().to_owned();
        let trace = Arc::new(
            crate::trace::Trace::new(trace, &model_name, prices.clone()).streaming(stream),
        );
        if trace.enabled()
            && let Some(notice) = app.business().and_then(|b| b.privileges.as_ref())
        {
            note!("{}", crate::style::Style::stderr().dim(notice));
        }
        if app.business().is_none() && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            note!(
                "{}",
                crate::style::Style::stderr()
                    .dim("(no database: the assistant has only the date and a calculator; `steward demo` creates the demo database)")
            );
        }
        let log = EventLog::new();
        let mut options = TurnOptions::new(Surface::Cli, models, choice);
        options.question = question.map(str::to_owned);
        options.limits = model.limits();
        options.observers = vec![trace.clone(), Arc::new(log.clone())];
        options.streaming = trace.is_streaming();
        options.prices = Some(prices);
        // The person decides once, on every write of the run (its change set): at the terminal, or later from
        // the saved set.
        options.staging = interactive() || app.store().is_some();
        app.refresh_examples().await;
        let turn = app.turn(&principal, &name, options)?;
        Ok(Self {
            turn,
            trace,
            model_name,
            log,
            app,
        })
    }
}
