//! The only JSON reader on the input side, and the decoded view of a line.
//!
//! A line is checked against strict RFC 8259 on UTF-8 bytes, and only that
//! (spec §2): numbers of any size and escaped lone surrogates are valid, and
//! nesting depth is limited only by the line, kept on a bit stack rather
//! than the call stack, so no input can exhaust it. The same single pass
//! validates UTF-8 (inside strings, the only place a byte over 0x7F may
//! stand), notices ANSI escapes, and records an index of the top-level
//! members (and of the members of a top-level `aoi` object) into an arena
//! its batch owns. Every consumer reads that one index through [`Event`]:
//! nothing re-parses a line, and nothing is allocated per line once the
//! arenas are warm.
//!
//! Decisions are made on decoded values (DESIGN §8): keys are matched after
//! unescaping, so `"typ\u0065"` is `type`, and [`Value::decoded`] gives a
//! string's exact decoded bytes (a lone surrogate kept distinct, as WTF-8).
//! Escapes are rare, so the raw bytes are used whenever they hold none.
//!
//! Why a walker of our own, and neither serde_json nor simd-json: serde_json's
//! defaults reject valid input (exponents past f64, lone surrogates, depth
//! over 128) and skip the UTF-8 check inside values it ignores, and neither
//! hands back where each member stands in the line, which strip-envelope
//! needs to splice bytes without re-serialising. simd-json also rewrites its
//! input in place (we relay those bytes) and, measured on the reference
//! stream's ~200-byte lines, was no faster than serde_json: its stage-one
//! index pays off on long documents, not on many short ones. The figures
//! that decided it are `cargo bench` (group `parse`, which also times
//! serde_json on the same lines) and `benches/compare.sh`.

use std::borrow::Cow;

/// Why a line is not JSON. Columns are 1-based byte columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonError {
    Utf8 {
        column: usize,
    },
    Syntax {
        column: usize,
        expected: &'static str,
    },
}

/// A member of an object: where its key and value stand in the line.
/// Positions are `u32`: a line is at most 4 GiB (the `--max-line-bytes`
/// ceiling).
#[derive(Debug, Clone, Copy, Default)]
pub struct Member {
    key_start: u32,
    key_end: u32,
    value_start: u32,
    value_end: u32,
    key_escaped: bool,
    /// The value may hold an escape: false only for a string seen to hold
    /// none, whose raw inside is then its decoded bytes.
    value_escaped: bool,
    /// Which reserved name the key is, found once while walking.
    tag: Tag,
}

/// The envelope's reserved names (spec §8.1): `type` and `aoi` at the top,
/// `seq` and `run` inside `aoi`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Tag {
    #[default]
    Other,
    Type,
    Aoi,
    Seq,
    Run,
}

/// Where a batch's lines keep their member indexes.
#[derive(Default)]
pub struct Arena {
    top: Vec<Member>,
    aoi: Vec<Member>,
}

impl Arena {
    pub fn clear(&mut self) {
        self.top.clear();
        self.aoi.clear();
    }
}

/// The index of one parsed line: its members' place in the arena, and what
/// the walk noticed on the way. Small and `Copy`, free of borrows, so a
/// line can be parsed on one thread and judged on another.
#[derive(Debug, Clone, Copy, Default)]
pub struct Index {
    /// `arena.top[top.0..top.1]`, and likewise for `aoi`.
    top: (u32, u32),
    aoi: (u32, u32),
    /// Index (within the line's own list) of the first member with each
    /// tag; `NONE` when there is none.
    first: [u32; 5],
    /// The first reserved name seen twice.
    duplicate: Option<Tag>,
    /// A string anywhere in the line holds ESC or CSI (U+001B, U+009B).
    ansi: bool,
    object: bool,
    /// More members than the index keeps: see `Walk::push`.
    overflow: bool,
    /// Some key, at any depth, is marked `_secret` or `_url`.
    marked: bool,
}

/// Members indexed per object, at most (the rest are found by reading).
const MAX_MEMBERS: usize = 4096;

/// Reusable parse state; one per thread.
#[derive(Default)]
pub struct Parser {
    stack: BitStack,
}

/// A line that parsed: the line plus its index.
#[derive(Clone, Copy)]
pub struct Event<'a> {
    line: &'a [u8],
    index: &'a Index,
    top: &'a [Member],
    aoi: &'a [Member],
}

/// A validated JSON value inside a line.
#[derive(Debug, Clone, Copy)]
pub struct Value<'a> {
    raw: &'a [u8],
    /// Where `raw` starts in the line it came from.
    start: usize,
    /// The walk saw this string hold no escape: its raw inside is its
    /// decoded value, with no search for a backslash.
    plain: bool,
}

/// What a field of an event holds, as far as the rules care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Object,
    Array,
    String,
    Number,
    Bool,
    Null,
}

