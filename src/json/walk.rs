//! The one pass over a line: strict RFC 8259 on UTF-8 bytes (spec §2),
//! recording the member index as it goes.

use super::decode::{decode, hex4};
use super::index::*;
use super::stops::{Stops, stops_string, stops16};

/// Reusable parse state; one per thread.
#[derive(Default)]
pub struct Parser {
    stack: BitStack,
}

fn syntax(i: usize, expected: &'static str) -> JsonError {
    JsonError::Syntax {
        column: i + 1,
        expected,
    }
}

/// Where a walk stopped and what it wanted there. Eight bytes, so that a
/// walker step's `Result<usize, Fault>` comes back in registers: on
/// ~200-byte lines the walk makes some twenty such returns per line.
#[derive(Debug, Clone, Copy)]
struct Fault {
    at: u32,
    want: Want,
}

#[derive(Debug, Clone, Copy)]
enum Want {
    Key,
    Colon,
    MemberNext,
    ElementNext,
    Value,
    End,
    Hex,
    Escape,
    Utf8,
    NoControl,
    Close,
    Digit,
    FractionDigit,
    ExponentDigit,
}

impl Want {
    fn text(self) -> &'static str {
        match self {
            Want::Key => "a string key",
            Want::Colon => "':' after an object key",
            Want::MemberNext => "',' or '}' after an object member",
            Want::ElementNext => "',' or ']' after an array element",
            Want::Value => "a JSON value",
            Want::End => "end of line after the JSON value",
            Want::Hex => "four hex digits after \\u",
            Want::Escape => "an escape: one of \" \\ / b f n r t u",
            Want::Utf8 => "UTF-8",
            Want::NoControl => "no raw control character inside a string (escape it)",
            Want::Close => "a closing '\"'",
            Want::Digit => "a digit",
            Want::FractionDigit => "a digit after '.'",
            Want::ExponentDigit => "a digit in the exponent",
        }
    }
}

/// The walk's result: the index after what was read.
type Walked = Result<usize, Fault>;

/// `i` is within a line of at most `u32::MAX` bytes (`Parser::parse`).
#[inline]
fn fault(i: usize, want: Want) -> Fault {
    Fault { at: i as u32, want }
}

/// What the walk notices in strings on the way.
#[derive(Default)]
struct Flags {
    /// A string anywhere in the line holds ESC or CSI.
    ansi: bool,
    /// The string being read holds an escape: set by `string_rest`, read
    /// back by `string`.
    escaped: bool,
    /// A key anywhere ends in `_secret`/`_SECRET`/`_url`/`_URL`.
    marked: bool,
}

/// Does a key (raw, with `escaped` saying whether it holds escapes) end in
/// a suffix that marks a secret or a URL (AFDATA: `_secret` and `_SECRET`,
/// `_url` and `_URL`, no other casing)? Checked on every key during the
/// one walk, so the secret rules cost a few compares per key.
#[inline(always)]
fn marked_key(raw: &[u8], escaped: bool) -> bool {
    let marked = |k: &[u8]| {
        k.ends_with(b"_secret")
            || k.ends_with(b"_SECRET")
            || k.ends_with(b"_url")
            || k.ends_with(b"_URL")
    };
    if escaped {
        return marked(&decode(raw));
    }
    // Most keys fail at once: neither suffix's `_` stands where it would.
    let n = raw.len();
    let underscore = (n >= 4 && raw[n - 4] == b'_') || (n >= 7 && raw[n - 7] == b'_');
    underscore && marked(raw)
}

impl Parser {
    pub fn new() -> Parser {
        Parser::default()
    }

    /// Validate `line` (without its `\n`) and index its top-level members
    /// into `arena`. On failure the arena holds no trace of the line.
    pub fn parse(&mut self, line: &[u8], arena: &mut Arena) -> Result<Index, JsonError> {
        self.parse_with::<true>(line, Plain::Scan, arena)
    }

