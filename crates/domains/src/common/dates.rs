//! Reading the dates people and models write: ISO days, a few common forms, and "today"/"yesterday".

use chrono::{Days, NaiveDate};

/// The forms accepted, for error messages.
pub const DATE_FORMATS: &str = "YYYY-MM-DD (2026-11-21), YYYY/MM/DD, DD.MM.YYYY (21.11.2026), \"21 November 2026\", \"November 21, 2026\", or today, yesterday, tomorrow";

/// A day from text; `today` resolves relative words. The error says which forms work.
pub fn parse_day(text: &str, today: NaiveDate) -> Result<NaiveDate, String> {
    let t = text.trim();
    match t.to_ascii_lowercase().as_str() {
        "today" => return Ok(today),
        "yesterday" => {
            return today
                .checked_sub_days(Days::new(1))
                .ok_or_else(|| "out of range".to_owned());
        }
        "tomorrow" => {
            return today
                .checked_add_days(Days::new(1))
                .ok_or_else(|| "out of range".to_owned());
        }
        _ => {}
    }
    // An ISO timestamp is fine too: its day counts.
    let head = if t.len() > 10
        && t.as_bytes()
            .get(10)
            .is_some_and(|b| *b == b'T' || *b == b' ')
    {
        &t[..10]
    } else {
        t
    };
    for format in [
        "%Y-%m-%d",
        "%Y/%m/%d",
        "%d.%m.%Y",
        "%d %B %Y",
        "%d %b %Y",
        "%B %d, %Y",
        "%b %d, %Y",
        "%B %d %Y",
        "%b %d %Y",
    ] {
        if let Ok(day) = NaiveDate::parse_from_str(head, format) {
            return Ok(day);
        }
    }
    Err(format!(
        "`{t}` is not a date that can be read. Use one of: {DATE_FORMATS}."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_and_relative_words() {
        let today = NaiveDate::from_ymd_opt(2026, 11, 21).unwrap();
        for text in [
            "2026-11-21",
            "2026/11/21",
            "21.11.2026",
            "21 November 2026",
            "21 Nov 2026",
            "November 21, 2026",
            "Nov 21 2026",
            "today",
            " Today ",
            "2026-11-21T10:00:00Z",
        ] {
            assert_eq!(parse_day(text, today).unwrap(), today, "{text}");
        }
        assert_eq!(
            parse_day("yesterday", today).unwrap(),
            NaiveDate::from_ymd_opt(2026, 11, 20).unwrap()
        );
        let err = parse_day("11/21/2026", today).unwrap_err();
        assert!(
            err.starts_with("`11/21/2026` is not a date that can be read. Use one of: YYYY-MM-DD"),
            "{err}"
        );
        assert!(parse_day("2026-02-30", today).is_err());
    }
}
