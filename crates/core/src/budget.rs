//! What one run may spend, shared by the run and every sub-run it starts, and who the run is for.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The tokens and model calls a whole run tree may use. A router's sub-agents debit the same budget as the
/// router, so `--max-tokens` bounds everything a question costs.
#[derive(Debug, Default)]
pub struct RunBudget {
    max_tokens: Option<u64>,
    max_steps: Option<u32>,
    tokens: AtomicU64,
    steps: AtomicU32,
}

impl RunBudget {
    /// A budget with the given caps (`None`: no cap).
    pub fn new(max_tokens: Option<u64>, max_steps: Option<u32>) -> Self {
        Self {
            max_tokens,
            max_steps,
            ..Self::default()
        }
    }

    /// A budget of which `tokens` are already spent (a run resumed after approval).
    pub fn with_spent(self, tokens: u64) -> Self {
        self.tokens.store(tokens, Ordering::Relaxed);
        self
    }

    /// A budget with no caps (it still counts).
    pub fn unlimited() -> Self {
        Self::default()
    }

    /// Records one model call and the tokens it used.
    pub fn spend(&self, tokens: u64) {
        self.tokens.fetch_add(tokens, Ordering::Relaxed);
        self.steps.fetch_add(1, Ordering::Relaxed);
    }

    /// Tokens used by the whole run tree so far.
    pub fn tokens(&self) -> u64 {
        self.tokens.load(Ordering::Relaxed)
    }

    /// Model calls made by the whole run tree so far.
    pub fn steps(&self) -> u32 {
        self.steps.load(Ordering::Relaxed)
    }

    /// The token cap.
    pub fn max_tokens(&self) -> Option<u64> {
        self.max_tokens
    }

    /// The cap on model calls across the run tree.
    pub fn max_steps(&self) -> Option<u32> {
        self.max_steps
    }

    /// `Some((limit, used))` when the token cap is reached.
    pub fn tokens_exhausted(&self) -> Option<(u64, u64)> {
        let used = self.tokens();
        self.max_tokens
            .filter(|limit| used >= *limit)
            .map(|limit| (limit, used))
    }

    /// `Some(limit)` when the cap on model calls is reached.
    pub fn steps_exhausted(&self) -> Option<u32> {
        self.max_steps.filter(|limit| self.steps() >= *limit)
    }
}

/// Who is asking: empty for the local CLI user; a server maps its tokens to principals. Roles and row filters
/// read the attributes (`{principal.customer_id}`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Principal {
    /// The principal's name (empty: the local user).
    #[serde(default)]
    pub name: String,
    /// The principal's role, when one applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Other attributes (`customer_id`, `department`, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, Value>,
}

impl Principal {
    /// The local user of a terminal: no name, no role, no attributes.
    pub fn local() -> Self {
        Self::default()
    }

    /// A named principal.
    pub fn named(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            ..Self::default()
        }
    }

    /// True for the local user.
    pub fn is_local(&self) -> bool {
        self.name.is_empty()
    }
}
