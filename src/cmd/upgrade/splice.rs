//! The bytes of a forwarded event: aoitap's envelope spliced into the
//! upstream's object, every other member kept as it came (docs/contract.md
//! §1.6).

use std::io::{self, Write};

use serde::Serialize;

use super::own::{OwnRun, members};
use crate::json::{Event, Value};

/// The most of a line's rest `write_to` copies to write it in one call.
const COPIED_REST: usize = 4096;

/// One line of the upgraded stream as it is written: the bytes aoitap
/// makes, then the rest of the upstream's object, borrowed as it came. A
/// forwarded event's members are never copied: a line of 100 MiB costs
/// its own buffer, not a second one.
pub struct Spliced<'a> {
    made: Vec<u8>,
    rest: [&'a [u8]; 2],
}

impl<'a> Spliced<'a> {
    /// A line begun in `buf`'s room (what it holds is cleared).
    pub fn new(mut buf: Vec<u8>) -> Spliced<'a> {
        buf.clear();
        Spliced {
            made: buf,
            rest: [&[], &[]],
        }
    }

    /// The room, for the next line.
    pub fn into_room(self) -> Vec<u8> {
        self.made
    }

    #[inline]
    pub fn extend_from_slice(&mut self, b: &[u8]) {
        self.settle();
        self.made.extend_from_slice(b);
    }

    /// The line ends with `head` and `tail` of the upstream's line, the
    /// whitespace after its object (a CR before its break) left off: it
    /// is the line's, not the event's.
    fn borrow(&mut self, head: &'a [u8], tail: &'a [u8]) {
        let trim = |b: &'a [u8]| b.trim_ascii_end();
        self.rest = match tail.trim_ascii_end() {
            [] => [trim(head), &[]],
            tail => [head, tail],
        };
    }

    /// The whole line in one buffer: for a line read again (a forwarded
    /// error) or rewritten (a document's line breaks).
    pub fn whole(&mut self) -> &mut Vec<u8> {
        self.settle();
        &mut self.made
    }

    #[inline]
    fn settle(&mut self) {
        if self.rest.iter().all(|p| p.is_empty()) {
            return;
        }
        for part in std::mem::take(&mut self.rest) {
            self.made.extend_from_slice(part);
        }
    }

    /// The line and its break. A line of ordinary size is written in one
    /// call, its rest copied after what was made (cheaper than three
    /// more writes through `out`); a long line's rest is written from
    /// where it came, never copied.
    pub fn write_to(&mut self, out: &mut dyn Write) -> io::Result<()> {
        if self.rest.iter().map(|p| p.len()).sum::<usize>() <= COPIED_REST {
            self.settle();
            self.made.push(b'\n');
            return out.write_all(&self.made);
        }
        out.write_all(&self.made)?;
        for part in self.rest {
            out.write_all(part)?;
        }
        out.write_all(b"\n")
    }
}

impl Write for Spliced<'_> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The opening `{` of the line's object.
fn open(ev: &Event<'_>) -> usize {
    let b = ev.line();
    b.iter().position(|c| *c == b'{').unwrap_or(0)
}

/// The object's members after its `{` (at `start`), with `cut` (an
/// envelope member) left out: the rest of the line as it came.
fn rest_after(b: &[u8], start: usize, cut: Option<(usize, usize)>) -> (&[u8], &[u8]) {
    match cut {
        Some((a, z)) if a >= start => (&b[start..a], &b[z..]),
        _ => (&b[start..], &[][..]),
    }
}

/// As `rest_after`, from the line's own `{`.
fn rest<'a>(ev: &Event<'a>, cut: Option<(usize, usize)>) -> (&'a [u8], &'a [u8]) {
    rest_after(ev.line(), open(ev) + 1, cut)
}

/// Whether what is left of an object after its `{` holds no member.
fn is_empty(rest: (&[u8], &[u8])) -> bool {
    let first = rest
        .0
        .iter()
        .chain(rest.1)
        .find(|c| !c.is_ascii_whitespace());
    first == Some(&b'}')
}

