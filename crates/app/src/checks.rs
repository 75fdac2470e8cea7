//! The checks an app passes once built: every agent's tools, sub-agents and model exist, and every role,
//! principal and trusted tool names things that exist, each error naming its place in the config.

use steward_sql::{Knowledge, SqlToolkit};

use crate::App;
use crate::error::{AppError, closest};
use crate::store::RunStore;

impl App {
    /// Checks that every agent's tools, sub-agents and model exist.
    pub(crate) fn check(&self) -> Result<(), AppError> {
        self.check_knowledge_text()?;
        for (name, def) in &self.agents {
            let from_config = self.config.agents.contains_key(name);
            // A role governs agents by its `agents` list and tools by its `tools`: one name cannot be both.
            if self.registry.contains(name) {
                return Err(AppError::Config(format!(
                    "{}: the agent `{name}` has the name of a tool; give the agent another name",
                    self.config.locate(&["agents", name])
                )));
            }
            let place = |key: &str| self.config.locate(&["agents", name, key]);
            if let Err(e) = crate::agents::instructions(&def.instructions) {
                return Err(AppError::Config(format!(
                    "{}: the instructions of the agent `{name}`: {e}",
                    place("instructions")
                )));
            }
            for tool in &def.tools {
                if !self.registry.contains(tool) {
                    let hint = closest(tool, self.registry.names())
                        .map(|s| format!("; did you mean `{s}`?"))
                        .unwrap_or_else(|| {
                            format!(
                                "; the tools are: {}",
                                self.registry.names().collect::<Vec<_>>().join(", ")
                            )
                        });
                    return Err(AppError::Config(format!(
                        "{}: the agent `{name}` uses the tool `{tool}`, which does not exist{hint}",
                        if from_config {
                            place("tools")
                        } else {
                            "built-in agents".to_owned()
                        }
                    )));
                }
            }
            for sub in &def.sub_agents {
                if !self.agents.contains_key(sub) || sub == name {
                    return Err(AppError::Config(format!(
                        "{}: the agent `{name}` hands requests to `{sub}`, which {}; the agents are: {}",
                        place("agents"),
                        if sub == name {
                            "is itself"
                        } else {
                            "does not exist"
                        },
                        self.agent_names().collect::<Vec<_>>().join(", ")
                    )));
                }
            }
            if let Some(model) = &def.model
                && !self.config.models.contains_key(model)
            {
                return Err(AppError::Config(format!(
                    "{}: the agent `{name}` uses the model `{model}`, which `models` does not define",
                    place("model")
                )));
            }
        }
        self.check_roles()?;
        if let Some(agent) = &self.config.defaults.agent
            && !self.agents.contains_key(agent)
        {
            return Err(AppError::Config(format!(
                "{}: there is no agent named `{agent}`",
                self.config.locate(&["defaults", "agent"])
            )));
        }
        Ok(())
    }

    /// Checks that every role, principal and trusted tool names things that exist.
    fn check_roles(&self) -> Result<(), AppError> {
        let unknown = |place: String, what: &str, name: &str, known: Vec<&str>| {
            let hint = closest(name, known.iter().copied())
                .map(|s| format!("did you mean `{s}`?"))
                .unwrap_or_else(|| format!("the {what}s are: {}", known.join(", ")));
            AppError::Config(format!(
                "{place}: there is no {what} named `{name}`; {hint}"
            ))
        };
        let tools: Vec<&str> = self.registry.names().collect();
        let agents: Vec<&str> = self.agent_names().collect();
        for (role, def) in &self.config.roles {
            let place = |key: &str| self.config.locate(&["roles", role, key]);
            for agent in def.agents.iter().flatten() {
                if !self.agents.contains_key(agent) {
                    return Err(unknown(place("agents"), "agent", agent, agents.clone()));
                }
            }
            let roles: Vec<&str> = self.config.roles.keys().map(String::as_str).collect();
            for approver in def.approve_by.iter().flatten() {
                if !self.config.roles.contains_key(approver) {
                    return Err(unknown(
                        place("approve_by"),
                        "role",
                        approver,
                        roles.clone(),
                    ));
                }
            }
            let lists = [
                ("tools", def.tools.clone().unwrap_or_default()),
                ("approve", def.approve.clone()),
                ("skip_approval", def.skip_approval.clone()),
                ("trusted", def.trusted.clone()),
            ];
            for (key, list) in lists {
                for tool in &list {
                    if !self.registry.contains(tool) {
                        return Err(unknown(place(key), "tool", tool, tools.clone()));
                    }
                }
            }
            crate::roles::check_sql(&def.sql).map_err(|e| {
                AppError::Config(format!(
                    "{}: {e}",
                    self.config.locate(&["roles", role, "sql", "rows"])
                ))
            })?;
            for (table, columns) in &def.sql.read {
                if let crate::roles::Columns::All(star) = columns
                    && star != "*"
                {
                    return Err(AppError::Config(format!(
                        "{}: `{table}: {star}`: write \"*\" for every column, or a list of columns",
                        self.config.locate(&["roles", role, "sql", "read", table])
                    )));
                }
            }
        }
        for tool in &self.config.trusted {
            if !self.registry.contains(tool) {
                return Err(unknown(
                    self.config.locate(&["trusted"]),
                    "tool",
                    tool,
                    tools.clone(),
                ));
            }
        }
        let roles: Vec<&str> = self.config.roles.keys().map(String::as_str).collect();
        for (name, def) in &self.config.principals {
            if !self.config.roles.contains_key(&def.role) {
                return Err(unknown(
                    self.config.locate(&["principals", name, "role"]),
                    "role",
                    &def.role,
                    roles.clone(),
                ));
            }
        }
        if let Some(role) = &self.config.defaults.role
            && !self.config.roles.contains_key(role)
        {
            return Err(unknown(
                self.config.locate(&["defaults", "role"]),
                "role",
                role,
                roles.clone(),
            ));
        }
        if let Some(principal) = &self.config.defaults.principal
            && !self.config.principals.contains_key(principal)
        {
            return Err(unknown(
                self.config.locate(&["defaults", "principal"]),
                "principal",
                principal,
                self.config.principals.keys().map(String::as_str).collect(),
            ));
        }
        Ok(())
    }
}

