//! split-by-run's open run files: at most `cap` at once, each behind a
//! buffer of its own, the least recently used closed first. Finding a
//! file and marking it used cost O(1) a line (DESIGN §14), however many
//! runs are interleaved.

use std::collections::VecDeque;
use std::collections::hash_map::Entry;
use std::fs::File;
use std::io::BufWriter;

use crate::check::{ByDigest, RunKey, RunRef};

/// Each open run file's buffer: what a run's lines wait in between writes.
const BUFFER_BYTES: usize = 8 * 1024;

struct Open {
    /// The run's digest (`check::digest` of its key), by which it is found,
    /// and its key, which decides: digests of two runs may be equal.
    run: u64,
    key: RunKey,
    name: String,
    w: BufWriter<File>,
    /// When it was last used (`OpenFiles::clock`).
    used: u64,
}

pub struct OpenFiles {
    cap: usize,
    slots: Vec<Option<Open>>,
    free: Vec<usize>,
    by_run: ByDigest<usize>,
    /// Open files whose run's digest another open run has already.
    collided: Vec<usize>,
    /// (slot, use) in the order of use, oldest first; an entry whose use
    /// is not its slot's latest is stale, and skipped.
    order: VecDeque<(usize, u64)>,
    clock: u64,
}

impl OpenFiles {
    pub fn new(cap: usize) -> OpenFiles {
        OpenFiles {
            cap: cap.max(1),
            slots: vec![],
            free: vec![],
            by_run: ByDigest::default(),
            collided: vec![],
            order: VecDeque::new(),
            clock: 0,
        }
    }

    /// The file of `run` (whose digest is `d`), if it is open, marked as
    /// used now: its name and writer.
    pub fn get(&mut self, d: u64, run: RunRef<'_>) -> Option<(&str, &mut BufWriter<File>)> {
        let is = |s: &usize| {
            self.slots[*s]
                .as_ref()
                .is_some_and(|o| o.key.as_ref() == run)
        };
        let slot = match self.by_run.get(&d) {
            Some(s) if is(s) => *s,
            _ => *self.collided.iter().find(|s| is(s))?,
        };
        self.touch(slot);
        self.slots[slot]
            .as_mut()
            .map(|o| (o.name.as_str(), &mut o.w))
    }

    /// When `cap` files are open: the least recently used, taken out, for
    /// the caller to flush and close.
    pub fn evict(&mut self) -> Option<(String, BufWriter<File>)> {
        if self.by_run.len() + self.collided.len() < self.cap {
            return None;
        }
        while let Some((slot, used)) = self.order.pop_front() {
            if self.slots[slot].as_ref().is_some_and(|o| o.used == used) {
                let open = self.slots[slot].take().expect("checked above");
                if self.by_run.get(&open.run) == Some(&slot) {
                    self.by_run.remove(&open.run);
                } else {
                    self.collided.retain(|&s| s != slot);
                }
                self.free.push(slot);
                return Some((open.name, open.w));
            }
        }
        None
    }