/// An integer literal `>= 0`, which may be larger than `u64` (then saturated).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uint {
    Int(u64),
    /// Any other number, or a negative one.
    NotUint,
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
type Step = Result<usize, Fault>;

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
    /// The last string read held an escape (reset by the reader).
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
            stack: &mut self.stack,
            arena,
            index: &mut index,
            flags: Flags::default(),
        };
        let walked = walk.line();
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
    fn line(&mut self) -> Result<(), Fault> {
        let b = self.b;
        let i = ws(b, 0);
        let i = if b.get(i) == Some(&b'{') {
            self.index.object = true;
            self.members(i, Level::Top)?
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
    /// after its `}`.
    fn members(&mut self, i: usize, level: Level) -> Step {
        let b = self.b;
        let mut i = ws(b, i + 1);
        if b.get(i) == Some(&b'}') {
            return Ok(i + 1);
        }
        loop {
            if b.get(i) != Some(&b'"') {
                return Err(fault(i, Want::Key));
            }
            self.flags.escaped = false;
            let end = string(b, i, &mut self.flags)?;
            let escaped = self.flags.escaped;
            let (key_start, key_end) = (i + 1, end - 1);
            self.flags.marked |= marked_key(&b[key_start..key_end], escaped);
            let tag = tag_of(level, &b[key_start..key_end], escaped);
            let mut j = ws(b, end);
            if b.get(j) != Some(&b':') {
                return Err(fault(j, Want::Colon));
            }
            j = ws(b, j + 1);
            let value_start = j;
            // Scalars, the most common values, without a call. A value
            // counts as escaped unless it is a string seen to hold none.
            self.flags.escaped = true;
            j = match b.get(j) {
                Some(b'"') => {
                    self.flags.escaped = false;
                    string(b, j, &mut self.flags)?
                }
                Some(b'0'..=b'9' | b'-') => number(b, j)?,
                // A second `aoi` is a duplicate of its own: its members
                // are not indexed as the envelope's.
                Some(b'{') if tag == Tag::Aoi && self.index.first[Tag::Aoi as usize] == NONE => {
                    self.members(j, Level::Aoi)?
                }
                _ => self.value(j)?,
            };
            let m = Member {
                key_start: key_start as u32,
                key_end: key_end as u32,
                value_start: value_start as u32,
                value_end: j as u32,
                key_escaped: escaped,
                value_escaped: self.flags.escaped,
                tag,
            };
            self.push(m, level);
            j = ws(b, j);
            match b.get(j) {
                Some(b',') => i = ws(b, j + 1),
                Some(b'}') => return Ok(j + 1),
                _ => return Err(fault(j, Want::MemberNext)),
            }
        }
    }

    fn push(&mut self, m: Member, level: Level) {
        let (list, base) = match level {
            Level::Top => (&mut self.arena.top, self.index.top.0),
            Level::Aoi => (&mut self.arena.aoi, self.index.aoi.0),
        };
        let slot = &mut self.index.first[m.tag as usize];
        if m.tag != Tag::Other && *slot != NONE {
            self.index.duplicate.get_or_insert(m.tag);
            return;
        }
        // The index is bounded, whatever the line: past `MAX_MEMBERS` only
        // the first member of each reserved name is kept, and lookups of
        // other names read the line itself (`Event::members`).
        if list.len() - base as usize >= MAX_MEMBERS {
            self.index.overflow = true;
            if m.tag == Tag::Other {
                return;
            }
        }
        list.push(m);
        if m.tag != Tag::Other {
            *slot = (list.len() - 1) as u32 - base;
        }
    }

    /// Validate the value at `i`; returns the index after it. Containers
    /// are walked iteratively, one bit of `stack` per open one.
    fn value(&mut self, i: usize) -> Step {
        let b = self.b;
        let ansi = &mut self.flags;
        let stack = &mut *self.stack;
        let base = stack.len();
        let mut i = i;
        'value: loop {
            match b.get(i) {
                Some(b'"') => i = string(b, i, ansi)?,
                Some(b'-' | b'0'..=b'9') => i = number(b, i)?,
                Some(b'{') => {
                    i = ws(b, i + 1);
                    if b.get(i) == Some(&b'}') {
                        i += 1;
                    } else {
                        stack.push(true);
                        i = key(b, i, ansi)?;
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
                        i = key(b, ws(b, i + 1), ansi)?;
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
#[inline]
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
fn key(b: &[u8], i: usize, flags: &mut Flags) -> Step {
    if b.get(i) != Some(&b'"') {
        return Err(fault(i, Want::Key));
    }
    flags.escaped = false;
    let end = string(b, i, flags)?;
    flags.marked |= marked_key(&b[i + 1..end - 1], flags.escaped);
    let j = ws(b, end);
    if b.get(j) != Some(&b':') {
        return Err(fault(j, Want::Colon));
    }
    Ok(ws(b, j + 1))
}

#[inline(always)]
fn ws(b: &[u8], mut i: usize) -> usize {
    // Compact JSON has none: one compare in the common case.
    if b.get(i).is_some_and(|&c| c > b' ') {
        return i;
    }
    while let Some(b' ' | b'\t' | b'\r' | b'\n') = b.get(i) {
        i += 1;
    }
    i
}

/// Bytes that end the fast part of a string: `"`, `\`, controls, and any
/// byte over 0x7F (UTF-8 is checked there).
#[inline(always)]
fn stops_string(x: u8) -> bool {
    x == b'"' || x == b'\\' || !(0x20..=0x7f).contains(&x)
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

/// Read a string starting at the quote at `i`; returns the index after the
/// closing quote, and sets `flags.escaped` if it held an escape. Most
/// strings are plain ASCII: that path is kept small and inline.
#[inline(always)]
fn string(b: &[u8], i: usize, flags: &mut Flags) -> Step {
    let i = skip_plain(b, i + 1);
    if b.get(i) == Some(&b'"') {
        return Ok(i + 1);
    }
    string_rest(b, i, flags)
}

/// The first index from `i` that holds a byte `stops_string` names.
#[inline(always)]
fn skip_plain(b: &[u8], mut i: usize) -> usize {
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
fn string_rest(b: &[u8], mut i: usize, flags: &mut Flags) -> Step {
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
        i = skip_plain(b, i);
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

fn hex4(b: &[u8], i: usize) -> Option<u32> {
    let h = b.get(i..i + 4)?;
    let mut v = 0;
    for &c in h {
        v = v * 16 + (c as char).to_digit(16)?;
    }
    Some(v)
}

#[inline(always)]
fn digits(b: &[u8], i: usize) -> usize {
    let rest = b.get(i..).unwrap_or_default();
    i + rest
        .iter()
        .position(|c| !c.is_ascii_digit())
        .unwrap_or(rest.len())
}

/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, any size.
#[inline]
fn number(b: &[u8], mut i: usize) -> Step {
    if b[i] == b'-' {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits(b, i + 1),
        _ => return Err(fault(i, Want::Digit)),
    }
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

fn literal(b: &[u8], i: usize, word: &'static [u8]) -> Step {
    if b.get(i..i + word.len()) == Some(word) {
        Ok(i + word.len())
    } else {
        Err(fault(i, Want::Value))
    }
}

/// Decode the inside of a validated JSON string to its exact bytes: UTF-8,
/// with a lone surrogate kept as its own three bytes (WTF-8), so that two
/// different strings never decode the same (`"\ud800"` is not `"\ud801"`).
pub fn decode(raw: &[u8]) -> Cow<'_, [u8]> {
    decode_as(raw, true)
}

/// As `decode`; a lone surrogate is kept as WTF-8 (`wtf8`) or becomes
/// U+FFFD.
fn decode_as(raw: &[u8], wtf8: bool) -> Cow<'_, [u8]> {
    if memchr::memchr(b'\\', raw).is_none() {
        return Cow::Borrowed(raw);
    }
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let c = raw[i];
        if c != b'\\' {
            out.push(c);
            i += 1;
            continue;
        }
        let esc = raw.get(i + 1).copied().unwrap_or(b'\\');
        i += 2;
        let byte = match esc {
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let hi = hex4(raw, i).unwrap_or(0xfffd);
                i += 4;
                let mut code = hi;
                if (0xd800..0xdc00).contains(&hi)
                    && raw.get(i..i + 2) == Some(b"\\u")
                    && let Some(lo) = hex4(raw, i + 2).filter(|lo| (0xdc00..0xe000).contains(lo))
                {
                    code = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
                    i += 6;
                }
                if !wtf8 && (0xd800..0xe000).contains(&code) {
                    code = 0xfffd;
                }
                push_code(&mut out, code);
                continue;
            }
            other => other,
        };
        out.push(byte);
    }
    Cow::Owned(out)
}

/// Encode a code point (a lone surrogate too) in the UTF-8 pattern.
fn push_code(out: &mut Vec<u8>, code: u32) {
    match code {
        0..=0x7f => out.push(code as u8),
        0x80..=0x7ff => out.extend([0xc0 | (code >> 6) as u8, 0x80 | (code & 0x3f) as u8]),
        0x800..=0xffff => out.extend([
            0xe0 | (code >> 12) as u8,
            0x80 | ((code >> 6) & 0x3f) as u8,
            0x80 | (code & 0x3f) as u8,
        ]),
        _ => out.extend([
            0xf0 | (code >> 18) as u8,
            0x80 | ((code >> 12) & 0x3f) as u8,
            0x80 | ((code >> 6) & 0x3f) as u8,
            0x80 | (code & 0x3f) as u8,
        ]),
    }
}

/// Decode the inside of a validated JSON string as text. Lone surrogates
/// become U+FFFD: they are valid JSON (RFC 8259 §8.2) but not Unicode
/// scalars.
pub fn unescape(raw: &[u8]) -> Cow<'_, str> {
    match decode_as(raw, false) {
        // The walk checked the line as UTF-8: this is the common path.
        Cow::Borrowed(b) => match std::str::from_utf8(b) {
            Ok(s) => Cow::Borrowed(s),
            Err(_) => String::from_utf8_lossy(b),
        },
        Cow::Owned(v) => match String::from_utf8(v) {
            Ok(s) => Cow::Owned(s),
            Err(e) => Cow::Owned(String::from_utf8_lossy(e.as_bytes()).into_owned()),
        },
    }
}

/// The envelope as far as it can be read: what `aoi` holds.
#[derive(Debug, Clone, Copy)]
pub enum Aoi<'a> {
    Absent,
    NotObject,
    Object {
        seq: Option<Value<'a>>,
        run: Option<Value<'a>>,
    },
}

/// No member has the tag.
const NONE: u32 = u32::MAX;

impl Index {
    fn first(&self, tag: Tag) -> Option<usize> {
        let k = self.first[tag as usize];
        (k != NONE).then_some(k as usize)
    }

    /// This line's view, given the line and the arena it was indexed into.
    pub fn event<'a>(&'a self, line: &'a [u8], arena: &'a Arena) -> Event<'a> {
        Event {
            line,
            index: self,
            top: &arena.top[self.top.0 as usize..self.top.1 as usize],
            aoi: &arena.aoi[self.aoi.0 as usize..self.aoi.1 as usize],
        }
    }
}

impl Member {
    fn value<'a>(&self, line: &'a [u8]) -> Value<'a> {
        let (s, e) = (self.value_start as usize, self.value_end as usize);
        Value {
            raw: &line[s..e],
            start: s,
            plain: !self.value_escaped,
        }
    }

    fn key<'a>(&self, line: &'a [u8]) -> Cow<'a, [u8]> {
        let raw = &line[self.key_start as usize..self.key_end as usize];
        if self.key_escaped {
            decode(raw)
        } else {
            Cow::Borrowed(raw)
        }
    }
}

