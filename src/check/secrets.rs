//! Exposed secrets (DESIGN §10; spec §11; AFDATA "Secret protection"):
//! a member at any depth whose key ends in `_secret` or `_SECRET` (or is a
//! `--secret-name`, matched exactly) and whose value is not exactly
//! `"***"`; and inside a string under a key ending in `_url` or `_URL`, a
//! userinfo password or a query or `k=v` fragment parameter whose
//! form-decoded name is secret, not `***`.
//!
//! The walk (`json/walk.rs`) marks a line whose keys carry those suffixes, so
//! only marked lines are searched here (every line when `--secret-name`
//! is given). Each exposure keeps the byte spans `--redact` replaces, so a
//! redacted line is the same bytes with only those spans changed. Nothing
//! here ever copies a value into a message: findings name the key path.

use std::io::{self, Write};

use crate::json::{Children, Event, Kind, Value, decode};

/// One exposed value and what `--redact` writes over it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exposure {
    /// The key path, `a.b[2].c_secret`.
    pub path: String,
    /// In a `_url` value (`secret.url-exposed`), not a `_secret` one.
    pub url: bool,
    /// Byte spans of the line to replace, in order, disjoint.
    pub spans: Vec<(usize, usize)>,
    /// Replace each span with `"***"` (a whole JSON value) or `***` (a
    /// span inside a URL string).
    pub whole: bool,
}

/// The redaction marker, as a JSON value and inside a string.
const MARK: &[u8] = b"***";

fn is_secret_name(name: &[u8], names: &[String]) -> bool {
    name.ends_with(b"_secret")
        || name.ends_with(b"_SECRET")
        || names.iter().any(|n| n.as_bytes() == name)
}

fn is_url_name(name: &[u8]) -> bool {
    name.ends_with(b"_url") || name.ends_with(b"_URL")
}

/// Every exposure in `ev`, into `out` (cleared first).
pub fn scan(ev: &Event<'_>, names: &[String], out: &mut Vec<Exposure>) {
    out.clear();
    if !ev.has_marked_keys() && names.is_empty() {
        return;
    }
    let root = ev.as_value();
    // An explicit stack, not recursion: nesting is limited only by the
    // line (json/mod.rs), and the call stack must not be.
    let mut stack: Vec<(Children<'_>, usize, u64)> = vec![(root.children(), 0, 0)];
    let mut path = String::new();
    while let Some((kids, base, index)) = stack.last_mut() {
        let Some((key, value)) = kids.next() else {
            stack.pop();
            continue;
        };
        let base = *base;
        path.truncate(base);
        let object = kids.is_object();
        if object {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(&key);
        } else {
            path.push_str(&format!("[{index}]"));
            *index += 1;
        }
        let name = key.as_bytes();
        if object && is_secret_name(name, names) {
            if value.raw() != b"\"***\"" {
                out.push(Exposure {
                    path: path.clone(),
                    url: false,
                    spans: vec![value.span()],
                    whole: true,
                });
            }
            continue;
        }
        if object && is_url_name(name) && value.kind() == Kind::String {
            url_exposures(&value, &path, names, out);
            continue;
        }
        if matches!(value.kind(), Kind::Object | Kind::Array) {
            stack.push((value.children(), path.len(), 0));
        }
    }
}

/// The exposures of a `_url` string value at `path`: one per secret in
/// it, or the whole value.
fn url_exposures(value: &Value<'_>, path: &str, names: &[String], out: &mut Vec<Exposure>) {
    let Some(raw) = value.raw_str() else {
        return;
    };
    let start = value.span().0 + 1;
    let whole = |what: &str| Exposure {
        path: format!("{path} ({what})"),
        url: true,
        spans: vec![value.span()],
        whole: true,
    };
    if raw.contains(&b'\\') {
        // Spans of the decoded text are not spans of the line: a URL
        // written with escapes that holds a secret is replaced whole.
        match url_spans(&decode(raw), names) {
            None => out.push(whole("not a clean URL, and it holds @ or whitespace")),
            Some(spans) if spans.is_empty() => {}
            Some(spans) => out.push(whole(&spans[0].2)),
        }
        return;
    }
    match url_spans(raw, names) {
        None => out.push(whole("not a clean URL, and it holds @ or whitespace")),
        Some(spans) => out.extend(spans.into_iter().map(|(a, b, what)| Exposure {
            path: format!("{path} ({what})"),
            url: true,
            spans: vec![(start + a, start + b)],
            whole: false,
        })),
    }
}

/// The secret spans of one URL (AFDATA "surgical replacement"), offsets
/// into `s`; `None` when the value must be replaced whole: it is not a
/// clean scheme-prefixed URL, yet carries `@` or inner whitespace.
fn url_spans(s: &[u8], names: &[String]) -> Option<Vec<(usize, usize, String)>> {
    let ws = |c: &u8| c.is_ascii_whitespace();
    let lead = s.iter().take_while(|c| ws(c)).count();
    let trail = s.iter().rev().take_while(|c| ws(c)).count();
    let t = &s[lead..s.len().saturating_sub(trail).max(lead)];
    let scheme = t.windows(3).position(|w| w == b"://").filter(|&p| {
        p > 0
            && t[0].is_ascii_alphabetic()
            && t[..p]
                .iter()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'.' | b'-'))
    });
    let Some(scheme) = scheme.filter(|_| !t.iter().any(ws)) else {
        let suspicious = t.contains(&b'@') || t.iter().any(ws);
        return if suspicious { None } else { Some(vec![]) };
    };
    let mut spans = vec![];
    let auth_start = scheme + 3;
    let auth_end = t[auth_start..]
        .iter()
        .position(|c| matches!(c, b'/' | b'?' | b'#'))
        .map_or(t.len(), |p| auth_start + p);
    let authority = &t[auth_start..auth_end];
    if let Some(at) = authority.iter().rposition(|&c| c == b'@')
        && let Some(colon) = authority[..at].iter().position(|&c| c == b':')
    {
        let (a, b) = (auth_start + colon + 1, auth_start + at);
        if b > a && &t[a..b] != MARK {
            spans.push((a, b, "password".to_string()));
        }
    }
    let hash = t[auth_end..]
        .iter()
        .position(|&c| c == b'#')
        .map(|p| auth_end + p);
    let query_end = hash.unwrap_or(t.len());
    if let Some(q) = t[auth_end..query_end].iter().position(|&c| c == b'?') {
        params(t, auth_end + q + 1, query_end, names, &mut spans);
    }
    if let Some(h) = hash
        && t[h + 1..].contains(&b'=')
    {
        params(t, h + 1, t.len(), names, &mut spans);
    }
    Some(
        spans
            .into_iter()
            .map(|(a, b, what)| (a + lead, b + lead, what))
            .collect(),
    )
}

