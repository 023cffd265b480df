//! split-by-run's open run files: at most `cap` at once, each behind a
//! buffer of its own, the least recently used closed first. Finding a
//! file and marking it used cost O(1) a line (docs/contract.md §2.2), however many
//! runs are interleaved.

use std::collections::VecDeque;

use super::writer::RunFile;
use crate::check::{Hint, RunKey, RunRef};
use crate::stream::RunSlots;

struct Open {
    name: String,
    w: RunFile,
    /// When it was last used (`OpenFiles::clock`).
    used: u64,
}

pub struct OpenFiles {
    cap: usize,
    files: RunSlots<Open>,
    /// (slot, use) in the order of use, oldest first; an entry whose use
    /// is not its slot's latest is stale, and skipped.
    order: VecDeque<(usize, u64)>,
    clock: u64,
}

impl OpenFiles {
    pub fn new(cap: usize) -> OpenFiles {
        OpenFiles {
            cap: cap.max(1),
            files: RunSlots::default(),
            order: VecDeque::new(),
            clock: 0,
        }
    }

    /// The slot of `run`'s file, if it is open, marked as used now;
    /// `hint` is where the checker's run was found before (`Decision::hint`).
    pub fn find(&mut self, run: RunRef<'_>, hint: Option<Hint>) -> Option<usize> {
        let slot = self.files.find_at(run, hint)?;
        self.touch(slot);
        Some(slot)
    }

    /// The name and writer of the file in `slot`, which is open.
    pub fn at(&mut self, slot: usize) -> (&str, &mut RunFile) {
        let open = self.files.value(slot);
        (open.name.as_str(), &mut open.w)
    }

    /// When `cap` files are open: the least recently used, taken out, for
    /// the caller to flush and close.
    pub fn evict(&mut self) -> Option<(String, RunFile)> {
        if self.files.len() < self.cap {
            return None;
        }
        while let Some((slot, used)) = self.order.pop_front() {
            if self.files.held(slot).is_some_and(|o| o.used == used) {
                let (_, open) = self.files.remove(slot);
                return Some((open.name, open.w));
            }
        }
        None
    }

    /// Open the file `name` of `key` (room made first with `evict`); its
    /// slot.
    pub fn insert(&mut self, key: RunKey, name: String, w: RunFile, hint: Option<Hint>) -> usize {
        let open = Open { name, w, used: 0 };
        let slot = self.files.insert_at(key, open, hint);
        self.touch(slot);
        slot
    }

    /// Close every file (taken out, for the caller to flush).
    pub fn drain(&mut self) -> impl Iterator<Item = (String, RunFile)> + '_ {
        self.order.clear();
        self.files.drain().map(|(_, o)| (o.name, o.w))
    }

    /// Every open file, by name.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&str, &mut RunFile)> {
        self.files
            .iter_mut()
            .map(|(_, o)| (o.name.as_str(), &mut o.w))
    }

    fn touch(&mut self, slot: usize) {
        let last = self.order.back().copied();
        let open = self.files.value(slot);
        if last == Some((slot, open.used)) && open.used != 0 {
            // Used last already: most lines follow one of their own run.
            return;
        }
        self.clock += 1;
        open.used = self.clock;
        self.order.push_back((slot, self.clock));
        if self.order.len() > 2 * self.files.len() + 64 {
            // The stale entries go now and then: the queue stays near the
            // number of open files (each pass at least halves it).
            let files = &self.files;
            self.order
                .retain(|&(s, u)| files.held(s).is_some_and(|o| o.used == u));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Run;

    fn file() -> RunFile {
        RunFile::new(tempfile::tempfile().unwrap(), "f".into())
    }

    /// The name of `run`'s file, if it is open (marking it used).
    fn name(open: &mut OpenFiles, run: RunRef<'_>) -> Option<String> {
        let slot = open.find(run, None)?;
        Some(open.at(slot).0.to_string())
    }

    fn key(id: &str) -> RunKey {
        Run::Id(id.as_bytes().into())
    }

    #[test]
    fn runs_of_one_digest_keep_files_of_their_own() {
        let [a, b] = crate::stream::slots::tests::COLLIDING;
        let mut open = OpenFiles::new(2);
        open.insert(key(a), "run-a.jsonl".into(), file(), None);
        open.insert(key(b), "run-b.jsonl".into(), file(), None);
        assert_eq!(
            name(&mut open, Run::Id(a.as_bytes())).unwrap(),
            "run-a.jsonl"
        );
        assert_eq!(
            name(&mut open, Run::Id(b.as_bytes())).unwrap(),
            "run-b.jsonl"
        );
        assert!(name(&mut open, Run::Id(b"c")).is_none());
        // Closing the one used longest ago leaves the other found.
        assert_eq!(open.evict().unwrap().0, "run-a.jsonl");
        assert_eq!(
            name(&mut open, Run::Id(b.as_bytes())).unwrap(),
            "run-b.jsonl"
        );
        assert!(open.evict().is_none());
    }

    #[test]
    fn the_least_recently_used_is_closed_first() {
        let mut open = OpenFiles::new(2);
        open.insert(key("a"), "a".into(), file(), None);
        open.insert(key("b"), "b".into(), file(), None);
        assert_eq!(name(&mut open, Run::Id(b"a")).unwrap(), "a");
        let (old, _) = open.evict().expect("two open, cap two");
        assert_eq!(old, "b");
        assert!(name(&mut open, Run::Id(b"b")).is_none());
        open.insert(key("c"), "c".into(), file(), None);
        assert_eq!(open.evict().unwrap().0, "a");
        assert!(open.evict().is_none(), "one open, cap two");
    }

    #[test]
    fn below_the_cap_nothing_is_closed() {
        let mut open = OpenFiles::new(3);
        open.insert(key("a"), "a".into(), file(), None);
        open.insert(key("b"), "b".into(), file(), None);
        assert!(open.evict().is_none());
    }

    #[test]
    fn the_order_stays_bounded_over_many_uses() {
        let mut open = OpenFiles::new(3);
        for name in ["a", "b", "c"] {
            open.insert(key(name), name.into(), file(), None);
        }
        for i in 0..100_000 {
            let name = ["a", "b", "c"][i % 3];
            open.find(Run::Id(name.as_bytes()), None);
        }
        assert!(open.order.len() <= 2 * 3 + 64 + 1, "{}", open.order.len());
        // The last used was "a" (99_999 % 3 == 0): "b" is the oldest.
        assert_eq!(open.evict().unwrap().0, "b");
    }
}
