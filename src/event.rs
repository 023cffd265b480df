//! The borrowed event model, and the only JSON reader on the input side.
//!
//! A line is checked against strict RFC 8259 on UTF-8 bytes, and only that
//! (spec §2): numbers of any size and escaped lone surrogates are valid, and
//! nesting depth is limited only by the line, kept on a bit stack rather
//! than the call stack, so no input can exhaust it. The same single pass
//! records where the top-level members are (and the members of a top-level
//! `aoi` object), so rules read fields by borrowing spans of the line:
//! nothing is copied or allocated per line once the buffers are warm.
//!
//! serde_json is not used here on purpose: its defaults reject valid input
//! (exponents past f64, lone surrogates, depth over 128), and it skips the
//! UTF-8 check inside values it ignores.

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

/// A span of the line: `line[start..end]`.
#[derive(Debug, Clone, Copy, Default)]
struct Span {
    start: usize,
    end: usize,
}

/// A member of an object (or, with an empty key, an element of an array).
#[derive(Debug, Clone, Copy, Default)]
struct Member {
    /// The key's bytes between its quotes.
    key: Span,
    key_escaped: bool,
    /// Which reserved name the key is, found once while walking.
    tag: Tag,
    value: Span,
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

/// Where the walk records what it finds.
#[derive(Default)]
struct Layout {
    members: Vec<Member>,
    aoi: Vec<Member>,
    /// Index of the first member with each tag (in `members` or `aoi`).
    first: [Option<usize>; 5],
    /// The first reserved name seen twice.
    duplicate: Option<Tag>,
    ansi: bool,
    is_object: bool,
    /// The walk finished without a fault.
    valid: bool,
}

impl Layout {
    fn clear(&mut self) {
        self.members.clear();
        self.aoi.clear();
        self.first = [None; 5];
        self.duplicate = None;
        self.ansi = false;
    }

    fn push(&mut self, m: Member, in_aoi: bool) {
        let list = if in_aoi {
            &mut self.aoi
        } else {
            &mut self.members
        };
        list.push(m);
        if m.tag != Tag::Other {
            let slot = &mut self.first[m.tag as usize];
            if slot.is_some() {
                self.duplicate.get_or_insert(m.tag);
            } else {
                *slot = Some(list.len() - 1);
            }
        }
    }
}

/// Reusable parse state; one per input stream.
#[derive(Default)]
pub struct Parser {
    stack: BitStack,
    layout: Layout,
}

/// A line that parsed: the line plus the positions of its top-level parts.
pub struct Event<'a> {
    line: &'a [u8],
    layout: &'a Layout,
    is_object: bool,
    /// A string anywhere in the line holds ESC or CSI (U+001B, U+009B).
    pub has_ansi: bool,
}

/// A validated JSON value inside a line.
#[derive(Debug, Clone, Copy)]
pub struct Value<'a> {
    raw: &'a [u8],
    /// Where `raw` starts in the line it came from.
    start: usize,
}

/// What a field of an event holds, as far as the envelope rules care.
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

impl Parser {
    pub fn new() -> Parser {
        Parser::default()
    }

    /// Validate `line` (without its `\n`) and locate its top-level members.
    pub fn parse<'a>(&'a mut self, line: &'a [u8]) -> Result<Event<'a>, JsonError> {
        // Whatever happens below, the layout no longer describes a line.
        self.layout.valid = false;
        if let Err(e) = std::str::from_utf8(line) {
            return Err(JsonError::Utf8 {
                column: e.valid_up_to() + 1,
            });
        }
        self.layout.clear();
        self.stack.clear();
        walk(line, &mut self.stack, &mut self.layout)?;
        self.layout.valid = true;
        self.layout.is_object = line.get(ws(line, 0)) == Some(&b'{');
        // U+009B (CSI) may also stand raw, as the bytes C2 9B; outside a
        // string any byte over 0x7F fails the walk anyway.
        if !self.layout.ansi {
            self.layout.ansi =
                memchr::memchr_iter(0xc2, line).any(|i| line.get(i + 1) == Some(&0x9b));
        }
        Ok(self.view(line))
    }

