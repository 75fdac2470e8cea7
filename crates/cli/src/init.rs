//! `steward init`: reads a database's catalog and writes a commented starter `steward.yaml` for it — the
//! database, an `analyst` agent, and two declarative SQL tools over its tables — that loads as written.

mod ident;
mod starter;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, bail};
use clap::Args;
use serde_json::Value;
use steward_app::ToolRegistry;
use steward_app::tools::ToolDef;
use steward_sql::{Catalog, Database, QueryLimits};

use crate::out::{note, say};
use crate::style::Style;
use crate::{db, exit};
use ident::{shell_word, snake, yaml_key, yaml_str};
use starter::StarterTool;

/// The variable a generated config reads a URL with a password from.
const URL_VARIABLE: &str = "STEWARD_DB_URL";

/// Arguments of `steward init`.
#[derive(Args, Debug)]
pub(crate) struct InitArgs {
    /// The database to describe: sqlite://path (or the path of a SQLite file), postgres://…, mysql://….
    #[arg(
        short,
        long,
        env = "STEWARD_DB",
        hide_env_values = true,
        value_name = "URL"
    )]
    db: String,

    /// The file to write.
    #[arg(long, short, value_name = "FILE", default_value = "steward.yaml")]
    output: PathBuf,

    /// Replace the file if it exists.
    #[arg(long)]
    force: bool,
}

/// Runs `steward init`.
pub(crate) async fn run(args: InitArgs) -> anyhow::Result<u8> {
    if args.output.exists() && !args.force {
        bail!(
            "{} already exists; pass --force to replace it (its contents are lost), or --output FILE to write elsewhere",
            args.output.display()
        );
    }
    let (database, catalog) = db::open(&args.db).await?;
    // Setting a database up is the moment to choose its role: the note is said every time here.
    db::note_privileges(&database, &args.db, db::Repeat::Always);
    let name = database_name(&args.db);
    // What the file holds: the URL as given, unless it carries a password or a key.
    let shown = steward_sql::redact_url(&args.db);
    let secret = shown != args.db;
    let url_entry = if secret {
        format!("${{{URL_VARIABLE}}}")
    } else {
        args.db.replace("${", "$${")
    };

    let builtin = ToolRegistry::builtin();
    let mut tools: Vec<StarterTool> = Vec::new();
    let lookup = starter::lookup(&catalog, &|n: &str| builtin.contains(n));
    let avoid = lookup
        .as_ref()
        .and_then(|t| t.example.as_ref())
        .map(|(table, _)| table.clone());
    let second = starter::recent_or_count(&catalog, avoid.as_deref(), &|n: &str| {
        builtin.contains(n) || lookup.as_ref().is_some_and(|l| l.name == n)
    });
    let databases = BTreeMap::from([(name.clone(), database.clone())]);
    for tool in lookup.into_iter().chain(second) {
        // A tool the config could not load is left out, with the reason, rather than written.
        match check_tool(&tool, &name, &databases).await {
            Ok(()) => tools.push(tool),
            Err(why) => note!(
                "{}",
                Style::stderr().warn(&format!("left out the tool {}: {why}", tool.name))
            ),
        }
    }
    let example = match tools.first() {
        Some(tool) => example_arguments(&database, &catalog, tool).await,
        None => None,
    };
    database.close().await;

    let text = render(&Starter {
        source: &shown,
        name: &name,
        url_entry: &url_entry,
        secret,
        catalog: &catalog,
        tools: &tools,
    });
    write(&args.output, &text, args.force)?;

    let tool_names: Vec<String> = tools.iter().map(|t| format!("`{}`", t.name)).collect();
    say!(
        "Wrote {} for {shown} ({} tables): the database `{name}`, the agent `analyst`{}.",
        args.output.display(),
        catalog.tables.len(),
        if tool_names.is_empty() {
            String::new()
        } else {
            format!(", the tools {}", tool_names.join(" and "))
        }
    );
    if secret {
        say!(
            "The URL holds a password, so the file reads it from {URL_VARIABLE}; before using it:\n  \
             export {URL_VARIABLE}={}   # with your password in place of ***",
            shell_word(&shown)
        );
    }
    let config = if args.output == Path::new("steward.yaml") {
        String::new()
    } else {
        format!(
            " --config {}",
            shell_word(&args.output.display().to_string())
        )
    };
    say!("Next:");
    say!("  steward config check{config}");
    if let (Some(tool), Some(example)) = (tools.first(), example) {
        say!(
            "  steward tools call{config} {} {}",
            tool.name,
            shell_word(&example)
        );
    }
    if let Some(tool) = tools.get(1) {
        say!("  steward tools call{config} {}", tool.name);
    }
    say!("  steward tools list{config} --agent analyst");
    say!(
        "  steward ask{config} \"What is in this database?\"   # needs a model: see steward ask --help"
    );
    Ok(exit::OK)
}

