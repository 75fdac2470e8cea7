//! The run service: the one path every surface takes to run an agent (`ask`, `chat`, `runs resume`, the
//! server's API and `/v1`, MCP's `ask_database`, `eval`). [`App::turn`] checks that the agent exists and the
//! principal's role may run it, builds the agent for that principal with its models, the role's policy, the
//! run store's recorder and the surface's observers, and hands back a [`Turn`] the surface drives. Parking a
//! run that waits for approval (previews, saved state and what it ran under) and taking up a parked run again
//! are methods of the same service, so that policy, approvals, audit and run records cannot drift apart
//! between surfaces: a surface only translates.

use std::sync::Arc;

use sha2::{Digest, Sha256};
use steward_core::{
    Approval, ApprovalRequest, Fanout, Limits, Message, Model, ModelSettings, Observer, Principal,
    Run, Runner, ToolContext,
};
use steward_llm::PriceTable;

use crate::audited::{AuditTo, Surface};
use crate::models::{ModelChoice, RunModels};
use crate::store::{PendingRun, Recording, RunContext, StoreError, StoreObserver};
use crate::{App, AppError};

/// What a surface adds to a turn.
pub struct TurnOptions {
    /// Where the turn comes from.
    pub surface: Surface,
    /// The models (see [`App::models`]).
    pub models: RunModels,
    /// How the models were chosen, saved with a run that waits so that resuming it picks the same.
    pub choice: ModelChoice,
    /// The question, which ranks the schema in the analyst's instructions.
    pub question: Option<String>,
    /// Limits where the agent's definition sets none.
    pub limits: Limits,
    /// The surface's own observers (a trace, an event log, a client's stream).
    pub observers: Vec<Arc<dyn Observer>>,
    /// Stream the model's replies as they come.
    pub streaming: bool,
    /// Record the run in the app's run store (when it has one) and chain its calls in the audit trail.
    pub record: bool,
    /// How model calls are priced in the run store.
    pub prices: Option<PriceTable>,
    /// What earlier turns of a conversation read from outside: a run this turn starts begins tainted by it,
    /// so its writes wait for approval as if it had read it. (A resumed run keeps its own.)
    pub tainted_by: Option<String>,
    /// Stage the writes that need approval (of tools that can be staged) in the run's change set instead of
    /// waiting: the surface then asks once, for the whole set ([`App::apply_staged`], [`App::discard_staged`]).
    pub staging: bool,
    /// Sampling settings over the agent's.
    pub temperature: Option<f32>,
    /// Most tokens in one reply, over the agent's.
    pub max_output_tokens: Option<u32>,
}

impl TurnOptions {
    /// Options for a turn from `surface` with `models`: recorded, not streamed, default limits.
    pub fn new(surface: Surface, models: RunModels, choice: ModelChoice) -> Self {
        Self {
            surface,
            models,
            choice,
            question: None,
            limits: Limits::default(),
            observers: Vec::new(),
            streaming: false,
            record: true,
            prices: None,
            tainted_by: None,
            staging: false,
            temperature: None,
            max_output_tokens: None,
        }
    }
}

/// Decisions on waiting calls, by call id.
pub type Decisions = Vec<(String, Approval)>;

/// One turn of an agent for a principal, assembled: drive [`Turn::runner`] over a run from [`Turn::start`].
pub struct Turn {
    app: Arc<App>,
    runner: Runner,
    inherited: Option<String>,
    recorder: Option<Arc<StoreObserver>>,
    agent: String,
    principal: Principal,
    settings: ModelSettings,
    model: Arc<dyn Model>,
    context: RunContext,
}

/// A run saved to wait for approval.
#[derive(Clone, Debug)]
pub struct Parked {
    /// The short ids of the calls it waits for.
    pub ids: Vec<String>,
    /// The previews of those calls, in the same order.
    pub previews: Vec<Option<String>>,
    /// The saved run, as the store has it now.
    pub pending: PendingRun,
}

