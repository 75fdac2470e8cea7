//! What can go wrong assembling Steward.

/// An error building the app, an agent or a tool.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AppError {
    /// The configuration is wrong; the message names the place.
    #[error("{0}")]
    Config(String),
    /// No tool has that name.
    #[error("there is no tool named `{name}`{}", suggest(suggestion))]
    UnknownTool {
        /// The name asked for.
        name: String,
        /// The closest existing name.
        suggestion: Option<String>,
    },
    /// No agent has that name.
    #[error("there is no agent named `{name}`; the agents are: {known}")]
    UnknownAgent {
        /// The name asked for.
        name: String,
        /// The agents there are.
        known: String,
    },
    /// A tool needs something the app does not have.
    #[error("the tool `{name}` needs {needs}")]
    ToolNeeds {
        /// The tool.
        name: String,
        /// What it needs.
        needs: &'static str,
    },
    /// A tool needs a database and there is none.
    #[error(
        "no database: run `steward demo` to create the demo database, or pass --db URL, or configure `databases` in steward.yaml"
    )]
    NoDatabase,
    /// A database could not be used.
    #[error(transparent)]
    Sql(#[from] steward_sql::SqlError),
    /// A model could not be set up.
    #[error(transparent)]
    Model(#[from] steward_llm::Error),
    /// A tool or agent could not be put together.
    #[error(transparent)]
    Core(#[from] steward_core::Error),
    /// A declarative tool is wrong.
    #[error("{0}")]
    Tool(String),
}

fn suggest(suggestion: &Option<String>) -> String {
    suggestion
        .as_ref()
        .map(|s| format!("; did you mean `{s}`?"))
        .unwrap_or_default()
}

/// The closest of `names` to `name`, when it is close enough to be a typo.
pub fn closest<'a>(name: &str, names: impl Iterator<Item = &'a str>) -> Option<String> {
    names
        .map(|n| (strsim::damerau_levenshtein(name, n), n))
        .filter(|(d, n)| *d <= 2.max(n.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n.to_owned())
}
