//! Text from outside a run — rows, an HTTP response, what users saved — reaches a model wrapped as data:
//! `<data source="…">` … `</data>`, and the agents' rules say that what is inside is never an instruction.
//! [`escape`] keeps anything inside from ending the wrapper early: every spelling of a closing tag it knows — any
//! case, spaces and invisible characters, look-alike brackets and slashes, HTML entities, URL and string
//! escapes — comes out with its slash escaped. A list of spellings cannot be proven complete; it is one layer,
//! with the taint that makes every later write wait for review (`Run::tainted_by`).

use std::borrow::Cow;

/// `text` with every closing tag neutralised, so that it cannot end a `<data>` wrapper: a slash that follows an
/// opening angle bracket is written `\/`. An opening bracket is `<`, a look-alike (`＜`, `﹤`, `〈`, `⟨`, `‹`,
/// `«`, `《`, `≪`, `❮`, `ᐸ`, `˂`, a tag character, …) or an encoding of one; a slash is `/`, a look-alike (`／`,
/// `∕`, `⁄`, `╱`, `⧸`, …) or an encoding of one. Encodings are HTML entities (`&lt;`, `&#60;`, `&#x3c;`,
/// `&lang;`, `&sol;`, also as `&amp;lt;`), URL escapes (`%3C`, `%253C`, `%u003C`) and string literals' escapes
/// (`\u003c`, `\U0000003c`, `\u{3c}`, `\x3c`, `\074`, CSS's `\3c `). Spaces, invisible characters and
/// combining marks between bracket and slash do not matter, nor does the tag's name: `</DATA>`, `< /data >` and
/// `&lt;/Data&gt;` all come out with their slash escaped, and so does any other closing tag. Text without one is
/// returned as it is, and escaping twice changes nothing.
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

/// The length of the opening bracket `rest` starts with, spelt as a character or encoded.
fn opener(rest: &str) -> Option<usize> {
    token(rest, is_opener)
}

/// The length of the slash `rest` starts with, spelt as a character or encoded.
fn slash(rest: &str) -> Option<usize> {
    token(rest, is_slash)
}

/// `<` and the characters a reader may take for it.
fn is_opener(c: char) -> bool {
    matches!(
        c,
        '<' | '\u{00AB}'
            | '\u{02C2}'
            | '\u{1438}'
            | '\u{2039}'
            | '\u{226A}'
            | '\u{2329}'
            | '\u{276C}'
            | '\u{276E}'
            | '\u{2770}'
            | '\u{27E8}'
            | '\u{27EA}'
            | '\u{2991}'
            | '\u{29FC}'
            | '\u{3008}'
            | '\u{300A}'
            | '\u{FE64}'
            | '\u{FF1C}'
            | '\u{E003C}'
    )
}

/// `/` and the characters a reader may take for it.
fn is_slash(c: char) -> bool {
    matches!(
        c,
        '/' | '\u{2044}'
            | '\u{2215}'
            | '\u{2571}'
            | '\u{27CB}'
            | '\u{29F6}'
            | '\u{29F8}'
            | '\u{FF0F}'
            | '\u{E002F}'
    )
}

/// The length of what `rest` starts with when it is a character for which `is` holds, or an encoding of one:
/// an HTML entity (`&lt;`, `&#60;`, `&#x3c;`, `&amp;lt;`, …), a URL escape (`%3C`, `%253C`, `%u003C`) or a
/// string literal's (`\u003c`, `\U0000003c`, `\u{3c}`, `\x3c`, `\074`, CSS's `\3c `).
fn token(rest: &str, is: fn(char) -> bool) -> Option<usize> {
    let c = rest.chars().next()?;
    if is(c) {
        return Some(c.len_utf8());
    }
    let candidates = match c {
        '&' => entity(rest),
        '%' => percent(rest),
        '\\' => backslash(rest),
        _ => Vec::new(),
    };
    candidates
        .into_iter()
        .filter(|(c, _)| is(*c))
        .map(|(_, len)| len)
        .max()
}

