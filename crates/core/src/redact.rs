//! Keeping secrets out of what is shown: errors, traces, `--json` output, recordings.
//!
//! Two kinds of secret are handled here, with no I/O and no dependency:
//! - **URLs** carry passwords in their userinfo (`https://user:pass@host`) and keys in their query string
//!   (`?api-key=…`, `?password=…`); [`redact_url`] replaces them with `***`, and [`redact_urls`] does so for
//!   every URL inside a longer text (a model spec, an error message).
//! - **Known secrets** (API keys, tokens) are replaced wherever they appear by [`redact_secrets`], which also
//!   masks what is left of a secret just before a cut mark (`…`), so a text cut in the middle of a key does not
//!   show its beginning. Redact first, then cut: [`redact_secrets`] is the safety net, not the method.
//!
//! ```
//! use steward_core::redact::{redact_secrets, redact_url, redact_urls};
//!
//! assert_eq!(redact_url("postgres://bob:s3cret@db/app?sslmode=require"), "postgres://bob:***@db/app?sslmode=require");
//! assert_eq!(
//!     redact_urls("openai-compatible:llama3@https://u:p@gpu.lan/v1?api-key=abc"),
//!     "openai-compatible:llama3@https://u:***@gpu.lan/v1?api-key=***"
//! );
//! assert_eq!(redact_secrets("bad key sk-live-123", &["sk-live-123"]), "bad key [redacted]");
//! ```

/// What replaces a known secret.
pub const REDACTED: &str = "[redacted]";

/// What replaces a password or key inside a URL.
const MASK: &str = "***";

/// The mark that ends a text cut short.
const CUT_MARK: char = '…';

/// The shortest leftover of a secret masked before a cut mark: shorter pieces say nothing about the secret
/// (they are the `sk-` every key of a provider starts with).
const MIN_PARTIAL: usize = 4;

/// The shortest value taken from a URL by [`url_secrets`]: a shorter one would mask unrelated text.
const MIN_URL_SECRET: usize = 4;

/// Query-string parameters whose values are secrets (compared without case, `-` and `_`).
const SECRET_PARAMS: &[&str] = &[
    "password",
    "pass",
    "passwd",
    "pwd",
    "sslpassword",
    "sslkey",
    "secret",
    "token",
    "accesstoken",
    "apikey",
    "key",
    "authtoken",
    "auth",
];

/// True when a query-string parameter of this name holds a secret (`api-key`, `API_KEY`, `password`, …).
pub fn is_secret_param(name: &str) -> bool {
    let name: String = name
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect();
    SECRET_PARAMS.contains(&name.as_str())
}

/// A URL with its password and any secret query or fragment parameters (`?password=…`, `api-key=…`, …)
/// replaced by `***`. A text that is not a URL comes back unchanged.
pub fn redact_url(url: &str) -> String {
    let (head, query) = match url.find(['?', '#']) {
        Some(i) => url.split_at(i),
        None => (url, ""),
    };
    let mut out = redact_userinfo(head);
    out.push_str(&redact_query(query));
    out
}

/// `text` with every URL in it (`scheme://…`, up to a space or a quote) passed through [`redact_url`].
pub fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at);
        let scheme_len = before
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            .count();
        let (prefix, scheme) = before
            .split_at_checked(before.len().saturating_sub(scheme_len))
            .unwrap_or(("", before));
        let mut end = after.find(url_end).unwrap_or(after.len());
        // `(see http://host/x?key=k).`: punctuation at the end, and a closing parenthesis with no opening one in
        // the URL, belong to the text around it.
        while let Some(tail) = after.get(..end)
            && (tail.ends_with(['.', ',', ':', ';', '!', '?'])
                || (tail.ends_with(')') && tail.matches(')').count() > tail.matches('(').count()))
        {
            end -= 1;
        }
        let (url_tail, next) = after.split_at(end);
        out.push_str(prefix);
        if scheme.starts_with(|c: char| c.is_ascii_alphabetic()) {
            out.push_str(&redact_url(&format!("{scheme}{url_tail}")));
        } else {
            out.push_str(scheme);
            out.push_str(url_tail);
        }
        rest = next;
    }
    out.push_str(rest);
    out
}