/// A knowledge document saved in the run store, read for one business database.
#[derive(Clone, Debug)]
pub struct StoredDocument {
    /// The database's identity.
    pub database: String,
    /// The YAML text.
    pub text: String,
    /// What it says.
    pub knowledge: Knowledge,
}

/// The knowledge `store` holds for the database at `url`, read (`None`: none saved). A document that does not
/// read is an error that says how to replace or remove it.
pub(crate) async fn stored_knowledge(
    store: &RunStore,
    url: &str,
) -> Result<Option<StoredDocument>, AppError> {
    let database = crate::declared::database_identity(url);
    let Some(saved) = store
        .knowledge(&database)
        .await
        .map_err(|e| AppError::Config(format!("the run store's knowledge cannot be read: {e}")))?
    else {
        return Ok(None);
    };
    let knowledge = parse_knowledge(&saved.document).map_err(|e| {
        AppError::Config(format!(
            "the knowledge saved in the run store for {database} (by {}, {}): {e}; replace it with `steward \
             knowledge import FILE` or remove it with `steward knowledge clear`",
            saved.updated_by,
            saved.updated_at.format("%Y-%m-%d %H:%M")
        ))
    })?;
    Ok(Some(StoredDocument {
        database,
        text: saved.document,
        knowledge,
    }))
}

/// A knowledge document: the `knowledge:` section's shape, or a file with a top-level `knowledge:` key. The
/// error gives the line and column.
pub fn parse_knowledge(text: &str) -> Result<Knowledge, serde_yaml::Error> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Wrapped {
        knowledge: Knowledge,
    }
    let value: serde_yaml::Value = serde_yaml::from_str(text)?;
    if value.is_null() {
        return Ok(Knowledge::default());
    }
    let wrapped = value
        .as_mapping()
        .is_some_and(|m| m.len() == 1 && m.contains_key("knowledge"));
    if wrapped {
        serde_yaml::from_str::<Wrapped>(text).map(|w| w.knowledge)
    } else {
        serde_yaml::from_str::<Knowledge>(text)
    }
}

impl App {
    /// The knowledge's problems the guard and the catalog find without asking the database, for the config's
    /// knowledge and the store's: a description of a table or column the database lacks, a fragment that names
    /// no table, a statement the guard refuses. Each with its place: `file:line:col` in the config, or the
    /// store's document.
    fn knowledge_problems(&self) -> Vec<(steward_sql::KnowledgeCheck, String)> {
        let mut out = Vec::new();
        if let Some(kit) = &self.kit {
            for check in self.config.knowledge.checks(kit.guard(), kit.catalog()) {
                let mut path = vec!["knowledge"];
                path.extend(check.path.iter().map(String::as_str));
                let place = self.config.locate(&path);
                out.push((check, place));
            }
            if let Some(stored) = &self.stored_knowledge {
                out.extend(document_problems(
                    &stored.knowledge,
                    &stored.text,
                    &format!("the run store's knowledge for {}", stored.database),
                    kit,
                ));
            }
        }
        out
    }

