//! Values kept per run, by the run's digest and key: the one table
//! PerRun and split-by-run's open files both stand on.

use crate::check::{ByDigest, Decision, Hint, Run, RunKey, RunRef, RunVerdict};

/// Values kept per run, each in a slot that stays put while its run has
/// it: found by the run's digest, then its key (two runs' digests may be
/// equal: a run whose digest another has already is kept in `collided`).
/// Finding one costs a digest and a lookup, never a move or an
/// allocation: a thousand interleaved runs switch on every line
/// (docs/contract.md §2.2).
///
/// Most are found for less (docs/contract.md §8.2): a value made for a
/// line's run goes in the slot of the same number as the checker's for
/// that run when it is free (the two are let go together), so the run is
/// found there by its number (`Decision::serial`), with no lookup and no
/// compare of its id; ten thousand runs' state is not all in the cache,
/// and each array more a line reads is one miss more.
pub struct RunSlots<T> {
    slots: Vec<Option<Held<T>>>,
    /// Slots let go; one taken since by a checker's slot number is
    /// skipped when it comes up.
    free: Vec<usize>,
    by_digest: ByDigest<usize>,
    collided: Vec<usize>,
    /// By the checker's slot of a run, the slot here it was last found
    /// in, when that is another: tried next, and trusted only when it
    /// holds the run.
    hints: Vec<usize>,
}

/// A run's value, its key, and the number of the checker's run it was
/// last found for (0 for none): a run with an id is known to hold its
/// slot by this number. The number, the key (where `Option` marks a free
/// slot) and the value's first words share the slot's first cache line,
/// which is what a line of the run reads (docs/contract.md §8.2).
#[repr(C, align(64))]
struct Held<T> {
    serial: u64,
    key: RunKey,
    value: T,
}

/// No hint for this checker slot yet.
const NO_HINT: usize = usize::MAX;

impl<T> Default for RunSlots<T> {
    fn default() -> Self {
        RunSlots {
            slots: vec![],
            free: vec![],
            by_digest: ByDigest::default(),
            collided: vec![],
            hints: vec![],
        }
    }
}

impl<T> RunSlots<T> {
    /// As `find`, trying first the slots where the checker's run `hint`
    /// names was found before.
    pub fn find_at(&mut self, run: RunRef<'_>, hint: Option<Hint>) -> Option<usize> {
        if let Some(h) = hint {
            if self.holds(h.slot, run, hint) {
                return Some(h.slot);
            }
            // Read only now: most runs are in the checker's slot number.
            let moved = self.hints.get(h.slot).copied().unwrap_or(NO_HINT);
            if moved != NO_HINT && self.holds(moved, run, hint) {
                return Some(moved);
            }
        }
        let s = self.find(run)?;
        self.remember(hint, s);
        Some(s)
    }

    /// Does `slot` hold `run`'s value? For a run with an id and a hint,
    /// by its number alone (an equal number is an equal id:
    /// `Decision::serial`); a "no" then may be wrong, never a "yes", and
    /// every caller looks the run up by its key after a "no". Else by its
    /// key.
    pub fn holds(&self, slot: usize, run: RunRef<'_>, hint: Option<Hint>) -> bool {
        let Some(held) = self.slots.get(slot).and_then(Option::as_ref) else {
            return false;
        };
        match (run, hint) {
            (Run::Id(_), Some(h)) => held.serial == h.serial,
            _ => held.key.as_ref() == run,
        }
    }

    /// As `insert`, in the slot of the checker's run `hint` names when
    /// that is free, and remembered for it.
    pub fn insert_at(&mut self, key: RunKey, value: T, hint: Option<Hint>) -> usize {
        let wanted = hint
            .map(|h| h.slot)
            .filter(|&s| self.slots.get(s).is_none_or(Option::is_none));
        let s = self.insert_in(wanted, key, value);
        self.remember(hint, s);
        s
    }

    fn remember(&mut self, hint: Option<Hint>, slot: usize) {
        let Some(h) = hint else { return };
        if let Some(Some(held)) = self.slots.get_mut(slot) {
            held.serial = h.serial;
        }
        if slot != h.slot {
            if self.hints.len() <= h.slot {
                self.hints.resize(h.slot + 1, NO_HINT);
            }
            self.hints[h.slot] = slot;
        }
    }

