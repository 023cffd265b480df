//! An event as the program sees it: the line's own parse (one parse, docs/contract.md
//! §3.2), made a jaq value. Strings are decoded as verify decodes them;
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

    /// The value `v` stands for, at `depth` (its parent's depth plus
    /// one); `None` past [`MAX_DEPTH`]. One pass over its bytes, with the
    /// open containers on a stack of our own: linear in the value's size
    /// at any depth (finding each child's end afresh at each level, as
    /// `Value::children` does, was quadratic: 26 s for a field 99,990
    /// deep), and no recursion for a deep value to overflow.
    fn val(&self, v: &Value<'_>, depth: usize) -> Option<Val> {
        let raw = v.raw();
        match v.kind() {
            Kind::String => return Some(self.text(v.decoded().unwrap_or_default())),
            Kind::Object | Kind::Array => {}
            _ => return Some(scalar(raw)),
        }
        // Each open container is where its items begin on one shared
        // stack: a container is allocated once, at its size, when it
        // closes (most of what building costs is allocation).
        let mut open: Vec<(bool, usize)> = vec![];
        let mut items: Vec<Val> = vec![];
        let mut i = 0;
        loop {
            i = skip_ws(raw, i);
            let &c = raw.get(i)?;
            i += 1;
            let made = match c {
                b'{' | b'[' => {
                    if depth + open.len() >= MAX_DEPTH {
                        return None;
                    }
                    open.push((c == b'{', items.len()));
                    continue;
                }
                b',' | b':' => continue,
                b'}' | b']' => {
                    let (object, from) = open.pop()?;
                    if object {
                        // Keys and values alternate; a repeated key: the
                        // last one wins, as in jq.
                        let mut map = Map::with_capacity_and_hasher(
                            (items.len() - from) / 2,
                            Default::default(),
                        );
                        let mut kv = items.drain(from..);
                        while let (Some(k), Some(v)) = (kv.next(), kv.next()) {
                            map.insert(k, v);
                        }
                        drop(kv);
                        Val::obj(map)
                    } else {
                        Val::Arr(Rc::new(items.split_off(from)))
                    }
                }
                b'"' => {
                    let end = string_end(raw, i - 1);
                    let inside = &raw[i..end - 1];
                    i = end;
                    self.text(crate::json::decode(inside))
                }
                _ => {
                    let end = scalar_end(raw, i - 1);
                    let s = scalar(&raw[i - 1..end]);
                    i = end;
                    s
                }
            };
            if open.is_empty() {
                return Some(made);
            }
            items.push(made);
        }
    }
}

