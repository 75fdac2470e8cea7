//! `steward ask`: one question, one answer.

use std::io::Read;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Args;
use serde_json::json;
use steward_core::{Outcome, Runner};

use crate::setup::{ModelArgs, clock};
use crate::trace::Trace;
use crate::{agents, exit, session};

/// Arguments of `steward ask`.
#[derive(Args, Debug)]
pub(crate) struct AskArgs {
    /// The question; `-` reads it from standard input.
    #[arg(value_name = "QUESTION")]
    question: String,

    /// Show each step on standard error: thought, tool call with arguments, observation.
    #[arg(long)]
    trace: bool,

    /// Print {"answer", "outcome", "steps", "usage", "transcript"} as JSON instead of the answer.
    #[arg(long)]
    json: bool,

    /// Answer over this database with the analyst (SQL tools): sqlite://path, postgres://…, mysql://…
    #[arg(long, env = "STEWARD_DB", hide_env_values = true, value_name = "URL")]
    db: Option<String>,

    #[command(flatten)]
    model: ModelArgs,
}

/// Runs `steward ask`.
pub(crate) async fn run(args: AskArgs) -> anyhow::Result<u8> {
    let question = if args.question == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the question from standard input")?;
        text
    } else {
        args.question.clone()
    };
    let question = question.trim();
    if question.is_empty() {
        anyhow::bail!("the question is empty");
    }
    let prices = args.model.prices()?;
    let agent = match &args.db {
        Some(url) => {
            let (db, _) = crate::db::open(url).await?;
            let kit = steward_sql::SqlToolkit::new(db).await?;
            agents::analyst(&kit, Some(question), clock()?, args.model.limits())?
        }
        None => agents::assistant(clock()?, args.model.limits())?,
    };
    let model = args.model.connect().await?;
    let model_name = model.name().to_owned();
    let trace = Arc::new(Trace::new(args.trace, &model_name, prices));
    let runner = Runner::new(Arc::new(agent), model).with_observer(trace.clone());

    let mut run = runner.start(question);
    let outcome = session::drive(&runner, &mut run).await;

    if args.json {
        let usage = run.usage();
        let output = json!({
            "answer": outcome.answer(),
            "outcome": outcome.name(),
            "error": (!outcome.is_answered()).then(|| outcome.to_string()),
            "steps": run.steps(),
            "model": model_name,
            "usage": {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "total_tokens": usage.total(),
                "cost_usd": trace.cost(usage),
            },
            "transcript": run.transcript(),
        });
        println!("{}", serde_json::to_string_pretty(&output)?);
    } else {
        match &outcome {
            Outcome::Answered { answer } => println!("{answer}"),
            other => eprintln!("{} {other}", crate::style::Style::stderr().error("error:")),
        }
    }
    Ok(exit::for_outcome(&outcome))
}