    /// How many runs have a value.
    pub fn len(&self) -> usize {
        self.by_digest.len() + self.collided.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The slot of `run`, if it has a value.
    pub fn find(&self, run: RunRef<'_>) -> Option<usize> {
        if let Some(&s) = self.by_digest.get(&crate::check::digest(&run))
            && self.is(s, run)
        {
            return Some(s);
        }
        self.collided.iter().copied().find(|&s| self.is(s, run))
    }

    /// Does `slot` hold `run`'s value?
    pub fn is(&self, slot: usize, run: RunRef<'_>) -> bool {
        self.slots
            .get(slot)
            .and_then(Option::as_ref)
            .is_some_and(|h| h.key.as_ref() == run)
    }

    /// Keep `value` for `key`, which has none; its slot.
    pub fn insert(&mut self, key: RunKey, value: T) -> usize {
        self.insert_in(None, key, value)
    }

    /// Keep `value` for `key` in slot `wanted`, which is free, or else in
    /// any free one.
    fn insert_in(&mut self, wanted: Option<usize>, key: RunKey, value: T) -> usize {
        let d = crate::check::digest(&key.as_ref());
        let slot = match wanted {
            Some(s) => s,
            None => loop {
                match self.free.pop() {
                    // Taken since it was let go (by `wanted`).
                    Some(s) if self.slots[s].is_some() => continue,
                    Some(s) => break s,
                    None => break self.slots.len(),
                }
            },
        };
        if self.slots.len() <= slot {
            self.slots.resize_with(slot + 1, || None);
        }
        self.slots[slot] = Some(Held {
            serial: 0,
            value,
            key,
        });
        match self.by_digest.entry(d) {
            std::collections::hash_map::Entry::Occupied(_) => self.collided.push(slot),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(slot);
            }
        }
        slot
    }

    /// Take the value out of `slot`, which holds one.
    pub fn remove(&mut self, slot: usize) -> (RunKey, T) {
        let held = self.slots[slot].take().expect("a held slot");
        let d = crate::check::digest(&held.key.as_ref());
        if self.by_digest.get(&d) == Some(&slot) {
            self.by_digest.remove(&d);
        } else {
            self.collided.retain(|&s| s != slot);
        }
        self.free.push(slot);
        (held.key, held.value)
    }

    /// The value in `slot`, if it holds one.
    pub fn held(&self, slot: usize) -> Option<&T> {
        self.slots.get(slot)?.as_ref().map(|h| &h.value)
    }

    /// The value in `slot`, which holds one.
    pub fn value(&mut self, slot: usize) -> &mut T {
        &mut self.slots[slot].as_mut().expect("a held slot").value
    }

    /// Every run's key and value, in the order the slots hold them.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&RunKey, &mut T)> {
        self.slots
            .iter_mut()
            .flatten()
            .map(|h| (&h.key, &mut h.value))
    }

    /// Take every value out.
    pub fn drain(&mut self) -> impl Iterator<Item = (RunKey, T)> + '_ {
        self.by_digest.clear();
        self.collided.clear();
        self.free.clear();
        self.slots.drain(..).flatten().map(|h| (h.key, h.value))
    }
}

/// State a command keeps per run, the run of the line before held apart:
/// most lines belong to the same run as the one before, so they cost one
/// comparison of ids.
pub struct PerRun<T> {
    runs: RunSlots<T>,
    current: Option<usize>,
}

impl<T> Default for PerRun<T> {
    fn default() -> Self {
        PerRun {
            runs: RunSlots::default(),
            current: None,
        }
    }
}

impl<T> PerRun<T> {
    /// The state of `run`, made by `new` if the run is new.
    pub fn get(&mut self, run: RunRef<'_>, new: impl FnOnce() -> T) -> &mut T {
        self.get_hinted(run, None, new)
    }

    /// The state of the run `decided` says a line went to.
    pub fn of(&mut self, decided: &Decision<'_>, new: impl FnOnce() -> T) -> &mut T {
        let (run, hint) = decided.went();
        self.get_hinted(run, hint, new)
    }

    fn get_hinted(
        &mut self,
        run: RunRef<'_>,
        hint: Option<Hint>,
        new: impl FnOnce() -> T,
    ) -> &mut T {
        let slot = match self.current.filter(|&s| self.runs.holds(s, run, hint)) {
            Some(s) => s,
            None => match self.runs.find_at(run, hint) {
                Some(s) => s,
                None => self.runs.insert_at(run.to_key(), new(), hint),
            },
        };
        self.current = Some(slot);
        self.runs.value(slot)
    }

    /// Fetch the state kept in slot `slot`, where the run in the checker's
    /// slot of that number most often has it: called as soon as a line's
    /// run is placed (`Sink::placed`), the miss is taken while the checker
    /// judges the line, not after it (docs/contract.md §8.2). Nothing is
    /// decided on what it reads.
    pub fn touch(&self, slot: usize) {
        let held = self.runs.slots.get(slot).and_then(Option::as_ref);
        std::hint::black_box(held.map(|h| h.serial));
    }

    /// The state of the run last asked for, or else of `run`.
    pub fn last_or(&mut self, run: RunRef<'_>, new: impl FnOnce() -> T) -> &mut T {
        match self.current {
            Some(s) => self.runs.value(s),
            None => self.get(run, new),
        }
    }

    /// The state of `run`, if it has one; it is forgotten.
    pub fn remove(&mut self, run: RunRef<'_>) -> Option<T> {
        self.remove_at(run, None)
    }

    /// The state of the run `judged`, if it has one; it is forgotten.
    /// Found where the checker's slot says, as a line's run is.
    pub fn remove_judged(&mut self, judged: &RunVerdict) -> Option<T> {
        self.remove_at(RunRef::of_report(judged), Some(judged.hint))
    }

