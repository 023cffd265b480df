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

use std::borrow::Cow;
use std::io::{self, Write};

use super::marker::Markers;
use crate::input::scan::Line;
use crate::json::{Children, Event, Kind, Value, decode};

/// The names spec §11 calls sensitive (`args_suspect` reads them, and
/// `meta_args.rs`).
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

/// A key whose value is a secret (spec §11): `*_secret`, `*_SECRET`, or
/// one of `--secret-name`.
pub fn is_secret_name(name: &[u8], names: &[String]) -> bool {
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
        // A list of URLs under a `_url` key: each string in it, as one.
        if object && is_url_name(name) && value.kind() == Kind::Array {
            for (k, (_, v)) in value.children().enumerate() {
                if v.kind() == Kind::String {
                    url_exposures(&v, &format!("{path}[{k}]"), names, out);
                }
            }
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

/// Why `--redact` writes a placeholder where a line was (DESIGN §13: a
/// line that cannot be parsed but holds a secret-looking key is withheld,
/// never relayed raw).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Withholding {
    /// It could not be parsed, and holds a secret-looking key.
    Secret,
    /// As `Secret`, and it is a harness elision marker (a `--marker`
    /// pattern that lets other text through) claiming this many lines.
    Marker(u64),
    /// It was longer than `--max-line-bytes`, so it was never held whole
    /// to be searched: a key seen at its end would come too late for the
    /// bytes already gone, so such a line is always withheld.
    Unheld,
}

impl Withholding {
    /// What is written in the line's place, without a newline (the line's
    /// own ending follows: `\n`, or none for a cut last line).
    ///
    /// The line is replaced, not dropped, so the output has the input's
    /// lines, one for one: every line number in the report is the output's
    /// too, and a reader counting lines (reconcile) counts the same. The
    /// text is neither JSON nor an elision marker, so every aoitap command
    /// reads it as the input's line was read: a line that cannot be parsed,
    /// one step of seq, no event. A withheld marker stays a marker with its
    /// count, in the built-in form, so it still takes no seq step.
    pub fn placeholder(self) -> Cow<'static, [u8]> {
        match self {
            Withholding::Secret => Cow::Borrowed(
                b"aoitap --redact withheld this line: it could not be parsed, and it holds a secret-looking key",
            ),
            Withholding::Unheld => Cow::Borrowed(
                b"aoitap --redact withheld this line: it was longer than --max-line-bytes, so it could not be searched for secrets",
            ),
            Withholding::Marker(n) => Cow::Owned(
                format!("[… {} omitted …]", crate::text::plural(n, "line")).into_bytes(),
            ),
        }
    }
}

/// Whether `--redact` must withhold `item`, and what in it looks secret
/// (none for a line never held). A parsed object is never
/// withheld: its secrets are found on decoded values (`scan`) and
/// replaced span by span.
pub fn withheld(
    item: &Line<'_>,
    names: &[String],
    markers: &Markers,
) -> (Option<Withholding>, Option<Suspect>) {
    let bytes = match *item {
        Line::Complete { json: Ok(ev), .. } if ev.is_object() => return (None, None),
        Line::Complete { bytes, .. }
        | Line::Unterminated {
            bytes: Some(bytes), ..
        } => bytes,
        Line::TooLong { .. } | Line::Unterminated { bytes: None, .. } => {
            return (Some(Withholding::Unheld), None);
        }
    };
    let Some(key) = unparsed_secret(bytes, names).or_else(|| unparsed_name(bytes, names)) else {
        return (None, None);
    };
    // The checker reads only a complete line that is not JSON as a marker.
    let marker = match item {
        Line::Complete { json: Err(_), .. } => markers.claims(bytes),
        _ => None,
    };
    (
        Some(marker.map_or(Withholding::Secret, Withholding::Marker)),
        Some(key),
    )
}

/// What makes a line that could not be parsed look secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Suspect {
    /// A secret key in `"key":` form, with a value that is not `"***"`.
    Key(String),
    /// An `args` key followed by what may be a sensitive argument.
    Args,
    /// A secret name outside the `"key":` form (`api_secret=…`).
    Name(String),
}

