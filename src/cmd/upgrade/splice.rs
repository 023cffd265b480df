//! The bytes of a forwarded event: aoitap's envelope spliced into the
//! upstream's object, every other member kept as it came (docs/contract.md
//! §22).

use serde::Serialize;

use super::own::{OwnRun, members};
use crate::json::{Event, Value};

/// The opening `{` of the line's object.
fn open(ev: &Event<'_>) -> usize {
    let b = ev.line();
    b.iter().position(|c| *c == b'{').unwrap_or(0)
}

/// The object's members after its `{`, with `cut` (an envelope member)
/// left out: the rest of the line as it came.
fn rest<'a>(ev: &Event<'a>, cut: Option<(usize, usize)>) -> (&'a [u8], &'a [u8]) {
    let b = ev.line();
    let start = open(ev) + 1;
    match cut {
        Some((a, z)) if a >= start => (&b[start..a], &b[z..]),
        _ => (&b[start..], &[][..]),
    }
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
/// protocol's envelope) left out, up to the object's closing `}`.
pub fn reenvelope(
    ev: &Event<'_>,
    cut: Option<(usize, usize)>,
    ty: Option<&[u8]>,
    origin: Option<&str>,
    own: &mut OwnRun,
    line: &mut Vec<u8>,
) {
    let (mut head, mut tail) = rest(ev, cut);
    line.push(b'{');
    let start = open(ev) + 1;
    match (ty, ev.leading_type_end()) {
        (Some(ty), _) => {
            line.extend_from_slice(br#""type":"#);
            line.extend_from_slice(ty);
            line.push(b',');
        }
        // (A cut is never inside the leading `type`: it is after it.)
        (None, Some(end)) if end >= start && end - start <= head.len() => {
            line.extend_from_slice(&head[..end - start]);
            line.push(b',');
            head = &head[end - start..];
            // What follows `type` is `,` and the next member, or `}`.
            let mut after = head.iter().chain(tail).enumerate();
            let next = after.find(|(_, c)| !c.is_ascii_whitespace());
            if let Some((k, b',')) = next {
                if k < head.len() {
                    head = &head[k + 1..];
                } else {
                    tail = &tail[k - head.len() + 1..];
                    head = &[];
                }
            }
        }
        (None, _) => {}
    }
    own.envelope(line);
    if let Some(origin) = origin {
        line.extend_from_slice(br#","origin":"#);
        serde_json::to_writer(&mut *line, origin).expect("a string");
    }
    if !is_empty((head, tail)) {
        line.push(b',');
    }
    line.extend_from_slice(head);
    line.extend_from_slice(tail);
    // Whitespace around the object (a CR before its break) is the line's,
    // not the event's: the object is written as its members are.
    trim_end(line);
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
    line: &mut Vec<u8>,
) {
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
pub fn wrapped(ev: &Event<'_>, name: &str, own: &mut OwnRun, line: &mut Vec<u8>) {
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
