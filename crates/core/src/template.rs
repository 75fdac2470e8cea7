//! The one template syntax of Steward's configuration: `{name}` stands for a value (`{principal.NAME}` in row
//! filters, a parameter in HTTP tools, `{schema}` in agent instructions), `{{` and `}}` are braces. A template is
//! parsed once, where the configuration is read (a mistake names itself there), and rendered in one pass: a
//! value is never read as a template again, so a table comment or a principal's attribute holding `{rules}` stays
//! that text.
//!
//! ```
//! use steward_core::template::Template;
//!
//! let t = Template::parse("Hello {who}, {{braces}} stay")?;
//! assert_eq!(t.names().collect::<Vec<_>>(), ["who"]);
//! let text = t.render(|name| (name == "who").then(|| "{who}".to_owned()));
//! assert_eq!(text.as_deref(), Some("Hello {who}, {braces} stay"));
//! # Ok::<(), String>(())
//! ```

/// One piece of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Text as written (braces unescaped).
    Text(String),
    /// A placeholder's name: letters, digits and `_`, in parts joined by `.` (`principal.region`).
    Name(String),
}

/// A parsed template.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Template(Vec<Piece>);

impl Template {
    /// Parses `text`; the error says what is wrong and how to write it.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '{' if chars.peek() == Some(&'{') => {
                    chars.next();
                    literal.push('{');
                }
                '}' if chars.peek() == Some(&'}') => {
                    chars.next();
                    literal.push('}');
                }
                '{' => {
                    let mut name = String::new();
                    loop {
                        match chars.next() {
                            Some('}') => break,
                            Some(c) => name.push(c),
                            None => {
                                return Err(format!(
                                    "`{{{name}` is not closed; write {{name}} for a value, or {{{{ for a brace"
                                ));
                            }
                        }
                    }
                    if !is_name(&name) {
                        return Err(format!(
                            "`{{{name}}}` is not a placeholder (a name of letters, digits and _, parts joined by .); \
                             write {{{{ and }}}} for braces"
                        ));
                    }
                    if !literal.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut literal)));
                    }
                    pieces.push(Piece::Name(name));
                }
                '}' => return Err("a lone `}`; write }} for a brace".to_owned()),
                c => literal.push(c),
            }
        }
        if !literal.is_empty() {
            pieces.push(Piece::Text(literal));
        }
        Ok(Self(pieces))
    }

    /// Its pieces, in order.
    pub fn pieces(&self) -> &[Piece] {
        &self.0
    }

    /// The names it uses, in order (repeats included).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().filter_map(|p| match p {
            Piece::Name(name) => Some(name.as_str()),
            Piece::Text(_) => None,
        })
    }

    /// The name when the template is exactly one `{name}`.
    pub fn sole_name(&self) -> Option<&str> {
        match self.0.as_slice() {
            [Piece::Name(name)] => Some(name),
            _ => None,
        }
    }

    /// The text with each name's value as `value` gives it, in one pass; `None` when a name has no value.
    pub fn render(&self, value: impl Fn(&str) -> Option<String>) -> Option<String> {
        let mut out = String::new();
        for piece in &self.0 {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Name(name) => out.push_str(&value(name)?),
            }
        }
        Some(out)
    }
}

/// Letters, digits and `_` (not starting with a digit), in parts joined by `.`.
fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|part| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_braces_and_mistakes() {
        let t = Template::parse("a {x} {{b}} {principal.region}").unwrap_or_default();
        assert_eq!(t.names().collect::<Vec<_>>(), ["x", "principal.region"]);
        assert_eq!(
            t.render(|n| Some(format!("<{n}>"))).as_deref(),
            Some("a <x> {b} <principal.region>")
        );
        for bad in ["{", "{x", "}", "{1x}", "{a b}", "{\"a\": 1}", "{}", "{a.}"] {
            assert!(Template::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_value_is_never_expanded_again() {
        let t = Template::parse("{schema} / {rules}").unwrap_or_default();
        let out = t.render(|n| {
            Some(
                if n == "schema" {
                    "t -- says {rules}"
                } else {
                    "R"
                }
                .to_owned(),
            )
        });
        assert_eq!(out.as_deref(), Some("t -- says {rules} / R"));
    }
}
