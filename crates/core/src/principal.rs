//! Who a run is for.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

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