/// The `secret.exposed` message for a line that could not be parsed:
/// it names the key, never the value.
pub fn unparsed_message(suspect: &Suspect, redact: bool) -> String {
    let what = match suspect {
        Suspect::Key(key) => format!(
            "the secret-looking key {} with a value that is not \"***\"",
            crate::text::quote(key)
        ),
        Suspect::Args => {
            "an \"args\" member followed by a sensitive-looking name or a URL with userinfo (spec §11)"
                .to_string()
        }
        Suspect::Name(name) => format!(
            "the secret-looking name {} outside any \"key\": form",
            crate::text::quote(name)
        ),
    };
    format!(
        "line could not be parsed, but holds {what}{}",
        if redact {
            ": withheld from the output (--redact)"
        } else {
            ""
        }
    )
}

/// What a finding about a line never held adds under `--redact`.
pub fn unheld_note(redact: bool) -> &'static str {
    if redact {
        ", and withheld from the output: --redact cannot search a line it does not hold"
    } else {
        ""
    }
}

/// The first secret-looking key in a line that could not be parsed (bad
/// JSON or UTF-8, not an object, an elision marker, a cut last line),
/// decided byte by byte, conservatively: what `scan` would call exposed
/// if the line were valid, and more.
///
/// With no parse there are no members, so a key is taken to be the text
/// between the last two unescaped quotes before a `:` (only whitespace
/// between the second and the `:`), decoded leniently. A key cannot hold an
/// unescaped quote, so this finds every key a parser would, wherever an
/// earlier stray quote or a bad byte stands; it also takes some strings for
/// keys (a value followed by `:`), which only withholds more. A secret key
/// (`_secret`, `_SECRET`, a `--secret-name`) counts unless its value is
/// exactly `"***"`, the value a valid line may hold; a `_url` key counts
/// when its string value (to its closing quote, or to the line's end when
/// cut) holds what `url_spans` would replace, and so does a list of such
/// strings. The first `args` key counts when what follows it may hold a
/// sensitive argument (`args_suspect`). One pass, linear in the line.
pub fn unparsed_secret(line: &[u8], names: &[String]) -> Option<Suspect> {
    let mut quotes: (Option<usize>, Option<usize>) = (None, None);
    let mut args_seen = false;
    let mut i = 0;
    while let Some(off) = memchr::memchr3(b'\\', b'"', b':', &line[i..]) {
        let p = i + off;
        i = p + 1;
        match line[p] {
            // The byte after a backslash is escaped: an escaped quote is
            // part of a string, never its end.
            b'\\' => i = p + 2,
            b'"' => quotes = (quotes.1, Some(p)),
            _ => {
                let (Some(open), Some(close)) = quotes else {
                    continue;
                };
                let mut k = p;
                while k > close + 1 && matches!(line[k - 1], b' ' | b'\t' | b'\r' | b'\n') {
                    k -= 1;
                }
                if k != close + 1 {
                    continue;
                }
                let name = decode(&line[open + 1..close]);
                let value = &line[ws_after(line, p + 1)..];
                let exposed = if is_secret_name(&name, names) {
                    !value.starts_with(b"\"***\"")
                } else if is_url_name(&name) {
                    url_value_exposed(value, names)
                } else {
                    if &*name == b"args" && !args_seen {
                        // What follows the first `args` holds every later one.
                        args_seen = true;
                        if args_suspect(&line[p + 1..]) {
                            return Some(Suspect::Args);
                        }
                    }
                    false
                };
                if exposed {
                    return Some(Suspect::Key(String::from_utf8_lossy(&name).into_owned()));
                }
            }
        }
        if i >= line.len() {
            break;
        }
    }
    None
}

/// Whether a `_url` key's value (the bytes after its `:`) holds what
/// `url_spans` would replace: a string (to its closing quote, or to the
/// line's end when cut), or a list of strings, each read as one.
fn url_value_exposed(value: &[u8], names: &[String]) -> bool {
    let exposed = |s: &[u8]| {
        let end = string_end(s).unwrap_or(s.len());
        let url = &s[1..end.max(1)];
        (
            url_spans(&decode(url), names).is_none_or(|s| !s.is_empty()),
            end + 1,
        )
    };
    match value.first() {
        Some(b'"') => exposed(value).0,
        Some(b'[') => {
            // Only forward: each string is read once.
            let mut i = ws_after(value, 1);
            while value.get(i) == Some(&b'"') {
                let (hit, end) = exposed(&value[i..]);
                if hit {
                    return true;
                }
                i = ws_after(value, i + end);
                if value.get(i) != Some(&b',') {
                    break;
                }
                i = ws_after(value, i + 1);
            }
            false
        }
        _ => false,
    }
}

