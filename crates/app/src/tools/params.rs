//! The parameters of a declarative tool, declared in config with JSON Schema's own words (`type`, `enum`,
//! `pattern`, `minimum`, `maxLength`, …), turned into the argument schema core validates every call against
//! before the tool runs. Defaults of optional parameters are filled in when the tool runs.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value, json};
use steward_core::ArgumentValidator;

pub use super::named_map::NamedMap;

/// The JSON type of a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ParamType {
    /// Text.
    String,
    /// A whole number (bound as a 64-bit integer).
    Integer,
    /// Any number (bound as a 64-bit float).
    Number,
    /// `true` or `false`.
    Boolean,
}

impl ParamType {
    /// The JSON Schema name of the type.
    pub fn name(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::Boolean => "boolean",
        }
    }

    /// Whether a JSON value has this type.
    pub fn accepts(self, value: &Value) -> bool {
        match self {
            Self::String => value.is_string(),
            Self::Integer => value.is_i64() || value.is_u64(),
            Self::Number => value.is_number(),
            Self::Boolean => value.is_boolean(),
        }
    }
}

/// One parameter of a declarative tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParamSpec {
    /// Its type.
    #[serde(rename = "type")]
    pub kind: ParamType,
    /// What it means, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The only values allowed.
    #[serde(default, rename = "enum", skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<Value>>,
    /// A regular expression text must match (strings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// The smallest value (numbers; also written `min`).
    #[serde(default, alias = "min", skip_serializing_if = "Option::is_none")]
    pub minimum: Option<Number>,
    /// The largest value (numbers; also written `max`).
    #[serde(default, alias = "max", skip_serializing_if = "Option::is_none")]
    pub maximum: Option<Number>,
    /// The fewest characters (strings).
    #[serde(default, rename = "minLength", skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// The most characters (strings).
    #[serde(default, rename = "maxLength", skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// The value used when the call leaves the parameter out (makes it optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// Whether a call must give it: true unless a default is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

impl ParamSpec {
    /// A parameter of this type with nothing else declared.
    pub fn new(kind: ParamType) -> Self {
        Self {
            kind,
            description: None,
            values: None,
            pattern: None,
            minimum: None,
            maximum: None,
            min_length: None,
            max_length: None,
            default: None,
            required: None,
        }
    }

    /// Whether a call must give it.
    pub fn is_required(&self) -> bool {
        self.required.unwrap_or(self.default.is_none())
    }

    /// Its JSON Schema.
    pub fn schema(&self) -> Value {
        let mut out = Map::new();
        out.insert("type".to_owned(), json!(self.kind.name()));
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(v) = value {
                out.insert(key.to_owned(), v);
            }
        };
        put("description", self.description.clone().map(Value::String));
        put("enum", self.values.clone().map(Value::Array));
        put("pattern", self.pattern.clone().map(Value::String));
        put("minimum", self.minimum.clone().map(Value::Number));
        put("maximum", self.maximum.clone().map(Value::Number));
        put("minLength", self.min_length.map(Value::from));
        put("maxLength", self.max_length.map(Value::from));
        put("default", self.default.clone());
        Value::Object(out)
    }

    /// Checks the declaration itself: keywords that fit the type, `min` ≤ `max`, enum values of the type, a
    /// pattern that compiles, a default that passes its own rules. The error says what to fix.
    pub fn check(&self, name: &str) -> Result<(), String> {
        let a_ty = match self.kind {
            ParamType::Integer => "an integer",
            ParamType::String => "a string",
            ParamType::Number => "a number",
            ParamType::Boolean => "a boolean",
        };
        let numeric = matches!(self.kind, ParamType::Integer | ParamType::Number);
        let text = self.kind == ParamType::String;
        for (present, key, fits) in [
            (self.pattern.is_some(), "pattern", text),
            (self.min_length.is_some(), "minLength", text),
            (self.max_length.is_some(), "maxLength", text),
            (self.minimum.is_some(), "minimum", numeric),
            (self.maximum.is_some(), "maximum", numeric),
        ] {
            if present && !fits {
                return Err(format!(
                    "`{key}` does not apply to {a_ty}; remove it or change the type"
                ));
            }
        }
        if self.kind == ParamType::Integer {
            for (key, bound) in [("minimum", &self.minimum), ("maximum", &self.maximum)] {
                if let Some(n) = bound
                    && !(n.is_i64() || n.is_u64())
                {
                    return Err(format!(
                        "`{key}` of an integer must be a whole number, not {n}"
                    ));
                }
            }
        }
        if let (Some(lo), Some(hi)) = (&self.minimum, &self.maximum)
            && lo.as_f64() > hi.as_f64()
        {
            return Err(format!("`minimum` ({lo}) is greater than `maximum` ({hi})"));
        }
        if let (Some(lo), Some(hi)) = (self.min_length, self.max_length)
            && lo > hi
        {
            return Err(format!(
                "`minLength` ({lo}) is greater than `maxLength` ({hi})"
            ));
        }
        if let Some(values) = &self.values {
            if values.is_empty() {
                return Err("`enum` is empty; list the allowed values or remove it".to_owned());
            }
            if let Some(bad) = values.iter().find(|v| !self.kind.accepts(v)) {
                return Err(format!(
                    "the enum value {bad} is not {a_ty}; write every allowed value as {a_ty}"
                ));
            }
            if let Some((i, v)) = values
                .iter()
                .enumerate()
                .find(|(i, v)| values[..*i].contains(v))
            {
                return Err(format!("the enum value {v} is listed twice (at {i})"));
            }
        }
        if self.required == Some(true) && self.default.is_some() {
            return Err(
                "it is `required: true` but has a default, which would never be used; remove one of them"
                    .to_owned(),
            );
        }
        let alone = json!({"type": "object", "properties": {name: self.schema()}});
        let validator =
            ArgumentValidator::new(&alone).map_err(|e| format!("its rules do not compile: {e}"))?;
        if let Some(default) = &self.default {
            if default.is_null() {
                return Err("the default is null; give a value or leave `default` out".to_owned());
            }
            let call = json!({ name: default }).to_string();
            validator.check(name, &call).map_err(|r| {
                format!(
                    "the default {default} breaks the parameter's own rules: {}",
                    r.observation
                )
            })?;
        }
        Ok(())
    }
}

