//! `steward tools list` and `steward tools call`: the tools as the model sees them, and one call exactly as the
//! model would make it (same validation, same observation), without a model.

use crate::out::{note, say};
use std::borrow::Cow;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::bail;
use clap::{Args, Subcommand};
use serde_json::{Value, json};
use steward_app::Surface;
use steward_app::direct::{Checked, DirectCall};
use steward_core::{Approval, SchemaStyle, ToolCall, ToolData, ToolOutput};

use crate::agents::{ConfigFile, build_app, build_app_with};
use crate::exit;
use crate::format::Format;
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
    #[arg(short, long, value_name = "NAME")]
    agent: Option<String>,

    /// The database (default: the config's, else the demo database).
    #[arg(
        short,
        long,
        env = "STEWARD_DB",
        hide_env_values = true,
        value_name = "URL"
    )]
    db: Option<String>,

    /// Print a JSON array of {agents, name, description, parameters, annotations}.
    #[arg(long)]
    json: bool,

    #[command(flatten)]
    identity: crate::agents::IdentityArgs,
}

/// Arguments of `steward tools call`.
#[derive(Args, Debug)]
pub(crate) struct CallArgs {
    /// The tool's name.
    name: String,

    /// The arguments, as the model would send them (a JSON object; `-` reads them from standard input).
    #[arg(default_value = "{}")]
    arguments: String,

    /// The database (default: the config's, else the demo database).
    #[arg(
        short,
        long,
        env = "STEWARD_DB",
        hide_env_values = true,
        value_name = "URL"
    )]
    db: Option<String>,

    /// The call id; calling a writing tool twice with the same id writes once.
    #[arg(long, value_name = "ID")]
    call_id: Option<String>,

    #[command(flatten)]
    identity: crate::agents::IdentityArgs,

    #[command(flatten)]
    store: crate::runs::StoreArgs,

    /// Do not record the call in the run store's audit trail.
    #[arg(long, conflicts_with = "store")]
    no_store: bool,

    /// How to print the result: observation (the default: the text the model sees), json ({"ok", "content",
    /// "data"}), or, for a tool that returns rows (run_sql, query_table, SQL tools), table, csv, tsv, markdown
    /// or ndjson.
    #[arg(short, long, value_enum, value_name = "FORMAT")]
    format: Option<CallFormat>,

    /// The same as --format json: print {"ok", "content", "data"}.
    #[arg(long)]
    json: bool,
}

/// How `tools call` prints a result: the model's observation, or the rows in one of `sql run`'s formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum CallFormat {
    /// The text the model sees, exactly (the default).
    Observation,
    /// Aligned columns for a terminal, as `sql run` prints them (a result that is not rows: its observation).
    Table,
    /// Comma-separated values with RFC 4180 quoting and a header row.
    Csv,
    /// Tab-separated values with a header row; tabs, newlines and backslashes escaped as \t, \n, \r, \\; NULL
    /// is \N.
    Tsv,
    /// A GitHub-flavoured Markdown table; NULL is *NULL*.
    Markdown,
    /// {"ok", "content", "data"}.
    Json,
    /// One JSON object per row, keyed by column name (a result that is not rows: its JSON on one line).
    Ndjson,
}

impl CallFormat {
    /// The format from `--format` and `--json` (an alias of `--format json`).
    fn pick(format: Option<Self>, json: bool) -> anyhow::Result<Self> {
        match (format, json) {
            (Some(f), true) if f != Self::Json => bail!(
                "--json means --format json, but --format {} was given too; use one of them",
                f.name()
            ),
            (_, true) => Ok(Self::Json),
            (Some(f), false) => Ok(f),
            (None, false) => Ok(Self::Observation),
        }
    }

    /// The format's name as `--format` takes it.
    fn name(self) -> &'static str {
        match self {
            Self::Observation => "observation",
            Self::Table => Format::Table.name(),
            Self::Csv => Format::Csv.name(),
            Self::Tsv => Format::Tsv.name(),
            Self::Markdown => Format::Markdown.name(),
            Self::Json => Format::Json.name(),
            Self::Ndjson => Format::Ndjson.name(),
        }
    }
}