    /// Open the file `name` of `key` (whose digest is `d`; room made first
    /// with `evict`).
    pub fn insert(&mut self, d: u64, key: RunKey, name: String, file: File) {
        let open = Open {
            run: d,
            key,
            name,
            w: BufWriter::with_capacity(BUFFER_BYTES, file),
            used: 0,
        };
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s] = Some(open);
                s
            }
            None => {
                self.slots.push(Some(open));
                self.slots.len() - 1
            }
        };
        match self.by_run.entry(d) {
            Entry::Occupied(_) => self.collided.push(slot),
            Entry::Vacant(e) => {
                e.insert(slot);
            }
        }
        self.touch(slot);
    }

    /// Close every file (taken out, for the caller to flush).
    pub fn drain(&mut self) -> impl Iterator<Item = (String, BufWriter<File>)> + '_ {
        self.by_run.clear();
        self.collided.clear();
        self.order.clear();
        self.free.clear();
        self.slots.drain(..).flatten().map(|o| (o.name, o.w))
    }

    /// Every open file, by name.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&str, &mut BufWriter<File>)> {
        self.slots
            .iter_mut()
            .flatten()
            .map(|o| (o.name.as_str(), &mut o.w))
    }

    fn touch(&mut self, slot: usize) {
        let open = self.slots[slot].as_mut().expect("open slot");
        if self.order.back() == Some(&(slot, open.used)) && open.used != 0 {
            // Used last already: most lines follow one of their own run.
            return;
        }
        self.clock += 1;
        open.used = self.clock;
        self.order.push_back((slot, self.clock));
        if self.order.len() > 2 * (self.by_run.len() + self.collided.len()) + 64 {
            // The stale entries go now and then: the queue stays near the
            // number of open files (each pass at least halves it).
            let slots = &self.slots;
            self.order
                .retain(|&(s, u)| slots[s].as_ref().is_some_and(|o| o.used == u));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Run;

    fn file() -> File {
        tempfile::tempfile().unwrap()
    }

    fn key(id: &str) -> RunKey {
        Run::Id(id.as_bytes().into())
    }

    /// Two run ids whose keys share a digest (`check::digest` is SipHash
    /// with fixed keys, so one can be searched for): split-by-run must
    /// still give each its own file (tests/split.rs).
    const COLLIDING: [&str; 2] = ["599a97ae466e01b0", "1de7602d4770b9c1"];

    #[test]
    fn the_colliding_ids_do_collide() {
        let d = |id: &str| crate::check::digest(&Run::Id(id.as_bytes()));
        assert_eq!(d(COLLIDING[0]), d(COLLIDING[1]));
    }

    #[test]
    fn runs_of_one_digest_keep_files_of_their_own() {
        let mut open = OpenFiles::new(2);
        open.insert(7, key("a"), "run-a.jsonl".into(), file());
        open.insert(7, key("b"), "run-b.jsonl".into(), file());
        assert_eq!(open.get(7, Run::Id(b"a")).unwrap().0, "run-a.jsonl");
        assert_eq!(open.get(7, Run::Id(b"b")).unwrap().0, "run-b.jsonl");
        assert!(open.get(7, Run::Id(b"c")).is_none());
        // Closing the one used longest ago leaves the other found.
        assert_eq!(open.evict().unwrap().0, "run-a.jsonl");
        assert_eq!(open.get(7, Run::Id(b"b")).unwrap().0, "run-b.jsonl");
        assert!(open.evict().is_none());
    }

    #[test]
    fn the_least_recently_used_is_closed_first() {
        let mut open = OpenFiles::new(2);
        open.insert(1, key("a"), "a".into(), file());
        open.insert(2, key("b"), "b".into(), file());
        assert_eq!(open.get(1, Run::Id(b"a")).unwrap().0, "a");
        let (old, _) = open.evict().expect("two open, cap two");
        assert_eq!(old, "b");
        assert!(open.get(2, Run::Id(b"b")).is_none());
        open.insert(3, key("c"), "c".into(), file());
        assert_eq!(open.evict().unwrap().0, "a");
        assert!(open.evict().is_none(), "one open, cap two");
    }

    #[test]
    fn below_the_cap_nothing_is_closed() {
        let mut open = OpenFiles::new(3);
        open.insert(1, key("a"), "a".into(), file());
        open.insert(2, key("b"), "b".into(), file());
        assert!(open.evict().is_none());
    }

    #[test]
    fn the_order_stays_bounded_over_many_uses() {
        let mut open = OpenFiles::new(3);
        for (run, name) in [(1, "a"), (2, "b"), (3, "c")] {
            open.insert(run, key(name), name.into(), file());
        }
        for i in 0..100_000 {
            let name = ["a", "b", "c"][i % 3];
            open.get(i as u64 % 3 + 1, Run::Id(name.as_bytes()));
        }
        assert!(open.order.len() <= 2 * 3 + 64 + 1, "{}", open.order.len());
        // The last used was run 1 ("a", 99_999 % 3 == 0): "b" is the oldest.
        assert_eq!(open.evict().unwrap().0, "b");
    }
}