    /// `parse` for a line at `at` in bytes that `stops` marked: where its
    /// strings end is read from the marks (the wide pass). The index is
    /// the one `parse` makes.
    pub fn parse_marked(
        &mut self,
        line: &[u8],
        at: usize,
        stops: &Stops,
        arena: &mut Arena,
    ) -> Result<Index, JsonError> {
        self.parse_with::<true>(line, Plain::Marked(stops, at), arena)
    }

    /// `parse`, with the envelope's fast form tried first (`ENVELOPE`) or
    /// not (the tests compare the two).
    fn parse_with<const ENVELOPE: bool>(
        &mut self,
        line: &[u8],
        plain: Plain<'_>,
        arena: &mut Arena,
    ) -> Result<Index, JsonError> {
        if line.len() > u32::MAX as usize || arena.top.len() > (u32::MAX / 2) as usize {
            return Err(syntax(0, "a line of at most 4 GiB"));
        }
        let mut index = Index {
            top: (arena.top.len() as u32, arena.top.len() as u32),
            aoi: (arena.aoi.len() as u32, arena.aoi.len() as u32),
            first: [NONE; 5],
            ..Index::default()
        };
        self.stack.clear();
        let mut walk = Walk {
            b: line,
            plain,
            stack: &mut self.stack,
            arena,
            index: &mut index,
            flags: Flags::default(),
        };
        let walked = walk.line::<ENVELOPE>();
        let flags = walk.flags;
        index.ansi = flags.ansi;
        index.marked = flags.marked;
        if let Err(f) = walked {
            arena.top.truncate(index.top.0 as usize);
            arena.aoi.truncate(index.aoi.0 as usize);
            // The walk stops at the first fault; a byte that is not UTF-8
            // anywhere in the line is the finding that names the cause.
            return Err(match std::str::from_utf8(line) {
                Err(u) => JsonError::Utf8 {
                    column: u.valid_up_to() + 1,
                },
                Ok(_) => syntax(f.at as usize, f.want.text()),
            });
        }
        index.top.1 = arena.top.len() as u32;
        index.aoi.1 = arena.aoi.len() as u32;
        Ok(index)
    }
}

/// One pass over a line.
struct Walk<'w> {
    b: &'w [u8],
    plain: Plain<'w>,
    stack: &'w mut BitStack,
    arena: &'w mut Arena,
    index: &'w mut Index,
    flags: Flags,
}

/// Which object's members are being indexed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Top,
    Aoi,
}

