//! The runner: drives a [`Run`] with a model, the agent's tools and a policy, and reports events.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use futures_util::FutureExt as _;
use futures_util::stream::{FuturesUnordered, StreamExt as _};

use crate::agent::Agent;
use crate::approval::Approval;
use crate::approval::ApprovalRequest;
use crate::budget::RunBudget;
use crate::context::ToolContext;
use crate::error::Error;
use crate::event::{Event, EventRecord, NoObserver, Observer};
use crate::message::{Message, ToolCall};
use crate::model::{FailureCause, Model, ModelRequest, StreamDelta, ToolReplay};
use crate::outcome::Outcome;
use crate::policy::{AnnotationPolicy, Policy};
use crate::principal::Principal;
use crate::run::{CheckedCall, Invocation, Resumption, Run, StagedCall, Step};
use crate::run_failed::RunFailed;
use crate::suspension::ToolProgress;
use crate::tool::{ToolError, ToolOutput};

/// Where a run stands when the runner hands it back.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum RunStatus {
    /// The run is over.
    Done(Outcome),
    /// The run waits for these approvals; save it, decide, and drive it again (here or in another process).
    AwaitingApproval(Vec<ApprovalRequest>),
}

impl RunStatus {
    /// The answer, when the run is over and ended with one.
    pub fn answer(&self) -> Option<&str> {
        match self {
            Self::Done(outcome) => outcome.answer(),
            Self::AwaitingApproval(_) => None,
        }
    }
}

/// Drives runs of one agent with one model.
///
/// In each step: the model is called with the trimmed history and the tool specs; each tool call is
/// validated, then put to the policy, then run. Several calls in one reply run concurrently when every one of
/// them is read-only, in order otherwise; their results go back in call order.
pub struct Runner {
    agent: Arc<Agent>,
    model: Arc<dyn Model>,
    policy: Arc<dyn Policy>,
    observer: Arc<dyn Observer>,
    principal: Arc<Principal>,
    budget: Option<Arc<RunBudget>>,
    streaming: bool,
    staging: bool,
}

impl Runner {
    /// A runner with the default policy ([`AnnotationPolicy`]) and no observer.
    pub fn new(agent: Arc<Agent>, model: Arc<dyn Model>) -> Self {
        Self {
            agent,
            model,
            policy: Arc::new(AnnotationPolicy),
            observer: Arc::new(NoObserver),
            principal: Arc::new(Principal::local()),
            budget: None,
            streaming: false,
            staging: false,
        }
    }

    /// A runner for a sub-run started by a tool call: it reports to the call's observer, obeys its policy,
    /// acts for its principal and spends from its budget.
    pub fn for_call(agent: Arc<Agent>, model: Arc<dyn Model>, ctx: &ToolContext) -> Self {
        Self::new(agent, model)
            .with_policy(ctx.policy.clone())
            .with_observer(ctx.observer.clone())
            .with_principal(ctx.principal.clone())
            .with_budget(ctx.budget.clone())
            .with_staging(ctx.staged.is_some())
    }

    /// The same runner acting for `principal` (who is asking; the local user by default).
    pub fn with_principal(mut self, principal: Arc<Principal>) -> Self {
        self.principal = principal;
        self
    }

    /// The same runner spending from a shared budget (a sub-run's parent budget). Without one, each run has
    /// its own, from the agent's token limit.
    pub fn with_budget(mut self, budget: Arc<RunBudget>) -> Self {
        self.budget = Some(budget);
        self
    }

