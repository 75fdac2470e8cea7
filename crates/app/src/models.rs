//! Which models a run uses: chosen once, here, for every surface (`ask`, `chat`, `runs resume`, the server, MCP,
//! `eval`) from the command's choice ([`ModelChoice`]: `--model`, `--mode`, `--record`), the agent's and the
//! config's `models`, and the environment.
//!
//! The one that `--model` (or `STEWARD_MODEL`) names drives every agent; without it, each agent that names a model
//! in the config gets that one, and the others the agent's own, the config's default, or the one the environment
//! configures. Connected models are kept per agent and chosen model, so a server connects each once.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use steward_core::Model;
use steward_llm::{Env, HttpOptions, Mode, ModelSetup};

use crate::agents::ModeDef;
use crate::{App, AppError};

/// What a command chose about models, as plain values (the CLI's flags, the server's options).
#[derive(Clone, Default)]
pub struct ModelChoice {
    /// A spec or a name from the config's `models` that drives every agent (`--model`); `None`: the agents'
    /// and the config's models, else `STEWARD_MODEL`, else the environment.
    pub spec: Option<String>,
    /// How to drive the model (`--mode`), over the config's `mode`.
    pub mode: Option<ModeDef>,
    /// Save every model exchange to this file (`--record`).
    pub record: Option<PathBuf>,
    /// Timeouts, retries and how retries are reported.
    pub http: HttpOptions,
    /// One model for every run, already connected (tests; a scripted model).
    pub fixed: Option<Arc<dyn Model>>,
    /// Told which provider a bare model name got when the environment chose it, and why (see
    /// [`steward_llm::resolve`]); a CLI prints it.
    pub on_note: Option<NoteHook>,
}

/// Receives notes about the choice of a model.
pub type NoteHook = Arc<dyn Fn(&str) + Send + Sync>;

impl std::fmt::Debug for ModelChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelChoice")
            .field("spec", &self.spec)
            .field("mode", &self.mode)
            .field("record", &self.record)
            .field("fixed", &self.fixed.as_ref().map(|m| m.name().to_owned()))
            .field("on_note", &self.on_note.is_some())
            .finish_non_exhaustive()
    }
}

impl ModelChoice {
    /// One connected model for every run.
    pub fn fixed(model: Arc<dyn Model>) -> Self {
        Self {
            fixed: Some(model),
            ..Self::default()
        }
    }

    /// `text` with its provider (a bare name resolved, an Ollama it would go to checked), its note told.
    async fn resolve(&self, text: &str) -> Result<String, steward_llm::Error> {
        let resolved = steward_llm::resolve(text, &Env::from_process()).await?;
        if let (Some(note), Some(hook)) = (&resolved.note, &self.on_note) {
            hook(note);
        }
        Ok(resolved.spec)
    }

    fn mode(&self, configured: Option<ModeDef>) -> Mode {
        match self.mode.or(configured) {
            Some(ModeDef::ReactJson) => Mode::ReactJson,
            Some(ModeDef::ReactText) => Mode::ReactText,
            _ => Mode::Native,
        }
    }
}

/// The models of one run.
#[derive(Clone)]
pub struct RunModels {
    /// The top agent's model.
    pub model: Arc<dyn Model>,
    /// Its name in the config's `models`, if it has one.
    pub name: Option<String>,
    /// The config's models the agents name, by name.
    pub named: BTreeMap<String, Arc<dyn Model>>,
}

impl RunModels {
    /// One model, named nowhere in the config.
    pub fn single(model: Arc<dyn Model>) -> Self {
        Self {
            model,
            name: None,
            named: BTreeMap::new(),
        }
    }
}

/// Connected models, kept per agent and chosen model name (see [`App::models`]).
#[derive(Default)]
pub struct ModelCache {
    connected: Mutex<HashMap<(String, Option<String>), RunModels>>,
}

impl std::fmt::Debug for ModelCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelCache").finish_non_exhaustive()
    }
}

impl App {
    /// The models of a run of `agent` under `choice`; `pick` is a name from the config's `models` a caller chose
    /// (a server's settings panel), which only ever names one of those (a spec would let a caller reach any
    /// provider). Connected models are kept in `cache`, when given.
    pub async fn models(
        &self,
        choice: &ModelChoice,
        agent: &str,
        pick: Option<&str>,
        cache: Option<&ModelCache>,
    ) -> Result<RunModels, AppError> {
        if let Some(name) = pick
            && !self.config().models.contains_key(name)
        {
            let known = self
                .config()
                .models
                .keys()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(", ");
            return Err(AppError::Invalid(format!(
                "there is no model named `{name}` in the config's `models`{}",
                if known.is_empty() {
                    String::new()
                } else {
                    format!("; the models are: {known}")
                }
            )));
        }
        let key = (agent.to_owned(), pick.map(str::to_owned));
        if let Some(found) = cache.and_then(|c| {
            c.connected
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(&key)
                .cloned()
        }) {
            return Ok(found);
        }
        let models = match &choice.fixed {
            Some(model) => RunModels::single(model.clone()),
            None => {
                let mut choice = choice.clone();
                if let Some(name) = pick {
                    choice.spec = Some(name.to_owned());
                }
                self.connect_models(&choice, agent).await?
            }
        };
        if let Some(cache) = cache {
            cache
                .connected
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(key, models.clone());
        }
        Ok(models)
    }

