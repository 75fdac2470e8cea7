//! The terminal trace: each step's thought, tool calls with their arguments and observations, on standard
//! error, and a spinner while the model or a tool works.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use steward_core::{Event, Observer, Outcome, StreamDelta, Usage};
use steward_llm::PriceTable;

use crate::style::Style;

/// Longest observation shown in the trace (the model may have seen more).
const MAX_SHOWN: usize = 400;

/// Renders run events on standard error.
pub(crate) struct Trace {
    enabled: AtomicBool,
    spinner_enabled: bool,
    style: Style,
    model: String,
    prices: PriceTable,
    spinner: Mutex<Option<ProgressBar>>,
    /// Sub-agents' runs by id: their agent and nesting depth.
    runs: Mutex<HashMap<String, (String, usize)>>,
    /// Tokens of every run, sub-agents included (since the last question, in a conversation).
    total: Mutex<Usage>,
    /// Steps of each run before the current question (a conversation's steps restart at 1 per question).
    turns: Mutex<HashMap<String, (u32, u32)>>,
    /// Write the steps to standard output (`steward runs show`) instead of standard error.
    to_stdout: bool,
    /// Print the top run's text on standard output as the model writes it.
    streaming: bool,
    /// What was streamed of the top run's current reply.
    streamed: Mutex<String>,
    /// Renders the streamed reply's Markdown.
    markdown: Mutex<crate::markdown::Markdown>,
    /// The top run's last reply with no tool calls, when it was streamed whole (the answer, already shown).
    streamed_answer: Mutex<Option<String>>,
}

impl Trace {
    /// A trace for runs of `model`; `enabled` prints the steps, the spinner shows whenever stderr is a terminal.
    pub(crate) fn new(enabled: bool, model: &str, prices: PriceTable) -> Self {
        Self {
            enabled: AtomicBool::new(enabled),
            spinner_enabled: std::io::stderr().is_terminal(),
            style: Style::stderr(),
            model: model.to_owned(),
            prices,
            spinner: Mutex::new(None),
            runs: Mutex::new(HashMap::new()),
            total: Mutex::new(Usage::default()),
            turns: Mutex::new(HashMap::new()),
            to_stdout: false,
            streaming: false,
            streamed: Mutex::new(String::new()),
            markdown: Mutex::new(crate::markdown::Markdown::new(Style::stdout())),
            streamed_answer: Mutex::new(None),
        }
    }

    /// A trace that prints a stored run's events on standard output (`steward runs show`).
    pub(crate) fn replay(model: &str) -> Self {
        Self {
            spinner_enabled: false,
            style: Style::stdout(),
            to_stdout: true,
            ..Self::new(true, model, PriceTable::builtin())
        }
    }