/// The parameters of a tool, in declared order.
pub type Parameters = NamedMap<ParamSpec>;

impl NamedMap<ParamSpec> {
    /// The argument schema: an object with these properties, the required ones listed, nothing else allowed.
    pub fn schema(&self) -> Value {
        let properties: Map<String, Value> = self
            .iter()
            .map(|(name, spec)| (name.to_owned(), spec.schema()))
            .collect();
        let required: Vec<Value> = self
            .iter()
            .filter(|(_, spec)| spec.is_required())
            .map(|(name, _)| json!(name))
            .collect();
        json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        })
    }

    /// Checks every declaration (see [`ParamSpec::check`]) and every name: `(name, problem)` of the first
    /// that is wrong.
    pub fn check(&self) -> Result<(), (String, String)> {
        for (name, spec) in self.iter() {
            if !plain_name(name) {
                return Err((
                    name.to_owned(),
                    "a parameter name must be letters, digits and _ (at most 64), starting with a letter or _"
                        .to_owned(),
                ));
            }
            spec.check(name).map_err(|p| (name.to_owned(), p))?;
        }
        Ok(())
    }

    /// The arguments of a call with the defaults of the parameters it left out (or sent as `null`) filled in.
    pub fn apply_defaults(&self, args: Value) -> Map<String, Value> {
        let mut map = match args {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        map.retain(|_, v| !v.is_null());
        for (name, spec) in self.iter() {
            if let Some(default) = &spec.default
                && !map.contains_key(name)
            {
                map.insert(name.to_owned(), default.clone());
            }
        }
        map
    }
}

/// A name usable as `:name` in SQL and `{name}` in templates.
pub(crate) fn plain_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= 64
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(yaml: &str) -> ParamSpec {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn aliases_and_camel_case_keys_are_read() {
        let s = spec("{type: integer, min: 1, max: 10, default: 3}");
        assert_eq!(s.minimum, Some(1.into()));
        assert_eq!(s.maximum, Some(10.into()));
        assert!(!s.is_required());
        let s = spec("{type: string, minLength: 1, maxLength: 80, enum: [a, b]}");
        assert_eq!((s.min_length, s.max_length), (Some(1), Some(80)));
        assert!(s.is_required());
        let e = serde_yaml::from_str::<ParamSpec>("{type: string, maxlen: 3}").unwrap_err();
        assert!(e.to_string().contains("unknown field `maxlen`"), "{e}");
    }

    #[test]
    fn bad_declarations_say_what_to_fix() {
        for (yaml, expected) in [
            ("{type: integer, min: 5, max: 1}", "greater than `maximum`"),
            ("{type: string, minLength: 5, maxLength: 1}", "greater than"),
            ("{type: integer, pattern: 'a'}", "`pattern` does not apply"),
            ("{type: string, minimum: 1}", "`minimum` does not apply"),
            (
                "{type: integer, enum: [1, two]}",
                "\"two\" is not an integer",
            ),
            ("{type: string, pattern: '(unclosed'}", "do not compile"),
            (
                "{type: string, maxLength: 2, default: abc}",
                "the default \"abc\"",
            ),
            ("{type: integer, minimum: 1.5}", "whole number"),
            (
                "{type: string, required: true, default: x}",
                "never be used",
            ),
            ("{type: string, enum: [a, a]}", "listed twice"),
        ] {
            let e = spec(yaml).check("p").unwrap_err();
            assert!(e.contains(expected), "{yaml}: {e}");
        }
        assert!(
            spec("{type: string, pattern: '^[A-Z]+$', default: ABC}")
                .check("p")
                .is_ok()
        );
    }

    #[test]
    fn the_schema_validates_calls_and_defaults_fill_in() {
        let params: Parameters = serde_yaml::from_str(
            "{city: {type: string, maxLength: 5}, limit: {type: integer, default: 10, max: 50}}",
        )
        .unwrap();
        assert_eq!(params.names().collect::<Vec<_>>(), ["city", "limit"]);
        let v = ArgumentValidator::new(&params.schema()).unwrap();
        assert!(v.check("t", r#"{"city": "Paris"}"#).is_ok());
        let r = v.check("t", r#"{"city": "Londres"}"#).unwrap_err();
        assert!(r.observation.contains("city"), "{}", r.observation);
        let r = v.check("t", r#"{"limit": 5}"#).unwrap_err();
        assert!(r.observation.contains("city"), "{}", r.observation);
        assert!(v.check("t", r#"{"city": "x", "other": 1}"#).is_err());
        let filled = params.apply_defaults(json!({"city": "x", "limit": null}));
        assert_eq!(Value::Object(filled), json!({"city": "x", "limit": 10}));
        let dup = serde_yaml::from_str::<Parameters>("{a: {type: string}, a: {type: string}}");
        assert!(dup.is_err());
    }
}