    /// The event last parsed, seen again (`line` must be the same bytes).
    pub fn last<'a>(&'a self, line: &'a [u8]) -> Option<Event<'a>> {
        self.layout.valid.then(|| self.view(line))
    }

    fn view<'a>(&'a self, line: &'a [u8]) -> Event<'a> {
        Event {
            line,
            layout: &self.layout,
            is_object: self.layout.is_object,
            has_ansi: self.layout.ansi,
        }
    }
}

/// One pass over `b`: validate, and record depth-1 members (and the members
/// of a depth-1 `aoi` object). Iterative; `stack` holds one bit per open
/// container (1 = object).
fn walk(b: &[u8], stack: &mut BitStack, out: &mut Layout) -> Result<(), JsonError> {
    let err = |i: usize, expected| JsonError::Syntax {
        column: i + 1,
        expected,
    };
    let mut i = 0;
    // The member whose value is being read, at depth 1 and inside `aoi`.
    let mut open: Option<Member> = None;
    let mut open_aoi: Option<Member> = None;
    let mut in_aoi = false;
    'value: loop {
        i = ws(b, i);
        let depth = stack.len();
        if depth == 1 {
            if let Some(m) = open.as_mut() {
                m.value.start = i;
                in_aoi = b.get(i) == Some(&b'{') && m.tag == Tag::Aoi;
            }
        } else if depth == 2
            && in_aoi
            && let Some(m) = open_aoi.as_mut()
        {
            m.value.start = i;
        }
        match b.get(i) {
            Some(b'{') => {
                i = ws(b, i + 1);
                if b.get(i) == Some(&b'}') {
                    i += 1;
                } else {
                    stack.push(true);
                    i = key(
                        b,
                        i,
                        stack.len(),
                        &mut open,
                        &mut open_aoi,
                        in_aoi,
                        &mut out.ansi,
                    )?;
                    continue 'value;
                }
            }
            Some(b'[') => {
                i = ws(b, i + 1);
                if b.get(i) == Some(&b']') {
                    i += 1;
                } else {
                    stack.push(false);
                    if stack.len() == 1 {
                        open = Some(Member::default());
                    }
                    continue 'value;
                }
            }
            Some(b'"') => i = string(b, i, &mut out.ansi)?.0,
            Some(b'-' | b'0'..=b'9') => i = number(b, i)?,
            Some(b't') => i = literal(b, i, b"true")?,
            Some(b'f') => i = literal(b, i, b"false")?,
            Some(b'n') => i = literal(b, i, b"null")?,
            _ => return Err(err(i, "a JSON value")),
        }
        // After a value: close containers until one continues.
        loop {
            match stack.len() {
                1 => {
                    if let Some(mut m) = open.take() {
                        m.value.end = i;
                        out.push(m, false);
                        in_aoi = false;
                    }
                }
                2 if in_aoi => {
                    if let Some(mut m) = open_aoi.take() {
                        m.value.end = i;
                        out.push(m, true);
                    }
                }
                _ => {}
            }
            i = ws(b, i);
            let Some(is_object) = stack.top() else {
                return if i == b.len() {
                    Ok(())
                } else {
                    Err(err(i, "end of line after the JSON value"))
                };
            };
            match (b.get(i), is_object) {
                (Some(b','), true) => {
                    i = key(
                        b,
                        ws(b, i + 1),
                        stack.len(),
                        &mut open,
                        &mut open_aoi,
                        in_aoi,
                        &mut out.ansi,
                    )?;
                    continue 'value;
                }
                (Some(b','), false) => {
                    i += 1;
                    if stack.len() == 1 {
                        open = Some(Member::default());
                    }
                    continue 'value;
                }
                (Some(b'}'), true) | (Some(b']'), false) => {
                    stack.pop();
                    i += 1;
                }
                (_, true) => return Err(err(i, "',' or '}' after an object member")),
                (_, false) => return Err(err(i, "',' or ']' after an array element")),
            }
        }
    }
}