impl<'a> Event<'a> {
    pub fn is_object(&self) -> bool {
        self.index.object
    }

    /// A string anywhere in the line holds ESC or CSI.
    pub fn has_ansi(&self) -> bool {
        self.index.ansi
    }

    /// Some key, at any depth, ends in `_secret`/`_SECRET`/`_url`/`_URL`.
    pub fn has_marked_keys(&self) -> bool {
        self.index.marked
    }

    pub fn line(&self) -> &'a [u8] {
        self.line
    }

    /// The bytes to cut so that the top-level `aoi` member goes, with the
    /// comma after it (or, when it is the last member, the one before it):
    /// what is left is the same object, byte for byte, without it.
    pub fn aoi_cut(&self) -> Option<(usize, usize)> {
        let m = self.top[self.index.first(Tag::Aoi)?];
        let (quote, end) = (m.key_start as usize - 1, m.value_end as usize);
        let b = self.line;
        // The line is valid JSON: only whitespace stands between a member
        // and the comma or brace next to it.
        let after = ws(b, end);
        if b.get(after) == Some(&b',') {
            return Some((quote, after + 1));
        }
        let mut before = quote;
        while before > 0 && matches!(b[before - 1], b' ' | b'\t' | b'\r' | b'\n') {
            before -= 1;
        }
        if before > 0 && b[before - 1] == b',' {
            Some((before - 1, end))
        } else {
            Some((quote, end))
        }
    }

    /// The first top-level member named `key` (decoded).
    pub fn get(&self, key: &str) -> Option<Value<'a>> {
        match key {
            "type" => self.tagged(Tag::Type),
            "aoi" => self.tagged(Tag::Aoi),
            _ if self.index.overflow => self.whole().field(key),
            _ => self
                .top
                .iter()
                .find(|m| m.key(self.line).as_ref() == key.as_bytes())
                .map(|m| m.value(self.line)),
        }
    }

    /// How many top-level members are named `key` (decoded).
    pub fn count(&self, key: &str) -> usize {
        if self.index.overflow {
            return self.whole().count(key);
        }
        self.top
            .iter()
            .filter(|m| m.key(self.line).as_ref() == key.as_bytes())
            .count()
    }

    /// The line as one value.
    pub fn as_value(&self) -> Value<'a> {
        self.whole()
    }

    /// The line as one value (an object with more members than indexed).
    fn whole(&self) -> Value<'a> {
        let (s, e) = (ws(self.line, 0), self.line.len());
        let mut e = e;
        while e > s && matches!(self.line[e - 1], b' ' | b'\t' | b'\r' | b'\n') {
            e -= 1;
        }
        Value {
            raw: &self.line[s..e],
            start: s,
            plain: false,
        }
    }

    fn tagged(&self, tag: Tag) -> Option<Value<'a>> {
        let list = match tag {
            Tag::Seq | Tag::Run => self.aoi,
            _ => self.top,
        };
        let k = self.index.first(tag)?;
        Some(list[k].value(self.line))
    }

    /// The decoded `type`, when it is a string.
    pub fn ty(&self) -> Option<Cow<'a, str>> {
        self.tagged(Tag::Type).and_then(|v| v.as_str())
    }

    /// Top-level `type`, `aoi` (and inside it `seq`, `run`) that appear more
    /// than once: parsers disagree about which one wins (RFC 8259 §4).
    pub fn duplicate_reserved_key(&self) -> Option<&'static str> {
        self.index.duplicate.map(Tag::reserved_name)
    }

    pub fn aoi(&self) -> Aoi<'a> {
        match self.tagged(Tag::Aoi) {
            None => Aoi::Absent,
            Some(v) if v.kind() != Kind::Object => Aoi::NotObject,
            Some(_) => Aoi::Object {
                seq: self.tagged(Tag::Seq),
                run: self.tagged(Tag::Run),
            },
        }
    }
}