/// The event with aoitap's envelope: after its `type` when that is its
/// first member (as the spec writes events), else first, with `ty` as a
/// `type` before it when the event has none; `origin` after the
/// envelope; then the event's own members as they came, `cut` (its
/// protocol's envelope) left out, up to the object's closing `}`, borrowed.
pub fn reenvelope<'a>(
    ev: &Event<'a>,
    cut: Option<(usize, usize)>,
    ty: Option<&[u8]>,
    origin: Option<&str>,
    own: &mut OwnRun,
    line: &mut Spliced<'a>,
) {
    let start = open(ev) + 1;
    let (mut head, mut tail) = rest_after(ev.line(), start, cut);
    // Nothing is borrowed yet: what is made goes straight into the buffer.
    let made = line.whole();
    made.push(b'{');
    match (ty, ev.leading_type_end()) {
        (Some(ty), _) => {
            made.extend_from_slice(br#""type":"#);
            made.extend_from_slice(ty);
            made.push(b',');
        }
        // (A cut is never inside the leading `type`: it is after it.)
        (None, Some(end)) if end >= start && end - start <= head.len() => {
            let (ty, after) = head.split_at(end - start);
            made.extend_from_slice(ty);
            made.push(b',');
            head = after;
            // What follows `type` is `,` and the next member, or `}`.
            match head.iter().position(|c| !c.is_ascii_whitespace()) {
                Some(k) if head[k] == b',' => head = &head[k + 1..],
                Some(_) => {}
                None => {
                    let k = tail.iter().position(|c| !c.is_ascii_whitespace());
                    if let Some(k) = k.filter(|k| tail[*k] == b',') {
                        (head, tail) = (&[], &tail[k + 1..]);
                    }
                }
            }
        }
        (None, _) => {}
    }
    own.envelope(made);
    if let Some(origin) = origin {
        made.extend_from_slice(br#","origin":"#);
        serde_json::to_writer(&mut *made, origin).expect("a string");
    }
    if !is_empty((head, tail)) {
        made.push(b',');
    }
    line.borrow(head, tail);
}

/// `{"type":TYPE,"aoi":...,FIELDS,COPIED,"properties":{"upstream":EVENT}}`:
/// a 1.0 error or warning made from an upstream one, which is kept whole
/// (its envelope `cut` out) under `properties.upstream`.
pub fn rewritten<'a>(
    ev: &Event<'a>,
    ty: &str,
    fields: &impl Serialize,
    copied: impl IntoIterator<Item = (&'static str, Value<'a>)>,
    cut: Option<(usize, usize)>,
    own: &mut OwnRun,
    line: &mut Spliced<'a>,
) {
    let line = line.whole();
    line.extend_from_slice(br#"{"type":"#);
    serde_json::to_writer(&mut *line, ty).expect("a string");
    line.push(b',');
    own.envelope(line);
    members(line, fields);
    for (k, v) in copied {
        line.extend_from_slice(b",\"");
        line.extend_from_slice(k.as_bytes());
        line.extend_from_slice(b"\":");
        line.extend_from_slice(v.raw());
    }
    upstream_whole(ev, cut, line);
}

/// `,"properties":{"upstream":EVENT}}`: the upstream event, `cut` out,
/// every other byte as it came.
fn upstream_whole(ev: &Event<'_>, cut: Option<(usize, usize)>, line: &mut Vec<u8>) {
    let rest = rest(ev, cut);
    line.extend_from_slice(br#","properties":{"upstream":{"#);
    line.extend_from_slice(rest.0);
    line.extend_from_slice(rest.1);
    trim_end(line);
    line.extend_from_slice(b"}}");
}

/// A line's trailing whitespace (a CR before its break) off `line`.
fn trim_end(line: &mut Vec<u8>) {
    while line.last().is_some_and(|c| c.is_ascii_whitespace()) {
        line.pop();
    }
}

/// `{"type":NAME,"aoi":...,"NAME":<the line>}`: an event that cannot be a
/// domain event as it stands, kept whole.
pub fn wrapped(ev: &Event<'_>, name: &str, own: &mut OwnRun, line: &mut Spliced<'_>) {
    let line = line.whole();
    line.extend_from_slice(br#"{"type":"#);
    serde_json::to_writer(&mut *line, name).expect("a string");
    line.push(b',');
    own.envelope(line);
    line.extend_from_slice(b",");
    serde_json::to_writer(&mut *line, name).expect("a string");
    line.push(b':');
    line.extend_from_slice(ev.as_value().raw());
    line.push(b'}');
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Map, Value as Json};

    use super::*;
    use crate::json::{Arena, Parser};

    /// Whitespace as a producer may put it between tokens.
    fn ws() -> impl Strategy<Value = String> {
        prop::sample::select(vec!["", " ", "  ", "\t", "\r\n ", "\n"]).prop_map(str::to_string)
    }

    /// An object line: `type` first or not at all, an `aoi` envelope
    /// anywhere or not at all, other members, whitespace anywhere.
    fn line() -> impl Strategy<Value = String> {
        (
            any::<bool>(),
            prop::option::of(0usize..4),
            prop::collection::vec(("[a-z]{1,3}", 0u32..100), 0..4),
            prop::collection::vec(ws(), 16),
        )
            .prop_map(|(typed, aoi_at, others, ws)| {
                let mut members: Vec<String> = others
                    .iter()
                    .enumerate()
                    .map(|(i, (k, v))| format!(r#""{k}{i}":{}{v}"#, ws[i]))
                    .collect();
                if let Some(at) = aoi_at {
                    let env = format!(r#""aoi":{}{{"seq":3,"run":"R"}}"#, ws[5]);
                    members.insert(at.min(members.len()), env);
                }
                if typed {
                    members.insert(0, format!(r#""type"{}:"hit""#, ws[6]));
                }
                let mut s = format!("{}{{{}", ws[7], ws[8]);
                for (i, m) in members.iter().enumerate() {
                    if i > 0 {
                        s.push_str(&format!("{},{}", ws[9 + i % 3], ws[12 + i % 3]));
                    }
                    s.push_str(m);
                }
                s.push_str(&format!("{}}}{}", ws[15], ws[4]));
                s
            })
    }

    proptest! {
        /// Re-enveloped, a line is the same object with aoitap's `aoi`
        /// for its own, `type` still first when it came first, and
        /// every other member as it came.
        #[test]
        fn reenveloped_is_the_object_with_its_envelope_replaced(text in line()) {
            let mut arena = Arena::default();
            let index = Parser::new().parse(text.as_bytes(), &mut arena).unwrap();
            let ev = index.event(text.as_bytes(), &arena);
            let mut own = OwnRun::new();
            let mut made = Spliced::new(vec![]);
            reenvelope(&ev, ev.aoi_cut(), None, None, &mut own, &mut made);
            let mut out = vec![];
            made.write_to(&mut out).unwrap();
            prop_assert_eq!(out.pop(), Some(b'\n'));
            let shown = String::from_utf8_lossy(&out).into_owned();
            let mut got: Map<String, Json> = serde_json::from_slice(&out)
                .map_err(|e| TestCaseError::fail(format!("{e}: {shown}")))?;
            let envelope = got.remove("aoi").unwrap_or_default();
            prop_assert_eq!(&envelope["seq"], &serde_json::json!(0), "{}", shown);
            prop_assert!(envelope["run"].is_string(), "{}", shown);
            let mut want: Map<String, Json> = serde_json::from_str(&text).unwrap();
            want.remove("aoi");
            prop_assert_eq!(&got, &want);
            let first = |s: &str| s.trim_start().trim_start_matches('{').trim_start().starts_with(r#""type""#);
            if first(&text) {
                prop_assert!(first(&shown), "{}", shown);
            }
            prop_assert!(!out.ends_with(b" ") && !out.ends_with(b"\r"));
        }
    }
}
