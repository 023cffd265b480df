//! A run's events counted by type name (docs/contract.md §1.2): the names
//! kept once for all open runs, each run's counts by the names' numbers,
//! and the type its last event had, which most lines repeat.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::rc::Rc;

/// At most this many type names are counted by name in a run, each of
/// domain and framework types; the rest count under `(other)`.
pub const MAX_KINDS: usize = 256;

/// Type names are counted by at most this many bytes (longer ones by
/// their prefix, marked `…`): with `MAX_KINDS`, the table is bounded in
/// bytes, whatever the input (docs/contract.md §3.2).
pub const NAME_BYTES: usize = 128;

/// Names up to this many are found by comparing them, not by a hash.
const FEW: usize = 16;

/// What overflowing names are counted under.
const OTHER: &str = "(other)";

/// The type names open runs count under, each kept once for all of them
/// and known by a number: a run's counts are numbers, not copies of the
/// names, and ten thousand runs with the same few types keep those few
/// (docs/contract.md §8.2). A name is let go when the last run counting
/// under it ends, so the table holds no more than the runs' own counts
/// would (`MAX_KEPT` in all).
#[derive(Default)]
pub struct Names {
    by_number: Vec<Option<Named>>,
    /// The same text as `by_number`'s, not a copy of it.
    numbers: HashMap<Rc<str>, u32>,
    free: Vec<u32>,
}

struct Named {
    text: Rc<str>,
    /// Open runs counting under it.
    runs: u32,
}

impl Names {
    fn text(&self, n: u32) -> &str {
        self.by_number[n as usize]
            .as_ref()
            .map_or("", |named| &named.text)
    }

    /// Is name `n` these decoded bytes?
    fn is(&self, n: u32, decoded: &[u8]) -> bool {
        self.text(n).as_bytes() == decoded
    }

    /// The number of `name`, if it is kept. While few names are kept
    /// (most streams have a handful of types), they are compared, not
    /// hashed: a run that begins costs a hash of each of its types' names
    /// otherwise (docs/contract.md §8.2).
    fn number(&self, name: &str) -> Option<u32> {
        if self.by_number.len() <= FEW {
            let found = self
                .by_number
                .iter()
                .position(|named| named.as_ref().is_some_and(|named| *named.text == *name));
            return found.map(|n| n as u32);
        }
        self.numbers.get(name).copied()
    }

    /// The number of `name`, held for one run more.
    fn hold(&mut self, name: &str) -> u32 {
        if let Some(n) = self.number(name) {
            if let Some(named) = self.by_number[n as usize].as_mut() {
                named.runs += 1;
            }
            return n;
        }
        let text: Rc<str> = name.into();
        let named = Named {
            text: Rc::clone(&text),
            runs: 1,
        };
        let n = match self.free.pop() {
            Some(n) => {
                self.by_number[n as usize] = Some(named);
                n
            }
            None => {
                self.by_number.push(Some(named));
                (self.by_number.len() - 1) as u32
            }
        };
        self.numbers.insert(text, n);
        n
    }

    /// A run counting under name `n` has ended.
    fn release(&mut self, n: u32) {
        let slot = &mut self.by_number[n as usize];
        let Some(named) = slot.as_mut() else { return };
        named.runs -= 1;
        if named.runs == 0 {
            let named = slot.take().expect("held above");
            self.numbers.remove(&named.text);
            self.free.push(n);
        }
    }
}

/// A run's counts by type name, domain and framework types together in
/// the order first seen, each marked. The first `FRONT` are kept in the
/// run's own state, beside what every line touches: most runs have a few
/// types, and a run whose type changes then costs no visit to memory of
/// its own elsewhere (ten thousand interleaved runs' state is not all in
/// the cache, docs/contract.md §8.2).
#[derive(Default)]
pub struct Kinds {
    front: [Entry; FRONT],
    /// Past the first `FRONT`.
    rest: Vec<Entry>,
    /// Entries held of each: domain types, framework types.
    len: [u16; 2],
    /// Counted under `(other)`.
    other: [u64; 2],
}

/// A run's first few type names are kept in its own state.
const FRONT: usize = 4;

