//! The run: a state machine with no I/O.
//!
//! [`Run::next`] says what must happen next — call the model, call these tools, wait for approval, or done —
//! and the caller feeds back what happened. Because a run holds no I/O it can be saved (it is `Serialize`)
//! while it waits for a person and resumed in another process. [`crate::Runner`] drives it with a model, tools
//! and a policy.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::approval::ApprovalRequest;
use crate::error::Error;
use crate::history::{HistoryBudget, Retention, cut_output, leading_system};
use crate::message::{Message, ToolCall};
use crate::model::{FailureCause, ModelRequest, ModelResponse, Usage};
use crate::outcome::{Outcome, Transcript};
use crate::policy::{Decision, Policy, RunFacts};
use crate::suspension::Suspension;
use crate::tool::{ToolError, ToolOutput};
use crate::toolbox::Toolbox;
use crate::validate::Rejection;

mod approvals;

use approvals::all_decided;

/// The name of the tool whose call ends a run with its `answer` argument.
pub const FINAL_ANSWER: &str = "final_answer";

/// The limits of one run. Each ends the run with its own [`Outcome`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Most model calls.
    pub max_steps: u32,
    /// Most tokens (input plus output, as the provider reports them).
    #[serde(default)]
    pub max_tokens: Option<u64>,
    /// Most wall-clock time spent driving the run (time waiting for approval does not count).
    #[serde(default)]
    pub time_limit: Option<Duration>,
}

/// How each model call of a run is made: sampling temperature and the longest reply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelSettings {
    /// Sampling temperature (provider default when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Most tokens in one reply (provider default when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_steps: 20,
            max_tokens: None,
            time_limit: None,
        }
    }
}

/// What must happen next in a run.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Step {
    /// Send this request to the model, then call [`Run::on_model_response`].
    CallModel(ModelRequest),
    /// Run these validated, allowed calls, then call [`Run::record_result`] (or [`Run::record_suspension`])
    /// for each.
    CallTools(Vec<Invocation>),
    /// These suspended calls have every decision they waited for: ask each tool to go on
    /// ([`crate::Tool::resume`]), in order, then record what it came to as for [`Step::CallTools`].
    ResumeTools(Vec<Resumption>),
    /// These calls wait for a person; call [`Run::decide`] for each. A call inside a suspended call (a
    /// sub-agent's) has an id qualified by the path of calls above it: `<call id>/<inner call id>`.
    AwaitApproval(Vec<ApprovalRequest>),
    /// The run is over.
    Done(Outcome),
}

/// A validated, allowed tool call.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Invocation {
    /// The call as the model made it.
    pub call: ToolCall,
    /// The validated arguments.
    pub args: Value,
    /// The call needs approval and is staged instead: run as a dry run, kept in the run's change set
    /// ([`Run::staged`]); the reason it needs approval.
    pub staged: Option<String>,
}

/// A write staged in a run's change set: it ran as a dry run after the change set's earlier writes, the model
/// was shown its result, and it is written only when a person applies the change set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StagedCall {
    /// The run (or sub-run) that made the call.
    pub run_id: String,
    /// The call as the model made it.
    pub call: ToolCall,
    /// Its validated arguments.
    pub args: Value,
    /// Why it needs approval.
    pub reason: String,
    /// What it returned when staged.
    pub output: ToolOutput,
}

/// A suspended tool call whose every request has a decision, ready to go on.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Resumption {
    /// The call as the model made it.
    pub call: ToolCall,
    /// The state the tool suspended with, decisions applied.
    pub state: Value,
}

/// What happened to one tool call of a model reply when it was checked.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CheckedCall {
    /// Valid and allowed: it will run.
    Allowed(ToolCall),
    /// Refused before running (unknown tool, invalid JSON or arguments).
    Rejected(ToolCall, Rejection),
    /// Denied by the policy.
    Denied(ToolCall, String),
    /// Held for approval.
    NeedsApproval(ToolCall, String),
    /// Needs approval, and staged in the run's change set instead of waiting.
    Staged(ToolCall, String),
    /// A valid `final_answer` call.
    FinalAnswer(ToolCall),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
