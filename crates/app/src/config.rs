//! `steward.yaml`: named models and databases, agents and tools as data. Read from `--config`,
//! `STEWARD_CONFIG` or `./steward.yaml`; without one, the built-in demo configuration (no keys at all).
//! Errors point at `file:line:column` and say what was expected.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::agents::{AgentDef, ModeDef};
use crate::error::AppError;
use crate::roles::{PrincipalDef, RoleDef};

/// A model the config names.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ModelEntry {
    /// Just the provider spec: `openai:gpt-4o-mini`.
    Spec(String),
    /// The spec with settings.
    Full(ModelDef),
}

/// Read by hand rather than as an untagged enum, whose one error ("data did not match any variant") names
/// neither what an entry may be nor the key that is wrong: a string is a spec, a mapping is read as a
/// [`ModelDef`] (so an unknown or mistyped key is named, at its line), anything else says what is expected.
impl<'de> Deserialize<'de> for ModelEntry {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entry;
        impl<'de> serde::de::Visitor<'de> for Entry {
            type Value = ModelEntry;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "a model: a spec string (`openai:gpt-4o-mini`) or a mapping with `spec` and optionally \
                     `mode`, `temperature`, `max_tokens`, `timeout`",
                )
            }

            fn visit_str<E: serde::de::Error>(self, spec: &str) -> Result<ModelEntry, E> {
                Ok(ModelEntry::Spec(spec.to_owned()))
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<ModelEntry, A::Error> {
                ModelDef::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(ModelEntry::Full)
            }
        }
        deserializer.deserialize_any(Entry)
    }
}

/// A model with its settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelDef {
    /// The provider spec, as `--model` takes it (`openai:gpt-4o-mini`, `ollama:llama3.1`, …).
    pub spec: String,
    /// How the model is driven.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ModeDef>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Most tokens in one reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Seconds to wait for one reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
}

impl ModelEntry {
    /// The entry with its settings.
    pub fn def(&self) -> ModelDef {
        match self {
            Self::Spec(spec) => ModelDef {
                spec: spec.clone(),
                ..ModelDef::default()
            },
            Self::Full(def) => def.clone(),
        }
    }
}

/// What commands use when they are not told.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    /// The agent of `ask` and `chat`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The model, by name from `models`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The database of the built-in tools, by name from `databases`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
    /// The role of commands run without `--role` or `--principal`, by name from `roles`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The principal of commands run without `--principal` or `--role`, by name from `principals`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
}

/// The whole configuration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Named models.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub models: BTreeMap<String, ModelEntry>,
    /// Named database URLs (`${VAR}` is taken from the environment).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub databases: BTreeMap<String, String>,
    /// What the team teaches about the business database: table and column descriptions, a glossary, metrics
    /// and verified examples (see `steward_sql::Knowledge`).
    #[serde(default, skip_serializing_if = "steward_sql::Knowledge::is_empty")]
    pub knowledge: steward_sql::Knowledge,
    /// Tools defined in the config (`kind: sql` or `kind: http`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, serde_yaml::Value>,
    /// Agents defined in the config (they replace built-in agents of the same name).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub agents: BTreeMap<String, AgentDef>,
    /// Where runs are stored (`sqlite://…` or `postgres://…`; `${VAR}` allowed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
    /// Roles: which agents, tools, SQL and rows each may use, and what needs approval.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub roles: BTreeMap<String, RoleDef>,
    /// Local identities for the CLI (`--principal NAME`): a role and attributes for row filters.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub principals: BTreeMap<String, PrincipalDef>,
    /// Tools whose results are trusted by every role: reading them does not make later writes of the run wait
    /// for approval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trusted: Vec<String>,
    /// Defaults for commands.
    #[serde(default)]
    pub defaults: Defaults,
    /// `steward serve`: tokens, OIDC, CORS and limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<crate::server_def::ServerDef>,
    /// Where the config came from.
    #[serde(skip)]
    pub source: Option<Source>,
}

/// The file a config was read from, and its text (to locate errors).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Source {
    /// The file.
    pub path: PathBuf,
    /// Its text.
    pub text: String,
}

impl Source {
    /// `file:line:column` of the value at `path` (keys from the top), as near as can be found.
    pub fn locate(&self, path: &[&str]) -> String {
        let (line, column) = locate(&self.text, path).unwrap_or((1, 1));
        format!("{}:{line}:{column}", self.path.display())
    }
}

