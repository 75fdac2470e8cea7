//! The environment that configures models: a snapshot of its variables (so tests can pass their own), and the
//! Ollama server's address they give.

use std::collections::HashMap;

/// A snapshot of the environment variables that configure models (so tests can pass their own).
#[derive(Clone, Debug, Default)]
pub struct Env {
    vars: HashMap<String, String>,
}

impl Env {
    /// The process environment.
    pub fn from_process() -> Self {
        Self {
            vars: std::env::vars().collect(),
        }
    }

    /// An environment with just these variables.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        Self {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
        }
    }

    /// A variable, when set and not empty.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
    }
}

/// The Ollama server's root URL from `OLLAMA_HOST` (Ollama's own variable), default `http://127.0.0.1:11434`.
pub(super) fn ollama_host(env: &Env) -> String {
    let Some(host) = env.get("OLLAMA_HOST") else {
        return "http://127.0.0.1:11434".to_owned();
    };
    let host = host.trim_end_matches('/');
    let with_scheme = if host.contains("://") {
        host.to_owned()
    } else {
        format!("http://{host}")
    };
    let with_scheme = with_scheme.replace("://0.0.0.0", "://127.0.0.1");
    let after_scheme = with_scheme.split_once("://").map_or("", |(_, rest)| rest);
    if after_scheme.contains(':') {
        with_scheme
    } else {
        format!("{with_scheme}:11434")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ollama_host_forms() {
        let host = |v: &str| ollama_host(&Env::from_pairs([("OLLAMA_HOST", v)]));
        assert_eq!(ollama_host(&Env::default()), "http://127.0.0.1:11434");
        assert_eq!(host("0.0.0.0"), "http://127.0.0.1:11434");
        assert_eq!(host("gpu-box:8080"), "http://gpu-box:8080");
        assert_eq!(
            host("https://ollama.example.com/"),
            "https://ollama.example.com:11434"
        );
    }
}
