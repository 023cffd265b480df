//! Reading and parsing beside the judging, on a machine's second core.
//!
//! A reader thread reads the `Source` (which also writes the relay) through
//! the one line cutter (`scan::Cutter`) into batches of whole lines, and
//! hands each, in order, to both a parser thread and the judging thread:
//! whichever claims a batch first parses it (see `Job`). So two cores
//! parse, in whatever share keeps both busy, while the rules, which must
//! see lines in order, run on one. Each
//! batch says how the input stood after it (more to come, would wait,
//! silent, ended), so the judging side flushes, reports idleness or stops
//! exactly as a single-threaded loop would. This module knows threads, the
//! byte budget and order; where lines end is the cutter's business alone.
//!
//! Memory: a line longer than `--max-line-bytes` is counted and dropped as
//! it streams past (never held), and the bytes in flight are capped at
//! `max(--max-line-bytes, 8 MiB)`, so the worst case is about twice the
//! longest accepted line; batches (buffers and indexes) come from a fixed
//! pool and are reused.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex};

use crate::input::line_check::LineCheck;
use crate::input::scan::{Batch, Cutter};
use crate::input::source::{Pause, Source};
use crate::json::Parser;

/// Batches in the pool: one being filled, one in each channel and thread,
/// and slack. The reader waits for one rather than allocate, so memory is
/// the same for any input.
const POOL: usize = 4;

/// Where a batch left the input.
pub enum End {
    /// More lines follow at once.
    More,
    /// The input had nothing more ready: flush before waiting.
    WouldBlock,
    /// `--idle-timeout-ms` passed without a byte.
    Idle,
    /// A signal came, or reading was stopped.
    Signal,
    Eof,
    /// Reading (or writing the relay) failed.
    Failed(io::Error),
}

/// A batch and how the input stood after it.
pub struct Piece {
    pub batch: Batch,
    pub end: End,
}

/// Bytes in flight between the threads, capped.
struct Budget {
    used: Mutex<usize>,
    freed: Condvar,
    limit: usize,
}

impl Budget {
    fn take(&self, n: usize) {
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        // One batch larger than the cap still goes, alone.
        while *used > 0 && *used + n > self.limit {
            used = self.freed.wait(used).unwrap_or_else(|e| e.into_inner());
        }
        *used += n;
    }

    fn give(&self, n: usize) {
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        *used = used.saturating_sub(n);
        self.freed.notify_all();
    }
}

/// One batch on its way: whichever of the parser thread and the judging
/// thread claims it first parses it. The parser thread works ahead; when
/// it falls behind, the judging thread parses the next batch itself, so
/// the two cores share the parsing in whatever proportion keeps both busy.
struct Job {
    claimed: AtomicBool,
    /// `piece.1`, readable while the claimer holds the lock.
    done: AtomicBool,
    /// The piece, and whether it is parsed yet.
    piece: Mutex<(Option<Piece>, bool)>,
    parsed: Condvar,
}

impl Job {
    /// Claim the job and parse it, unless the other side already did.
    fn claim(&self, parser: &mut Parser, schema: Option<&dyn LineCheck>) -> bool {
        if self.claimed.swap(true, Ordering::AcqRel) {
            return false;
        }
        let mut slot = self.piece.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = slot.0.as_mut() {
            p.batch.parse(parser, schema);
        }
        slot.1 = true;
        self.done.store(true, Ordering::Release);
        drop(slot);
        self.parsed.notify_all();
        true
    }

    /// Without blocking: the claimer holds `piece` while it parses.
    fn is_parsed(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }
}

/// The judging side's end of the pipeline for one input.
pub struct Feed {
    jobs: Receiver<Arc<Job>>,
    /// Jobs taken from `jobs` early, to parse while waiting (in order).
    ahead: VecDeque<Arc<Job>>,
    parser: Parser,
    schema: Option<Arc<dyn LineCheck>>,
    budget: Arc<Budget>,
    /// Judged batches go back to the reader.
    spare: SyncSender<Batch>,
    /// Writing to it wakes a reader blocked on a quiet input, so it ends.
    stop: UnixStream,
}

impl Feed {
    /// Start reading `source`; `stop` must be the other end of a pair whose
    /// first end is among the source's wake descriptors. An error: no
    /// thread to read it on (a process or address-space limit).
    pub fn start(
        source: Source,
        max_line: usize,
        schema: Option<Arc<dyn LineCheck>>,
        stop: UnixStream,
    ) -> io::Result<Feed> {
        let budget = Arc::new(Budget {
            used: Mutex::new(0),
            freed: Condvar::new(),
            limit: max_line.max(8 << 20),
        });
        let (to_judge, jobs) = sync_channel(POOL);
        let (to_parser, for_parser) = sync_channel::<Arc<Job>>(POOL);
        let (spare, spares) = sync_channel(POOL);
        for _ in 0..POOL {
            let _ = spare.try_send(Batch::default());
        }
        let b = Arc::clone(&budget);
        std::thread::Builder::new().spawn(move || {
            Reader {
                cutter: Cutter::new(source, max_line),
                spares,
                budget: &b,
            }
            .run(&to_judge, &to_parser)
        })?;
        let theirs = schema.clone();
        // A help, not a need: with no thread to be had, the judging side
        // parses every batch itself (`next_piece`), and the reader's
        // sends to a parser that is gone are let go.
        let _ = std::thread::Builder::new().spawn(move || {
            let mut parser = Parser::new();
            for job in for_parser {
                job.claim(&mut parser, theirs.as_deref());
            }
        });
        Ok(Feed {
            jobs,
            ahead: VecDeque::new(),
            parser: Parser::new(),
            schema,
            budget,
            spare,
            stop,
        })
    }

