//! A terminal session of `ask` and `chat`: the app, model and agent it runs, the observers that watch it (the
//! trace, the event log, the run store), and driving a run to its end (approvals asked at the terminal,
//! Ctrl-C cancels).

use crate::out::note;
use std::io::{BufRead, IsTerminal};
use std::sync::Arc;

use steward_app::store::StoreObserver;
use steward_core::{
    Approval, ApprovalRequest, EventLog, Fanout, Observer, Outcome, Run, RunStatus, Runner,
};

use crate::agents::{AgentArgs, build_app};
use crate::style::Style;

/// How driving a run ended.
pub(crate) enum Driven {
    /// The run ended.
    Done(Outcome),
    /// The run waits for approval of these calls, and no one at a terminal can give it.
    Waiting(Vec<ApprovalRequest>),
}

/// True when a person at this terminal can answer approval requests.
pub(crate) fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Drives `run` until it ends. Calls that need approval are put to the person at the terminal; without one
/// the run stops waiting when `stop_for_approval` (`ask`: exit code 4), else the calls are rejected (the model is
/// told why). Ctrl-C cancels the run, keeping its transcript.
pub(crate) async fn drive(
    runner: &Runner,
    run: &mut Run,
    stop_for_approval: bool,
    previewer: Option<&Previewer>,
) -> Driven {
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
                return Driven::Done(Outcome::Cancelled);
            }
            Some(RunStatus::Done(outcome)) => return Driven::Done(outcome),
            Some(RunStatus::AwaitingApproval(requests)) => requests,
            Some(_) => return Driven::Done(Outcome::Cancelled),
        };
        if stop_for_approval && !interactive() {
            return Driven::Waiting(requests);
        }
        for request in requests {
            if let Some(preview) = match previewer {
                Some(p) => p.preview(&request).await,
                None => None,
            } {
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
            if let Err(e) = runner.decide(run, &call_id, approval) {
                note!("{} {e}", Style::stderr().error("error:"));
            }
        }
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

/// Shows what a call waiting for approval would do, by asking its tool (a SQL write tool runs it in a
/// transaction that is rolled back).
pub(crate) struct Previewer {
    app: Arc<steward_app::App>,
    model: Arc<dyn steward_core::Model>,
    principal: steward_core::Principal,
}

impl Previewer {
    /// The preview of `request`'s call, when its tool offers one.
    pub(crate) async fn preview(&self, request: &ApprovalRequest) -> Option<String> {
        let tool = self.app.tool(&request.call.name, self.model.clone()).ok()?;
        let args = serde_json::from_str(&request.call.arguments).ok()?;
        let ctx = steward_core::ToolContext::new("preview", request.call.id.as_str(), "preview")
            .with_tool(request.call.name.as_str())
            .with_principal(Arc::new(self.principal.clone()));
        tool.preview(&ctx, args).await
    }
}

/// What `ask` and `chat` run: the runner over the chosen agent and model, and the trace that watches it.
pub(crate) struct Session {
    pub(crate) runner: steward_core::Runner,
    pub(crate) trace: Arc<crate::trace::Trace>,
    pub(crate) model_name: String,
    /// Every event of the run tree (sub-agents included), for `--json`.
    pub(crate) log: EventLog,
    /// Records the runs in the run store (`None` with `--no-store`).
    pub(crate) recorder: Option<Arc<StoreObserver>>,
    /// The run store, to save a run that waits for approval.
    pub(crate) store: Option<steward_app::store::RunStore>,
    /// Who the runs are for.
    pub(crate) principal: steward_core::Principal,
    /// Previews of calls waiting for approval.
    pub(crate) previewer: Previewer,
    /// The role's policy of the run tree (it knows whether the run read outside data).
    pub(crate) policy: Arc<steward_app::RolePolicy>,
}

impl Session {
    /// Builds the app, connects the model and builds the agent; `question` ranks the analyst's schema.
    pub(crate) async fn open(
        agents: &AgentArgs,
        model: &crate::setup::ModelArgs,
        trace: bool,
        stream: bool,
        question: Option<&str>,
    ) -> anyhow::Result<Self> {
        Self::open_as(agents, model, trace, stream, question, None).await
    }

    /// [`Session::open`] for `principal` when given (a resumed run's), else the one the flags name.
    pub(crate) async fn open_as(
        agents: &AgentArgs,
        model: &crate::setup::ModelArgs,
        trace: bool,
        stream: bool,
        question: Option<&str>,
        principal: Option<steward_core::Principal>,
    ) -> anyhow::Result<Self> {
        let prices = model.prices()?;
        let app = build_app(agents.db.as_deref()).await?;
        let principal = match principal {
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
        if app.agent_def(&name).is_none() {
            let known = app.agent_names().collect::<Vec<_>>().join(", ");
            anyhow::bail!("there is no agent named `{name}`; the agents are: {known}");
        }
        app.may_run(&principal, &name)?;
        let used = app.models_used(&name);
        let chosen = model
            .connect_for(app.config(), app.agent_def(&name), &used)
            .await?;
        let connected = chosen.model.clone();
        let model_name = connected.name().to_owned();
        let trace = Arc::new(
            crate::trace::Trace::new(trace, &model_name, prices.clone()).streaming(stream),
        );
        let agent = app.agent_for(
            &principal,
            &name,
            connected.clone(),
            chosen.name.as_deref(),
            &chosen.named,
            question,
            model.limits(),
        )?;
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
        let (recorder, store) = match crate::runs::recorder(&agents.store, agents.no_store).await? {
            Some((observer, store)) => (Some(observer), Some(store)),
            None => (None, None),
        };
        let log = EventLog::new();
        let policy = app.policy(&principal);
        let mut observers: Vec<Arc<dyn Observer>> =
            vec![policy.clone(), trace.clone(), Arc::new(log.clone())];
        if let Some(recorder) = &recorder {
            recorder.set_model(model_name.clone());
            recorder.set_prices(prices);
            recorder.set_principal(&principal);
            observers.push(recorder.clone());
        }
        let connected_for_preview = connected.clone();
        let runner = steward_core::Runner::new(Arc::new(agent), connected)
            .with_observer(Arc::new(Fanout(observers)))
            .with_policy(policy.clone())
            .with_principal(Arc::new(principal.clone()))
            .with_streaming(trace.is_streaming());
        Ok(Self {
            runner,
            trace,
            model_name,
            log,
            recorder,
            store,
            previewer: Previewer {
                app: Arc::new(app),
                model: connected_for_preview,
                principal: principal.clone(),
            },
            principal,
            policy,
        })
    }
}
