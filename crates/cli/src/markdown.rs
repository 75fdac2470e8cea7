//! Markdown in answers, rendered for a terminal as it streams in: `# headings` and `**bold**` in bold,
//! `` `code` `` and fenced code blocks in colour, `- items` as bullets. Text is rendered piece by piece, so a
//! marker split across two pieces (`*` then `*`) still renders. Piped output gets the answer as it is
//! (see [`for_stdout`]).

use std::io::IsTerminal;

use crate::style::Style;

/// The SGR codes used.
const BOLD: &str = "1";
const CODE: &str = "36";
const FENCE: &str = "2";

/// Longest run of characters at a line's start that may still turn out to be a marker (`###### `, `  - `).
const MAX_HEAD: usize = 12;

/// Renders Markdown as it streams in.
#[derive(Debug)]
pub(crate) struct Markdown {
    style: Style,
    /// At the start of a line, the characters that may still be a marker.
    head: Option<String>,
    /// A `*` that may be the first of `**`.
    star: bool,
    bold: bool,
    code: bool,
    heading: bool,
    /// Inside a fenced code block.
    fence: bool,
    /// On a fence's own line (```` ```rust ````).
    fence_line: bool,
}

impl Markdown {
    /// A renderer styling with `style` (markers are rendered even when colours are off).
    pub(crate) fn new(style: Style) -> Self {
        Self {
            style,
            head: Some(String::new()),
            star: false,
            bold: false,
            code: false,
            heading: false,
            fence: false,
            fence_line: false,
        }
    }

    /// Renders the next piece; returns what to print now (some characters may wait for the next piece).
    pub(crate) fn push(&mut self, text: &str) -> String {
        let mut out = String::new();
        // The answer's own control characters would drive the terminal: shown as pictures instead (the
        // renderer's styles are added after).
        for c in text.chars().map(crate::out::shown) {
            self.char(c, &mut out);
        }
        out
    }

    /// Renders what is still waiting and ends every style.
    pub(crate) fn finish(&mut self) -> String {
        let mut out = String::new();
        if let Some(head) = self.head.take() {
            self.inline_str(&head, &mut out);
        }
        self.flush_star(&mut out);
        let styled = self.bold || self.code || self.heading || self.fence || self.fence_line;
        *self = Self::new(self.style);
        if styled {
            out.push_str(&self.sgr("0"));
        }
        out
    }

    fn sgr(&self, code: &str) -> String {
        if self.style.is_color() {
            format!("\x1b[{code}m")
        } else {
            String::new()
        }
    }

    /// Ends every style, then starts the ones in effect.
    fn restyle(&self, out: &mut String) {
        out.push_str(&self.sgr("0"));
        if self.fence || self.fence_line {
            out.push_str(&self.sgr(FENCE));
        }
        if self.bold || self.heading {
            out.push_str(&self.sgr(BOLD));
        }
        if self.code {
            out.push_str(&self.sgr(CODE));
        }
    }

    fn char(&mut self, c: char, out: &mut String) {
        let Some(mut head) = self.head.take() else {
            self.inline(c, out);
            return;
        };
        if c == '\n' {
            self.inline_str(&head, out);
            self.inline('\n', out);
            return;
        }
        head.push(c);
        let marker = head.trim_start();
        let indent = &head[..head.len() - marker.len()];
        if marker.starts_with("```") {
            // A fence opens or closes; its line is shown dim.
            self.fence = !self.fence;
            self.fence_line = true;
            self.restyle(out);
            out.push_str(&head);
        } else if self.fence && (marker.is_empty() || marker.chars().all(|c| c == '`')) {
            // Maybe the closing fence.
            self.head = Some(head);
        } else if self.fence {
            // Code is shown as it is.
            out.push_str(&head);
        } else if marker.is_empty()
            || (head.chars().count() < MAX_HEAD
                && (marker.chars().all(|c| c == '#') && marker.len() <= 6
                    || marker.chars().all(|c| c == '`')
                    || matches!(marker, "-" | "*" | "+")))
        {
            // Not decided yet.
            self.head = Some(head);
        } else if marker.ends_with(' ')
            && marker.trim_end().chars().all(|c| c == '#')
            && marker.trim_end().len() <= 6
        {
            self.heading = true;
            self.restyle(out);
            out.push_str(indent);
        } else if matches!(marker, "- " | "* " | "+ ") {
            out.push_str(indent);
            out.push_str("• ");
        } else {
            self.inline_str(&head, out);
        }
    }

