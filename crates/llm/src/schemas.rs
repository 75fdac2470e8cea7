//! Tool schemas as the model is shown them, rendered once per toolbox rather than once per request.
//!
//! A run sends the same `Arc<[ToolSpec]>` (its toolbox's specs) on every step, and rendering a schema means
//! cloning and rewriting a `serde_json::Value` tree. [`ToolboxCache`] keys on the identity of that `Arc`: it
//! holds a `Weak` to it, so the allocation cannot be reused for other specs while the entry lives, and an entry
//! whose toolbox is gone is dropped. The ReAct prompt's tool section is kept the same way.

use std::sync::{Arc, Mutex, Weak};

use serde_json::Value;
use steward_core::{SchemaStyle, ToolSpec};

/// How many toolboxes one model remembers (a server may run several agents on one model).
const ENTRIES: usize = 8;

/// Something derived from a toolbox, kept for the toolboxes a model was recently sent.
#[derive(Debug)]
pub(crate) struct ToolboxCache<V> {
    entries: Mutex<Vec<(Weak<[ToolSpec]>, V)>>,
}

impl<V: Clone> ToolboxCache<V> {
    /// An empty cache.
    pub(crate) fn new() -> Self {
        Self {
            entries: Mutex::new(Vec::new()),
        }
    }

    /// The value derived from `tools`: kept from an earlier call with the same toolbox, else `make`'s.
    pub(crate) fn get_or_make(&self, tools: &Arc<[ToolSpec]>, make: impl FnOnce() -> V) -> V {
        let Ok(mut entries) = self.entries.lock() else {
            // A poisoned lock only costs the cache.
            return make();
        };
        entries.retain(|(key, _)| key.strong_count() > 0);
        let found = entries
            .iter()
            .position(|(key, _)| std::ptr::addr_eq(key.as_ptr(), Arc::as_ptr(tools)));
        if let Some(i) = found {
            let entry = entries.remove(i);
            let value = entry.1.clone();
            entries.push(entry);
            return value;
        }
        let value = make();
        if entries.len() >= ENTRIES {
            entries.remove(0);
        }
        entries.push((Arc::downgrade(tools), value.clone()));
        value
    }
}

/// The rendered parameter schemas of the toolboxes a model was recently sent, in one style.
#[derive(Debug)]
pub(crate) struct SchemaCache {
    style: SchemaStyle,
    cache: ToolboxCache<Arc<[Value]>>,
}

impl SchemaCache {
    /// An empty cache rendering in `style`.
    pub(crate) fn new(style: SchemaStyle) -> Self {
        Self {
            style,
            cache: ToolboxCache::new(),
        }
    }

    /// The schemas of `tools` in this cache's style, in the same order.
    pub(crate) fn rendered(&self, tools: &Arc<[ToolSpec]>) -> Arc<[Value]> {
        if tools.is_empty() {
            return Arc::default();
        }
        self.cache.get_or_make(tools, || {
            tools
                .iter()
                .map(|t| t.model_parameters(self.style))
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn specs(lenient: bool) -> Arc<[ToolSpec]> {
        let mut spec = ToolSpec::new(
            "f",
            "d",
            json!({"title": "F", "type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}),
        );
        spec.lenient = lenient;
        Arc::from(vec![spec])
    }

    #[test]
    fn renders_once_per_toolbox_and_in_its_style() {
        let cache = SchemaCache::new(SchemaStyle::Standard);
        let strict = specs(false);
        let lenient = specs(true);
        let first = cache.rendered(&strict);
        assert!(Arc::ptr_eq(&first, &cache.rendered(&strict)));
        assert_eq!(first[0], strict[0].model_parameters(SchemaStyle::Standard));
        assert!(first[0].get("title").is_none());
        // Equal contents at another address are another toolbox: rendered for what they are.
        let other = cache.rendered(&lenient);
        assert!(other[0].get("required").is_none());
        let strict_cache = SchemaCache::new(SchemaStyle::Strict);
        assert_eq!(
            strict_cache.rendered(&strict)[0],
            strict[0].model_parameters(SchemaStyle::Strict)
        );
    }

    #[test]
    fn forgets_toolboxes_that_are_gone() {
        let cache = SchemaCache::new(SchemaStyle::Standard);
        for _ in 0..3 * ENTRIES {
            let tools = specs(false);
            cache.rendered(&tools);
        }
        let kept = cache
            .cache
            .entries
            .lock()
            .map(|e| e.len())
            .unwrap_or(usize::MAX);
        assert!(kept <= 1, "{kept} entries kept");
        let live: Vec<_> = (0..2 * ENTRIES).map(|_| specs(false)).collect();
        live.iter().for_each(|t| {
            cache.rendered(t);
        });
        let kept = cache
            .cache
            .entries
            .lock()
            .map(|e| e.len())
            .unwrap_or(usize::MAX);
        assert_eq!(kept, ENTRIES);
    }
}