impl App {
    /// What a run (or a change set) of `surface` runs under: the database, the model, the config.
    pub(crate) fn run_context(&self, surface: Surface, model: Option<String>) -> RunContext {
        RunContext {
            database: self.database_named.clone(),
            database_identity: self.database_identity(),
            model,
            config: Some(self.fingerprint()),
            config_file: self.config_file(),
            surface: Some(surface.as_str().to_owned()),
        }
    }

    /// Checks that the agent `name` exists and `principal`'s role may run it.
    pub fn check_agent(&self, principal: &Principal, name: &str) -> Result<(), AppError> {
        // The agents named back are the ones this principal may use: the others' names are not theirs to learn.
        let yours = || self.agents_for(principal).collect::<Vec<_>>().join(", ");
        if self.agent_def(name).is_none() {
            return Err(AppError::UnknownAgent {
                name: name.to_owned(),
                known: yours(),
            });
        }
        self.may_run(principal, name)
    }

    /// Assembles a turn of the agent `agent` for `principal`: the one entry point of every surface.
    pub fn turn(
        self: &Arc<Self>,
        principal: &Principal,
        agent: &str,
        options: TurnOptions,
    ) -> Result<Turn, AppError> {
        self.check_agent(principal, agent)?;
        let audit = match (&self.store, options.record) {
            (Some(store), true) => Some(AuditTo {
                store: store.clone(),
                surface: options.surface,
            }),
            _ => None,
        };
        let built = self.build_agent(
            principal,
            agent,
            &options.models,
            options.question.as_deref(),
            options.limits,
            audit,
        )?;
        let mut settings = built.settings;
        if options.temperature.is_some() {
            settings.temperature = options.temperature;
        }
        if options.max_output_tokens.is_some() {
            settings.max_output_tokens = options.max_output_tokens;
        }
        let model = options.models.model.clone();
        let context = self.run_context(options.surface, options.choice.spec.clone());
        let recorder = match (&self.store, options.record) {
            (Some(store), true) => {
                let mut recording = Recording::for_principal(principal);
                recording.model = Some(model.name().to_owned());
                recording.surface = Some(options.surface.as_str().to_owned());
                recording.database = self.database_identity();
                if let Some(prices) = options.prices {
                    recording = recording.priced(prices);
                }
                Some(Arc::new(StoreObserver::recording(
                    store.clone(),
                    recording,
                )?))
            }
            _ => None,
        };
        let mut observers: Vec<Arc<dyn Observer>> = Vec::new();
        if let Some(recorder) = &recorder {
            observers.push(recorder.clone());
        }
        if let Some(telemetry) = &self.telemetry {
            observers.push(telemetry.observer(
                model.name(),
                &principal.name,
                options.surface.as_str(),
            ));
        }
        observers.extend(options.observers);
        let runner = Runner::new(Arc::new(built), model.clone())
            .with_observer(Arc::new(Fanout(observers)))
            .with_policy(self.policy(principal))
            .with_principal(Arc::new(principal.clone()))
            .with_streaming(options.streaming)
            .with_staging(options.staging);
        Ok(Turn {
            app: self.clone(),
            runner,
            inherited: options.tainted_by,
            recorder,
            agent: agent.to_owned(),
            principal: principal.clone(),
            settings,
            model,
            context,
        })
    }

