//! An event as the program sees it: the line's own parse (one parse, DESIGN
//! §8), made a jaq value. Strings are decoded as verify decodes them;
//! numbers keep their spelling's value (jaq reads `12345678901234567890`
//! as the big integer it is).

use std::borrow::Cow;
use std::rc::Rc;

use bytes::Bytes;
use jaq_json::{Map, Val};

use crate::json::{Event, Kind, Value};

/// The deepest a value is nested for the program: deeper, and the event
/// is not filtered (jaq's own walk of it would recurse as deep).
pub const MAX_DEPTH: usize = 100_000;

/// The event as a jaq value; `None` when it nests deeper than
/// [`MAX_DEPTH`]. Its top level comes from the walk's own index. With
/// `only`, just those top-level keys are made (the program reads no
/// other: see `Plan::keys`).
pub fn event_val(ev: &Event<'_>, only: Option<&[Vec<u8>]>) -> Option<Val> {
    let line = Line::new(ev.line());
    let members = ev.members();
    let mut map = Map::with_capacity_and_hasher(
        only.map_or(members.size_hint().0, <[_]>::len),
        Default::default(),
    );
    for (k, c) in members {
        if only.is_some_and(|only| !only.iter().any(|o| **o == *k)) {
            continue;
        }
        // A repeated key: the last one wins, as in jq.
        map.insert(line.text(k), line.val(&c, 1)?);
    }
    Some(Val::obj(map))
}

/// One copy of the line, which every string without an escape is a slice
/// of: a string costs the program one small allocation, not two, and
/// allocation is most of what building an event costs.
struct Line<'a> {
    bytes: &'a [u8],
    shared: Bytes,
}

impl<'a> Line<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        let shared = Bytes::copy_from_slice(bytes);
        Line { bytes, shared }
    }

    /// A string value: a slice of the shared copy when `s` stands in the
    /// line as it is, else its own bytes (a decoded escape).
    fn text(&self, s: Cow<'_, [u8]>) -> Val {
        let line = self.bytes.as_ptr() as usize;
        match s {
            Cow::Borrowed(b) => {
                let at = (b.as_ptr() as usize).wrapping_sub(line);
                if at
                    .checked_add(b.len())
                    .is_some_and(|end| end <= self.bytes.len())
                {
                    return Val::utf8_str(self.shared.slice(at..at + b.len()));
                }
                Val::utf8_str(b.to_vec())
            }
            Cow::Owned(b) => Val::utf8_str(lone_surrogates_replaced(b)),
        }
    }

    fn val(&self, v: &Value<'_>, depth: usize) -> Option<Val> {
        Some(match v.kind() {
            Kind::Null => Val::Null,
            Kind::Bool => Val::Bool(v.as_bool().unwrap_or(false)),
            Kind::Number => match jaq_json::read::parse_single_num(v.raw()) {
                Some(n) => Val::Num(n),
                None => Val::Null,
            },
            // The line is valid UTF-8 (verify's json.invalid-utf8 says when
            // not), so the decoded bytes are the string's text as they are.
            Kind::String => self.text(v.decoded().unwrap_or_default()),
            _ if depth >= MAX_DEPTH => return None,
            Kind::Array => {
                let items: Option<Vec<Val>> =
                    v.children().map(|(_, c)| self.val(&c, depth + 1)).collect();
                Val::Arr(Rc::new(items?))
            }
            Kind::Object => {
                let mut map = Map::default();
                for (k, c) in v.children() {
                    let key = match k {
                        Cow::Borrowed(k) => Cow::Borrowed(k.as_bytes()),
                        Cow::Owned(k) => Cow::Owned(k.into_bytes()),
                    };
                    map.insert(self.text(key), self.val(&c, depth + 1)?);
                }
                Val::obj(map)
            }
        })
    }
}

/// A decoded string with each lone surrogate (`"\ud800"`, which the
/// decoder keeps as its three WTF-8 bytes) made one U+FFFD, as jq makes
/// it; jaq would make each byte one.
fn lone_surrogates_replaced(b: Vec<u8>) -> Vec<u8> {
    if std::str::from_utf8(&b).is_ok() {
        return b;
    }
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == 0xED && b.get(i + 1).is_some_and(|c| c & 0xE0 == 0xA0) && i + 2 < b.len() {
            out.extend_from_slice("\u{FFFD}".as_bytes());
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

/// Whether `input` holds a secret-looking value: a string under a key
/// `meta.args` redaction treats as sensitive, `*_secret` or a
/// `--secret-name`, or a URL with a password. jaq quotes values in its
/// errors (`cannot add "hunter2" and 1`), and what a program makes of a
/// secret (`ascii_upcase`, `.[0:4]`) is a secret too: a finding about such
/// an event quotes none of it.
pub fn holds_secret(input: &Val, names: &[String]) -> bool {
    let mut stack = vec![(input, false)];
    while let Some((v, under_secret)) = stack.pop() {
        match v {
            Val::TStr(b) | Val::BStr(b) => {
                let text = String::from_utf8_lossy(b);
                // A URL with a password or a secret-named parameter; a
                // flag of meta.args that names one (`--api-key=K`, `--token`).
                let named = || {
                    (text.contains("://") || text.starts_with('-'))
                        && crate::check::quote::quotable(&text).is_none()
                };
                if under_secret || named() {
                    return true;
                }
            }
            Val::Null => {}
            // A number or a boolean under a secret name is a secret too.
            _ if under_secret => return true,
            Val::Arr(items) => stack.extend(items.iter().map(|i| (i, under_secret))),
            Val::Obj(map) => {
                for (k, item) in map.iter() {
                    let named = match k {
                        Val::TStr(k) | Val::BStr(k) => {
                            crate::check::is_sensitive_name(&String::from_utf8_lossy(k))
                                || crate::check::is_secret_name(k, names)
                        }
                        _ => false,
                    };
                    stack.push((item, under_secret || named));
                }
            }
            _ => {}
        }
    }
    false
}
