//! The history budget: which messages the model is sent, and how long one tool output may be.

use serde::{Deserialize, Serialize};

use crate::message::Message;

/// How much of the conversation the model is sent on each step.
///
/// System messages are always kept; then the newest messages, as many as the budget allows, cut only where a
/// tool call and its result stay together. The newest turn is always sent, even if alone it is over budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryBudget {
    /// Most non-system messages sent.
    #[serde(default)]
    pub max_messages: Option<usize>,
    /// Most estimated tokens of non-system messages sent.
    #[serde(default)]
    pub max_tokens: Option<usize>,
    /// Tool outputs longer than this many characters are cut, with a marker saying what was cut.
    #[serde(default = "default_tool_output_chars")]
    pub max_tool_output_chars: usize,
    /// Whether the run keeps messages that fell out of the window.
    #[serde(default)]
    pub retention: Retention,
}

/// Whether a run keeps messages that no longer fit the history window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Retention {
    /// Keep the whole transcript in the run (the default).
    #[default]
    Full,
    /// Drop messages that fell out of the window once they were reported as events; memory stays flat for
    /// very long runs whose events are persisted elsewhere.
    Window,
}

fn default_tool_output_chars() -> usize {
    20_000
}

impl Default for HistoryBudget {
    fn default() -> Self {
        Self {
            max_messages: None,
            max_tokens: None,
            max_tool_output_chars: default_tool_output_chars(),
            retention: Retention::Full,
        }
    }
}

/// A rough token count for budgeting: about four characters per token.
pub fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

/// Estimated tokens of one message, including a small per-message overhead.
pub fn message_tokens(message: &Message) -> usize {
    const OVERHEAD: usize = 4;
    let calls: usize = message
        .tool_calls()
        .iter()
        .map(|c| estimate_tokens(&c.name) + estimate_tokens(&c.arguments) + OVERHEAD)
        .sum();
    OVERHEAD + message.text().map_or(0, estimate_tokens) + calls
}

impl HistoryBudget {
    /// The index of the first message of the window within `messages[first..]`, where `messages[..first]`
    /// are the system messages. Only positions that do not orphan a tool result are considered.
    pub fn window_start(&self, messages: &[Message], first: usize) -> usize {
        if self.max_messages.is_none() && self.max_tokens.is_none() {
            return first;
        }
        let max_messages = self.max_messages.unwrap_or(usize::MAX);
        let max_tokens = self.max_tokens.unwrap_or(usize::MAX);
        let mut start = messages.len();
        let mut tokens = 0usize;
        for i in (first..messages.len()).rev() {
            tokens = tokens.saturating_add(message_tokens(&messages[i]));
            if matches!(messages[i], Message::Tool { .. }) {
                continue; // not a valid cut: its call is further back
            }
            let count = messages.len() - i;
            let newest_turn = start == messages.len();
            if !newest_turn && (count > max_messages || tokens > max_tokens) {
                break;
            }
            start = i;
        }
        start.max(first)
    }

    /// The messages the model is sent: the system messages, then the window.
    pub fn select(&self, messages: &[Message]) -> Vec<Message> {
        let first = leading_system(messages);
        let start = self.window_start(messages, first);
        let mut out = Vec::with_capacity(first + messages.len() - start);
        out.extend_from_slice(&messages[..first]);
        out.extend_from_slice(&messages[start..]);
        out
    }
}

/// How many messages at the front are system messages.
pub(crate) fn leading_system(messages: &[Message]) -> usize {
    messages
        .iter()
        .take_while(|m| matches!(m, Message::System { .. }))
        .count()
}

/// Cuts `text` to at most `max_chars` characters, ending with a marker that says what was cut.
pub fn cut_output(text: &str, max_chars: usize) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_owned();
    }
    let head: String = text.chars().take(max_chars).collect();
    format!(
        "{head}\n[output cut: showing the first {max_chars} of {total} characters; \
         {} characters were cut. Ask for less, e.g. with a narrower filter or a smaller limit.]",
        total - max_chars
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolCall;

    fn conversation() -> Vec<Message> {
        vec![
            Message::system("sys"),
            Message::user("first question"),
            Message::assistant_calls(
                None,
                vec![ToolCall::new("a", "t", "{}"), ToolCall::new("b", "t", "{}")],
            ),
            Message::tool("a", "t", "result a", false),
            Message::tool("b", "t", "result b", false),
            Message::assistant("answer one"),
            Message::user("second question"),
            Message::assistant_calls(None, vec![ToolCall::new("c", "t", "{}")]),
            Message::tool("c", "t", "result c", false),
        ]
    }

    fn pairs_intact(selected: &[Message]) {
        for (i, m) in selected.iter().enumerate() {
            if let Message::Tool { call_id, .. } = m {
                let owner = selected[..i]
                    .iter()
                    .rev()
                    .find(|p| !matches!(p, Message::Tool { .. }))
                    .expect("a tool result has a preceding message");
                assert!(
                    owner.tool_calls().iter().any(|c| &c.id == call_id),
                    "result {call_id} separated from its call in {selected:?}"
                );
            }
        }
        for (i, m) in selected.iter().enumerate() {
            for call in m.tool_calls() {
                assert!(
                    selected[i + 1..]
                        .iter()
                        .any(|r| matches!(r, Message::Tool { call_id, .. } if call_id == &call.id)),
                    "call {} lost its result",
                    call.id
                );
            }
        }
    }

    #[test]
    fn unlimited_budget_keeps_everything() {
        let msgs = conversation();
        assert_eq!(HistoryBudget::default().select(&msgs), msgs);
    }

    #[test]
    fn message_budget_never_splits_a_call_from_its_results() {
        let msgs = conversation();
        for max in 1..msgs.len() {
            let budget = HistoryBudget {
                max_messages: Some(max),
                ..HistoryBudget::default()
            };
            let selected = budget.select(&msgs);
            assert_eq!(selected[0], Message::system("sys"));
            assert!(selected.len() - 1 <= max.max(2), "max {max}: {selected:?}");
            pairs_intact(&selected);
            assert_eq!(selected.last(), msgs.last());
        }
        let budget = HistoryBudget {
            max_messages: Some(3),
            ..HistoryBudget::default()
        };
        assert_eq!(budget.select(&msgs)[1], Message::user("second question"));
        let budget = HistoryBudget {
            max_messages: Some(6),
            ..HistoryBudget::default()
        };
        // 6 would start at the tool result "b"; the window must start at "answer one" instead.
        assert_eq!(budget.select(&msgs)[1], Message::assistant("answer one"));
    }

    #[test]
    fn token_budget_keeps_the_newest_turn_even_when_too_big() {
        let msgs = conversation();
        let budget = HistoryBudget {
            max_tokens: Some(1),
            ..HistoryBudget::default()
        };
        let selected = budget.select(&msgs);
        pairs_intact(&selected);
        assert_eq!(selected.len(), 3, "{selected:?}"); // system + the last call with its result
    }

    #[test]
    fn cut_output_says_what_was_cut() {
        assert_eq!(cut_output("short", 10), "short");
        let cut = cut_output(&"é".repeat(100), 10);
        assert!(cut.starts_with(&"é".repeat(10)));
        assert!(cut.contains("first 10 of 100 characters; 90 characters were cut"));
    }
}