/// The characters an HTML entity at the start of `rest` may stand for, with its length (its `;` may be missing,
/// and it may be encoded again as `&amp;…`).
fn entity(rest: &str) -> Vec<(char, usize)> {
    let mut body = &rest[1..];
    while body
        .get(..4)
        .is_some_and(|a| a.eq_ignore_ascii_case("amp;"))
    {
        body = &body[4..];
    }
    let skipped = rest.len() - body.len();
    let with_semicolon = |len: usize| {
        if body[len..].starts_with(';') {
            skipped + len + 1
        } else {
            skipped + len
        }
    };
    if let Some(number) = body.strip_prefix('#') {
        let (digits, radix, prefix) = match number.strip_prefix(['x', 'X']) {
            Some(hex) => (hex, 16, 2),
            None => (number, 10, 1),
        };
        return code_point(digits, radix, 8)
            .map(|(c, len)| vec![(c, with_semicolon(prefix + len))])
            .unwrap_or_default();
    }
    const NAMES: [(&str, char); 10] = [
        ("lt", '<'),
        ("nvlt", '<'),
        ("lang", '\u{27E8}'),
        ("langle", '\u{27E8}'),
        ("leftanglebracket", '\u{27E8}'),
        ("lsaquo", '\u{2039}'),
        ("laquo", '\u{00AB}'),
        ("ll", '\u{226A}'),
        ("sol", '/'),
        ("frasl", '\u{2044}'),
    ];
    NAMES
        .iter()
        .filter(|(name, _)| {
            body.get(..name.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(name))
        })
        .map(|&(name, c)| (c, with_semicolon(name.len())))
        .collect()
}

/// The character a URL escape at the start of `rest` stands for (`%3C`, also encoded again as `%253C`, or
/// `%u003C`), with its length.
fn percent(rest: &str) -> Vec<(char, usize)> {
    let mut body = &rest[1..];
    while body.starts_with("25") && body.len() > 2 {
        body = &body[2..];
    }
    let skipped = rest.len() - body.len();
    let found = match body.strip_prefix(['u', 'U']) {
        Some(digits) => exact(digits, 4).map(|(c, len)| (c, skipped + 1 + len)),
        None => exact(body, 2).map(|(c, len)| (c, skipped + len)),
    };
    found.into_iter().collect()
}

/// The characters a backslash escape at the start of `rest` may stand for, with its length: `\u003c`,
/// `\U0000003c`, `\u{3c}`, `\x3c`, octal `\074`, and CSS's `\3c` (one to six hex digits, then perhaps a
/// space).
fn backslash(rest: &str) -> Vec<(char, usize)> {
    let body = &rest[1..];
    let mut found = Vec::new();
    if let Some(braced) = body.strip_prefix("u{")
        && let Some((c, len)) = code_point(braced, 16, 6)
        && braced[len..].starts_with('}')
    {
        found.push((c, len + 4));
    }
    if let Some(digits) = body.strip_prefix(['u', 'U']) {
        found.extend(exact(digits, 4).map(|(c, len)| (c, len + 2)));
    }
    if let Some(digits) = body.strip_prefix('U') {
        found.extend(exact(digits, 8).map(|(c, len)| (c, len + 2)));
    }
    if let Some(digits) = body.strip_prefix(['x', 'X']) {
        found.extend(exact(digits, 2).map(|(c, len)| (c, len + 2)));
    }
    if let Some((c, len)) = code_point(body, 8, 3) {
        found.push((c, len + 1));
    }
    if let Some((c, len)) = code_point(body, 16, 6) {
        let space = usize::from(body[len..].starts_with([' ', '\t', '\n']));
        found.push((c, len + 1 + space));
    }
    found
}