impl Walk<'_> {
    fn line<const ENVELOPE: bool>(&mut self) -> Result<(), Fault> {
        let b = self.b;
        let i = ws(b, 0);
        let envelope = if ENVELOPE { self.envelope() } else { None };
        let i = if let Some(j) = envelope {
            self.index.object = true;
            match separator(b, j)? {
                Sep::Next(k) => self.members_from::<false>(k)?,
                Sep::Close(k) => k,
            }
        } else if b.get(i) == Some(&b'{') {
            self.index.object = true;
            self.members::<false>(i)?
        } else {
            self.value(i)?
        };
        let i = ws(b, i);
        if i == b.len() {
            Ok(())
        } else {
            Err(fault(i, Want::End))
        }
    }

    /// The object at `i` (its `{`), indexing its members; returns the index
    /// after its `}`. One copy per level (`AOI`: the envelope's own
    /// members), so the list and the reserved names are known when
    /// compiling.
    fn members<const AOI: bool>(&mut self, i: usize) -> Walked {
        let b = self.b;
        let i = ws(b, i + 1);
        if b.get(i) == Some(&b'}') {
            return Ok(i + 1);
        }
        self.members_from::<AOI>(i)
    }

    /// The members of an object from the one at `i` (where a key should
    /// start) to the object's end; returns the index after its `}`.
    fn members_from<const AOI: bool>(&mut self, mut i: usize) -> Walked {
        let level = if AOI { Level::Aoi } else { Level::Top };
        let b = self.b;
        loop {
            if b.get(i) != Some(&b'"') {
                return Err(fault(i, Want::Key));
            }
            let (end, escaped) = string(b, i, self.plain, &mut self.flags)?;
            let (key_start, key_end) = (i + 1, end - 1);
            let key = &b[key_start..key_end];
            self.flags.marked |= marked_key(key, escaped);
            let tag = tag_of(level, key, escaped);
            let value_start = match after(b, end, b':') {
                Some(j) => ws(b, j),
                None => return Err(fault(ws(b, end), Want::Colon)),
            };
            // Scalars, the most common values, without a call. A value
            // counts as escaped unless it is a string seen to hold none.
            let (j, value_escaped) = match b.get(value_start) {
                Some(b'"') => string(b, value_start, self.plain, &mut self.flags)?,
                Some(b'0'..=b'9' | b'-') => (number(b, value_start)?, true),
                // A second `aoi` is a duplicate of its own: its members
                // are not indexed as the envelope's.
                Some(b'{') if tag == Tag::Aoi && self.index.first[Tag::Aoi as usize] == NONE => {
                    self.index.aoi_object = true;
                    (self.members::<true>(value_start)?, true)
                }
                _ => (self.value(value_start)?, true),
            };
            let m = Member {
                key_start: key_start as u32,
                key_end: key_end as u32,
                value_start: value_start as u32,
                value_end: j as u32,
                key_escaped: escaped,
                value_escaped,
                tag,
            };
            if self.push(m, level) && m.tag == Tag::Seq {
                self.index.seq = Uint::of(&b[value_start..j]);
            }
            match separator(b, j)? {
                Sep::Next(k) => i = k,
                Sep::Close(k) => return Ok(k),
            }
        }
    }

    /// The envelope as the spec's examples write it, compact and first:
    /// `{"type":"T","aoi":{"seq":N,"run":"R"}` with T and R plain ASCII
    /// (no escape) and N an integer. Such a line's four reserved members
    /// are indexed here in one pass of fixed compares, as the member loop
    /// would index them (same positions, tags and flags: the tests below
    /// compare the two on every one-byte edit of such lines and on random
    /// ones); returns the index after
    /// the envelope's `}`. Anything else, `None`, and the member loop
    /// reads the line from its start. The member loop spends some 200
    /// instructions a member; on the first 40,000 lines of the reference
    /// stream this took `verify` from 112.8M to 94.9M instructions
    /// (callgrind, benches/RESULTS.md).
    fn envelope(&mut self) -> Option<usize> {
        const HEAD: &[u8] = br#"{"type":""#;
        const AOI: &[u8] = br#"","aoi":{"seq":"#;
        const RUN: &[u8] = br#","run":""#;
        const TAIL: &[u8] = br#""}"#;
        let b = self.b;
        if !b.starts_with(HEAD) {
            return None;
        }
        // Each string ends at its first stop byte, which must be the `"`
        // that the next fixed part starts with: an escape, a control or a
        // byte over 0x7F is not this form.
        let q = skip_plain(b, HEAD.len(), self.plain);
        let seq = q + AOI.len();
        if b.get(q..seq)? != AOI {
            return None;
        }
        let c = digits(b, seq);
        // `0` or `[1-9][0-9]*`, and nothing after it but the `,` below.
        if c == seq || (c > seq + 1 && b[seq] == b'0') {
            return None;
        }
        let run = c + RUN.len();
        if b.get(c..run)? != RUN {
            return None;
        }
        let r = skip_plain(b, run, self.plain);
        let end = r + TAIL.len();
        if b.get(r..end)? != TAIL {
            return None;
        }
        let member = |key: (usize, usize), value: (usize, usize), escaped, tag| Member {
            key_start: key.0 as u32,
            key_end: key.1 as u32,
            value_start: value.0 as u32,
            value_end: value.1 as u32,
            key_escaped: false,
            value_escaped: escaped,
            tag,
        };
        // In the member loop's order: `type`, then `aoi`'s own members,
        // then `aoi` once its value is read. A key's span is inside its
        // quotes, a value's is its whole text (a string's quotes too).
        self.push(member((2, 6), (8, q + 1), false, Tag::Type), Level::Top);
        self.push(
            member((q + 10, q + 13), (seq, c), true, Tag::Seq),
            Level::Aoi,
        );
        self.push(
            member((c + 2, c + 5), (c + 7, r + 1), false, Tag::Run),
            Level::Aoi,
        );
        self.push(
            member((q + 3, q + 6), (q + 8, end), true, Tag::Aoi),
            Level::Top,
        );
        self.index.aoi_object = true;
        // Its digits were just checked: their value without a second
        // look at each (past 19 digits, as the member loop reads it).
        self.index.seq = match &b[seq..c] {
            d if d.len() <= 19 => Uint::Int(d.iter().fold(0, |n, &x| n * 10 + u64::from(x - b'0'))),
            d => Uint::of(d),
        };
        Some(end)
    }

    /// Index `m`; returns whether it is the first of its reserved name.
    #[inline(always)]
    fn push(&mut self, m: Member, level: Level) -> bool {
        let (list, base) = match level {
            Level::Top => (&mut self.arena.top, self.index.top.0),
            Level::Aoi => (&mut self.arena.aoi, self.index.aoi.0),
        };
        let count = list.len() - base as usize;
        // The index is bounded, whatever the line: past `MAX_MEMBERS` only
        // the first member of each reserved name is kept, and lookups of
        // other names read the line itself (`Event::members`).
        if m.tag == Tag::Other {
            if count < MAX_MEMBERS {
                list.push(m);
            } else {
                self.index.overflow = true;
            }
            return false;
        }
        let slot = &mut self.index.first[m.tag as usize];
        if *slot != NONE {
            self.index.duplicate.get_or_insert(m.tag);
            return false;
        }
        if count >= MAX_MEMBERS {
            self.index.overflow = true;
        }
        list.push(m);
        *slot = count as u32;
        true
    }

    /// Validate the value at `i`; returns the index after it. Containers
    /// are walked iteratively, one bit of `stack` per open one.
    fn value(&mut self, i: usize) -> Walked {
        let b = self.b;
        let ansi = &mut self.flags;
        let plain = self.plain;
        let stack = &mut *self.stack;
        let base = stack.len();
        let mut i = i;
        'value: loop {
            match b.get(i) {
                Some(b'"') => i = string(b, i, plain, ansi)?.0,
                Some(b'-' | b'0'..=b'9') => i = number(b, i)?,
                Some(b'{') => {
                    i = ws(b, i + 1);
                    if b.get(i) == Some(&b'}') {
                        i += 1;
                    } else {
                        stack.push(true);
                        i = key(b, i, plain, ansi)?;
                        continue 'value;
                    }
                }
                Some(b'[') => {
                    i = ws(b, i + 1);
                    if b.get(i) == Some(&b']') {
                        i += 1;
                    } else {
                        stack.push(false);
                        continue 'value;
                    }
                }
                Some(b't') => i = literal(b, i, b"true")?,
                Some(b'f') => i = literal(b, i, b"false")?,
                Some(b'n') => i = literal(b, i, b"null")?,
                _ => return Err(fault(i, Want::Value)),
            }
            // After a value: close containers until one continues.
            loop {
                if stack.len() == base {
                    return Ok(i);
                }
                i = ws(b, i);
                let is_object = stack.top() == Some(true);
                match (b.get(i), is_object) {
                    (Some(b','), true) => {
                        i = key(b, ws(b, i + 1), plain, ansi)?;
                        continue 'value;
                    }
                    (Some(b','), false) => {
                        i = ws(b, i + 1);
                        continue 'value;
                    }
                    (Some(b'}'), true) | (Some(b']'), false) => {
                        stack.pop();
                        i += 1;
                    }
                    (_, true) => return Err(fault(i, Want::MemberNext)),
                    (_, false) => return Err(fault(i, Want::ElementNext)),
                }
            }
        }
    }
}