    /// A fingerprint of the config (its parsed content, not its layout), saved with a waiting run so that a
    /// change is reported when it is resumed.
    pub fn fingerprint(&self) -> String {
        let text = serde_json::to_string(self.config()).unwrap_or_default();
        Sha256::digest(text.as_bytes())
            .iter()
            .take(8)
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// The decisions to apply to the parked run `pending`: those of the calls it waits for now, with `extra`
    /// (a decision being taken) on top. Returns them with the calls that still wait for one.
    pub fn decisions(
        pending: &PendingRun,
        extra: Option<(&str, &Approval)>,
    ) -> Result<(Decisions, Vec<String>), AppError> {
        let mut decisions = Vec::new();
        let mut undecided = Vec::new();
        for request in pending.run.awaiting_approval() {
            let id = &request.call.id;
            if let Some((call_id, approval)) = extra
                && call_id == id
            {
                decisions.push((id.clone(), approval.clone()));
                continue;
            }
            match pending.approvals.iter().find(|a| a.call_id == *id) {
                Some(a) => match a.approval()? {
                    Some(decision) => decisions.push((id.clone(), decision)),
                    None => undecided.push(format!("{} ({})", a.id, a.tool)),
                },
                None => undecided.push(format!("{} ({})", request.call.id, request.call.name)),
            }
        }
        Ok((decisions, undecided))
    }

    /// What names this app's business database (see `declared::database_identity`).
    fn database_identity(&self) -> Option<String> {
        self.business()
            .map(|b| crate::declared::database_identity(&b.url))
    }

    /// The config file this app was built from.
    fn config_file(&self) -> Option<String> {
        self.config().source.as_ref().map(|s| {
            std::fs::canonicalize(&s.path)
                .unwrap_or_else(|_| s.path.clone())
                .display()
                .to_string()
        })
    }

    /// Refuses to take up a parked run on another database than the one it ran on (its rows were read there,
    /// its previews made there): the error names both and says how to resume it where it ran.
    pub fn check_same_database(&self, context: &RunContext) -> Result<(), AppError> {
        self.check_database_of(
            "the run waited",
            "resume it where it ran (`steward runs resume ID",
            context,
        )
    }

    /// [`App::check_same_database`] for a change set: it is applied on the database it was staged on.
    pub fn check_change_set_database(&self, context: &RunContext) -> Result<(), AppError> {
        self.check_database_of(
            "the changes were staged",
            "apply them where they were staged (`steward changes apply ID",
            context,
        )
    }

    fn check_database_of(
        &self,
        what: &str,
        how: &str,
        context: &RunContext,
    ) -> Result<(), AppError> {
        let now = self.database_identity();
        match &context.database_identity {
            Some(then) if Some(then) != now.as_ref() => Err(AppError::Conflict(format!(
                "{what} on the database {then}, and this is {}; {how} --db {}`{})",
                now.as_deref().unwrap_or("no database"),
                context
                    .database
                    .as_deref()
                    .map_or_else(|| then.clone(), steward_core::redact_url),
                context
                    .config_file
                    .as_deref()
                    .map(|c| format!(" -c {c}"))
                    .unwrap_or_default()
            ))),
            _ => Ok(()),
        }
    }

    /// What differs between the config a parked run ran under and this app's, in words (empty: nothing).
    pub fn changes_since(&self, context: &RunContext) -> Vec<String> {
        let mut changes = Vec::new();
        if let Some(then) = &context.config
            && *then != self.fingerprint()
        {
            let file = match (&context.config_file, self.config_file()) {
                (Some(then), Some(now)) if *then != now => {
                    format!(" (it waited under {then}; this is {now})")
                }
                (Some(then), None) => {
                    format!(" (it waited under {then}; this is the built-in config)")
                }
                _ => String::new(),
            };
            changes.push(format!(
                "the config changed since the run waited{file}: its roles, tools or agents may differ now"
            ));
        }
        changes
    }
}

impl Turn {
    /// The runner to drive.
    pub fn runner(&self) -> &Runner {
        &self.runner
    }

    /// The agent's name.
    pub fn agent(&self) -> &str {
        &self.agent
    }

    /// Who the turn is for.
    pub fn principal(&self) -> &Principal {
        &self.principal
    }

    /// Four eyes: why the person the turn is for may not apply its change set themselves (`None`: they may).
    pub fn own_apply_refused(&self) -> Option<String> {
        self.app
            .config
            .four_eyes(&self.principal, &self.principal)
            .err()
    }

    /// Decides the waiting call `call_id` of `run` as the turn's own principal (the person at a terminal):
    /// letting it run is refused, with who may, when their role's four eyes forbid approving their own calls.
    pub fn decide_here(
        &self,
        run: &mut Run,
        call_id: &str,
        approval: Approval,
    ) -> Result<(), AppError> {
        if !matches!(approval, Approval::Reject { .. })
            && let Some(why) = self.own_apply_refused()
        {
            return Err(AppError::Forbidden(why));
        }
        self.runner
            .decide(run, call_id, approval)
            .map_err(|e| AppError::Invalid(format!("the decision on {call_id}: {e}")))
    }

