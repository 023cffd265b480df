//! What one parsed line is made of: the member index the walk records
//! (`walk.rs`) and the view reads (`view.rs`), and the values it hands out.

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
    pub(super) key_start: u32,
    pub(super) key_end: u32,
    pub(super) value_start: u32,
    pub(super) value_end: u32,
    pub(super) key_escaped: bool,
    /// The value may hold an escape: false only for a string seen to hold
    /// none, whose raw inside is then its decoded bytes.
    pub(super) value_escaped: bool,
    /// Which reserved name the key is, found once while walking.
    pub(super) tag: Tag,
}

/// The envelope's reserved names (spec §8.1): `type` and `aoi` at the top,
/// `seq` and `run` inside `aoi`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Tag {
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
    pub(super) top: Vec<Member>,
    pub(super) aoi: Vec<Member>,
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
    pub(super) top: (u32, u32),
    pub(super) aoi: (u32, u32),
    /// Index (within the line's own list) of the first member with each
    /// tag; `NONE` when there is none.
    pub(super) first: [u32; 5],
    /// The first reserved name seen twice.
    pub(super) duplicate: Option<Tag>,
    /// A string anywhere in the line holds ESC or CSI (U+001B, U+009B).
    pub(super) ansi: bool,
    pub(super) object: bool,
    /// More members than the index keeps: see `Walk::push`.
    pub(super) overflow: bool,
    /// Some key, at any depth, is marked `_secret` or `_url`.
    pub(super) marked: bool,
    /// The first top-level `aoi` is an object (its members are in `aoi`):
    /// known from the walk, so `Event::aoi` need not look at the line.
    pub(super) aoi_object: bool,
    /// The envelope's `aoi.seq`, read while its bytes are at hand on the
    /// parsing thread, so the judging thread (the serial stage) does not
    /// go back to the line for it. `NotUint` when there is none.
    pub(super) seq: Uint,
}

/// No member has the tag.
pub(super) const NONE: u32 = u32::MAX;

/// Members indexed per object, at most (the rest are found by reading).
pub(super) const MAX_MEMBERS: usize = 4096;

/// A line that parsed: the line plus its index.
#[derive(Clone, Copy)]
pub struct Event<'a> {
    pub(super) line: &'a [u8],
    pub(super) index: &'a Index,
    pub(super) top: &'a [Member],
    pub(super) aoi: &'a [Member],
}

/// A validated JSON value inside a line.
#[derive(Debug, Clone, Copy)]
pub struct Value<'a> {
    pub(super) raw: &'a [u8],
    /// Where `raw` starts in the line it came from.
    pub(super) start: usize,
    /// The walk saw this string hold no escape: its raw inside is its
    /// decoded value, with no search for a backslash.
    pub(super) plain: bool,
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

/// An integer literal `>= 0`, as far as aoitap can count it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Uint {
    Int(u64),
    /// An integer literal `>= 0` past 2^64-1: valid, but never clamped into
    /// a false value (docs/contract.md §3.3: quoted as written).
    Huge,
    /// Any other number, a negative one, or no number at all.
    #[default]
    NotUint,
}

impl Uint {
    /// The integer a number's raw text spells, `Int` only for `[0-9]+`.
    #[inline]
    pub fn of(raw: &[u8]) -> Uint {
        // Up to 19 digits cannot pass u64::MAX: one pass, no overflow
        // checks (a seq is read on every line).
        if !raw.is_empty() && raw.len() <= 19 {
            let mut n = 0u64;
            for &d in raw {
                let digit = d.wrapping_sub(b'0');
                if digit > 9 {
                    return Uint::NotUint;
                }
                n = n * 10 + u64::from(digit);
            }
            return Uint::Int(n);
        }
        if raw.is_empty() || !raw.iter().all(u8::is_ascii_digit) {
            return Uint::NotUint;
        }
        let n = raw.iter().try_fold(0u64, |n, &d| {
            n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
        });
        n.map_or(Uint::Huge, Uint::Int)
    }
}