/// Read `"key" :` at `i`; record it when it belongs to a member we track.
fn key(
    b: &[u8],
    i: usize,
    depth: usize,
    open: &mut Option<Member>,
    open_aoi: &mut Option<Member>,
    in_aoi: bool,
    ansi: &mut bool,
) -> Result<usize, JsonError> {
    if b.get(i) != Some(&b'"') {
        return Err(JsonError::Syntax {
            column: i + 1,
            expected: "a string key",
        });
    }
    let (end, escaped) = string(b, i, ansi)?;
    let mut m = Member {
        key: Span {
            start: i + 1,
            end: end - 1,
        },
        key_escaped: escaped,
        tag: Tag::Other,
        value: Span::default(),
    };
    if depth == 1 || (depth == 2 && in_aoi) {
        let decoded;
        let name = if escaped {
            decoded = unescape(&b[m.key.start..m.key.end]);
            decoded.as_bytes()
        } else {
            &b[m.key.start..m.key.end]
        };
        m.tag = match (depth, name) {
            (1, b"type") => Tag::Type,
            (1, b"aoi") => Tag::Aoi,
            (2, b"seq") => Tag::Seq,
            (2, b"run") => Tag::Run,
            _ => Tag::Other,
        };
    }
    if depth == 1 {
        *open = Some(m);
    } else if depth == 2 && in_aoi {
        *open_aoi = Some(m);
    }
    let j = ws(b, end);
    if b.get(j) != Some(&b':') {
        return Err(JsonError::Syntax {
            column: j + 1,
            expected: "':' after an object key",
        });
    }
    Ok(j + 1)
}

#[inline]
fn ws(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\r' | b'\n') = b.get(i) {
        i += 1;
    }
    i
}

/// Bytes that end the fast part of a string: `"`, `\` and controls.
#[inline]
fn stops_string(x: u8) -> bool {
    x == b'"' || x == b'\\' || x < 0x20
}

/// Index of the first byte of `w` (little-endian lanes) that is `"`, `\`
/// or below 0x20; bytes >= 0x80 never match.
#[inline]
fn first_stop(w: u64) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let hit = zero(w ^ (ONES * b'"' as u64))
        | zero(w ^ (ONES * b'\\' as u64))
        | (w.wrapping_sub(ONES * 0x20) & !w & HIGH);
    // Borrows only run upward, so the lowest flagged lane is exact.
    (hit != 0).then(|| (hit.trailing_zeros() / 8) as usize)
}

/// Read a string starting at the quote at `i`; returns the index after the
/// closing quote and whether it held an escape. The line is already known
/// to be UTF-8, so only `"`, `\` and control bytes need a look. Most
/// strings hold none of the last two: that path is kept small and inline.
#[inline(always)]
fn string(b: &[u8], i: usize, ansi: &mut bool) -> Result<(usize, bool), JsonError> {
    let i = skip_plain(b, i + 1);
    if b.get(i) == Some(&b'"') {
        return Ok((i + 1, false));
    }
    string_rest(b, i, ansi)
}