/// The character of the code point written at the start of `digits` in `radix`, with at most `most` digits,
/// and how many digits it took.
fn code_point(digits: &str, radix: u32, most: usize) -> Option<(char, usize)> {
    let len = digits
        .char_indices()
        .take(most)
        .take_while(|(_, c)| c.is_digit(radix))
        .count();
    let value = u32::from_str_radix(digits.get(..len)?, radix).ok()?;
    Some((char::from_u32(value)?, len))
}

/// The character of exactly `len` hex digits at the start of `digits`.
fn exact(digits: &str, len: usize) -> Option<(char, usize)> {
    code_point(digits, 16, len).filter(|&(_, n)| n == len)
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
                | '\u{0483}'..='\u{0489}'
                | '\u{0591}'..='\u{05BD}'
                | '\u{064B}'..='\u{065F}'
                | '\u{180B}'..='\u{180D}'
                | '\u{2800}'
                | '\u{302A}'..='\u{302F}'
                | '\u{3099}'..='\u{309A}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{1D173}'..='\u{1D17A}'
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
            ("&lang;/data>", "&lang;\\/data>"),
            ("&LeftAngleBracket;/data>", "&LeftAngleBracket;\\/data>"),
            ("&nvlt;/data>", "&nvlt;\\/data>"),
            ("&#xFF1C;/data>", "&#xFF1C;\\/data>"),
            ("<&frasl;data>", "<\\&frasl;data>"),
            ("<&#xFF0F;data>", "<\\&#xFF0F;data>"),
            ("\\U0000003c/data>", "\\U0000003c\\/data>"),
            ("\\u{3c}/data>", "\\u{3c}\\/data>"),
            ("\\074/data>", "\\074\\/data>"),
            ("\\3c /data>", "\\3c \\/data>"),
            ("%u003C/data>", "%u003C\\/data>"),
            ("%253C%252Fdata%253E", "%253C\\%252Fdata%253E"),
            ("&amp;lt;/data&amp;gt;", "&amp;lt;\\/data&amp;gt;"),
            ("\u{300A}/data\u{300B}", "\u{300A}\\/data\u{300B}"),
            ("\u{00AB}/data\u{00BB}", "\u{00AB}\\/data\u{00BB}"),
            ("\u{226A}/data>", "\u{226A}\\/data>"),
            ("\u{27EA}/data>", "\u{27EA}\\/data>"),
            ("\u{2991}/data>", "\u{2991}\\/data>"),
            ("\u{29FC}/data>", "\u{29FC}\\/data>"),
            ("<\u{2571}data>", "<\\\u{2571}data>"),
            ("<\u{27CB}data>", "<\\\u{27CB}data>"),
            ("<\u{2800}/data>", "<\u{2800}\\/data>"),
            (
                "<\u{180B}\u{FFF9}\u{1D173}/data>",
                "<\u{180B}\u{FFF9}\u{1D173}\\/data>",
            ),
            (
                "<\u{0483}\u{064B}\u{3099}/data>",
                "<\u{0483}\u{064B}\u{3099}\\/data>",
            ),
            (
                "\u{E003C}\u{E002F}data\u{E003E}",
                "\u{E003C}\\\u{E002F}data\u{E003E}",
            ),
            ("a</data>b</data>c", "a<\\/data>b<\\/data>c"),
            ("</script></data></data >", "<\\/script><\\/data><\\/data >"),
        ] {
            assert_eq!(escape(text), escaped, "{text:?}");
            // Escaping again changes nothing: what is escaped stays as it is.
            assert_eq!(escape(escaped), escaped, "{escaped:?}");
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
            "&llama/ &ampersand/ %25/ \\/ &#xZZ;/",
            "C:\\temp\\a/b",
            "<",
            "naïve — ünïcödé ＜ text / more",
        ] {
            let escaped = escape(text);
            assert_eq!(escaped, text, "{text:?}");
            assert!(matches!(escaped, std::borrow::Cow::Borrowed(_)), "{text:?}");
        }
    }
}
