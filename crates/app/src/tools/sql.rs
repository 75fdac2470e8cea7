//! `kind: sql` tools: one fixed statement with `:name` parameters, always bound, never spliced.
//!
//! At load the statement's `:name`s are turned into the engine's placeholders by lexing it as the engine does
//! ([`steward_sql::Guard::bind_named`]); that translated text is the one checked and the one run. A `read`
//! tool's statement must pass the database's guard and runs on the read-only path with a row cap; a `write`
//! tool's statement must be exactly one `INSERT`, `UPDATE` or `DELETE` ([`steward_sql::Guard::check_write`])
//! and runs in one transaction, idempotent on the tool call (see `ledger`).

use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use steward_core::{Tool, ToolContext, ToolData, ToolError, ToolOutput, ToolSpec};
use steward_domains::call_key::CallKey;
use steward_sql::{Database, Guard, MAX_ROWS, Param, QueryLimits, StatementClass, WriteKind};

use super::ledger::{Begun, Ledger};
use super::params::{ParamType, Parameters};
use super::{ToolDefError, check_name, check_params};

mod outcome;

use outcome::{changed, sql_error, table_output, to_param};

/// The row cap of a read tool that does not set `max_rows`.
pub const DEFAULT_MAX_ROWS: u64 = 100;

/// Whether a SQL tool reads or writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum SqlMode {
    /// One guarded, read-only query.
    #[default]
    Read,
    /// One `INSERT`, `UPDATE` or `DELETE` in its own transaction, idempotent on the call.
    Write,
}

/// A `kind: sql` tool as declared in config.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SqlToolDef {
    /// The name of the database it runs on.
    pub database: String,
    /// What it does and when to use it, for the model.
    pub description: String,
    /// The statement, with `:name` parameters.
    pub statement: String,
    /// The parameters, in order.
    #[serde(default)]
    pub parameters: Parameters,
    /// Read (default) or write.
    #[serde(default)]
    pub mode: SqlMode,
    /// Most rows a read returns (default 100).
    #[serde(default)]
    pub max_rows: Option<u64>,
    /// A human-readable title for UIs.
    #[serde(default)]
    pub title: Option<String>,
    /// Write tools: the table that records each call, in the tool's database (`name` or `schema.name`;
    /// default `steward_tool_calls`), created by the first write. Kept beside the write so that both commit
    /// together.
    #[serde(default)]
    pub ledger: Option<String>,
}

/// What a call does.
#[derive(Debug)]
enum Plan {
    Read {
        guard: Guard,
        limits: QueryLimits,
    },
    Write {
        kind: WriteKind,
        ledger: Ledger,
        guard: Box<Guard>,
    },
}

/// A built `kind: sql` tool.
#[derive(Debug)]
pub struct SqlTool {
    spec: ToolSpec,
    title: Option<String>,
    db: Arc<Database>,
    /// The statement with the engine's placeholders: the text checked and the text run.
    sql: String,
    /// The parameter bound at each placeholder.
    binds: Vec<String>,
    params: Parameters,
    plan: Plan,
    /// Each principal's SQL access (reads only).
    pub(crate) access: Option<steward_sql::AccessFn>,
}

impl SqlTool {
    /// A write tool's ledger table (as SQL) when it does not exist yet in the tool's database: its first write
    /// creates it. `None` for a read tool, or when the table is there.
    pub async fn ledger_to_create(&self) -> Option<String> {
        let Plan::Write { ledger, .. } = &self.plan else {
            return None;
        };
        let table = ledger.table();
        self.db
            .prepares(
                &format!("SELECT {} FROM {table}", super::ledger::COLUMNS),
                false,
            )
            .await
            .is_err()
            .then(|| table.to_owned())
    }

    /// A write tool's ledger that names a table already there with other columns (a business table, say): its
    /// writes could never be recorded. `None` when the table has Steward's columns or is not there yet.
    pub async fn ledger_of_another_shape(&self) -> Option<String> {
        let table = self.ledger_to_create().await?;
        self.db
            .prepares(&format!("SELECT 1 FROM {table}"), false)
            .await
            .is_ok()
            .then_some(table)
    }