impl Config {
    /// The role of `principal` with its definition (`None`: no role, or one the config does not define).
    pub fn role_of(&self, principal: &steward_core::Principal) -> Option<(&str, &RoleDef)> {
        let name = principal.role.as_deref()?;
        self.roles
            .get_key_value(name)
            .map(|(n, def)| (n.as_str(), def))
    }

    /// Four eyes: whether `decider` may let the writes `asker` asked for happen (apply their change set, approve
    /// their call), by the asker's role's `approve_by` roles and `self_approval`; the error says who may.
    /// Refusing (discarding, denying) writes nothing and is always allowed.
    pub fn four_eyes(
        &self,
        asker: &steward_core::Principal,
        decider: &steward_core::Principal,
    ) -> Result<(), String> {
        let Some((role_name, role)) = self.role_of(asker) else {
            return Ok(());
        };
        let someone_else = match &role.approve_by {
            Some(roles) => format!(" (a principal with the role {})", roles.join(" or ")),
            None => String::new(),
        };
        // Without names, no one can be shown to be someone else than the one who asked.
        if !role.self_approval && (asker.name.is_empty() || decider.name.is_empty()) {
            return Err(format!(
                "the role `{role_name}` does not let the one who asked apply their own changes, and {} no \
                 name, so no one can be told apart from them: someone else must, as a named principal \
                 (`--principal NAME`, or a token){someone_else}",
                if asker.name.is_empty() {
                    "the asker has"
                } else {
                    "the decider has"
                }
            ));
        }
        if !role.self_approval && decider.name == asker.name {
            return Err(format!(
                "the role `{role_name}` does not let {} apply their own changes: someone else must{someone_else}",
                asker.name,
            ));
        }
        if let Some(roles) = &role.approve_by {
            let theirs = self.role_of(decider).map(|(name, _)| name);
            if !theirs.is_some_and(|name| roles.iter().any(|r| r == name)) {
                return Err(format!(
                    "changes asked by the role `{role_name}` are applied by a principal with the role {}{}",
                    roles.join(" or "),
                    match theirs {
                        Some(name) => format!("; {by} has the role `{name}`", by = decider.name),
                        None => String::new(),
                    }
                ));
            }
        }
        Ok(())
    }

    /// Whether `reviewer` sees and decides what `asker` asked for: it is theirs, or their role is one the
    /// asker's role names in `approve_by`.
    pub fn reviews(
        &self,
        asker: &steward_core::Principal,
        reviewer: &steward_core::Principal,
    ) -> bool {
        if asker.name == reviewer.name {
            return true;
        }
        let approvers = self
            .role_of(asker)
            .and_then(|(_, role)| role.approve_by.as_ref());
        let theirs = self.role_of(reviewer).map(|(name, _)| name);
        matches!((approvers, theirs), (Some(roles), Some(name)) if roles.iter().any(|r| r == name))
    }

    /// The config named by `explicit`, else `STEWARD_CONFIG`, else `./steward.yaml` when it exists, else the
    /// built-in one.
    pub fn discover(explicit: Option<&Path>) -> Result<Self, AppError> {
        let from_env = std::env::var_os("STEWARD_CONFIG")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        match explicit.map(Path::to_path_buf).or(from_env) {
            Some(path) => Self::load(&path),
            None => {
                let local = PathBuf::from("steward.yaml");
                if local.is_file() {
                    Self::load(&local)
                } else {
                    Ok(Self::default())
                }
            }
        }
    }

