//! `steward tools list` and `steward tools call`: the tools as the model sees them, and one call exactly as the
//! model would make it (same validation, same observation), without a model.

use crate::out::{note, say};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::bail;
use async_trait::async_trait;
use clap::{Args, Subcommand};
use serde_json::{Value, json};
use steward_core::{
    Agent, Limits, Model, ModelError, ModelRequest, ModelResponse, NoObserver, SchemaStyle,
    ToolCall, ToolContext,
};
use steward_domains::AGENTS;

use crate::agents::Business;
use crate::exit;
use crate::setup::clock;
use crate::style::Style;

/// `steward tools …`
#[derive(Subcommand, Debug)]
pub(crate) enum ToolsCommand {
    /// List the tools: names, descriptions and the argument schemas the model sees.
    List(ListArgs),
    /// Run one tool with exactly the validation the model gets, and print the observation the model would see.
    Call(CallArgs),
}

/// Arguments of `steward tools list`.
#[derive(Args, Debug)]
pub(crate) struct ListArgs {
    /// Only this agent's tools.
    #[arg(long, value_name = "NAME", value_parser = clap::builder::PossibleValuesParser::new(AGENTS))]
    agent: Option<String>,

    /// The database (default: the demo database).
    #[arg(long, env = "STEWARD_DB", hide_env_values = true, value_name = "URL")]
    db: Option<String>,

    /// Print a JSON array of {agent, name, description, parameters, annotations}.
    #[arg(long)]
    json: bool,
}

/// Arguments of `steward tools call`.
#[derive(Args, Debug)]
pub(crate) struct CallArgs {
    /// The tool's name.
    name: String,

    /// The arguments, as the model would send them (a JSON object; `-` reads them from standard input).
    #[arg(default_value = "{}")]
    arguments: String,

    /// The database (default: the demo database).
    #[arg(long, env = "STEWARD_DB", hide_env_values = true, value_name = "URL")]
    db: Option<String>,

    /// The call id; calling a writing tool twice with the same id writes once.
    #[arg(long, value_name = "ID")]
    call_id: Option<String>,

    /// Print {"ok", "content", "data"}.
    #[arg(long)]
    json: bool,
}

/// Stands in for a model where none is needed: listing and calling tools never runs an agent.
struct NoModel;

#[async_trait]
impl Model for NoModel {
    fn name(&self) -> &str {
        "none"
    }

    async fn complete(&self, _request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        Err(ModelError::Other(
            "no model is configured; agents cannot run from `steward tools`".into(),
        ))
    }
}

/// Every agent that can be built on this database, by name.
fn agents(business: &Business, only: Option<&str>) -> anyhow::Result<Vec<Agent>> {
    let names: Vec<&str> = match only {
        Some(name) => vec![name],
        None if business.domain.is_none() => vec!["assistant"],
        None if business.demo_schema => vec!["expenses", "orders", "tasks", "analyst"],
        None => vec!["analyst"],
    };
    names
        .into_iter()
        .map(|name| {
            business.agent(
                name,
                Arc::new(NoModel),
                Arc::new(NoObserver),
                None,
                clock()?,
                Limits::default(),
            )
        })
        .collect()
}

/// Runs `steward tools …`.
pub(crate) async fn run(command: ToolsCommand) -> anyhow::Result<u8> {
    match command {
        ToolsCommand::List(args) => list(args).await,
        ToolsCommand::Call(args) => call(args).await,
    }
}

async fn list(args: ListArgs) -> anyhow::Result<u8> {
    let business = Business::open(args.db.as_deref(), clock()?).await?;
    let agents = agents(&business, args.agent.as_deref())?;
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for agent in &agents {
        for spec in agent.tools.specs().iter() {
            if args.agent.is_none() && seen.contains(&spec.name) {
                continue;
            }
            seen.push(spec.name.clone());
            out.push(json!({
                "agent": agent.name,
                "name": spec.name,
                "description": spec.description,
                "parameters": spec.model_parameters(SchemaStyle::Standard),
                "annotations": spec.annotations,
            }));
        }
    }
    if args.json {
        say!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(exit::OK);
    }
    let style = Style::stderr();
    let mut current = String::new();
    for tool in &out {
        let agent = tool["agent"].as_str().unwrap_or_default();
        if agent != current {
            say!("{}", style.bold(&format!("{agent}:")));
            current = agent.to_owned();
        }
        say!(
            "  {} — {}",
            tool["name"].as_str().unwrap_or_default(),
            tool["description"].as_str().unwrap_or_default()
        );
        say!("    {}", tool["parameters"]);
    }
    Ok(exit::OK)
}

async fn call(args: CallArgs) -> anyhow::Result<u8> {
    let arguments = if args.arguments == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
        text
    } else {
        args.arguments.clone()
    };
    let business = Business::open(args.db.as_deref(), clock()?).await?;
    let agents = agents(&business, None)?;
    let Some(agent) = agents.iter().find(|a| a.tools.get(&args.name).is_some()) else {
        let mut names: Vec<&str> = agents.iter().flat_map(|a| a.tools.names()).collect();
        names.sort_unstable();
        names.dedup();
        bail!(
            "there is no tool named `{}`; the tools are: {}",
            args.name,
            names.join(", ")
        );
    };
    let call_id = args.call_id.clone().unwrap_or_else(|| {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("cli-{nanos:x}")
    });
    let call = ToolCall::new(call_id.clone(), args.name.clone(), arguments);
    let result = match agent.tools.check(&call) {
        Err(rejection) => Err((rejection.observation, None)),
        Ok((tool, checked)) => tool
            .call(
                &ToolContext::new("cli", call_id, agent.name.clone()),
                checked,
            )
            .await
            .map_err(|e| (e.message, e.diagnostic)),
    };
    let style = Style::stderr();
    match result {
        Ok(output) => {
            if args.json {
                say!(
                    "{}",
                    serde_json::to_string_pretty(
                        &json!({"ok": true, "content": output.content, "data": output.data})
                    )?
                );
            } else {
                say!("{}", output.content);
            }
            Ok(exit::OK)
        }
        Err((message, diagnostic)) => {
            if args.json {
                say!(
                    "{}",
                    serde_json::to_string_pretty(
                        &json!({"ok": false, "content": message, "data": Value::Null})
                    )?
                );
            } else {
                say!("{message}");
            }
            if let Some(d) = diagnostic {
                note!("{} {d}", style.warn("diagnostic:"));
            }
            Ok(1)
        }
    }
}
