//! The decoded view of a parsed line: its members, found through the
//! index, and the values under them.

use std::borrow::Cow;

use super::decode::{decode, unescape};
use super::index::*;
use super::walk::ws;

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

impl<'a> Aoi<'a> {
    /// `aoi.seq`, `aoi.run`, and whether `aoi` is there but not an object.
    pub fn parts(self) -> (Option<Value<'a>>, Option<Value<'a>>, bool) {
        match self {
            Aoi::Absent => (None, None, false),
            Aoi::NotObject => (None, None, true),
            Aoi::Object { seq, run } => (seq, run, false),
        }
    }
}

impl Index {
    #[inline]
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
    #[inline]
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
        Some(self.cut(&self.top[self.index.first(Tag::Aoi)?]))
    }

    /// As `aoi_cut`, for the first top-level member named `key`, among
    /// those the index keeps (`None` past them).
    pub fn member_cut(&self, key: &str) -> Option<(usize, usize)> {
        let m = self
            .top
            .iter()
            .find(|m| m.key(self.line).as_ref() == key.as_bytes())?;
        Some(self.cut(m))
    }

    fn cut(&self, m: &Member) -> (usize, usize) {
        let (quote, end) = (m.key_start as usize - 1, m.value_end as usize);
        let b = self.line;
        // The line is valid JSON: only whitespace stands between a member
        // and the comma or brace next to it.
        let after = ws(b, end);
        if b.get(after) == Some(&b',') {
            return (quote, after + 1);
        }
        let mut before = quote;
        while before > 0 && matches!(b[before - 1], b' ' | b'\t' | b'\r' | b'\n') {
            before -= 1;
        }
        if before > 0 && b[before - 1] == b',' {
            (before - 1, end)
        } else {
            (quote, end)
        }
    }

    /// Where the value of `type` ends, when `type` is the first member.
    pub fn leading_type_end(&self) -> Option<usize> {
        let m = self.top.first()?;
        (m.tag == Tag::Type).then_some(m.value_end as usize)
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

    /// The first top-level member named each of `keys` (decoded), as
    /// `get` finds it, in one pass over the members rather than one a key:
    /// a run's summary is read for half a dozen (docs/contract.md §8.2).
    pub fn get_each<const N: usize>(&self, keys: [&str; N]) -> [Option<Value<'a>>; N] {
        if self.index.overflow || keys.iter().any(|k| matches!(*k, "type" | "aoi")) {
            return keys.map(|k| self.get(k));
        }
        let mut found = [None; N];
        for m in self.top {
            let key = m.key(self.line);
            if let Some(i) = keys.iter().position(|k| k.as_bytes() == &*key)
                && found[i].is_none()
            {
                found[i] = Some(m.value(self.line));
            }
        }
        found
    }

    /// Every top-level member, decoded key and value, from the index the
    /// walk made (no second scan of the line); `filter` builds its values
    /// from them.
    pub fn members(&self) -> Box<dyn Iterator<Item = (Cow<'a, [u8]>, Value<'a>)> + 'a> {
        if self.index.overflow {
            let whole = self.whole();
            return Box::new(
                whole
                    .children()
                    .map(|(k, v)| (Cow::Owned(k.into_owned().into_bytes()), v)),
            );
        }
        let line = self.line;
        Box::new(self.top.iter().map(move |m| (m.key(line), m.value(line))))
    }

    /// How many top-level members are named `key` (decoded).
    #[inline(always)]
    pub fn count(&self, key: &str) -> usize {
        // The index keeps the first member of a reserved name and notes a
        // second: with none noted, it has the count (inlined, so a
        // constant `key` costs no compare).
        let reserved = match key {
            "type" => Some(Tag::Type),
            "aoi" => Some(Tag::Aoi),
            _ => None,
        };
        match reserved {
            Some(tag) if self.index.duplicate.is_none() => {
                usize::from(self.index.first(tag).is_some())
            }
            _ => self.count_read(key, reserved.is_some()),
        }
    }

    /// `count` read from the members, or from the line itself where the
    /// index does not have them all (a reserved name twice is rare: the
    /// line is then broken).
    #[inline(never)]
    fn count_read(&self, key: &str, reserved: bool) -> usize {
        if self.index.overflow || reserved {
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

    #[inline]
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

    /// The decoded bytes of `type`, when it is a string: what is compared
    /// (no UTF-8 pass, as nothing is shown).
    #[inline]
    pub fn ty_bytes(&self) -> Option<Cow<'a, [u8]>> {
        self.tagged(Tag::Type).and_then(|v| v.decoded())
    }

    /// Top-level `type`, `aoi` (and inside it `seq`, `run`) that appear more
    /// than once: parsers disagree about which one wins (RFC 8259 §4).
    pub fn duplicate_reserved_key(&self) -> Option<&'static str> {
        self.index.duplicate.map(Tag::reserved_name)
    }

    /// `aoi.seq` as an integer (`Value::as_uint`), decoded during the
    /// walk; `NotUint` when the envelope has no seq.
    pub fn seq_uint(&self) -> Uint {
        self.index.seq
    }

    #[inline]
    pub fn aoi(&self) -> Aoi<'a> {
        if self.index.first(Tag::Aoi).is_none() {
            Aoi::Absent
        } else if !self.index.aoi_object {
            Aoi::NotObject
        } else {
            Aoi::Object {
                seq: self.tagged(Tag::Seq),
                run: self.tagged(Tag::Run),
            }
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
    /// a run, so `"R\u0031"` and `"R1"` are one run (docs/contract.md §3.2).
    #[inline]
    pub fn decoded(&self) -> Option<Cow<'a, [u8]>> {
        let raw = self.raw_str()?;
        Some(if self.plain {
            Cow::Borrowed(raw)
        } else {
            decode(raw)
        })
    }

    pub fn as_str(&self) -> Option<Cow<'a, str>> {
        let raw = self.raw_str()?;
        // A string the walk saw hold no escape is its own text (and valid
        // UTF-8, checked by the walk): no search for a backslash.
        Some(if self.plain {
            // from_utf8 is the fast check on ASCII; the lossy form only
            // for the walk's WTF-8 (a lone surrogate written raw cannot
            // occur: the walk rejects invalid UTF-8).
            std::str::from_utf8(raw).map_or_else(|_| String::from_utf8_lossy(raw), Cow::Borrowed)
        } else {
            unescape(raw)
        })
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self.raw {
            b"true" => Some(true),
            b"false" => Some(false),
            _ => None,
        }
    }

    /// An integer literal `>= 0` (`1.0`, `1e0`, `-1` are not); one past
    /// `u64` is `Huge`, never clamped.
    pub fn as_uint(&self) -> Uint {
        Uint::of(self.raw)
    }

    /// The value as a `u64`, when it is an integer `>= 0` that fits.
    pub fn uint(&self) -> Option<u64> {
        match self.as_uint() {
            Uint::Int(n) => Some(n),
            Uint::Huge | Uint::NotUint => None,
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
