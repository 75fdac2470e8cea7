//! Writing to standard output without panicking when the reader has gone (`steward … | head`).

use std::io::Write;

/// Writes one line to standard output; if the reader has closed the pipe, exits quietly as other command-line
/// tools do.
pub(crate) fn line(text: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = writeln!(out, "{text}").and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write the output: {e}");
        std::process::exit(i32::from(crate::exit::USAGE));
    }
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

/// Writes text as it is (it ends with its own newline) to standard output, surviving a closed pipe.
pub(crate) fn text(text: &str) {
    line(text.strip_suffix('\n').unwrap_or(text));
}