/// `null`, `true`, `false` or a number, as jaq reads it (a number keeps
/// its spelling's value: `12345678901234567890` is that big integer).
fn scalar(raw: &[u8]) -> Val {
    match raw {
        b"null" => Val::Null,
        b"true" => Val::Bool(true),
        b"false" => Val::Bool(false),
        _ => jaq_json::read::parse_single_num(raw).map_or(Val::Null, Val::Num),
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b
        .get(i)
        .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
    {
        i += 1;
    }
    i
}

/// One past the closing quote of the validated string opening at `i`.
fn string_end(b: &[u8], mut i: usize) -> usize {
    i += 1;
    while let Some(at) = memchr::memchr2(b'"', b'\\', &b[i..]) {
        i += at;
        if b[i] == b'"' {
            return i + 1;
        }
        i += 2;
    }
    b.len()
}

/// The end of the literal or number at `i`.
fn scalar_end(b: &[u8], mut i: usize) -> usize {
    while b
        .get(i)
        .is_some_and(|c| !matches!(c, b',' | b']' | b'}' | b' ' | b'\t' | b'\r' | b'\n'))
    {
        i += 1;
    }
    i
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

/// What jaq writes of a number JSON has no word for, written as jq
/// writes it: `NaN` as `null`, `Infinity` as the largest finite double
/// (docs/contract.md §1.5: every output line is JSON). Read off the
/// written text, outside its strings: no walk of a value that may be
/// 100,000 deep.
pub fn json_numbers(text: &mut Vec<u8>) {
    let has = |w: &[u8]| text.windows(w.len()).any(|x| x == w);
    if !has(b"NaN") && !has(b"Infinity") {
        return;
    }
    let mut out = Vec::with_capacity(text.len() + 32);
    let (mut i, mut in_string) = (0, false);
    while i < text.len() {
        let b = text[i];
        if in_string {
            out.push(b);
            if b == b'\\' && i + 1 < text.len() {
                out.push(text[i + 1]);
                i += 1;
            } else if b == b'"' {
                in_string = false;
            }
        } else if b == b'"' {
            in_string = true;
            out.push(b);
        } else if text[i..].starts_with(b"NaN") {
            out.extend_from_slice(b"null");
            i += 2;
        } else if text[i..].starts_with(b"Infinity") {
            out.extend_from_slice(b"1.7976931348623157e+308");
            i += 7;
        } else {
            out.push(b);
        }
        i += 1;
    }
    *text = out;
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
                        && crate::check::quotable::quotable(&text).is_none()
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

/// Whether `v` nests deeper than `limit` (a scalar is depth 0), found
/// without recursion: a value the program made may be far deeper than any
/// event (`reduce range(1e6) as $x (null; [.])`), and printing one or
/// quoting it in an error recurses as deep as it nests.
pub fn deeper_than(v: &Val, limit: usize) -> bool {
    if !matches!(v, Val::Arr(_) | Val::Obj(_)) {
        return false;
    }
    let mut todo: Vec<(&Val, usize)> = vec![(v, 0)];
    while let Some((v, depth)) = todo.pop() {
        let container = |c: &&Val| matches!(c, Val::Arr(_) | Val::Obj(_));
        match v {
            _ if depth >= limit => return true,
            Val::Arr(items) => todo.extend(items.iter().filter(container).map(|c| (c, depth + 1))),
            Val::Obj(map) => todo.extend(map.values().filter(container).map(|c| (c, depth + 1))),
            _ => {}
        }
    }
    false
}

/// Drop `v` without recursion: dropping a value recurses as deep as it
/// nests, and past the stack that is an abort.
pub fn dismantle(v: Val) {
    let mut todo = vec![v];
    while let Some(v) = todo.pop() {
        match v {
            Val::Arr(items) => {
                if let Ok(items) = Rc::try_unwrap(items) {
                    todo.extend(items);
                }
            }
            Val::Obj(map) => {
                if let Ok(map) = Rc::try_unwrap(map) {
                    todo.extend(map.into_values());
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{Arena, Parser};
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    fn built(line: &str) -> Option<Val> {
        let mut arena = Arena::default();
        let index = Parser::new().parse(line.as_bytes(), &mut arena).unwrap();
        event_val(&index.event(line.as_bytes(), &arena), None)
    }

    /// Any JSON text with spaces where JSON allows them.
    fn value() -> impl Strategy<Value = String> {
        let scalar = prop::sample::select(vec![
            "null",
            "true",
            "false",
            "0",
            "-0",
            "1.50",
            "-1e2",
            "1E+2",
            "12345678901234567890",
            "\"\"",
            "\"x\"",
            "\"\\u00e9\\n\"",
            "\"\\ud83d\\ude00\"",
            "\"a\\\\\\\"b\"",
            "\"é\"",
        ])
        .prop_map(str::to_string);
        scalar.prop_recursive(6, 48, 4, |inner| {
            let ws = prop::sample::select(vec!["", " ", "\n\t "]);
            prop_oneof![
                (prop::collection::vec(inner.clone(), 0..4), ws.clone())
                    .prop_map(|(items, w)| format!("[{w}{}{w}]", items.join(&format!("{w},{w}")))),
                (
                    prop::collection::vec(
                        (prop::sample::select(vec!["a", "b", "", "\\u0041"]), inner),
                        0..4
                    ),
                    ws
                )
                    .prop_map(|(kvs, w)| {
                        let m: Vec<String> = kvs
                            .iter()
                            .map(|(k, v)| format!("\"{k}\"{w}:{w}{v}"))
                            .collect();
                        format!("{{{w}{}{w}}}", m.join(","))
                    }),
            ]
        })
    }

    /// The one pass makes what jaq's own parser makes of the same line
    /// (`AOITAP_PROPTEST_CASES`, default 256).
    #[test]
    fn numbers_json_has_no_word_for_are_written_as_jq_writes_them() {
        let mut t = br#"[NaN,-Infinity,{"NaN":"Infinity \" NaN"},Infinity]"#.to_vec();
        json_numbers(&mut t);
        assert_eq!(
            String::from_utf8(t).unwrap(),
            r#"[null,-1.7976931348623157e+308,{"NaN":"Infinity \" NaN"},1.7976931348623157e+308]"#
        );
    }

    #[test]
    fn an_event_is_the_value_jaq_reads() {
        TestRunner::new(Config::with_cases(crate::proptest_cases()))
            .run(&prop::collection::vec(value(), 0..4), |vs| {
                let members: Vec<String> = vs
                    .iter()
                    .enumerate()
                    .map(|(k, v)| format!("\"k{k}\": {v}"))
                    .collect();
                let line = format!("{{{}}}", members.join(", "));
                let jaq = jaq_json::read::parse_single(line.as_bytes()).unwrap();
                prop_assert_eq!(built(&line), Some(jaq), "{}", line);
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn a_value_past_the_limit_is_none_and_at_it_is_made() {
        let nest = |n: usize| format!("{{\"d\":{}1{}}}", "[".repeat(n), "]".repeat(n));
        // Made, examined and dropped without recursion: a test thread's
        // stack holds no recursion this deep.
        assert!(built(&nest(MAX_DEPTH)).is_none());
        let deep = built(&nest(MAX_DEPTH - 1)).unwrap();
        assert!(deeper_than(&deep, MAX_DEPTH - 1) && !deeper_than(&deep, MAX_DEPTH));
        dismantle(deep);
    }
}
