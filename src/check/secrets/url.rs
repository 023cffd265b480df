//! Secrets inside a URL (docs/contract.md §7.1; AFDATA "surgical
//! replacement"): under a key ending in `_url` or `_URL`, a userinfo
//! password, or a query or `k=v` fragment parameter whose form-decoded
//! name is secret, not `***`. Only those bytes are replaced; a value that
//! is not a clean URL yet carries `@` or whitespace is replaced whole.

use super::exposure::{Exposure, MARK};
use super::names::is_secret_name;
use crate::json::{Value, decode};

/// The exposures of a `_url` string value at `path`: one per secret in
/// it, or the whole value.
pub(super) fn url_exposures(
    value: &Value<'_>,
    path: &str,
    names: &[String],
    out: &mut Vec<Exposure>,
) {
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
pub(super) fn url_spans(s: &[u8], names: &[String]) -> Option<Vec<(usize, usize, String)>> {
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
}
