//! Writing to standard output and standard error without ever panicking (`println!` and `eprintln!` panic when
//! the reader has gone: `steward … | head -1`, `steward ask … 2>&1 | head -1`).
//!
//! When standard output is closed, what would have been written is dropped and the command goes on to end with
//! the exit code it would have had (as `grep … | head` does); any other write error is reported once, at the
//! end, by [`failure`]. Standard error is best effort: once a write to it fails, nothing more is written there.

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a write to standard output failed: nothing more is written there.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
/// Set once a write to standard error failed.
static STDERR_CLOSED: AtomicBool = AtomicBool::new(false);
/// The first write error on standard output that was not a closed pipe.
static STDOUT_ERROR: Mutex<Option<String>> = Mutex::new(None);

/// Writes one line to standard output; once the reader has gone, does nothing.
pub(crate) fn line(text: &str) {
    raw(&format!("{text}\n"));
}

/// Writes text as it is (no newline added) to standard output, flushed, as a streamed answer arrives; once
/// the reader has gone, does nothing.
pub(crate) fn raw(text: &str) {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            let mut error = STDOUT_ERROR
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            error.get_or_insert_with(|| e.to_string());
        }
    }
}

/// A character as a terminal may be given it: control characters of the data (an escape that would recolour
/// the terminal, move the cursor or set its title; a carriage return that would overwrite the line) become their
/// visible pictures (`␛`, `␍`, …); a line feed and a tab stay.
pub(crate) fn shown(c: char) -> char {
    match c {
        '\n' | '\t' => c,
        '\u{0}'..='\u{1f}' => char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'),
        '\u{7f}' => '\u{2421}',
        '\u{80}'..='\u{9f}' => '\u{fffd}',
        _ => c,
    }
}

/// `text` with [`shown`] characters.
pub(crate) fn visible(text: &str) -> String {
    text.chars().map(shown).collect()
}

/// The columns `text` takes on a terminal (a CJK character or an emoji takes two, a combining mark none).
pub(crate) fn columns(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

/// `text` cut to at most `width` terminal columns, ending with `…` when it was longer.
pub(crate) fn cut(text: &str, width: usize) -> String {
    if columns(text) <= width {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    out + "…"
}

/// `text` padded with spaces to `width` terminal columns.
fn pad(text: &str, width: usize) -> String {
    let mut out = text.to_owned();
    out.extend(std::iter::repeat_n(
        ' ',
        width.saturating_sub(columns(text)),
    ));
    out
}

/// `text` on one line (runs of whitespace as one space), cut to `width` terminal columns with `…` when longer.
pub(crate) fn flat_cut(text: &str, width: usize) -> String {
    cut(
        &text.split_whitespace().collect::<Vec<_>>().join(" "),
        width,
    )
}

/// Prints a table on standard output: the header, a rule, and the rows, each column as wide as its widest
/// cell in terminal columns, so that wide characters (CJK, emoji) stay aligned (cells are shown on one line).
pub(crate) fn aligned(header: &[&str], rows: &[Vec<String>]) {
    let flat = |cell: &str| visible(&cell.replace(['\n', '\r', '\t'], " "));
    let mut widths: Vec<usize> = header.iter().map(|h| columns(h)).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(columns(&flat(cell)));
        }
    }
    let join = |cells: Vec<String>| -> String {
        cells
            .iter()
            .zip(&widths)
            .map(|(cell, w)| pad(cell, *w))
            .collect::<Vec<_>>()
            .join(" | ")
            .trim_end()
            .to_owned()
    };
    line(&join(header.iter().map(|h| flat(h)).collect()));
    line(
        &widths
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .join("-+-"),
    );
    for row in rows {
        line(&join(row.iter().map(|c| flat(c)).collect()));
    }
}

/// True once standard output can no longer be written (its reader has gone).
pub(crate) fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

/// Why standard output could not be written, when that was not simply a closed pipe (a full disk, …).
pub(crate) fn failure() -> Option<String> {
    STDOUT_ERROR
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

/// Writes text as it is to standard error (no newline added), flushed; never fails, never panics.
pub(crate) fn err_text(text: &str) {
    if STDERR_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut err = std::io::stderr().lock();
    if err
        .write_all(text.as_bytes())
        .and_then(|()| err.flush())
        .is_err()
    {
        STDERR_CLOSED.store(true, Ordering::Relaxed);
    }
}

/// Writes one line to standard error; never fails, never panics.
pub(crate) fn err_line(text: &str) {
    err_text(&format!("{text}\n"));
}

/// `println!` that survives a closed pipe.
macro_rules! say {
    () => {
        $crate::out::line("")
    };
    ($($arg:tt)*) => {
        $crate::out::line(&format!($($arg)*))
    };
}
pub(crate) use say;

/// `eprintln!` that survives a closed pipe.
macro_rules! note {
    () => {
        $crate::out::err_line("")
    };
    ($($arg:tt)*) => {
        $crate::out::err_line(&format!($($arg)*))
    };
}
pub(crate) use note;

/// Writes text as it is (it ends with its own newline) to standard output, surviving a closed pipe.
pub(crate) fn text(text: &str) {
    line(text.strip_suffix('\n').unwrap_or(text));
}

#[cfg(test)]
mod visible_tests {
    use super::visible;

    #[test]
    fn control_characters_of_the_data_cannot_reach_the_terminal() {
        assert_eq!(visible("\u{1b}[31mred\u{7}"), "\u{241b}[31mred\u{2407}");
        assert_eq!(visible("a\rb\u{9b}c\u{7f}"), "a\u{240d}b\u{fffd}c\u{2421}");
        assert_eq!(visible("line\nnext\tcell é 漢"), "line\nnext\tcell é 漢");
    }
}

#[cfg(test)]
mod tests {
    use super::{columns, cut, pad};

    #[test]
    fn wide_characters_take_two_columns_and_tables_pad_by_columns() {
        assert_eq!(columns("東京"), 4);
        assert_eq!(columns("Zürich"), 6);
        // Two cells of the same width on screen get the same padding.
        assert_eq!(columns(&pad("東京", 8)), columns(&pad("Ohio", 8)));
        assert_eq!(pad("東京", 6), "東京  ");
        // Cut by columns, never in the middle of a wide character.
        assert_eq!(cut("東京都庁舎", 6), "東京…");
        assert_eq!(cut("short", 6), "short");
        assert_eq!(columns(&cut("🙂🙂🙂🙂", 5)), 5);
    }
}
