//! Change sets of the domain tools: writes staged one by one and applied together.
//!
//! A write waiting for approval is *staged*: in one transaction, the run's earlier staged writes are replayed,
//! then the write itself runs and returns its real result, then everything is rolled back. Nothing is kept, so
//! the run can go on with real results (the new project's id, the computed gross, the task's title) and the
//! person decides once, at the end, on every write of the run. Applying runs the chosen writes for real, in
//! one transaction, and checks that each gives the result it was staged with: when the data changed
//! meanwhile, nothing is written.
//!
//! Ids of rows created in a change set cannot be known before it is applied (PostgreSQL's sequences and
//! MariaDB's auto-increment do not roll back), so each is shown as a placeholder: the first project a change
//! set creates is project `-1`, the second `-2`, and so on per kind. A later write that names `-1` means that
//! row, in staging as when applied; the applied result maps each placeholder to the real id.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use steward_core::{StagedCall, ToolContext, ToolError, ToolOutput, parse_args};
use steward_sql::WriteTx;

use crate::call_key::CallKey;
use crate::store::{Rows, Store, unavailable};

/// One write of a change set: a call of a domain write tool, with its validated arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// The run (or sub-run) that made the call.
    pub run_id: String,
    /// The call's id in its run.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The arguments it was called with.
    pub arguments: Value,
}

impl Change {
    /// The write a run staged.
    pub fn of(staged: &StagedCall) -> Self {
        Self {
            run_id: staged.run_id.clone(),
            call_id: staged.call.id.clone(),
            tool: staged.call.name.clone(),
            arguments: staged.args.clone(),
        }
    }
}

/// A staged write and the result it was staged with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Staged {
    /// The write.
    pub change: Change,
    /// What it returned when staged.
    pub output: ToolOutput,
}

/// A row a change set created: its placeholder and its real id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Created {
    /// What kind of row (`project`, `task`, `expense`).
    pub kind: String,
    /// The placeholder the run used (`-1`, `-2`, …).
    pub placeholder: i64,
    /// The row's id in the database.
    pub id: i64,
}

/// What applying a change set did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Applied {
    /// The result of each write applied, in order (the results it was staged with).
    pub outputs: Vec<ToolOutput>,
    /// The writes that had been applied before (a retry): not written again.
    pub already: Vec<String>,
    /// The rows created, placeholder → id.
    pub created: Vec<Created>,
}

/// How a write's result when applied differs from the one it was staged with, in words (`None`: it does not):
/// a row it changes as it was before (someone else changed it meanwhile), a value it writes other than the one
/// shown (a date said in words, resolved on another day), or its text.
fn difference(staged: &ToolOutput, now: &ToolOutput) -> Option<String> {
    let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "nothing".to_owned());
    for (then, row) in staged.changes.iter().zip(&now.changes) {
        for (a, b) in then.fields.iter().zip(&row.fields) {
            if a.column != b.column {
                continue;
            }
            if a.before != b.before {
                return Some(format!(
                    "finds {} {} with {} {} (it was {} when staged)",
                    row.table,
                    row.row,
                    b.column,
                    shown(&b.before),
                    shown(&a.before)
                ));
            }
            if a.after != b.after {
                return Some(format!(
                    "would write {} {} to {} {}, where {} was shown when staged",
                    b.column,
                    shown(&b.after),
                    row.table,
                    row.row,
                    shown(&a.after)
                ));
            }
        }
    }
    if now.content != staged.content || now.data != staged.data {
        return Some(format!(
            "now gives \"{}\" instead of \"{}\"",
            now.content, staged.content
        ));
    }
    (now.changes != staged.changes).then(|| "changes other rows than when it was staged".to_owned())
}

/// How the error of a write staged after a change set's earlier writes begins when one of those no longer
/// applies (the data changed under the set).
pub const STALE: &str = "An earlier staged change no longer applies";

/// The tools whose calls can be staged.
pub const STAGEABLE: &[&str] = &[
    "add_expense",
    "create_project",
    "move_task",
    "add_task",
    "complete_task",
];

/// The ids of the rows created in one transaction of a change set, by kind, in order.
#[derive(Debug, Default)]
pub(crate) struct Ids {
    /// Show created rows as placeholders (a change set) or by their ids (a plain call).
    placeholders: bool,
    created: BTreeMap<&'static str, Vec<i64>>,
}