/// The tag of a key at `level`, matched on its decoded name.
#[inline(always)]
fn tag_of(level: Level, raw: &[u8], escaped: bool) -> Tag {
    let decoded;
    let name = if escaped {
        decoded = decode(raw);
        &decoded[..]
    } else {
        raw
    };
    match (level, name) {
        (Level::Top, b"type") => Tag::Type,
        (Level::Top, b"aoi") => Tag::Aoi,
        (Level::Aoi, b"seq") => Tag::Seq,
        (Level::Aoi, b"run") => Tag::Run,
        _ => Tag::Other,
    }
}

/// Read `"key" :` at `i` inside a nested object; returns the index of the
/// value.
#[inline]
fn key(b: &[u8], i: usize, plain: Plain<'_>, flags: &mut Flags) -> Walked {
    if b.get(i) != Some(&b'"') {
        return Err(fault(i, Want::Key));
    }
    let (end, escaped) = string(b, i, plain, flags)?;
    flags.marked |= marked_key(&b[i + 1..end - 1], escaped);
    match after(b, end, b':') {
        Some(j) => Ok(ws(b, j)),
        None => Err(fault(ws(b, end), Want::Colon)),
    }
}

#[inline(always)]
pub(super) fn ws(b: &[u8], mut i: usize) -> usize {
    // Compact JSON has none: one compare in the common case.
    if b.get(i).is_some_and(|&c| c > b' ') {
        return i;
    }
    while let Some(b' ' | b'\t' | b'\r' | b'\n') = b.get(i) {
        i += 1;
    }
    i
}

