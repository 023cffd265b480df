//! Secret-looking values in `aoi:meta.args` (spec §11, rule
//! `meta.args-unredacted`).
//!
//! A value leaks when it stands unredacted behind a sensitive flag or key,
//! or inside a URL as userinfo or a sensitive query parameter; under
//! `--redact` each such value is written over (docs/contract.md §3.3).

use super::exposure::Exposure;
use super::names::is_sensitive_name;
use crate::json::{Event, Kind, Value};
use crate::text::quote;

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

/// The byte spans of a URL `value` that leak, unredacted: the userinfo
/// password, and each sensitive query parameter's value.
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
    /// A header (spec §11 "custom headers") `Name: VALUE`, alone or as
    /// `--flag=Name: VALUE`, whose Name is sensitive: VALUE, from this
    /// byte on.
    Header(usize),
}

/// How `a` leaks given the argument after it, and the flag's name.
fn leak_of<'a>(a: &'a str, next: Option<&str>) -> Option<(Leak, &'a str)> {
    let spans = url_leak_spans(a);
    if !spans.is_empty() {
        return Some((Leak::Url(spans), ""));
    }
    let Some(flag) = a.strip_prefix('-') else {
        return header(a).map(|from| (Leak::Header(from), ""));
    };
    let flag = flag.trim_start_matches('-');
    if let Some((name, value)) = flag.split_once('=') {
        let at = a.len() - value.len();
        if is_sensitive_name(name) {
            return (!is_redacted(value)).then_some((Leak::Value(at), name));
        }
        return header(value).map(|from| (Leak::Header(at + from), name));
    }
    if is_sensitive_name(flag)
        && let Some(next) = next
        && !next.starts_with('-')
        && !is_redacted(next)
    {
        return Some((Leak::Next, flag));
    }
    None
}

/// Where the value of a header `Name: VALUE` with a sensitive Name
/// (`Authorization: Bearer …`, `X-Api-Key: …`) starts, unless redacted.
fn header(a: &str) -> Option<usize> {
    let (name, value) = a.split_once(':')?;
    let token = |c: u8| c.is_ascii_alphanumeric() || c == b'-' || c == b'_';
    if name.is_empty() || !name.bytes().all(token) || !is_sensitive_name(name) {
        return None;
    }
    let value = value.trim_start();
    (!is_redacted(value)).then_some(a.len() - value.len())
}

fn describe(i: usize, leak: &Leak, name: &str) -> String {
    match leak {
        Leak::Url(_) => format!("argument {} is a URL with credentials", i + 1),
        Leak::Value(_) => format!("the value of --{name} is not redacted"),
        Leak::Next => format!("the value after --{name} is not redacted"),
        Leak::Header(_) => format!("argument {} is a sensitive header, not redacted", i + 1),
    }
}

/// Every leak in one `args` value, in order, each as what
/// `meta.args-unredacted` says (never the secret) and what `--redact`
/// writes over, until `f` returns false. `args` is read as spec §11's
/// producers write it:
///
/// - an argv list, a window of two strings at a time (a sensitive flag's
///   value is the next string); a list inside it (`[["--token","…"]]`) is
///   read as a list of its own, and an object inside it as named values;
/// - a string, as argv split at whitespace (`"--token …"`);
/// - an object of named values: a string under a sensitive name is a
///   leak, another string is read as one argument (a URL, `--flag=…`, a
///   header); a list or object under a sensitive name is a leak whole,
///   under another name it is walked.
///
/// An explicit stack, not recursion: nesting is limited only by the line.
pub fn args_leaks(args: &Value<'_>, mut f: impl FnMut(String, Exposure) -> bool) {
    if args.kind() == Kind::String {
        string_leaks(args, &mut f);
        return;
    }
    // Each frame: a container's children, and for a list the string
    // before the current one and its index.
    type Prev<'a> = Option<(Value<'a>, String, usize)>;
    let mut stack: Vec<(crate::json::Children<'_>, Prev<'_>, usize)> = vec![];
    if matches!(args.kind(), Kind::Array | Kind::Object) {
        stack.push((args.children(), None, 0));
    }
    while let Some((kids, prev, i)) = stack.last_mut() {
        let object = kids.is_object();
        let Some((key, v)) = kids.next() else {
            // The list's last string has no argument after it.
            if let Some((pv, pa, pi)) = prev.take()
                && let Some((leak, name)) = leak_of(&pa, None)
                && !f(describe(pi, &leak, name), exposure(&pv, &leak, None))
            {
                return;
            }
            stack.pop();
            continue;
        };
        if object {
            match named(&key, &v) {
                Named::Leak(what, e) => {
                    if !f(what, e) {
                        return;
                    }
                }
                Named::Walk => stack.push((v.children(), None, 0)),
                Named::Clean => {}
            }
            continue;
        }
        match v.as_str() {
            Some(a) => {
                let cur = (v, a.into_owned(), *i);
                *i += 1;
                if let Some((pv, pa, pi)) = prev.replace(cur) {
                    let (nv, na, _) = prev.as_ref().expect("just set");
                    if let Some((leak, name)) = leak_of(&pa, Some(na))
                        && !f(describe(pi, &leak, name), exposure(&pv, &leak, Some(nv)))
                    {
                        return;
                    }
                }
            }
            None if matches!(v.kind(), Kind::Array | Kind::Object) => {
                stack.push((v.children(), None, 0));
            }
            None => {}
        }
    }
}