impl Tag {
    fn reserved_name(self) -> &'static str {
        match self {
            Tag::Type => "type",
            Tag::Aoi => "aoi",
            Tag::Seq => "aoi.seq",
            Tag::Run => "aoi.run",
            Tag::Other => "",
        }
    }
}

impl<'a> Value<'a> {
    pub fn kind(&self) -> Kind {
        match self.raw.first() {
            Some(b'{') => Kind::Object,
            Some(b'[') => Kind::Array,
            Some(b'"') => Kind::String,
            Some(b't' | b'f') => Kind::Bool,
            Some(b'n') => Kind::Null,
            _ => Kind::Number,
        }
    }

    /// Where the value stands in its line.
    pub fn span(&self) -> (usize, usize) {
        (self.start, self.start + self.raw.len())
    }

    /// The value's bytes as they stand in the line.
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// The string's inside, undecoded.
    pub fn raw_str(&self) -> Option<&'a [u8]> {
        (self.kind() == Kind::String).then(|| &self.raw[1..self.raw.len() - 1])
    }

    /// The string's exact decoded bytes (see [`decode`]): what identifies
    /// a run, so `"R\u0031"` and `"R1"` are one run (DESIGN §8).
    pub fn decoded(&self) -> Option<Cow<'a, [u8]>> {
        let raw = self.raw_str()?;
        Some(if self.plain {
            Cow::Borrowed(raw)
        } else {
            decode(raw)
        })
    }

    pub fn as_str(&self) -> Option<Cow<'a, str>> {
        self.raw_str().map(unescape)
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self.raw {
            b"true" => Some(true),
            b"false" => Some(false),
            _ => None,
        }
    }

    /// An integer literal `>= 0` (`1.0`, `1e0`, `-1` are not). Values past
    /// `u64` saturate.
    pub fn as_uint(&self) -> Uint {
        if self.raw.is_empty() || !self.raw.iter().all(u8::is_ascii_digit) {
            return Uint::NotUint;
        }
        let n = self.raw.iter().fold(0u64, |n, &d| {
            n.saturating_mul(10).saturating_add(u64::from(d - b'0'))
        });
        Uint::Int(n)
    }

    pub fn uint(&self) -> Option<u64> {
        match self.as_uint() {
            Uint::Int(n) => Some(n),
            Uint::NotUint => None,
        }
    }

    /// Members of an object (decoded keys) or elements of an array (empty
    /// keys), one at a time: the value is already valid, so this only
    /// finds where each one ends, holding nothing but a depth count.
    pub fn children(&self) -> Children<'a> {
        let object = self.kind() == Kind::Object;
        let open = matches!(self.kind(), Kind::Object | Kind::Array);
        Children {
            raw: self.raw,
            base: self.start,
            i: if open { 1 } else { self.raw.len() },
            object,
        }
    }

    /// The first member of an object value named `key` (decoded).
    pub fn field(&self, key: &str) -> Option<Value<'a>> {
        self.children().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// How many members of an object value are named `key` (decoded).
    pub fn count(&self, key: &str) -> usize {
        self.children().filter(|(k, _)| k == key).count()
    }
}