    /// The same trace, printing the top run's replies on standard output as the model writes them (when
    /// standard output is a terminal: a pipe gets the answer alone, once it is known).
    pub(crate) fn streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming && std::io::stdout().is_terminal();
        self
    }

    /// Clears the spinner (after Ctrl-C, no frame of it is left on the screen).
    pub(crate) fn clear(&self) {
        self.stop();
    }

    /// True when replies are streamed to standard output.
    pub(crate) fn is_streaming(&self) -> bool {
        self.streaming
    }

    /// Takes the answer streamed since the last call, if the run's last reply was streamed whole.
    pub(crate) fn take_streamed_answer(&self) -> Option<String> {
        lock(&self.streamed_answer).take()
    }

    /// Tokens used by every run reported so far, sub-agents included.
    pub(crate) fn total_usage(&self) -> Usage {
        *self
            .total
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `  [expenses] ` for a sub-agent's run, nothing for the top run.
    fn prefix(&self, run_id: &str) -> String {
        let runs = self
            .runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match runs.get(run_id) {
            Some((agent, depth)) if *depth > 0 => format!("{}[{agent}] ", "  ".repeat(*depth)),
            _ => String::new(),
        }
    }

    fn depth(&self, run_id: &str) -> usize {
        let runs = self
            .runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        runs.get(run_id).map_or(0, |(_, d)| *d)
    }

    /// Turns the step trace on or off.
    pub(crate) fn set_enabled(&self, enabled: bool) {
        self.enabled.store(enabled, Ordering::Relaxed);
    }

    pub(crate) fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    /// The cost of `usage`, formatted, or `cost unknown`.
    pub(crate) fn cost(&self, usage: Usage) -> Option<f64> {
        self.prices.cost(&self.model, usage)
    }

    fn spin(&self, message: String) {
        if !self.spinner_enabled {
            return;
        }
        let mut slot = self
            .spinner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(bar) = slot.take() {
            bar.finish_and_clear();
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} {elapsed}") {
            bar.set_style(style.tick_chars("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏ "));
        }
        bar.set_message(message);
        bar.enable_steady_tick(Duration::from_millis(100));
        *slot = Some(bar);
    }

    fn stop(&self) {
        let mut slot = self
            .spinner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(bar) = slot.take() {
            bar.finish_and_clear();
        }
    }

    fn line(&self, text: String) {
        if !self.enabled() {
            return;
        }
        let slot = self
            .spinner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let write = |text: &str| {
            if self.to_stdout {
                crate::out::line(text);
            } else {
                crate::out::err_line(text);
            }
        };
        match slot.as_ref() {
            Some(bar) => bar.suspend(|| write(&text)),
            None => write(&text),
        }
    }

    /// The summary line of a finished run.
    pub(crate) fn summary(&self, outcome: &Outcome, usage: Usage, steps: u32) -> String {
        let cost = match self.cost(usage) {
            Some(c) => format!("${c:.4}"),
            None => "cost unknown".to_owned(),
        };
        let what = match outcome {
            Outcome::Answered { .. } => self.style.good("answered"),
            other => self.style.error(&other.to_string()),
        };
        format!(
            "{what} {}",
            self.style.dim(&format!(
                "· {steps} step{} · {} tokens ({} in, {} out) · {cost}",
                if steps == 1 { "" } else { "s" },
                usage.total(),
                usage.input_tokens,
                usage.output_tokens
            ))
        )
    }
}