    fn remove_at(&mut self, run: RunRef<'_>, hint: Option<Hint>) -> Option<T> {
        let slot = self.runs.find_at(run, hint)?;
        if self.current == Some(slot) {
            self.current = None;
        }
        Some(self.runs.remove(slot).1)
    }

    /// Every run that has state, in the order the slots hold them.
    pub fn keys(&mut self) -> Vec<RunKey> {
        self.runs.iter_mut().map(|(k, _)| k.clone()).collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::check::Run;

    /// Two run ids whose keys share a digest (`check::digest` is SipHash
    /// with fixed keys, so one can be searched for): each must keep a slot
    /// of its own (and split-by-run a file, tests/split.rs).
    pub(crate) const COLLIDING: [&str; 2] = ["599a97ae466e01b0", "1de7602d4770b9c1"];

    #[test]
    fn runs_whose_digests_collide_keep_slots_of_their_own() {
        let d = |id: &str| crate::check::digest(&Run::Id(id.as_bytes()));
        let [a, b] = COLLIDING;
        assert_eq!(d(a), d(b), "the ids collide");
        let mut slots: RunSlots<&str> = RunSlots::default();
        let sa = slots.insert(Run::Id(a.as_bytes().into()), "a");
        let sb = slots.insert(Run::Id(b.as_bytes().into()), "b");
        assert_eq!(slots.find(Run::Id(a.as_bytes())), Some(sa));
        assert_eq!(slots.find(Run::Id(b.as_bytes())), Some(sb));
        assert_eq!(slots.len(), 2);
        // The one the digest names goes; the other is still found.
        assert_eq!(slots.remove(sa).1, "a");
        assert_eq!(slots.find(Run::Id(a.as_bytes())), None);
        assert_eq!(slots.find(Run::Id(b.as_bytes())), Some(sb));
        assert_eq!(slots.remove(sb).1, "b");
        assert!(slots.is_empty());
    }

    /// A hint is tried first and trusted only when its slot holds the run:
    /// once the run is gone and its slot reused, the run is found by key.
    #[test]
    fn a_stale_hint_is_never_trusted() {
        let h = |slot, serial| Some(Hint { slot, serial });
        let mut slots = RunSlots::default();
        let a = slots.insert_at(Run::Id(b"a"[..].into()), 'a', h(3, 10));
        assert_eq!(a, 3, "placed in the checker's slot, which is free");
        assert_eq!(slots.find_at(Run::Id(b"a"), h(3, 10)), Some(a));
        slots.remove(a);
        // Run a's number, after its slot went to b: not trusted.
        let b = slots.insert_at(Run::Id(b"b"[..].into()), 'b', h(3, 11));
        assert_eq!(b, a, "the slot is reused");
        assert_eq!(slots.find_at(Run::Id(b"a"), h(3, 10)), None);
        // The checker's slot 5 holds run c, but slot 5 here is taken: c
        // goes elsewhere, and is found there by the hint.
        let d = slots.insert_at(Run::Id(b"d"[..].into()), 'd', h(5, 12));
        slots.remove(b);
        assert_eq!(d, 5);
        let c = slots.insert_at(Run::Id(b"c"[..].into()), 'c', h(5, 13));
        assert_ne!(c, d);
        assert_eq!(slots.find_at(Run::Id(b"c"), h(5, 13)), Some(c));
        assert_eq!(slots.find_at(Run::Id(b"d"), h(9, 12)), Some(d));
        assert_eq!(*slots.value(c), 'c');
        // A slot freed, then taken by a checker's number, is never given
        // out again while held.
        let e = slots.insert(Run::Id(b"e"[..].into()), 'e');
        assert!(![c, d].contains(&e));
        // Without an id, the key decides, whatever the number says.
        let f = slots.insert_at(Run::FromLine(7), 'f', h(6, 14));
        assert!(slots.holds(f, Run::FromLine(7), h(6, 14)));
        assert!(!slots.holds(f, Run::FromLine(8), h(6, 14)));
        assert_eq!(slots.len(), 4);
    }

    #[test]
    fn per_run_state_is_kept_by_run_and_forgotten_on_remove() {
        let mut per: PerRun<u32> = PerRun::default();
        for (i, id) in [b"a", b"b", b"a", b"c", b"b"].iter().enumerate() {
            *per.get(Run::Id(&id[..]), || 0) += i as u32 + 1;
        }
        assert_eq!(*per.get(Run::Id(b"a"), || 99), 1 + 3);
        assert_eq!(*per.get(Run::Id(b"b"), || 99), 2 + 5);
        assert_eq!(
            *per.last_or(Run::Nowhere, || 99),
            7,
            "the run last asked for"
        );
        assert_eq!(per.remove(Run::Id(b"a")), Some(4));
        assert_eq!(per.remove(Run::Id(b"a")), None);
        // A forgotten run starts anew; its slot is reused.
        assert_eq!(*per.get(Run::Id(b"a"), || 10), 10);
        assert_eq!(per.keys().len(), 3);
        assert_eq!(*per.get(Run::FromLine(7), || 5), 5);
        assert_eq!(*per.get(Run::Nowhere, || 6), 6);
        assert_eq!(per.keys().len(), 5);
    }
}