impl Ids {
    /// For a write that runs alone: ids are shown as they are.
    pub(crate) fn plain() -> Self {
        Self::default()
    }

    /// For the writes of a change set: created rows are shown as placeholders.
    fn placeholders(known: &[Created]) -> Self {
        let mut ids = Self {
            placeholders: true,
            created: BTreeMap::new(),
        };
        for c in known {
            let Some(kind) = kind_name(&c.kind) else {
                continue;
            };
            let list = ids.created.entry(kind).or_default();
            let at = slot(c.placeholder);
            if list.len() <= at && at < 10_000 {
                list.resize(at + 1, 0);
            }
            if let Some(slot) = list.get_mut(at) {
                *slot = c.id;
            }
        }
        ids
    }

    /// A row of `kind` was created with `id`: the id to show for it.
    pub(crate) fn created(&mut self, kind: &'static str, id: i64) -> i64 {
        if !self.placeholders {
            return id;
        }
        let list = self.created.entry(kind).or_default();
        list.push(id);
        -i64::try_from(list.len()).unwrap_or(i64::MAX)
    }

    /// A row of `kind` the change set would have created here, but which is not applied: its placeholder stays
    /// taken (the later ones keep their numbers) and names nothing.
    fn hole(&mut self, kind: &'static str) {
        self.created.entry(kind).or_default().push(0);
    }

    /// The row of `kind` that `id` names: a placeholder names a row created earlier in the change set.
    pub(crate) fn resolve(&self, kind: &'static str, id: i64) -> Result<i64, ToolError> {
        if id >= 0 {
            return Ok(id);
        }
        match self.created.get(kind).and_then(|list| list.get(slot(id))) {
            Some(&real) if real != 0 => Ok(real),
            _ => Err(ToolError::new(format!(
                "There is no {kind} {id}: negative ids stand for {kind}s created earlier in this run's staged \
                 changes, and no such {kind} was created. Use an id from the tools' results."
            ))),
        }
    }

    /// The id to show for the row of `kind` with `id`: its placeholder when the change set created it.
    pub(crate) fn show(&self, kind: &'static str, id: i64) -> i64 {
        if !self.placeholders {
            return id;
        }
        self.created
            .get(kind)
            .and_then(|list| list.iter().position(|&real| real == id))
            .map_or(id, |at| -i64::try_from(at + 1).unwrap_or(i64::MAX))
    }

    fn into_created(self) -> Vec<Created> {
        let mut out = Vec::new();
        for (kind, list) in self.created {
            for (at, id) in list.into_iter().enumerate() {
                if id == 0 {
                    continue;
                }
                out.push(Created {
                    kind: kind.to_owned(),
                    placeholder: -i64::try_from(at + 1).unwrap_or(i64::MAX),
                    id,
                });
            }
        }
        out
    }
}

/// Where the placeholder `id` (-1, -2, …) is in a kind's list of created rows; out of reach for anything else.
fn slot(id: i64) -> usize {
    id.checked_neg()
        .and_then(|n| n.checked_sub(1))
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(usize::MAX)
}

/// The kind of row a write creates, if it creates one.
fn creates(tool: &str) -> Option<&'static str> {
    match tool {
        "create_project" => Some("project"),
        "add_task" => Some("task"),
        "add_expense" => Some("expense"),
        _ => None,
    }
}

/// The argument fields that name a row, and the kind of row they name.
const REFERENCES: &[(&str, &str)] = &[("project_id", "project"), ("task_id", "task")];

