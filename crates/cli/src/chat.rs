//! `steward chat`: a conversation in the terminal, with line editing and history.

use crate::out::{note, say};
use std::path::PathBuf;

use clap::Args;
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;
use steward_core::{Outcome, Run};

use crate::agents::{AgentArgs, ConfigFile};
use crate::session::Session;
use crate::setup::ModelArgs;
use crate::style::Style;
use crate::{exit, session};

/// Arguments of `steward chat`.
#[derive(Args, Debug)]
pub(crate) struct ChatArgs {
    /// Start with the step trace on (toggle with /trace on|off).
    #[arg(short, long)]
    pub(crate) trace: bool,

    #[command(flatten)]
    pub(crate) agents: AgentArgs,

    #[command(flatten)]
    pub(crate) model: ModelArgs,
}

const HELP: &str = "/reset        start a new conversation
/trace on|off show or hide each step (thought, tool calls, observations)
/help         this list
/exit         leave (also Ctrl-D)";

/// Runs `steward chat` until the user leaves.
pub(crate) fn run(
    args: ChatArgs,
    config: &ConfigFile,
    runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<u8> {
    let Session {
        turn,
        trace,
        model_name,
        app,
        ..
    } = runtime.block_on(Session::open(
        config,
        &args.agents,
        &args.model,
        args.trace,
        true,
        None,
    ))?;
    let style = Style::stderr();
    note!(
        "{} {}",
        style.bold("steward chat"),
        style.dim(&format!(
            "· {} · /help for commands, /exit or Ctrl-D to leave",
            model_name
        ))
    );

    let mut editor = DefaultEditor::new()?;
    let history = history_file();
    if let Some(path) = &history {
        let _ = editor.load_history(path);
    }
    let mut conversation: Option<Run> = None;
    // What became of the changes the last turn staged, told to the model with the next message.
    let mut told: Option<String> = None;
    loop {
        let line = match editor.readline("› ") {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => {
                note!("{}", style.dim("(Ctrl-D or /exit to leave)"));
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(e.into()),
        };
        let input = line.trim();
        if input.is_empty() {
            continue;
        }
        let _ = editor.add_history_entry(input);
        match input {
            "/exit" | "/quit" => break,
            "/help" => {
                note!("{HELP}");
                continue;
            }
            "/reset" => {
                conversation = None;
                note!("{}", style.dim("(new conversation)"));
                continue;
            }
            "/trace on" | "/trace off" => {
                trace.set_enabled(input == "/trace on");
                note!("{}", style.dim(&format!("(trace {})", &input[7..])));
                continue;
            }
            command if command.starts_with('/') => {
                note!(
                    "{} unknown command `{command}`\n{HELP}",
                    style.error("error:")
                );
                continue;
            }
            _ => {}
        }
        let run = match conversation.as_mut() {
            Some(run) => {
                let input = match told.take() {
                    Some(note) => format!("(Steward: {note})\n\n{input}"),
                    None => input.to_owned(),
                };
                if let Err(e) = turn.runner().follow_up(run, &input) {
                    note!("{} {e}", style.error("error:"));
                    continue;
                }
                run
            }
            None => {
                told = None;
                conversation.insert(turn.start(input))
            }
        };
        let outcome = match runtime.block_on(session::drive(&turn, run, false)) {
            session::Driven::Done(outcome) => outcome,
            session::Driven::Staged(outcome, changes) => {
                // The model learns with the next message what became of the changes it staged.
                told = match changes {
                    session::Changes::Decided { note, .. } => Some(note),
                    session::Changes::Saved(id) => Some(format!(
                        "The staged changes were saved as change set {id}, to be applied or discarded later; \
                         they are not made yet."
                    )),
                };
                outcome
            }
            session::Driven::Waiting(requests) => {
                // Someone else decides (four eyes): the run is saved for them, and the conversation starts anew.
                runtime.block_on(crate::runs::finish(&turn));
                if let Err(e) = runtime.block_on(crate::ask::waiting(&turn, run, &requests, false))
                {
                    note!("{} {e}", style.error("error:"));
                }
                conversation = None;
                continue;
            }
        };
        trace.clear();
        runtime.block_on(crate::runs::finish(&turn));
        match outcome {
            Outcome::Answered { answer } => {
                if trace.take_streamed_answer().as_deref() != Some(answer.as_str()) {
                    say!("{}", crate::markdown::for_stdout(&answer));
                }
            }
            Outcome::Cancelled => note!("{}", style.dim("(cancelled)")),
            other => note!("{} {other}", style.error("error:")),
        }
        if crate::out::stdout_closed() {
            // No one reads the answers any more.
            break;
        }
    }
    if let Some(path) = &history {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = editor.save_history(path);
    }
    drop(turn);
    runtime.block_on(app.flush_traces());
    Ok(exit::OK)
}

/// `$XDG_STATE_HOME/steward/history`, or `~/.local/state/steward/history`.
fn history_file() -> Option<PathBuf> {
    crate::db::state_dir().map(|dir| dir.join("history"))
}
