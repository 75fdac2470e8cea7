//! Task tools: `get_inbox_tasks`, `get_projects`, `get_tasks`, `create_project`, `move_task`, `add_task`,
//! `complete_task`. There are no delete tools.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use steward_core::{RowChange, Tool, ToolData, ToolError, ToolOutput, TypedTool};
use steward_sql::{Param, QueryResult};

use crate::cells::{self, CellError, Kind, first, objects};
use crate::changes::{WriteCx, Written};
use crate::store::{Store, unavailable};

/// Structured task rows: ids as numbers on every engine.
const TASK_KINDS: &[(&str, Kind)] = &[("id", Kind::Int)];

fn task_lines(result: &QueryResult) -> Result<Vec<String>, CellError> {
    let mut lines = Vec::with_capacity(result.rows.len());
    for r in cells::rows(result) {
        let due = r
            .opt_day(3)?
            .map(|d| format!(" (due {d})"))
            .unwrap_or_default();
        let done = if r.text(2)? == "DONE" { " [done]" } else { "" };
        lines.push(format!("#{} {}{due}{done}", r.int(0)?, r.text(1)?));
    }
    Ok(lines)
}

/// Arguments of `get_inbox_tasks` (none).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetInboxTasks {}

/// `get_inbox_tasks`.
pub fn get_inbox_tasks(store: Store) -> impl Tool {
    TypedTool::with_state(
        "get_inbox_tasks",
        "Lists the open tasks in the inbox (tasks that belong to no project yet), with their ids.",
        store,
        |store, ctx, _args: GetInboxTasks| async move {
            let result = store
                .read(&ctx, "SELECT id, title, status, due_date FROM tasks WHERE project_id IS NULL AND status = 'OPEN' ORDER BY id", &[])
                .await?;
            if result.rows.is_empty() {
                return Ok(ToolOutput::text("The inbox is empty."));
            }
            let mut lines = vec![format!("{} tasks in the inbox:", result.rows.len())];
            lines.extend(task_lines(&result)?);
            Ok(ToolOutput::text(lines.join("\n")).with_data(ToolData::Json { value: objects(&result, TASK_KINDS)? }))
        },
    )
    .read_only()
}

/// Arguments of `get_projects` (none).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetProjects {}

/// `get_projects`.
pub fn get_projects(store: Store) -> impl Tool {
    TypedTool::with_state(
        "get_projects",
        "Lists the projects with their ids, descriptions and numbers of open tasks.",
        store,
        |store, ctx, _args: GetProjects| async move {
            let result = store
                .read(
                    &ctx,
                    "SELECT p.id, p.name, p.description, COUNT(t.id) AS open_tasks FROM projects p \
                     LEFT JOIN tasks t ON t.project_id = p.id AND t.status = 'OPEN' \
                     GROUP BY p.id, p.name, p.description ORDER BY p.id",
                    &[],
                )
                .await?;
            if result.rows.is_empty() {
                return Ok(ToolOutput::text("There are no projects yet."));
            }
            let mut lines = Vec::with_capacity(result.rows.len());
            for r in cells::rows(&result) {
                let description = r
                    .opt_text(2)?
                    .map(|d| format!(" — {d}"))
                    .unwrap_or_default();
                lines.push(format!(
                    "#{} {}{description} ({} open tasks)",
                    r.int(0)?,
                    r.text(1)?,
                    r.int(3)?
                ));
            }
            let kinds = [("id", Kind::Int), ("open_tasks", Kind::Int)];
            Ok(
                ToolOutput::text(lines.join("\n")).with_data(ToolData::Json {
                    value: objects(&result, &kinds)?,
                }),
            )
        },
    )
    .read_only()
}

/// Arguments of `get_tasks`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetTasks {
    /// The project's id (from get_projects).
    pub project_id: i64,
    /// Include tasks that are done (default false).
    pub include_done: Option<bool>,
}

