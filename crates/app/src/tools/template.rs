//! Templates of declarative HTTP tools (the one syntax of [`steward_core::template`]): `{name}` stands for a
//! parameter's value (`{{` and `}}` for braces), `${VAR}` in a header for an environment variable, and a JSON
//! body template whose string `"{name}"` is the parameter's typed value.

use serde_json::{Map, Value};
pub(crate) use steward_core::template::Template;

/// Parses a template of an HTTP tool: its names are parameters (no `.`).
pub(crate) fn parse(text: &str) -> Result<Template, String> {
    let t = Template::parse(text)?;
    if let Some(name) = t.names().find(|n| !super::params::plain_name(n)) {
        return Err(format!(
            "`{{{name}}}` is not a parameter placeholder; write {{name}} with a declared parameter's name, or {{{{ and }}}} for braces"
        ));
    }
    Ok(t)
}

/// A JSON body template.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Body {
    /// A value without placeholders.
    Literal(Value),
    /// `"{name}"`: the parameter's value with its type (left out of an object when absent, else `null`).
    Param(String),
    /// A string with placeholders in it (an absent parameter counts as empty text).
    Text(Template),
    /// An array.
    Array(Vec<Body>),
    /// An object, in order.
    Object(Vec<(String, Body)>),
}

impl Body {
    /// Parses every string of a JSON value as a template.
    pub(crate) fn parse(value: &Value) -> Result<Self, String> {
        Ok(match value {
            Value::String(s) => {
                let t = parse(s)?;
                match t.sole_name() {
                    Some(name) => Self::Param(name.to_owned()),
                    None if t.names().next().is_none() => Self::Literal(value.clone()),
                    None => Self::Text(t),
                }
            }
            Value::Array(items) => {
                Self::Array(items.iter().map(Self::parse).collect::<Result<_, _>>()?)
            }
            Value::Object(map) => Self::Object(
                map.iter()
                    .map(|(k, v)| Ok((k.clone(), Self::parse(v)?)))
                    .collect::<Result<_, String>>()?,
            ),
            other => Self::Literal(other.clone()),
        })
    }

    /// The parameters it uses.
    pub(crate) fn params(&self, out: &mut Vec<String>) {
        match self {
            Self::Literal(_) => {}
            Self::Param(name) => out.push(name.clone()),
            Self::Text(t) => out.extend(t.names().map(str::to_owned)),
            Self::Array(items) => items.iter().for_each(|b| b.params(out)),
            Self::Object(members) => members.iter().for_each(|(_, b)| b.params(out)),
        }
    }

    /// The body for a call's arguments.
    pub(crate) fn render(&self, args: &Map<String, Value>) -> Value {
        match self {
            Self::Literal(v) => v.clone(),
            Self::Param(name) => args.get(name).cloned().unwrap_or(Value::Null),
            Self::Text(t) => Value::String(
                t.render(|n| Some(args.get(n).map(value_text).unwrap_or_default()))
                    .unwrap_or_default(),
            ),
            Self::Array(items) => Value::Array(items.iter().map(|b| b.render(args)).collect()),
            Self::Object(members) => Value::Object(
                members
                    .iter()
                    .filter(|(_, b)| !matches!(b, Self::Param(n) if !args.contains_key(n)))
                    .map(|(k, b)| (k.clone(), b.render(args)))
                    .collect(),
            ),
        }
    }
}

/// A parameter's value as text: strings as they are, numbers and booleans as JSON writes them.
pub(crate) fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `text` with every byte but the unreserved ones (`A-Z a-z 0-9 - . _ ~`) percent-encoded: safe as a path
/// segment and as a query value.
pub(crate) fn encode_component(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Replaces every `${VAR}` of a header value with the variable from `lookup`, adding each variable's value to
/// `secrets`; the error names the first variable that is not set.
pub(crate) fn expand_env(
    value: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
    secrets: &mut Vec<String>,
) -> Result<String, EnvProblem> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(EnvProblem::Syntax);
        };
        let name = &after[..end];
        let plain = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !plain {
            return Err(EnvProblem::Syntax);
        }
        let found = lookup(name).ok_or_else(|| EnvProblem::Missing(name.to_owned()))?;
        out.push_str(&found);
        if !found.is_empty() {
            secrets.push(found);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Why a header value could not be expanded.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum EnvProblem {
    /// This variable is not set.
    Missing(String),
    /// A `${` without a plain name and `}` after it.
    Syntax,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn templates_parse_and_render() {
        let t = parse("/users/{id}/posts{{x}}?q={q}").unwrap();
        assert_eq!(t.names().collect::<Vec<_>>(), ["id", "q"]);
        let out = t.render(|n| Some(format!("<{n}>"))).unwrap();
        assert_eq!(out, "/users/<id>/posts{x}?q=<q>");
        assert!(t.render(|_| None).is_none());
        assert!(parse("/a/{id").unwrap_err().contains("not closed"));
        assert!(parse("/a/{a b}").unwrap_err().contains("not a placeholder"));
        assert!(
            parse("/a/{principal.id}")
                .unwrap_err()
                .contains("not a parameter placeholder")
        );
        assert!(parse("/a/}").is_err());
    }

    #[test]
    fn bodies_keep_types_and_leave_out_absent_members() {
        let body =
            Body::parse(&json!({"n": "{n}", "s": "id-{n}", "fixed": 1, "list": ["{m}"]})).unwrap();
        let mut used = Vec::new();
        body.params(&mut used);
        assert_eq!(used, ["n", "n", "m"]);
        let args: Map<String, Value> = json!({"n": 5}).as_object().cloned().unwrap();
        assert_eq!(
            body.render(&args),
            json!({"n": 5, "s": "id-5", "fixed": 1, "list": [null]})
        );
        let none = Map::new();
        assert_eq!(
            body.render(&none),
            json!({"s": "id-", "fixed": 1, "list": [null]})
        );
    }

    #[test]
    fn components_are_percent_encoded_and_env_vars_expand() {
        assert_eq!(encode_component("a b/../?é&"), "a%20b%2F..%2F%3F%C3%A9%26");
        let lookup = |n: &str| (n == "TOKEN").then(|| "s3cret".to_owned());
        let mut secrets = Vec::new();
        let mut expand = |text: &str| expand_env(text, &lookup, &mut secrets);
        assert_eq!(expand("Bearer ${TOKEN}").unwrap(), "Bearer s3cret");
        assert_eq!(expand("${NOPE}"), Err(EnvProblem::Missing("NOPE".into())));
        assert_eq!(expand("${"), Err(EnvProblem::Syntax));
        assert_eq!(expand("$5 plain").unwrap(), "$5 plain");
        assert_eq!(secrets, ["s3cret"]);
    }
}
