//! Driving a run to its end from a terminal: approvals asked at the terminal, Ctrl-C cancels.

use crate::out::note;
use std::io::{BufRead, IsTerminal};

use steward_core::{Approval, ApprovalRequest, Outcome, Run, RunStatus, Runner};

use crate::style::Style;

/// Drives `run` until it ends. Calls that need approval are put to the person at the terminal; without one
/// they are rejected. Ctrl-C cancels the run, keeping its transcript.
pub(crate) async fn drive(runner: &Runner, run: &mut Run) -> Outcome {
    loop {
        let status = {
            let driving = runner.drive(run);
            tokio::pin!(driving);
            tokio::select! {
                status = &mut driving => Some(status),
                _ = tokio::signal::ctrl_c() => None,
            }
        };
        let requests = match status {
            None => {
                runner.cancel(run);
                return Outcome::Cancelled;
            }
            Some(RunStatus::Done(outcome)) => return outcome,
            Some(RunStatus::AwaitingApproval(requests)) => requests,
            Some(_) => return Outcome::Cancelled,
        };
        for request in requests {
            let approval =
                tokio::task::spawn_blocking(move || ask(&request).map(|a| (request.call.id, a)))
                    .await
                    .ok()
                    .flatten();
            let Some((call_id, approval)) = approval else {
                runner.cancel(run);
                return Outcome::Cancelled;
            };
            if let Err(e) = runner.decide(run, &call_id, approval) {
                note!("{} {e}", Style::stderr().error("error:"));
            }
        }
    }
}

/// Asks the person at the terminal; `None` when they end input.
fn ask(request: &ApprovalRequest) -> Option<Approval> {
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if !interactive {
        return Some(Approval::Reject {
            reason: Some(
                "no one could approve it: steward is not running in an interactive terminal"
                    .to_owned(),
            ),
        });
    }
    let style = Style::stderr();
    crate::out::err_text(&format!(
        "{} {} {} [y/N] ",
        style.warn("Allow"),
        style.bold(&request.call.name),
        request.call.arguments
    ));
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) if matches!(line.trim(), "y" | "Y" | "yes") => Some(Approval::Approve),
        Ok(_) => Some(Approval::Reject {
            reason: Some("the user said no".to_owned()),
        }),
    }
}