/// `get_tasks`.
pub fn get_tasks(store: Store) -> impl Tool {
    TypedTool::with_state(
        "get_tasks",
        "Lists the tasks of one project, with their ids.",
        store,
        |store, ctx, args: GetTasks| async move {
            let project = store.read(&ctx, "SELECT name FROM projects WHERE id = ?", &[Param::Int(args.project_id)]).await?;
            let Some(name) = first(&project).map(|r| r.text(0)).transpose()? else {
                return Err(ToolError::new(format!("There is no project with id {}. Call get_projects to see the valid ids.", args.project_id)));
            };
            let done = if args.include_done.unwrap_or(false) { "" } else { " AND status = 'OPEN'" };
            let result = store
                .read(&ctx, &format!("SELECT id, title, status, due_date FROM tasks WHERE project_id = ?{done} ORDER BY id"), &[Param::Int(args.project_id)])
                .await?;
            let mut lines = vec![format!("Project #{} {name}: {} tasks", args.project_id, result.rows.len())];
            lines.extend(task_lines(&result)?);
            Ok(ToolOutput::text(lines.join("\n")).with_data(ToolData::Json { value: objects(&result, TASK_KINDS)? }))
        },
    )
    .read_only()
}

/// Arguments of `create_project`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateProject {
    /// The project's name, e.g. "Birthday" or "Personal website".
    #[schemars(length(min = 1, max = 120))]
    pub name: String,
    /// What the project is for.
    pub description: Option<String>,
}

/// `create_project`.
pub fn create_project(store: Store) -> impl Tool {
    let applier = std::sync::Arc::new(store.clone());
    TypedTool::with_state(
        "create_project",
        "Creates a project. A name that already exists is refused with that project's id, which you can use instead.",
        store,
        |store, ctx, args: CreateProject| async move { store.write(&ctx, "create_project", &args).await },
    )
    .idempotent()
    .previewed_by_dry_run()
    .staged_by(applier)
}

/// The write of `create_project`.
pub(crate) async fn create_project_in(
    store: &Store,
    cx: &mut WriteCx<'_>,
    args: CreateProject,
) -> Result<Written, ToolError> {
    let name = args.name.trim().to_owned();
    let existing = cx
        .tx
        .fetch(
            "SELECT id, name FROM projects WHERE LOWER(name) = LOWER(?)",
            &[Param::Text(name.clone())],
        )
        .await
        .map_err(unavailable)?;
    if let Some(r) = first(&existing) {
        if !cx.sees("projects", r.int(0)?).await? {
            return Err(ToolError::new(
                "A project with that name exists, one your role does not see; choose another name.",
            ));
        }
        let id = cx.ids.show("project", r.int(0)?);
        return Err(ToolError::new(format!(
            "A project named \"{}\" already exists (id {id}). Use project_id {id} instead of creating it again.",
            r.text(1)?
        )));
    }
    let now = Param::Timestamp(store.clock.now().0.naive_local());
    let id = cx
        .tx
        .insert(
            "INSERT INTO projects (name, description, created_at) VALUES (?, ?, ?)",
            &[
                Param::Text(name.clone()),
                args.description.clone().map_or(Param::Null, Param::Text),
                now,
            ],
        )
        .await
        .map_err(unavailable)?;
    cx.keeps_in_view("projects", id, &format!("the project {name}"))
        .await?;
    let shown = cx.ids.created("project", id);
    let mut fields = vec![("name", name.clone())];
    if let Some(d) = &args.description {
        fields.push(("description", d.clone()));
    }
    let output = ToolOutput::text(format!("Created project #{shown} {name}."))
        .with_data(ToolData::Json {
            value: json!({"id": shown, "name": name}),
        })
        .with_changes(vec![RowChange::insert(
            "projects",
            format!("#{shown}"),
            &fields,
        )]);
    Ok(Written {
        output,
        action: Some(format!("create project #{id} {name}")),
    })
}

/// Arguments of `move_task`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveTask {
    /// The task's id (from get_inbox_tasks or get_tasks).
    pub task_id: i64,
    /// The project's id (from get_projects or create_project).
    pub project_id: i64,
}

/// `move_task`.
pub fn move_task(store: Store) -> impl Tool {
    let applier = std::sync::Arc::new(store.clone());
    TypedTool::with_state(
        "move_task",
        "Moves a task into a project (out of the inbox or from another project).",
        store,
        |store, ctx, args: MoveTask| async move { store.write(&ctx, "move_task", &args).await },
    )
    .idempotent()
    .previewed_by_dry_run()
    .staged_by(applier)
}

