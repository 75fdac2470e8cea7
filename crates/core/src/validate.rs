//! Validation of tool arguments before a tool runs.
//!
//! Every problem becomes a [`Violation`] that names the field and says how to fix it; together they form one
//! observation for the model. Nothing the model sends can panic or abort a run.

use std::fmt::Write as _;

use jsonschema::JsonType;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::paths::{Location, LocationSegment};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Error;
use crate::schema::accepts_null;

/// The kind of one argument problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ViolationKind {
    /// A required value is missing.
    Missing,
    /// A value is not among the allowed ones.
    Enum,
    /// A string does not match the required pattern.
    Pattern,
    /// A number is outside its allowed range.
    Range,
    /// A value has the wrong JSON type.
    Type,
    /// A string is not in the required format (date, e-mail, …).
    Format,
    /// A field the tool does not have.
    UnknownField,
    /// Anything else (length, item count, …).
    Other,
}

/// One problem with a tool call's arguments.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// What kind of problem it is.
    pub kind: ViolationKind,
    /// Where: a field path like `items[0].price`; empty for the arguments as a whole.
    pub path: String,
    /// What is wrong and how to fix it, in one sentence or two.
    pub message: String,
}

/// Why a tool call was not run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RejectionKind {
    /// No tool has that name.
    UnknownTool,
    /// The arguments are not valid JSON.
    InvalidJson,
    /// The arguments do not match the tool's schema.
    InvalidArguments,
}

/// A tool call refused before it ran, with the observation the model is shown.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejection {
    /// Why it was refused.
    pub kind: RejectionKind,
    /// Each problem found (empty for unknown tools and invalid JSON).
    pub violations: Vec<Violation>,
    /// The text the model is shown.
    pub observation: String,
}

impl Rejection {
    /// The refusal as a person reads it (the observation speaks to a model: "ask the user for them"): what is
    /// missing or wrong in the arguments of `tool`, field by field.
    pub fn for_person(&self, tool: &str) -> String {
        if self.violations.is_empty() {
            // The advice to call another tool is the model's.
            return self
                .observation
                .strip_suffix(" Call one of them by its exact name.")
                .unwrap_or(&self.observation)
                .to_owned();
        }
        let missing: Vec<&str> = self
            .violations
            .iter()
            .filter(|v| v.kind == ViolationKind::Missing)
            .map(|v| v.path.as_str())
            .collect();
        let mut out = format!("the arguments of `{tool}` do not fit its parameters:");
        if !missing.is_empty() {
            let _ = write!(out, "\n- missing: {}", missing.join(", "));
        }
        for v in self
            .violations
            .iter()
            .filter(|v| v.kind != ViolationKind::Missing)
        {
            if v.path.is_empty() {
                let _ = write!(out, "\n- {}", v.message);
            } else {
                let _ = write!(out, "\n- {}: {}", v.path, v.message);
            }
        }
        out
    }

    /// An unknown tool name; the observation lists the tools that exist.
    pub fn unknown_tool<'a>(name: &str, available: impl IntoIterator<Item = &'a str>) -> Self {
        let names: Vec<&str> = available.into_iter().collect();
        let list = if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        };
        Self {
            kind: RejectionKind::UnknownTool,
            violations: Vec::new(),
            observation: format!(
                "There is no tool named `{}`. Available tools: {list}. Call one of them by its exact name.",
                shorten(name, 64)
            ),
        }
    }
}

/// Most violations listed in one observation; the rest are counted.
const MAX_LISTED: usize = 12;

/// A compiled validator for one tool's argument schema.
#[derive(Debug)]
pub struct ArgumentValidator {
    schema: Value,
    validator: jsonschema::Validator,
}

impl ArgumentValidator {
    /// Compiles a validator for a canonical argument schema.
    pub fn new(schema: &Value) -> Result<Self, Error> {
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .build(schema)
            .map_err(|e| Error::InvalidSchema(e.to_string()))?;
        Ok(Self {
            schema: schema.clone(),
            validator,
        })
    }