/// What a named value of `args` shows.
enum Named {
    /// A leak, said and placed.
    Leak(String, Exposure),
    /// A list or object under a name that is not sensitive: walked.
    Walk,
    Clean,
}

/// The value `v` under `key` in `args`: a string under a sensitive name
/// is a leak unless redacted, another string is read as one argument (a
/// URL, `--flag=…`, a header); a list or object under a sensitive name
/// is a leak whole, under another name it is walked.
fn named(key: &str, v: &Value<'_>) -> Named {
    let leak = match v.as_str() {
        Some(value) if is_sensitive_name(key) => (!is_redacted(&value)).then(|| {
            (
                format!("the value of {} is not redacted", quote(key)),
                whole(v),
            )
        }),
        Some(value) => leak_of(&value, None).map(|(leak, _)| {
            let what = match leak {
                Leak::Url(_) => "is a URL with credentials",
                Leak::Header(_) => "holds a sensitive header",
                Leak::Value(_) | Leak::Next => "holds a sensitive --flag=value",
            };
            (format!("{} {what}", quote(key)), exposure(v, &leak, None))
        }),
        None if matches!(v.kind(), Kind::Array | Kind::Object) => {
            if !is_sensitive_name(key) || v.raw() == b"\"***\"" {
                return Named::Walk;
            }
            Some((
                format!("the value of {} is not redacted", quote(key)),
                whole(v),
            ))
        }
        None => None,
    };
    leak.map_or(Named::Clean, |(what, e)| Named::Leak(what, e))
}

/// `args` as one string: argv split at ASCII whitespace, each leak
/// written over inside the string (`"--token ***"`).
fn string_leaks(v: &Value<'_>, f: &mut impl FnMut(String, Exposure) -> bool) {
    let Some(s) = v.as_str() else {
        return;
    };
    let words: Vec<(usize, &str)> = s
        .split_ascii_whitespace()
        .map(|w| (w.as_ptr() as usize - s.as_ptr() as usize, w))
        .collect();
    for (i, &(at, a)) in words.iter().enumerate() {
        let next = words.get(i + 1).copied();
        let Some((leak, name)) = leak_of(a, next.map(|(_, n)| n)) else {
            continue;
        };
        let spans = match &leak {
            Leak::Url(spans) => spans.iter().map(|&(x, y)| (at + x, at + y)).collect(),
            Leak::Value(from) | Leak::Header(from) => vec![(at + from, at + a.len())],
            Leak::Next => next.map_or(vec![], |(n, w)| vec![(n, n + w.len())]),
        };
        let mut out = vec![];
        inside(v, &spans, &mut out);
        if let Some(e) = out.pop()
            && !f(describe(i, &leak, name), e)
        {
            return;
        }
    }
}

/// What `--redact` writes over for `leak` of the string `v` (the string
/// after it is `next`).
fn exposure(v: &Value<'_>, leak: &Leak, next: Option<&Value<'_>>) -> Exposure {
    let len = v.as_str().map_or(0, |s| s.len());
    let spans = match leak {
        Leak::Url(spans) => spans.clone(),
        Leak::Value(from) | Leak::Header(from) => vec![(*from, len)],
        Leak::Next => return whole(next.unwrap_or(v)),
    };
    let mut out = vec![];
    inside(v, &spans, &mut out);
    out.pop().unwrap_or_else(|| whole(v))
}

/// Every sensitive value in `aoi:meta`'s `args` (each top-level member so
/// named: a duplicate is searched too), as the spans `--redact` writes
/// over (docs/contract.md §3.3): the same values `meta.args-unredacted` reads as
/// leaks (`args_leaks`), each one of them, not only the first. A value
/// after a sensitive flag, or under a sensitive name, becomes `"***"`;
/// inside a string (`--token=VALUE`, a header's value, a URL's password
/// or query value) only the secret's bytes become `***`, as for `_url`
/// fields, unless the string is written with escapes (its decoded offsets
/// are not the line's), when the whole string becomes `"***"`.
pub fn args_exposures(ev: &Event<'_>, out: &mut Vec<Exposure>) {
    for (key, args) in ev.as_value().children() {
        if key == "args" {
            args_leaks(&args, |_, e| {
                out.push(e);
                true
            });
        }
    }
}

/// The whole value `v` becomes `"***"`.
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

#[cfg(test)]
mod tests {
    use super::*;

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

    /// The first leak in an argv list, as `args_leaks` reads one, a
    /// window of two strings at a time.
    fn argv_leak(args: &[&str]) -> Option<String> {
        (0..args.len()).find_map(|i| {
            let (leak, name) = leak_of(args[i], args.get(i + 1).copied())?;
            Some(describe(i, &leak, name))
        })
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