/// The first index from `i` that holds `"`, `\` or a control byte.
#[inline(always)]
fn skip_plain(b: &[u8], mut i: usize) -> usize {
    while i + 8 <= b.len() {
        let w = u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
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

/// The rest of a string from its first escape (or fault) at `i`.
#[inline(never)]
fn string_rest(b: &[u8], mut i: usize, ansi: &mut bool) -> Result<(usize, bool), JsonError> {
    loop {
        match b.get(i) {
            Some(b'"') => return Ok((i + 1, true)),
            Some(b'\\') => match b.get(i + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                Some(b'u') => {
                    let code = hex4(b, i + 2).ok_or(JsonError::Syntax {
                        column: i + 3,
                        expected: "four hex digits after \\u",
                    })?;
                    if code == 0x1b || code == 0x9b {
                        *ansi = true;
                    }
                    i += 6;
                }
                _ => {
                    return Err(JsonError::Syntax {
                        column: i + 2,
                        expected: "an escape: one of \" \\ / b f n r t u",
                    });
                }
            },
            Some(_) => {
                return Err(JsonError::Syntax {
                    column: i + 1,
                    expected: "no raw control character inside a string (escape it)",
                });
            }
            None => {
                return Err(JsonError::Syntax {
                    column: i + 1,
                    expected: "a closing '\"'",
                });
            }
        }
        i = skip_plain(b, i);
    }
}

fn hex4(b: &[u8], i: usize) -> Option<u32> {
    let h = b.get(i..i + 4)?;
    let mut v = 0;
    for &c in h {
        v = v * 16 + (c as char).to_digit(16)?;
    }
    Some(v)
}

/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, any size.
fn number(b: &[u8], mut i: usize) -> Result<usize, JsonError> {
    let digits = |mut i: usize| {
        let s = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i, i > s)
    };
    let fail = |i: usize, expected| {
        Err(JsonError::Syntax {
            column: i + 1,
            expected,
        })
    };
    if b[i] == b'-' {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits(i).0,
        _ => return fail(i, "a digit"),
    }
    if b.get(i) == Some(&b'.') {
        let (j, any) = digits(i + 1);
        if !any {
            return fail(j, "a digit after '.'");
        }
        i = j;
    }
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = b.get(i) {
            i += 1;
        }
        let (j, any) = digits(i);
        if !any {
            return fail(j, "a digit in the exponent");
        }
        i = j;
    }
    Ok(i)
}

fn literal(b: &[u8], i: usize, word: &'static [u8]) -> Result<usize, JsonError> {
    if b.get(i..i + word.len()) == Some(word) {
        Ok(i + word.len())
    } else {
        Err(JsonError::Syntax {
            column: i + 1,
            expected: "a JSON value",
        })
    }
}

fn key_is(line: &[u8], m: &Member, name: &[u8]) -> bool {
    let raw = &line[m.key.start..m.key.end];
    if m.key_escaped {
        unescape(raw).as_bytes() == name
    } else {
        raw == name
    }
}

/// Decode the inside of a validated JSON string. Lone surrogates become
/// U+FFFD: they are valid JSON (RFC 8259 §8.2) but not Unicode scalars.
pub fn unescape(raw: &[u8]) -> Cow<'_, str> {
    // The line was checked as UTF-8 before anything reads it.
    let text = std::str::from_utf8(raw).unwrap_or_default();
    if !raw.contains(&b'\\') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = text.char_indices();
    while let Some((i, ch)) = chars.next() {
        if ch != '\\' {
            out.push(ch);
            continue;
        }
        let Some((_, esc)) = chars.next() else { break };
        match esc {
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'u' => {
                let hi = hex4(raw, i + 2).unwrap_or(0xfffd);
                chars.nth(3);
                let mut code = hi;
                if (0xd800..0xdc00).contains(&hi)
                    && raw.get(i + 6..i + 8) == Some(b"\\u")
                    && let Some(lo) = hex4(raw, i + 8).filter(|lo| (0xdc00..0xe000).contains(lo))
                {
                    code = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
                    chars.nth(5);
                }
                out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
            }
            other => out.push(other),
        }
    }
    Cow::Owned(out)
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

impl<'a> Event<'a> {
    pub fn is_object(&self) -> bool {
        self.is_object
    }

    /// The bytes to cut so that the top-level `aoi` member goes, with the
    /// comma after it (or, when it is the last member, the one before it):
    /// what is left is the same object, byte for byte, without it.
    pub fn aoi_cut(&self) -> Option<(usize, usize)> {
        let k = self.layout.first[Tag::Aoi as usize]?;
        let ms = &self.layout.members;
        let m = ms[k];
        let quote = m.key.start - 1;
        if let Some(next) = ms.get(k + 1) {
            // Between the value and the next key: whitespace and one comma.
            let gap = &self.line[m.value.end..next.key.start - 1];
            let comma = memchr::memchr(b',', gap)? + m.value.end;
            Some((quote, comma + 1))
        } else if let Some(prev) = k.checked_sub(1).map(|p| ms[p]) {
            let gap = &self.line[prev.value.end..quote];
            let comma = memchr::memrchr(b',', gap)? + prev.value.end;
            Some((comma, m.value.end))
        } else {
            Some((quote, m.value.end))
        }
    }