    /// Parses and validates the raw arguments of a call to `tool`, returning the arguments to run it with.
    ///
    /// Leniencies, each of which models are known to need: empty text means `{}`; a JSON string that itself
    /// holds a JSON object is unwrapped; a top-level `null` for a parameter that does not accept `null` counts
    /// as not sent.
    pub fn check(&self, tool: &str, raw: &str) -> Result<Value, Rejection> {
        let mut args = parse_arguments(tool, raw)?;
        self.drop_nulls(&mut args);
        let mut violations: Vec<Violation> = Vec::new();
        for error in self.validator.iter_errors(&args) {
            let violation = self.describe(&error);
            if !violations.contains(&violation) {
                violations.push(violation);
            }
        }
        if violations.is_empty() {
            Ok(args)
        } else {
            Err(Rejection {
                kind: RejectionKind::InvalidArguments,
                observation: observation(tool, &violations),
                violations,
            })
        }
    }

    fn drop_nulls(&self, args: &mut Value) {
        let (Value::Object(map), Some(Value::Object(props))) =
            (args, self.schema.get("properties"))
        else {
            return;
        };
        map.retain(|key, value| !value.is_null() || props.get(key).is_some_and(accepts_null));
    }

    fn describe(&self, error: &jsonschema::ValidationError<'_>) -> Violation {
        let path = render_path(error.instance_path());
        let value = error.instance();
        let (kind, path, message) = match error.kind() {
            ValidationErrorKind::Required { property } => {
                let name = property
                    .as_str()
                    .map_or_else(|| property.to_string(), str::to_owned);
                (
                    ViolationKind::Missing,
                    join_path(&path, &name),
                    String::new(),
                )
            }
            ValidationErrorKind::Enum { options } => {
                let allowed = list_values(options);
                let hint = match (value.as_ref(), options.as_ref()) {
                    (Value::String(s), Value::Array(opts)) => opts
                        .iter()
                        .filter_map(Value::as_str)
                        .find(|o| o.eq_ignore_ascii_case(s))
                        .map(|o| format!(" Did you mean \"{o}\"?"))
                        .unwrap_or_default(),
                    _ => String::new(),
                };
                let message = format!(
                    "{} is not one of the allowed values: {allowed}. Use one of them exactly.{hint}",
                    show(value)
                );
                (ViolationKind::Enum, path, message)
            }
            ValidationErrorKind::AnyOf { context }
            | ValidationErrorKind::OneOfNotValid { context } => {
                // Enums whose variants carry descriptions come as one `const` branch per value.
                let allowed = self
                    .schema
                    .pointer(error.schema_path().as_str())
                    .map(|branches| {
                        let mut values = Vec::new();
                        collect_consts(branches, &mut values);
                        values
                    })
                    .unwrap_or_default();
                if !allowed.is_empty() {
                    let message = format!(
                        "{} is not one of the allowed values: {}. Use one of them exactly.",
                        show(value),
                        list_values(&Value::Array(allowed))
                    );
                    (ViolationKind::Enum, path, message)
                } else if let Some(inner) = closest_branch(context) {
                    // The branch that came closest says what is wrong.
                    return self.describe(inner);
                } else {
                    let message = format!(
                        "{}. Correct it to match the tool's parameters.",
                        error.masked_with("the value")
                    );
                    (ViolationKind::Other, path, message)
                }
            }
            ValidationErrorKind::Constant { expected_value } => {
                let message = format!("{} must be exactly {}.", show(value), show(expected_value));
                (ViolationKind::Enum, path, message)
            }
            ValidationErrorKind::Pattern { pattern } => {
                let message = format!(
                    "{} does not match the pattern {pattern}. Send a value that matches it.",
                    show(value)
                );
                (ViolationKind::Pattern, path, message)
            }
            ValidationErrorKind::Minimum { limit } => range(path, value, "at least", limit),
            ValidationErrorKind::ExclusiveMinimum { limit } => {
                range(path, value, "greater than", limit)
            }
            ValidationErrorKind::Maximum { limit } => range(path, value, "at most", limit),
            ValidationErrorKind::ExclusiveMaximum { limit } => {
                range(path, value, "less than", limit)
            }
            ValidationErrorKind::Type { kind } => {
                let expected = match kind {
                    TypeKind::Single(t) => type_name(*t).to_owned(),
                    // `null` only means "leave it out"; naming it would not help the model.
                    TypeKind::Multiple(set) => set
                        .iter()
                        .filter(|t| set.iter().count() == 1 || *t != JsonType::Null)
                        .map(type_name)
                        .collect::<Vec<_>>()
                        .join(" or "),
                };
                (ViolationKind::Type, path, type_message(value, &expected))
            }
            ValidationErrorKind::Format { format } => {
                let message = format!(
                    "{} is not a valid {format}. {}",
                    show(value),
                    format_hint(format)
                );
                (ViolationKind::Format, path, message)
            }
            ValidationErrorKind::AdditionalProperties { unexpected }
            | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                let allowed = self.allowed_fields(error.schema_path());
                let names = unexpected
                    .iter()
                    .map(|u| format!("`{}`", shorten(u, 40)))
                    .collect::<Vec<_>>()
                    .join(", ");
                let message = format!(
                    "unknown field {names}. The fields are: {allowed}. Remove it, or send its value under one of those names."
                );
                (ViolationKind::UnknownField, path, message)
            }
            _ => {
                let message = format!(
                    "{}. Correct it to match the tool's parameters.",
                    error.masked_with("the value")
                );
                (ViolationKind::Other, path, message)
            }
        };
        Violation {
            kind,
            path,
            message,
        }
    }

    /// The property names of the object schema that owns the failing `additionalProperties` keyword.
    fn allowed_fields(&self, schema_path: &Location) -> String {
        let pointer = schema_path.as_str();
        let parent = pointer.rsplit_once('/').map_or("", |(head, _)| head);
        match self
            .schema
            .pointer(parent)
            .and_then(|s| s.get("properties"))
        {
            Some(Value::Object(props)) if !props.is_empty() => props
                .keys()
                .map(|k| k.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            _ => "none".to_owned(),
        }
    }
}