enum CallState {
    Ready {
        args: Value,
        /// The person changed the model's arguments when approving; the model is told.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        edited: bool,
        /// Staged instead of waiting for approval, for this reason.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        staged: Option<String>,
    },
    AwaitingApproval {
        args: Value,
        reason: String,
    },
    /// The tool stopped until people decide its requests; `decided` lists the request ids decided so far.
    Suspended {
        suspension: Suspension,
        #[serde(default)]
        decided: Vec<String>,
        /// The arguments the person gave when approving the call itself with an edit, if they did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        edited: Option<Value>,
    },
    Resolved {
        content: String,
        is_error: bool,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Pending {
    call: ToolCall,
    state: CallState,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
enum Phase {
    NeedModel,
    Tools {
        calls: Vec<Pending>,
        answer: Option<String>,
    },
    Done {
        outcome: Outcome,
    },
}

/// One run of an agent: its transcript, counters and where it stands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run {
    id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    parent_id: Option<String>,
    agent: String,
    messages: Vec<Message>,
    #[serde(default)]
    dropped: usize,
    limits: Limits,
    #[serde(default)]
    history: HistoryBudget,
    #[serde(default)]
    settings: ModelSettings,
    steps: u32,
    usage: Usage,
    elapsed: Duration,
    #[serde(default)]
    turn: TurnStart,
    /// Tokens this turn's sub-runs spent, as of the last time a runner handed the run back.
    #[serde(default, skip_serializing_if = "is_zero")]
    sub_run_tokens: u64,
    /// The tool whose result first brought outside data into the run (or into the conversation or the run
    /// it continues), once one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tainted_by: Option<String>,
    /// Writes that need approval are staged in a change set instead of waiting ([`Run::staged`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    staging: bool,
    /// The change set: the writes staged so far in the run tree, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    staged: Vec<StagedCall>,
    phase: Phase,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Where the current turn of a conversation began; limits apply per turn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct TurnStart {
    steps: u32,
    tokens: u64,
    elapsed: Duration,
}

impl Run {
    /// A new run of `agent` that starts from the given messages (normally the system instructions and the
    /// user's input).
    pub fn new(
        id: impl Into<String>,
        agent: impl Into<String>,
        messages: Vec<Message>,
        limits: Limits,
        history: HistoryBudget,
    ) -> Self {
        Self {
            id: id.into(),
            parent_id: None,
            agent: agent.into(),
            messages,
            dropped: 0,
            limits,
            history,
            settings: ModelSettings::default(),
            steps: 0,
            usage: Usage::default(),
            elapsed: Duration::ZERO,
            turn: TurnStart::default(),
            sub_run_tokens: 0,
            tainted_by: None,
            staging: false,
            staged: Vec::new(),
            phase: Phase::NeedModel,
        }
    }

    /// Continues a finished run with the user's next message (a conversation). Limits apply to each turn.
    pub fn follow_up(&mut self, input: impl Into<String>) -> Result<(), Error> {
        if !self.is_done() {
            return Err(Error::OutOfOrder(
                "a follow-up message arrived before the run was done",
            ));
        }
        self.messages.push(Message::user(input));
        self.turn = TurnStart {
            steps: self.steps,
            tokens: self.usage.total(),
            elapsed: self.elapsed,
        };
        self.sub_run_tokens = 0;
        self.phase = Phase::NeedModel;
        Ok(())
    }

    /// A fresh run id: a UUIDv7, unique across processes and machines and ordered by time.
    pub fn generate_id() -> String {
        uuid::Uuid::now_v7().to_string()
    }

    /// The same run, started by a call in the run `parent` (a specialist's run under a router's).
    pub fn with_parent(mut self, parent: impl Into<String>) -> Self {
        self.parent_id = Some(parent.into());
        self
    }

    /// The same run with other model settings.
    pub fn with_settings(mut self, settings: ModelSettings) -> Self {
        self.settings = settings;
        self
    }

    /// The same run, already tainted by `by` when given: what it continues (an earlier turn, the run that
    /// started it) read outside data from that tool.
    pub fn with_taint(mut self, by: Option<&str>) -> Self {
        if let Some(by) = by {
            self.taint(by);
        }
        self
    }

    /// Marks the run as having read outside data from the tool `by` (the first such tool is kept).
    pub fn taint(&mut self, by: &str) {
        if self.tainted_by.is_none() {
            self.tainted_by = Some(by.to_owned());
        }
    }

    /// The same run, staging the writes that need approval (when the tool can be staged, see
    /// [`crate::Tool::stages`]) in a change set instead of waiting, after the writes `staged` before it (a
    /// sub-run continues its caller's change set).
    pub fn with_staging(mut self, staging: bool, staged: Vec<StagedCall>) -> Self {
        self.staging = staging;
        self.staged = staged;
        self
    }

    /// True when the run stages writes that need approval.
    pub fn is_staging(&self) -> bool {
        self.staging
    }

    /// The change set: every write staged in the run tree so far, in order.
    pub fn staged(&self) -> &[StagedCall] {
        &self.staged
    }

    /// Takes the change set out of the run, once a person decided on it (the run goes on without it).
    pub fn take_staged(&mut self) -> Vec<StagedCall> {
        std::mem::take(&mut self.staged)
    }

    /// Adds a staged write to the change set.
    pub fn stage(&mut self, staged: StagedCall) {
        self.staged.push(staged);
    }

    /// Takes the change set of a sub-run that continued this run's (it holds this run's staged writes first).
    pub fn adopt_staged(&mut self, staged: Vec<StagedCall>) {
        if staged.len() >= self.staged.len() {
            self.staged = staged;
        }
    }

    /// The tool whose result first brought outside data into the run, once one did: the policy sees it
    /// ([`crate::RunFacts`]) and holds later writes.
    pub fn tainted_by(&self) -> Option<&str> {
        self.tainted_by.as_deref()
    }

    /// The run that started this one, if any.
    pub fn parent_id(&self) -> Option<&str> {
        self.parent_id.as_deref()
    }

    /// The run's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The agent's name.
    pub fn agent(&self) -> &str {
        &self.agent
    }

    /// Every message kept so far, in order.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Model calls made so far.
    pub fn steps(&self) -> u32 {
        self.steps
    }

    /// Tokens used so far.
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// The limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Time spent driving the run so far.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// The outcome, once the run is over.
    pub fn outcome(&self) -> Option<&Outcome> {
        match &self.phase {
            Phase::Done { outcome } => Some(outcome),
            _ => None,
        }
    }

    /// True once the run is over.
    pub fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Done { .. })
    }

    /// The run's transcript so far.
    pub fn transcript(&self) -> Transcript {
        Transcript {
            run_id: self.id.clone(),
            agent: self.agent.clone(),
            messages: self.messages.clone(),
            dropped_messages: self.dropped,
            steps: self.steps,
            usage: self.usage,
            outcome: self.outcome().cloned(),
        }
    }

    /// Adds time spent driving the run.
    pub fn add_elapsed(&mut self, spent: Duration) {
        self.elapsed = self.elapsed.saturating_add(spent);
    }

    /// Time left in this turn before the time limit, if there is one.
    pub fn remaining(&self) -> Option<Duration> {
        self.limits
            .time_limit
            .map(|limit| limit.saturating_sub(self.turn_elapsed()))
    }

    /// Tokens used before the current turn began (a conversation's earlier questions).
    pub fn turn_tokens(&self) -> u64 {
        self.turn.tokens
    }

    /// Tokens this turn's sub-runs spent (the runner keeps the count when it hands the run back, so that a run
    /// tree resumed after approval still spends from what is left of its budget).
    pub(crate) fn sub_run_tokens(&self) -> u64 {
        self.sub_run_tokens
    }

    pub(crate) fn set_sub_run_tokens(&mut self, tokens: u64) {
        self.sub_run_tokens = tokens;
    }

    fn turn_elapsed(&self) -> Duration {
        self.elapsed.saturating_sub(self.turn.elapsed)
    }

    /// What must happen next. Checks the limits before each model call.
    pub fn next(&mut self, tools: &Toolbox) -> Step {
        match &self.phase {
            Phase::Done { outcome } => return Step::Done(outcome.clone()),
            Phase::Tools { calls, .. } => {
                let waiting = self.awaiting_approval();
                if !waiting.is_empty() {
                    return Step::AwaitApproval(waiting);
                }
                let resumable: Vec<Resumption> = calls
                    .iter()
                    .filter_map(|p| match &p.state {
                        CallState::Suspended {
                            suspension,
                            decided,
                            ..
                        } if all_decided(suspension, decided) => Some(Resumption {
                            call: p.call.clone(),
                            state: suspension.state.clone(),
                        }),
                        _ => None,
                    })
                    .collect();
                if !resumable.is_empty() {
                    return Step::ResumeTools(resumable);
                }
                let ready: Vec<Invocation> = calls
                    .iter()
                    .filter_map(|p| match &p.state {
                        CallState::Ready { args, staged, .. } => Some(Invocation {
                            call: p.call.clone(),
                            args: args.clone(),
                            staged: staged.clone(),
                        }),
                        _ => None,
                    })
                    .collect();
                if !ready.is_empty() {
                    return Step::CallTools(ready);
                }
                self.settle();
                return self.next(tools);
            }
            Phase::NeedModel => {}
        }
        if let Some(outcome) = self.limit_reached() {
            self.phase = Phase::Done {
                outcome: outcome.clone(),
            };
            return Step::Done(outcome);
        }
        let repeated = self.repeated_calls(0);
        if !repeated.is_empty() && !self.repeated_calls(1).is_empty() {
            // Told at the step before that it had the result, the model made the same call again.
            let outcome = Outcome::ModelFailed {
                error: format!(
                    "the model kept calling {} with the same arguments after it had the result, instead of \
                     answering; a larger model, or a clearer question, may do better",
                    repeated.join(", ")
                ),
                cause: crate::FailureCause::Reply,
            };
            self.phase = Phase::Done {
                outcome: outcome.clone(),
            };
            return Step::Done(outcome);
        }
        let mut request = ModelRequest::new(self.window(), tools.specs());
        request.temperature = self.settings.temperature;
        request.max_output_tokens = self.settings.max_output_tokens;
        if !repeated.is_empty() {
            // A model that makes the same call again after its result (small models loop so) is told it has
            // the result — said again as plain text, which every chat template shows — and this step offers no
            // tool: it answers from what it has.
            request.tool_choice = crate::ToolChoice::None;
            let result = self
                .messages
                .iter()
                .rev()
                .find_map(|m| match m {
                    Message::Tool { content, .. } => Some(content.as_str()),
                    _ => None,
                })
                .unwrap_or_default();
            let result: String = result.chars().take(2_000).collect();
            request.messages.push(Message::user(format!(
                "(Steward: you already called {} with these same arguments. Its result: {result}\nDo not call it \
                 again: answer the question now from this result, or say what is missing.)",
                repeated.join(", ")
            )));
        }
        Step::CallModel(request)
    }

    /// The tools of the model's calls `back` steps before its last (0: the last) when they repeat, exactly, its
    /// calls of the step before — the same tools with the same arguments (as JSON values: spacing and key order
    /// do not count) — whose results came back without an error; empty otherwise. (A failing call tried again
    /// is a retry, which the tools' own errors steer.)
    fn repeated_calls(&self, back: usize) -> Vec<String> {
        let start = self
            .messages
            .iter()
            .rposition(|m| matches!(m, Message::User { .. }))
            .unwrap_or(0);
        let turn = self.messages.get(start..).unwrap_or_default();
        let failed: Vec<&str> = turn
            .iter()
            .filter_map(|m| match m {
                Message::Tool {
                    call_id, is_error, ..
                } if *is_error => Some(call_id.as_str()),
                _ => None,
            })
            .collect();
        let groups: Vec<&Vec<crate::ToolCall>> = turn
            .iter()
            .filter_map(|m| match m {
                Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => Some(tool_calls),
                _ => None,
            })
            .collect();
        let Some(at) = groups.len().checked_sub(back + 1) else {
            return Vec::new();
        };
        let (Some(last), Some(before)) = (
            groups.get(at),
            at.checked_sub(1).and_then(|b| groups.get(b)),
        ) else {
            return Vec::new();
        };
        let key = |c: &crate::ToolCall| {
            (
                c.name.clone(),
                serde_json::from_str::<serde_json::Value>(&c.arguments)
                    .unwrap_or_else(|_| serde_json::Value::String(c.arguments.trim().to_owned())),
            )
        };
        let same = last.len() == before.len()
            && last
                .iter()
                .zip(before.iter())
                .all(|(a, b)| key(a) == key(b))
            && before.iter().all(|c| !failed.contains(&c.id.as_str()));
        if !same {
            return Vec::new();
        }
        let mut names: Vec<String> = last.iter().map(|c| format!("`{}`", c.name)).collect();
        names.dedup();
        names
    }

    fn limit_reached(&self) -> Option<Outcome> {
        if let Some(limit) = self.limits.time_limit
            && self.turn_elapsed() >= limit
        {
            return Some(Outcome::TimeLimit {
                limit_ms: duration_ms(limit),
            });
        }
        let used = self.usage.total().saturating_sub(self.turn.tokens);
        if let Some(limit) = self.limits.max_tokens
            && used >= limit
        {
            return Some(Outcome::TokenBudget { limit, used });
        }
        if self.steps - self.turn.steps >= self.limits.max_steps {
            return Some(Outcome::MaxSteps {
                limit: self.limits.max_steps,
            });
        }
        None
    }

    /// The messages for the next model call; under window retention, forgets what fell out of the window.
    fn window(&mut self) -> Vec<Message> {
        let first = leading_system(&self.messages);
        let start = self.history.window_start(&self.messages, first);
        if self.history.retention == Retention::Window && start > first {
            self.messages.drain(first..start);
            self.dropped += start - first;
            return self.messages.clone();
        }
        let mut out = Vec::with_capacity(first + self.messages.len() - start);
        out.extend_from_slice(&self.messages[..first]);
        out.extend_from_slice(&self.messages[start..]);
        out
    }

    /// Takes the model's reply: appends it, then checks each tool call (existence, arguments, policy).
    ///
    /// Calls with missing ids get one (`call_<step>_<n>`), and repeated ids are made unique, so that every
    /// result can be matched to its call.
    pub fn on_model_response(
        &mut self,
        mut response: ModelResponse,
        tools: &Toolbox,
        policy: &dyn Policy,
    ) -> Result<Vec<CheckedCall>, Error> {
        if self.phase != Phase::NeedModel {
            return Err(Error::OutOfOrder(
                "a model reply arrived when none was expected",
            ));
        }
        self.steps += 1;
        self.usage.add(response.usage);
        assign_call_ids(&mut response.tool_calls, self.steps);
        let message = Message::assistant_calls(response.content.take(), response.tool_calls);
        self.messages.push(message);
        let Some(Message::Assistant {
            content,
            tool_calls,
        }) = self.messages.last()
        else {
            return Ok(Vec::new());
        };
        if tool_calls.is_empty() {
            let answer = content.clone().unwrap_or_default();
            self.phase = Phase::Done {
                outcome: if answer.trim().is_empty() {
                    Outcome::ModelFailed {
                        error: format!(
                            "the model returned an empty reply (finish reason: {:?})",
                            response.finish_reason
                        ),
                        cause: FailureCause::Reply,
                    }
                } else {
                    Outcome::Answered { answer }
                },
            };
            return Ok(Vec::new());
        }
        let mut verdicts = Vec::with_capacity(tool_calls.len());
        let mut calls = Vec::with_capacity(tool_calls.len());
        let mut answer = None;
        for call in tool_calls {
            let (state, verdict) = match tools.check(call) {
                Err(rejection) => (
                    CallState::Resolved {
                        content: rejection.observation.clone(),
                        is_error: true,
                    },
                    CheckedCall::Rejected(call.clone(), rejection),
                ),
                Ok((_, args)) if call.name == FINAL_ANSWER => {
                    answer = Some(final_answer_text(&args));
                    (
                        CallState::Resolved {
                            content: "Answer recorded.".to_owned(),
                            is_error: false,
                        },
                        CheckedCall::FinalAnswer(call.clone()),
                    )
                }
                Ok((tool, args)) => match policy.decide(
                    call,
                    tool.spec(),
                    &args,
                    RunFacts::tainted_by(self.tainted_by.as_deref()),
                ) {
                    Decision::Allow => (
                        CallState::Ready {
                            args,
                            edited: false,
                            staged: None,
                        },
                        CheckedCall::Allowed(call.clone()),
                    ),
                    Decision::Review { reason } if self.staging && tool.stages() => (
                        CallState::Ready {
                            args,
                            edited: false,
                            staged: Some(reason.clone()),
                        },
                        CheckedCall::Staged(call.clone(), reason),
                    ),
                    Decision::Deny { reason } => (
                        CallState::Resolved {
                            content: format!(
                                "Not allowed: {reason}. Do not retry this call; tell the user or choose another way."
                            ),
                            is_error: true,
                        },
                        CheckedCall::Denied(call.clone(), reason),
                    ),
                    Decision::Review { reason } if self.staging => {
                        // Said, so that the person knows why this one is asked on its own.
                        let reason = format!(
                            "{reason}; `{}` cannot be staged with the run's other changes (it cannot be tried \
                             in a transaction of the run's database and rolled back), so it is approved on its own",
                            call.name
                        );
                        (
                            CallState::AwaitingApproval {
                                args,
                                reason: reason.clone(),
                            },
                            CheckedCall::NeedsApproval(call.clone(), reason),
                        )
                    }
                    Decision::NeedsApproval { reason } | Decision::Review { reason } => (
                        CallState::AwaitingApproval {
                            args,
                            reason: reason.clone(),
                        },
                        CheckedCall::NeedsApproval(call.clone(), reason),
                    ),
                },
            };
            calls.push(Pending {
                call: call.clone(),
                state,
            });
            verdicts.push(verdict);
        }
        self.phase = Phase::Tools { calls, answer };
        self.settle();
        Ok(verdicts)
    }

    /// Records the result of a call returned by [`Step::CallTools`] or [`Step::ResumeTools`]. Outputs longer
    /// than the history budget allows are cut with a marker.
    pub fn record_result(
        &mut self,
        call_id: &str,
        result: &Result<ToolOutput, ToolError>,
    ) -> Result<(), Error> {
        let max_chars = self.history.max_tool_output_chars;
        let pending = self.pending_mut(call_id)?;
        let edited = match &pending.state {
            CallState::Ready { args, edited, .. } => edited.then_some(args),
            CallState::Suspended {
                suspension,
                decided,
                edited,
            } if all_decided(suspension, decided) => edited.as_ref(),
            _ => {
                return Err(Error::OutOfOrder(
                    "a result arrived for a call that is not running",
                ));
            }
        };
        let note = edited.map(|args| {
            format!(
                "The user changed the arguments of this call before approving it; it ran with {args}.\n"
            )
        });
        let (text, is_error) = match result {
            Ok(output) => (output.content.as_str(), false),
            Err(error) => (error.message.as_str(), true),
        };
        let content = cut_output(text, max_chars);
        pending.state = CallState::Resolved {
            content: match note {
                Some(note) => note + &content,
                None => content,
            },
            is_error,
        };
        self.settle();
        Ok(())
    }

    /// Ends the run with `outcome`. Calls that had not finished are answered with a note saying so, so that
    /// every call in the transcript keeps its result.
    pub fn abort(&mut self, outcome: Outcome) {
        if let Phase::Tools { calls, .. } = &mut self.phase {
            for pending in calls.iter_mut() {
                if !matches!(pending.state, CallState::Resolved { .. }) {
                    pending.state = CallState::Resolved {
                        content: format!(
                            "No result: the run ended ({outcome}) before this call finished."
                        ),
                        is_error: true,
                    };
                }
            }
            self.append_results();
        }
        if !self.is_done() {
            self.phase = Phase::Done { outcome };
        }
    }

    fn pending_mut(&mut self, call_id: &str) -> Result<&mut Pending, Error> {
        match &mut self.phase {
            Phase::Tools { calls, .. } => calls
                .iter_mut()
                .find(|p| p.call.id == call_id)
                .ok_or_else(|| Error::UnknownCall(call_id.to_owned())),
            _ => Err(Error::UnknownCall(call_id.to_owned())),
        }
    }

    /// When every call of the current reply is resolved: append the results in call order and move on.
    fn settle(&mut self) {
        let Phase::Tools { calls, answer } = &self.phase else {
            return;
        };
        if !calls
            .iter()
            .all(|p| matches!(p.state, CallState::Resolved { .. }))
        {
            return;
        }
        let answer = answer.clone();
        self.append_results();
        self.phase = match answer {
            Some(answer) => Phase::Done {
                outcome: Outcome::Answered { answer },
            },
            None => Phase::NeedModel,
        };
    }

    fn append_results(&mut self) {
        let Phase::Tools { calls, .. } = &mut self.phase else {
            return;
        };
        for pending in calls.drain(..) {
            if let CallState::Resolved { content, is_error } = pending.state {
                self.messages.push(Message::Tool {
                    call_id: pending.call.id,
                    name: pending.call.name,
                    content,
                    is_error,
                });
            }
        }
    }
}

fn assign_call_ids(calls: &mut [ToolCall], step: u32) {
    for i in 0..calls.len() {
        let taken = calls[..i].iter().any(|c| c.id == calls[i].id);
        if calls[i].id.is_empty() || taken {
            calls[i].id = format!("call_{step}_{}", i + 1);
        }
    }
}

fn final_answer_text(args: &Value) -> String {
    match args.get("answer") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => args.to_string(),
    }
}

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
