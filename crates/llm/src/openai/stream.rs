//! Reassembles a streamed chat completion from its chunks, including tool calls split over many deltas, from
//! servers that send every call at index 0 or no index at all.

use serde_json::{Map, Value};
use steward_core::{ModelResponse, StreamDelta, ToolCall, ToolSpec, Usage};

use super::wire::{Completion, WireToolCall, assemble, content_text};
use crate::quirks::{arguments_text, new_call_id};

#[derive(Debug, Default)]
struct PartialCall {
    index: Option<u64>,
    id: String,
    name: String,
    arguments: String,
}

/// The reply so far.
#[derive(Debug, Default)]
pub(crate) struct Accumulator {
    text: String,
    calls: Vec<PartialCall>,
    finish: Option<String>,
    usage: Option<Usage>,
    extra: Map<String, Value>,
}

impl Accumulator {
    /// True once a finish reason arrived.
    pub(crate) fn finished(&self) -> bool {
        self.finish.is_some()
    }

    /// Adds one chunk, reporting new text and new tool calls to `on_delta`.
    pub(crate) fn push(
        &mut self,
        chunk: Completion,
        on_delta: &(dyn Fn(StreamDelta) + Send + Sync),
    ) {
        if let Some(usage) = chunk.usage {
            self.usage = Some(usage.to_usage());
        }
        for (k, v) in chunk.extra {
            // Keep the first real value (Azure opens with a chunk of empty ids and names).
            let blank = |v: &Value| v.is_null() || v.as_str() == Some("") || v.as_u64() == Some(0);
            if self.extra.get(&k).is_none_or(blank) {
                self.extra.insert(k, v);
            }
        }
        for choice in chunk.choices {
            if let Some(reason) = choice
                .finish_reason
                .filter(|r| !r.is_empty() || self.finish.is_none())
            {
                self.finish = Some(reason);
            }
            let Some(delta) = choice.delta.or(choice.message) else {
                continue;
            };
            if let Some(text) = content_text(delta.content.as_ref())
                && !text.is_empty()
            {
                self.text.push_str(&text);
                on_delta(StreamDelta::Text(text));
            }
            for (key, value) in delta.extra {
                match (self.extra.get_mut(&key), &value) {
                    // Reasoning text streams in pieces like content does.
                    (Some(Value::String(acc)), Value::String(more)) => acc.push_str(more),
                    (None, _) => {
                        self.extra.insert(key, value);
                    }
                    _ => {}
                }
            }
            for call in delta.tool_calls.unwrap_or_default() {
                self.push_call(call, on_delta);
            }
        }
    }

    fn push_call(&mut self, call: WireToolCall, on_delta: &(dyn Fn(StreamDelta) + Send + Sync)) {
        let function = call.function.unwrap_or_default();
        let id = call.id.filter(|id| !id.is_empty());
        let target = match call.index {
            Some(index) => {
                let found = self.calls.iter().rposition(|c| c.index == Some(index));
                match (found, &id) {
                    // Same index but a different id: a server that puts every call at index 0.
                    (Some(i), Some(id))
                        if !self.calls[i].id.is_empty() && &self.calls[i].id != id =>
                    {
                        None
                    }
                    (found, _) => found,
                }
            }
            None => match &id {
                Some(id) => self.calls.iter().rposition(|c| &c.id == id),
                None => self.calls.len().checked_sub(1),
            },
        };
        let i = match target {
            Some(i) => i,
            None => {
                self.calls.push(PartialCall {
                    index: call.index,
                    ..PartialCall::default()
                });
                self.calls.len() - 1
            }
        };
        let partial = &mut self.calls[i];
        if partial.id.is_empty()
            && let Some(id) = id
        {
            partial.id = id;
        }
        if let Some(name) = function.name.filter(|n| !n.is_empty())
            && partial.name.is_empty()
        {
            on_delta(StreamDelta::ToolCallStarted { name: name.clone() });
            partial.name = name;
        }
        match function.arguments {
            // Some servers send the whole arguments as one object instead of string pieces.
            Some(v @ Value::Object(_)) => partial.arguments = v.to_string(),
            other => partial.arguments.push_str(&arguments_text(other.as_ref())),
        }
    }

    /// The whole reply.
    pub(crate) fn finish(self, tools: &[ToolSpec]) -> ModelResponse {
        let mut calls: Vec<ToolCall> = self
            .calls
            .into_iter()
            .filter(|c| !c.name.is_empty() || !c.arguments.is_empty())
            .map(|c| {
                let id = if c.id.is_empty() { new_call_id() } else { c.id };
                ToolCall::new(id, c.name, c.arguments)
            })
            .collect();
        assemble(
            Some(self.text),
            &mut calls,
            self.finish.as_deref(),
            self.usage.unwrap_or_default(),
            self.extra,
            tools,
        )
    }
}