/// The `const` and `enum` values of a schema and its `anyOf`/`oneOf` branches, `null` excepted.
fn collect_consts(schema: &Value, out: &mut Vec<Value>) {
    match schema {
        Value::Array(branches) => branches.iter().for_each(|b| collect_consts(b, out)),
        Value::Object(obj) => {
            if let Some(c) = obj.get("const").filter(|c| !c.is_null()) {
                out.push(c.clone());
            }
            if let Some(Value::Array(values)) = obj.get("enum") {
                out.extend(values.iter().filter(|v| !v.is_null()).cloned());
            }
            for key in ["anyOf", "oneOf"] {
                if let Some(branches) = obj.get(key) {
                    collect_consts(branches, out);
                }
            }
        }
        _ => {}
    }
}

/// The first error of the branch with the fewest errors, ignoring branches that only wanted `null`.
fn closest_branch<'e>(
    branches: &'e [Vec<jsonschema::ValidationError<'static>>],
) -> Option<&'e jsonschema::ValidationError<'static>> {
    branches
        .iter()
        .filter(|errors| {
            !errors.iter().all(|e| {
                matches!(
                    e.kind(),
                    ValidationErrorKind::Type {
                        kind: TypeKind::Single(JsonType::Null)
                    }
                )
            })
        })
        .min_by_key(|errors| errors.len())
        .and_then(|errors| errors.first())
}

/// Parses the raw argument text of a call.
fn parse_arguments(tool: &str, raw: &str) -> Result<Value, Rejection> {
    let text = raw.trim();
    if text.is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::String(inner)) => match serde_json::from_str::<Value>(&inner) {
            Ok(object @ Value::Object(_)) => Ok(object),
            _ => Ok(Value::String(inner)),
        },
        Ok(value) => Ok(value),
        Err(e) => Err(Rejection {
            kind: RejectionKind::InvalidJson,
            violations: Vec::new(),
            observation: format!(
                "The arguments for `{tool}` are not valid JSON ({e}): {}. Send one JSON object with the tool's parameters.",
                show_text(text, 200)
            ),
        }),
    }
}

fn observation(tool: &str, violations: &[Violation]) -> String {
    let missing: Vec<&str> = violations
        .iter()
        .filter(|v| v.kind == ViolationKind::Missing)
        .map(|v| v.path.as_str())
        .collect();
    let missing_line = (!missing.is_empty()).then(|| {
        format!(
            "Missing values: {}. Ask the user for them or use a tool that provides them.",
            missing.join(", ")
        )
    });
    let others: Vec<&Violation> = violations
        .iter()
        .filter(|v| v.kind != ViolationKind::Missing)
        .collect();
    if others.is_empty() {
        return missing_line.unwrap_or_default();
    }
    let mut out = format!("Invalid arguments for `{tool}`:");
    if let Some(line) = missing_line {
        let _ = write!(out, "\n- {line}");
    }
    for v in others.iter().take(MAX_LISTED) {
        if v.path.is_empty() {
            let _ = write!(out, "\n- {}", v.message);
        } else {
            let _ = write!(out, "\n- {}: {}", v.path, v.message);
        }
    }
    if others.len() > MAX_LISTED {
        let _ = write!(out, "\n- … and {} more", others.len() - MAX_LISTED);
    }
    out
}