    /// At load: the knowledge must name what the database has and pass the guard.
    fn check_knowledge_text(&self) -> Result<(), AppError> {
        if !self.config.knowledge.is_empty() && self.kit.is_none() {
            return Err(AppError::Config(format!(
                "{}: `knowledge` describes a business database, and there is none; name one with --db or \
                 `defaults.database`",
                self.config.locate(&["knowledge"])
            )));
        }
        let problems: Vec<String> = self
            .knowledge_problems()
            .into_iter()
            .filter_map(|(check, place)| check.problem.map(|p| format!("{place}: {p}")))
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(AppError::Config(problems.join("\n")))
        }
    }

    /// `config check`: the database prepares (never runs) each statement of the knowledge; what it refuses
    /// (a table or column it lacks, a type error), at its place.
    pub async fn check_knowledge(&self) -> Vec<String> {
        prepare_problems(self.kit.as_deref(), self.knowledge_problems()).await
    }

    /// Checks a knowledge document (`steward knowledge import`) against the business database as the config's
    /// is checked — guard, names, and the database preparing each statement — and returns it, or every
    /// problem at `name:line:col`.
    pub async fn check_knowledge_document(
        &self,
        text: &str,
        name: &str,
    ) -> Result<Knowledge, Vec<String>> {
        let Some(kit) = &self.kit else {
            return Err(vec![
                "there is no business database to check the knowledge against; name one with --db"
                    .to_owned(),
            ]);
        };
        let knowledge =
            parse_knowledge(text).map_err(|e| vec![crate::config::located_yaml_error(name, &e)])?;
        let found = document_problems(&knowledge, text, name, kit);
        let mut problems: Vec<String> = found
            .iter()
            .filter_map(|(check, place)| check.problem.as_ref().map(|p| format!("{place}: {p}")))
            .collect();
        problems.extend(prepare_problems(Some(kit), found).await);
        if problems.is_empty() {
            Ok(knowledge)
        } else {
            Err(problems)
        }
    }

    /// Saves `text` (checked first, see [`App::check_knowledge_document`]) as the store's knowledge for the
    /// business database; every server using the store reads it when it starts. Returns what was saved.
    pub async fn save_knowledge(
        &self,
        text: &str,
        name: &str,
        by: &str,
    ) -> Result<Knowledge, Vec<String>> {
        let knowledge = self.check_knowledge_document(text, name).await?;
        let (Some(store), Some(business)) = (&self.store, self.business()) else {
            return Err(vec![
                "there is no run store to save the knowledge in".to_owned(),
            ]);
        };
        store
            .set_knowledge(&crate::declared::database_identity(&business.url), text, by)
            .await
            .map_err(|e| vec![format!("the run store did not save it: {e}")])?;
        Ok(knowledge)
    }

    /// The knowledge the store holds for the business database, as it was imported.
    pub fn stored_knowledge(&self) -> Option<&StoredDocument> {
        self.stored_knowledge.as_ref()
    }

    /// The knowledge the agents use: the config's with the store's merged in.
    pub fn knowledge(&self) -> Option<&Knowledge> {
        self.kit.as_ref().map(|kit| kit.knowledge())
    }
}

/// The checks of a knowledge document, each placed at `name:line:col` in `text`.
fn document_problems(
    knowledge: &Knowledge,
    text: &str,
    name: &str,
    kit: &SqlToolkit,
) -> Vec<(steward_sql::KnowledgeCheck, String)> {
    let wrapped = text
        .lines()
        .any(|l| l.trim_end() == "knowledge:" || l.starts_with("knowledge:"));
    knowledge
        .checks(kit.guard(), kit.catalog())
        .into_iter()
        .map(|check| {
            let mut path: Vec<&str> = if wrapped {
                vec!["knowledge"]
            } else {
                Vec::new()
            };
            path.extend(check.path.iter().map(String::as_str));
            let (line, column) = crate::config::locate(text, &path).unwrap_or((1, 1));
            (check, format!("{name}:{line}:{column}"))
        })
        .collect()
}

/// The database's refusals of the statements that passed the guard, each at its place.
async fn prepare_problems(
    kit: Option<&SqlToolkit>,
    checks: Vec<(steward_sql::KnowledgeCheck, String)>,
) -> Vec<String> {
    let Some(kit) = kit else {
        return Vec::new();
    };
    let mut problems = Vec::new();
    for (check, place) in checks {
        if check.problem.is_some() || check.sql.is_empty() {
            continue;
        }
        if let Err(e) = kit.database().prepares(&check.sql, false).await {
            let example = check.path.first().is_some_and(|k| k == "examples");
            problems.push(format!(
                "{place}: the database refuses it: {}{}; compare the names with `steward schema`",
                e.message(),
                if example {
                    String::new()
                } else {
                    format!(" (checked as: {})", check.sql)
                }
            ));
        }
    }
    problems
}
