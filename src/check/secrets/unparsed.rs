//! Secrets in a line that is not JSON (docs/contract.md §7.1, §3.3): bad
//! JSON or UTF-8, not an object, an elision marker, a cut last line, a
//! line over `--max-line-bytes`. With no parse there are no members, so
//! the line is read byte by byte, conservatively: anything `scan` would
//! call exposed if the line were valid, and more. Under `--redact` such a
//! line is withheld, never relayed raw, and a placeholder stands in its
//! place.

use std::borrow::Cow;

use super::names::{SENSITIVE, is_secret_name, is_url_name};
use super::url::url_spans;
use crate::check::marker::Markers;
use crate::input::scan::Line;
use crate::json::{Nesting, decode};

/// Why `--redact` writes a placeholder where a line was (docs/contract.md §3.3: a
/// line that cannot be parsed but holds a secret-looking key is withheld,
/// never relayed raw).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Withholding {
    /// It could not be parsed, and holds a secret-looking key.
    Secret,
    /// As `Secret`, and it is a harness elision marker (a `--marker`
    /// pattern that lets other text through) claiming this many lines.
    Marker(u64),
    /// A later line of a document over several lines whose earlier line
    /// showed a secret-looking key: the secret's value may be on this
    /// one (an object, an array, a long string), and the lines before
    /// are relayed already, so the document cannot be written redacted
    /// whole.
    InDocument,
    /// A later line after one that could not be parsed and ended in a
    /// secret-looking key: the key's value may be on this one, and no
    /// line since has parsed as an object.
    AfterKey,
    /// It was longer than `--max-line-bytes`, so it was never held whole
    /// to be searched: a key seen at its end would come too late for the
    /// bytes already gone, so such a line is always withheld.
    Unheld,
    /// A line of an input that is not text (compressed, UTF-16, binary)
    /// that does not parse: its bytes cannot be searched for a key.
    NotText,
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
            Withholding::InDocument => Cow::Borrowed(
                b"aoitap --redact withheld this line: a line before it in its document holds a secret-looking key",
            ),
            Withholding::AfterKey => Cow::Borrowed(
                b"aoitap --redact withheld this line: a line before it ends in a secret-looking key, and its value may be here",
            ),
            Withholding::Unheld => Cow::Borrowed(
                b"aoitap --redact withheld this line: it was longer than --max-line-bytes, so it could not be searched for secrets",
            ),
            Withholding::NotText => Cow::Borrowed(
                b"aoitap --redact withheld this line: the input is not text (compressed, UTF-16, binary), so it could not be searched for secrets",
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
    let Some(key) = unparsed_secret(bytes, names)
        .or_else(|| unparsed_name(bytes, names))
        .or_else(|| trailing_key(bytes, names).map(|(key, _)| key))
    else {
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

/// A secret-looking key (or a `_url` one) that ends a line that could not
/// be parsed, its value not on the line, or begun there and left open:
/// `"api_secret"`, `"api_secret":`, `"db_url": [`, `"api_secret": "`,
/// spelled with escapes or not, inside a string (`\"api_secret\":`) or
/// bare (`api_secret=`). Its value may be on the lines that follow, so a
/// relay under `--redact` withholds them too. Reads the line's tail only,
/// from its end; with the key, where the line goes on after it.
pub fn trailing_key(line: &[u8], names: &[String]) -> Option<(Suspect, usize)> {
    let trim = |end: usize| {
        let mut end = end;
        while end > 0 && matches!(line[end - 1], b' ' | b'\t' | b'\r' | b'\n') {
            end -= 1;
        }
        end
    };
    let escaped = |at: usize| line[..at].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 1;
    let mut end = trim(line.len());
    // A value begun: an opening bracket, or a string's opening quote
    // (one with a `:` before it, not a key's closing one).
    if end > 0 && b"[{".contains(&line[end - 1]) {
        end = trim(end - 1);
    } else if end > 0 && line[end - 1] == b'"' && !escaped(end - 1) {
        let before = trim(end - 1);
        if before > 0 && line[before - 1] == b':' {
            end = before;
        }
    }
    if end > 0 && b":=".contains(&line[end - 1]) {
        end = trim(end - 1);
    }
    if end == 0 {
        return None;
    }
    let (name, after) = if line[end - 1] != b'"' {
        // A bare name: `api_secret=`, `export API_SECRET`.
        let start = line[..end]
            .iter()
            .rposition(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
            .map_or(0, |p| p + 1);
        (std::borrow::Cow::Borrowed(&line[start..end]), end)
    } else if escaped(end - 1) {
        // A key inside a string, its quotes escaped: `\"api_secret\"`.
        let close = end - 2;
        let open = memchr::memmem::rfind(&line[..close], b"\\\"")?;
        (decode(&line[open + 2..close]), end)
    } else {
        // The opening quote: the nearest one before that no backslash escapes.
        let mut open = end - 1;
        loop {
            open = memchr::memrchr(b'"', &line[..open])?;
            if !escaped(open) {
                break;
            }
        }
        (decode(&line[open + 1..end - 1]), end)
    };
    (!name.is_empty() && (is_secret_name(&name, names) || is_url_name(&name))).then(|| {
        (
            Suspect::Key(String::from_utf8_lossy(&name).into_owned()),
            after,
        )
    })
}

/// Whether a line that could not be parsed, outside a document, ended in
/// a secret-looking key whose value has not yet been read whole: it may
/// be on the lines still to come (docs/contract.md §3.3).
#[derive(Default)]
pub struct AfterKey {
    value: Option<Value>,
}

/// The value a key that ended its line is waiting for.
struct Value {
    nesting: Nesting,
    /// Some of it has been read (its brackets then say where it ends).
    started: bool,
}

impl AfterKey {
    /// No key's value is awaited.
    pub fn idle(&self) -> bool {
        self.value.is_none()
    }

    /// How `--redact` writes `item` for what the lines before it ended
    /// in; `held`: it is a document's line, which the document withholds.
    /// Every line is withheld until the value closes: an object or a
    /// string on the next line is the value itself, a list opened runs
    /// to its `]`.
    pub fn next(&mut self, item: &Line<'_>, held: bool, names: &[String]) -> Option<Withholding> {
        // An event ends in no key: while no value is awaited, a stream of
        // events pays one test here.
        let object = item.event().is_some();
        if self.value.is_none() && (held || object) {
            return None;
        }
        let carried = self.value.is_some().then_some(Withholding::AfterKey);
        let bytes = match *item {
            _ if held => {
                self.value = None;
                return carried;
            }
            Line::Complete { bytes, .. }
            | Line::Unterminated {
                bytes: Some(bytes), ..
            } => bytes,
            _ => return carried,
        };
        if let Some(v) = &mut self.value {
            // Before the value: the key's `:` or `=` on a line of its own.
            let rest = match v.started {
                true => bytes,
                false => {
                    let at = bytes.iter().position(|b| !b.is_ascii_whitespace());
                    let at = at.map_or(bytes.len(), |a| a + usize::from(b":=".contains(&bytes[a])));
                    &bytes[at..]
                }
            };
            v.nesting.feed(rest);
            v.started |= rest.iter().any(|b| !b.is_ascii_whitespace());
            if v.started && !v.nesting.open() && !v.nesting.in_string() {
                self.value = None;
            }
        }
        // Only a line that is not an event is read for a key at its end.
        if !object && let Some((_, after)) = trailing_key(bytes, names) {
            let mut nesting = Nesting::default();
            nesting.feed(&bytes[after..]);
            let started = nesting.open() || nesting.in_string();
            self.value = Some(Value { nesting, started });
        }
        carried
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