/// Whether the bytes after an `args` key, in a line that could not be
/// parsed, may hold what `meta_args::args_leaks` calls a leak. With no parse
/// there is no telling where `args` ends or what is a flag, so every byte
/// after the key counts and the test is broader, conservatively: any name
/// spec §11 calls sensitive, anywhere, in any case (a flag, a named
/// value, a header, a query parameter: `--token`, `"api_key"`,
/// `Authorization:`, `?access_token=`), but not `author`; a `sig=` or
/// `code=` parameter; a URL with userinfo (`//` then `@` before the
/// authority ends, also written `\/\/`); and any `\u` escape, which could
/// spell any of them. Read in lowercased chunks that overlap by more
/// than the longest name, so memory stays flat however long the line.
fn args_suspect(rest: &[u8]) -> bool {
    use memchr::memmem;
    for sep in [&b"//"[..], br"\/\/"] {
        for p in memmem::find_iter(rest, sep) {
            let authority = &rest[p + sep.len()..];
            let end = authority
                .iter()
                .position(|c| b"/?#\"\\ \t\r\n,]}".contains(c))
                .unwrap_or(authority.len());
            if authority[..end].contains(&b'@') {
                return true;
            }
        }
    }
    const CHUNK: usize = 64 * 1024;
    const OVERLAP: usize = 16;
    let mut buf = Vec::with_capacity(CHUNK.min(rest.len()) + OVERLAP);
    let mut start = 0;
    while start < rest.len() {
        let end = (start + CHUNK + OVERLAP).min(rest.len());
        buf.clear();
        buf.extend(rest[start..end].iter().map(u8::to_ascii_lowercase));
        let plain = SENSITIVE
            .iter()
            .filter(|n| **n != "auth")
            .map(|n| n.as_bytes())
            .chain([&b"sig="[..], b"code=", br"\u"]);
        for needle in plain {
            if memmem::find(&buf, needle).is_some() {
                return true;
            }
        }
        // `auth` is sensitive, `author` is not (`authorization` is).
        for p in memmem::find_iter(&buf, b"auth") {
            let after = &buf[p + 4..];
            if !after.starts_with(b"or") || after.starts_with(b"orization") {
                return true;
            }
        }
        start += CHUNK;
    }
    false
}

/// The first secret name (a key ending in `_secret` or `_SECRET`, or a
/// `--secret-name`) anywhere in a line that could not be parsed, outside
/// the `"key":` form `unparsed_secret` reads: `api_secret=v`, a name among
/// binary bytes, after an elision marker's text. Such a line has no
/// structure to trust, so any name-looking token counts (bounded by bytes
/// that cannot be in a name: not an ASCII letter, digit or `_`), unless
/// it is a key whose value is exactly `"***"`. A memmem search of the few
/// names, only ever run on lines that failed to parse.
fn unparsed_name(line: &[u8], names: &[String]) -> Option<Suspect> {
    use memchr::memmem;
    let part = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let redacted_key = |end: usize| {
        line.get(end) == Some(&b'"') && {
            let colon = ws_after(line, end + 1);
            line.get(colon) == Some(&b':')
                && line[ws_after(line, colon + 1)..].starts_with(b"\"***\"")
        }
    };
    let found = |start: usize, end: usize| {
        Some(Suspect::Name(
            String::from_utf8_lossy(&line[start..end]).into_owned(),
        ))
    };
    for suffix in [&b"_secret"[..], b"_SECRET"] {
        for p in memmem::find_iter(line, suffix) {
            let end = p + suffix.len();
            if line.get(end).is_some_and(|&c| part(c)) || redacted_key(end) {
                continue;
            }
            let start = line[..p]
                .iter()
                .rposition(|&c| !part(c))
                .map_or(0, |s| s + 1);
            return found(start, end);
        }
    }
    for name in names.iter().filter(|n| !n.is_empty()) {
        for p in memmem::find_iter(line, name.as_bytes()) {
            let end = p + name.len();
            let joined = line.get(end).is_some_and(|&c| part(c)) || p > 0 && part(line[p - 1]);
            if !joined && !redacted_key(end) {
                return found(p, end);
            }
        }
    }
    None
}

fn ws_after(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\r' | b'\n') {
        i += 1;
    }
    i
}