/// Where a URL quoted in a text ends.
fn url_end(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`' | '\\')
}

/// The secrets a URL carries: its password and the values of its secret query parameters, as written and
/// percent-decoded (values shorter than four characters are left out: masking them would mask unrelated text).
pub fn url_secrets(url: &str) -> Vec<String> {
    let mut found = Vec::new();
    let (head, query) = match url.find(['?', '#']) {
        Some(i) => url.split_at(i),
        None => (url, ""),
    };
    if let Some((_, userinfo, _)) = split_userinfo(head)
        && let Some((_, password)) = userinfo.split_once(':')
    {
        found.push(password.to_owned());
    }
    for pair in query.split(['?', '#', '&', ';']) {
        if let Some((name, value)) = pair.split_once('=')
            && is_secret_param(name)
        {
            found.push(value.to_owned());
        }
    }
    let mut out = Vec::new();
    for value in found {
        let decoded = percent_decode(&value);
        for v in [value, decoded] {
            if v.chars().count() >= MIN_URL_SECRET && !out.contains(&v) {
                out.push(v);
            }
        }
    }
    out
}

/// `text` with every occurrence of each secret replaced by `[redacted]`, longest secrets first; where the text
/// was cut (`…`), a leftover of at least four characters of a secret's beginning just before the cut is masked
/// too. Empty secrets are ignored.
pub fn redact_secrets<S: AsRef<str>>(text: &str, secrets: &[S]) -> String {
    let mut secrets: Vec<&str> = secrets
        .iter()
        .map(AsRef::as_ref)
        .filter(|s| !s.is_empty())
        .collect();
    if secrets.is_empty() {
        return text.to_owned();
    }
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let mut out = text.to_owned();
    for secret in &secrets {
        if out.contains(secret) {
            out = out.replace(secret, REDACTED);
        }
    }
    if !out.contains(CUT_MARK) {
        return out;
    }
    let mut masked = String::with_capacity(out.len());
    let mut pieces = out.split(CUT_MARK).peekable();
    while let Some(piece) = pieces.next() {
        if pieces.peek().is_some() {
            masked.push_str(&mask_partial_tail(piece, &secrets));
            masked.push(CUT_MARK);
        } else {
            masked.push_str(piece);
        }
    }
    masked
}

/// `piece` with the longest beginning of a secret it ends with (at least [`MIN_PARTIAL`] characters) masked.
fn mask_partial_tail(piece: &str, secrets: &[&str]) -> String {
    let mut longest = 0;
    for secret in secrets {
        for (end, _) in secret.char_indices().skip(MIN_PARTIAL) {
            if let Some(prefix) = secret.get(..end)
                && end > longest
                && piece.ends_with(prefix)
            {
                longest = end;
            }
        }
    }
    match piece.get(..piece.len() - longest) {
        Some(kept) if longest > 0 => format!("{kept}{REDACTED}"),
        _ => piece.to_owned(),
    }
}

/// `(scheme://, userinfo, host and path)` when the URL has userinfo.
fn split_userinfo(url: &str) -> Option<(&str, &str, &str)> {
    let start = url.find("://")? + 3;
    let (scheme, rest) = url.split_at(start);
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, _) = rest.split_at(authority_end);
    let at = authority.rfind('@')?;
    let (userinfo, host) = rest.split_at(at);
    Some((scheme, userinfo, host.get(1..).unwrap_or("")))
}

/// `scheme://user:password@host/…` → `scheme://user:***@host/…`.
fn redact_userinfo(url: &str) -> String {
    match split_userinfo(url) {
        Some((scheme, userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}{user}:{MASK}@{host}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// A query string or fragment (with its leading `?` or `#`) with secret values masked; pairs are split on
/// `&`, `;`, `?` and `#`, each separator kept as written.
fn redact_query(query: &str) -> String {
    let mut out = String::with_capacity(query.len());
    for piece in query.split_inclusive(['&', ';', '?', '#']) {
        let (pair, separator) = match piece.char_indices().last() {
            Some((i, '&' | ';' | '?' | '#')) => piece.split_at(i),
            _ => (piece, ""),
        };
        match pair.split_once('=') {
            Some((name, _)) if is_secret_param(name) => {
                out.push_str(name);
                out.push('=');
                out.push_str(MASK);
            }
            _ => out.push_str(pair),
        }
        out.push_str(separator);
    }
    out
}

/// `%41` → `A`, `+` kept; invalid escapes and bytes that are not UTF-8 are kept as written.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = |at: usize| bytes.get(at).and_then(|h| (*h as char).to_digit(16));
        match (b, hex(i + 1), hex(i + 2)) {
            (b'%', Some(hi), Some(lo)) => {
                out.push(u8::try_from(hi * 16 + lo).unwrap_or(b'%'));
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_in_userinfo_and_query_are_redacted() {
        assert_eq!(
            redact_url("postgres://bob:s3cret@db:5432/app"),
            "postgres://bob:***@db:5432/app"
        );
        assert_eq!(
            redact_url("mysql://root@127.0.0.1/test"),
            "mysql://root@127.0.0.1/test"
        );
        assert_eq!(
            redact_url("postgres://u:p@ss@h/db?sslmode=require"),
            "postgres://u:***@h/db?sslmode=require"
        );
        assert_eq!(
            redact_url("postgres://u@h/db?sslmode=require&password=hunter2"),
            "postgres://u@h/db?sslmode=require&password=***"
        );
        assert_eq!(
            redact_url("https://x.example/v1?api-key=abc&api_version=2"),
            "https://x.example/v1?api-key=***&api_version=2"
        );
        assert_eq!(
            redact_url("postgres://u:pw@h/db?x=1?password=y"),
            "postgres://u:***@h/db?x=1?password=***"
        );
        assert_eq!(redact_url("sqlite://./x.db"), "sqlite://./x.db");
        assert_eq!(
            redact_url("https://h/v1?Token=a;KEY=b&auth_token=c#access_token=d"),
            "https://h/v1?Token=***;KEY=***&auth_token=***#access_token=***"
        );
        assert_eq!(
            redact_url("https://u:pw@h?key=k"),
            "https://u:***@h?key=***"
        );
        assert_eq!(redact_url("not a url"), "not a url");
    }

    #[test]
    fn urls_inside_texts_are_redacted() {
        assert_eq!(
            redact_urls(
                "error sending request for url (http://u:hunter2@127.0.0.1:9/v1/chat/completions?api-key=sk-1): refused"
            ),
            "error sending request for url (http://u:***@127.0.0.1:9/v1/chat/completions?api-key=***): refused"
        );
        assert_eq!(
            redact_urls("(http://h/wiki/A_(b)?token=x(y)) and (http://h/?key=z)"),
            "(http://h/wiki/A_(b)?token=***) and (http://h/?key=***)"
        );
        assert_eq!(
            redact_urls("Is https://u:pw@h/v1?key=k1, or https://h?key=k2. right?"),
            "Is https://u:***@h/v1?key=***, or https://h?key=***. right?"
        );
        assert_eq!(
            redact_urls(
                "openai-compatible:m@v2@https://u:p@h/v1?key=abc and \"https://h/?token=x\""
            ),
            "openai-compatible:m@v2@https://u:***@h/v1?key=*** and \"https://h/?token=***\""
        );
        assert_eq!(redact_urls("no url: 1 :// 2"), "no url: 1 :// 2");
        assert_eq!(redact_urls("ünïcode ://x"), "ünïcode ://x");
        assert_eq!(redact_urls(""), "");
    }

    #[test]
    fn url_secrets_are_the_password_and_secret_values() {
        assert_eq!(
            url_secrets("https://user:pa%24%24word@h/v1?api-key=sk-abcdef&x=1&key=ab"),
            ["pa%24%24word", "pa$$word", "sk-abcdef"]
        );
        assert!(url_secrets("https://h/v1").is_empty());
        assert!(url_secrets("https://user@h/v1?api-version=2024-10-21").is_empty());
    }

    #[test]
    fn known_secrets_are_replaced_everywhere() {
        assert_eq!(
            redact_secrets("k=sk-live-123, again sk-live-123", &["sk-live-123", ""]),
            "k=[redacted], again [redacted]"
        );
        assert_eq!(
            redact_secrets("nothing here", &[] as &[&str]),
            "nothing here"
        );
        // The longer secret wins where one contains the other.
        assert_eq!(
            redact_secrets("abcd-efgh", &["abcd", "abcd-efgh"]),
            "[redacted]"
        );
    }

    #[test]
    fn a_secret_cut_in_the_middle_leaves_nothing_of_it() {
        let key = "sk-live-0123456789";
        assert_eq!(
            redact_secrets("the key sk-live-01234…", &[key]),
            "the key [redacted]…"
        );
        assert_eq!(redact_secrets("text sk-…", &[key]), "text sk-…");
        assert_eq!(
            redact_secrets("a sk-live…b sk-l…", &[key]),
            "a [redacted]…b [redacted]…"
        );
    }

    #[test]
    fn percent_decoding_keeps_what_it_cannot_decode() {
        assert_eq!(percent_decode("a%20b%zz%"), "a b%zz%");
        assert_eq!(percent_decode("%ff"), "%ff");
    }
}