/// What follows an object member.
enum Sep {
    /// A `,`: the next key should start at this index.
    Next(usize),
    /// The object's `}`: its end is at this index.
    Close(usize),
}

/// The `,` or `}` after an object member whose value ends at `j`.
#[inline(always)]
fn separator(b: &[u8], j: usize) -> Result<Sep, Fault> {
    if let Some(k) = after(b, j, b',') {
        Ok(Sep::Next(ws(b, k)))
    } else if let Some(k) = after(b, j, b'}') {
        Ok(Sep::Close(k))
    } else {
        Err(fault(ws(b, j), Want::MemberNext))
    }
}

/// The index after the byte `c` at `i`, with whitespace before it
/// skipped; `None` if another byte stands there. Compact JSON has no
/// whitespace: one compare in the common case.
#[inline(always)]
fn after(b: &[u8], i: usize, c: u8) -> Option<usize> {
    if b.get(i) == Some(&c) {
        return Some(i + 1);
    }
    let i = ws(b, i);
    (b.get(i) == Some(&c)).then_some(i + 1)
}

/// Read a string starting at the quote at `i`; returns the index after the
/// closing quote, and whether the string held an escape. Most strings are
/// plain ASCII: that path is kept small and inline.
#[inline(always)]
fn string(b: &[u8], i: usize, plain: Plain<'_>, flags: &mut Flags) -> Result<(usize, bool), Fault> {
    let k = skip_plain(b, i + 1, plain);
    if b.get(k) == Some(&b'"') {
        return Ok((k + 1, false));
    }
    flags.escaped = false;
    let end = string_rest(b, k, plain, flags)?;
    Ok((end, flags.escaped))
}

/// Index of the first byte of `w` (little-endian lanes) that stops a
/// string's fast path.
#[inline(always)]
fn first_stop(w: u64) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let quote = w ^ (ONES * b'"' as u64);
    let slash = w ^ (ONES * b'\\' as u64);
    // A zero lane of `quote` or `slash`, a lane under 0x20, or one over
    // 0x7F sets its high bit. Borrows only run upward, from a lane that is
    // itself flagged, so the lowest flagged lane is exact.
    let hit = ((quote.wrapping_sub(ONES) & !quote)
        | (slash.wrapping_sub(ONES) & !slash)
        | w.wrapping_sub(ONES * 0x20)
        | w)
        & HIGH;
    (hit != 0).then(|| (hit.trailing_zeros() / 8) as usize)
}