fn range(
    path: String,
    value: &Value,
    relation: &str,
    limit: &Value,
) -> (ViolationKind, String, String) {
    let message = format!(
        "{} is out of range: it must be {relation} {limit}. Send a number {relation} {limit}.",
        show(value)
    );
    (ViolationKind::Range, path, message)
}

fn type_name(t: JsonType) -> &'static str {
    match t {
        JsonType::Null => "null",
        JsonType::Boolean => "a boolean",
        JsonType::Integer => "an integer",
        JsonType::Number => "a number",
        JsonType::String => "a string",
        JsonType::Array => "an array",
        JsonType::Object => "an object",
    }
}

fn type_message(value: &Value, expected: &str) -> String {
    let actual = match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    let unquote = matches!(value, Value::String(s) if s.trim().parse::<f64>().is_ok())
        && (expected.contains("number") || expected.contains("integer"));
    let fix = if unquote {
        "Send the number without quotes.".to_owned()
    } else {
        format!("Send {expected}.")
    };
    format!("expected {expected}, got {actual} ({}). {fix}", show(value))
}

fn format_hint(format: &str) -> &'static str {
    match format {
        "date" => "Use the form YYYY-MM-DD, e.g. 2024-05-31.",
        "date-time" => "Use RFC 3339, e.g. 2024-05-31T14:30:00Z.",
        "time" => "Use the form HH:MM:SS with an offset, e.g. 14:30:00Z.",
        "email" => "Send an e-mail address like name@example.com.",
        "uuid" => "Send a UUID like 123e4567-e89b-12d3-a456-426614174000.",
        _ => "Correct it to match the format.",
    }
}

fn list_values(options: &Value) -> String {
    match options {
        Value::Array(items) => items
            .iter()
            .filter(|v| !v.is_null())
            .map(show)
            .collect::<Vec<_>>()
            .join(", "),
        other => show(other),
    }
}

/// `items/0/price` → `items[0].price`.
fn render_path(location: &Location) -> String {
    let mut out = String::new();
    for segment in location {
        match segment {
            LocationSegment::Property(p) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&p);
            }
            LocationSegment::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
        }
    }
    out
}

fn join_path(parent: &str, child: &str) -> String {
    if parent.is_empty() {
        child.to_owned()
    } else {
        format!("{parent}.{child}")
    }
}

/// A value as compact JSON, cut to a readable length.
fn show(value: &Value) -> String {
    show_text(&value.to_string(), 80)
}

fn show_text(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let head: String = text.chars().take(max).collect();
        format!("{head}…")
    }
}

