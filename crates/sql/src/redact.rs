//! Database URLs as they may be shown: in errors, traces, `--json` output and recordings.

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

/// A URL with its password and any secret query parameters (`?password=…`, `api-key=…`, …) replaced by
/// `***`.
pub fn redact_url(url: &str) -> String {
    let (head, query) = match url.split_once('?') {
        Some((head, query)) => (head, Some(query)),
        None => (url, None),
    };
    let mut out = redact_userinfo(head);
    if let Some(query) = query {
        out.push('?');
        out.push_str(&redact_query(query));
    }
    out
}

/// `scheme://user:password@host/…` → `scheme://user:***@host/…`.
fn redact_userinfo(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, tail) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

fn redact_query(query: &str) -> String {
    let mut out = String::with_capacity(query.len());
    // Pairs are split on `&`, `;` and a stray `?`, each kept as written.
    for piece in query.split_inclusive(['&', ';', '?']) {
        let (pair, separator) = match piece.char_indices().last() {
            Some((i, '&' | ';' | '?')) => piece.split_at(i),
            _ => (piece, ""),
        };
        match pair.split_once('=') {
            Some((name, _)) if is_secret(name) => {
                out.push_str(name);
                out.push_str("=***");
            }
            _ => out.push_str(pair),
        }
        out.push_str(separator);
    }
    out
}

fn is_secret(name: &str) -> bool {
    let name: String = name
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect();
    SECRET_PARAMS.contains(&name.as_str())
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
    }
}
