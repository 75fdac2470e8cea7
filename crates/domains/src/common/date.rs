//! `current_date`: today's date, weekday, time and time zone, so the model never guesses them.

use chrono::{DateTime, FixedOffset, Local};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use steward_core::{Tool, ToolData, ToolOutput, TypedTool};

/// Where `current_date` gets the time from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Clock {
    /// The system clock and time zone.
    #[default]
    System,
    /// A fixed moment (for reproducible runs, recordings and tests).
    Fixed(DateTime<FixedOffset>),
}

impl Clock {
    /// A fixed clock from an RFC 3339 time (`2026-11-21T09:30:00+01:00`) or a date (`2026-11-21`, taken at
    /// noon UTC).
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if let Ok(t) = DateTime::parse_from_rfc3339(text) {
            return Ok(Self::Fixed(t));
        }
        let with_noon = format!("{text}T12:00:00+00:00");
        DateTime::parse_from_rfc3339(&with_noon)
            .map(Self::Fixed)
            .map_err(|_| format!("`{text}` is neither a date (2026-11-21) nor an RFC 3339 time (2026-11-21T09:30:00+01:00)"))
    }

    /// The current moment and the name of its time zone.
    pub fn now(&self) -> (DateTime<FixedOffset>, String) {
        match self {
            Self::System => {
                let now = Local::now().fixed_offset();
                let zone = iana_time_zone::get_timezone()
                    .unwrap_or_else(|_| now.format("UTC%:z").to_string());
                (now, zone)
            }
            Self::Fixed(t) => (*t, t.format("UTC%:z").to_string()),
        }
    }
}

/// Arguments of `current_date` (none).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArguments {}

/// The `current_date` tool.
pub fn current_date(clock: Clock) -> impl Tool {
    TypedTool::with_state(
        "current_date",
        "Today's date (YYYY-MM-DD), weekday, local time and time zone. Call it whenever a date is needed: \
         'today', 'yesterday', 'last month', or a date the user did not give.",
        clock,
        |clock, _ctx, _args: NoArguments| async move {
            let (now, zone) = clock.now();
            let date = now.format("%Y-%m-%d").to_string();
            let weekday = now.format("%A").to_string();
            let time = now.format("%H:%M").to_string();
            let offset = now.format("%:z").to_string();
            let text = if zone.starts_with("UTC") {
                format!("{date} ({weekday}), {time} {zone}")
            } else {
                format!("{date} ({weekday}), {time} {zone} (UTC{offset})")
            };
            Ok(ToolOutput::text(text).with_data(ToolData::Json {
                value: json!({"date": date, "weekday": weekday, "time": time, "timezone": zone, "utc_offset": offset}),
            }))
        },
    )
    .read_only()
}

#[cfg(test)]
mod tests {
    use super::*;
    use steward_core::ToolContext;

    #[tokio::test]
    async fn fixed_clock_gives_date_weekday_and_zone() {
        let tool = current_date(Clock::parse("2026-11-21T09:30:00+01:00").unwrap());
        let out = tool.call(&ToolContext::default(), json!({})).await.unwrap();
        assert_eq!(out.content, "2026-11-21 (Saturday), 09:30 UTC+01:00");
        let day = Clock::parse("2026-02-28").unwrap().now().0;
        assert_eq!(day.format("%Y-%m-%d %H:%M").to_string(), "2026-02-28 12:00");
        assert!(Clock::parse("tomorrow").is_err());
    }

    #[tokio::test]
    async fn system_clock_names_a_zone() {
        let out = current_date(Clock::System)
            .call(&ToolContext::default(), json!({}))
            .await
            .unwrap();
        assert!(out.content.contains("UTC"), "{}", out.content);
    }
}