    /// The model's name.
    pub fn model_name(&self) -> &str {
        self.model.name()
    }

    /// The run's recorder in the store, when it is recorded.
    pub fn recorder(&self) -> Option<&Arc<StoreObserver>> {
        self.recorder.as_ref()
    }

    /// A new run for `input`, with the turn's model settings, tainted by what earlier turns read.
    pub fn start(&self, input: &str) -> Run {
        self.runner
            .start(input)
            .with_settings(self.settings)
            .with_taint(self.inherited.as_deref())
    }

    /// A new run `id` for `input` after `history`, with the turn's model settings, tainted by what earlier
    /// turns read.
    pub fn start_after(&self, history: &[Message], input: &str, id: String) -> Run {
        self.runner
            .start_after(history, input, id)
            .with_settings(self.settings)
            .with_taint(self.inherited.as_deref())
    }

    /// The app the turn runs in.
    pub fn app(&self) -> &Arc<App> {
        &self.app
    }

    /// Waits until the run store has everything reported so far (nothing to wait for when not recorded).
    pub async fn flush(&self) -> Result<(), StoreError> {
        match &self.recorder {
            Some(recorder) => recorder.flush().await,
            None => Ok(()),
        }
    }

    /// What the call waiting for approval in `request` would do, when its tool can say (nothing changes).
    pub async fn preview(&self, request: &ApprovalRequest) -> Option<String> {
        let tool = self
            .app
            .tool_for(&self.principal, &request.call.name, self.model.clone())
            .ok()?;
        let args = serde_json::from_str(&request.call.arguments).ok()?;
        let ctx = ToolContext::new("preview", request.call.id.as_str(), "preview")
            .with_tool(request.call.name.as_str())
            .with_principal(Arc::new(self.principal.clone()));
        tool.preview(&ctx, args).await
    }

    /// Saves `run`, which waits for `requests`, with their previews and what it ran under, so that anyone may
    /// decide and resume it; the waiting calls are chained in the audit trail.
    pub async fn park(&self, run: &Run, requests: &[ApprovalRequest]) -> Result<Parked, AppError> {
        let Some(store) = &self.app.store else {
            return Err(AppError::Conflict(
                "the run waits for approval, and there is no run store to save it in".to_owned(),
            ));
        };
        let mut previews = Vec::new();
        for request in requests {
            previews.push(self.preview(request).await);
        }
        let ids = store
            .save_pending(
                run,
                &self.agent,
                &self.principal,
                requests,
                &previews,
                run.tainted_by(),
                &self.context,
            )
            .await?;
        let pending = store.pending_run(run.id()).await?;
        Ok(Parked {
            ids,
            previews,
            pending,
        })
    }

    /// Saves the change set of `run` (taken out of it) to be decided later, with what the run ran under; its
    /// id, or `None` when the run staged nothing.
    pub async fn save_changes(&self, run: &mut Run) -> Result<Option<String>, AppError> {
        if run.staged().is_empty() {
            return Ok(None);
        }
        let Some(store) = &self.app.store else {
            return Err(AppError::Conflict(
                "the run staged changes, and there is no run store to save them in".to_owned(),
            ));
        };
        self.app.room_for_change_set(&self.principal).await?;
        let staged = run.take_staged();
        let id = store
            .save_change_set(
                run.id(),
                &self.agent,
                &self.principal,
                &staged,
                &self.context,
            )
            .await?;
        Ok(Some(id))
    }

    /// Applies `decisions` to the parked `run` (each checked as a decision on the waiting call: an edit
    /// must fit the tool's schema).
    pub fn apply(&self, run: &mut Run, decisions: Decisions) -> Result<(), AppError> {
        for (call_id, decision) in decisions {
            self.runner
                .decide(run, &call_id, decision)
                .map_err(|e| AppError::Invalid(format!("the decision on {call_id}: {e}")))?;
        }
        Ok(())
    }
}