/// `k=v(&k=v)*` in `t[from..to]`: the value spans of secret names.
fn params(
    t: &[u8],
    from: usize,
    to: usize,
    names: &[String],
    spans: &mut Vec<(usize, usize, String)>,
) {
    let mut at = from;
    for seg in t[from..to].split(|&c| c == b'&') {
        if let Some(eq) = seg.iter().position(|&c| c == b'=') {
            let name = form_decode(&seg[..eq]);
            let value = &seg[eq + 1..];
            if is_secret_name(&name, names) && !value.is_empty() && value != MARK {
                let what = format!("parameter {}", String::from_utf8_lossy(&name));
                spans.push((at + eq + 1, at + seg.len(), what));
            }
        }
        at += seg.len() + 1;
    }
}

/// `application/x-www-form-urlencoded` decoding of a parameter name.
fn form_decode(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = s.get(i + 1..i + 3).and_then(|h| {
                    std::str::from_utf8(h)
                        .ok()
                        .and_then(|h| u8::from_str_radix(h, 16).ok())
                });
                match hex {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                        continue;
                    }
                    None => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    out
}

/// `line[range]` with `cut` left out and every exposure replaced: every
/// other byte as it came, written to `out` piece by piece (no copy of the
/// line is made, so a long line costs no third buffer).
pub fn redact(
    line: &[u8],
    range: (usize, usize),
    cut: Option<(usize, usize)>,
    exposures: &[Exposure],
    out: &mut impl Write,
) -> io::Result<()> {
    let mut spans: Vec<(usize, usize, Option<&[u8]>)> = exposures
        .iter()
        .flat_map(|e| {
            let with: &[u8] = if e.whole { b"\"***\"" } else { MARK };
            e.spans.iter().map(move |&(a, b)| (a, b, Some(with)))
        })
        .chain(cut.map(|(a, b)| (a, b, None)))
        .filter(|&(a, b, _)| a >= range.0 && b <= range.1)
        .collect();
    spans.sort_unstable_by_key(|&(a, b, _)| (a, b));
    let mut at = range.0;
    for (a, b, with) in spans {
        // A span inside one already written over (a secret inside the
        // cut envelope) is gone with it.
        if a < at {
            continue;
        }
        out.write_all(&line[at..a])?;
        out.write_all(with.unwrap_or_default())?;
        at = b;
    }
    out.write_all(&line[at..range.1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(url: &str) -> Option<Vec<String>> {
        url_spans(url.as_bytes(), &[]).map(|v| {
            v.into_iter()
                .map(|(a, b, _)| url[a..b].to_string())
                .collect()
        })
    }

    #[test]
    fn url_secrets_are_found_span_by_span() {
        assert_eq!(
            spans("https://u:pw@h/cb?code_secret=abc&x=1#token_secret=t&y"),
            Some(vec!["pw".into(), "abc".into(), "t".into()])
        );
        assert_eq!(spans("https://h/cb?code=abc#section"), Some(vec![]));
        assert_eq!(spans("https://u:***@h/?a_secret=***"), Some(vec![]));
        // Form-decoded names: `%5F` is `_`.
        assert_eq!(spans("https://h/?a%5Fsecret=v"), Some(vec!["v".into()]));
        assert_eq!(spans("https://h/?A_SECRET=v"), Some(vec!["v".into()]));
        assert_eq!(spans("https://h/?a_Secret=v"), Some(vec![]));
        // Not a clean URL: whole when it carries @ or whitespace.
        assert_eq!(spans("user:pass@host:5432/db"), None);
        assert_eq!(spans("https://h/a b"), None);
        assert_eq!(spans("/cb?page=2"), Some(vec![]));
        // The password runs to the authority's last @.
        assert_eq!(spans("ftp://u:p@ss@h/"), Some(vec!["p@ss".into()]));
    }

    #[test]
    fn redaction_changes_only_the_spans() {
        let line = br#"{"a_secret":{"x":1},"b":2,"u_url":"https://u:pw@h/?k_secret=v"}"#;
        let exposures = vec![
            Exposure {
                path: "a_secret".into(),
                url: false,
                spans: vec![(12, 19)],
                whole: true,
            },
            Exposure {
                path: "u_url".into(),
                url: true,
                spans: vec![(45, 47), (60, 61)],
                whole: false,
            },
        ];
        let mut out = vec![];
        redact(line, (0, line.len()), None, &exposures, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"a_secret":"***","b":2,"u_url":"https://u:***@h/?k_secret=***"}"#
        );
    }
}
