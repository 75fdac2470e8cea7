//! The idempotency key of a write: run id, call id, tool name and a hash of the canonical arguments. The same
//! key again is a retry (the first result is returned); the same run and call id with another tool or other
//! arguments is a mistake that must be told, never silently replayed.
//!
//! Public so that every writing tool keys its calls the same way (the declarative SQL tools of steward-app
//! use it too).

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use steward_core::{ToolContext, ToolError};

use crate::money::{Decimal, plain};

/// One writing tool call, as its idempotency key sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallKey {
    /// The run.
    pub run_id: String,
    /// The call within the run.
    pub call_id: String,
    /// The tool called.
    pub tool: String,
    /// The arguments in canonical JSON: keys sorted, numbers normalised, nulls (not sent) left out.
    pub arguments: String,
    /// SHA-256 of `arguments`, in hex.
    pub hash: String,
}

impl CallKey {
    /// The key of a call to `tool` with `arguments` (the tool's typed arguments) in `ctx`.
    pub fn new(
        ctx: &ToolContext,
        tool: &str,
        arguments: &impl Serialize,
    ) -> Result<Self, ToolError> {
        let value = serde_json::to_value(arguments).map_err(|e| {
            ToolError::internal(format!("the arguments of {tool} cannot be keyed: {e}"))
        })?;
        let arguments = canonical(&value);
        let hash = sha256_hex(&arguments);
        Ok(Self {
            run_id: ctx.run_id.clone(),
            call_id: ctx.call_id.clone(),
            tool: tool.to_owned(),
            arguments,
            hash,
        })
    }

    /// Compares the call recorded under this run and call id with this one: `Ok` when it is the same call
    /// (a retry), an error for the model and the operator when the id was used for something else.
    pub fn check_same(&self, tool: &str, hash: &str, arguments: &str) -> Result<(), ToolError> {
        if tool == self.tool && hash == self.hash {
            return Ok(());
        }
        let message = if tool == self.tool {
            format!(
                "Call id {} was already used by {tool} with other arguments; use a new call id.",
                self.call_id
            )
        } else {
            format!(
                "Call id {} was already used by {tool}; use a new call id for this {} call.",
                self.call_id, self.tool
            )
        };
        Err(ToolError::new(message).with_diagnostic(format!(
            "run {}: call id {} is recorded for {tool} with arguments {} (sha256 {hash}); this call is {} with \
             arguments {} (sha256 {}); nothing was written",
            self.run_id,
            self.call_id,
            clip(arguments),
            self.tool,
            clip(&self.arguments),
            self.hash
        )))
    }
}

/// Canonical JSON text: object keys sorted, null members left out (not sending a parameter and sending `null`
/// mean the same), numbers in their shortest exact decimal form (`5`, `5.0` and `5e0` are all `5`), no spaces.
pub fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> =
                map.iter().filter(|(_, v)| !v.is_null()).collect();
            members.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, member)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(member, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Number(n) => match Decimal::from_json(n).value() {
            Some(d) => out.push_str(&plain(d)),
            None => out.push_str(&n.to_string()),
        },
        other => out.push_str(&other.to_string()),
    }
}

/// SHA-256 in lower-case hex.
fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Long argument text cut for a diagnostic.
fn clip(text: &str) -> String {
    if text.chars().count() > 300 {
        format!("{}…", text.chars().take(300).collect::<String>())
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_arguments_sort_keys_drop_nulls_and_normalise_numbers() {
        let a = canonical(
            &json!({"b": 5.0, "a": "x", "c": null, "d": [1, 0.10, {"z": 1e2, "y": true}]}),
        );
        assert_eq!(a, r#"{"a":"x","b":5,"d":[1,0.1,{"y":true,"z":100}]}"#);
        assert_eq!(
            canonical(&json!({"a": "x", "b": 5})),
            canonical(&json!({"b": 5.00, "a": "x"}))
        );
        assert_ne!(
            canonical(&json!({"b": 5.01})),
            canonical(&json!({"b": 5.1}))
        );
        assert_eq!(canonical(&json!({"s": "é\"\n"})), r#"{"s":"é\"\n"}"#);
    }

    #[test]
    fn the_hash_is_stable_sha256() {
        // Fixed forever: stored keys must still match after an upgrade.
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let ctx = ToolContext::new("run", "c1", "agent");
        let key = CallKey::new(
            &ctx,
            "add_expense",
            &json!({"net_amount": 5, "date": "today"}),
        )
        .unwrap();
        assert_eq!(key.arguments, r#"{"date":"today","net_amount":5}"#);
        assert_eq!(key.hash, sha256_hex(&key.arguments));
    }

    #[test]
    fn another_tool_or_other_arguments_is_an_error() {
        let ctx = ToolContext::new("run", "c1", "agent");
        let key = CallKey::new(&ctx, "add_expense", &json!({"net_amount": 5})).unwrap();
        assert!(
            key.check_same("add_expense", &key.hash, &key.arguments)
                .is_ok()
        );
        let err = key.check_same("add_expense", "other", "{}").unwrap_err();
        assert_eq!(
            err.message,
            "Call id c1 was already used by add_expense with other arguments; use a new call id."
        );
        assert!(err.diagnostic.unwrap().contains("nothing was written"));
        let other = CallKey::new(&ctx, "create_project", &json!({"name": "P"})).unwrap();
        let err = other
            .check_same("add_expense", &key.hash, &key.arguments)
            .unwrap_err();
        assert_eq!(
            err.message,
            "Call id c1 was already used by add_expense; use a new call id for this create_project call."
        );
    }
}