    /// The next batch, parsed, in input order; `None` once reading is over.
    pub fn next_piece(&mut self) -> Option<Piece> {
        let job = match self.ahead.pop_front() {
            Some(job) => job,
            None => self.jobs.recv().ok()?,
        };
        let schema = self.schema.clone();
        if !job.claim(&mut self.parser, schema.as_deref()) {
            // The parser thread has it. Rather than wait, parse the
            // batches after it that nobody has claimed yet: when parsing
            // is the heavier side (with --schema it is), both cores do it.
            while !job.is_parsed() {
                let Ok(next) = self.jobs.try_recv() else {
                    break;
                };
                next.claim(&mut self.parser, schema.as_deref());
                self.ahead.push_back(next);
            }
        }
        // Claimed by one side or the other: wait until it is parsed.
        let mut slot = job.piece.lock().unwrap_or_else(|e| e.into_inner());
        while !slot.1 {
            slot = job.parsed.wait(slot).unwrap_or_else(|e| e.into_inner());
        }
        slot.0.take()
    }

    /// The batch has been judged: its bytes no longer count, and it can be
    /// filled again.
    pub fn done(&self, mut batch: Batch) {
        self.budget.give(batch.bytes().len());
        batch.release();
        let _ = self.spare.try_send(batch);
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        let _ = self.stop.write_all(b"x");
    }
}

struct Reader<'b> {
    cutter: Cutter<Source>,
    spares: Receiver<Batch>,
    budget: &'b Budget,
}

impl Reader<'_> {
    /// Read and cut until a batch is full or the input pauses, send; until
    /// the input ends or nobody listens any more.
    fn run(mut self, judge: &SyncSender<Arc<Job>>, parser: &SyncSender<Arc<Job>>) {
        loop {
            let end = match self.cutter.read() {
                Ok(true) if self.cutter.full() => End::More,
                Ok(true) => continue,
                Ok(false) => End::Eof,
                Err(e) => match Pause::of(&e) {
                    Some(Pause::WouldBlock) => {
                        self.cutter.reader().arm();
                        End::WouldBlock
                    }
                    Some(Pause::Idle) => End::Idle,
                    Some(Pause::Signal) => End::Signal,
                    None => End::Failed(e),
                },
            };
            let last = matches!(end, End::Eof | End::Signal | End::Failed(_));
            let Ok(spare) = self.spares.recv() else {
                return;
            };
            let batch = self.cutter.take(spare);
            self.budget.take(batch.bytes().len());
            let job = Arc::new(Job {
                claimed: AtomicBool::new(false),
                done: AtomicBool::new(false),
                piece: Mutex::new((Some(Piece { batch, end }), false)),
                parsed: Condvar::new(),
            });
            // The parser may have gone (it never does before the judge);
            // the judging side parses whatever it is not given.
            let _ = parser.send(Arc::clone(&job));
            if judge.send(job).is_err() || last {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::scan::Line;
    use std::io::Seek;

    #[derive(Debug, PartialEq, Eq)]
    enum Owned {
        Complete(Vec<u8>, bool),
        TooLong(u64),
        Unterminated(u64),
    }

    fn own(line: Line<'_>) -> Owned {
        match line {
            Line::Complete { bytes, json, .. } => Owned::Complete(bytes.to_vec(), json.is_ok()),
            Line::TooLong { len } => Owned::TooLong(len),
            Line::Unterminated { len, .. } => Owned::Unterminated(len),
        }
    }

    fn file_of(data: &[u8]) -> std::fs::File {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(data).unwrap();
        f.rewind().unwrap();
        f
    }

    /// The threads keep order and lose nothing: the pipeline yields what
    /// the cutter yields when read in one go.
    fn same_as_cutter(data: &[u8], max_line: usize) {
        let mut want = vec![];
        let mut cut = Cutter::new(file_of(data), max_line);
        let mut lines = crate::input::lines::Lines::default();
        while let Some(batch) = lines.next(&mut cut, None).unwrap() {
            want.extend(batch.lines().map(own));
        }
        let (a, b) = UnixStream::pair().unwrap();
        let mut feed = Feed::start(
            Source::new(file_of(data), None, vec![a.into()], None),
            max_line,
            None,
            b,
        )
        .unwrap();
        let mut got = vec![];
        while let Some(piece) = feed.next_piece() {
            got.extend(piece.batch.lines().map(own));
            let end = matches!(piece.end, End::Eof);
            feed.done(piece.batch);
            if end {
                break;
            }
        }
        assert_eq!(got.len(), want.len());
        assert!(got == want, "the pipeline and the cutter disagree");
    }

    #[test]
    fn keeps_every_line_in_order() {
        same_as_cutter(b"", 100);
        same_as_cutter(b"{}\nbc\n\n", 100);
        same_as_cutter(b"{}\r\nbcd", 100);
        // Lines of every length around the batch size and the cap.
        let mut data = vec![];
        let mut n = 7u64;
        while data.len() < 3 << 20 {
            n = n
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = match n >> 60 {
                0 => 5000,
                1 => 1001,
                2 => 1000,
                _ => (n >> 40) as usize % 400,
            };
            data.extend_from_slice(b"[\"");
            data.extend(std::iter::repeat_n(b'x', len));
            data.extend_from_slice(b"\"]\n");
        }
        same_as_cutter(&data, 1000);
        // Over-long lines running past a batch, in a row, and one cut at
        // the end.
        let mut long = vec![b'y'; 700_000];
        long.extend_from_slice(b"\n");
        long.extend(std::iter::repeat_n(b'v', 700_000));
        long.extend_from_slice(b"\n{}\n");
        long.extend(std::iter::repeat_n(b'w', 600_000));
        same_as_cutter(&long, 1000);
        same_as_cutter(&long, 1 << 20);
    }
}
