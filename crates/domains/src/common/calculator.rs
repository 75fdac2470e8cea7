//! `calculator`: a safe arithmetic evaluator. It parses the expression itself (never code execution): numbers,
//! `+ - * / ^ %`, parentheses, a few functions and constants.

use schemars::JsonSchema;
use serde::Deserialize;
use steward_core::{Tool, ToolError, ToolOutput, TypedTool};

/// Arguments of `calculator`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CalculatorArgs {
    /// The expression, e.g. `(5 * 1.2) / 3` or `47^0.23`. Operators: + - * / ^ (power) % (remainder) and
    /// parentheses; functions: sqrt, abs, ln, log (base 10), log2, exp, round, floor, ceil, min, max, pow, sin,
    /// cos, tan, asin, acos, atan; constants: pi, e.
    #[schemars(length(min = 1, max = 500))]
    pub expression: String,
}

/// The `calculator` tool.
pub fn calculator() -> impl Tool {
    TypedTool::new(
        "calculator",
        "Evaluates an arithmetic expression exactly as written and returns the number. Use it for every \
         calculation instead of doing arithmetic yourself.",
        |_ctx, args: CalculatorArgs| async move {
            let value = evaluate(&args.expression).map_err(ToolError::new)?;
            Ok(ToolOutput::text(format!("{} = {}", args.expression.trim(), format_number(value))))
        },
    )
    .read_only()
    .idempotent()
}

/// Longest expression accepted.
const MAX_LEN: usize = 500;
/// Deepest nesting accepted (keeps the parser's recursion bounded).
const MAX_DEPTH: usize = 64;

/// Evaluates an expression; the error says what is wrong and where.
pub fn evaluate(expression: &str) -> Result<f64, String> {
    if expression.chars().count() > MAX_LEN {
        return Err(format!(
            "The expression is longer than {MAX_LEN} characters; split it into steps."
        ));
    }
    let tokens = tokenize(expression)?;
    if tokens.is_empty() {
        return Err("The expression is empty.".to_owned());
    }
    let mut parser = Parser {
        tokens: &tokens,
        pos: 0,
        depth: 0,
        source: expression,
    };
    let value = parser.expression()?;
    if let Some(token) = parser.tokens.get(parser.pos) {
        return Err(parser.unexpected(token));
    }
    if value.is_finite() {
        Ok(value)
    } else {
        Err(format!("`{}` has no finite result.", expression.trim()))
    }
}

/// A number for people: integers without a fraction, others with up to 12 significant digits.
pub fn format_number(value: f64) -> String {
    if value == value.trunc() && value.abs() < 1e15 {
        return format!("{}", value as i64);
    }
    let text = format!("{value:.11e}");
    let parsed: f64 = text.parse().unwrap_or(value);
    let plain = format!("{parsed}");
    if plain.len() <= 24 {
        plain
    } else {
        format!("{parsed:e}")
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Number(f64),
    Name(String),
    Op(char),
    Open,
    Close,
    Comma,
}

#[derive(Clone, Debug)]
struct Spanned {
    token: Token,
    at: usize,
}

fn tokenize(text: &str) -> Result<Vec<Spanned>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let at = i;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let token = if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_digit() || chars[i] == '.' || chars[i] == '_')
            {
                i += 1;
            }
            if i < chars.len() && (chars[i] == 'e' || chars[i] == 'E') {
                let mut j = i + 1;
                if j < chars.len() && (chars[j] == '+' || chars[j] == '-') {
                    j += 1;
                }
                if j < chars.len() && chars[j].is_ascii_digit() {
                    i = j;
                    while i < chars.len() && chars[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let literal: String = chars[start..i].iter().filter(|c| **c != '_').collect();
            let n = literal
                .parse::<f64>()
                .map_err(|_| format!("`{literal}` at position {} is not a number.", start + 1))?;
            out.push(Spanned {
                token: Token::Number(n),
                at,
            });
            continue;
        } else if c.is_alphabetic() {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let name: String = chars[start..i].iter().collect::<String>().to_lowercase();
            out.push(Spanned {
                token: Token::Name(name),
                at,
            });
            continue;
        } else {
            match c {
                '+' | '-' | '*' | '/' | '^' | '%' => Token::Op(c),
                '×' => Token::Op('*'),
                '÷' => Token::Op('/'),
                '(' | '[' => Token::Open,
                ')' | ']' => Token::Close,
                ',' => Token::Comma,
                _ => {
                    return Err(format!(
                        "`{c}` at position {} is not allowed. Use numbers, + - * / ^ %, parentheses and the listed functions.",
                        i + 1
                    ));
                }
            }
        };
        // `**` means power.
        if token == Token::Op('*') && chars.get(i + 1) == Some(&'*') {
            out.push(Spanned {
                token: Token::Op('^'),
                at,
            });
            i += 2;
            continue;
        }
        out.push(Spanned { token, at });
        i += 1;
    }
    Ok(out)
}