    /// Reads and checks the syntax of a config file, and fills `${VAR}`s from the environment.
    pub fn load(path: &Path) -> Result<Self, AppError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            AppError::Config(format!("cannot read the config {}: {e}", path.display()))
        })?;
        Self::parse(&text, path)
    }

    /// A config from text (`path` names it in errors).
    pub fn parse(text: &str, path: &Path) -> Result<Self, AppError> {
        let source = Source {
            path: path.to_path_buf(),
            text: text.to_owned(),
        };
        let mut config: Self = if text.trim().is_empty() {
            Self::default()
        } else {
            serde_yaml::from_str(text).map_err(|e| {
                AppError::Config(located_yaml_error(&path.display().to_string(), &e))
            })?
        };
        for (name, url) in &mut config.databases {
            *url = expand(url, &source, &["databases", name])?;
        }
        if let Some(store) = &mut config.store {
            *store = expand(store, &source, &["store"])?;
        }
        for (name, model) in &mut config.models {
            match model {
                ModelEntry::Spec(spec) => *spec = expand(spec, &source, &["models", name])?,
                ModelEntry::Full(def) => {
                    def.spec = expand(&def.spec, &source, &["models", name, "spec"])?;
                }
            }
        }
        config.source = Some(source);
        Ok(config)
    }

    /// `file:line:column` of a key, or `steward.yaml` for the built-in config.
    pub fn locate(&self, path: &[&str]) -> String {
        self.source
            .as_ref()
            .map_or_else(|| "the built-in config".to_owned(), |s| s.locate(path))
    }

    /// The config as YAML with secrets masked (passwords and keys in URLs).
    pub fn to_masked_yaml(&self) -> Result<String, AppError> {
        let mut shown = self.clone();
        for url in shown.databases.values_mut() {
            *url = steward_core::redact_url(url);
        }
        if let Some(store) = &mut shown.store {
            *store = steward_core::redact_url(store);
        }
        for model in shown.models.values_mut() {
            match model {
                ModelEntry::Spec(spec) => *spec = steward_core::redact_url(spec),
                ModelEntry::Full(def) => def.spec = steward_core::redact_url(&def.spec),
            }
        }
        serde_yaml::to_string(&shown).map_err(|e| AppError::Config(e.to_string()))
    }
}

/// A YAML reader's error in `name` as `name:line:col: message`.
pub(crate) fn located_yaml_error(name: &str, e: &serde_yaml::Error) -> String {
    let place = match e.location() {
        Some(l) => format!("{name}:{}:{}", l.line(), l.column()),
        None => name.to_owned(),
    };
    format!("{place}: {}", strip_location(&e.to_string()))
}