    /// The schema a write tool's ledger (`ledger: schema.table`) names that the tool's database lacks: its first
    /// write could not create the table there. `None` when the ledger has no schema, the schema exists, or the
    /// database cannot say.
    pub async fn ledger_schema_missing(&self) -> Option<String> {
        let Plan::Write { ledger, .. } = &self.plan else {
            return None;
        };
        let (schema, _) = ledger.table().split_once('.')?;
        let schema = schema.trim_matches(|c| c == '"' || c == '`').to_owned();
        let sql = match self.db.dialect() {
            steward_sql::Dialect::Postgres => "SELECT 1 FROM pg_namespace WHERE nspname = ?",
            steward_sql::Dialect::Mysql => {
                "SELECT 1 FROM information_schema.schemata WHERE schema_name = ?"
            }
            _ => "SELECT 1 FROM pragma_database_list WHERE name = ?",
        };
        // Read in a write transaction that is dropped (rolled back): nothing is written.
        let mut tx = self.db.begin_write().await.ok()?;
        let found = tx
            .fetch(sql, &[steward_sql::Param::Text(schema.clone())])
            .await
            .ok()?;
        found.rows.is_empty().then_some(schema)
    }

    /// Asks the tool's database to prepare its statement without running it: a table or column it lacks is
    /// found now (`steward config check`), not at the first call.
    pub async fn prepares(&self) -> Result<(), ToolDefError> {
        self.db
            .prepares(&self.sql, matches!(self.plan, Plan::Write { .. }))
            .await
            .map_err(|e| ToolDefError::Statement {
                tool: self.spec.name.clone(),
                problem: format!(
                    "the database refuses its statement: {}; compare the table and column names with `steward \
                     schema`",
                    e.message()
                ),
            })
    }

    /// Builds the tool: checks its name, parameters and statement against `db` (its guard, with the server's
    /// own settings), so that every mistake in the declaration shows now rather than at a call.
    pub async fn build(
        name: &str,
        def: SqlToolDef,
        db: Arc<Database>,
    ) -> Result<Self, ToolDefError> {
        check_name(name)?;
        check_params(name, &def.parameters)?;
        if def.description.trim().is_empty() {
            return Err(ToolDefError::invalid(
                name,
                "the description is empty; say what the tool does, for the model",
            ));
        }
        let statement_error = |problem: String| ToolDefError::Statement {
            tool: name.to_owned(),
            problem,
        };
        let guard = db.guard().await.map_err(|e| ToolDefError::Database {
            tool: name.to_owned(),
            message: e.to_string(),
        })?;
        let named = guard
            .bind_named(&def.statement)
            .map_err(|r| statement_error(format!("the statement cannot be used: {}", r.message)))?;
        if let Some(unknown) = named.names.iter().find(|n| def.parameters.get(n).is_none()) {
            let declared: Vec<&str> = def.parameters.names().collect();
            return Err(statement_error(format!(
                "the statement uses :{unknown}, which is not declared under `parameters` (declared: {}); declare it or fix the name",
                if declared.is_empty() {
                    "none".to_owned()
                } else {
                    declared.join(", ")
                }
            )));
        }
        if let Some(unused) = def
            .parameters
            .names()
            .find(|p| !named.names.iter().any(|n| n == p))
        {
            return Err(ToolDefError::Parameter {
                tool: name.to_owned(),
                param: unused.to_owned(),
                problem: format!(
                    "it is declared but the statement never uses :{unused}; use it or remove it"
                ),
            });
        }
        let mut spec = ToolSpec::new(name, def.description.clone(), def.parameters.schema());
        let plan = match def.mode {
            SqlMode::Read => {
                let verdict = guard.check(&named.sql);
                if !verdict.allowed {
                    let why = verdict.explanation();
                    return Err(statement_error(match verdict.class {
                        StatementClass::Write | StatementClass::Ddl | StatementClass::Admin => {
                            format!(
                                "it is a read tool (mode: read, the default) but its statement changes the database: {why} \
                             Make it a SELECT, or declare `mode: write` for a single INSERT, UPDATE or DELETE."
                            )
                        }
                        _ => format!("its statement is refused by the read-only guard: {why}"),
                    }));
                }
                if def.ledger.is_some() {
                    return Err(ToolDefError::invalid(
                        name,
                        "ledger applies to write tools only (mode: write); remove it",
                    ));
                }
                let max_rows = def.max_rows.unwrap_or(DEFAULT_MAX_ROWS);
                let max_rows = usize::try_from(max_rows)
                    .ok()
                    .filter(|n| (1..=MAX_ROWS).contains(n))
                    .ok_or_else(|| {
                        ToolDefError::invalid(
                            name,
                            format!("max_rows must be between 1 and {MAX_ROWS}, not {max_rows}"),
                        )
                    })?;
                spec.annotations.read_only = true;
                spec.annotations.idempotent = true;
                Plan::Read {
                    guard,
                    limits: QueryLimits {
                        max_rows,
                        ..QueryLimits::default()
                    },
                }
            }
            SqlMode::Write => {
                if def.max_rows.is_some() {
                    return Err(ToolDefError::invalid(
                        name,
                        "max_rows applies to read tools only; remove it",
                    ));
                }
                let kind = guard.check_write(&named.sql).map_err(|reasons| {
                    let why: Vec<String> = reasons.into_iter().map(|r| r.message).collect();
                    statement_error(format!(
                        "it is a write tool (mode: write) but its statement cannot be used: {}",
                        why.join(" ")
                    ))
                })?;
                spec.annotations.destructive = kind.destructive();
                spec.annotations.idempotent = true;
                let table = def.ledger.as_deref().unwrap_or(super::LEDGER_TABLE);
                if let Some(why) = super::ledger::misplaced(db.dialect(), table) {
                    return Err(ToolDefError::invalid(
                        name,
                        format!("ledger `{table}`: {why}"),
                    ));
                }
                let table = super::ledger::ledger_table(db.dialect(), table).ok_or_else(|| {
                    ToolDefError::invalid(
                        name,
                        format!(
                            "ledger `{table}` is not a table name: write `name` or `schema.name` (letters, digits \
                             and _, not starting with a digit)"
                        ),
                    )
                })?;
                Plan::Write {
                    kind,
                    ledger: Ledger::new(table),
                    guard: Box::new(guard),
                }
            }
        };
        Ok(Self {
            spec,
            title: def.title,
            db,
            sql: named.sql,
            binds: named.names,
            params: def.parameters,
            plan,
            access: None,
        })
    }

