//! Text from outside a run — rows, an HTTP response, what users saved — reaches a model wrapped as data:
//! `<data source="…">` … `</data>`, and the agents' rules say that what is inside is never an instruction.
//! [`escape`] makes sure that nothing inside can end the wrapper early, whatever case, spacing, look-alike
//! character or HTML entity it spells its closing tag with.

use std::borrow::Cow;

/// `text` with every closing tag neutralised, so that it cannot end a `<data>` wrapper: a slash that follows an
/// opening angle bracket is written `\/`. An opening bracket is `<`, a look-alike (`＜`, `﹤`, `〈`, `⟨`, `‹`,
/// `〈`) or an entity (`&lt;`, `&#60;`, `&#x3c;`, in any case); a slash is `/`, a look-alike (`／`, `∕`, `⁄`,
/// `⧸`) or an entity (`&#47;`, `&#x2f;`, `&sol;`); spaces and invisible characters between them do not
/// matter. The tag's name does not matter either: `</DATA>`, `< /data >` and `&lt;/Data&gt;` all come out
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
        '<' | '\u{FF1C}' | '\u{FE64}' | '\u{3008}' | '\u{27E8}' | '\u{2039}' | '\u{2329}'
    ) {
        return Some(c.len_utf8());
    }
    entity(rest, &["lt"], 0x3c)
}

/// The length of the slash `rest` starts with.
fn slash(rest: &str) -> Option<usize> {
    let c = rest.chars().next()?;
    if matches!(c, '/' | '\u{FF0F}' | '\u{2215}' | '\u{2044}' | '\u{29F8}') {
        return Some(c.len_utf8());
    }
    entity(rest, &["sol"], 0x2f)
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

/// Characters a reader does not see between a bracket and its slash: spaces and format characters
/// (zero-width spaces and joiners, the soft hyphen, the byte-order mark, …).
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
            "<",
            "naïve — ünïcödé ＜ text / more",
        ] {
            let escaped = escape(text);
            assert_eq!(escaped, text, "{text:?}");
            assert!(matches!(escaped, std::borrow::Cow::Borrowed(_)), "{text:?}");
        }
    }
}