    /// The same runner asking the model to stream; pieces are reported as [`Event::ModelDelta`].
    pub fn with_streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming;
        self
    }

    /// The same runner staging the writes that need approval (of tools that can be staged) in each run's
    /// change set instead of waiting ([`Run::staged`]); the surface then asks once, for the whole set.
    pub fn with_staging(mut self, staging: bool) -> Self {
        self.staging = staging;
        self
    }

    /// The same runner with another policy.
    pub fn with_policy(mut self, policy: Arc<dyn Policy>) -> Self {
        self.policy = policy;
        self
    }

    /// The same runner reporting events to `observer`.
    pub fn with_observer(mut self, observer: Arc<dyn Observer>) -> Self {
        self.observer = observer;
        self
    }

    /// The agent.
    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// Asks one question and drives the run to its end: the answer, or why there is none.
    ///
    /// The run itself is dropped; use [`Runner::run`] to keep it (its transcript and usage) or to wait for
    /// approvals. A call that needs approval ends `ask` with [`RunFailed::NeedsApproval`], without running.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use steward_core::{Agent, ModelResponse, Runner, ScriptedModel};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let agent = Agent::builder("greeter").instructions("You greet people.").build()?;
    /// let model = ScriptedModel::new([ModelResponse::text("Hello, Ada!")]);
    /// let runner = Runner::new(Arc::new(agent), Arc::new(model));
    /// assert_eq!(runner.ask("I am Ada.").await?, "Hello, Ada!");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn ask(&self, question: &str) -> Result<String, RunFailed> {
        match self.run(question).await.1 {
            RunStatus::Done(Outcome::Answered { answer }) => Ok(answer),
            RunStatus::Done(outcome) => Err(RunFailed::Ended { outcome }),
            RunStatus::AwaitingApproval(requests) => Err(RunFailed::NeedsApproval { requests }),
        }
    }

    /// Starts a run for the user's input and drives it until it is done or waits for approval.
    pub async fn run(&self, input: &str) -> (Run, RunStatus) {
        let mut run = self.start(input);
        let status = self.drive(&mut run).await;
        (run, status)
    }

    /// A new run for the user's input (not driven yet).
    pub fn start(&self, input: &str) -> Run {
        self.start_with_id(input, Run::generate_id())
    }

    /// A new run with a given id (not driven yet).
    pub fn start_with_id(&self, input: &str, id: String) -> Run {
        let run = self.agent.start_with_id(input, id);
        self.begin(run.with_staging(self.staging, Vec::new()), input)
    }

    /// A new run (not driven yet) that continues a conversation: `history` holds the earlier turns' messages
    /// (see [`Agent::start_after`]).
    pub fn start_after(&self, history: &[crate::Message], input: &str, id: String) -> Run {
        let run = self.agent.start_after(history, input, id);
        self.begin(run.with_staging(self.staging, Vec::new()), input)
    }

    /// A new run started by the tool call `ctx` (its id is `<run id>/<call id>`, its parent the caller's run;
    /// tainted as the caller was when it called).
    pub fn start_for_call(&self, input: &str, ctx: &ToolContext) -> Run {
        let id = format!("{}/{}", ctx.run_id, ctx.call_id);
        self.begin(
            self.agent
                .start_with_id(input, id)
                .with_parent(ctx.run_id.clone())
                .with_taint(ctx.tainted_by.as_deref())
                .with_staging(ctx.staged.is_some(), ctx.staged.clone().unwrap_or_default()),
            input,
        )
    }

    fn begin(&self, run: Run, input: &str) -> Run {
        self.emit(
            &run,
            Event::RunStarted {
                run_id: run.id().to_owned(),
                agent: self.agent.name.clone(),
                input: input.to_owned(),
            },
        );
        run
    }

    /// Adds the user's next message to a run that has ended (a conversation goes on) and reports it as
    /// [`Event::FollowUp`]; drive the run again for the answer.
    pub fn follow_up(&self, run: &mut Run, input: &str) -> Result<(), Error> {
        run.follow_up(input)?;
        self.emit(
            run,
            Event::FollowUp {
                run_id: run.id().to_owned(),
                input: input.to_owned(),
            },
        );
        Ok(())
    }

    /// Records a person's decision on a call waiting for approval (the run is not driven yet).
    ///
    /// `call_id` is an id from [`RunStatus::AwaitingApproval`]: a call of this run, or a sub-agent's call
    /// qualified by the path of agent-tool calls above it (`<call id>/<sub-agent's call id>`), which is routed
    /// down to the sub-run that waits for it. An edit ([`Approval::Edit`]) is validated against the tool's
    /// schema; an invalid one is an error and the call keeps waiting. An id that matches no waiting call is
    /// [`Error::NoSuchApproval`], naming the ids that wait. [`Event::ApprovalDecided`] is reported for the run
    /// whose call it is, with that call's own id.
    pub fn decide(&self, run: &mut Run, call_id: &str, approval: Approval) -> Result<(), Error> {
        let landed = run.decide(call_id, &approval, &self.agent.tools)?;
        self.emit_under(
            landed.parent_run_id.as_deref(),
            Event::ApprovalDecided {
                run_id: landed.run_id,
                call_id: landed.call_id,
                approval,
            },
        );
        Ok(())
    }

    /// Records a decision and drives the run on.
    pub async fn resume(
        &self,
        run: &mut Run,
        call_id: &str,
        approval: Approval,
    ) -> Result<RunStatus, Error> {
        self.decide(run, call_id, approval)?;
        Ok(self.drive(run).await)
    }

    /// Ends the run as cancelled (for example after Ctrl-C) and reports it; calls that never ran are answered
    /// with a note, so the transcript stays whole. Sub-runs suspended below it are cancelled and reported too.
    pub fn cancel(&self, run: &mut Run) {
        if run.is_done() {
            return;
        }
        // Sub-runs suspended below the run end with it.
        let budget = self
            .budget
            .clone()
            .unwrap_or_else(|| Arc::new(RunBudget::unlimited()));
        for (call, state) in run.suspended_calls() {
            if let Some(tool) = self.agent.tools.get(&call.name) {
                tool.cancel(
                    &self.context(run.id(), &Caller::of(run), &call, &budget),
                    state,
                );
            }
        }
        run.abort(Outcome::Cancelled);
        self.finished(run, Outcome::Cancelled);
    }

    /// Drives the run until it is done or waits for approval.
    ///
    /// A sub-agent whose call waits for approval suspends its agent-tool call, and this run waits with it:
    /// the status lists the sub-agent's requests with qualified ids and reasons that start with the agents'
    /// path (`[expenses] …`). Once every request of a suspended call has a decision, driving resumes the
    /// sub-run where it stopped, records its answer as the call's result and goes on.
    pub async fn drive(&self, run: &mut Run) -> RunStatus {
        if let Some(outcome) = run.outcome() {
            return RunStatus::Done(outcome.clone());
        }
        // This turn's tokens: the run's own and, kept in the run between drives, its sub-runs' (a tree that
        // waited for approval keeps what it spent before, here or in another process).
        let own = |run: &Run| run.usage().total().saturating_sub(run.turn_tokens());
        let budget = self.budget.clone().unwrap_or_else(|| {
            Arc::new(
                RunBudget::new(run.limits().max_tokens, None)
                    .with_spent(own(run).saturating_add(run.sub_run_tokens())),
            )
        });
        let status = loop {
            match run.next(&self.agent.tools) {
                Step::CallModel(request) => {
                    if let Some(outcome) = exhausted(&budget) {
                        run.abort(outcome);
                        continue;
                    }
                    self.call_model(run, request, &budget).await;
                }
                Step::CallTools(invocations) => self.call_tools(run, invocations, &budget).await,
                Step::ResumeTools(resumptions) => {
                    self.resume_tools(run, resumptions, &budget).await;
                }
                Step::AwaitApproval(requests) => break RunStatus::AwaitingApproval(requests),
                Step::Done(outcome) => {
                    self.finished(run, outcome.clone());
                    break RunStatus::Done(outcome);
                }
            }
        };
        if self.budget.is_none() {
            run.set_sub_run_tokens(budget.tokens().saturating_sub(own(run)));
        }
        status
    }

    fn finished(&self, run: &Run, outcome: Outcome) {
        self.emit(
            run,
            Event::Finished {
                run_id: run.id().to_owned(),
                outcome,
                usage: run.usage(),
                steps: run.steps(),
            },
        );
    }

    fn emit(&self, run: &Run, event: Event) {
        self.emit_under(run.parent_id(), event);
    }

    fn emit_under(&self, parent: Option<&str>, event: Event) {
        self.observer
            .on_record(&EventRecord::now(event, parent.map(str::to_owned)));
    }

    async fn call_model(&self, run: &mut Run, request: ModelRequest, budget: &RunBudget) {
        let run_id = run.id().to_owned();
        let parent = run.parent_id().map(str::to_owned);
        let step = run.steps() + 1;
        self.emit(
            run,
            Event::ModelRequest {
                run_id: run_id.clone(),
                step,
                messages: request.messages.len(),
                tools: request.tools.len(),
            },
        );
        let started = Instant::now();
        let reply = if self.streaming {
            let on_delta = |delta: StreamDelta| {
                self.emit_under(
                    parent.as_deref(),
                    Event::ModelDelta {
                        run_id: run_id.clone(),
                        step,
                        delta,
                    },
                );
            };
            within(run.remaining(), self.model.stream(&request, &on_delta)).await
        } else {
            within(run.remaining(), self.model.complete(&request)).await
        };
        let spent = started.elapsed();
        run.add_elapsed(spent);
        let response = match reply {
            None => return run.abort(time_limit(run)),
            Some(Err(error)) => {
                return run.abort(Outcome::ModelFailed {
                    error: error.to_string(),
                    cause: error.cause(),
                });
            }
            Some(Ok(response)) => response,
        };
        let usage = response.usage;
        budget.spend(usage.total());
        let finish_reason = response.finish_reason.clone();
        let verdicts =
            match run.on_model_response(response, &self.agent.tools, self.policy.as_ref()) {
                Ok(verdicts) => verdicts,
                Err(error) => {
                    return run.abort(Outcome::ModelFailed {
                        error: error.to_string(),
                        cause: FailureCause::Reply,
                    });
                }
            };
        let (content, tool_calls) = last_assistant(run.messages());
        self.emit(
            run,
            Event::ModelResponse {
                run_id: run_id.clone(),
                step,
                content,
                tool_calls,
                usage,
                finish_reason,
                duration_ms: millis(spent),
            },
        );
        for verdict in verdicts {
            let run_id = run_id.clone();
            let event = match verdict {
                CheckedCall::Rejected(call, rejection) => Event::ValidationError {
                    run_id,
                    call,
                    rejection,
                },
                CheckedCall::Denied(call, reason) => Event::ToolDenied {
                    run_id,
                    call,
                    reason,
                },
                CheckedCall::NeedsApproval(call, reason) => Event::ApprovalRequested {
                    run_id,
                    call,
                    reason,
                },
                CheckedCall::Staged(call, reason) => Event::CallStaged {
                    run_id: run.id().to_owned(),
                    call,
                    reason,
                },
                CheckedCall::Allowed(_) | CheckedCall::FinalAnswer(_) => continue,
            };
            self.emit(run, event);
        }
    }

    /// Runs the calls of one reply: concurrently when every one is read-only, else one by one in call order,
    /// stopping after a call that suspends (the later calls wait for it, so calls still happen in order).
    async fn call_tools(
        &self,
        run: &mut Run,
        invocations: Vec<Invocation>,
        budget: &Arc<RunBudget>,
    ) {
        let run_id = run.id().to_owned();
        let concurrent = invocations.len() > 1
            && invocations.iter().all(|inv| {
                self.agent
                    .tools
                    .get(&inv.call.name)
                    .is_some_and(|t| t.spec().annotations.read_only)
            });
        let time_left = run.remaining();
        let started = Instant::now();
        let left = || time_left.map(|b| b.saturating_sub(started.elapsed()));
        let mut timed_out = false;
        if concurrent {
            let caller = Caller::of(run);
            for inv in &invocations {
                self.emit_call(run, &inv.call);
            }
            let mut running: FuturesUnordered<_> = invocations
                .into_iter()
                .map(|inv| self.invoke(&run_id, &caller, inv, budget))
                .collect();
            loop {
                match within(left(), running.next()).await {
                    Some(Some(done)) => {
                        self.record(run, done);
                    }
                    Some(None) => break,
                    None => {
                        timed_out = true;
                        break;
                    }
                }
            }
        } else {
            for inv in invocations {
                self.emit_call(run, &inv.call);
                let caller = Caller::of(run);
                match within(left(), self.invoke(&run_id, &caller, inv, budget)).await {
                    Some(done) => {
                        if self.record(run, done) {
                            break;
                        }
                    }
                    None => {
                        timed_out = true;
                        break;
                    }
                }
            }
        }
        run.add_elapsed(started.elapsed());
        if timed_out {
            run.abort(time_limit(run));
        }
    }

    /// Asks each suspended call whose decisions are all in to go on, in call order.
    async fn resume_tools(
        &self,
        run: &mut Run,
        resumptions: Vec<Resumption>,
        budget: &Arc<RunBudget>,
    ) {
        let run_id = run.id().to_owned();
        let time_left = run.remaining();
        let started = Instant::now();
        let mut timed_out = false;
        for resumption in resumptions {
            let left = time_left.map(|b| b.saturating_sub(started.elapsed()));
            let caller = Caller::of(run);
            let resumed = self.resume_one(&run_id, &caller, resumption, budget);
            match within(left, resumed).await {
                Some(done) => {
                    self.record(run, done);
                }
                None => {
                    timed_out = true;
                    break;
                }
            }
        }
        run.add_elapsed(started.elapsed());
        if timed_out {
            run.abort(time_limit(run));
        }
    }

    fn emit_call(&self, run: &Run, call: &ToolCall) {
        self.emit(
            run,
            Event::ToolCall {
                run_id: run.id().to_owned(),
                call: call.clone(),
            },
        );
    }

    /// Records what a call came to; true when it suspended.
    fn record(&self, run: &mut Run, done: Done) -> bool {
        let Done {
            call,
            progress,
            spent,
            note,
            staged,
        } = done;
        let mut result = match progress {
            ToolProgress::Done(result) => result,
            ToolProgress::Suspended(suspension) => {
                match run.record_suspension(&call.id, suspension) {
                    // The sub-run reported its own requests as they arose; the call's result comes when it ends.
                    Ok(()) => return true,
                    Err(error) => Err(ToolError::internal(error.to_string())),
                }
            }
        };
        if let Ok(output) = &mut result {
            // A sub-agent's run continued this run's change set.
            run.adopt_staged(std::mem::take(&mut output.staged));
            if let Some((args, reason)) = staged {
                run.stage(StagedCall {
                    run_id: run.id().to_owned(),
                    call: call.clone(),
                    args,
                    reason,
                    output: output.clone(),
                });
                output.content = format!(
                    "Staged, not written yet: {}\n(This change waits, with the run's other staged changes, for one \
                     decision when you are done; go on as if it were made, and say in your answer that the \
                     changes wait for approval.)",
                    output.content
                );
            }
        }
        let recorded = run.record_result(&call.id, &result);
        // Outside data came in, in a result or in an error (an engine quotes the value it rejected): later
        // decisions of this run see it.
        let reads = self
            .agent
            .tools
            .get(&call.name)
            .is_some_and(|tool| self.policy.taints(tool.spec()));
        let carried = match &result {
            Ok(output) => output.tainted_by.as_deref(),
            Err(error) => error.tainted_by.as_deref(),
        };
        match carried {
            Some(by) => run.taint(by),
            None if reads => run.taint(&call.name),
            None => {}
        }
        let (content, is_error, data, diagnostic, person) = match result {
            Ok(output) => (output.content, false, output.data, note, None),
            Err(error) => (
                error.message,
                true,
                None,
                error.diagnostic.or(note),
                error.person,
            ),
        };
        let diagnostic = match recorded {
            Ok(()) => diagnostic,
            Err(e) => Some(diagnostic.map_or_else(|| e.to_string(), |d| format!("{d}; {e}"))),
        };
        self.emit(
            run,
            Event::ToolResult {
                run_id: run.id().to_owned(),
                call_id: call.id.clone(),
                tool: call.name.clone(),
                content,
                is_error,
                data,
                diagnostic,
                person,
                duration_ms: millis(spent),
            },
        );
        false
    }

    /// The context of one call of the run `run_id`, as the run `caller` stood when it made it: everything a
    /// sub-run started by the call inherits.
    fn context(
        &self,
        run_id: &str,
        caller: &Caller,
        call: &ToolCall,
        budget: &Arc<RunBudget>,
    ) -> ToolContext {
        ToolContext::new(run_id, call.id.as_str(), self.agent.name.as_str())
            .with_tool(call.name.as_str())
            .with_principal(self.principal.clone())
            .with_observer(self.observer.clone())
            .with_policy(self.policy.clone())
            .with_budget(budget.clone())
            .with_taint(caller.tainted_by.as_deref())
            .with_staged(caller.staged.clone())
    }

    async fn invoke(
        &self,
        run_id: &str,
        caller: &Caller,
        inv: Invocation,
        budget: &Arc<RunBudget>,
    ) -> Done {
        let started = Instant::now();
        let done = |call, result: Result<ToolOutput, ToolError>, note| Done {
            call,
            progress: ToolProgress::Done(result),
            spent: started.elapsed(),
            note,
            staged: None,
        };
        // A replay never runs a tool that changes things: the model shows the recorded result instead.
        if let Some(tool) = self.agent.tools.get(&inv.call.name)
            && !tool.spec().annotations.read_only
            && !tool.runs_agent()
        {
            match self.model.tool_replay(&inv.call) {
                ToolReplay::Live => {}
                ToolReplay::Recorded { content, is_error } => {
                    let result = if is_error {
                        Err(ToolError::new(content))
                    } else {
                        Ok(ToolOutput::text(content))
                    };
                    let note = "replayed: the recorded result; the tool did not run".to_owned();
                    return done(inv.call, result, Some(note));
                }
                ToolReplay::Missing => {
                    let result = Err(ToolError::new(format!(
                        "`{}` was not run: this is a replay, and the recording holds no result for this call",
                        inv.call.name
                    ))
                    .with_diagnostic(
                        "replay: a tool that is not read-only is never run; the recording has no result for it",
                    ));
                    return done(inv.call, result, None);
                }
            }
        }
        let mut ctx = self.context(run_id, caller, &inv.call, budget);
        if inv.staged.is_some() {
            ctx = ctx.with_dry_run();
        }
        let staged = inv.staged.map(|reason| (inv.args.clone(), reason));
        let progress = match self.agent.tools.get(&inv.call.name) {
            Some(tool) => caught(&inv.call.name, tool.call_or_suspend(&ctx, inv.args)).await,
            None => missing(&inv.call.name),
        };
        Done {
            call: inv.call,
            progress,
            spent: started.elapsed(),
            note: None,
            staged,
        }
    }

    async fn resume_one(
        &self,
        run_id: &str,
        caller: &Caller,
        resumption: Resumption,
        budget: &Arc<RunBudget>,
    ) -> Done {
        let started = Instant::now();
        let ctx = self.context(run_id, caller, &resumption.call, budget);
        let progress = match self.agent.tools.get(&resumption.call.name) {
            Some(tool) => caught(&resumption.call.name, tool.resume(&ctx, resumption.state)).await,
            None => missing(&resumption.call.name),
        };
        Done {
            call: resumption.call,
            progress,
            spent: started.elapsed(),
            note: None,
            staged: None,
        }
    }
}