/// Runs `steward tools …`.
pub(crate) async fn run(command: ToolsCommand, config: &ConfigFile) -> anyhow::Result<u8> {
    match command {
        ToolsCommand::List(args) => list(args, config).await,
        ToolsCommand::Call(args) => call(args, config).await,
    }
}

async fn list(args: ListArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    let app = build_app(config, args.db.as_deref()).await?;
    let principal = args.identity.principal(app.config())?;
    let policy = app.policy(&principal);
    let role_agents = app.role(&principal).and_then(|(_, r)| r.agents.clone());
    // A role sees only the tools and agents it may use, as its model does.
    let visible = |name: &str| {
        if app.agent_def(name).is_some() && !app.registry().contains(name) {
            role_agents
                .as_ref()
                .is_none_or(|agents| agents.iter().any(|a| a == name))
        } else {
            policy.allows_tool(name)
        }
    };
    let names: Vec<String> = match &args.agent {
        Some(agent) => match app.agent_def(agent) {
            Some(def) => def.tools.iter().chain(&def.sub_agents).cloned().collect(),
            None => bail!(
                "there is no agent named `{agent}`; the agents are: {}",
                app.agent_names().collect::<Vec<_>>().join(", ")
            ),
        },
        None => app.tool_names(),
    };
    let mut out = Vec::new();
    for name in names.into_iter().filter(|n| visible(n)) {
        // The specs alone: no tool or agent is built, so no model is needed.
        let spec = match app.agent_spec(&name) {
            Some(spec) if !app.registry().contains(&name) => spec,
            _ => app.tool_spec(&name, Some(&principal))?,
        };
        let agents: Vec<&str> = app
            .agent_names()
            .filter(|a| {
                app.agent_def(a)
                    .is_some_and(|d| d.tools.contains(&name) || d.sub_agents.contains(&name))
            })
            .collect();
        out.push(json!({
            "agents": agents,
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.model_parameters(SchemaStyle::Standard),
            "annotations": spec.annotations,
        }));
    }
    if args.json {
        say!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(exit::OK);
    }
    let style = Style::stdout();
    for tool in &out {
        let agents: Vec<&str> = tool["agents"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        say!(
            "{} — {}{}",
            style.bold(tool["name"].as_str().unwrap_or_default()),
            tool["description"].as_str().unwrap_or_default(),
            if agents.is_empty() {
                String::new()
            } else {
                style.dim(&format!("  (agents: {})", agents.join(", ")))
            }
        );
        let parameters = &tool["parameters"];
        let required: Vec<&str> = parameters["required"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(properties) = parameters["properties"].as_object() {
            for (name, schema) in properties {
                let kind = schema["type"]
                    .as_str()
                    .map(str::to_owned)
                    .or_else(|| {
                        schema["type"].as_array().map(|t| {
                            t.iter()
                                .filter_map(Value::as_str)
                                .collect::<Vec<_>>()
                                .join("|")
                        })
                    })
                    .or_else(|| schema["enum"].as_array().map(|_| "enum".to_owned()))
                    .unwrap_or_else(|| "any".to_owned());
                let mut detail = schema["description"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                if let Some(values) = schema["enum"].as_array() {
                    let values: Vec<String> = values
                        .iter()
                        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                        .collect();
                    detail.push_str(&format!(" [one of: {}]", values.join(", ")));
                }
                say!(
                    "    {:<18} {:<10} {:<9} {}",
                    name,
                    kind,
                    if required.contains(&name.as_str()) {
                        "required"
                    } else {
                        "optional"
                    },
                    detail.trim()
                );
            }
        }
    }
    Ok(exit::OK)
}

async fn call(args: CallArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    let store = crate::runs::store_for_runs(config, &args.store, args.no_store).await?;
    let app = build_app_with(config, args.db.as_deref(), store).await?;
    // Where each write is recorded, said once per database before the first write creates it.
    crate::db::note_ledgers(&app).await;
    let called = call_in(&app, args).await;
    app.flush_traces().await;
    called
}

/// A call held for approval that no one here may give (no terminal, or four eyes forbid the caller approving
/// their own write): staged in a change set for someone who may apply it, when the tool can be staged and runs
/// are stored; otherwise not run. Either way exit code 4, saying why and what to do.
async fn not_decided_here(
    app: &steward_app::App,
    principal: &steward_core::Principal,
    call: steward_app::direct::DirectCall,
    reason: &str,
    four_eyes: Option<String>,
    preview: Option<String>,
    format: CallFormat,
) -> anyhow::Result<u8> {
    let style = Style::stderr();
    let request = call.request(reason);
    if let Some(why) = &four_eyes {
        note!("{} {why}", style.warn("four eyes:"));
    }
    if call.stageable() && app.store().is_some() {
        let agent = call.agent().to_owned();
        let staged = match call.stage(reason, Vec::new()).await {
            Ok(staged) => staged,
            Err(e) => bail!("{}", e.message),
        };
        let content = staged.output.content.clone();
        let (id, _) = app
            .add_to_change_set(Surface::Cli, None, principal, &agent, Vec::new(), staged)
            .await?;
        match format {
            CallFormat::Json | CallFormat::Ndjson => {
                let saved =
                    json!({"ok": false, "change_set": id, "staged": content, "reason": reason});
                say!("{}", serde_json::to_string_pretty(&saved)?);
            }
            _ => note!("{content}"),
        }
        note!(
            "{} the change waits as change set {id}: {reason}; `steward changes apply {id}{who}` writes it, \
             `steward changes discard {id}` drops it",
            style.warn("saved:"),
            who = if four_eyes.is_some() {
                " --principal NAME"
            } else {
                ""
            },
        );
        return Ok(crate::exit::NEEDS_APPROVAL);
    }
    crate::session::note_waiting(&request, None, preview.as_deref());
    let why = four_eyes
        .clone()
        .unwrap_or_else(|| "no one could approve it: not an interactive terminal".to_owned());
    call.not_run(reason, &why).await?;
    note!(
        "{}",
        style.dim(if four_eyes.is_some() {
            "(not run: someone your role's `approve_by` names must run it, or the role must let it run without \
             approval in steward.yaml)"
        } else {
            "(not run: no one can approve here; run it in a terminal to approve, or let the role run it \
             without approval: `skip_approval` in steward.yaml)"
        })
    );
    Ok(crate::exit::NEEDS_APPROVAL)
}

async fn call_in(app: &steward_app::App, args: CallArgs) -> anyhow::Result<u8> {
    let format = CallFormat::pick(args.format, args.json)?;
    let arguments = if args.arguments == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
        text
    } else {
        args.arguments.clone()
    };
    let principal = args.identity.principal(app.config())?;
    let call_id = args.call_id.clone().unwrap_or_else(|| {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("cli-{nanos:x}")
    });
    // Arguments that are not JSON are the command line's mistake (exit 2), though shown as a model would be told.
    let not_json = serde_json::from_str::<Value>(&arguments).is_err();
    let call = ToolCall::new(call_id, args.name.clone(), arguments);
    // The same checks as a run's: the schema, then the role's tools, its approvals, write tools declared in the
    // config. No model: a tool that runs one (ask_database) is refused, saying so.
    let checked = match app
        .check_call(Surface::Cli, &principal, call, None, None)
        .await
    {
        Ok(checked) => checked,
        Err(steward_app::AppError::UnknownTool { name, suggestion }) => bail!(
            "there is no tool named `{name}`{}; the tools are: {}",
            suggestion
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default(),
            app.tool_names().join(", ")
        ),
        Err(e) => return Err(e.into()),
    };
    let result = match checked {
        Checked::Refused(refusal) => Err(Failed {
            message: refusal.message(),
            diagnostic: None,
            person: Some(refusal.for_person()),
        }),
        Checked::Allowed(call) => run_tool(call).await,
        Checked::NeedsApproval(call, reason) => {
            let request = call.request(reason.clone());
            let preview = call.preview().await;
            let four_eyes = call.own_approval_refused().map(str::to_owned);
            if four_eyes.is_some() || !crate::session::interactive() {
                return not_decided_here(
                    app, &principal, call, &reason, four_eyes, preview, format,
                )
                .await;
            }
            if let Some(preview) = &preview {
                note!("{preview}");
            }
            match tokio::task::spawn_blocking(move || crate::session::ask_approval(&request))
                .await
                .ok()
                .flatten()
            {
                Some(Approval::Approve) => run_tool(call.approved_here(reason)?).await,
                Some(Approval::Edit { .. }) => {
                    call.not_run(&reason, "edits are not taken here").await?;
                    Err(Failed::said(
                        "Not run: edit the arguments on the command line and call again.",
                    ))
                }
                answer => {
                    let why = match answer {
                        Some(Approval::Reject { reason: Some(why) }) => why,
                        _ => "the user did not approve it".to_owned(),
                    };
                    call.not_run(&reason, &why).await?;
                    Err(Failed::said("Not run: it was not approved."))
                }
            }
        }
    };
    let style = Style::stderr();
    match result {
        Ok(output) => {
            let shown = tabular(output.data.as_ref()).map_or(0, |rows| rows.rows.len());
            let advice = more_rows(app, &principal, &args.name, shown);
            print_output(format, &args.name, &output, &advice)
        }
        Err(Failed {
            message,
            diagnostic,
            person,
        }) => {
            // `content` is what a model is told; `error` is the same for a person.
            let failed = json!({
                "ok": false,
                "content": message,
                "data": Value::Null,
                "error": person.as_deref().unwrap_or(&message),
            });
            match format {
                CallFormat::Json => say!("{}", serde_json::to_string_pretty(&failed)?),
                CallFormat::Ndjson => say!("{failed}"),
                // The observation is what the command shows; a person reads the refusal in their own words.
                CallFormat::Observation => {
                    say!("{message}");
                    if let Some(person) = &person {
                        note!("{} {person}", style.error("error:"));
                    }
                }
                // Standard output holds only rows in these formats.
                CallFormat::Table | CallFormat::Csv | CallFormat::Tsv | CallFormat::Markdown => {
                    note!(
                        "{} {}",
                        style.error("error:"),
                        person.as_deref().unwrap_or(&message)
                    );
                }
            }
            if let Some(d) = diagnostic {
                note!("{} {d}", style.warn("diagnostic:"));
            }
            Ok(if not_json {
                crate::exit::USAGE
            } else {
                crate::exit::STOPPED
            })
        }
    }
}

/// Runs a call that passed its checks (and, if it needed it, was approved).
async fn run_tool(call: DirectCall) -> Result<ToolOutput, Failed> {
    call.run().await.map_err(|e| Failed {
        message: e.message,
        diagnostic: e.diagnostic,
        person: e.person,
    })
}

/// A call that failed or did not run: what the model would be told, the operator's diagnostic, and the words
/// for a person when the model's speak to a model ("tell the user…").
struct Failed {
    message: String,
    diagnostic: Option<String>,
    person: Option<String>,
}

impl Failed {
    /// A failure said the same way to the model and to a person.
    fn said(message: &str) -> Self {
        Self {
            message: message.to_owned(),
            diagnostic: None,
            person: None,
        }
    }
}

/// Prints a tool's result: its observation; rows in the chosen format when it returned rows; otherwise its
/// observation (table), its JSON (json, ndjson), or an error saying why the format does not fit.
/// What a person can do with `tools call` when a tool's rows were cut short: `tools call` gives what the model
/// gets, so the way to more rows depends on the tool (and on the role, when it caps rows).
fn more_rows(
    app: &steward_app::App,
    principal: &steward_core::Principal,
    tool: &str,
    shown: usize,
) -> String {
    if let Some((role, cap)) = app
        .role(principal)
        .and_then(|(name, def)| def.max_rows.map(|cap| (name, cap)))
        .filter(|(_, cap)| shown >= *cap)
    {
        return format!(
            "the role `{role}` reads at most {cap} rows per query (its `max_rows`, at {}); narrow the call",
            app.config().locate(&["roles", role, "max_rows"])
        );
    }
    let declared = app
        .config()
        .tools
        .get(tool)
        .filter(|def| def.get("kind").and_then(|kind| kind.as_str()) == Some("sql"));
    match tool {
        _ if declared.is_some_and(|def| def.get("max_rows").is_some()) => format!(
            "raise the tool's `max_rows` (at {}), or narrow the call's arguments",
            app.config().locate(&["tools", tool, "max_rows"])
        ),
        _ if declared.is_some() => format!(
            "give the tool a `max_rows` above its default of {} (at {}), or narrow the call's arguments",
            steward_app::tools::DEFAULT_MAX_ROWS,
            app.config().locate(&["tools", tool])
        ),
        "run_sql" => "`tools call` gives what the model gets; narrow the query, or run it with \
                      `steward sql run --max-rows N`"
            .to_owned(),
        "query_table" => "pass a larger `limit` (at most 500) or narrower filters".to_owned(),
        _ => "narrow the call's arguments".to_owned(),
    }
}

fn print_output(
    format: CallFormat,
    tool: &str,
    output: &ToolOutput,
    advice: &str,
) -> anyhow::Result<u8> {
    let whole = json!({"ok": true, "content": output.content, "data": output.data});
    let rows_format = match format {
        CallFormat::Json => {
            say!("{}", serde_json::to_string_pretty(&whole)?);
            return Ok(exit::OK);
        }
        CallFormat::Observation => {
            say!("{}", output.content);
            return Ok(exit::OK);
        }
        CallFormat::Table => Format::Table,
        CallFormat::Csv => Format::Csv,
        CallFormat::Tsv => Format::Tsv,
        CallFormat::Markdown => Format::Markdown,
        CallFormat::Ndjson => Format::Ndjson,
    };
    let Some(Rows {
        columns,
        rows,
        truncated,
    }) = tabular(output.data.as_ref())
    else {
        match format {
            CallFormat::Ndjson => {
                say!("{whole}");
                return Ok(exit::OK);
            }
            CallFormat::Table => {
                say!("{}", output.content);
                return Ok(exit::OK);
            }
            _ => {}
        }
        bail!(
            "--format {} needs a tabular result (columns and rows, as run_sql, query_table and SQL tools return); \
             this tool ({tool}) returned {}; use --format observation or --format json",
            format.name(),
            match &output.data {
                None => "text",
                Some(ToolData::Json { value }) if value.is_object() => "a JSON object",
                Some(ToolData::Json { value }) if value.is_array() => "a JSON array",
                Some(ToolData::Chart { .. }) => "a chart",
                Some(_) => "JSON",
            }
        );
    };
    if rows_format == Format::Table {
        crate::format::print_table(&columns, &rows, truncated, advice);
        return Ok(exit::OK);
    }
    if let Some(text) = rows_format.rows(&columns, &rows).filter(|t| !t.is_empty()) {
        crate::out::text(&text);
    }
    if truncated {
        crate::format::note_truncated(rows.len(), advice);
    }
    Ok(exit::OK)
}

/// A tool's result as rows.
struct Rows<'a> {
    columns: Vec<String>,
    rows: Cow<'a, [Vec<Value>]>,
    /// Rows were left out.
    truncated: bool,
}

/// Columns, rows and whether rows were left out, when a tool's data is a table (or a JSON object holding
/// `columns`, an array of names, and `rows`, an array of arrays as long).
fn tabular(data: Option<&ToolData>) -> Option<Rows<'_>> {
    match data? {
        ToolData::Table {
            columns,
            rows,
            truncated,
            ..
        } => Some(Rows {
            columns: columns.clone(),
            rows: Cow::Borrowed(rows.as_slice()),
            truncated: *truncated,
        }),
        ToolData::Json { value } => {
            let columns: Vec<String> = value
                .get("columns")?
                .as_array()?
                .iter()
                .map(|c| c.as_str().map(str::to_owned))
                .collect::<Option<_>>()?;
            let rows: Vec<Vec<Value>> = value
                .get("rows")?
                .as_array()?
                .iter()
                .map(|r| r.as_array().filter(|r| r.len() == columns.len()).cloned())
                .collect::<Option<_>>()?;
            let truncated = value.get("truncated").and_then(Value::as_bool) == Some(true);
            Some(Rows {
                columns,
                rows: Cow::Owned(rows),
                truncated,
            })
        }
        _ => None,
    }
}