    async fn connect_models(
        &self,
        choice: &ModelChoice,
        agent: &str,
    ) -> Result<RunModels, AppError> {
        let config = self.config();
        let def = self.agent_def(agent);
        let agent_mode = def.and_then(|a| a.mode);
        let agent_model = def.and_then(|a| a.model.as_deref());
        if let Some(text) = &choice.spec {
            if config.models.contains_key(text) {
                return Ok(RunModels {
                    model: self.connect_entry(choice, text, agent_mode).await?,
                    name: Some(text.clone()),
                    named: BTreeMap::new(),
                });
            }
            return Ok(RunModels::single(connect_as(choice, agent_mode).await?));
        }
        let top = agent_model.or(config.defaults.model.as_deref());
        let mut wanted: BTreeSet<String> = self.models_used(agent);
        wanted.extend(top.map(str::to_owned));
        if choice.record.is_some() && wanted.len() > 1 {
            let names: Vec<_> = wanted.into_iter().collect();
            return Err(AppError::Invalid(format!(
                "--record records one model, and this agent's sub-agents use the models {}: pass --model to \
                 drive them all with one",
                names.join(", ")
            )));
        }
        let mut named = BTreeMap::new();
        for name in &wanted {
            named.insert(name.clone(), self.connect_entry(choice, name, None).await?);
        }
        let model = match top {
            Some(name) if agent_mode.is_some() => {
                self.connect_entry(choice, name, agent_mode).await?
            }
            Some(name) => match named.get(name) {
                Some(model) => model.clone(),
                None => self.connect_entry(choice, name, None).await?,
            },
            None => connect_as(choice, agent_mode).await?,
        };
        Ok(RunModels {
            model,
            name: top.map(str::to_owned),
            named,
        })
    }

    /// Builds a model the config names, with its mode and timeout.
    async fn connect_entry(
        &self,
        choice: &ModelChoice,
        name: &str,
        mode: Option<ModeDef>,
    ) -> Result<Arc<dyn Model>, AppError> {
        let config = self.config();
        let Some(entry) = config.models.get(name) else {
            return Err(AppError::Config(format!(
                "{}: there is no model named `{name}` in `models`",
                config.locate(&["models"])
            )));
        };
        let def = entry.def();
        let mut http = choice.http.clone();
        if let Some(seconds) = def.timeout {
            http.timeouts.first_byte = Duration::from_secs(seconds);
            http.timeouts.idle = Duration::from_secs(seconds);
            http.timeouts.total = Duration::from_secs(seconds);
        }
        let failed = |e: steward_llm::Error| {
            AppError::Config(format!(
                "the model `{name}` ({}): {e}",
                config.locate(&["models", name])
            ))
        };
        let spec = choice.resolve(&def.spec).await.map_err(failed)?;
        let setup = ModelSetup {
            spec: Some(spec.clone()),
            mode: choice.mode(mode.or(def.mode)),
            record: choice.record.clone(),
            http,
        };
        steward_llm::connect_spec(&spec, setup, &Env::from_process()).map_err(failed)
    }
}

/// Builds the model `choice` names (or `STEWARD_MODEL`, or the environment's), driven as `mode` says unless the
/// choice sets a mode.
pub async fn connect_as(
    choice: &ModelChoice,
    mode: Option<ModeDef>,
) -> Result<Arc<dyn Model>, AppError> {
    if let Some(model) = &choice.fixed {
        return Ok(model.clone());
    }
    let env = Env::from_process();
    // `--model`, else STEWARD_MODEL; a bare name's provider is said and checked here (else the environment's).
    let spec = match choice
        .spec
        .clone()
        .or_else(|| env.get("STEWARD_MODEL").map(str::to_owned))
    {
        Some(text) => Some(choice.resolve(&text).await?),
        None => None,
    };
    let setup = ModelSetup {
        spec,
        mode: choice.mode(mode),
        record: choice.record.clone(),
        http: choice.http.clone(),
    };
    Ok(steward_llm::connect(setup, &env).await?)
}