/// What a call inherits from the run that makes it, as the run stands when it makes it.
struct Caller {
    tainted_by: Option<String>,
    staged: Option<Vec<StagedCall>>,
}

impl Caller {
    fn of(run: &Run) -> Self {
        Self {
            tainted_by: run.tainted_by().map(str::to_owned),
            staged: run.is_staging().then(|| run.staged().to_vec()),
        }
    }
}

/// What one tool call came to, and how long it took.
struct Done {
    call: ToolCall,
    progress: ToolProgress,
    spent: Duration,
    /// A note for the operator (a replayed result).
    note: Option<String>,
    /// The call was staged: its arguments and why it needs approval.
    staged: Option<(serde_json::Value, String)>,
}

/// Awaits a tool's future; a panic becomes the call's internal error.
async fn caught(name: &str, future: impl Future<Output = ToolProgress>) -> ToolProgress {
    AssertUnwindSafe(future)
        .catch_unwind()
        .await
        .unwrap_or_else(|panic| {
            ToolProgress::Done(Err(ToolError::internal(format!(
                "tool `{name}` panicked: {}",
                panic_text(panic.as_ref())
            ))))
        })
}

fn missing(name: &str) -> ToolProgress {
    ToolProgress::Done(Err(ToolError::internal(format!(
        "tool `{name}` disappeared from the toolbox"
    ))))
}