fn shorten(text: &str, max: usize) -> String {
    show_text(text, max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An unknown tool is said to a person without the advice to the model.
    #[test]
    fn an_unknown_tool_is_said_to_a_person_without_the_model_s_advice() {
        let rejection = Rejection::unknown_tool("fly", ["run_sql", "calculator"]);
        assert!(
            rejection
                .observation
                .ends_with("Call one of them by its exact name.")
        );
        assert_eq!(
            rejection.for_person("fly"),
            "There is no tool named `fly`. Available tools: run_sql, calculator."
        );
    }

    fn validator() -> ArgumentValidator {
        ArgumentValidator::new(&json!({
            "type": "object",
            "properties": {
                "code": {"type": "string", "pattern": "^[A-Z]{10}$"},
                "status": {"type": "string", "enum": ["open", "closed"]},
                "rate": {"type": "number", "minimum": 0, "maximum": 1},
                "count": {"type": "integer"},
                "day": {"type": "string", "format": "date"},
                "note": {"type": ["string", "null"]},
                "items": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"price": {"type": "number"}},
                    "required": ["price"],
                    "additionalProperties": false
                }}
            },
            "required": ["code", "rate"],
            "additionalProperties": false
        }))
        .unwrap()
    }

    fn rejected(raw: &str) -> Rejection {
        validator().check("t", raw).unwrap_err()
    }

    #[test]
    fn valid_arguments_pass_through() {
        let args = validator()
            .check("t", r#"{"code":"ABCDEFGHIJ","rate":0.2,"note":null}"#)
            .unwrap();
        assert_eq!(args, json!({"code":"ABCDEFGHIJ","rate":0.2,"note":null}));
    }

    #[test]
    fn missing_values_form_one_line() {
        let r = rejected("{}");
        assert_eq!(
            r.observation,
            "Missing values: code, rate. Ask the user for them or use a tool that provides them."
        );
        assert!(
            r.violations
                .iter()
                .all(|v| v.kind == ViolationKind::Missing)
        );
    }

    #[test]
    fn null_for_a_required_value_counts_as_missing() {
        let r = rejected(r#"{"code":"ABCDEFGHIJ","rate":null}"#);
        assert_eq!(r.violations.len(), 1);
        assert_eq!(r.violations[0].kind, ViolationKind::Missing);
        assert_eq!(r.violations[0].path, "rate");
    }

    #[test]
    fn nested_paths_are_readable() {
        let r = rejected(r#"{"code":"ABCDEFGHIJ","rate":0,"items":[{"price":1},{"prise":2}]}"#);
        let paths: Vec<_> = r
            .violations
            .iter()
            .map(|v| (v.kind, v.path.as_str()))
            .collect();
        assert!(
            paths.contains(&(ViolationKind::Missing, "items[1].price")),
            "{paths:?}"
        );
        assert!(
            paths.contains(&(ViolationKind::UnknownField, "items[1]")),
            "{paths:?}"
        );
        assert!(
            r.observation.contains("The fields are: price."),
            "{}",
            r.observation
        );
    }

    #[test]
    fn format_violation_names_the_form() {
        let r = rejected(r#"{"code":"ABCDEFGHIJ","rate":0,"day":"31/05/2024"}"#);
        assert_eq!(r.violations[0].kind, ViolationKind::Format);
        assert!(r.observation.contains("YYYY-MM-DD"), "{}", r.observation);
    }

    #[test]
    fn quoted_number_gets_the_unquote_hint() {
        let r = rejected(r#"{"code":"ABCDEFGHIJ","rate":"0.2"}"#);
        assert_eq!(r.violations[0].kind, ViolationKind::Type);
        assert!(
            r.observation.contains("without quotes"),
            "{}",
            r.observation
        );
    }

    #[test]
    fn empty_text_is_an_empty_object_and_double_encoding_is_unwrapped() {
        assert_eq!(rejected("  ").kind, RejectionKind::InvalidArguments);
        let args = validator()
            .check("t", r#""{\"code\":\"ABCDEFGHIJ\",\"rate\":1}""#)
            .unwrap();
        assert_eq!(args["rate"], 1);
    }

    #[test]
    fn non_object_arguments_are_a_type_error_at_the_root() {
        let r = rejected("[1,2]");
        assert_eq!(r.violations[0].kind, ViolationKind::Type);
        assert_eq!(r.violations[0].path, "");
        assert!(
            r.observation.contains("expected an object"),
            "{}",
            r.observation
        );
    }

    #[test]
    fn documented_enum_variants_are_listed_like_an_enum() {
        let v = ArgumentValidator::new(&json!({
            "type": "object",
            "properties": {
                "status": {"anyOf": [
                    {"oneOf": [{"const": "OPEN", "description": "Open."}, {"const": "DONE", "description": "Done."}]},
                    {"type": "null"}
                ]},
                "when": {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]}
            }
        }))
        .unwrap();
        let r = v.check("t", r#"{"status": "LOST"}"#).unwrap_err();
        assert_eq!(r.violations[0].kind, ViolationKind::Enum);
        assert!(
            r.observation
                .contains("status: \"LOST\" is not one of the allowed values: \"OPEN\", \"DONE\"."),
            "{}",
            r.observation
        );
        // Without values to list, the closest branch explains.
        let r = v.check("t", r#"{"when": "31/12/2026"}"#).unwrap_err();
        assert_eq!(
            r.violations[0].kind,
            ViolationKind::Format,
            "{}",
            r.observation
        );
        assert!(r.observation.contains("YYYY-MM-DD"), "{}", r.observation);
    }

    #[test]
    fn huge_and_hostile_input_is_cut_not_echoed_whole() {
        let long = "x".repeat(100_000);
        let r = rejected(&format!(r#"{{"code":"{long}","rate":0}}"#));
        assert!(r.observation.len() < 1_000, "{}", r.observation.len());
        let r = rejected(&format!("{{{long}"));
        assert_eq!(r.kind, RejectionKind::InvalidJson);
        assert!(r.observation.len() < 1_000);
    }
}
