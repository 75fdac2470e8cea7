//! Answering a question with an agent for `steward eval`: the app on the question's database, the agent
//! (`analyst` by default) on the model, one run through the `Runner` watched by an `EventLog`, and what the
//! events say — the SQL the agent last ran successfully, its SQL attempts, model calls and tokens — turned into
//! a verdict.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use steward_app::{App, ModelChoice, RunModels, Surface, TurnOptions};
use steward_core::{Event, EventLog, Limits, Outcome, Principal, RunStatus, ToolData, Usage};
use steward_eval::{
    Item, Rows, ScoreOptions, Verdict, answer_matches, score_item_with, score_result_with,
};
use steward_llm::PriceTable;
use steward_sql::Database;

use super::Fatal;
use crate::agents::ConfigFile;
use crate::setup::ModelArgs;

/// The agent that answers when `--agent` names none: the text-to-SQL analyst.
const DEFAULT_AGENT: &str = "analyst";

/// The tools that run SQL: the analyst's `run_sql` (also the one inside `ask_database`, whose events come
/// through the same observer) and `query_table`, which builds its SQL from structured arguments.
const SQL_TOOLS: [&str; 2] = ["run_sql", "query_table"];

/// Everything a question's run needs: one app per database, the model and the agent to run.
pub(super) struct Agents {
    /// One app per database URL.
    apps: HashMap<String, Arc<App>>,
    /// The models of every run.
    models: RunModels,
    /// How they were chosen.
    choice: ModelChoice,
    /// The model's name (`openai:gpt-4o-mini`), for prices and reports.
    model_name: String,
    agent: String,
    principal: Principal,
    limits: Limits,
    prices: PriceTable,
}

/// What a run left: the events read for the verdict.
#[derive(Default)]
struct Trail {
    /// SQL calls that ran (successfully or not).
    attempts: u32,
    /// The last SQL call that succeeded.
    last: Option<Prediction>,
    /// Model calls, at every level.
    model_calls: u32,
    usage: Usage,
}

/// The SQL an agent ran successfully.
enum Prediction {
    /// Plain SQL (`run_sql`): scored by running it again next to the gold.
    Sql(String),
    /// A structured query (`query_table`): its SQL holds placeholders, so the rows it returned are scored.
    Rows {
        sql: String,
        rows: Rows,
        truncated: bool,
    },
}

impl Agents {
    /// Sends the spans of the runs so far (see `App::flush_traces`), when runs are traced.
    pub(super) async fn flush_traces(&self) {
        for app in self.apps.values() {
            app.flush_traces().await;
        }
    }

    /// Builds an app on each database of `urls` (the config's agents and tools with that database as the
    /// business database), checks the agent, and connects the model as `ask` does.
    pub(super) async fn open(
        config: &ConfigFile,
        urls: &BTreeSet<String>,
        model: &ModelArgs,
        agent: Option<&str>,
        store: Option<&str>,
    ) -> anyhow::Result<Self> {
        let prices = model.prices()?;
        let store = match store {
            Some(url) => Some(
                crate::runs::open(
                    config,
                    &crate::runs::StoreArgs {
                        store: Some(url.to_owned()),
                    },
                )
                .await?,
            ),
            None => None,
        };
        let mut apps = HashMap::new();
        for url in urls {
            let app = crate::agents::build_app_with(config, Some(url), store.clone())
                .await
                .map_err(|e| {
                    e.context(format!(
                        "cannot open {} for the agent",
                        steward_core::redact_url(url)
                    ))
                })?;
            apps.insert(url.clone(), Arc::new(app));
        }
        let Some(first) = urls.iter().next().and_then(|u| apps.get(u)).cloned() else {
            anyhow::bail!("no question to answer");
        };
        let agent = agent.unwrap_or(DEFAULT_AGENT).to_owned();
        for app in apps.values() {
            if app.agent_def(&agent).is_none() {
                let known = app.agent_names().collect::<Vec<_>>().join(", ");
                anyhow::bail!("there is no agent named `{agent}`; the agents are: {known}");
            }
        }
        let principal = steward_app::resolve_principal(first.config(), None, None)?;
        first.check_agent(&principal, &agent)?;
        let choice = model.choice();
        let models = first.models(&choice, &agent, None, None).await?;
        Ok(Self {
            apps,
            model_name: models.model.name().to_owned(),
            models,
            choice,
            agent,
            principal,
            limits: model.limits(),
            prices,
        })
    }