/// The write of `move_task`.
pub(crate) async fn move_task_in(
    _store: &Store,
    cx: &mut WriteCx<'_>,
    args: MoveTask,
) -> Result<Written, ToolError> {
    let task_id = cx.ids.resolve("task", args.task_id)?;
    let project_id = cx.ids.resolve("project", args.project_id)?;
    // A task or project the principal may not see is one that does not exist for them.
    let task_seen = cx.sees("tasks", task_id).await?;
    let project_seen = cx.sees("projects", project_id).await?;
    // Locked until the move commits: a move by someone else lands before this read or after this write.
    let task = cx
        .tx
        .fetch_locked(
            "SELECT title, project_id FROM tasks WHERE id = ?",
            &[Param::Int(task_id)],
        )
        .await
        .map_err(unavailable)?;
    let was = match first(&task).map(|r| r.opt_int(1)).transpose()?.flatten() {
        Some(p) => {
            let name = cx
                .tx
                .fetch("SELECT name FROM projects WHERE id = ?", &[Param::Int(p)])
                .await
                .map_err(unavailable)?;
            let name = first(&name).map(|r| r.text(0)).transpose()?;
            format!(
                "#{} {}",
                cx.ids.show("project", p),
                name.unwrap_or_default()
            )
        }
        None => "inbox".to_owned(),
    };
    let Some(title) = first(&task)
        .filter(|_| task_seen)
        .map(|r| r.text(0))
        .transpose()?
    else {
        return Err(ToolError::new(format!(
            "There is no task with id {}. Call get_inbox_tasks (or get_tasks for a project) to see the valid ids.",
            args.task_id
        )));
    };
    let project = cx
        .tx
        .fetch(
            "SELECT name FROM projects WHERE id = ?",
            &[Param::Int(project_id)],
        )
        .await
        .map_err(unavailable)?;
    let Some(project) = first(&project)
        .filter(|_| project_seen)
        .map(|r| r.text(0))
        .transpose()?
    else {
        return Err(ToolError::new(format!(
            "There is no project with id {}. Call get_projects to see the valid ids, or create_project.",
            args.project_id
        )));
    };
    cx.tx
        .execute(
            "UPDATE tasks SET project_id = ? WHERE id = ?",
            &[Param::Int(project_id), Param::Int(task_id)],
        )
        .await
        .map_err(unavailable)?;
    cx.keeps_in_view("tasks", task_id, &format!("task #{}", args.task_id))
        .await?;
    let output = ToolOutput::text(format!(
        "Moved task #{} \"{title}\" to project #{} {project}.",
        args.task_id, args.project_id
    ))
    .with_data(ToolData::Json {
        value: json!({"task_id": args.task_id, "project_id": args.project_id}),
    })
    .with_changes(vec![RowChange::update(
        "tasks",
        format!("#{} \"{title}\"", args.task_id),
        &[("project", was, format!("#{} {project}", args.project_id))],
    )]);
    Ok(Written {
        output,
        action: Some(format!("move task #{task_id} to project #{project_id}")),
    })
}

/// Arguments of `add_task`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddTask {
    /// What is to be done.
    #[schemars(length(min = 1, max = 200))]
    pub title: String,
    /// The project's id; without one the task goes to the inbox.
    pub project_id: Option<i64>,
    /// When it is due (YYYY-MM-DD).
    pub due_date: Option<String>,
    /// More detail.
    pub notes: Option<String>,
}

/// `add_task`.
pub fn add_task(store: Store) -> impl Tool {
    let applier = std::sync::Arc::new(store.clone());
    TypedTool::with_state(
        "add_task",
        "Adds a task, to a project or (without project_id) to the inbox.",
        store,
        |store, ctx, args: AddTask| async move { store.write(&ctx, "add_task", &args).await },
    )
    .previewed_by_dry_run()
    .staged_by(applier)
}