#[derive(Clone, Copy, Default)]
struct Entry {
    name: u32,
    framework: bool,
    count: u64,
}

/// The type of a run's last event, where it is counted, and the events
/// since with the same decoded type, not yet added to its count. Most
/// lines repeat the type of the line before: each then costs one compare
/// of decoded bytes against a name all runs share, with no UTF-8 check
/// and no lookup. Equal decoded bytes are the same name, so the count is
/// the one `Kinds::count` would have kept.
///
/// Eight bytes, with `Option`'s mark in the name's number (kept one
/// above it): with the line's count, bytes and number it fills one cache
/// line with the run's slot and key (`stream::slots`).
#[derive(Clone, Copy)]
pub struct Last {
    name: NonZeroU32,
    at: u16,
    pending: u16,
}

/// Where a name was counted, when it was its own (perhaps cut) name and
/// not `(other)`.
pub struct Place {
    name: u32,
    at: usize,
}

impl Last {
    /// One event more of the same type, when `decoded` is it; its count
    /// is added to `kinds` before it could overflow.
    #[inline]
    pub fn repeat(&mut self, decoded: &[u8], names: &Names, kinds: &mut Kinds) -> bool {
        if !names.is(self.name.get() - 1, decoded) {
            return false;
        }
        self.pending += 1;
        if self.pending == u16::MAX {
            self.flush(kinds);
        }
        true
    }

    /// Add the events it holds to their count: before the type changes,
    /// and before the counts are read.
    pub fn flush(&mut self, kinds: &mut Kinds) {
        kinds.entry(usize::from(self.at)).count += u64::from(self.pending);
        self.pending = 0;
    }
}

impl Place {
    /// The `Last` for the event just counted, when its decoded type is
    /// the name it was counted under (not cut, not made valid UTF-8).
    pub fn last(&self, decoded: &[u8], names: &Names) -> Option<Last> {
        names.is(self.name, decoded).then_some(Last {
            // Name numbers count the names open runs hold: far from
            // u32::MAX.
            name: NonZeroU32::new(self.name + 1)?,
            at: self.at as u16,
            pending: 0,
        })
    }
}

impl Kinds {
    fn entries(&self) -> impl Iterator<Item = &Entry> {
        let held = usize::from(self.len[0]) + usize::from(self.len[1]);
        self.front.iter().chain(&self.rest).take(held)
    }

    fn entry(&mut self, at: usize) -> &mut Entry {
        match at.checked_sub(FRONT) {
            None => &mut self.front[at],
            Some(i) => &mut self.rest[i],
        }
    }

    /// Where the run counts `name`, of the domain or framework types.
    fn find(&self, name: &str, framework: bool, names: &Names) -> Option<usize> {
        let mut ours = self
            .entries()
            .enumerate()
            .filter(|(_, e)| e.framework == framework);
        // A run's own few names are compared, not hashed.
        if usize::from(self.len[usize::from(framework)]) <= FEW {
            return ours
                .find(|(_, e)| names.text(e.name) == name)
                .map(|(at, _)| at);
        }
        let n = names.numbers.get(name).copied()?;
        ours.find(|(_, e)| e.name == n).map(|(at, _)| at)
    }

    /// Count one event of type `name` (`None`: it has none); where, when
    /// under its own name. A new name takes room from `room`, or else is
    /// counted under `(other)`.
    pub fn count(
        &mut self,
        name: Option<&str>,
        names: &mut Names,
        mut room: impl FnMut() -> bool,
    ) -> Option<Place> {
        let name = name.unwrap_or("(none)");
        let framework = name.starts_with("aoi:");
        let cut;
        let name = if name.len() > NAME_BYTES {
            cut = format!("{}…", crate::text::prefix(name, NAME_BYTES));
            &cut
        } else {
            name
        };
        let k = usize::from(framework);
        if let Some(at) = self.find(name, framework, names) {
            let e = self.entry(at);
            e.count += 1;
            return Some(Place { name: e.name, at });
        }
        // As one map by name would count: the overflow and a type called
        // `(other)` are one entry, and it is one of the run's MAX_KINDS.
        if name == OTHER && self.other[k] > 0 {
            self.other[k] += 1;
            return None;
        }
        let entries = usize::from(self.len[k]) + usize::from(self.other[k] > 0);
        if entries < MAX_KINDS && room() {
            let n = names.hold(name);
            let at = usize::from(self.len[0]) + usize::from(self.len[1]);
            let e = Entry {
                name: n,
                framework,
                count: 1,
            };
            match self.front.get_mut(at) {
                Some(slot) => *slot = e,
                None => self.rest.push(e),
            }
            self.len[k] += 1;
            return Some(Place { name: n, at });
        }
        match self.find(OTHER, framework, names) {
            Some(at) => self.entry(at).count += 1,
            None => self.other[k] += 1,
        }
        None
    }

