//! Secret-looking values in `aoi:meta.args` (spec §11, rule
//! `meta.args-unredacted`).
//!
//! A value leaks when it stands unredacted behind a sensitive flag or key,
//! or inside a URL as userinfo or a sensitive query parameter.

const SENSITIVE: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "key",
    "credential",
    "cookie",
    "authorization",
    "auth",
    "bearer",
    "private",
];

const SENSITIVE_QUERY: &[&str] = &[
    "sig",
    "signature",
    "token",
    "access_token",
    "refresh_token",
    "id_token",
    "code",
    "key",
    "api_key",
    "apikey",
    "password",
    "secret",
    "client_secret",
];

/// Is a flag or key name sensitive? (`author` is not, though it holds `auth`.)
pub fn is_sensitive_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    // `authorization` is sensitive; `author` (which holds `auth`) is not.
    lower.contains("authorization")
        || SENSITIVE
            .iter()
            .any(|s| lower.replace("author", "").contains(s))
}

/// Does the value show that it was redacted (or is it a reference, not a value)?
pub fn is_redacted(value: &str) -> bool {
    let v = value.trim();
    let lower = v.to_ascii_lowercase();
    v.is_empty()
        || v.contains("***")
        || lower.contains("redacted")
        || v.starts_with('$')
        || v.chars()
            .all(|c| c == '*' || c == 'x' || c == 'X' || c == '•')
}

/// A URL that carries a password or a sensitive query value, unredacted.
pub fn url_leaks(value: &str) -> bool {
    let Some(p) = value.find("://") else {
        return false;
    };
    let rest = &value[p + 3..];
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if let Some((userinfo, _)) = authority.rsplit_once('@')
        && let Some((_, password)) = userinfo.split_once(':')
        && !is_redacted(password)
    {
        return true;
    }
    let Some(q) = rest.find('?') else {
        return false;
    };
    let query = rest[q + 1..].split('#').next().unwrap_or("");
    query.split('&').any(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        SENSITIVE_QUERY.contains(&k.to_ascii_lowercase().as_str()) && !is_redacted(v)
    })
}

/// The first leak in an argv-like list, as a short description that does
/// not repeat the secret.
pub fn argv_leak<S: AsRef<str>>(args: &[S]) -> Option<String> {
    (0..args.len()).find_map(|i| {
        let next = args.get(i + 1).map(AsRef::as_ref);
        arg_leak(i, args[i].as_ref(), next)
    })
}

/// A leak at argument `i` (0-based), `a`, given the argument after it:
/// the whole of what `argv_leak` looks at, so a list can be read as a
/// window of two, whatever its length.
pub fn arg_leak(i: usize, a: &str, next: Option<&str>) -> Option<String> {
    if url_leaks(a) {
        return Some(format!("argument {} is a URL with credentials", i + 1));
    }
    let flag = a.strip_prefix('-')?.trim_start_matches('-');
    if let Some((name, value)) = flag.split_once('=') {
        if is_sensitive_name(name) && !is_redacted(value) {
            return Some(format!("the value of --{name} is not redacted"));
        }
    } else if is_sensitive_name(flag)
        && let Some(next) = next
        && !next.starts_with('-')
        && !is_redacted(next)
    {
        return Some(format!("the value after --{flag} is not redacted"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for s in [
            "--token",
            "api_key",
            "X-Auth",
            "password",
            "clientSecret",
            "private-key",
        ] {
            assert!(is_sensitive_name(s), "{s}");
        }
        for s in ["--author", "limit", "query"] {
            assert!(!is_sensitive_name(s), "{s}");
        }
    }

    #[test]
    fn argv() {
        assert!(argv_leak(&["--token", "abc123"]).is_some());
        assert!(argv_leak(&["--token=abc123"]).is_some());
        assert!(argv_leak(&["--token", "***"]).is_none());
        assert!(argv_leak(&["--token", "$TOKEN"]).is_none());
        assert!(argv_leak(&["--api-key=[REDACTED]"]).is_none());
        assert!(argv_leak(&["--author", "kim"]).is_none());
        assert!(argv_leak(&["--limit", "5"]).is_none());
        assert!(argv_leak(&["https://u:pw@host/x"]).is_some());
        assert!(argv_leak(&["https://host/x?sig=abc&a=1"]).is_some());
        assert!(argv_leak(&["https://host/x?sig=<redacted>"]).is_none());
        assert!(argv_leak(&["https://host/x?page=2"]).is_none());
    }
}