    /// The first top-level member named `key`.
    pub fn get(&self, key: &str) -> Option<Value<'a>> {
        let tag = match key {
            "type" => Tag::Type,
            "aoi" => Tag::Aoi,
            _ => return find(self.line, &self.layout.members, key),
        };
        self.tagged(tag)
    }

    fn tagged(&self, tag: Tag) -> Option<Value<'a>> {
        let list = match tag {
            Tag::Seq | Tag::Run => &self.layout.aoi,
            _ => &self.layout.members,
        };
        let m = list[self.layout.first[tag as usize]?];
        Some(Value {
            raw: &self.line[m.value.start..m.value.end],
            start: m.value.start,
        })
    }

    /// Top-level `type`, `aoi` (and inside it `seq`, `run`) that appear more
    /// than once: parsers disagree about which one wins (RFC 8259 §4).
    pub fn duplicate_reserved_key(&self) -> Option<&'static str> {
        self.layout.duplicate.map(Tag::reserved_name)
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

/// What the hot path needs of a parsed line, as positions in it: small,
/// `Copy` and free of borrows, so a line can be parsed on one thread and
/// judged on another. Everything else is read from a full `Event`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Envelope {
    pub is_object: bool,
    pub has_ansi: bool,
    duplicate: Option<Tag>,
    ty: Option<(usize, usize)>,
    aoi: Option<(usize, usize)>,
    seq: Option<(usize, usize)>,
    run: Option<(usize, usize)>,
    cut: Option<(usize, usize)>,
}

impl Event<'_> {
    pub fn envelope(&self) -> Envelope {
        let span = |tag| self.tagged(tag).map(|v| v.span());
        Envelope {
            is_object: self.is_object,
            has_ansi: self.has_ansi,
            duplicate: self.layout.duplicate,
            ty: span(Tag::Type),
            aoi: span(Tag::Aoi),
            seq: span(Tag::Seq),
            run: span(Tag::Run),
            cut: self.aoi_cut(),
        }
    }
}