/// How a walk finds where a string's plain bytes end: by scanning the
/// line (`Scan`), or from the marks the wide pass made over the batch the
/// line is in, at its offset there (`Marked`).
#[derive(Clone, Copy)]
enum Plain<'a> {
    Scan,
    Marked(&'a Stops, usize),
}

/// The first index from `i` that holds a byte `stops_string` names, or
/// the line's end.
#[inline(always)]
fn skip_plain(b: &[u8], i: usize, plain: Plain<'_>) -> usize {
    match plain {
        Plain::Scan => scan_plain(b, i),
        Plain::Marked(stops, at) => stops
            .next(at + i)
            .map_or(b.len(), |k| (k - at).min(b.len())),
    }
}

/// The first index from `i` that holds a byte `stops_string` names.
/// Sixteen bytes a step (SSE2 on x86-64, `wide`'s fallback elsewhere),
/// then eight (SWAR) near the end of the line. Most strings of the
/// reference stream end within one step; the 16-byte step took `verify`
/// from 123.2M to 117.9M instructions on its first 40,000 lines
/// (callgrind), against 8-byte SWAR alone.
#[inline(always)]
fn scan_plain(b: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = b.get(i..i + 16) {
        let stop = stops16(chunk.try_into().expect("16 bytes"));
        if stop != 0 {
            return i + stop.trailing_zeros() as usize;
        }
        i += 16;
    }
    while let Some(chunk) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        match first_stop(w) {
            Some(k) => return i + k,
            None => i += 8,
        }
    }
    while i < b.len() && !stops_string(b[i]) {
        i += 1;
    }
    i
}

/// The rest of a string from its first escape, non-ASCII byte or fault.
#[inline(never)]
fn string_rest(b: &[u8], mut i: usize, plain: Plain<'_>, flags: &mut Flags) -> Walked {
    loop {
        match b.get(i) {
            Some(b'"') => return Ok(i + 1),
            Some(b'\\') => {
                flags.escaped = true;
                match b.get(i + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                    Some(b'u') => {
                        let code = hex4(b, i + 2).ok_or_else(|| fault(i + 2, Want::Hex))?;
                        if code == 0x1b || code == 0x9b {
                            flags.ansi = true;
                        }
                        i += 6;
                    }
                    _ => return Err(fault(i + 1, Want::Escape)),
                }
            }
            Some(&c) if c > 0x7f => {
                let n = utf8_char(b, i).ok_or_else(|| fault(i, Want::Utf8))?;
                // U+009B (CSI) standing raw, as the bytes C2 9B.
                if c == 0xc2 && b[i + 1] == 0x9b {
                    flags.ansi = true;
                }
                i += n;
            }
            Some(_) => return Err(fault(i, Want::NoControl)),
            None => return Err(fault(i, Want::Close)),
        }
        i = skip_plain(b, i, plain);
    }
}

/// The length of the UTF-8 sequence at `i`, if it is a valid one
/// (RFC 3629: no overlongs, no surrogates, nothing past U+10FFFF).
#[inline]
fn utf8_char(b: &[u8], i: usize) -> Option<usize> {
    let (len, lo, hi) = match b[i] {
        0xc2..=0xdf => (2, 0x80, 0xbf),
        0xe0 => (3, 0xa0, 0xbf),
        0xe1..=0xec | 0xee..=0xef => (3, 0x80, 0xbf),
        0xed => (3, 0x80, 0x9f),
        0xf0 => (4, 0x90, 0xbf),
        0xf1..=0xf3 => (4, 0x80, 0xbf),
        0xf4 => (4, 0x80, 0x8f),
        _ => return None,
    };
    let second = *b.get(i + 1)?;
    if !(lo..=hi).contains(&second) {
        return None;
    }
    for k in 2..len {
        if *b.get(i + k)? & 0xc0 != 0x80 {
            return None;
        }
    }
    Some(len)
}