/// Awaits `future`, giving up (None) after `limit` when there is one and a Tokio timer to enforce it.
async fn within<F: Future>(limit: Option<Duration>, future: F) -> Option<F::Output> {
    match limit {
        Some(limit) if tokio::runtime::Handle::try_current().is_ok() => {
            tokio::time::timeout(limit, future).await.ok()
        }
        _ => Some(future.await),
    }
}

/// The outcome when the shared budget is used up.
fn exhausted(budget: &RunBudget) -> Option<Outcome> {
    if let Some((limit, used)) = budget.tokens_exhausted() {
        return Some(Outcome::TokenBudget { limit, used });
    }
    budget
        .steps_exhausted()
        .map(|limit| Outcome::MaxSteps { limit })
}

fn time_limit(run: &Run) -> Outcome {
    Outcome::TimeLimit {
        limit_ms: run.limits().time_limit.map_or(0, millis),
    }
}

/// The text and calls of the newest assistant message (its results may already follow it).
fn last_assistant(messages: &[Message]) -> (Option<String>, Vec<ToolCall>) {
    messages
        .iter()
        .rev()
        .find_map(|m| match m {
            Message::Assistant {
                content,
                tool_calls,
            } => Some((content.clone(), tool_calls.clone())),
            _ => None,
        })
        .unwrap_or_default()
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn panic_text(panic: &(dyn Any + Send)) -> &str {
    if let Some(s) = panic.downcast_ref::<&str>() {
        s
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s
    } else {
        "a non-text panic payload"
    }
}