/// The members or elements of a validated container (see `Value::children`).
pub struct Children<'a> {
    raw: &'a [u8],
    base: usize,
    i: usize,
    object: bool,
}

impl Children<'_> {
    /// Members of an object (else elements of an array).
    pub fn is_object(&self) -> bool {
        self.object
    }
}

impl<'a> Iterator for Children<'a> {
    type Item = (Cow<'a, str>, Value<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let b = self.raw;
        let mut i = ws(b, self.i);
        if i >= b.len() || matches!(b[i], b'}' | b']') {
            self.i = b.len();
            return None;
        }
        let key = if self.object {
            let end = skip_string(b, i);
            let key = unescape(&b[i + 1..end - 1]);
            i = ws(b, ws(b, end) + 1);
            key
        } else {
            Cow::Borrowed("")
        };
        let mut end = skip_value(b, i);
        while end > i && matches!(b[end - 1], b' ' | b'\t' | b'\r' | b'\n') {
            end -= 1;
        }
        let v = Value {
            raw: &b[i..end],
            start: self.base + i,
            plain: false,
        };
        let j = ws(b, end);
        self.i = if b.get(j) == Some(&b',') { j + 1 } else { j };
        Some((key, v))
    }
}

/// The end of the validated string whose quote is at `i`.
fn skip_string(b: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'"' => return i + 1,
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    b.len()
}