/// serde_yaml ends messages with "at line L column C"; the place is put first instead.
fn strip_location(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

/// Replaces `${VAR}` with the environment variable's value; a missing variable is an error naming it and the
/// place. `$${` is a literal `${`.
fn expand(value: &str, source: &Source, path: &[&str]) -> Result<String, AppError> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix("${") {
            out.push_str("${");
            rest = tail;
        } else if let Some(tail) = after.strip_prefix('{') {
            let Some(end) = tail.find('}') else {
                return Err(AppError::Config(format!(
                    "{}: `${{` without a closing `}}` in {value:?}",
                    source.locate(path)
                )));
            };
            let name = &tail[..end];
            match std::env::var(name) {
                Ok(v) => out.push_str(&v),
                Err(_) => {
                    return Err(AppError::Config(format!(
                        "{}: the environment variable {name} is not set (used as ${{{name}}})",
                        locate_text(&source.text, &format!("${{{name}}}")).map_or_else(
                            || source.locate(path),
                            |(l, c)| format!("{}:{l}:{c}", source.path.display())
                        )
                    )));
                }
            }
            rest = &tail[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// Line and column (1-based) of the first occurrence of `needle`.
fn locate_text(text: &str, needle: &str) -> Option<(usize, usize)> {
    let at = text.find(needle)?;
    let line = text[..at].matches('\n').count() + 1;
    let column = at - text[..at].rfind('\n').map_or(0, |n| n + 1) + 1;
    Some((line, column))
}

/// Line and column of the key at `path` in a block-style YAML text: each key is looked for below the
/// previous one, at a deeper indentation; a number is an item of the list below the previous key (`0` the
/// first), and the keys after it are looked for in that item only.
pub(crate) fn locate(text: &str, path: &[&str]) -> Option<(usize, usize)> {
    let mut found = None;
    let mut start = 0usize;
    let mut min_indent = 0usize;
    // Inside a list item: the indentation of its `- ` (a line there starting another item ends it).
    let mut item: Option<usize> = None;
    // A flow mapping that ends the line of the key found last: (its line, where its `{` is).
    let mut flow: Option<(usize, usize)> = None;
    let lines: Vec<&str> = text.lines().collect();
    for key in path {
        let mut hit = None;
        if let Ok(wanted) = key.parse::<usize>() {
            flow = None;
            let mut seen = 0usize;
            let mut items_at = None;
            for (n, line) in lines.iter().enumerate().skip(start) {
                let trimmed = line.trim_start();
                let indent = line.len() - trimmed.len();
                if trimmed.is_empty() || trimmed.starts_with('#') {
                    continue;
                }
                // The list's items may sit at the key's own indentation.
                if indent + 2 < min_indent
                    || (indent + 1 == min_indent && !trimmed.starts_with("- "))
                {
                    break;
                }
                if trimmed.starts_with("- ") && items_at.is_none_or(|at| at == indent) {
                    items_at = Some(indent);
                    if seen == wanted {
                        hit = Some((n, indent + 2));
                        break;
                    }
                    seen += 1;
                }
            }
            let (n, col) = hit?;
            found = Some((n + 1, col + 1));
            start = n;
            min_indent = col;
            item = Some(col - 2);
            continue;
        }
        // The key before ended its line with a flow mapping (`columns: {a: x, b: y}`): look in it first.
        if let Some((n, after)) = flow.take()
            && let Some(at) = [format!("{{{key}:"), format!(" {key}:"), format!(",{key}:")]
                .iter()
                .filter_map(|k| lines[n][after..].find(k.as_str()).map(|i| after + i + 1))
                .min()
        {
            found = Some((n + 1, at + 1));
            continue;
        }
        for (n, line) in lines.iter().enumerate().skip(start) {
            let trimmed = line.trim_start();
            let indent = line.len() - trimmed.len();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let key_text = trimmed.trim_start_matches("- ");
            let key_col = indent + (trimmed.len() - key_text.len());
            if found.is_some() && key_col < min_indent {
                break;
            }
            if item == Some(indent) && trimmed.starts_with("- ") && n != start {
                break;
            }
            if key_text.starts_with(&format!("{key}:"))
                || key_text.starts_with(&format!("\"{key}\":"))
                || key_text.starts_with(&format!("'{key}':"))
            {
                hit = Some((n, key_col));
                break;
            }
            // A flow mapping on one line: `- {question: …, sql: …}`.
            if key_text.starts_with('{')
                && let Some(at) = [format!("{{{key}:"), format!(" {key}:"), format!(",{key}:")]
                    .iter()
                    .filter_map(|k| key_text.find(k.as_str()).map(|i| i + 1))
                    .min()
            {
                hit = Some((n, key_col + at));
                break;
            }
        }
        let (n, col) = hit?;
        found = Some((n + 1, col + 1));
        start = n + 1;
        min_indent = col + 1;
        item = None;
        flow = lines[n][col..].find('{').map(|brace| (n, col + brace));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_located_below_their_parents() {
        let text =
            "tools:\n  a:\n    kind: sql\n  b:\n    kind: http\nagents:\n  b:\n    tools: [x]\n";
        assert_eq!(locate(text, &["tools", "b", "kind"]), Some((5, 5)));
        assert_eq!(locate(text, &["agents", "b", "tools"]), Some((8, 5)));
        assert_eq!(locate(text, &["agents", "c"]), None);
    }

    #[test]
    fn list_items_are_located_by_number() {
        let text = "knowledge:\n  glossary:\n  - term: a\n    meaning: x\n  - term: b\n    sql: s\n  examples:\n    - question: q\n      sql: one\n    - question: r\n      sql: two\n";
        assert_eq!(
            locate(text, &["knowledge", "glossary", "1", "sql"]),
            Some((6, 5))
        );
        assert_eq!(locate(text, &["knowledge", "glossary", "0", "sql"]), None);
        assert_eq!(locate(text, &["knowledge", "glossary", "0"]), Some((3, 5)));
        assert_eq!(
            locate(text, &["knowledge", "examples", "1", "sql"]),
            Some((11, 7))
        );
        assert_eq!(
            locate(text, &["knowledge", "examples", "0", "question"]),
            Some((8, 7))
        );
        assert_eq!(locate(text, &["knowledge", "examples", "2"]), None);
        let flow = "examples:\n  - {question: q, sql: one}\n  - {sql: two}\n";
        assert_eq!(locate(flow, &["examples", "0", "sql"]), Some((2, 19)));
        assert_eq!(locate(flow, &["examples", "1", "sql"]), Some((3, 6)));
        let nested = "tables:\n  orders:\n    columns: {total: x, totl: y}\n";
        assert_eq!(
            locate(nested, &["tables", "orders", "columns", "totl"]),
            Some((3, 25))
        );
        assert_eq!(
            locate(nested, &["tables", "orders", "columns", "total"]),
            Some((3, 15))
        );
    }
}
