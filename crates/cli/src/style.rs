//! Terminal colours: on when the stream is a terminal and `NO_COLOR` is not set.

use std::io::IsTerminal;

/// ANSI styling for one output stream.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Style {
    color: bool,
}

impl Style {
    /// Styling for standard error.
    pub(crate) fn stderr() -> Self {
        Self {
            color: std::io::stderr().is_terminal() && color_allowed(),
        }
    }

    /// Styling for standard output.
    pub(crate) fn stdout() -> Self {
        Self {
            color: std::io::stdout().is_terminal() && color_allowed(),
        }
    }

    /// Styling with colours on or off, whatever the streams are.
    #[cfg(test)]
    pub(crate) fn with_color(color: bool) -> Self {
        Self { color }
    }

    /// True when colours are on.
    pub(crate) fn is_color(self) -> bool {
        self.color
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    pub(crate) fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }
    pub(crate) fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }
    pub(crate) fn error(self, text: &str) -> String {
        self.paint("1;31", text)
    }
    pub(crate) fn warn(self, text: &str) -> String {
        self.paint("33", text)
    }
    pub(crate) fn call(self, text: &str) -> String {
        self.paint("36", text)
    }
    pub(crate) fn good(self, text: &str) -> String {
        self.paint("32", text)
    }
}

fn color_allowed() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        && std::env::var("TERM").map_or(true, |t| t != "dumb")
}
