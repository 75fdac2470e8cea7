//! What one run may spend, shared by the run and every sub-run it starts.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

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
