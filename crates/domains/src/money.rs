//! Exact money: amounts and tax rates are decimals from the model's JSON to the database and back. A JSON number
//! is read through its shortest decimal text (`0.1` is one tenth, not the float nearest to it), arithmetic is
//! decimal with explicit rounding, and values outside what the columns hold are refused with the range.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use bigdecimal::{BigDecimal, RoundingMode};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Decimal places of an amount (`NUMERIC(12,2)`).
pub const AMOUNT_SCALE: i64 = 2;
/// Decimal places of a tax rate (`NUMERIC(5,4)`).
pub const RATE_SCALE: i64 = 4;
/// The largest amount a `NUMERIC(12,2)` column holds, as the schemas show it.
pub const MAX_AMOUNT: f64 = 9_999_999_999.99;
/// The largest tax rate the tools accept (100 %; a `NUMERIC(5,4)` column would hold up to 9.9999).
pub const MAX_RATE: f64 = 1.0;

/// An exact decimal the model sends as a JSON number.
///
/// It is read through the number's shortest decimal text, so `0.1` stays one tenth and `12.5` stays `12.5`;
/// the schema the model sees is a plain `number`. Text that is no finite number (`"NaN"`, `"Infinity"`, which
/// only arrive when validation was skipped) is kept as sent, so that the tool can refuse it with the range.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Decimal {
    text: String,
    value: Option<BigDecimal>,
}

impl Decimal {
    /// The decimal of a JSON number, through its shortest text.
    pub fn from_json(number: &serde_json::Number) -> Self {
        Self::from_text(&number.to_string())
    }

    /// The decimal written in `text`; one that is no finite decimal number keeps its text only.
    pub fn from_text(text: &str) -> Self {
        let text = text.trim();
        let finite = !text.is_empty()
            && text.len() <= 400
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || b".-+eE".contains(&b));
        let value = finite
            .then(|| BigDecimal::from_str(text).ok())
            .flatten()
            // Exponents beyond any JSON double are refused rather than expanded digit by digit.
            .filter(|d| d.as_bigint_and_exponent().1.abs() <= 400);
        Self {
            text: text.to_owned(),
            value,
        }
    }

    /// The exact value, when the input was a finite number.
    pub fn value(&self) -> Option<&BigDecimal> {
        self.value.as_ref()
    }

    /// The input as it was sent.
    pub fn as_sent(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            Some(value) => f.write_str(&plain(value)),
            None => f.write_str(&self.text),
        }
    }
}

impl<'de> Deserialize<'de> for Decimal {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::Number(number) => Ok(Self::from_json(&number)),
            serde_json::Value::String(text) => Ok(Self::from_text(&text)),
            other => Err(serde::de::Error::custom(format!(
                "expected a number, got {other}"
            ))),
        }
    }
}

impl Serialize for Decimal {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // A JSON number again (its shortest text reads back as the same decimal); text if it has no JSON form.
        let number = self
            .value
            .as_ref()
            .and_then(|v| serde_json::Number::from_str(&plain(v)).ok());
        match number {
            Some(number) => number.serialize(serializer),
            None => serializer.serialize_str(&self.text),
        }
    }
}

impl JsonSchema for Decimal {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Decimal".into()
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "number"})
    }
}

/// A decimal without trailing zeros, in plain notation (`20`, `0.2`, `1000`).
pub fn plain(value: &BigDecimal) -> String {
    value.normalized().to_plain_string()
}

/// Rounds to `scale` decimal places, halves away from zero (`2.675` → `2.68`).
pub fn round(value: &BigDecimal, scale: i64) -> BigDecimal {
    value.with_scale_round(scale, RoundingMode::HalfUp)
}

/// A decimal rounded to `scale` places, written with exactly that many decimals (`0.00`, `12.50`, `-3.10`).
pub fn fixed(value: &BigDecimal, scale: i64) -> String {
    let (int, _) = round(value, scale).into_bigint_and_exponent();
    let sign = if int.sign() == bigdecimal::num_bigint::Sign::Minus {
        "-"
    } else {
        ""
    };
    let mut digits = int.magnitude().to_string();
    let places = usize::try_from(scale).unwrap_or(0);
    if digits.len() <= places {
        digits = format!("{}{digits}", "0".repeat(places + 1 - digits.len()));
    }
    let (whole, fraction) = digits.split_at(digits.len() - places);
    if fraction.is_empty() {
        format!("{sign}{whole}")
    } else {
        format!("{sign}{whole}.{fraction}")
    }
}

/// An amount at cents, as people and the structured data read it: `12.50`.
pub fn amount_text(value: &BigDecimal) -> String {
    fixed(value, AMOUNT_SCALE)
}

/// A tax rate at four decimals, as the structured data reads it: `0.1900`.
pub fn rate_text(value: &BigDecimal) -> String {
    fixed(value, RATE_SCALE)
}

/// The number of digits before the decimal point (0 for values below 1), without rescaling huge values.
fn integer_digits(value: &BigDecimal) -> i64 {
    let digits = i64::try_from(value.digits()).unwrap_or(i64::MAX);
    let (_, scale) = value.as_bigint_and_exponent();
    digits.saturating_sub(scale).max(0)
}

