//! An ordered mapping of names to entries, as a config file declares it (YAML or JSON): parameters, query
//! pairs, headers. Order is kept (the model sees parameters in the order they were written) and a name
//! declared twice is an error, not a silent overwrite.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};

/// Named entries in the order they were declared (a YAML or JSON mapping); a name declared twice is an error.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedMap<V>(Vec<(String, V)>);

impl<V> Default for NamedMap<V> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<V> NamedMap<V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same map with an entry added (or replaced, keeping its place).
    pub fn with(mut self, name: impl Into<String>, value: V) -> Self {
        let name = name.into();
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some(entry) => entry.1 = value,
            None => self.0.push((name, value)),
        }
        self
    }

    /// The entry with that name.
    pub fn get(&self, name: &str) -> Option<&V> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// The entries in declared order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v))
    }

    /// The names in declared order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(n, _)| n.as_str())
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for NamedMap<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries<V>(PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for Entries<V> {
            type Value = NamedMap<V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping of names to entries")
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                Ok(NamedMap::default())
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out: Vec<(String, V)> = Vec::new();
                while let Some((name, value)) = map.next_entry::<String, V>()? {
                    if out.iter().any(|(n, _)| *n == name) {
                        return Err(serde::de::Error::custom(format!(
                            "`{name}` is declared twice"
                        )));
                    }
                    out.push((name, value));
                }
                Ok(NamedMap(out))
            }
        }
        deserializer.deserialize_map(Entries(PhantomData))
    }
}