    /// The counts by name, sorted by name as bytes: domain types, or
    /// framework types.
    pub fn sorted<'n>(&self, names: &'n Names, framework: bool) -> Vec<(&'n str, u64)> {
        let k = usize::from(framework);
        let mut v: Vec<(&str, u64)> = self
            .entries()
            .filter(|e| e.framework == framework)
            .map(|e| (names.text(e.name), e.count))
            .collect();
        v.sort_unstable_by(|a, b| a.0.cmp(b.0));
        if self.other[k] > 0 {
            // Not also a type called `(other)`: `count` keeps one of them.
            let i = v.partition_point(|p| p.0 < OTHER);
            v.insert(i, (OTHER, self.other[k]));
        }
        v
    }

    /// The run has ended: the names it counted under are let go.
    pub fn release(&self, names: &mut Names) {
        for e in self.entries() {
            names.release(e.name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_shared_and_let_go_with_their_last_run() {
        let mut names = Names::default();
        let (mut a, mut b) = (Kinds::default(), Kinds::default());
        let yes = || true;
        a.count(Some("hit"), &mut names, yes);
        b.count(Some("hit"), &mut names, yes);
        b.count(Some("aoi:meta"), &mut names, yes);
        assert_eq!(names.numbers.len(), 2);
        a.release(&mut names);
        assert_eq!(names.numbers.len(), 2, "b still counts hit");
        b.release(&mut names);
        assert!(names.numbers.is_empty());
        // Numbers let go are given again, not grown.
        let mut c = Kinds::default();
        c.count(Some("x"), &mut names, yes);
        assert_eq!(names.by_number.len(), 2);
    }

    /// Names are found by comparing while few are kept, by their hash
    /// past that, and numbers let go are given again: either way a name
    /// has one number while it is held.
    #[test]
    fn many_names_keep_one_number_each() {
        let mut names = Names::default();
        let held: Vec<u32> = (0..3 * FEW).map(|i| names.hold(&format!("t{i}"))).collect();
        for (i, &n) in held.iter().enumerate() {
            assert_eq!(names.hold(&format!("t{i}")), n, "t{i}");
            assert_eq!(names.number(&format!("t{i}")), Some(n));
        }
        // Let every name go; the numbers come back for new names.
        for &n in &held {
            names.release(n);
            names.release(n);
        }
        assert!(names.numbers.is_empty());
        assert_eq!(names.number("t0"), None);
        let again = names.hold("new");
        assert!(held.contains(&again));
        assert_eq!(names.number("new"), Some(again));
        assert_eq!(names.number("t0"), None);
    }

    #[test]
    fn overflow_counts_under_other_and_merges_with_a_type_of_that_name() {
        let mut names = Names::default();
        let mut k = Kinds::default();
        let mut room = 2;
        let mut take = || {
            let ok = room > 0;
            room -= usize::from(ok);
            ok
        };
        for t in ["b", "(other)", "c", "c", "a"] {
            k.count(Some(t), &mut names, &mut take);
        }
        // "(other)" the type took the second name; c, c and a overflow.
        assert_eq!(k.sorted(&names, false), [("(other)", 4), ("b", 1)]);
        assert_eq!(room, 0);
    }

    /// As one map by name counted: the overflow, once there, is one of
    /// the run's entries, and a type called `(other)` then joins it with
    /// no room of its own.
    #[test]
    fn the_overflow_is_one_entry_that_a_type_of_its_name_joins() {
        let mut names = Names::default();
        let mut k = Kinds::default();
        k.count(Some("early"), &mut names, || false);
        let left = std::cell::Cell::new(MAX_KINDS);
        let take = || {
            let ok = left.get() > 0;
            left.set(left.get() - usize::from(ok));
            ok
        };
        k.count(Some("(other)"), &mut names, take);
        assert_eq!(left.get(), MAX_KINDS, "joined the overflow, took no room");
        for i in 0..MAX_KINDS {
            k.count(Some(&format!("z{i:03}")), &mut names, take);
        }
        let sorted = k.sorted(&names, false);
        assert_eq!(sorted.len(), MAX_KINDS);
        // early, (other) and z255, the 257th entry.
        assert_eq!(sorted[0], ("(other)", 3));
        assert_eq!(left.get(), 1);
    }

    #[test]
    fn long_names_count_by_a_cut_prefix_and_keep_no_last() {
        let mut names = Names::default();
        let mut k = Kinds::default();
        let long = "é".repeat(100);
        let at = k.count(Some(&long), &mut names, || true).expect("own name");
        assert!(at.last(long.as_bytes(), &names).is_none());
        k.count(Some(&long), &mut names, || true);
        let sorted = k.sorted(&names, false);
        assert_eq!(sorted.len(), 1);
        assert_eq!(sorted[0].1, 2);
        assert!(sorted[0].0.len() <= NAME_BYTES + '…'.len_utf8());
        assert!(sorted[0].0.ends_with('…'));
    }

    /// A run's first `FRONT` names are kept in its own state and the rest
    /// past them: counted through `Last` as summarize counts, either side
    /// of that edge, domain and framework types interleaved, the counts
    /// are a plain count of every event.
    #[test]
    fn names_past_the_front_count_as_those_in_it() {
        use std::collections::BTreeMap;
        let types = ["aoi:meta", "a", "b", "aoi:progress", "c", "aoi:error", "d"];
        let mut names = Names::default();
        let mut k = Kinds::default();
        let mut last: Option<Last> = None;
        let mut want: [BTreeMap<&str, u64>; 2] = Default::default();
        // A walk that visits every type, repeats, and comes back.
        let mut x = 1u32;
        for _ in 0..400 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let t = types[(x >> 16) as usize % types.len()];
            *want[usize::from(t.starts_with("aoi:"))]
                .entry(t)
                .or_default() += 1;
            let repeated = last
                .as_mut()
                .is_some_and(|l| l.repeat(t.as_bytes(), &names, &mut k));
            if !repeated {
                if let Some(l) = last.as_mut() {
                    l.flush(&mut k);
                }
                let place = k.count(Some(t), &mut names, || true);
                last = place.and_then(|p| p.last(t.as_bytes(), &names));
            }
        }
        if let Some(l) = last.as_mut() {
            l.flush(&mut k);
        }
        assert!(
            k.rest.len() == types.len() - FRONT,
            "the walk crosses the edge"
        );
        for framework in [false, true] {
            let got: Vec<(&str, u64)> = k.sorted(&names, framework);
            let want: Vec<(&str, u64)> = want[usize::from(framework)]
                .iter()
                .map(|(t, n)| (*t, *n))
                .collect();
            assert_eq!(got, want);
        }
        k.release(&mut names);
        assert!(names.numbers.is_empty());
    }

    #[test]
    fn a_repeat_is_counted_once_flushed() {
        let mut names = Names::default();
        let mut k = Kinds::default();
        let c = k.count(Some("aoi:meta"), &mut names, || true).unwrap();
        let mut last = c.last(b"aoi:meta", &names).unwrap();
        assert!(last.repeat(b"aoi:meta", &names, &mut k));
        assert!(!last.repeat(b"hit", &names, &mut k));
        assert_eq!(k.sorted(&names, true), [("aoi:meta", 1)]);
        last.flush(&mut k);
        assert_eq!(k.sorted(&names, true), [("aoi:meta", 2)]);
        // More repeats than a pending count holds: added on the way.
        for _ in 0..200_000 {
            assert!(last.repeat(b"aoi:meta", &names, &mut k));
        }
        last.flush(&mut k);
        assert_eq!(k.sorted(&names, true), [("aoi:meta", 200_002)]);
    }
}
