//! Record and replay: a [`Recorder`] saves every exchange with a model as it happens (JSON lines); a
//! [`ReplayModel`] plays a recording back and fails with a readable diff as soon as the agent sends a request
//! that differs from the recorded one. Users keep recordings in their own CI to catch prompt, tool or
//! workflow changes.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use steward_core::{
    Capabilities, Message, Model, ModelError, ModelRequest, ModelResponse, StreamDelta, ToolCall,
    ToolReplay,
};

use crate::error::Error;

/// The first line of a recording.
#[derive(Debug, Serialize, Deserialize)]
struct Header {
    steward_recording: u32,
    model: String,
    capabilities: Capabilities,
}

/// One model call: the request and what came back.
#[derive(Debug, Serialize, Deserialize)]
struct Exchange {
    request: ModelRequest,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    response: Option<ModelResponse>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<ModelError>,
}

/// Wraps a model and appends each exchange to a file as it happens.
pub struct Recorder<M> {
    inner: M,
    file: Mutex<File>,
    path: PathBuf,
}

impl<M> std::fmt::Debug for Recorder<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl<M: Model> Recorder<M> {
    /// Records `inner`'s exchanges into a new file at `path` (replacing an old one).
    pub fn create(inner: M, path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref().to_path_buf();
        let io =
            |e: std::io::Error| Error::Recording(format!("cannot write {}: {e}", path.display()));
        let mut file = File::create(&path).map_err(io)?;
        let header = Header {
            steward_recording: 1,
            model: inner.name().to_owned(),
            capabilities: inner.capabilities(),
        };
        let line = serde_json::to_string(&header).map_err(|e| Error::Recording(e.to_string()))?;
        writeln!(file, "{line}").map_err(io)?;
        Ok(Self {
            inner,
            file: Mutex::new(file),
            path,
        })
    }

    fn save(
        &self,
        request: &ModelRequest,
        result: &Result<ModelResponse, ModelError>,
    ) -> Result<(), ModelError> {
        let exchange = Exchange {
            request: request.clone(),
            response: result.as_ref().ok().cloned(),
            error: result.as_ref().err().cloned(),
        };
        let failed = |e: String| {
            ModelError::Other(format!("could not record to {}: {e}", self.path.display()))
        };
        let line = serde_json::to_string(&exchange).map_err(|e| failed(e.to_string()))?;
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        writeln!(file, "{line}")
            .and_then(|()| file.flush())
            .map_err(|e| failed(e.to_string()))
    }
}

#[async_trait]
impl<M: Model> Model for Recorder<M> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }

    fn tool_replay(&self, call: &ToolCall) -> ToolReplay {
        self.inner.tool_replay(call)
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let result = self.inner.complete(request).await;
        self.save(request, &result)?;
        result
    }

    async fn stream(
        &self,
        request: &ModelRequest,
        on_delta: &(dyn Fn(StreamDelta) + Send + Sync),
    ) -> Result<ModelResponse, ModelError> {
        let result = self.inner.stream(request, on_delta).await;
        self.save(request, &result)?;
        result
    }
}

/// Plays a recording back.
#[derive(Debug)]
pub struct ReplayModel {
    name: String,
    path: PathBuf,
    capabilities: Capabilities,
    exchanges: Vec<Exchange>,
    next: Mutex<usize>,
}

impl ReplayModel {
    /// Loads a recording made with [`Recorder`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref().to_path_buf();
        let bad = |line: usize, e: String| {
            Error::Recording(format!("{} line {line}: {e}", path.display()))
        };
        let file = File::open(&path)
            .map_err(|e| Error::Recording(format!("cannot read {}: {e}", path.display())))?;
        let mut lines = BufReader::new(file).lines().enumerate();
        let header: Header = match lines.next() {
            Some((_, Ok(line))) => serde_json::from_str(&line).map_err(|e| {
                bad(
                    1,
                    format!("not a Steward recording ({e}); record one with `--record FILE`"),
                )
            })?,
            Some((_, Err(e))) => return Err(bad(1, e.to_string())),
            None => return Err(bad(1, "the file is empty".to_owned())),
        };
        let mut exchanges = Vec::new();
        for (i, line) in lines {
            let line = line.map_err(|e| bad(i + 1, e.to_string()))?;
            if line.trim().is_empty() {
                continue;
            }
            exchanges.push(serde_json::from_str(&line).map_err(|e| bad(i + 1, e.to_string()))?);
        }
        Ok(Self {
            // Recordings made before model names were redacted may hold a base URL's credentials.
            name: format!(
                "replay:{} ({})",
                path.display(),
                steward_core::redact::redact_urls(&header.model)
            ),
            path,
            capabilities: header.capabilities,
            exchanges,
            next: Mutex::new(0),
        })
    }

    /// How many exchanges the recording holds.
    pub fn len(&self) -> usize {
        self.exchanges.len()
    }

    /// True when the recording holds no exchange.
    pub fn is_empty(&self) -> bool {
        self.exchanges.is_empty()
    }
}

