//! A router: an agent whose tools are two other agents.
//!
//! The router reads the request, hands each part to the specialist that can answer it (each specialist is an
//! `AgentTool`: a sub-run with its own tools), and writes the reply from their answers. Scripted models play
//! the three models, so this runs offline:
//!
//! ```sh
//! cargo run -p steward-core --example router
//! ```

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use steward_core::{
    Agent, AgentTool, Event, Model, ModelResponse, Runner, ScriptedModel, ToolCall, ToolOutput,
    TypedTool,
};

/// Arguments of `forecast`.
#[derive(Deserialize, JsonSchema)]
struct Forecast {
    /// The city, e.g. "Lisbon".
    city: String,
}

/// Arguments of `next_meeting` (none).
#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

/// A model that replies from a script: first these tool calls, then this text.
fn scripted(calls: Vec<ToolCall>, answer: &str) -> Arc<dyn Model> {
    Arc::new(ScriptedModel::new([
        ModelResponse::tool_calls(calls),
        ModelResponse::text(answer),
    ]))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The first specialist knows the weather.
    let forecast = TypedTool::new(
        "forecast",
        "Tomorrow's weather in a city.",
        |_ctx, args: Forecast| async move {
            Ok(ToolOutput::text(format!("{}: sunny, 24 °C", args.city)))
        },
    )
    .read_only();
    let weather = Agent::builder("weather")
        .description("Answers questions about the weather.")
        .instructions("You answer questions about the weather with the forecast tool.")
        .tool(forecast)
        .build()?;
    let weather_model = scripted(
        vec![ToolCall::new("f1", "forecast", r#"{"city": "Lisbon"}"#)],
        "Tomorrow in Lisbon: sunny, 24 °C.",
    );

    // The second one knows the calendar.
    let next_meeting = TypedTool::new(
        "next_meeting",
        "The next meeting in the calendar.",
        |_ctx, _args: NoArgs| async {
            Ok(ToolOutput::text("09:30 stand-up with the operations team"))
        },
    )
    .read_only();
    let calendar = Agent::builder("calendar")
        .description("Answers questions about meetings and the calendar.")
        .instructions("You answer questions about the user's calendar.")
        .tool(next_meeting)
        .build()?;
    let calendar_model = scripted(
        vec![ToolCall::new("m1", "next_meeting", "{}")],
        "Your next meeting is the 09:30 stand-up with the operations team.",
    );

    // The router's tools are the two agents; each is offered to its model under the agent's name and
    // description, with one argument: the request in full.
    let router = Agent::builder("router")
        .description("Hands each request to the agent that can answer it.")
        .instructions(
            "Hand each part of the request to the agent that can answer it, then answer the user.",
        )
        .tool(AgentTool::new(Arc::new(weather), weather_model))
        .tool(AgentTool::new(Arc::new(calendar), calendar_model))
        .build()?;
    let router_model = scripted(
        vec![
            ToolCall::new(
                "r1",
                "weather",
                r#"{"request": "What is the weather in Lisbon tomorrow?"}"#,
            ),
            ToolCall::new(
                "r2",
                "calendar",
                r#"{"request": "What is my next meeting?"}"#,
            ),
        ],
        "Tomorrow Lisbon is sunny at 24 °C, and your next meeting is the 09:30 stand-up.",
    );

    // Print who is asked what, and what each tool answers, indented by how deep the run is: a sub-run's id
    // is `<caller's run id>/<call id>`.
    let trace = |event: &Event| {
        let indent = |run_id: &str| "    ".repeat(run_id.matches('/').count());
        match event {
            Event::RunStarted {
                run_id,
                agent,
                input,
            } => println!("{}[{agent}] {input}", indent(run_id)),
            Event::ToolResult {
                run_id,
                tool,
                content,
                ..
            } => {
                println!("{}  {tool} -> {content}", indent(run_id))
            }
            _ => {}
        }
    };
    let runner = Runner::new(Arc::new(router), router_model).with_observer(Arc::new(trace));
    let answer = runner
        .ask("What's the weather in Lisbon tomorrow, and what is my next meeting?")
        .await?;
    println!("\n{answer}");
    Ok(())
}
