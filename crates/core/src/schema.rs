//! Argument schemas: generated from Rust types, and rendered for the model in the style its provider needs.
//!
//! The *canonical* schema (in [`crate::ToolSpec::parameters`]) is what the validator checks. The model may be
//! shown a different rendering of it:
//! - **lenient**: every top-level parameter optional, so the model sends only what it knows and the validator
//!   reports what is missing instead of the model inventing it;
//! - **strict**: the form providers with enforced schemas require (OpenAI structured outputs):
//!   `additionalProperties: false` on every object, every property listed in `required` (optional ones made
//!   nullable), no siblings beside `$ref`, and only the keywords such providers accept.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

/// How a schema is rendered for the model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SchemaStyle {
    /// Plain JSON Schema (lenient tools show every top-level parameter as optional).
    #[default]
    Standard,
    /// The restricted form of providers that enforce schemas (OpenAI `strict: true`).
    Strict,
}

/// The JSON Schema (draft 2020-12) of a Rust type, with subschemas inlined and doc comments as descriptions.
pub fn schema_for<T: JsonSchema>() -> Value {
    SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// Renders a canonical schema for the model.
pub fn render(schema: &Value, style: SchemaStyle, lenient: bool) -> Value {
    let mut out = schema.clone();
    if let Value::Object(root) = &mut out {
        root.remove("$schema");
        root.remove("title");
    }
    match style {
        SchemaStyle::Standard => {
            if lenient && let Value::Object(root) = &mut out {
                root.remove("required");
            }
        }
        SchemaStyle::Strict => strictify(&mut out, lenient),
    }
    out
}

/// Formats that providers with strict schemas accept; others (e.g. schemars' `uint32`) are dropped.
const STRICT_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

fn strictify(schema: &mut Value, all_optional: bool) {
    let Value::Object(obj) = schema else {
        return;
    };
    obj.remove("default");
    obj.remove("$schema");
    if let Some(Value::String(format)) = obj.get("format")
        && !STRICT_FORMATS.contains(&format.as_str())
    {
        obj.remove("format");
    }
    if let Some(one_of) = obj.remove("oneOf") {
        obj.insert("anyOf".to_owned(), one_of);
    }
    if obj.contains_key("$ref") && obj.len() > 1 {
        let reference = obj.remove("$ref").unwrap_or(Value::Null);
        obj.insert("anyOf".to_owned(), json!([{ "$ref": reference }]));
    }
    for key in ["anyOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(items)) = obj.get_mut(key) {
            items.iter_mut().for_each(|s| strictify(s, false));
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub @ Value::Object(_)) = obj.get_mut(key) {
            strictify(sub, false);
        }
    }
    if let Some(Value::Object(defs)) = obj.get_mut("$defs") {
        defs.values_mut().for_each(|s| strictify(s, false));
    }
    let is_object = obj.contains_key("properties") || obj.get("type") == Some(&json!("object"));
    if !is_object {
        return;
    }
    let required: Vec<String> = match obj.get("required") {
        Some(Value::Array(names)) if !all_optional => names
            .iter()
            .filter_map(|n| n.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    let properties = obj
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    let mut names = Vec::new();
    if let Value::Object(props) = properties {
        for (name, prop) in props.iter_mut() {
            strictify(prop, false);
            if !required.contains(name) {
                make_nullable(prop);
            }
            names.push(Value::String(name.clone()));
        }
    }
    obj.insert("required".to_owned(), Value::Array(names));
    obj.insert("additionalProperties".to_owned(), Value::Bool(false));
}

/// Whether a schema accepts `null` on its face (a `null` type, or a `null` branch of `anyOf`/`oneOf`).
pub(crate) fn accepts_null(schema: &Value) -> bool {
    let Value::Object(obj) = schema else {
        return true; // `true` schema
    };
    match obj.get("type") {
        Some(Value::String(t)) => return t == "null",
        Some(Value::Array(types)) => return types.iter().any(|t| t == "null"),
        _ => {}
    }
    ["anyOf", "oneOf"].iter().any(|key| match obj.get(*key) {
        Some(Value::Array(branches)) => branches.iter().any(accepts_null),
        _ => false,
    }) || obj.get("const") == Some(&Value::Null)
}

fn make_nullable(schema: &mut Value) {
    if accepts_null(schema) {
        return;
    }
    let Value::Object(obj) = schema else {
        return;
    };
    match obj.get_mut("type") {
        Some(Value::String(t)) => {
            let single = std::mem::take(t);
            obj.insert("type".to_owned(), json!([single, "null"]));
            if let Some(Value::Array(options)) = obj.get_mut("enum")
                && !options.contains(&Value::Null)
            {
                options.push(Value::Null);
            }
        }
        Some(Value::Array(types)) => types.push(json!("null")),
        _ => {
            if let Some(Value::Array(branches)) = obj.get_mut("anyOf") {
                branches.push(json!({ "type": "null" }));
            } else {
                let description = obj.remove("description");
                let inner = Value::Object(std::mem::take(obj));
                obj.insert("anyOf".to_owned(), json!([inner, { "type": "null" }]));
                if let Some(d) = description {
                    obj.insert("description".to_owned(), d);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(schemars::JsonSchema, serde::Deserialize)]
    #[allow(dead_code)]
    /// Record an expense.
    struct Expense {
        /// What was bought.
        description: String,
        /// Gross amount in the account's currency.
        gross_amount: f64,
        /// Optional note.
        note: Option<String>,
        /// Kind.
        kind: Kind,
        /// Lines.
        #[serde(default)]
        lines: Vec<Line>,
    }

    #[derive(schemars::JsonSchema, serde::Deserialize)]
    #[allow(dead_code)]
    enum Kind {
        Food,
        Travel,
    }

    #[derive(schemars::JsonSchema, serde::Deserialize)]
    #[allow(dead_code)]
    struct Line {
        amount: u32,
        label: Option<String>,
    }

    #[test]
    fn generated_schema_carries_doc_comments_and_required() {
        let s = schema_for::<Expense>();
        assert_eq!(
            s["properties"]["description"]["description"],
            "What was bought."
        );
        assert_eq!(
            s["required"],
            json!(["description", "gross_amount", "kind"])
        );
        assert!(s.get("$defs").is_none(), "subschemas are inlined: {s}");
    }

    #[test]
    fn lenient_standard_rendering_has_no_required() {
        let s = schema_for::<Expense>();
        let r = render(&s, SchemaStyle::Standard, true);
        assert!(r.get("required").is_none());
        assert!(r.get("$schema").is_none() && r.get("title").is_none());
        let not_lenient = render(&s, SchemaStyle::Standard, false);
        assert_eq!(not_lenient["required"], s["required"]);
    }

    #[test]
    fn strict_rendering_lists_everything_and_nulls_optionals() {
        let s = schema_for::<Expense>();
        let r = render(&s, SchemaStyle::Strict, false);
        assert_eq!(r["additionalProperties"], false);
        assert_eq!(
            r["required"],
            json!(["description", "gross_amount", "note", "kind", "lines"])
        );
        assert_eq!(r["properties"]["description"]["type"], "string");
        assert_eq!(r["properties"]["note"]["type"], json!(["string", "null"]));
        assert_eq!(r["properties"]["lines"]["type"], json!(["array", "null"]));
        let line = &r["properties"]["lines"]["items"];
        assert_eq!(line["additionalProperties"], false);
        assert_eq!(line["required"], json!(["amount", "label"]));
        assert!(line["properties"]["amount"].get("format").is_none());
        assert!(!r.to_string().contains("\"default\""));
    }

    #[test]
    fn strict_lenient_makes_every_top_level_property_nullable() {
        let s = schema_for::<Expense>();
        let r = render(&s, SchemaStyle::Strict, true);
        assert_eq!(
            r["properties"]["gross_amount"]["type"],
            json!(["number", "null"])
        );
        let kind = &r["properties"]["kind"];
        assert!(accepts_null(kind), "{kind}");
        if let Some(options) = kind.get("enum") {
            assert!(options.as_array().unwrap().contains(&Value::Null));
        }
    }

    #[test]
    fn strict_ref_with_siblings_is_wrapped() {
        let mut s = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A", "description": "x"}},
                            "required": ["a"], "$defs": {"A": {"type": "string"}}});
        strictify(&mut s, false);
        assert_eq!(
            s["properties"]["a"],
            json!({"description": "x", "anyOf": [{"$ref": "#/$defs/A"}]})
        );
    }
}