/// A name for the database in `databases`: the SQLite file's stem or the server database's name.
fn database_name(url: &str) -> String {
    let without_query = url.split(['?', '#']).next().unwrap_or(url);
    let last = without_query
        .trim_end_matches('/')
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or("");
    let stem = Path::new(last)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    // `postgres://host` has no database name: its last part is the host.
    let stem = if without_query.contains("://")
        && !without_query
            .split("://")
            .nth(1)
            .is_some_and(|r| r.contains('/'))
    {
        String::new()
    } else {
        stem
    };
    let name = snake(&stem, 40, "main");
    if name.starts_with('_') {
        format!("db{name}")
    } else {
        name
    }
}

impl StarterTool {
    /// The tool's entry under `tools:`, indented by two spaces.
    fn yaml(&self, database: &str) -> String {
        let mut out = format!(
            "  {}:\n    kind: sql\n    database: {}\n    description: {}\n    statement: {}\n",
            yaml_key(&self.name),
            yaml_key(database),
            yaml_str(&self.description),
            yaml_str(&self.statement)
        );
        if let Some((name, declaration)) = &self.parameter {
            out.push_str(&format!(
                "    parameters:\n      {}: {declaration}\n",
                yaml_key(name)
            ));
        }
        if let Some(n) = self.max_rows {
            out.push_str(&format!("    max_rows: {n}\n"));
        }
        out
    }
}

/// Builds a tool exactly as the config will when it loads (parameters, guard, statement).
async fn check_tool(
    tool: &StarterTool,
    database: &str,
    databases: &BTreeMap<String, Arc<Database>>,
) -> anyhow::Result<()> {
    let yaml = tool.yaml(database);
    let parsed: BTreeMap<String, ToolDef> = serde_yaml::from_str(&yaml)
        .with_context(|| format!("the generated YAML does not read back:\n{yaml}"))?;
    for (name, def) in parsed {
        def.build(&name, databases).await?;
    }
    Ok(())
}

/// The arguments of an example call, with a value really in the table, as JSON text.
async fn example_arguments(
    database: &Database,
    catalog: &Catalog,
    tool: &StarterTool,
) -> Option<String> {
    let (table, column) = tool.example.as_ref()?;
    let (param, _) = tool.parameter.as_ref()?;
    let dialect = catalog.dialect;
    let column_sql = ident::ident(dialect, column);
    let sql = format!(
        "SELECT {column_sql} FROM {} WHERE {column_sql} IS NOT NULL",
        ident::table(dialect, table)
    );
    let guard = database.guard().await.ok()?;
    let limits = QueryLimits {
        max_rows: 1,
        ..QueryLimits::default()
    };
    let result = database.query(&guard, &sql, &limits).await.ok()?;
    let value = result.rows.first()?.first()?.clone();
    let value = match value {
        Value::Number(_) | Value::String(_) => value,
        _ => return None,
    };
    // `param` is a plain name (letters, digits, _).
    Some(format!("{{\"{param}\": {value}}}"))
}

/// Everything the file says.
struct Starter<'a> {
    source: &'a str,
    name: &'a str,
    url_entry: &'a str,
    secret: bool,
    catalog: &'a Catalog,
    tools: &'a [StarterTool],
}