/// Which calls of `staged` to apply when a person chose the calls `chosen` (by call id): those, and every
/// earlier call that wrote a row a chosen call touches — created the row it names by its placeholder, or
/// changed the task it changes (its result was staged after that change) — and so on. An unknown id is an
/// error.
pub fn with_dependencies(staged: &[Staged], chosen: &[String]) -> Result<Vec<bool>, ToolError> {
    let mut selected: Vec<bool> = staged
        .iter()
        .map(|s| chosen.contains(&s.change.call_id))
        .collect();
    for id in chosen {
        if !staged.iter().any(|s| &s.change.call_id == id) {
            return Err(ToolError::new(format!(
                "there is no change `{id}` in this change set; its changes are: {}",
                staged
                    .iter()
                    .map(|s| s.change.call_id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    // The rows each call writes (the one it creates, by placeholder; the task it changes) and touches (those,
    // and the rows it names).
    let mut counts: BTreeMap<&str, i64> = BTreeMap::new();
    let mut writes: Vec<Vec<(&str, i64)>> = Vec::with_capacity(staged.len());
    let mut touches: Vec<Vec<(&str, i64)>> = Vec::with_capacity(staged.len());
    for s in staged {
        let mut wrote = Vec::new();
        if let Some(kind) = creates(&s.change.tool) {
            let n = counts.entry(kind).or_default();
            *n += 1;
            wrote.push((kind, -*n));
        }
        let named: Vec<(&str, i64)> = REFERENCES
            .iter()
            .filter_map(|(field, kind)| {
                s.change
                    .arguments
                    .get(*field)
                    .and_then(Value::as_i64)
                    .map(|id| (*kind, id))
            })
            .collect();
        if matches!(s.change.tool.as_str(), "move_task" | "complete_task") {
            wrote.extend(named.iter().filter(|(kind, _)| *kind == "task"));
        }
        let mut touched = named;
        touched.extend(wrote.iter().copied());
        writes.push(wrote);
        touches.push(touched);
    }
    // Until nothing more is brought: a dependency may itself depend on an earlier one.
    let mut changed = true;
    while changed {
        changed = false;
        for i in 0..staged.len() {
            if !selected[i] {
                continue;
            }
            for j in 0..i {
                if !selected[j] && writes[j].iter().any(|row| touches[i].contains(row)) {
                    selected[j] = true;
                    changed = true;
                }
            }
        }
    }
    Ok(selected)
}

fn kind_name(kind: &str) -> Option<&'static str> {
    ["project", "task", "expense"]
        .into_iter()
        .find(|k| *k == kind)
}

/// Where a write runs: its transaction, the change set's ids, and the rows its principal may see (`None`: every
/// row, or a change set applied as it was staged and approved).
pub(crate) struct WriteCx<'t> {
    pub(crate) tx: &'t mut WriteTx,
    pub(crate) ids: &'t mut Ids,
    pub(crate) rows: Option<&'t Rows>,
}

impl WriteCx<'_> {
    /// True when the principal may see the row `id` of `table` (rows written in this transaction included).
    pub(crate) async fn sees(&mut self, table: &str, id: i64) -> Result<bool, ToolError> {
        match self.rows {
            None => Ok(true),
            Some(rows) => rows.sees(self.tx, table, id).await,
        }
    }

    /// Refuses a write that would leave its row outside the rows the principal may see (`what`: the row, as
    /// the person named it).
    pub(crate) async fn keeps_in_view(
        &mut self,
        table: &str,
        id: i64,
        what: &str,
    ) -> Result<(), ToolError> {
        if self.sees(table, id).await? {
            return Ok(());
        }
        Err(ToolError::new(format!(
            "Not allowed: after this change {what} would be outside the rows your role may see, so it is not \
             made. Nothing was written."
        )))
    }
}

/// What a write did: its result and the line the database's audit log keeps (`None`: it changed nothing, and
/// nothing is kept).
pub(crate) struct Written {
    pub(crate) output: ToolOutput,
    pub(crate) action: Option<String>,
}

/// Runs the write `tool` with `arguments` in `cx`.
async fn write_named(
    store: &Store,
    cx: &mut WriteCx<'_>,
    tool: &str,
    arguments: Value,
) -> Result<Written, ToolError> {
    match tool {
        "add_expense" => crate::expenses::add_expense_in(store, cx, parse_args(arguments)?).await,
        "create_project" => {
            crate::tasks::create_project_in(store, cx, parse_args(arguments)?).await
        }
        "move_task" => crate::tasks::move_task_in(store, cx, parse_args(arguments)?).await,
        "add_task" => crate::tasks::add_task_in(store, cx, parse_args(arguments)?).await,
        "complete_task" => crate::tasks::complete_task_in(store, cx, parse_args(arguments)?).await,
        other => Err(ToolError::internal(format!(
            "`{other}` is not a write of the built-in tools"
        ))),
    }
}

impl Store {
    /// Runs the call `ctx` of the write `tool` with `args`: alone, idempotent on the call and audited; or,
    /// for a dry run, staged after the run's earlier staged writes (`ctx` names none yet: alone) and rolled
    /// back.
    pub(crate) async fn write<A: Serialize>(
        &self,
        ctx: &ToolContext,
        tool: &str,
        args: &A,
    ) -> Result<ToolOutput, ToolError> {
        let key = CallKey::new(ctx, tool, args)?;
        let arguments = serde_json::to_value(args).map_err(|e| {
            ToolError::internal(format!("the arguments of {tool} cannot be read: {e}"))
        })?;
        if ctx.dry_run {
            let change = Change {
                run_id: ctx.run_id.clone(),
                call_id: ctx.call_id.clone(),
                tool: tool.to_owned(),
                arguments,
            };
            let earlier: Vec<Change> = ctx.staged.iter().flatten().map(Change::of).collect();
            let rows = self.rows_of(ctx).await?;
            return self.stage_seeing(rows.as_ref(), &earlier, &change).await;
        }
        let rows = self.rows_of(ctx).await?;
        let mut tx = match self.begin(&key).await? {
            crate::store::Begun::Replay(output) => return Ok(output),
            crate::store::Begun::Fresh(tx) => tx,
        };
        let mut ids = Ids::plain();
        let written = write_named(
            self,
            &mut WriteCx {
                tx: &mut tx,
                ids: &mut ids,
                rows: rows.as_ref(),
            },
            tool,
            arguments,
        )
        .await?;
        match written.action {
            Some(action) => self.finish(tx, &key, &action, written.output).await,
            None => Ok(written.output),
        }
    }

    /// Stages `change` after `earlier` (the run's staged writes, in order): all run in one transaction that is
    /// rolled back; the result is `change`'s, with placeholders for the rows the change set creates.
    pub async fn stage(
        &self,
        earlier: &[Change],
        change: &Change,
    ) -> Result<ToolOutput, ToolError> {
        self.stage_seeing(None, earlier, change).await
    }

    /// Stages `change` after `earlier` for a principal who may see only `rows` (every write keeps to them).
    async fn stage_seeing(
        &self,
        rows: Option<&Rows>,
        earlier: &[Change],
        change: &Change,
    ) -> Result<ToolOutput, ToolError> {
        let mut tx = self.db.begin_write().await.map_err(unavailable)?;
        let mut ids = Ids::placeholders(&[]);
        let mut cx = WriteCx {
            tx: &mut tx,
            ids: &mut ids,
            rows,
        };
        for before in earlier {
            if let Err(e) = write_named(self, &mut cx, &before.tool, before.arguments.clone()).await
            {
                return Err(ToolError::new(format!(
                    "{STALE} ({} {}): {} Nothing is written.",
                    before.tool, before.call_id, e.message
                )));
            }
        }
        let written = write_named(self, &mut cx, &change.tool, change.arguments.clone()).await?;
        // Dropped unfinished, the transaction rolls back.
        drop(tx);
        Ok(written.output)
    }

    /// Applies `staged` (in order) in one transaction: each must give the result it was staged with, else
    /// nothing is written. `known` are rows created by writes of the change set applied before (their
    /// placeholders still stand for them). A write applied before (the same call) is not written again.
    pub async fn apply(&self, staged: &[Staged], known: &[Created]) -> Result<Applied, ToolError> {
        self.apply_selected(staged, &vec![true; staged.len()], known)
            .await
    }

    /// Applies the calls of `staged` that `selected` marks (see [`with_dependencies`]), as [`Store::apply`]
    /// does; the others are left out (their placeholders keep their numbers and name nothing).
    pub async fn apply_selected(
        &self,
        staged: &[Staged],
        selected: &[bool],
        known: &[Created],
    ) -> Result<Applied, ToolError> {
        let mut tx = self.db.begin_write().await.map_err(unavailable)?;
        let mut ids = Ids::placeholders(known);
        let mut outputs = Vec::with_capacity(staged.len());
        let mut already = Vec::new();
        for (s, &chosen) in staged.iter().zip(selected) {
            if !chosen {
                if let Some(kind) = creates(&s.change.tool) {
                    ids.hole(kind);
                }
                continue;
            }
            let ctx =
                ToolContext::new(s.change.run_id.as_str(), s.change.call_id.as_str(), "apply");
            let key = CallKey::new(&ctx, &s.change.tool, &s.change.arguments)?;
            if let Some(done) = crate::store::previous(&mut tx, &key).await? {
                // The same call applied before gave the result staged now: a retry. Another result (the
                // call id was used again, with placeholders that meant other rows) is not this call.
                if done.content != s.output.content || done.data != s.output.data {
                    return Err(ToolError::new(format!(
                        "{} ({}) was applied before with another result (\"{}\"); its call id was used again. \
                         Nothing was written; run the request again.",
                        s.change.tool, s.change.call_id, done.content
                    )));
                }
                already.push(s.change.call_id.clone());
                outputs.push(done);
                continue;
            }
            let written = write_named(
                self,
                &mut WriteCx {
                    tx: &mut tx,
                    ids: &mut ids,
                    rows: None,
                },
                &s.change.tool,
                s.change.arguments.clone(),
            )
            .await
            .map_err(|e| {
                ToolError::new(format!(
                    "The data changed since the changes were staged: {} ({}) now fails: {} Nothing was \
                     written; run the request again.",
                    s.change.tool, s.change.call_id, e.message
                ))
            })?;
            if let Some(difference) = difference(&s.output, &written.output) {
                return Err(ToolError::new(format!(
                    "The data changed since the changes were staged: {} ({}) {difference}. Nothing was written; \
                     run the request again.",
                    s.change.tool, s.change.call_id
                )));
            }
            let Some(action) = &written.action else {
                outputs.push(written.output);
                continue;
            };
            if let Err(e) = self.record(&mut tx, &key, action, &written.output).await {
                return Err(match e {
                    crate::store::Recorded::Taken => ToolError::new(format!(
                        "{} ({}) was applied by someone else meanwhile. Nothing was written; look at the \
                         change set again.",
                        s.change.tool, s.change.call_id
                    )),
                    crate::store::Recorded::Failed(e) => e,
                });
            }
            outputs.push(written.output);
        }
        tx.commit().await.map_err(unavailable)?;
        let mut created = ids.into_created();
        created.retain(|c| !known.contains(c));
        Ok(Applied {
            outputs,
            already,
            created,
        })
    }
}

#[async_trait::async_trait]
impl steward_core::Applier for Store {
    fn target(&self) -> String {
        self.db.url().to_owned()
    }

    /// Staged again, as the viewer, in a transaction rolled back: a row their role does not let them see makes
    /// a write fail that succeeds for everyone (a set stale for everyone is not hidden: applying says so).
    async fn hidden_from(
        &self,
        staged: &[StagedCall],
        viewer: &ToolContext,
    ) -> Result<bool, ToolError> {
        let Some(rows) = self.rows_of(viewer).await? else {
            return Ok(false);
        };
        let changes: Vec<Change> = staged.iter().map(Change::of).collect();
        let Some((last, earlier)) = changes.split_last() else {
            return Ok(false);
        };
        if self.stage_seeing(Some(&rows), earlier, last).await.is_ok() {
            return Ok(false);
        }
        Ok(self.stage_seeing(None, earlier, last).await.is_ok())
    }

    async fn apply(
        &self,
        staged: &[StagedCall],
        chosen: Option<&[String]>,
    ) -> Result<steward_core::AppliedChanges, ToolError> {
        let staged: Vec<Staged> = staged
            .iter()
            .map(|s| Staged {
                change: Change::of(s),
                output: s.output.clone(),
            })
            .collect();
        let selected = match chosen {
            Some(chosen) => with_dependencies(&staged, chosen)?,
            None => vec![true; staged.len()],
        };
        let applied = self.apply_selected(&staged, &selected, &[]).await?;
        Ok(steward_core::AppliedChanges {
            calls: staged
                .iter()
                .zip(&selected)
                .filter(|(_, chosen)| **chosen)
                .map(|(s, _)| s.change.call_id.clone())
                .collect(),
            outputs: applied.outputs,
            already: applied.already.len(),
            created: applied
                .created
                .iter()
                .map(|c| format!("{} {} is #{}", c.kind, c.placeholder, c.id))
                .collect(),
        })
    }
}