    /// The model's name.
    pub(super) fn model_name(&self) -> &str {
        &self.model_name
    }

    /// The agent's name.
    pub(super) fn agent_name(&self) -> &str {
        &self.agent
    }

    /// "analyst on openai:gpt-4o-mini".
    pub(super) fn describe(&self) -> String {
        format!("{} on {}", self.agent, self.model_name)
    }

    /// Runs the agent on `item` and scores what it did: the SQL it last ran successfully, scored against the
    /// gold on `db`; without SQL, its answer against the expected answer when the question has one. A run that
    /// stops without an answer is wrong. A model that fails stops the evaluation (no verdict: a rerun asks
    /// again).
    pub(super) async fn evaluate(
        &self,
        item: &Item,
        url: &str,
        db: &Database,
        options: &ScoreOptions,
    ) -> Result<Verdict, Fatal> {
        let app = self.apps.get(url).ok_or_else(|| {
            Fatal::Other(anyhow::anyhow!("no app was built for question {}", item.id))
        })?;
        let question = match item.evidence.as_deref().map(str::trim) {
            Some(hint) if !hint.is_empty() => format!("{}\nHint: {hint}", item.question),
            _ => item.question.clone(),
        };
        let log = EventLog::new();
        let mut turning = TurnOptions::new(Surface::Eval, self.models.clone(), self.choice.clone());
        turning.question = Some(question.clone());
        turning.limits = self.limits;
        turning.observers = vec![Arc::new(log.clone())];
        let turn = app
            .turn(&self.principal, &self.agent, turning)
            .map_err(|e| Fatal::Other(e.into()))?;
        let runner = turn.runner();
        let started = Instant::now();
        let mut run = turn.start(&question);
        let status = runner.drive(&mut run).await;
        if let Err(e) = turn.flush().await {
            crate::out::note!(
                "{} the run of question {} was not recorded completely: {e}",
                crate::style::Style::stderr().warn("warning:"),
                item.id
            );
        }
        let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let outcome = match status {
            RunStatus::Done(outcome) => outcome,
            RunStatus::AwaitingApproval(requests) => {
                runner.cancel(&mut run);
                let _ = turn.flush().await;
                let tools: Vec<&str> = requests.iter().map(|r| r.call.name.as_str()).collect();
                return Ok(self.finish(
                    stopped(
                        item,
                        format!(
                            "the run waited for approval of {} (an eval cannot give it: let the role run it \
                             without approval)",
                            tools.join(", ")
                        ),
                    ),
                    trail(&log),
                    latency_ms,
                ));
            }
            _ => Outcome::Cancelled,
        };
        let trail = trail(&log);
        let verdict = match &outcome {
            Outcome::ModelFailed { error, .. } => return Err(Fatal::Model(error.clone())),
            Outcome::Answered { answer } => {
                let mut verdict = match &trail.last {
                    Some(Prediction::Sql(sql)) => score_item_with(item, sql, db, options).await,
                    Some(Prediction::Rows {
                        sql,
                        truncated: true,
                        ..
                    }) => {
                        let mut v = Verdict::for_item(item);
                        v.predicted_sql = Some(sql.clone());
                        v.error = Some(
                            "too many rows to score: the agent's query_table result was cut short"
                                .to_owned(),
                        );
                        v
                    }
                    Some(Prediction::Rows { sql, rows, .. }) => {
                        score_result_with(item, sql, rows, db, options).await
                    }
                    None => answered_without_sql(item, answer),
                };
                verdict.answer = Some(answer.clone());
                verdict
            }
            other => {
                let mut v = stopped(item, format!("the run {other}"));
                v.predicted_sql = trail.last.as_ref().map(|p| match p {
                    Prediction::Sql(sql) | Prediction::Rows { sql, .. } => sql.clone(),
                });
                v
            }
        };
        Ok(self.finish(verdict, trail, latency_ms))
    }