fn render(s: &Starter<'_>) -> String {
    let mut out = format!(
        "# steward.yaml for {} ({} tables), written by `steward init`.\n\
         # Check it with `steward config check`; commands read ./steward.yaml, or the file given with --config.\n\
         # The format: docs/configuration.md in Steward's repository.\n\n",
        s.source.replace('\n', " "),
        s.catalog.tables.len()
    );
    out.push_str("databases:\n");
    if s.secret {
        out.push_str(&format!(
            "  # The URL holds a password, so it is read from the environment: export {URL_VARIABLE}=… before use.\n"
        ));
    } else {
        out.push_str(
            "  # Keep passwords and keys out of this file: write ${VAR} and set VAR in the environment.\n",
        );
    }
    out.push_str(&format!(
        "  {}: {}\n\n",
        yaml_key(s.name),
        yaml_str(s.url_entry)
    ));
    out.push_str(&format!(
        "defaults:\n  database: {}\n  agent: analyst\n\n",
        yaml_key(s.name)
    ));
    if s.tools.is_empty() {
        out.push_str(
            "# No tables to build example tools on yet. A tool runs one fixed statement with :name parameters:\n\
             # tools:\n#   customers_by_city:\n#     kind: sql\n#     database: main\n\
             #     description: Customers living in a city.\n\
             #     statement: SELECT name, email FROM customers WHERE city = :city\n\
             #     parameters:\n#       city: {type: string, maxLength: 80}\n\n",
        );
    } else {
        out.push_str(
            "# Each tool runs one fixed SQL statement; :name parameters are bound as values, never spliced into the\n\
             # SQL, and checked against their declaration before the statement runs. A read tool must pass the\n\
             # read-only guard; `mode: write` allows one INSERT, UPDATE or DELETE.\n\
             tools:\n",
        );
        for tool in s.tools {
            out.push_str(&tool.yaml(s.name));
        }
        out.push('\n');
    }
    // Hints name tables and columns, which may hold braces: written as braces of the template syntax.
    let hints: String = s
        .tools
        .iter()
        .map(|t| format!("- {}\n", t.hint.replace('{', "{{").replace('}', "}}")))
        .collect();
    let mut tools: Vec<String> = s.tools.iter().map(|t| yaml_key(&t.name)).collect();
    tools.extend(
        [
            "describe_tables",
            "query_table",
            "run_sql",
            "ask_database",
            "current_date",
            "calculator",
        ]
        .map(str::to_owned),
    );
    out.push_str("agents:\n  analyst:\n");
    out.push_str(&format!(
        "    description: {}\n",
        yaml_str(&format!(
            "Answers questions about the data in {} with read-only SQL.",
            s.name
        ))
    ));
    out.push_str("    # {dialect}, {schema} (the tables that matter for the question) and {rules} are filled in.\n");
    out.push_str("    instructions: |\n");
    let instructions = format!(
        "You are a careful data analyst answering questions over a {{dialect}} database.\n\
         {hints}\
         - {} query_table for simple lookups and run_sql (one read-only SELECT) for joins and aggregates;\n  \
         ask_database writes, checks and fixes the SQL for questions that need several queries.\n\
         - Every figure in your answer comes from a query result; say which query you ran.\n\
         {{rules}}\n\nSchema:\n{{schema}}\n",
        if hints.is_empty() {
            "Use"
        } else {
            "Otherwise use"
        }
    );
    for line in instructions.lines() {
        if line.is_empty() {
            out.push('\n');
        } else {
            out.push_str(&format!("      {line}\n"));
        }
    }
    out.push_str(&format!("    tools: [{}]\n", tools.join(", ")));
    out.push_str(
        "    # model: fast                         # a name from `models` (default: --model or STEWARD_MODEL)\n\
         \x20   limits: {steps: 12}\n\n\
         # models:\n\
         #   fast: openai:gpt-4o-mini             # or anthropic:claude-sonnet-4-5, ollama:qwen2.5:7b, …\n",
    );
    out
}

/// Writes the file: a new one, or, with `force`, over the old one.
fn write(path: &Path, text: &str, force: bool) -> anyhow::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if force {
        options.create(true).truncate(true);
    } else {
        // Made meanwhile by someone else: still not overwritten.
        options.create_new(true);
    }
    let mut file = options.open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            anyhow::anyhow!(
                "{} already exists; pass --force to replace it",
                path.display()
            )
        } else {
            anyhow::anyhow!("cannot write {}: {e}", path.display())
        }
    })?;
    file.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_names_come_from_the_url() {
        assert_eq!(database_name("sqlite:///tmp/x/demo.sqlite"), "demo");
        assert_eq!(database_name("shop.db"), "shop");
        assert_eq!(
            database_name("postgres://u:p@h:5432/Sales-2024?sslmode=require"),
            "sales_2024"
        );
        assert_eq!(database_name("mysql://root@127.0.0.1:3306"), "main");
        assert_eq!(database_name("postgres://h/2024"), "db_2024");
    }
}
