//! An approval that outlives the process that asked for it.
//!
//! The first process runs until a call needs a person's approval, saves the run to a file and exits. A second
//! process, perhaps days later, loads the run, records the decision and drives it to its end. A `Run` holds
//! no I/O (no sockets, no tasks), so it is plain JSON in between. Scripted models play the model, so this runs
//! offline:
//!
//! ```sh
//! cargo run -p steward-core --example approval                             # stops and saves the run
//! cargo run -p steward-core --example approval -- --resume FILE --approve   # or --reject
//! ```
//!
//! `--save FILE` chooses where the first process saves the run (by default in the temporary directory).

use std::path::Path;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use steward_core::{
    Agent, Approval, ModelResponse, Run, RunStatus, Runner, ScriptedModel, ToolAnnotations,
    ToolCall, ToolOutput, TypedTool,
};

/// Arguments of `refund`.
#[derive(Deserialize, JsonSchema)]
struct Refund {
    /// The order to refund: ten capital letters.
    #[schemars(regex(pattern = r"^[A-Z]{10}$"))]
    order_code: String,
    /// The amount, in euros.
    #[schemars(range(min = 0.01))]
    amount: f64,
}

/// The same agent in both processes: what is saved is the run, never the agent or its tools.
fn agent() -> Result<Agent, steward_core::Error> {
    // The default policy holds every call of a tool annotated `needs_approval` for a person.
    let refund = TypedTool::new(
        "refund",
        "Refunds an order.",
        |ctx, args: Refund| async move {
            println!(
                "(the refund tool runs: {} EUR for {}, call {})",
                args.amount, args.order_code, ctx.call_id
            );
            Ok(ToolOutput::text(format!(
                "Refunded {} EUR for order {}.",
                args.amount, args.order_code
            )))
        },
    )
    .annotations(
        ToolAnnotations::new()
            .destructive(true)
            .needs_approval(true)
            .title("Refund an order"),
    );
    Agent::builder("support")
        .instructions("You handle refunds. Refund only what the user asks for.")
        .tool(refund)
        .build()
}

fn runner(model: ScriptedModel) -> Result<Runner, steward_core::Error> {
    Ok(Runner::new(Arc::new(agent()?), Arc::new(model)))
}

/// Process 1: run until the refund waits for approval, then save the run.
async fn ask(file: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let model = ScriptedModel::new([ModelResponse::tool_calls(vec![ToolCall::new(
        "c1",
        "refund",
        r#"{"order_code": "QZKDLWPRTM", "amount": 42.5}"#,
    )])]);
    let (run, status) = runner(model)?
        .run("Please refund the 42.50 EUR of order QZKDLWPRTM.")
        .await;
    let RunStatus::AwaitingApproval(requests) = status else {
        return Err(
            format!("expected the run to wait for approval, but it ended: {status:?}").into(),
        );
    };
    for request in &requests {
        println!(
            "Waiting for approval: {} (call {})",
            request.reason, request.call.id
        );
    }
    std::fs::write(file, serde_json::to_string_pretty(&run)?)?;
    println!(
        "Run {} saved to {}. Decide in another process:",
        run.id(),
        file.display()
    );
    let resume = format!("--resume {} --approve", file.display());
    println!("  cargo run -p steward-core --example approval -- {resume}   (or --reject)");
    Ok(())
}

/// Process 2: load the run, decide, drive it to its end.
async fn resume(file: &Path, approve: bool) -> Result<(), Box<dyn std::error::Error>> {
    let mut run: Run = serde_json::from_str(&std::fs::read_to_string(file)?)?;
    // The model is asked again only after the decision: a real model reads the refund's result (or the
    // rejection) from the run's transcript; the script plays the reply it would give.
    let reply = if approve {
        "Done: order QZKDLWPRTM was refunded 42.50 EUR."
    } else {
        "I did not refund order QZKDLWPRTM: the refund was not approved."
    };
    let runner = runner(ScriptedModel::new([ModelResponse::text(reply)]))?;
    // Driving a loaded run that waits reports the same requests again, without running anything.
    let RunStatus::AwaitingApproval(requests) = runner.drive(&mut run).await else {
        return Err("this run is not waiting for approval".into());
    };
    for request in requests {
        let decision = if approve {
            Approval::Approve
        } else {
            Approval::Reject {
                reason: Some("refunds over 40 EUR need a manager".to_owned()),
            }
        };
        println!(
            "{} {}",
            if approve { "Approving" } else { "Rejecting" },
            request.call.name
        );
        runner.decide(&mut run, &request.call.id, decision)?;
    }
    let status = runner.drive(&mut run).await;
    println!(
        "{}",
        status
            .answer()
            .ok_or_else(|| format!("the run did not answer: {status:?}"))?
    );
    std::fs::remove_file(file)?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        [] => ask(&std::env::temp_dir().join("steward-approval-run.json")).await,
        ["--save", file] => ask(Path::new(file)).await,
        ["--resume", file, decision @ ("--approve" | "--reject")] => {
            resume(Path::new(file), *decision == "--approve").await
        }
        _ => Err(
            "usage: approval [--save FILE] | approval --resume FILE (--approve | --reject)".into(),
        ),
    }
}
