//! An approval that outlives the process that asked for it, asked by a specialist behind a router.
//!
//! A router hands the request to the `support` agent, whose refund needs a person's approval. The call
//! suspends the support agent's run, and the router's run waits with it: the first process saves the whole
//! run tree (the router's run holds the support agent's) to a file and exits. A second process, perhaps days
//! later, loads it, records the decision by the request's qualified id (`<router's call>/<support's call>`)
//! and drives it to its end: the support agent resumes where it stopped, and its answer goes back to the
//! router. A `Run` holds no I/O (no sockets, no tasks), so it is plain JSON in between. Scripted models play
//! the models, so this runs offline:
//!
//! ```sh
//! cargo run -p steward-core --example approval                             # stops and saves the run
//! cargo run -p steward-core --example approval -- --resume FILE --approve   # or --reject, or --edit AMOUNT
//! ```
//!
//! `--save FILE` chooses where the first process saves the run (by default in the temporary directory).
//! `--edit AMOUNT` approves the refund with another amount (the person's arguments replace the model's).

use std::path::Path;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use steward_core::{
    Agent, AgentTool, Approval, Model, ModelResponse, Run, RunStatus, Runner, ScriptedModel,
    ToolAnnotations, ToolCall, ToolOutput, TypedTool,
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

/// The same agents in both processes: what is saved is the run, never the agents or their tools. Each agent
/// has its own scripted model here, playing what that process needs.
fn runner(
    router_script: Vec<ModelResponse>,
    support_script: Vec<ModelResponse>,
) -> Result<Runner, steward_core::Error> {
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
    let support = Agent::builder("support")
        .description("Handles refunds.")
        .instructions("You handle refunds. Refund only what the user asks for.")
        .tool(refund)
        .build()?;
    let support_model: Arc<dyn Model> = Arc::new(ScriptedModel::new(support_script));
    let router = Agent::builder("router")
        .instructions("You hand each request to the agent that handles it.")
        .tool(AgentTool::new(Arc::new(support), support_model))
        .build()?;
    Ok(Runner::new(
        Arc::new(router),
        Arc::new(ScriptedModel::new(router_script)),
    ))
}

/// Process 1: run until the refund waits for approval, then save the run.
async fn ask(file: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let router_script = vec![ModelResponse::tool_calls(vec![ToolCall::new(
        "c1",
        "support",
        r#"{"request": "Refund the 42.50 EUR of order QZKDLWPRTM."}"#,
    )])];
    let support_script = vec![ModelResponse::tool_calls(vec![ToolCall::new(
        "s1",
        "refund",
        r#"{"order_code": "QZKDLWPRTM", "amount": 42.5}"#,
    )])];
    let (run, status) = runner(router_script, support_script)?
        .run("Please refund the 42.50 EUR of order QZKDLWPRTM.")
        .await;
    let RunStatus::AwaitingApproval(requests) = status else {
        return Err(
            format!("expected the run to wait for approval, but it ended: {status:?}").into(),
        );
    };
    for request in &requests {
        // The reason starts with the agent that asks: `[support] …`; the id is `c1/s1`.
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
    println!(
        "  cargo run -p steward-core --example approval -- {resume}   (or --reject, or --edit AMOUNT)"
    );
    Ok(())
}

/// Process 2: load the run, decide, drive it to its end.
async fn resume(file: &Path, decision: Approval) -> Result<(), Box<dyn std::error::Error>> {
    let mut run: Run = serde_json::from_str(&std::fs::read_to_string(file)?)?;
    // The models are asked again only after the decision: a real model reads the refund's result (or the
    // rejection) from the run's transcript; the scripts play the replies they would give.
    let (support_reply, router_reply) = match &decision {
        Approval::Reject { .. } => (
            "I did not refund order QZKDLWPRTM: the refund was not approved.",
            "Order QZKDLWPRTM was not refunded: the refund was not approved.",
        ),
        _ => (
            "Order QZKDLWPRTM is refunded.",
            "Done: order QZKDLWPRTM was refunded.",
        ),
    };
    let runner = runner(
        vec![ModelResponse::text(router_reply)],
        vec![ModelResponse::text(support_reply)],
    )?;
    // Driving a loaded run that waits reports the same requests again, without running anything.
    let RunStatus::AwaitingApproval(requests) = runner.drive(&mut run).await else {
        return Err("this run is not waiting for approval".into());
    };
    for request in requests {
        let what = match &decision {
            Approval::Approve => "approve".to_owned(),
            Approval::Reject { .. } => "reject".to_owned(),
            Approval::Edit { arguments } => format!("approve with {arguments}"),
            _ => "decide".to_owned(),
        };
        println!(
            "Deciding {} ({}): {what}",
            request.call.id, request.call.name
        );
        // The qualified id reaches the support agent's call inside the router's run. An edit that does not
        // fit the tool's schema is refused here, and the call keeps waiting.
        runner
            .decide(&mut run, &request.call.id, decision.clone())
            .map_err(|e| e.to_string())?;
    }
    // The support agent's run resumes, the refund runs (or not), and its answer goes back to the router.
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
    let usage = "usage: approval [--save FILE] | approval --resume FILE (--approve | --reject | --edit AMOUNT)";
    match args.as_slice() {
        [] => ask(&std::env::temp_dir().join("steward-approval-run.json")).await,
        ["--save", file] => ask(Path::new(file)).await,
        ["--resume", file, "--approve"] => resume(Path::new(file), Approval::Approve).await,
        ["--resume", file, "--reject"] => {
            let reason = Some("refunds over 40 EUR need a manager".to_owned());
            resume(Path::new(file), Approval::Reject { reason }).await
        }
        ["--resume", file, "--edit", amount] => {
            let amount: f64 = amount
                .parse()
                .map_err(|_| format!("--edit takes an amount in euros, not `{amount}`"))?;
            let arguments = serde_json::json!({"order_code": "QZKDLWPRTM", "amount": amount});
            resume(Path::new(file), Approval::Edit { arguments }).await
        }
        _ => Err(usage.into()),
    }
}