struct Parser<'a> {
    tokens: &'a [Spanned],
    pos: usize,
    depth: usize,
    source: &'a str,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos).map(|s| &s.token)
    }

    fn unexpected(&self, spanned: &Spanned) -> String {
        let what = match &spanned.token {
            Token::Number(n) => format_number(*n),
            Token::Name(n) => n.clone(),
            Token::Op(c) => c.to_string(),
            Token::Open => "(".into(),
            Token::Close => ")".into(),
            Token::Comma => ",".into(),
        };
        format!(
            "Unexpected `{what}` at position {} in `{}`.",
            spanned.at + 1,
            self.source.trim()
        )
    }

    fn end(&self) -> String {
        format!(
            "`{}` ends too early: a number or `(` is missing at the end.",
            self.source.trim()
        )
    }

    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!(
                "The expression is nested more than {MAX_DEPTH} levels deep."
            ));
        }
        Ok(())
    }

    /// sum := product (('+' | '-') product)*
    fn expression(&mut self) -> Result<f64, String> {
        self.enter()?;
        let mut value = self.product()?;
        while let Some(Token::Op(op @ ('+' | '-'))) = self.peek() {
            let op = *op;
            self.pos += 1;
            let rhs = self.product()?;
            value = if op == '+' { value + rhs } else { value - rhs };
        }
        self.depth -= 1;
        Ok(value)
    }

    /// product := unary (('*' | '/' | '%') unary | implicit-multiplication)*
    fn product(&mut self) -> Result<f64, String> {
        let mut value = self.unary()?;
        loop {
            match self.peek() {
                Some(Token::Op(op @ ('*' | '/' | '%'))) => {
                    let op = *op;
                    self.pos += 1;
                    let rhs = self.unary()?;
                    value = match op {
                        '*' => value * rhs,
                        _ if rhs == 0.0 => return Err("Division by zero.".to_owned()),
                        '/' => value / rhs,
                        _ => value % rhs,
                    };
                }
                // 2(3 + 4) and 2pi
                Some(Token::Open | Token::Name(_)) => value *= self.unary()?,
                _ => return Ok(value),
            }
        }
    }

    /// unary := ('-' | '+') unary | power
    fn unary(&mut self) -> Result<f64, String> {
        match self.peek() {
            Some(Token::Op('-')) => {
                self.pos += 1;
                self.enter()?;
                let v = -self.unary()?;
                self.depth -= 1;
                Ok(v)
            }
            Some(Token::Op('+')) => {
                self.pos += 1;
                self.unary()
            }
            _ => self.power(),
        }
    }

    /// power := atom ('^' unary)?   (right-associative: 2^3^2 = 2^9)
    fn power(&mut self) -> Result<f64, String> {
        let base = self.atom()?;
        if let Some(Token::Op('^')) = self.peek() {
            self.pos += 1;
            self.enter()?;
            let exponent = self.unary()?;
            self.depth -= 1;
            return Ok(base.powf(exponent));
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<f64, String> {
        let Some(spanned) = self.tokens.get(self.pos) else {
            return Err(self.end());
        };
        self.pos += 1;
        match &spanned.token {
            Token::Number(n) => Ok(*n),
            Token::Open => {
                let v = self.expression()?;
                match self.peek() {
                    Some(Token::Close) => {
                        self.pos += 1;
                        Ok(v)
                    }
                    _ => Err(format!("A `)` is missing in `{}`.", self.source.trim())),
                }
            }
            Token::Name(name) => self.name(name, spanned.at),
            _ => Err(self.unexpected(spanned)),
        }
    }

    fn name(&mut self, name: &str, at: usize) -> Result<f64, String> {
        match name {
            "pi" | "π" => return Ok(std::f64::consts::PI),
            "e" => return Ok(std::f64::consts::E),
            _ => {}
        }
        if self.peek() != Some(&Token::Open) {
            return Err(format!(
                "Unknown name `{name}` at position {}. Known: pi, e, and functions called with parentheses, like sqrt(2).",
                at + 1
            ));
        }
        self.pos += 1;
        let mut args = Vec::new();
        if self.peek() != Some(&Token::Close) {
            loop {
                args.push(self.expression()?);
                match self.peek() {
                    Some(Token::Comma) => self.pos += 1,
                    _ => break,
                }
            }
        }
        match self.peek() {
            Some(Token::Close) => self.pos += 1,
            _ => return Err(format!("A `)` is missing after the arguments of `{name}`.")),
        }
        let one = |f: fn(f64) -> f64| match args.as_slice() {
            [x] => Ok(f(*x)),
            _ => Err(format!("`{name}` takes one argument, got {}.", args.len())),
        };
        match name {
            "sqrt" => match args.as_slice() {
                [x] if *x < 0.0 => {
                    Err("The square root of a negative number is not a real number.".to_owned())
                }
                _ => one(f64::sqrt),
            },
            "abs" => one(f64::abs),
            "ln" => one(f64::ln),
            "log" | "log10" => one(f64::log10),
            "log2" => one(f64::log2),
            "exp" => one(f64::exp),
            "round" => match args.as_slice() {
                [x, digits] => {
                    let factor = 10f64.powi(*digits as i32);
                    Ok((x * factor).round() / factor)
                }
                _ => one(f64::round),
            },
            "floor" => one(f64::floor),
            "ceil" => one(f64::ceil),
            "sin" => one(f64::sin),
            "cos" => one(f64::cos),
            "tan" => one(f64::tan),
            "asin" => one(f64::asin),
            "acos" => one(f64::acos),
            "atan" => one(f64::atan),
            "pow" => match args.as_slice() {
                [b, x] => Ok(b.powf(*x)),
                _ => Err(format!("`pow` takes two arguments, got {}.", args.len())),
            },
            "min" | "max" if !args.is_empty() => {
                let fold = if name == "min" { f64::min } else { f64::max };
                Ok(args.iter().copied().fold(args[0], fold))
            }
            "min" | "max" => Err(format!("`{name}` needs at least one argument.")),
            _ => Err(format!(
                "Unknown function `{name}` at position {}. Known: sqrt, abs, ln, log, log2, exp, round, floor, ceil, min, max, pow, sin, cos, tan, asin, acos, atan.",
                at + 1
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(expr: &str, expected: f64) {
        let v = evaluate(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
        assert!(
            (v - expected).abs() < 1e-9 * expected.abs().max(1.0),
            "{expr} = {v}, expected {expected}"
        );
    }

    #[test]
    fn arithmetic() {
        close("47^0.23", 47f64.powf(0.23));
        close("1 + 2 * 3", 7.0);
        close("(1 + 2) * 3", 9.0);
        close("2^3^2", 512.0);
        close("-2^2", -4.0);
        close("2 ** 10", 1024.0);
        close("5 * 1.2", 6.0);
        close("10 % 4", 2.0);
        close("2(3 + 4)", 14.0);
        close("2pi", 2.0 * std::f64::consts::PI);
        close("sqrt(16) + max(1, 5, 3) - min(2, -1)", 10.0);
        close("round(2.34567, 2)", 2.35);
        close("1_000 * 1.5e3", 1_500_000.0);
        close(".5 + 0.25", 0.75);
    }

    #[test]
    fn errors_say_what_and_where() {
        assert_eq!(evaluate("1 / 0").unwrap_err(), "Division by zero.");
        assert!(evaluate("2 + (3").unwrap_err().contains("A `)` is missing"));
        assert!(
            evaluate("2 + 3)")
                .unwrap_err()
                .contains("Unexpected `)` at position 6")
        );
        assert!(evaluate("2 +").unwrap_err().contains("ends too early"));
        assert!(
            evaluate("import os")
                .unwrap_err()
                .contains("Unknown name `import`")
        );
        assert!(
            evaluate("__import__('os')")
                .unwrap_err()
                .contains("not allowed")
        );
        assert!(evaluate("sqrt(-1)").unwrap_err().contains("negative"));
        assert!(
            evaluate("foo(1)")
                .unwrap_err()
                .contains("Unknown function `foo`")
        );
        assert!(evaluate("10^400").unwrap_err().contains("no finite result"));
        assert!(
            evaluate(&"(".repeat(100))
                .unwrap_err()
                .contains("nested more than")
        );
        assert!(
            evaluate(&"1+".repeat(300))
                .unwrap_err()
                .contains("longer than")
        );
        assert!(evaluate("-".repeat(200).as_str()).is_err());
    }

    #[test]
    fn number_formatting() {
        assert_eq!(format_number(6.0), "6");
        assert_eq!(format_number(-3.0), "-3");
        assert_eq!(format_number(0.1 + 0.2), "0.3");
        assert_eq!(format_number(2.0 / 3.0), "0.666666666667");
        assert_eq!(format_number(1e20), "100000000000000000000");
    }
}
