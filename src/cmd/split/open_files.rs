//! split-by-run's open run files: at most `cap` at once, each behind a
//! buffer of its own, the least recently used closed first. Finding a
//! file and marking it used cost O(1) a line (DESIGN §14), however many
//! runs are interleaved.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::BufWriter;

/// Each open run file's buffer: what a run's lines wait in between writes.
const BUFFER_BYTES: usize = 8 * 1024;

struct Open {
    /// The run's digest (`check::digest` of its key), by which it is found.
    run: u64,
    name: String,
    w: BufWriter<File>,
    /// When it was last used (`OpenFiles::clock`).
    used: u64,
}

pub struct OpenFiles {
    cap: usize,
    slots: Vec<Option<Open>>,
    free: Vec<usize>,
    by_run: HashMap<u64, usize>,
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
            by_run: HashMap::new(),
            order: VecDeque::new(),
            clock: 0,
        }
    }

    /// The file of the run whose digest is `run`, if it is open, marked
    /// as used now: its name and writer.
    pub fn get(&mut self, run: u64) -> Option<(&str, &mut BufWriter<File>)> {
        let slot = *self.by_run.get(&run)?;
        self.touch(slot);
        self.slots[slot]
            .as_mut()
            .map(|o| (o.name.as_str(), &mut o.w))
    }

    /// When `cap` files are open: the least recently used, taken out, for
    /// the caller to flush and close.
    pub fn evict(&mut self) -> Option<(String, BufWriter<File>)> {
        if self.by_run.len() < self.cap {
            return None;
        }
        while let Some((slot, used)) = self.order.pop_front() {
            if self.slots[slot].as_ref().is_some_and(|o| o.used == used) {
                let open = self.slots[slot].take().expect("checked above");
                self.by_run.remove(&open.run);
                self.free.push(slot);
                return Some((open.name, open.w));
            }
        }
        None
    }

    /// Open the file `name` of the run whose digest is `run` (room made
    /// first with `evict`).
    pub fn insert(&mut self, run: u64, name: String, file: File) -> &mut BufWriter<File> {
        let open = Open {
            run,
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
        self.by_run.insert(run, slot);
        self.touch(slot);
        &mut self.slots[slot].as_mut().expect("just put").w
    }

    /// Close every file (taken out, for the caller to flush).
    pub fn drain(&mut self) -> impl Iterator<Item = (String, BufWriter<File>)> + '_ {
        self.by_run.clear();
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
        if self.order.len() > 2 * self.by_run.len() + 64 {
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

    fn file() -> File {
        tempfile::tempfile().unwrap()
    }

    #[test]
    fn the_least_recently_used_is_closed_first() {
        let mut open = OpenFiles::new(2);
        open.insert(1, "a".into(), file());
        open.insert(2, "b".into(), file());
        assert_eq!(open.get(1).unwrap().0, "a");
        let (old, _) = open.evict().expect("two open, cap two");
        assert_eq!(old, "b");
        assert!(open.get(2).is_none());
        open.insert(3, "c".into(), file());
        assert_eq!(open.evict().unwrap().0, "a");
        assert!(open.evict().is_none(), "one open, cap two");
    }

    #[test]
    fn below_the_cap_nothing_is_closed() {
        let mut open = OpenFiles::new(3);
        open.insert(1, "a".into(), file());
        open.insert(2, "b".into(), file());
        assert!(open.evict().is_none());
    }

    #[test]
    fn the_order_stays_bounded_over_many_uses() {
        let mut open = OpenFiles::new(3);
        for (run, name) in [(1, "a"), (2, "b"), (3, "c")] {
            open.insert(run, name.into(), file());
        }
        for i in 0..100_000 {
            open.get(i % 3 + 1);
        }
        assert!(open.order.len() <= 2 * 3 + 64 + 1, "{}", open.order.len());
        // The last used was run 1 ("a", 99_999 % 3 == 0): "b" is the oldest.
        assert_eq!(open.evict().unwrap().0, "b");
    }
}
