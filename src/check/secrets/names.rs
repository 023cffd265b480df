//! The names that mark a secret (docs/contract.md §7.1; spec §11): a key
//! ending in `_secret` or `_SECRET` (or a `--secret-name`), a key ending
//! in `_url` or `_URL` whose URL may carry one, and the words spec §11
//! calls sensitive in a flag, a header or a query parameter.

/// The names spec §11 calls sensitive (`is_sensitive_name`, and
/// `unparsed.rs`'s `args_suspect`, read them).
pub(super) const SENSITIVE: &[&str] = &[
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

/// A key whose value is a secret (spec §11): `*_secret`, `*_SECRET`, or
/// one of `--secret-name`.
pub fn is_secret_name(name: &[u8], names: &[String]) -> bool {
    name.ends_with(b"_secret")
        || name.ends_with(b"_SECRET")
        || names.iter().any(|n| n.as_bytes() == name)
}

pub(super) fn is_url_name(name: &[u8]) -> bool {
    name.ends_with(b"_url") || name.ends_with(b"_URL")
}

/// Is a flag or key name sensitive? (`author` is not, though it holds `auth`.)
pub fn is_sensitive_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    // `authorization` is sensitive; `author` (which holds `auth`) is not.
    lower.contains("authorization")
        || SENSITIVE
            .iter()
            .any(|s| lower.replace("author", "").contains(s))
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
}