    /// The title for UIs, when declared.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// The statement as it runs: the engine's placeholders instead of `:name`.
    pub fn statement(&self) -> &str {
        &self.sql
    }

    /// The values bound to the placeholders, from validated arguments with defaults filled in.
    fn bind(&self, args: &Map<String, Value>) -> Result<Vec<Param>, ToolError> {
        self.binds
            .iter()
            .map(|name| {
                let kind = self
                    .params
                    .get(name)
                    .map_or(ParamType::String, |spec| spec.kind);
                to_param(name, kind, args.get(name))
            })
            .collect()
    }

    async fn read(
        &self,
        ctx: &ToolContext,
        guard: &Guard,
        limits: &QueryLimits,
        params: &[Param],
    ) -> Result<ToolOutput, ToolError> {
        let (result, filtered) = steward_sql::read_as(
            &self.db,
            guard,
            self.access.as_ref(),
            &ctx.principal,
            &self.sql,
            params,
            limits,
        )
        .await
        .map_err(|e| sql_error(e, false))?;
        let mut output = table_output(&result);
        let note = steward_sql::filtered_note(&filtered);
        if !note.is_empty() {
            output.content = format!("{note}{}", output.content);
        }
        Ok(output)
    }

    /// The statement a write runs for the call's principal, with the parameters it binds: as declared, or
    /// limited to the tables, columns and rows its role may change (the row filter's values bound among
    /// `params`).
    fn write_sql(
        &self,
        ctx: &ToolContext,
        guard: &Guard,
        params: &[Param],
    ) -> Result<(String, Vec<Param>), ToolError> {
        match self
            .access
            .as_ref()
            .map(|a| a.of(&ctx.principal, guard.dialect()))
        {
            None | Some(Ok(None)) => Ok((self.sql.clone(), params.to_vec())),
            Some(Err(why)) => Err(ToolError::new(format!("Not allowed: {why}."))),
            Some(Ok(Some(access))) => guard
                .scoped_write(&self.sql, &access.scope, access.write.as_ref())
                .map_err(|reasons| {
                    ToolError::new(format!(
                        "Not allowed: {}",
                        reasons
                            .iter()
                            .map(|r| r.message.as_str())
                            .collect::<Vec<_>>()
                            .join(" ")
                    ))
                })
                .and_then(|scoped| {
                    let params = scoped.bind(params).map_err(ToolError::internal)?;
                    Ok((scoped.sql, params))
                }),
        }
    }