impl Observer for Trace {
    fn on_event(&self, event: &Event) {
        let s = self.style;
        match event {
            Event::RunStarted { run_id, agent, .. } => {
                let depth = run_id.matches('/').count();
                self.runs
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(run_id.clone(), (agent.clone(), depth));
            }
            Event::FollowUp { run_id, input } => {
                let mut turns = lock(&self.turns);
                let turn = turns.entry(run_id.clone()).or_default();
                turn.0 = turn.1;
                drop(turns);
                if self.depth(run_id) == 0 {
                    *lock(&self.total) = Usage::default();
                }
                if self.to_stdout {
                    self.line(format!("{} {input}", s.bold("question")));
                }
            }
            Event::ModelRequest { run_id, step, .. } => {
                let step = self.turn_step(run_id, *step);
                let who = self.prefix(run_id);
                self.spin(format!("{who}thinking (step {step})"));
            }
            Event::ModelDelta {
                run_id,
                delta: StreamDelta::Text(text),
                ..
            } if self.streaming && self.depth(run_id) == 0 => {
                self.stop();
                lock(&self.streamed).push_str(text);
                crate::out::raw(&lock(&self.markdown).push(text));
            }
            Event::ModelResponse {
                run_id,
                step,
                content,
                tool_calls,
                usage,
                duration_ms,
                ..
            } => {
                self.stop();
                let step = self.turn_step(run_id, *step);
                // The reply's text, when it was streamed to the terminal already (not said again as a thought).
                let mut shown = false;
                if self.depth(run_id) == 0 {
                    let streamed = std::mem::take(&mut *lock(&self.streamed));
                    shown = !streamed.is_empty();
                    if !streamed.is_empty() {
                        crate::out::raw(&lock(&self.markdown).finish());
                        if !streamed.ends_with('\n') {
                            crate::out::raw("\n");
                        }
                    }
                    *lock(&self.streamed_answer) =
                        (tool_calls.is_empty() && !streamed.is_empty()).then_some(streamed);
                }
                lock(&self.total).add(*usage);
                let p = self.prefix(run_id);
                self.line(format!(
                    "{p}{}",
                    s.bold(&format!(
                        "step {step} · {} · {:.1} s · {} in / {} out tokens",
                        self.model,
                        *duration_ms as f64 / 1000.0,
                        usage.input_tokens,
                        usage.output_tokens
                    ))
                ));
                if let Some(text) = content.as_deref().filter(|t| !t.trim().is_empty())
                    && !tool_calls.is_empty()
                    && !shown
                {
                    self.line(format!("{p}  {} {}", s.dim("thought"), one_line(text)));
                }
            }
            Event::ToolCall { run_id, call } => {
                let p = self.prefix(run_id);
                self.line(format!(
                    "{p}  {} {} {}",
                    s.call("call"),
                    s.bold(&call.name),
                    call.arguments
                ));
                self.spin(format!("{p}running {}", call.name));
            }
            Event::ValidationError {
                run_id,
                call,
                rejection,
            } => {
                let p = self.prefix(run_id);
                self.line(format!(
                    "{p}  {} {} {}",
                    s.error("invalid"),
                    s.bold(&call.name),
                    one_line(&call.arguments)
                ));
                self.line(format!(
                    "{p}  {} {}",
                    s.dim("  ->"),
                    shown(&rejection.for_person(&call.name))
                ));
            }
            Event::ToolDenied {
                run_id,
                call,
                reason,
            } => {
                let p = self.prefix(run_id);
                self.line(format!(
                    "{p}  {} {}: {reason}",
                    s.error("denied"),
                    s.bold(&call.name)
                ));
            }
            Event::ToolResult {
                run_id,
                tool,
                content,
                is_error,
                diagnostic,
                person,
                ..
            } => {
                self.stop();
                let p = self.prefix(run_id);
                let label = if *is_error {
                    s.error("failed")
                } else {
                    s.dim("result")
                };
                // A failure in the person's words (the model's speak to the model: "tell the user…").
                let text = person.as_deref().filter(|_| *is_error).unwrap_or(content);
                self.line(format!("{p}  {label} {tool}: {}", shown(text)));
                if let Some(d) = diagnostic {
                    self.line(format!("{p}  {} {d}", s.warn("diagnostic")));
                }
            }
            Event::ApprovalRequested {
                run_id,
                call,
                reason,
            } => {
                self.stop();
                let p = self.prefix(run_id);
                self.line(format!(
                    "{p}  {} {}: {reason}",
                    s.warn("approval needed"),
                    s.bold(&call.name)
                ));
            }
            Event::Finished {
                run_id,
                outcome,
                usage,
                steps,
            } => {
                self.stop();
                let steps = &self.turn_step(run_id, *steps);
                if self.depth(run_id) == 0 {
                    // A reply cut off mid-stream (Ctrl-C, a time limit) ends its line and its styles.
                    if !std::mem::take(&mut *lock(&self.streamed)).is_empty() {
                        crate::out::raw(&lock(&self.markdown).finish());
                        crate::out::raw("\n");
                    }
                    self.line(self.summary(outcome, self.total_usage(), *steps));
                } else {
                    let p = self.prefix(run_id);
                    let what = match outcome {
                        Outcome::Answered { .. } => s.good("answered"),
                        other => s.error(&other.to_string()),
                    };
                    self.line(format!(
                        "{p}{what} {}",
                        s.dim(&format!("· {steps} steps · {} tokens", usage.total()))
                    ));
                }
            }
            _ => {}
        }
    }
}

impl Trace {
    /// `step` counted from the current question of its run, and remembered as the run's last step.
    fn turn_step(&self, run_id: &str, step: u32) -> u32 {
        let mut turns = lock(&self.turns);
        let turn = turns.entry(run_id.to_owned()).or_default();
        turn.1 = turn.1.max(step);
        step.saturating_sub(turn.0)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn shown(text: &str) -> String {
    // Data reaches the model wrapped as data; the trace shows what is inside.
    let text = steward_app::roles::unmark_data(text);
    let flat = one_line(text);
    if flat.chars().count() <= MAX_SHOWN {
        flat
    } else {
        let head: String = flat.chars().take(MAX_SHOWN).collect();
        format!("{head}… ({} characters)", text.chars().count())
    }
}