/// Where the string opening `s` (at its quote) ends: its closing quote.
fn string_end(s: &[u8]) -> Option<usize> {
    let mut i = 1;
    while let Some(off) = memchr::memchr2(b'"', b'\\', &s[i.min(s.len())..]) {
        let p = i + off;
        if s[p] == b'"' {
            return Some(p);
        }
        i = p + 2;
    }
    None
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
    fn unparsed_keys_are_found_byte_by_byte() {
        let key = |s: &str| match unparsed_secret(s.as_bytes(), &["tok".to_string()]) {
            Some(Suspect::Key(k)) => Some(k),
            _ => None,
        };
        assert_eq!(key(r#"{"a_secret":"v",}"#).as_deref(), Some("a_secret"));
        assert_eq!(key(r#"{"A_SECRET"  :1"#).as_deref(), Some("A_SECRET"));
        assert_eq!(key(r#"{"a\u005fsecret":1,}"#).as_deref(), Some("a_secret"));
        assert_eq!(key(r#"{"tok":"v""#).as_deref(), Some("tok"));
        assert_eq!(key(r#"{"u_url":"https://u:p@h"#).as_deref(), Some("u_url"));
        assert_eq!(key(r#"{"u_url":"a@b",}"#).as_deref(), Some("u_url"));
        // Not exposed: redacted, not a key, or a URL without secrets.
        assert_eq!(key(r#"{"a_secret":"***",}"#), None);
        assert_eq!(key(r#"{"m":"say \"a_secret\": x",}"#), None);
        assert_eq!(key(r#"{"u_url":"https://h/?page=2",}"#), None);
        assert_eq!(key(r#"{"a_Secret":"v",}"#), None);
        assert_eq!(key("a_secret: v"), None);
        assert_eq!(key(r#"\"#), None);
        // Quotes and colons in every arrangement stay linear.
        let hostile = format!("{}{}:", "\":".repeat(1 << 18), " ".repeat(1 << 18));
        assert_eq!(key(&hostile), None);
    }

    #[test]
    fn unparsed_args_and_names_are_found_byte_by_byte() {
        let args = |s: &str| unparsed_secret(s.as_bytes(), &[]) == Some(Suspect::Args);
        assert!(args(r#"{"args":["--token","v"],}"#));
        assert!(args(r#"{"\u0061rgs":["--PASSWORD=v"],}"#));
        assert!(args(r#"{"args":["https://u:p@h/"],}"#));
        assert!(args(r#"{"args":["https:\/\/u:p@h\/"],}"#));
        assert!(args(r#"{"args":["-H","Authorization: Bearer v"],}"#));
        assert!(args(r#"{"args":["--\u0074oken","v"],}"#));
        assert!(!args(r#"{"args":["--author","kim","https://h/x"],}"#));
        assert!(!args(r#"{"argv":["--token","v"],}"#));
        // A name past the first chunk, across a chunk's edge.
        let pad = "a".repeat(64 * 1024 - 12);
        assert!(args(&format!(
            r#"{{"args":["{pad}","--credential","v"],}}"#
        )));
        let name = |s: &[u8], names: &[String]| match unparsed_name(s, names) {
            Some(Suspect::Name(n)) => Some(n),
            _ => None,
        };
        assert_eq!(name(b"api_secret=v", &[]).as_deref(), Some("api_secret"));
        assert_eq!(
            name(b"\x00\x01api_secret\x02v\xfe", &[]).as_deref(),
            Some("api_secret")
        );
        assert_eq!(name(b"X_SECRET", &[]).as_deref(), Some("X_SECRET"));
        assert_eq!(name(br#"{"a_secret" : "***",}"#, &[]), None);
        assert_eq!(name(b"my_secrets=v a_secretary", &[]), None);
        let tok = ["tok".to_string()];
        assert_eq!(name(b"tok=v", &tok).as_deref(), Some("tok"));
        assert_eq!(name(b"stok=v token", &tok), None);
    }

    #[test]
    fn placeholders_are_read_as_the_line_was() {
        let markers = Markers::new(&[]);
        for w in [Withholding::Secret, Withholding::Unheld] {
            let p = w.placeholder();
            // Not JSON (no value starts with `a`), not a marker, no key.
            assert!(p.starts_with(b"aoitap ") && !p.contains(&b'\n'));
            assert_eq!(markers.claims(&p), None);
            assert_eq!(unparsed_secret(&p, &[]), None);
            assert_eq!(unparsed_name(&p, &[]), None);
        }
        assert_eq!(
            markers.claims(&Withholding::Marker(1).placeholder()),
            Some(1)
        );
        assert_eq!(
            markers.claims(&Withholding::Marker(29).placeholder()),
            Some(29)
        );
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