/// The end of the validated value at `i`.
fn skip_value(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < b.len() {
        match b[i] {
            b'"' => i = skip_string(b, i),
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' => {
                if depth == 0 {
                    return i;
                }
                depth -= 1;
                i += 1;
            }
            b',' if depth == 0 => return i,
            _ => i += 1,
        }
        if depth == 0 && i < b.len() && matches!(b[i], b',' | b'}' | b']') {
            return i;
        }
    }
    b.len()
}

/// One bit per open container: memory is 1/8 of the nesting depth.
#[derive(Default)]
struct BitStack {
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

    fn valid(s: &[u8]) -> bool {
        Parser::new().parse(s, &mut Arena::default()).is_ok()
    }

    /// Parse `line` and hand its event to `f`.
    fn with<R>(line: &[u8], f: impl FnOnce(Event<'_>) -> R) -> R {
        let mut arena = Arena::default();
        let index = Parser::new().parse(line, &mut arena).unwrap();
        f(index.event(line, &arena))
    }

    fn parse_err(line: &[u8]) -> Option<JsonError> {
        Parser::new().parse(line, &mut Arena::default()).err()
    }

    #[test]
    fn strict_rfc_8259() {
        for ok in [
            &b"{}"[..],
            b" {\"a\" : [1, -0.5e+3, true, false, null, \"x\"]} ",
            b"1E400",
            b"1180591620717411303424",
            b"\"\\ud800\"",
            b"[\"\\u001b[31m\"]",
            b"{\"a\":{}}\r",
        ] {
            assert!(valid(ok), "{}", String::from_utf8_lossy(ok));
        }
        for bad in [
            &b""[..],
            b"NaN",
            b"+1",
            b"01",
            b"1.",
            b".5",
            b"1e",
            b"[1,]",
            b"{\"a\":1,}",
            b"\"a\tb\"",
            b"\"\\x\"",
            b"\"\\u12\"",
            b"{\"a\" 1}",
            b"{1:2}",
            b"[1 2]",
            b"{}}",
            b"\0",
            b"\"\xff\"",
            b"\xef\xbb\xbf{}",
            b"tru",
            b"[",
            b"\"abc",
        ] {
            assert!(!valid(bad), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn deep_nesting_does_not_use_the_call_stack() {
        let n = 1_000_000;
        let mut s = vec![b'['; n];
        s.extend(std::iter::repeat_n(b']', n));
        assert!(valid(&s));
        s.pop();
        assert!(!valid(&s));
    }

    #[test]
    fn columns_point_at_the_fault() {
        assert_eq!(
            parse_err(b"{\"a\":01}"),
            Some(JsonError::Syntax {
                column: 7,
                expected: "',' or '}' after an object member"
            })
        );
        assert_eq!(
            parse_err(b"{\"a\":\"\xc3\"}"),
            Some(JsonError::Utf8 { column: 7 })
        );
        // A syntax fault before a bad byte: the bad byte names the cause.
        assert_eq!(
            parse_err(b"{\"a\" 1, \"\xff\"}"),
            Some(JsonError::Utf8 { column: 10 })
        );
    }

    #[test]
    fn members_and_envelope() {
        let line = br#"{"type":"hit","aoi":{"seq":3,"run":"R\u0031","x":[1,{"seq":9}]},"n":{"aoi":{"seq":1}}}"#;
        with(line, |ev| {
            assert!(ev.is_object());
            assert_eq!(ev.ty().unwrap(), "hit");
            let Aoi::Object { seq, run } = ev.aoi() else {
                panic!()
            };
            assert_eq!(seq.unwrap().as_uint(), Uint::Int(3));
            assert_eq!(run.unwrap().as_str().unwrap(), "R1");
            assert_eq!(&run.unwrap().decoded().unwrap()[..], b"R1");
            assert_eq!(ev.get("n").unwrap().raw(), br#"{"aoi":{"seq":1}}"#);
            assert!(ev.duplicate_reserved_key().is_none());
            assert!(!ev.has_ansi());
        });
    }

    #[test]
    fn escaped_keys_and_types_are_decoded() {
        with(
            br#"{"t\u0079pe":"\u0061oi:meta","\u0061oi":{"s\u0065q":0}}"#,
            |ev| {
                assert_eq!(ev.ty().unwrap(), "aoi:meta");
                let Aoi::Object { seq, .. } = ev.aoi() else {
                    panic!()
                };
                assert_eq!(seq.unwrap().uint(), Some(0));
            },
        );
        // A value the walk saw plain is borrowed; an escaped one decoded.
        with(br#"{"aoi":{"run":"R\u0031"},"type":"hit"}"#, |ev| {
            let Aoi::Object { run, .. } = ev.aoi() else {
                panic!()
            };
            assert_eq!(run.unwrap().decoded().unwrap().as_ref(), b"R1");
            let ty = ev.get("type").unwrap().decoded().unwrap();
            assert!(matches!(ty, Cow::Borrowed(b"hit")));
        });
    }

    #[test]
    fn a_line_past_the_index_cap_reads_the_same() {
        let mut line = br#"{"type":"hit","#.to_vec();
        for i in 0..MAX_MEMBERS + 10 {
            line.extend_from_slice(format!("\"k{i}\":{i},").as_bytes());
        }
        line.extend_from_slice(br#""aoi":{"seq":1},"last":"x","k3":9}"#);
        let mut arena = Arena::default();
        let index = Parser::new().parse(&line, &mut arena).unwrap();
        assert!(arena.top.len() <= MAX_MEMBERS + 4, "{}", arena.top.len());
        let ev = index.event(&line, &arena);
        assert_eq!(ev.ty().unwrap(), "hit");
        assert_eq!(ev.get("last").unwrap().as_str().unwrap(), "x");
        assert_eq!(ev.get("k4100").unwrap().uint(), Some(4100));
        assert_eq!(ev.count("k3"), 2);
        let (a, b) = ev.aoi_cut().unwrap();
        assert_eq!(&line[a..b], br#""aoi":{"seq":1},"#);
        let Aoi::Object { seq, .. } = ev.aoi() else {
            panic!()
        };
        assert_eq!(seq.unwrap().uint(), Some(1));
    }

    #[test]
    fn the_aoi_cut_takes_one_comma() {
        for (line, want) in [
            (&br#"{"aoi":{},"type":"a"}"#[..], &br#"{"type":"a"}"#[..]),
            (br#"{"type":"a" , "aoi" : {} }"#, br#"{"type":"a"  }"#),
            (br#"{"type":"a","aoi":{},"b":1}"#, br#"{"type":"a","b":1}"#),
            (br#"{ "aoi":1 }"#, br#"{  }"#),
        ] {
            with(line, |ev| {
                let (a, b) = ev.aoi_cut().unwrap();
                let cut = [&line[..a], &line[b..]].concat();
                assert_eq!(cut, want, "{}", String::from_utf8_lossy(line));
            });
        }
    }

    #[test]
    fn duplicates_are_seen_through_escapes() {
        with(br#"{"type":"a","typ\u0065":"b"}"#, |ev| {
            assert_eq!(ev.duplicate_reserved_key(), Some("type"))
        });
        with(br#"{"type":"a","aoi":{"seq":1,"seq":2}}"#, |ev| {
            assert_eq!(ev.duplicate_reserved_key(), Some("aoi.seq"))
        });
        with(br#"{"ok":true,"o\u006b":false}"#, |ev| {
            assert_eq!(ev.count("ok"), 2)
        });
    }

    #[test]
    fn ansi_in_strings() {
        assert!(with(br#"{"m":"\u001b[31mred"}"#, |ev| ev.has_ansi()));
        assert!(with("{\"m\":\"\u{9b}31m\"}".as_bytes(), |ev| ev.has_ansi()));
        assert!(!with(br#"{"m":"\\u001b"}"#, |ev| ev.has_ansi()));
        assert!(!with("{\"m\":\"caf\u{e9}\"}".as_bytes(), |ev| ev.has_ansi()));
    }

    #[test]
    fn utf8_is_checked_in_one_pass() {
        for ok in [
            "\"caf\u{e9}\"",
            "\"\u{10ffff}\u{800}\u{7ff}\"",
            "[\"\u{1f600}\"]",
        ] {
            assert!(valid(ok.as_bytes()), "{ok}");
        }
        for bad in [
            &b"\"\xc0\x80\""[..],
            b"\"\xed\xa0\x80\"",
            b"\"\xf4\x90\x80\x80\"",
            b"\"\xe2\x82\"",
            b"\"\x80\"",
            b"{\"\xff\":1}",
            b"[1,\xc3\xa9]",
        ] {
            assert!(
                matches!(parse_err(bad), Some(JsonError::Utf8 { .. })) || bad == b"[1,\xc3\xa9]",
                "{bad:?}"
            );
            assert!(!valid(bad), "{bad:?}");
        }
    }

    /// Differential: on mutated lines, the walk agrees with serde_json
    /// wherever serde_json's known departures from RFC 8259 (big numbers,
    /// lone surrogates, depth) cannot arise, and never panics anywhere.
    #[test]
    fn agrees_with_serde_json_on_mutated_lines() {
        let seeds: [&[u8]; 4] = [
            br#"{"type":"hit","aoi":{"seq":1,"run":"R"},"a":[1,2.5,-3,true,false,null],"s":"x\"y\\z"}"#,
            b"{\"type\":\"aoi:summary\",\"ok\":true,\"o\":{\"k\":{\"k\":[{}]}},\"t\":\"caf\xc3\xa9\"}",
            br#" [ "a" , { "b" : 0 } ] "#,
            br#"{"a":"\n\t\/","b":[],"c":{}}"#,
        ];
        let alphabet = b"{}[]\":,0123456789-.tfnrue \\\x00\x1f\xc3\xa9\xff";
        let mut p = Parser::new();
        let mut arena = Arena::default();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rand = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as usize
        };
        let mut compared = 0;
        for round in 0..1_000_000 {
            let mut line = seeds[round % seeds.len()].to_vec();
            for _ in 0..1 + rand() % 3 {
                let at = rand() % (line.len() + 1);
                let byte = alphabet[rand() % alphabet.len()];
                match rand() % 3 {
                    0 if at < line.len() => line[at] = byte,
                    1 if at < line.len() => {
                        line.remove(at);
                    }
                    _ => line.insert(at, byte),
                }
            }
            let ours = p.parse(&line, &mut arena).is_ok();
            arena.clear();
            let exponent = line
                .windows(2)
                .any(|w| (w[0].is_ascii_digit() || w[0] == b'.') && matches!(w[1], b'e' | b'E'));
            let plain = !line.windows(2).any(|w| w == b"\\u") && !exponent;
            if plain && let Ok(text) = std::str::from_utf8(&line) {
                let theirs = serde_json::from_str::<serde_json::Value>(text).is_ok();
                assert_eq!(ours, theirs, "{text:?}");
                compared += 1;
            } else if std::str::from_utf8(&line).is_err() {
                assert!(!ours, "invalid UTF-8 accepted: {line:?}");
            }
        }
        assert!(compared > 750_000, "{compared}");
    }

    #[test]
    fn a_failed_parse_leaves_no_members_behind() {
        let mut p = Parser::new();
        let mut arena = Arena::default();
        assert!(
            p.parse(br#"{"type":"a","aoi":{"seq":1}}"#, &mut arena)
                .is_ok()
        );
        let (top, aoi) = (arena.top.len(), arena.aoi.len());
        for bad in [
            &b"{\"x\":\"\xff\"}"[..],
            b"{\"a\":1,oops",
            b"",
            b"{\"aoi\":{\"seq\":1,}",
        ] {
            assert!(p.parse(bad, &mut arena).is_err());
            assert_eq!((arena.top.len(), arena.aoi.len()), (top, aoi));
        }
    }

    #[test]
    fn uints() {
        let v = |s: &'static [u8]| {
            Value {
                raw: s,
                start: 0,
                plain: false,
            }
            .as_uint()
        };
        assert_eq!(v(b"0"), Uint::Int(0));
        assert_eq!(v(b"99999999999999999999999"), Uint::Int(u64::MAX));
        for not in [&b"1.0"[..], b"1e0", b"-1", b"\"1\"", b"null"] {
            assert_eq!(v(not), Uint::NotUint);
        }
    }

    #[test]
    fn unescape_pairs_and_lone_surrogates() {
        assert_eq!(unescape(br"a\n\u00e9\ud83d\ude00"), "a\n\u{e9}\u{1f600}");
        assert_eq!(unescape(br"\ud800x"), "\u{fffd}x");
    }

    #[test]
    fn children_of_objects_and_arrays() {
        let v = Value {
            raw: br#"{"a":1,"b":[2,3]}"#,
            start: 0,
            plain: false,
        };
        let kids: Vec<_> = v.children().collect();
        assert_eq!(kids.len(), 2);
        assert_eq!(kids[1].1.children().count(), 2);
        assert_eq!(v.field("a").unwrap().uint(), Some(1));
        let v = Value {
            raw: br#"{ "a" : "x" , "b\u0063" : [ 1 , { "d" : [ ] } ] , "e" : null }"#,
            start: 0,
            plain: false,
        };
        let kids: Vec<_> = v
            .children()
            .map(|(k, v)| (k.into_owned(), v.raw()))
            .collect();
        assert_eq!(
            kids,
            vec![
                ("a".to_string(), &br#""x""#[..]),
                ("bc".to_string(), br#"[ 1 , { "d" : [ ] } ]"#),
                ("e".to_string(), b"null"),
            ]
        );
    }
}