#[async_trait]
impl Model for ReplayModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn capabilities(&self) -> Capabilities {
        self.capabilities
    }

    /// The result the recording shows for `call`: the recorded requests after the current one carry the
    /// results of the calls just made (a sub-agent's requests may come first); in each, the latest result of a
    /// call with this id and tool is the one.
    fn tool_replay(&self, call: &ToolCall) -> ToolReplay {
        let next = *self
            .next
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut results = self.exchanges.iter().skip(next).filter_map(|exchange| {
            exchange
                .request
                .messages
                .iter()
                .rev()
                .find_map(|m| match m {
                    Message::Tool {
                        call_id,
                        name,
                        content,
                        is_error,
                    } if *call_id == call.id && *name == call.name => Some(ToolReplay::Recorded {
                        content: content.clone(),
                        is_error: *is_error,
                    }),
                    _ => None,
                })
        });
        results.next().unwrap_or(ToolReplay::Missing)
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let index = {
            let mut next = self
                .next
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let index = *next;
            *next += 1;
            index
        };
        let total = self.exchanges.len();
        let Some(exchange) = self.exchanges.get(index) else {
            return Err(ModelError::Replay(format!(
                "replay of {}: the run made more model calls than the {total} recorded",
                self.path.display()
            )));
        };
        let recorded = serde_json::to_value(&exchange.request).unwrap_or(Value::Null);
        let now = serde_json::to_value(request).unwrap_or(Value::Null);
        let mut differences = Vec::new();
        diff(&recorded, &now, "", &mut differences);
        if !differences.is_empty() {
            return Err(ModelError::Replay(format!(
                "replay of {}: model call {} of {total} differs from the recording:\n  {}",
                self.path.display(),
                index + 1,
                differences.join("\n  ")
            )));
        }
        match (&exchange.response, &exchange.error) {
            (Some(response), _) => Ok(response.clone()),
            (None, Some(error)) => Err(error.clone()),
            (None, None) => Err(ModelError::Other(format!(
                "replay of {}: exchange {} has neither a response nor an error",
                self.path.display(),
                index + 1
            ))),
        }
    }
}

/// Readable differences between two JSON values, as `path: recorded …, now …` lines: every difference, whole
/// (a replay that diverged is debugged from this text).
pub(crate) fn diff(recorded: &Value, now: &Value, path: &str, out: &mut Vec<String>) {
    if recorded == now {
        return;
    }
    if path == "tools" {
        let names = |v: &Value| -> Vec<String> {
            v.as_array()
                .map(|tools| {
                    tools
                        .iter()
                        .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        let (a, b) = (names(recorded), names(now));
        if a != b {
            out.push(format!(
                "tools: recorded [{}], now [{}]",
                a.join(", "),
                b.join(", ")
            ));
            return;
        }
    }
    match (recorded, now) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, va) in a {
                let child = join(path, key);
                match b.get(key) {
                    Some(vb) => diff(va, vb, &child, out),
                    None => out.push(format!("{child}: recorded {}, now absent", show(va))),
                }
            }
            for (key, vb) in b {
                if !a.contains_key(key) {
                    out.push(format!(
                        "{}: recorded absent, now {}",
                        join(path, key),
                        show(vb)
                    ));
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                diff(va, vb, &format!("{path}[{i}]"), out);
            }
            if a.len() != b.len() {
                out.push(format!(
                    "{path}: recorded {} items, now {}",
                    a.len(),
                    b.len()
                ));
            }
        }
        _ => out.push(format!(
            "{path}: recorded {}, now {}",
            show(recorded),
            show(now)
        )),
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

fn show(value: &Value) -> String {
    value.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn diff_names_paths_and_summarises_tools() {
        let a = json!({"messages": [{"role": "user", "content": "hi"}], "tools": [{"name": "a"}], "stop": ["x"]});
        let b = json!({"messages": [{"role": "user", "content": "hello"}], "tools": [{"name": "a"}, {"name": "b"}]});
        let mut out = Vec::new();
        diff(&a, &b, "", &mut out);
        assert_eq!(
            out,
            [
                "messages[0].content: recorded \"hi\", now \"hello\"",
                "tools: recorded [a], now [a, b]",
                "stop: recorded [\"x\"], now absent",
            ]
        );
    }
}