    fn inline_str(&mut self, text: &str, out: &mut String) {
        for c in text.chars() {
            self.inline(c, out);
        }
    }

    fn flush_star(&mut self, out: &mut String) {
        if std::mem::take(&mut self.star) {
            out.push('*');
        }
    }

    fn inline(&mut self, c: char, out: &mut String) {
        if c == '\n' {
            self.flush_star(out);
            let styled = self.bold || self.code || self.heading || self.fence_line;
            self.bold = false;
            self.code = false;
            self.heading = false;
            self.fence_line = false;
            if styled {
                self.restyle(out);
            }
            out.push('\n');
            self.head = Some(String::new());
            return;
        }
        if self.fence || self.fence_line {
            out.push(c);
            return;
        }
        if c == '*' && !self.code {
            if std::mem::take(&mut self.star) {
                self.bold = !self.bold;
                self.restyle(out);
            } else {
                self.star = true;
            }
            return;
        }
        self.flush_star(out);
        if c == '`' {
            self.code = !self.code;
            self.restyle(out);
            if !self.style.is_color() {
                out.push('`');
            }
            return;
        }
        out.push(c);
    }
}

/// `answer` as standard output should get it: rendered on a terminal, as it is when piped.
pub(crate) fn for_stdout(answer: &str) -> String {
    if std::io::stdout().is_terminal() {
        let mut markdown = Markdown::new(Style::stdout());
        let mut out = markdown.push(answer);
        out.push_str(&markdown.finish());
        out
    } else {
        answer.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(pieces: &[&str], color: bool) -> String {
        let mut markdown = Markdown::new(Style::with_color(color));
        let mut out: String = pieces.iter().map(|p| markdown.push(p)).collect();
        out.push_str(&markdown.finish());
        out
    }

    #[test]
    fn markers_render_also_when_split_across_pieces() {
        let text = "# Orders\nOrder **42** is `shipped`.\n- one\n  * two\n3 * 4 = 12\n";
        let whole = render(&[text], false);
        assert_eq!(
            whole,
            "Orders\nOrder 42 is `shipped`.\n• one\n  • two\n3 * 4 = 12\n"
        );
        // The same text one character at a time renders the same.
        let chars: Vec<String> = text.chars().map(String::from).collect();
        let pieces: Vec<&str> = chars.iter().map(String::as_str).collect();
        assert_eq!(render(&pieces, false), whole);
    }

    #[test]
    fn colours_start_and_end_with_their_spans() {
        assert_eq!(
            render(&["a **b", "** `c` d"], true),
            "a \x1b[0m\x1b[1mb\x1b[0m \x1b[0m\x1b[36mc\x1b[0m d"
        );
        assert_eq!(
            render(&["## T", "itle\nx"], true),
            "\x1b[0m\x1b[1mTitle\x1b[0m\nx"
        );
    }

    #[test]
    fn code_blocks_are_shown_as_they_are() {
        let text = "```sql\nSELECT * FROM t -- **not bold**\n```\n# after";
        assert_eq!(
            render(&[text], false),
            "```sql\nSELECT * FROM t -- **not bold**\n```\nafter"
        );
    }

    #[test]
    fn unfinished_markers_are_kept() {
        assert_eq!(
            render(&["5 * 3", " and a lone *"], false),
            "5 * 3 and a lone *"
        );
        assert_eq!(render(&["##"], false), "##");
        assert_eq!(render(&["-"], false), "-");
    }
}
