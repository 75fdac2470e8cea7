//! The checks an app passes once built: every agent's tools, sub-agents and model exist, and every role,
//! principal and trusted tool names things that exist, each error naming its place in the config.

use crate::App;
use crate::error::{AppError, closest};

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

impl App {
    /// The knowledge's problems the guard and the catalog find without asking the database: a description of
    /// a table or column it lacks, a fragment that names no table, a statement the guard refuses. Each
    /// at its `file:line:col`.
    fn knowledge_problems(&self) -> Vec<(steward_sql::KnowledgeCheck, String)> {
        let knowledge = &self.config.knowledge;
        if knowledge.is_empty() {
            return Vec::new();
        }
        let Some(kit) = &self.kit else {
            return Vec::new();
        };
        knowledge
            .checks(kit.guard(), kit.catalog())
            .into_iter()
            .map(|check| {
                let mut path = vec!["knowledge"];
                path.extend(check.path.iter().map(String::as_str));
                let place = self.config.locate(&path);
                (check, place)
            })
            .collect()
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
    /// (a table or column it lacks, a type error), at its `file:line:col`.
    pub async fn check_knowledge(&self) -> Vec<String> {
        let Some(kit) = &self.kit else {
            return Vec::new();
        };
        let mut problems = Vec::new();
        for (check, place) in self.knowledge_problems() {
            if check.problem.is_some() || check.sql.is_empty() {
                continue;
            }
            if let Err(e) = kit.database().prepares(&check.sql, false).await {
                problems.push(format!(
                    "{place}: the database refuses it: {}{}; compare the names with `steward schema`",
                    e.message(),
                    if check.path.last().is_some_and(|k| k == "sql") && check.path.first().is_some_and(|k| k == "examples") {
                        String::new()
                    } else {
                        format!(" (checked as: {})", check.sql)
                    }
                ));
            }
        }
        problems
    }
}
