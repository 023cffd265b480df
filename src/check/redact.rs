//! Secret-looking values in `aoi:meta.args` (spec §11, rule
//! `meta.args-unredacted`).
//!
//! A value leaks when it stands unredacted behind a sensitive flag or key,
//! or inside a URL as userinfo or a sensitive query parameter; under
//! `--redact` each such value is written over (DESIGN §13).

use super::{Checker, Exposure, Seen};
use crate::json::{Event, Kind, Value};

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
    !url_leak_spans(value).is_empty()
}

/// The byte spans of `value` that leak, as `url_leaks` reads a URL: the
/// userinfo password, and each sensitive query parameter's value.
fn url_leak_spans(value: &str) -> Vec<(usize, usize)> {
    let mut spans = vec![];
    let Some(p) = value.find("://") else {
        return spans;
    };
    let base = p + 3;
    let rest = &value[base..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    if let Some(at) = authority.rfind('@')
        && let Some(colon) = authority[..at].find(':')
        && !is_redacted(&authority[colon + 1..at])
    {
        spans.push((base + colon + 1, base + at));
    }
    let Some(q) = rest.find('?') else {
        return spans;
    };
    let query = rest[q + 1..].split('#').next().unwrap_or("");
    let mut at = base + q + 1;
    for pair in query.split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        // A parameter is sensitive by the query names URLs use, or by the
        // names §11 calls sensitive anywhere (`api_secret`, `password`).
        let lower = k.to_ascii_lowercase();
        if (SENSITIVE_QUERY.contains(&lower.as_str()) || is_sensitive_name(k)) && !is_redacted(v) {
            spans.push((at + pair.len() - v.len(), at + pair.len()));
        }
        at += pair.len() + 1;
    }
    spans
}

/// How an argument leaks.
enum Leak {
    /// It is a URL with credentials: these spans of it.
    Url(Vec<(usize, usize)>),
    /// `--flag=VALUE` with a sensitive flag: VALUE, from this byte on.
    Value(usize),
    /// A sensitive `--flag` whose value is the next argument.
    Next,
}

/// How `a` leaks given the argument after it, and the flag's name.
fn leak_of<'a>(a: &'a str, next: Option<&str>) -> Option<(Leak, &'a str)> {
    let spans = url_leak_spans(a);
    if !spans.is_empty() {
        return Some((Leak::Url(spans), ""));
    }
    let flag = a.strip_prefix('-')?.trim_start_matches('-');
    if let Some((name, value)) = flag.split_once('=') {
        if is_sensitive_name(name) && !is_redacted(value) {
            return Some((Leak::Value(a.len() - value.len()), name));
        }
    } else if is_sensitive_name(flag)
        && let Some(next) = next
        && !next.starts_with('-')
        && !is_redacted(next)
    {
        return Some((Leak::Next, flag));
    }
    None
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
    Some(match leak_of(a, next)? {
        (Leak::Url(_), _) => format!("argument {} is a URL with credentials", i + 1),
        (Leak::Value(_), name) => format!("the value of --{name} is not redacted"),
        (Leak::Next, flag) => format!("the value after --{flag} is not redacted"),
    })
}

/// Every sensitive value in `aoi:meta`'s `args` (each top-level member so
/// named: a duplicate is searched too), as the spans `--redact` writes
/// over (DESIGN §13): the same values `meta.args-unredacted` reads as
/// leaks (`framework.rs`), each one of them, not only the first. A value
/// after a sensitive flag, or under a sensitive name, becomes `"***"`;
/// inside a string (`--token=VALUE`, a URL's password or query value) only
/// the secret's bytes become `***`, as for `_url` fields, unless the
/// string is written with escapes (its decoded offsets are not the
/// line's), when the whole string becomes `"***"`.
pub fn args_exposures(ev: &Event<'_>, out: &mut Vec<Exposure>) {
    for (key, args) in ev.as_value().children() {
        if key != "args" {
            continue;
        }
        match args.kind() {
            Kind::Array => {
                let mut argv = args
                    .children()
                    .filter_map(|(_, v)| v.as_str().map(|s| (v, s)));
                let mut cur = argv.next();
                while let Some((v, a)) = cur {
                    let next = argv.next();
                    match leak_of(&a, next.as_ref().map(|(_, n)| &**n)) {
                        Some((Leak::Url(spans), _)) => inside(&v, &spans, out),
                        Some((Leak::Value(from), _)) => inside(&v, &[(from, a.len())], out),
                        Some((Leak::Next, _)) => {
                            if let Some((n, _)) = &next {
                                out.push(whole(n));
                            }
                        }
                        None => {}
                    }
                    cur = next;
                }
            }
            Kind::Object => {
                for (k, v) in args.children() {
                    let Some(value) = v.as_str() else {
                        continue;
                    };
                    if is_sensitive_name(&k) && !is_redacted(&value) {
                        out.push(whole(&v));
                    } else {
                        inside(&v, &url_leak_spans(&value), out);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The whole string value `v` becomes `"***"`.
fn whole(v: &Value<'_>) -> Exposure {
    Exposure {
        path: "args".to_string(),
        url: false,
        spans: vec![v.span()],
        whole: true,
    }
}

/// `spans` of the decoded string `v` become `***`.
fn inside(v: &Value<'_>, spans: &[(usize, usize)], out: &mut Vec<Exposure>) {
    if spans.is_empty() {
        return;
    }
    if v.raw_str().is_some_and(|r| r.contains(&b'\\')) {
        out.push(whole(v));
        return;
    }
    let start = v.span().0 + 1;
    out.push(Exposure {
        path: "args".to_string(),
        url: true,
        spans: spans.iter().map(|&(a, b)| (start + a, start + b)).collect(),
        whole: false,
    });
}

/// What `--redact` writes over in a parsed line: the exposures the
/// checker found, and on an `aoi:meta` line its sensitive `args` values.
/// A late line (a run already judged) was not searched by the checker,
/// so it is searched here. `scratch` holds the list when it is more than
/// the checker's; the common line costs one lookup of its type.
pub fn redactions<'a>(
    check: &'a Checker<'_>,
    ev: &Event<'_>,
    seen: &Seen,
    scratch: &'a mut Vec<Exposure>,
) -> &'a [Exposure] {
    let meta = ev.ty_bytes().as_deref() == Some(b"aoi:meta");
    if !meta && !seen.late {
        return check.exposures();
    }
    if seen.late {
        super::secrets::scan(ev, &check.st.cfg.secret_names, scratch);
    } else {
        scratch.clear();
        scratch.extend_from_slice(check.exposures());
    }
    if meta {
        args_exposures(ev, scratch);
    }
    scratch
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
    fn url_leaks_span_by_span() {
        let spans = |v: &str| -> Vec<String> {
            url_leak_spans(v)
                .into_iter()
                .map(|(a, b)| v[a..b].to_string())
                .collect()
        };
        assert_eq!(
            spans("https://u:pw@h/x?sig=abc&page=2&token=&code=***#k=v"),
            ["pw", "abc"]
        );
        assert_eq!(spans("ftp://u:p@ss@h/?KEY=k1"), ["p@ss", "k1"]);
        assert!(spans("https://u@h/?page=2").is_empty());
        assert!(spans("not a url?token=x").is_empty());
        assert_eq!(spans("https://h/x?api_secret=1&page=2"), ["1"]);
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
