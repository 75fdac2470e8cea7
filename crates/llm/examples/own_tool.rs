//! Your own tool, called by an OpenAI-compatible model.
//!
//! Models are poor at counting letters; a tool that counts is not. The agent gets one typed tool, and the
//! model decides when to call it. Works with OpenAI or any OpenAI-compatible server (Ollama, vLLM,
//! llama.cpp's server, LM Studio):
//!
//! ```sh
//! OPENAI_API_KEY=sk-… cargo run -p steward-llm --example own_tool
//! OPENAI_BASE_URL=http://127.0.0.1:11434/v1 OPENAI_MODEL=qwen2.5:7b cargo run -p steward-llm --example own_tool
//! cargo run -p steward-llm --example own_tool -- "How many e's are in 'nevertheless'?"
//! ```
//!
//! Without either variable it says how to run it and exits successfully.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use steward_core::{Agent, Event, Runner, ToolOutput, TypedTool};
use steward_llm::{DEFAULT_OPENAI_MODEL, Env, ModelSetup, connect};

/// Arguments of `count_letter`.
#[derive(Deserialize, JsonSchema)]
struct CountLetter {
    /// The word or text to look in.
    text: String,
    /// The letter to count (case does not matter).
    #[schemars(length(min = 1, max = 1))]
    letter: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let env = Env::from_process();
    if env.get("OPENAI_API_KEY").is_none() && env.get("OPENAI_BASE_URL").is_none() {
        println!(
            "This example needs an OpenAI-compatible model. Set OPENAI_API_KEY (OpenAI), or OPENAI_BASE_URL \
             (another server) and OPENAI_MODEL, then run it again:\n  \
             OPENAI_API_KEY=sk-… cargo run -p steward-llm --example own_tool\n  \
             OPENAI_BASE_URL=http://127.0.0.1:11434/v1 OPENAI_MODEL=qwen2.5:7b cargo run -p steward-llm --example own_tool"
        );
        return Ok(());
    }

    // The tool: arguments are validated against the schema derived from `CountLetter` before this runs.
    let count_letter = TypedTool::new(
        "count_letter",
        "Counts how often a letter occurs in a text. Use it instead of counting yourself.",
        |_ctx, args: CountLetter| async move {
            let letter = args.letter.to_lowercase();
            let count = args.text.to_lowercase().matches(letter.as_str()).count();
            Ok(ToolOutput::text(format!(
                "'{}' occurs {count} times in '{}'.",
                args.letter, args.text
            )))
        },
    )
    .read_only();
    let agent = Agent::builder("speller")
        .instructions(
            "You answer questions about spelling. Count letters with the count_letter tool.",
        )
        .tool(count_letter)
        .build()?;

    // `openai:<model>` reads OPENAI_API_KEY and OPENAI_BASE_URL, as `steward --model` does.
    let spec = format!(
        "openai:{}",
        env.get("OPENAI_MODEL").unwrap_or(DEFAULT_OPENAI_MODEL)
    );
    let setup = ModelSetup {
        spec: Some(spec),
        ..ModelSetup::default()
    };
    let model = connect(setup, &env).await?;

    // Show each tool call as the model makes it.
    let trace = |event: &Event| {
        if let Event::ToolCall { call, .. } = event {
            println!("-> {} {}", call.name, call.arguments);
        }
    };
    let runner = Runner::new(Arc::new(agent), model).with_observer(Arc::new(trace));
    let question = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "How many r's are in the word strawberry?".to_owned());
    println!("{}", runner.ask(&question).await?);
    Ok(())
}