    /// What a write would change, found by running it in a transaction that is rolled back.
    async fn write_preview(
        &self,
        ctx: &ToolContext,
        guard: &Guard,
        kind: WriteKind,
        args: Value,
    ) -> Result<String, ToolError> {
        let args = self.params.apply_defaults(args);
        let params = self.bind(&args)?;
        let (sql, params) = self.write_sql(ctx, guard, &params)?;
        let mut tx = self
            .db
            .begin_write()
            .await
            .map_err(|e| sql_error(e, true))?;
        // MariaDB returns the rows of an INSERT or DELETE, not of an UPDATE.
        let returning = (guard.dialect() != steward_sql::Dialect::Mysql
            || kind != WriteKind::Update)
            .then(|| guard.returning_all(&sql))
            .flatten();
        let shown = match returning {
            Some(text) => {
                let mut rows = tx
                    .fetch(&text, &params)
                    .await
                    .map_err(|e| sql_error(e, true))?;
                let n = rows.rows.len();
                // The rows are shown as a read would show them to the asker: only the columns their role
                // reads, masked ones masked; only the count when they may not read the table.
                let readable = match self
                    .access
                    .as_ref()
                    .map(|a| a.of(&ctx.principal, guard.dialect()))
                {
                    Some(Ok(Some(access))) => match guard.write_table(&self.sql) {
                        Some(table) => access.limit_returned(&table, &mut rows),
                        None => {
                            rows.rows.clear();
                            false
                        }
                    },
                    _ => true,
                };
                let verb = match kind {
                    WriteKind::Insert => "add",
                    WriteKind::Delete => "delete",
                    _ => "change",
                };
                let plural = if n == 1 { "" } else { "s" };
                if readable {
                    format!("Would {verb} {n} row{plural}:\n{}", rows.to_text())
                } else {
                    format!("Would {verb} {n} row{plural} (of a table your role does not read).")
                }
            }
            None => {
                let n = tx
                    .execute_exact(&sql, &params)
                    .await
                    .map_err(|e| sql_error(e, true))?;
                format!("Would change {n} row{}.", if n == 1 { "" } else { "s" })
            }
        };
        // Dropped without a commit: rolled back.
        drop(tx);
        Ok(shown)
    }

    async fn write(
        &self,
        ctx: &ToolContext,
        guard: &Guard,
        kind: WriteKind,
        ledger: &Ledger,
        args: &Map<String, Value>,
        params: &[Param],
    ) -> Result<ToolOutput, ToolError> {
        let (sql, params) = self.write_sql(ctx, guard, params)?;
        let key = CallKey::new(ctx, &self.spec.name, args)?;
        let mut tx = match ledger.begin(&self.db, &key).await? {
            Begun::Replay(output) => return Ok(output),
            Begun::Fresh(tx) => tx,
        };
        let rows = tx
            .execute_exact(&sql, &params)
            .await
            .map_err(|e| sql_error(e, true))?;
        let output = ToolOutput::text(changed(kind, rows)).with_data(ToolData::Json {
            value: json!({ "rows_affected": rows }),
        });
        ledger.finish(&self.db, tx, &key, output).await
    }
}

#[async_trait]
impl Tool for SqlTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn preview(&self, ctx: &ToolContext, args: Value) -> Option<String> {
        let Plan::Write { kind, guard, .. } = &self.plan else {
            return None;
        };
        Some(
            self.write_preview(ctx, guard, *kind, args)
                .await
                .unwrap_or_else(|e| format!("(no preview: {})", e.message)),
        )
    }

    async fn call(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args = self.params.apply_defaults(args);
        let params = self.bind(&args)?;
        match &self.plan {
            Plan::Read { guard, limits } => self.read(ctx, guard, limits, &params).await,
            Plan::Write {
                kind,
                ledger,
                guard,
            } => self.write(ctx, guard, *kind, ledger, &args, &params).await,
        }
    }
}