impl Envelope {
    fn value(line: &[u8], span: Option<(usize, usize)>) -> Option<Value<'_>> {
        span.map(|(s, e)| Value {
            raw: &line[s..e],
            start: s,
        })
    }

    /// The top-level `type` value of `line` (the line this was made from).
    pub fn ty<'a>(&self, line: &'a [u8]) -> Option<Value<'a>> {
        Envelope::value(line, self.ty)
    }

    pub fn aoi<'a>(&self, line: &'a [u8]) -> Aoi<'a> {
        match Envelope::value(line, self.aoi) {
            None => Aoi::Absent,
            Some(v) if v.kind() != Kind::Object => Aoi::NotObject,
            Some(_) => Aoi::Object {
                seq: Envelope::value(line, self.seq),
                run: Envelope::value(line, self.run),
            },
        }
    }

    /// As `Event::duplicate_reserved_key`.
    pub fn duplicate_reserved_key(&self) -> Option<&'static str> {
        self.duplicate.map(Tag::reserved_name)
    }

    /// As `Event::aoi_cut`.
    pub fn aoi_cut(&self) -> Option<(usize, usize)> {
        self.cut
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

fn find<'a>(line: &'a [u8], ms: &[Member], key: &str) -> Option<Value<'a>> {
    ms.iter()
        .find(|m| key_is(line, m, key.as_bytes()))
        .map(|m| Value {
            raw: &line[m.value.start..m.value.end],
            start: m.value.start,
        })
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

    /// Where the value stands in its line (for values read off an `Event`).
    pub fn span(&self) -> (usize, usize) {
        (self.start, self.start + self.raw.len())
    }

    /// The value's bytes as they stand in the line.
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// The string's inside, undecoded (what identifies a run: two spellings
    /// of one id are two ids, as a byte-comparing consumer would see them).
    pub fn raw_str(&self) -> Option<&'a [u8]> {
        (self.kind() == Kind::String).then(|| &self.raw[1..self.raw.len() - 1])
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
    /// keys). Allocates: for the rare framework fields that nest.
    pub fn children(&self) -> Vec<(Cow<'a, str>, Value<'a>)> {
        let mut stack = BitStack::default();
        let mut layout = Layout::default();
        if walk(self.raw, &mut stack, &mut layout).is_err() {
            return vec![];
        }
        let raw = self.raw;
        layout
            .members
            .iter()
            .map(|m| {
                let key = if m.key.end > m.key.start || self.kind() == Kind::Object {
                    unescape(&raw[m.key.start..m.key.end])
                } else {
                    Cow::Borrowed("")
                };
                (
                    key,
                    Value {
                        raw: &raw[m.value.start..m.value.end],
                        start: self.start + m.value.start,
                    },
                )
            })
            .collect()
    }

    /// The named member of an object value.
    pub fn field(&self, key: &str) -> Option<Value<'a>> {
        self.children()
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }
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

    fn pop(&mut self) {
        self.len -= 1;
    }

    fn top(&self) -> Option<bool> {
        let i = self.len.checked_sub(1)?;
        Some(self.words[i / 64] >> (i % 64) & 1 == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(s: &[u8]) -> bool {
        Parser::new().parse(s).is_ok()
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
        let mut p = Parser::new();
        assert_eq!(
            p.parse(b"{\"a\":01}").err(),
            Some(JsonError::Syntax {
                column: 7,
                expected: "',' or '}' after an object member"
            })
        );
        assert_eq!(
            p.parse(b"{\"a\":\"\xc3\"}").err(),
            Some(JsonError::Utf8 { column: 7 })
        );
    }

    #[test]
    fn members_and_envelope() {
        let mut p = Parser::new();
        let line = br#"{"type":"hit","aoi":{"seq":3,"run":"R\u0031","x":[1,{"seq":9}]},"n":{"aoi":{"seq":1}}}"#;
        let ev = p.parse(line).unwrap();
        assert!(ev.is_object());
        assert_eq!(ev.get("type").unwrap().as_str().unwrap(), "hit");
        let Aoi::Object { seq, run } = ev.aoi() else {
            panic!()
        };
        assert_eq!(seq.unwrap().as_uint(), Uint::Int(3));
        assert_eq!(run.unwrap().as_str().unwrap(), "R1");
        assert_eq!(ev.get("n").unwrap().raw(), br#"{"aoi":{"seq":1}}"#);
        assert!(ev.duplicate_reserved_key().is_none());
        assert!(!ev.has_ansi);
    }

    #[test]
    fn duplicates_are_seen_through_escapes() {
        let mut p = Parser::new();
        let ev = p.parse(br#"{"type":"a","typ\u0065":"b"}"#).unwrap();
        assert_eq!(ev.duplicate_reserved_key(), Some("type"));
        let ev = p.parse(br#"{"type":"a","aoi":{"seq":1,"seq":2}}"#).unwrap();
        assert_eq!(ev.duplicate_reserved_key(), Some("aoi.seq"));
    }

    #[test]
    fn ansi_in_strings() {
        let mut p = Parser::new();
        assert!(p.parse(br#"{"m":"\u001b[31mred"}"#).unwrap().has_ansi);
        assert!(
            p.parse("{\"m\":\"\u{9b}31m\"}".as_bytes())
                .unwrap()
                .has_ansi
        );
        assert!(!p.parse(br#"{"m":"\\u001b"}"#).unwrap().has_ansi);
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
            let ours = p.parse(&line).is_ok();
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
    fn a_failed_parse_leaves_no_event_behind() {
        let mut p = Parser::new();
        assert!(p.parse(br#"{"type":"a","aoi":{"seq":1}}"#).is_ok());
        for bad in [&b"{\"x\":\"\xff\"}"[..], b"{oops", b""] {
            assert!(p.parse(bad).is_err());
            assert!(p.last(bad).is_none(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn uints() {
        let v = |s: &'static [u8]| Value { raw: s, start: 0 }.as_uint();
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
        };
        let kids = v.children();
        assert_eq!(kids.len(), 2);
        assert_eq!(kids[1].1.children().len(), 2);
        assert_eq!(v.field("a").unwrap().uint(), Some(1));
    }
}
