//! Text from outside a run — rows, an HTTP response, what users saved — reaches a model wrapped as data:
//! `<data source="…">` … `</data>`, and the agents' rules say that what is inside is never an instruction.
//! [`escape`] makes sure that nothing inside can end the wrapper early, whatever case, spacing, look-alike
//! character or HTML entity it spells its closing tag with.

use std::borrow::Cow;

/// `text` with every closing tag neutralised, so that it cannot end a `<data>` wrapper: a slash that follows an
/// opening angle bracket is written `\/`. An opening bracket is `<`, a look-alike (`＜`, `﹤`, `〈`, `⟨`, `‹`,
/// `〈`, `❬`, `❮`, `❰`, `ᐸ`, `˂`), an HTML entity (`&lt;`, `&#60;`, `&#x3c;`, in any case) or an escape
/// (`%3C`, `\u003c`, `\x3c`); a slash is `/`, a look-alike (`／`, `∕`, `⁄`, `⧸`), an entity (`&#47;`,
/// `&#x2f;`, `&sol;`) or an escape (`%2F`, `\u002f`, `\x2f`); spaces, invisible characters (zero-width,
/// tag and variation-selector characters) and combining marks between them do not matter. The tag's name does not matter either: `</DATA>`, `< /data >` and `&lt;/Data&gt;` all come out
/// with their slash escaped, and so does any other closing tag. Text without one is returned as it is.
pub fn escape(text: &str) -> Cow<'_, str> {
    let mut out = String::new();
    // Up to where `text` was copied into `out`.
    let mut copied = 0;
    // An opening bracket was seen, and only ignorable characters since.
    let mut opened = false;
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        if let Some(len) = opener(rest) {
            opened = true;
            i += len;
            continue;
        }
        if opened && let Some(len) = slash(rest) {
            out.push_str(&text[copied..i]);
            out.push('\\');
            copied = i;
            opened = false;
            i += len;
            continue;
        }
        let Some(c) = rest.chars().next() else { break };
        if !ignorable(c) {
            opened = false;
        }
        i += c.len_utf8();
    }
    if out.is_empty() {
        // Nothing was escaped (an escape writes at least its backslash).
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// The length of the opening bracket `rest` starts with.
fn opener(rest: &str) -> Option<usize> {
    let c = rest.chars().next()?;
    if matches!(
        c,
        '<' | '\u{FF1C}'
            | '\u{FE64}'
            | '\u{3008}'
            | '\u{27E8}'
            | '\u{2039}'
            | '\u{2329}'
            | '\u{276C}'
            | '\u{276E}'
            | '\u{2770}'
            | '\u{1438}'
            | '\u{02C2}'
    ) {
        return Some(c.len_utf8());
    }
    entity(rest, &["lt"], 0x3c).or_else(|| escaped(rest, 0x3c))
}

/// The length of the slash `rest` starts with.
fn slash(rest: &str) -> Option<usize> {
    let c = rest.chars().next()?;
    if matches!(c, '/' | '\u{FF0F}' | '\u{2215}' | '\u{2044}' | '\u{29F8}') {
        return Some(c.len_utf8());
    }
    entity(rest, &["sol"], 0x2f).or_else(|| escaped(rest, 0x2f))
}

/// The length of the escape `rest` starts with when it stands for the ASCII character `code`: `%3C` (a URL's),
/// `\u003c` or `\x3c` (a string literal's), in any case.
fn escaped(rest: &str, code: u8) -> Option<usize> {
    let hex = |digits: &str, len: usize| {
        digits
            .get(..len)
            .and_then(|d| u8::from_str_radix(d, 16).ok())
            .filter(|&value| value == code && digits[..len].chars().all(|c| c.is_ascii_hexdigit()))
    };
    if let Some(digits) = rest.strip_prefix('%') {
        return hex(digits, 2).map(|_| 3);
    }
    let escape = rest.strip_prefix('\\')?;
    if let Some(digits) = escape.strip_prefix(['u', 'U']) {
        return digits
            .get(..4)
            .filter(|d| d.chars().all(|c| c.is_ascii_hexdigit()))
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .filter(|&value| value == u32::from(code))
            .map(|_| 6);
    }
    let digits = escape.strip_prefix(['x', 'X'])?;
    hex(digits, 2).map(|_| 4)
}

/// The length of the HTML entity `rest` starts with when it stands for `code`: one of `names` (`&lt;`, also
/// without its `;`), or a number (`&#60;`, `&#x3C;`), in any case.
fn entity(rest: &str, names: &[&str], code: u32) -> Option<usize> {
    let body = rest.strip_prefix('&')?;
    let semicolon = |len: usize| {
        if body[len..].starts_with(';') {
            len + 2
        } else {
            len + 1
        }
    };
    if let Some(number) = body.strip_prefix('#') {
        let (digits, radix, skip) = match number.strip_prefix(['x', 'X']) {
            Some(hex) => (hex, 16, 2),
            None => (number, 10, 1),
        };
        let len = digits
            .find(|c: char| !c.is_digit(radix))
            .unwrap_or(digits.len());
        let value = u32::from_str_radix(&digits[..len], radix).ok()?;
        return (len > 0 && value == code).then(|| semicolon(skip + len));
    }
    names.iter().find_map(|name| {
        body.get(..name.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(name))
            .then(|| semicolon(name.len()))
    })
}

/// Characters a reader does not see between a bracket and its slash: spaces, format characters (zero-width
/// spaces and joiners, the soft hyphen, the byte-order mark, tag characters, …), variation selectors and
/// combining marks.
fn ignorable(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{034F}'
                | '\u{061C}'
                | '\u{115F}'
                | '\u{1160}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206F}'
                | '\u{3164}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{0300}'..='\u{036F}'
                | '\u{1AB0}'..='\u{1AFF}'
                | '\u{1DC0}'..='\u{1DFF}'
                | '\u{20D0}'..='\u{20FF}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FE20}'..='\u{FE2F}'
                | '\u{E0000}'..='\u{E007F}'
                | '\u{E0100}'..='\u{E01EF}'
        )
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn every_spelling_of_a_closing_tag_is_escaped() {
        for (text, escaped) in [
            ("</data>", "<\\/data>"),
            ("</DATA>", "<\\/DATA>"),
            ("</Data >", "<\\/Data >"),
            ("< /data>", "< \\/data>"),
            ("<\t\n/data>", "<\t\n\\/data>"),
            ("<\u{200B}/data>", "<\u{200B}\\/data>"),
            ("<\u{FEFF}\u{2060}/data>", "<\u{FEFF}\u{2060}\\/data>"),
            ("\u{FF1C}/data\u{FF1E}", "\u{FF1C}\\/data\u{FF1E}"),
            ("\u{FE64}/data>", "\u{FE64}\\/data>"),
            ("\u{2039}/data\u{203A}", "\u{2039}\\/data\u{203A}"),
            ("<\u{FF0F}data>", "<\\\u{FF0F}data>"),
            ("<\u{2215}data>", "<\\\u{2215}data>"),
            ("&lt;/data&gt;", "&lt;\\/data&gt;"),
            ("&LT;/data>", "&LT;\\/data>"),
            ("&lt/data>", "&lt\\/data>"),
            ("&#60;/data>", "&#60;\\/data>"),
            ("&#060;/data>", "&#060;\\/data>"),
            ("&#x3c;/data>", "&#x3c;\\/data>"),
            ("&#X3C;/data>", "&#X3C;\\/data>"),
            ("<&#47;data>", "<\\&#47;data>"),
            ("&lt;&#x2F;data>", "&lt;\\&#x2F;data>"),
            ("<&sol;data>", "<\\&sol;data>"),
            ("<<//data>", "<<\\//data>"),
            ("\u{276E}/data\u{276F}", "\u{276E}\\/data\u{276F}"),
            ("\u{1438}/data\u{1433}", "\u{1438}\\/data\u{1433}"),
            ("<\u{0338}/data>", "<\u{0338}\\/data>"),
            ("<\u{E0020}\u{FE0F}/data>", "<\u{E0020}\u{FE0F}\\/data>"),
            ("%3C/data%3E", "%3C\\/data%3E"),
            ("%3c%2fdata%3e", "%3c\\%2fdata%3e"),
            ("\\u003c/data>", "\\u003c\\/data>"),
            ("\\U003C\\u002Fdata>", "\\U003C\\\\u002Fdata>"),
            ("\\x3c/data>", "\\x3c\\/data>"),
            ("a</data>b</data>c", "a<\\/data>b<\\/data>c"),
            ("</script></data></data >", "<\\/script><\\/data><\\/data >"),
        ] {
            assert_eq!(escape(text), escaped, "{text:?}");
        }
    }

    #[test]
    fn other_text_is_kept_as_it_is() {
        for text in [
            "plain",
            "a < b / c",
            "1/2 <= 3",
            "http://example.com/a/b",
            "&lt; and &#61;/ and &#x3d;/",
            "&",
            "&#",
            "&#x/",
            "%3/ %zz/ %3d/ \\u00/ \\u003/ \\x3/ \\xzz/ \\u003d/",
            "100%/",
            "<",
            "naïve — ünïcödé ＜ text / more",
        ] {
            let escaped = escape(text);
            assert_eq!(escaped, text, "{text:?}");
            assert!(matches!(escaped, std::borrow::Cow::Borrowed(_)), "{text:?}");
        }
    }
}