    /// `verdict` with the run's attempts, model calls, tokens, latency and cost.
    fn finish(&self, mut verdict: Verdict, trail: Trail, latency_ms: u64) -> Verdict {
        verdict.attempts = trail.attempts;
        verdict.model_calls = trail.model_calls;
        verdict.tokens = trail.usage.total();
        verdict.latency_ms = latency_ms;
        verdict.cost_usd = self.prices.cost(&self.model_name, trail.usage);
        verdict
    }
}

/// A wrong verdict for a run that did not answer.
fn stopped(item: &Item, why: String) -> Verdict {
    let mut v = Verdict::for_item(item);
    v.error = Some(why);
    v
}

/// The verdict on a run that answered without running SQL: right when the question expects an answer and
/// the text gives it, else wrong.
fn answered_without_sql(item: &Item, answer: &str) -> Verdict {
    let mut v = Verdict::for_item(item);
    match &item.expected_answer {
        Some(expected) => v.correct = answer_says(expected, answer),
        None => v.error = Some("the agent answered without running SQL".to_owned()),
    }
    v
}

/// Whether the answer text gives `expected`: a number equal to it among the answer's words (`1,250.00`
/// reads as 1250), or, for a text answer, the text itself (letter case aside).
fn answer_says(expected: &str, answer: &str) -> bool {
    let mut cells = vec![Value::String(answer.trim().to_owned())];
    for word in answer.split_whitespace() {
        let word = word
            .trim_end_matches(|c: char| !c.is_alphanumeric())
            .trim_start_matches(|c: char| !c.is_alphanumeric() && c != '-');
        let plain = word.replace(',', "");
        if plain.parse::<f64>().is_ok() {
            cells.push(Value::String(plain));
        } else {
            cells.push(Value::String(word.to_owned()));
        }
    }
    let row = Rows::new(Vec::new(), vec![cells]);
    let expected = expected.trim();
    answer_matches(expected, &row)
        || (expected.parse::<f64>().is_err()
            && !expected.is_empty()
            && answer.to_lowercase().contains(&expected.to_lowercase()))
}

/// What the events of a run (and its sub-runs) say.
fn trail(log: &EventLog) -> Trail {
    let mut trail = Trail::default();
    // The SQL calls that ran, by run and call id (sub-runs may reuse a call id).
    let mut calls: HashMap<(String, String), String> = HashMap::new();
    for record in log.records() {
        match record.event {
            Event::ModelResponse { usage, .. } => {
                trail.model_calls += 1;
                trail.usage.add(usage);
            }
            Event::ToolCall { run_id, call } if SQL_TOOLS.contains(&call.name.as_str()) => {
                trail.attempts += 1;
                calls.insert((run_id, call.id), call.arguments);
            }
            Event::ToolResult {
                run_id,
                call_id,
                tool,
                content,
                is_error: false,
                data,
                ..
            } if SQL_TOOLS.contains(&tool.as_str()) => {
                let arguments = calls.get(&(run_id, call_id));
                trail.last = match tool.as_str() {
                    "run_sql" => arguments
                        .and_then(|a| serde_json::from_str::<Value>(a).ok())
                        .and_then(|a| a.get("sql").and_then(Value::as_str).map(str::to_owned))
                        .map(Prediction::Sql)
                        .or(trail.last),
                    _ => match data {
                        Some(ToolData::Table {
                            columns,
                            rows,
                            truncated,
                            ..
                        }) => Some(Prediction::Rows {
                            sql: content
                                .lines()
                                .find_map(|l| l.strip_prefix("SQL: "))
                                .unwrap_or("(query_table)")
                                .to_owned(),
                            rows: Rows::new(columns, rows),
                            truncated,
                        }),
                        _ => trail.last,
                    },
                };
            }
            _ => {}
        }
    }
    trail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_found_in_the_text() {
        assert!(answer_says(
            "Leipzig hub",
            "Order QZKDLWPRTM is at the Leipzig hub."
        ));
        assert!(answer_says("42", "There are 42 customers."));
        assert!(answer_says("1250", "Revenue was 1,250.00 EUR."));
        assert!(answer_says("0.19", "The default rate is 0.19."));
        assert!(!answer_says("42", "There are 421 customers."));
        assert!(!answer_says("DELIVERED", "It is still in transit."));
    }
}