#[inline(always)]
fn digits(b: &[u8], i: usize) -> usize {
    let rest = b.get(i..).unwrap_or_default();
    i + rest
        .iter()
        .position(|c| !c.is_ascii_digit())
        .unwrap_or(rest.len())
}

/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, any size. Integers,
/// the common case, are read inline; a fraction or exponent out of line.
#[inline(always)]
fn number(b: &[u8], mut i: usize) -> Walked {
    if b[i] == b'-' {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits(b, i + 1),
        _ => return Err(fault(i, Want::Digit)),
    }
    match b.get(i) {
        Some(b'.' | b'e' | b'E') => number_rest(b, i),
        _ => Ok(i),
    }
}

/// The fraction and exponent of a number, from `i` (at `.`, `e` or `E`).
#[inline(never)]
fn number_rest(b: &[u8], mut i: usize) -> Walked {
    if b.get(i) == Some(&b'.') {
        let j = digits(b, i + 1);
        if j == i + 1 {
            return Err(fault(j, Want::FractionDigit));
        }
        i = j;
    }
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = b.get(i) {
            i += 1;
        }
        let j = digits(b, i);
        if j == i {
            return Err(fault(j, Want::ExponentDigit));
        }
        i = j;
    }
    Ok(i)
}

fn literal(b: &[u8], i: usize, word: &'static [u8]) -> Walked {
    if b.get(i..i + word.len()) == Some(word) {
        Ok(i + word.len())
    } else {
        Err(fault(i, Want::Value))
    }
}

/// One bit per open container: memory is 1/8 of the nesting depth.
#[derive(Default)]
pub(super) struct BitStack {
    words: Vec<u64>,
    len: usize,
}

impl BitStack {
    fn clear(&mut self) {
        self.len = 0;
    }

    fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn push(&mut self, bit: bool) {
        let (w, b) = (self.len / 64, self.len % 64);
        if w == self.words.len() {
            self.words.push(0);
        }
        if bit {
            self.words[w] |= 1 << b;
        } else {
            self.words[w] &= !(1 << b);
        }
        self.len += 1;
    }

    #[inline]
    fn pop(&mut self) {
        self.len -= 1;
    }