/// Checks an amount sent by the model and rounds it to cents; the error names the field and the range.
pub fn amount(field: &str, sent: &Decimal) -> Result<BigDecimal, String> {
    let refused = || {
        format!(
            "{field}: {} is out of range: amounts must be from 0 to {MAX_AMOUNT:.2} (cents are kept, further \
             decimals are rounded). Send an amount in that range.",
            shown(sent)
        )
    };
    let Some(value) = sent.value() else {
        return Err(refused());
    };
    // The size is checked before rounding, so that a huge value is never expanded digit by digit.
    if value < &BigDecimal::from(0) || integer_digits(value) > 10 {
        return Err(refused());
    }
    let rounded = round(value, AMOUNT_SCALE);
    if !fits_amount(&rounded) {
        return Err(refused());
    }
    Ok(rounded)
}

/// Checks a tax rate sent by the model and rounds it to four decimals; the error names the field and the range.
pub fn rate(field: &str, sent: &Decimal) -> Result<BigDecimal, String> {
    let refused = || {
        format!(
            "{field}: {} is out of range: a tax rate is a fraction from 0 to {MAX_RATE} (0.2 for 20 %), with at \
             most four decimals. Send a rate in that range.",
            shown(sent)
        )
    };
    let Some(value) = sent.value() else {
        return Err(refused());
    };
    if value < &BigDecimal::from(0) || integer_digits(value) > 1 {
        return Err(refused());
    }
    let rounded = round(value, RATE_SCALE);
    if !fits_rate(&rounded) {
        return Err(refused());
    }
    Ok(rounded)
}

/// What was sent, for a message.
fn shown(sent: &Decimal) -> String {
    match sent.value() {
        Some(value) => short(value),
        None => format!("`{}`", sent.as_sent().chars().take(40).collect::<String>()),
    }
}

/// True when a computed amount (already at cents) fits `NUMERIC(12,2)` and is not negative.
pub fn fits_amount(value: &BigDecimal) -> bool {
    value >= &BigDecimal::from(0) && integer_digits(value) <= 10
}

/// True when a computed rate (already at four decimals) is within the accepted range.
pub fn fits_rate(value: &BigDecimal) -> bool {
    value >= &BigDecimal::from(0) && value <= &BigDecimal::from(1)
}

/// A value for messages: plain when short, scientific when it would be long (`1e308` stays readable).
pub fn short(value: &BigDecimal) -> String {
    if integer_digits(value) > 20 || value.fractional_digit_count() > 20 {
        value.normalized().to_scientific_notation()
    } else {
        plain(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn dec(value: serde_json::Value) -> Decimal {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn json_numbers_are_read_through_their_shortest_text() {
        assert_eq!(dec(json!(0.1)).to_string(), "0.1");
        assert_eq!(dec(json!(12.5)).to_string(), "12.5");
        assert_eq!(dec(json!(5)).to_string(), "5");
        assert_eq!(dec(json!(5.0)).to_string(), "5");
        assert_eq!(dec(json!(1e308)).to_string().len(), 309);
        let sum = dec(json!(0.1)).value().unwrap() + dec(json!(0.2)).value().unwrap();
        assert_eq!(sum, BigDecimal::from_str("0.3").unwrap());
        for text in ["NaN", "Infinity", "-inf", "1e99999", "", "12,50"] {
            assert_eq!(dec(json!(text)).value(), None, "{text}");
        }
        assert!(serde_json::from_value::<Decimal>(json!(true)).is_err());
        assert_eq!(
            serde_json::to_value(dec(json!(12.50))).unwrap(),
            json!(12.5)
        );
        assert_eq!(
            serde_json::to_value(dec(json!("NaN"))).unwrap(),
            json!("NaN")
        );
    }

    #[test]
    fn amounts_and_rates_are_checked_and_rounded() {
        let d = |s: &str| Decimal::from_text(s);
        assert_eq!(
            amount("net_amount", &d("2.675")).unwrap().to_string(),
            "2.68"
        );
        assert_eq!(
            amount("net_amount", &d("9999999999.99"))
                .unwrap()
                .to_string(),
            "9999999999.99"
        );
        let err = amount("net_amount", &d("1e308")).unwrap_err();
        assert_eq!(
            err,
            "net_amount: 1e308 is out of range: amounts must be from 0 to 9999999999.99 (cents are kept, \
             further decimals are rounded). Send an amount in that range."
        );
        assert!(amount("gross_amount", &d("-1")).unwrap_err().starts_with(
            "gross_amount: -1 is out of range: amounts must be from 0 to 9999999999.99"
        ));
        assert!(amount("net_amount", &d("NaN")).unwrap_err().starts_with(
            "net_amount: `NaN` is out of range: amounts must be from 0 to 9999999999.99"
        ));
        assert!(amount("net_amount", &d("9999999999.995")).is_err());
        assert_eq!(rate("tax_rate", &d("0.19")).unwrap().to_string(), "0.1900");
        assert!(
            rate("tax_rate", &d("20"))
                .unwrap_err()
                .starts_with("tax_rate: 20 is out of range: a tax rate is a fraction from 0 to 1")
        );
        assert!(rate("tax_rate", &d("Infinity")).is_err());
        assert_eq!(amount_text(&BigDecimal::from(6)), "6.00");
        assert_eq!(amount_text(&BigDecimal::from(0)), "0.00");
        assert_eq!(amount_text(&BigDecimal::from_str("0.05").unwrap()), "0.05");
        assert_eq!(amount_text(&BigDecimal::from_str("-3.1").unwrap()), "-3.10");
        assert_eq!(rate_text(&BigDecimal::from_str("0.2").unwrap()), "0.2000");
        assert_eq!(fixed(&BigDecimal::from_str("1234.5").unwrap(), 0), "1235");
        assert_eq!(short(&BigDecimal::from_str("1e-300").unwrap()), "1e-300");
    }
}