/// The write of `add_task`.
pub(crate) async fn add_task_in(
    store: &Store,
    cx: &mut WriteCx<'_>,
    args: AddTask,
) -> Result<Written, ToolError> {
    // A date said in words ("tomorrow") is resolved once, here, and shown resolved: a change set staged today
    // and applied later would write another day, and its result would differ from the one approved.
    let due_day = match &args.due_date {
        Some(d) => Some(crate::common::parse_day(d, store.today()).map_err(ToolError::new)?),
        None => None,
    };
    let due = due_day.map_or(Param::NullDate, Param::Date);
    let project_id = match args.project_id {
        Some(p) => Some(cx.ids.resolve("project", p)?),
        None => None,
    };
    if let Some(project) = project_id {
        let seen = cx.sees("projects", project).await?;
        let found = cx
            .tx
            .fetch(
                "SELECT id FROM projects WHERE id = ?",
                &[Param::Int(project)],
            )
            .await
            .map_err(unavailable)?;
        if !seen || found.rows.is_empty() {
            return Err(ToolError::new(format!(
                "There is no project with id {}. Call get_projects to see the valid ids.",
                args.project_id.unwrap_or(project)
            )));
        }
    }
    let now = Param::Timestamp(store.clock.now().0.naive_local());
    let id = cx
        .tx
        .insert(
            "INSERT INTO tasks (title, notes, project_id, status, due_date, created_at) VALUES (?, ?, ?, 'OPEN', ?, ?)",
            &[Param::Text(args.title.trim().to_owned()), args.notes.clone().map_or(Param::Null, Param::Text), project_id.map_or(Param::NullInt, Param::Int), due, now],
        )
        .await
        .map_err(unavailable)?;
    cx.keeps_in_view("tasks", id, &format!("the task \"{}\"", args.title.trim()))
        .await?;
    let shown = cx.ids.created("task", id);
    let place = args
        .project_id
        .map_or("the inbox".to_owned(), |p| format!("project #{p}"));
    let due_text = due_day.map(|d| d.to_string());
    let output = ToolOutput::text(format!(
        "Added task #{shown} \"{}\" to {place}{}.",
        args.title.trim(),
        due_text
            .as_ref()
            .map(|d| format!(", due {d}"))
            .unwrap_or_default()
    ))
    .with_data(ToolData::Json {
        value: json!({"id": shown, "title": args.title.trim(), "project_id": args.project_id, "due_date": due_text}),
    })
    .with_changes(vec![RowChange::insert("tasks", format!("#{shown}"), &{
        let mut fields = vec![
            ("title", args.title.trim().to_owned()),
            (
                "project",
                args.project_id
                    .map_or("inbox".to_owned(), |p| format!("#{p}")),
            ),
            ("status", "OPEN".to_owned()),
        ];
        if let Some(d) = &due_text {
            fields.push(("due_date", d.clone()));
        }
        fields
    })]);
    Ok(Written {
        output,
        action: Some(format!("add task #{id}")),
    })
}

/// Arguments of `complete_task`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompleteTask {
    /// The task's id.
    pub task_id: i64,
}

/// `complete_task`.
pub fn complete_task(store: Store) -> impl Tool {
    let applier = std::sync::Arc::new(store.clone());
    TypedTool::with_state(
        "complete_task",
        "Marks a task as done.",
        store,
        |store, ctx, args: CompleteTask| async move { store.write(&ctx, "complete_task", &args).await },
    )
    .idempotent()
    .previewed_by_dry_run()
    .staged_by(applier)
}

/// The write of `complete_task`.
pub(crate) async fn complete_task_in(
    store: &Store,
    cx: &mut WriteCx<'_>,
    args: CompleteTask,
) -> Result<Written, ToolError> {
    let task_id = cx.ids.resolve("task", args.task_id)?;
    let seen = cx.sees("tasks", task_id).await?;
    let task = cx
        .tx
        .fetch_locked(
            "SELECT title, status FROM tasks WHERE id = ?",
            &[Param::Int(task_id)],
        )
        .await
        .map_err(unavailable)?;
    let Some(row) = first(&task).filter(|_| seen) else {
        return Err(ToolError::new(format!(
            "There is no task with id {}. Call get_inbox_tasks or get_tasks to see the valid ids.",
            args.task_id
        )));
    };
    let title = row.text(0)?;
    if row.text(1)? == "DONE" {
        return Ok(Written {
            output: ToolOutput::text(format!(
                "Task #{} \"{title}\" was already done.",
                args.task_id
            )),
            action: None,
        });
    }
    let now = Param::Timestamp(store.clock.now().0.naive_local());
    cx.tx
        .execute(
            "UPDATE tasks SET status = 'DONE', completed_at = ? WHERE id = ?",
            &[now, Param::Int(task_id)],
        )
        .await
        .map_err(unavailable)?;
    cx.keeps_in_view("tasks", task_id, &format!("task #{}", args.task_id))
        .await?;
    let output = ToolOutput::text(format!("Task #{} \"{title}\" is done.", args.task_id))
        .with_data(ToolData::Json {
            value: json!({"task_id": args.task_id}),
        })
        .with_changes(vec![RowChange::update(
            "tasks",
            format!("#{} \"{title}\"", args.task_id),
            &[("status", "OPEN".to_owned(), "DONE".to_owned())],
        )]);
    Ok(Written {
        output,
        action: Some(format!("complete task #{task_id}")),
    })
}