    #[inline]
    fn top(&self) -> Option<bool> {
        let i = self.len.checked_sub(1)?;
        Some(self.words[i / 64] >> (i % 64) & 1 == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parse of `line` with and without the envelope's fast form, as
    /// text: the index, and the members it put in the arena. The fast
    /// form is also read from the wide pass's marks, with the line in a
    /// batch between bytes that stop a string, and must read the same.
    fn both(line: &[u8]) -> (String, String) {
        let mut parser = Parser::new();
        let mut batch = b"x\"\\\x01\xc3".to_vec();
        let at = batch.len();
        batch.extend_from_slice(line);
        batch.extend_from_slice(b"\n\"tail\\ \xff");
        let mut stops = Stops::default();
        stops.mark(&batch);
        let mut run = |fast: bool, plain| {
            let mut arena = Arena::default();
            let r = if fast {
                parser.parse_with::<true>(line, plain, &mut arena)
            } else {
                parser.parse_with::<false>(line, plain, &mut arena)
            };
            format!("{r:?} {:?} {:?}", arena.top, arena.aoi)
        };
        let fast = run(true, Plain::Scan);
        let marked = run(true, Plain::Marked(&stops, at));
        assert_eq!(marked, fast, "marked: {}", String::from_utf8_lossy(line));
        (fast, run(false, Plain::Scan))
    }

    /// The fast form of the envelope indexes a line exactly as the member
    /// loop does, and a line not of that form falls back unchanged: every
    /// byte of canonical lines replaced by, and followed by, bytes that
    /// matter to it, and each byte deleted.
    #[test]
    fn envelope_fast_form_is_the_member_loop() {
        let lines: [&[u8]; 5] = [
            br#"{"type":"hit","aoi":{"seq":12,"run":"R1"},"rank":1,"id":"d"}"#,
            br#"{"type":"aoi:meta","aoi":{"seq":0,"run":"01JZ"}}"#,
            br#"{"type":"","aoi":{"seq":7,"run":""},"x_secret":"s"}"#,
            br#"{"type":"t","aoi":{"seq":99999999999999999999999,"run":"r"},"aoi":{}}"#,
            br#"{"type":"t","aoi":{"seq":1,"run":"r"},"type":"u","k":[1,{"a":"\u001b"}]}"#,
        ];
        let bytes =
            b"\"\\/{}[],:0123456789-+.eEtrunfals _ \t\r\n\x00\x1b\x7f\xc2\x9b\xe2\x82\xac\xff";
        let mut cases = 0;
        for line in lines {
            let (fast, slow) = both(line);
            assert_eq!(fast, slow, "{}", String::from_utf8_lossy(line));
            assert!(fast.starts_with("Ok"), "{fast}");
            for i in 0..=line.len() {
                let mut variants = vec![];
                if i < line.len() {
                    let mut v = line.to_vec();
                    v.remove(i);
                    variants.push(v);
                }
                for &x in bytes {
                    let mut v = line.to_vec();
                    v.insert(i, x);
                    variants.push(v);
                    if i < line.len() {
                        let mut v = line.to_vec();
                        v[i] = x;
                        variants.push(v);
                    }
                }
                for v in variants {
                    let (fast, slow) = both(&v);
                    assert_eq!(fast, slow, "{}", String::from_utf8_lossy(&v));
                    cases += 1;
                }
            }
        }
        assert!(cases > 10_000, "{cases}");
    }

    /// The same on random envelopes: each part drawn from the bytes that
    /// matter to the fast form (`AOITAP_PROPTEST_CASES`, default 256).
    #[test]
    fn envelope_fast_form_on_random_parts() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};
        let cases = crate::proptest_cases();
        // Mostly the form's own bytes, so most lines take the fast form;
        // else any byte that matters to it.
        let part = |plain: &'static [u8], hostile: &'static [u8]| {
            prop_oneof![
                3 => prop::collection::vec(prop::sample::select(plain), 0..12),
                1 => prop::collection::vec(prop::sample::select(hostile), 0..12),
            ]
        };
        let text: &'static [u8] = b"ab_\"\\u00E9\x01\x1b\xc3\xa9\xff ";
        let number: &'static [u8] = b"0123456789-+.eE ,}";
        let rest: &'static [u8] = b"\",:{}[]ab1 \\\n";
        let strategy = (
            part(b"ab:_ 9", text),
            part(b"123456789", number),
            part(b"AB01", text),
            prop_oneof![
                Just(b"}".to_vec()),
                Just(br#","k":[1,"v"]}"#.to_vec()),
                prop::collection::vec(prop::sample::select(rest), 0..12),
            ],
        );
        let mut runner = TestRunner::new(Config::with_cases(cases));
        let fast_ok = std::cell::Cell::new(0usize);
        runner
            .run(&strategy, |(t, n, r, tail)| {
                let mut line = br#"{"type":""#.to_vec();
                line.extend(&t);
                line.extend(br#"","aoi":{"seq":"#);
                line.extend(&n);
                line.extend(br#","run":""#);
                line.extend(&r);
                line.extend(br#""}"#);
                line.extend(&tail);
                let (fast, slow) = both(&line);
                fast_ok.set(fast_ok.get() + usize::from(fast.starts_with("Ok")));
                prop_assert_eq!(fast, slow, "{}", String::from_utf8_lossy(&line));
                Ok(())
            })
            .unwrap();
        // The cases exercise the fast form, not only its refusals.
        let parsed = fast_ok.get();
        assert!(parsed * 8 > cases as usize, "{parsed} of {cases} parsed");
    }
}
